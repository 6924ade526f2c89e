"""An append-only Merkle log with RFC 6962 hashing: roots, inclusion and consistency proofs.

Hashing (RFC 6962 §2.1, the Certificate Transparency log): a leaf hashes as
`SHA-256(0x00 || data)`, an inner node as `SHA-256(0x01 || left || right)`, the empty tree as
`SHA-256("")`; a tree of `n > 1` leaves splits at `k`, the largest power of two below `n`.
Proofs and their verification follow RFC 9162 §2.1.3-2.1.4 (the algorithms stated there,
which check a proof without building the tree).

Pure standard library: the offline verifier uses this module without the server extra.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

LEAF_PREFIX = b"\x00"
NODE_PREFIX = b"\x01"


class ProofError(ValueError):
    """A proof that does not prove what it claims; the message says where it fails."""


def leaf_hash(data: bytes) -> bytes:
    """The hash of one leaf's data."""
    return hashlib.sha256(LEAF_PREFIX + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """The hash of an inner node."""
    return hashlib.sha256(NODE_PREFIX + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly below `n` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def root(leaves: Sequence[bytes]) -> bytes:
    """The tree head of these leaf hashes (MTH of RFC 6962)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    level = list(leaves)
    # Bottom-up pairing gives the same tree as the RFC's recursive split: the split point is
    # always a power of two, so a lone last node is promoted unchanged.
    while len(level) > 1:
        paired = [node_hash(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def inclusion_proof(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    """The audit path of leaf `index` in the tree of `leaves` (PATH of RFC 6962)."""
    if not 0 <= index < len(leaves):
        raise ProofError(f"leaf {index} is not in a tree of {len(leaves)} leaves")
    return _path(index, leaves)


def _path(index: int, leaves: Sequence[bytes]) -> list[bytes]:
    if len(leaves) <= 1:
        return []
    k = _split(len(leaves))
    if index < k:
        return [*_path(index, leaves[:k]), root(leaves[k:])]
    return [*_path(index - k, leaves[k:]), root(leaves[:k])]


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes],
                     expected_root: bytes) -> None:
    """Check that `leaf` is leaf `index` of the tree of `size` leaves with this root."""
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


def consistency_proof(old_size: int, leaves: Sequence[bytes]) -> list[bytes]:
    """The proof that the tree of the first `old_size` leaves is a prefix of this one."""
    if not 0 < old_size <= len(leaves):
        raise ProofError(f"no consistency proof from {old_size} to {len(leaves)} leaves")
    return _subproof(old_size, leaves, complete=True)


def _subproof(m: int, leaves: Sequence[bytes], *, complete: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if complete else [root(leaves)]
    k = _split(n)
    if m <= k:
        return [*_subproof(m, leaves[:k], complete=complete), root(leaves[k:])]
    return [*_subproof(m - k, leaves[k:], complete=False), root(leaves[:k])]


def verify_consistency(old_size: int, old_root: bytes, new_size: int, new_root: bytes,
                       proof: Sequence[bytes]) -> None:
    """Check that the tree (`new_size`, `new_root`) extends the tree (`old_size`, `old_root`)."""
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
    "ProofError",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "node_hash",
    "root",
    "verify_consistency",
    "verify_inclusion",
]
