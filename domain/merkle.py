"""An append-only Merkle log with RFC 6962 hashing: roots, inclusion and consistency proofs.

Hashing (RFC 6962, the Certificate Transparency log): a leaf hashes as
`SHA-256(0x00 || data)`, an inner node as `SHA-256(0x01 || left || right)`, the empty tree as
`SHA-256("")`; a tree of `n > 1` leaves splits at `k`, the largest power of two below `n`.
Proofs and their verification follow RFC 9162 (the verification algorithms stated there,
which check a proof without building the tree).

Pure standard library: the offline verifier uses this module without the server extra.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"
HASH_SIZE = hashlib.sha256().digest_size  # every leaf hash, node, root and proof element


class ProofError(ValueError):
    """A proof that does not prove what it claims; the message says where it fails."""


def leaf_hash(data: bytes) -> bytes:
    """The hash of one leaf's data."""
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The hash of an inner node."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def _hashes(**named: bytes | Sequence[bytes]) -> None:
    """Refuse a leaf, root or proof element that is not a SHA-256 hash: an empty leaf and an
    empty root would otherwise "prove" each other, and a short element is never a node."""
    for name, value in named.items():
        values = [value] if isinstance(value, bytes) else list(value)
        for item in values:
            if len(item) != HASH_SIZE:
                raise ProofError(f"the {name} is not a {HASH_SIZE}-byte hash ({len(item)} bytes)")


def _split(n: int) -> int:
    """The largest power of two strictly below `n` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


class MerkleLog:
    """An append-only log of leaf hashes that keeps every complete subtree's hash.

    Appending is O(1) amortised; the root of any prefix and its proofs take O(log² n) node
    hashes, because every left child in the RFC's split is a complete, aligned subtree whose
    hash is kept, so only the right spine is hashed again.
    """

    def __init__(self, leaves: Sequence[bytes] = ()) -> None:
        self._levels: list[list[bytes]] = [[]]
        for leaf in leaves:
            self.append(leaf)

    def __len__(self) -> int:
        return len(self._levels[0])

    def append(self, leaf: bytes) -> None:
        """Add one leaf hash."""
        self._levels[0].append(leaf)
        level = 0
        while len(self._levels[level]) % 2 == 0:
            if len(self._levels) == level + 1:
                self._levels.append([])
            nodes = self._levels[level]
            self._levels[level + 1].append(node_hash(nodes[-2], nodes[-1]))
            level += 1

    def leaf(self, index: int) -> bytes:
        """The leaf hash at `index`."""
        return self._levels[0][index]

    def _subtree(self, start: int, end: int) -> bytes:
        """MTH of leaves[start:end], a subtree of the RFC's split of a larger tree."""
        n = end - start
        if n & (n - 1) == 0 and start % n == 0:  # complete and aligned: kept
            level = n.bit_length() - 1
            return self._levels[level][start >> level]
        k = _split(n)
        return node_hash(self._subtree(start, start + k), self._subtree(start + k, end))

    def _size(self, size: int | None) -> int:
        size = len(self) if size is None else size
        if not 0 <= size <= len(self):
            raise ProofError(f"the log holds {len(self)} leaves, not {size}")
        return size

    def root(self, size: int | None = None) -> bytes:
        """The tree head of the first `size` leaves (all by default)."""
        size = self._size(size)
        return self._subtree(0, size) if size else hashlib.sha256(b"").digest()

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """The audit path of leaf `index` in the tree of the first `size` leaves."""
        size = self._size(size)
        if not 0 <= index < size:
            raise ProofError(f"leaf {index} is not in a tree of {size} leaves")
        proof: list[bytes] = []
        start, end = 0, size
        while end - start > 1:
            k = _split(end - start)
            if index < start + k:
                proof.append(self._subtree(start + k, end))
                end = start + k
            else:
                proof.append(self._subtree(start, start + k))
                start += k
        proof.reverse()  # the path runs from the leaf up
        return proof

    def consistency_proof(self, old_size: int, size: int | None = None) -> list[bytes]:
        """The proof that the first `old_size` leaves are a prefix of the first `size`."""
        size = self._size(size)
        if not 0 < old_size <= size:
            raise ProofError(f"no consistency proof from {old_size} to {size} leaves")
        proof: list[bytes] = []
        start, end, m, complete = 0, size, old_size, True
        while m != end - start:
            k = _split(end - start)
            if m <= k:
                proof.append(self._subtree(start + k, end))
                end = start + k
            else:
                proof.append(self._subtree(start, start + k))
                start, m, complete = start + k, m - k, False
        if not complete:
            proof.append(self._subtree(start, end))
        proof.reverse()  # SUBPROOF lists the deepest node first
        return proof


def root(leaves: Sequence[bytes]) -> bytes:
    """The tree head of these leaf hashes (MTH of RFC 6962)."""
    return MerkleLog(leaves).root()


def inclusion_proof(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """The audit path of leaf `index` in the tree of `leaves` (PATH of RFC 6962)."""
    return MerkleLog(leaves).inclusion_proof(index)


def consistency_proof(old_size: int, leaves: Sequence[bytes]) -> list[bytes]:
    """The proof that the tree of the first `old_size` leaves is a prefix of this one."""
    return MerkleLog(leaves).consistency_proof(old_size)


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes],
                     expected_root: bytes) -> None:
    """Check that `leaf` is leaf `index` of the tree of `size` leaves with this root."""
    _hashes(leaf=leaf, root=expected_root, proof=proof)
    if not 0 <= index < size:
        raise ProofError(f"leaf {index} is not in a tree of {size} leaves")
    fn, sn = index, size - 1
    computed = leaf
    for sibling in proof:
        if sn == 0:
            raise ProofError("the inclusion proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            computed = node_hash(sibling, computed)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            computed = node_hash(computed, sibling)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the inclusion proof is shorter than the tree is deep")
    if computed != expected_root:
        raise ProofError("the inclusion proof leads to another root")


def verify_consistency(old_size: int, old_root: bytes, new_size: int, new_root: bytes,
                       proof: Sequence[bytes]) -> None:
    """Check that the tree (`new_size`, `new_root`) extends the tree (`old_size`, `old_root`)."""
    _hashes(old_root=old_root, new_root=new_root, proof=proof)
    if not 0 < old_size <= new_size:
        raise ProofError(f"a tree of {new_size} leaves cannot extend one of {old_size}")
    if old_size == new_size:
        if proof:
            raise ProofError("equal trees need an empty consistency proof")
        if old_root != new_root:
            raise ProofError("two trees of the same size have different roots")
        return
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # a power of two: the old root is a node of the new tree
        path.insert(0, old_root)
    if not path:
        raise ProofError("the consistency proof is empty")
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for sibling in path[1:]:
        if sn == 0:
            raise ProofError("the consistency proof is longer than the tree is deep")
        if fn & 1 or fn == sn:
            fr = node_hash(sibling, fr)
            sr = node_hash(sibling, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, sibling)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the consistency proof is shorter than the tree is deep")
    if fr != old_root:
        raise ProofError("the consistency proof does not lead to the old root")
    if sr != new_root:
        raise ProofError("the consistency proof does not lead to the new root")


__all__ = [
    "HASH_SIZE",
    "MerkleLog",
    "ProofError",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "root",
    "verify_consistency",
    "verify_inclusion",
]
