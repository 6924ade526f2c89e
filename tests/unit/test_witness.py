"""Witness cosignatures offline: their form, the operator's list of witness keys, and the
verifier's `witnesses` check over the real example evidence (docs/examples/evidence-qq3.json,
a ledger of one hand), each changed and re-signed to show which check catches what."""

from __future__ import annotations

import contextlib
import io
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from fiftyk_referee.domain.merkle import MerkleLog, leaf_hash
from fiftyk_referee.service.cli.main import main
from fiftyk_referee.service.cli.verify import EXIT_FAILED
from fiftyk_referee.service.cli.witness import Refused, extending
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.trust.signing import Signer, public_pem
from fiftyk_referee.service.trust.verifier import OK, Report, verify
from fiftyk_referee.service.trust.witness import (
    CosignatureError,
    UnknownWitness,
    WitnessKeys,
    check_cosignature,
    cosignature_body,
    public_key_line,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "evidence-qq3.json"
FORGER = Signer.from_text("33" * 32)  # re-signs the changed evidence; trusted here
WITNESS = Signer.from_text("44" * 32)
OTHER = Signer.from_text("55" * 32)
WHEN = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


def evidence() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(EXAMPLE.read_text("utf-8"))
    return loaded


def cosigned(document: dict[str, Any], *, signer: Signer = WITNESS, size: int | None = None,
             root: str | None = None, proof: list[str] | None = None) -> dict[str, Any]:
    """The evidence with one cosignature of (size, root) — its own checkpoint's by default."""
    checkpoint = document["ledger"]["checkpoint"]
    body = {**cosignature_body(checkpoint, WHEN),
            **({"size": size} if size is not None else {}),
            **({"root": root} if root is not None else {})}
    document["ledger"]["cosignatures"] = [
        {"witness": "alice", "cosignature": signer.sign(body),
         "consistency": [] if proof is None else proof}]
    return document


def checked(document: dict[str, Any], *witnesses: Signer) -> Report:
    """The document re-signed by the forger (trusted), verified requiring these witnesses."""
    document["ledger"]["checkpoint"] = FORGER.sign(document["ledger"]["checkpoint"])
    return verify(FORGER.sign(document), trusted=[FORGER.public],
                  witnesses=[w.public for w in witnesses])


def failure(report: Report) -> tuple[str, str]:
    line = report.failure
    assert line is not None, "\n".join(map(str, report.lines))
    return line.check, line.detail


def test_a_cosignature_of_the_evidences_own_tree_satisfies_its_witness_key() -> None:
    report = checked(cosigned(evidence()), WITNESS)
    assert report.verified
    line = next(line for line in report.lines if line.check == "witnesses")
    assert line.status == OK
    assert f"alice ({WITNESS.key_id}, 1 hands)" in line.detail
    assert "every witness key given (1) cosigned a tree that holds the hand" in line.detail


def test_without_witness_keys_evidence_without_cosignatures_has_no_witness_line() -> None:
    report = checked(evidence())
    assert report.verified and all(line.check != "witnesses" for line in report.lines)


def test_a_required_witness_that_did_not_cosign_fails() -> None:
    assert failure(checked(evidence(), WITNESS)) == (
        "witnesses", f"no cosignature by witness key {WITNESS.key_id} covers this hand (hand 0"
        " of the ledger's 1): the witness has not cosigned a tree that holds it, or the referee"
        " did not keep its cosignature")
    check, detail = failure(checked(cosigned(evidence()), WITNESS, OTHER))
    assert check == "witnesses" and OTHER.key_id in detail and WITNESS.key_id not in detail


def test_a_cosignature_of_a_larger_tree_than_the_evidences_shows_a_rollback() -> None:
    document = cosigned(evidence(), size=2, root="ab" * 32)
    document["ledger"]["cosignatures"][0]["consistency"] = None
    check, detail = failure(checked(document))
    assert check == "witnesses"
    assert "cosigned a tree of 2 hands; this evidence's ledger holds 1: the ledger was rolled" \
        " back" in detail


def test_a_cosignature_of_another_root_shows_a_rewritten_ledger() -> None:
    check, detail = failure(checked(cosigned(evidence(), root="ab" * 32), WITNESS))
    assert check == "witnesses"
    assert "that this ledger does not extend: the ledger was rewritten" in detail


def test_an_edited_cosignature_fails_its_signature() -> None:
    document = cosigned(evidence())
    document["ledger"]["cosignatures"][0]["cosignature"]["time"] = "2027-01-01T00:00:00+00:00"
    check, detail = failure(checked(document))
    assert check == "witnesses"
    assert detail.startswith("witness alice: the cosignature's signature:")


def test_fiftyk_verify_requires_each_witness_key_given(tmp_path: Path) -> None:
    key = tmp_path / "forger.pub"
    key.write_text(public_pem(FORGER.public))
    witness = tmp_path / "witness.pub"
    witness.write_text(public_pem(WITNESS.public))
    document = cosigned(evidence())
    document["ledger"]["checkpoint"] = FORGER.sign(document["ledger"]["checkpoint"])
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps(FORGER.sign(document)))
    bare = tmp_path / "bare.json"
    plain = evidence()
    plain["ledger"]["checkpoint"] = FORGER.sign(plain["ledger"]["checkpoint"])
    bare.write_text(json.dumps(FORGER.sign(plain)))
    for file, expected in ((path, 0), (bare, EXIT_FAILED)):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["verify", str(file), "--key", str(key), "--witness-key", str(witness)])
        assert code == expected, out.getvalue() + err.getvalue()
    assert "fiftyk verify: witnesses FAILED: no cosignature by witness key" in err.getvalue()


def test_a_cosignature_must_be_exactly_the_stated_fields_signed_by_a_listed_key() -> None:
    body = {"format": "fiftyk-cosignature/1", "referee_key_id": "ed25519:0", "size": 1,
            "root": "ab" * 32, "time": WHEN.isoformat()}
    assert check_cosignature(WITNESS.sign(body), [WITNESS.public]) == WITNESS.key_id
    with pytest.raises(UnknownWitness):
        check_cosignature(OTHER.sign(body), [WITNESS.public])
    bad: list[Any] = [
        [], {**WITNESS.sign(body), "extra": 1}, WITNESS.sign({**body, "size": 0}),
        WITNESS.sign({**body, "size": True}), WITNESS.sign({**body, "root": "AB" * 32}),
        WITNESS.sign({**body, "format": "fiftyk-checkpoint/1"}),
        {**WITNESS.sign(body), "size": 2},
    ]
    for document in bad:
        with pytest.raises(CosignatureError):
            check_cosignature(document, [WITNESS.public])


def test_the_operators_witness_list_names_each_key_once() -> None:
    text = (f"# witnesses\n{public_key_line('alice', WITNESS.public)}\n\n"
            f"{public_key_line('bob.example', OTHER.public)}  # a comment\n")
    keys = WitnessKeys.parse(text)
    assert [(w.name, w.key_id) for w in keys] == [("alice", WITNESS.key_id),
                                                  ("bob.example", OTHER.key_id)]
    assert keys.by_key_id(OTHER.key_id) is not None and keys.by_key_id("ed25519:0") is None
    line = public_key_line("alice", WITNESS.public)
    for bad, reason in (
            (f"{line}\n{line}", "line 2: witness alice"),
            (f"{line}\n{public_key_line('carol', WITNESS.public)}", "listed twice"),
            ("alice", "line 1: not `NAME PUBLIC_KEY`"),
            ("-alice " + "00" * 32, "line 1: not"),
            ("alice zz", "line 1: the public key is neither PEM nor hex")):
        with pytest.raises(ValueError, match=reason):
            WitnessKeys.parse(bad)


def test_a_witness_whose_state_is_unreadable_stops_and_leaves_it_as_it_was(
        tmp_path: Path) -> None:
    """No call is made: the state is read first, and a witness never starts over silently
    (it would then cosign a rolled-back ledger as if it were new)."""
    key, referee = tmp_path / "w.key", tmp_path / "referee.pub"
    key.write_text("44" * 32)
    referee.write_text(public_pem(FORGER.public))
    state = tmp_path / "state"
    state.mkdir()
    (state / "latest.json").write_text("{not json")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["witness", "--referee", "127.0.0.1:9", "--key", str(key),
                     "--referee-key", str(referee), "--state", str(state), "--once"])
    assert code == 2
    assert "latest.json is unreadable" in err.getvalue() and "never delete it" in err.getvalue()
    assert (state / "latest.json").read_text() == "{not json"


def test_the_witness_refuses_a_checkpoint_that_does_not_extend_the_one_it_cosigned() -> None:
    """The witness's check (`extending`) on real checkpoints of a real Merkle log (no
    referee needed): an extension passes with its proof; a smaller tree, another root of
    the same size, a missing or wrong proof and another referee key are refused, each
    saying why."""
    referee = Signer.from_text("66" * 32)
    log = MerkleLog([leaf_hash(f"hand {i}".encode()) for i in range(5)])
    forked = MerkleLog([leaf_hash(f"other {i}".encode()) for i in range(5)])

    def checkpoint(tree: MerkleLog, size: int, signer: Signer = referee) -> dict[str, Any]:
        return signer.sign({"format": "fiftyk-checkpoint/1", "size": size,
                            "root": tree.root(size).hex(), "time": WHEN.isoformat()})

    def answer(tree: MerkleLog, old: int, size: int) -> pb.GetCheckpointResponse:
        proof = pb.ConsistencyProof(from_size=old, to_size=size, hashes=[
            p.hex() for p in tree.consistency_proof(old, size)])
        return pb.GetCheckpointResponse(consistency=proof)

    keys = [referee.public]
    held = {"checkpoint": checkpoint(log, 3)}
    assert extending(checkpoint(log, 5), held, answer(log, 3, 5), keys)["size"] == 5
    assert extending(checkpoint(log, 5), None, pb.GetCheckpointResponse(), keys)["size"] == 5
    refusals = [
        (checkpoint(log, 2), pb.GetCheckpointResponse(), "ROLLED BACK: the referee's ledger"
         " holds 2 hands, fewer than the 3"),
        (checkpoint(forked, 3), pb.GetCheckpointResponse(), "FORKED: the referee's tree of 3"
         " hands has root"),
        (checkpoint(log, 5), pb.GetCheckpointResponse(), "FORKED: the referee gave no"
         " consistency proof from the 3 hands"),
        (checkpoint(forked, 5), answer(forked, 3, 5), "FORKED: the referee's tree of 5 hands"
         " does not extend the 3"),
        (checkpoint(log, 5, OTHER), answer(log, 3, 5), "the checkpoint's signature: signed by"),
    ]
    for offered, given, reason in refusals:
        with pytest.raises(Refused, match=re.escape(reason)):
            extending(offered, held, given, keys)
