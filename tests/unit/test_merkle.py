"""The Merkle log's RFC 6962 hashing and its RFC 9162 proofs."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from fiftyk_referee.domain.merkle import (
    MerkleLog,
    ProofError,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root,
    verify_consistency,
    verify_inclusion,
)

MAX_SIZE = 40


def _leaves(n: int) -> list[bytes]:
    return [leaf_hash(f"hand {i}".encode()) for i in range(n)]


def _rfc_root(leaves: list[bytes]) -> bytes:
    """MTH exactly as RFC 6962 writes it (recursive split at a power of two)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return node_hash(_rfc_root(leaves[:k]), _rfc_root(leaves[k:]))


def test_the_rfc_6962_test_vector_of_an_empty_and_a_one_leaf_tree() -> None:
    assert root([]).hex() == (
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    # RFC 6962's leaf hash is SHA-256(0x00 || data): the empty leaf's known value.
    assert leaf_hash(b"").hex() == (
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d")


def test_the_bottom_up_root_equals_the_recursive_definition_for_every_size() -> None:
    for n in range(MAX_SIZE):
        assert root(_leaves(n)) == _rfc_root(_leaves(n)), n


def test_every_leaf_of_every_size_is_proven_included() -> None:
    for n in range(1, MAX_SIZE):
        leaves = _leaves(n)
        head = root(leaves)
        for i in range(n):
            verify_inclusion(leaves[i], i, n, inclusion_proof(i, leaves), head)


def test_an_inclusion_proof_fails_for_another_leaf_index_or_root() -> None:
    leaves = _leaves(13)
    proof = inclusion_proof(5, leaves)
    with pytest.raises(ProofError, match="another root"):
        verify_inclusion(leaves[6], 5, 13, proof, root(leaves))
    with pytest.raises(ProofError):
        verify_inclusion(leaves[5], 4, 13, proof, root(leaves))
    with pytest.raises(ProofError, match="another root"):
        verify_inclusion(leaves[5], 5, 13, proof, root(leaves[:12]))
    with pytest.raises(ProofError, match="not in a tree"):
        verify_inclusion(leaves[5], 13, 13, proof, root(leaves))


def test_every_prefix_is_proven_consistent_with_every_longer_tree() -> None:
    for n in range(1, MAX_SIZE):
        leaves = _leaves(n)
        for m in range(1, n + 1):
            verify_consistency(m, root(leaves[:m]), n, root(leaves),
                               consistency_proof(m, leaves))


def test_a_rewritten_history_is_not_consistent_with_its_old_checkpoint() -> None:
    leaves = _leaves(20)
    rewritten = [*leaves[:6], leaf_hash(b"a replaced hand"), *leaves[7:]]
    with pytest.raises(ProofError):
        verify_consistency(9, root(leaves[:9]), 20, root(rewritten),
                           consistency_proof(9, rewritten))


def test_a_rolled_back_log_cannot_extend_its_old_checkpoint() -> None:
    leaves = _leaves(10)
    with pytest.raises(ProofError, match="cannot extend"):
        verify_consistency(10, root(leaves), 8, root(leaves[:8]), [])


def _rfc_path(m: int, leaves: list[bytes]) -> list[bytes]:
    """PATH(m, D[n]) exactly as RFC 6962 writes it."""
    if len(leaves) <= 1:
        return []
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    if m < k:
        return [*_rfc_path(m, leaves[:k]), _rfc_root(leaves[k:])]
    return [*_rfc_path(m - k, leaves[k:]), _rfc_root(leaves[:k])]


def _rfc_subproof(m: int, leaves: list[bytes], complete: bool) -> list[bytes]:
    """SUBPROOF(m, D[n], b) exactly as RFC 6962 writes it."""
    n = len(leaves)
    if m == n:
        return [] if complete else [_rfc_root(leaves)]
    k = 1
    while k * 2 < n:
        k *= 2
    if m <= k:
        return [*_rfc_subproof(m, leaves[:k], complete), _rfc_root(leaves[k:])]
    return [*_rfc_subproof(m - k, leaves[k:], False), _rfc_root(leaves[:k])]


def test_proofs_are_exactly_the_rfcs_paths_and_subproofs_for_every_size() -> None:
    for n in range(1, MAX_SIZE):
        leaves = _leaves(n)
        log = MerkleLog(leaves)
        for i in range(n):
            assert log.inclusion_proof(i) == _rfc_path(i, leaves), (i, n)
        for m in range(1, n + 1):
            assert log.consistency_proof(m) == _rfc_subproof(m, leaves, True), (m, n)
            assert log.root(m) == _rfc_root(leaves[:m])


def test_a_log_answers_for_any_earlier_size_as_it_grows() -> None:
    log = MerkleLog()
    leaves = _leaves(MAX_SIZE)
    for leaf in leaves:
        log.append(leaf)
    assert log.inclusion_proof(3, 9) == _rfc_path(3, leaves[:9])
    assert log.consistency_proof(5, 9) == _rfc_subproof(5, leaves[:9], True)
    with pytest.raises(ProofError, match="not 41"):
        log.root(41)


GROWN_SIZE = 66  # past 64: every tree shape up to one level above a full 64-leaf tree


def test_a_log_grown_leaf_by_leaf_proves_every_earlier_size_as_a_full_recomputation() -> None:
    """The kept subtrees of a log appended one leaf at a time answer, for every size 0..N
    it ever had, with the root and proofs RFC 6962 computes from that prefix's leaves."""
    leaves = _leaves(GROWN_SIZE)
    log = MerkleLog()
    for leaf in leaves:
        log.append(leaf)
        assert log.root() == _rfc_root(leaves[:len(log)])
    for size in range(GROWN_SIZE + 1):
        prefix = leaves[:size]
        assert log.root(size) == _rfc_root(prefix), size
        for index in range(size):
            assert log.inclusion_proof(index, size) == _rfc_path(index, prefix), (index, size)
        for old in range(1, size + 1):
            assert log.consistency_proof(old, size) == _rfc_subproof(old, prefix, True), \
                (old, size)


# -- test vectors nobody here wrote --------------------------------------------------------

VECTORS = json.loads((Path(__file__).parent / "vectors" / "rfc6962-proofs.json")
                     .read_text("utf-8"))


def _b64(value: str | None) -> bytes:
    return base64.b64decode(value) if value is not None else b""


def _included(vector: dict[str, Any]) -> bool:
    try:
        verify_inclusion(_b64(vector["leafHash"]), vector["leafIdx"], vector["treeSize"],
                         [_b64(p) for p in vector["proof"] or []], _b64(vector["root"]))
    except ProofError:
        return False
    return True


def _consistent(vector: dict[str, Any]) -> bool:
    try:
        verify_consistency(vector["size1"], _b64(vector["root1"]), vector["size2"],
                           _b64(vector["root2"]), [_b64(p) for p in vector["proof"] or []])
    except ProofError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(VECTORS["inclusion"]))
def test_inclusion_verification_agrees_with_the_transparency_dev_vectors(name: str) -> None:
    vector = VECTORS["inclusion"][name]
    assert _included(vector) is not vector["wantErr"], vector["desc"]


# Stricter than the vectors, on purpose: this one's two equal "roots" are the 12 bytes
# "don't care 2", not hashes, and the verifier refuses any root that is not a SHA-256 hash.
REFUSED_THOUGH_VECTORS_PASS = {"additional/sizes-are-equal-one-and-proof-is-empty.json"}


@pytest.mark.parametrize("name", sorted(VECTORS["consistency"]))
def test_consistency_verification_agrees_with_the_transparency_dev_vectors(name: str) -> None:
    vector = VECTORS["consistency"][name]
    want_error = vector["wantErr"] or name in REFUSED_THOUGH_VECTORS_PASS
    assert _consistent(vector) is not want_error, vector["desc"]


def test_an_empty_leaf_does_not_prove_itself_against_an_empty_root() -> None:
    with pytest.raises(ProofError, match="32-byte hash"):
        verify_inclusion(b"", 0, 1, [], b"")
    with pytest.raises(ProofError, match="32-byte hash"):
        verify_consistency(1, b"", 1, b"", [])


def _docs_inclusion_check() -> str:
    """The inclusion check docs/fairness.md gives readers to run by hand."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "fairness.md").read_text("utf-8")
    block = re.search(r'```python\n(import hashlib, json\ne = [^\n]*L = e\["ledger"\].*?)```',
                      text, re.S)
    assert block is not None
    return block.group(1)


def test_the_docs_inclusion_check_agrees_with_every_vector(tmp_path: Path) -> None:
    """The hand-run check of the docs, fed each vector as an evidence file's ledger: it
    prints True exactly for the vectors that must pass."""
    code = _docs_inclusion_check()
    wrong = []
    for name, vector in sorted(VECTORS["inclusion"].items()):
        # The docs' snippet hashes the leaf from the evidence; give it the vector's leaf.
        snippet = code.replace(
            "node = h(b\"\\0\" + f\"fiftyk-leaf/1\\n{e['hand_id']}\\n{e['chain']['head']}\""
            ".encode())", "node = bytes.fromhex(e['leaf'])")
        assert snippet != code, "the docs' leaf line changed: update this test"
        evidence = {"leaf": _b64(vector["leafHash"]).hex(),
                    "ledger": {"index": vector["leafIdx"],
                               "proof": [_b64(p).hex() for p in vector["proof"] or []],
                               "checkpoint": {"size": vector["treeSize"],
                                              "root": _b64(vector["root"]).hex()}}}
        (tmp_path / "hand.json").write_text(json.dumps(evidence), "utf-8")
        out = io.StringIO()
        cwd = os.getcwd()
        try:
            os.chdir(tmp_path)
            with contextlib.redirect_stdout(out):
                exec(compile(snippet, "docs/fairness.md", "exec"), {})
        finally:
            os.chdir(cwd)
        if (out.getvalue().strip() == "True") is vector["wantErr"]:
            wrong.append(f"{name}: {vector['desc']}")
    assert not wrong, wrong
