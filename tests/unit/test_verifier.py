"""The offline verifier over a real exported hand (docs/examples/evidence-qq3.json).

The example is a demo hand exported by a referee signed with the development key; each
test changes one thing and re-signs it with another key (so the signature check passes
with that key trusted) to show which check catches it, and with which reason.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fiftyk_referee.service.cli.main import main
from fiftyk_referee.service.cli.verify import EXIT_FAILED, EXIT_UNVERIFIED
from fiftyk_referee.service.ops.config_keys import REFEREE_PUBLIC_KEY_FILE
from fiftyk_referee.service.trust.entropy_receipts import entropy_receipt_body
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, Signer
from fiftyk_referee.service.trust.verifier import (
    FAILED,
    NO_CHAIN,
    OK,
    SKIPPED,
    UNVERIFIED,
    CheckFailed,
    Line,
    Report,
    Verifier,
    verify,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "evidence-qq3.json"
# A Shengji hand at a seat-entropy table: three seats contributed, one stayed silent.
ENTROPY_EXAMPLE = ROOT / "docs" / "examples" / "evidence-entropy.json"
PUBLIC_KEY = ROOT / "docs" / "examples" / "dev-signing-key.pub"
FORGER = Signer.from_text("33" * 32)


def evidence() -> dict[str, Any]:
    """A fresh copy of the example."""
    loaded: dict[str, Any] = json.loads(EXAMPLE.read_text("utf-8"))
    return loaded


def forged(document: dict[str, Any]) -> Report:
    """Verify a changed document re-signed (checkpoint too) by the forger, whose key is the
    trusted one: every signature passes, and the other checks must catch the change."""
    if document.get("ledger"):
        document["ledger"]["checkpoint"] = FORGER.sign(document["ledger"]["checkpoint"])
    return verify(FORGER.sign(document), trusted=[FORGER.public])


def failure(report: Report) -> tuple[str, str]:
    """(check, reason) of the failed check."""
    line = report.failure
    assert line is not None, "\n".join(map(str, report.lines))
    return line.check, line.detail


def test_the_example_verifies_with_the_development_key() -> None:
    report = verify(evidence(), trusted=[Signer.from_text(DEV_SIGNING_KEY).public])
    assert report.ok
    assert [line.status for line in report.lines] == [OK] * 9


def test_the_readme_shows_what_fiftyk_verify_prints_for_the_example() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["verify", str(EXAMPLE), "--key", str(PUBLIC_KEY)])
    assert code == 0
    readme = (ROOT / "README.md").read_text("utf-8")
    shown = "$ .venv/bin/fiftyk verify " + EXAMPLE.relative_to(ROOT).as_posix()
    block = re.search("```console\n" + re.escape(shown) + r"[^\n]*\n(.*?)```", readme, re.S)
    assert block is not None
    assert out.getvalue() == block.group(1)


def resigned_by_the_forger() -> dict[str, Any]:
    """The example, its checkpoint and itself re-signed by a key that is not the referee's:
    a whole file anyone can make, consistent in every check but who signed it."""
    document = evidence()
    document["ledger"]["checkpoint"] = FORGER.sign(document["ledger"]["checkpoint"])
    return FORGER.sign(document)


def test_without_a_key_an_intact_file_is_unverified_not_passed() -> None:
    report = verify(evidence())
    assert report.ok and not report.verified
    assert report.lines[1].status == UNVERIFIED
    assert "no trusted key was given" in report.lines[1].detail


def test_a_file_resigned_by_another_key_is_unverified_without_a_key_and_fails_with_one(
) -> None:
    assert not verify(resigned_by_the_forger()).verified
    report = verify(resigned_by_the_forger(), trusted=[Signer.from_text(DEV_SIGNING_KEY).public])
    assert report.failure is not None and report.failure.check == "signature"


def _verify_cli(tmp_path: Path, document: dict[str, Any], *args: str) -> tuple[int, str, str]:
    path = tmp_path / "evidence.json"
    path.write_text(json.dumps(document), "utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["verify", str(path), *args])
    return code, out.getvalue(), err.getvalue()


def test_fiftyk_verify_without_a_key_exits_unverified_even_on_a_forged_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REFEREE_PUBLIC_KEY_FILE, raising=False)
    for document in (evidence(), resigned_by_the_forger()):
        code, out, err = _verify_cli(tmp_path, document)
        assert code == EXIT_UNVERIFIED, (out, err)
        assert "UNVERIFIED" in out and "UNVERIFIED" in err and "verified:" not in out


def test_fiftyk_verify_takes_the_pinned_key_file_from_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REFEREE_PUBLIC_KEY_FILE, str(PUBLIC_KEY))
    assert _verify_cli(tmp_path, evidence())[0] == 0
    code, _, err = _verify_cli(tmp_path, resigned_by_the_forger())
    assert code == EXIT_FAILED and "not a trusted key" in err


def test_a_signature_by_an_untrusted_key_fails() -> None:
    check, reason = failure(verify(FORGER.sign(evidence()),
                                   trusted=[Signer.from_text(DEV_SIGNING_KEY).public]))
    assert check == "signature" and "not a trusted key" in reason


def test_an_edited_event_breaks_the_chain() -> None:
    document = evidence()
    document["events"][7]["state"] = document["events"][7]["state"].replace('"seat":', '"seat": ')
    check, reason = failure(forged(document))
    assert check == "chain" and reason.startswith("version 8 hashes to")


def test_a_dropped_event_leaves_a_gap() -> None:
    document = evidence()
    del document["events"][10]
    check, reason = failure(forged(document))
    assert check == "chain" and "version 12 where version 11" in reason


def test_a_stated_head_that_is_not_the_events_head_fails() -> None:
    document = evidence()
    document["chain"]["head"] = "0" * 64
    assert failure(forged(document))[0] == "chain"


def test_a_seed_that_does_not_open_the_commitment_fails() -> None:
    document = evidence()
    document["deal"]["seed"] = "00" * 32
    check, reason = failure(forged(document))
    assert check == "deal" and "seed" in reason  # the dealt event recorded another seed


def test_a_deck_other_than_the_dealt_one_fails() -> None:
    document = evidence()
    deck = document["deal"]["deck"]
    deck[0], deck[1] = deck[1], deck[0]
    assert failure(forged(document))[0] == "deal"


def test_a_transcript_with_another_deck_fails() -> None:
    document = evidence()
    deck = document["transcript"]["deck"]
    deck[0], deck[1] = deck[1], deck[0]
    assert failure(forged(document)) == ("transcript deal",
                                         "the transcript's deck is not the dealt deck")


def test_a_ruling_the_transcript_does_not_give_fails_the_re_rule() -> None:
    document = evidence()
    document["ruling"]["finish_order"] = list(reversed(document["ruling"]["finish_order"]))
    check, reason = failure(forged(document))
    assert check == "re-rule" and "finish_order" in reason


def test_a_changed_action_fails_the_re_rule() -> None:
    document = evidence()
    document["transcript"]["actions"] = document["transcript"]["actions"][:-3]
    assert failure(forged(document))[0] == "re-rule"


def test_an_inclusion_proof_for_another_index_fails() -> None:
    document = evidence()
    document["ledger"]["index"] = 1
    assert failure(forged(document))[0] == "ledger"


def test_a_checkpoint_by_an_untrusted_key_fails() -> None:
    document = evidence()
    document["ledger"]["checkpoint"] = FORGER.sign(document["ledger"]["checkpoint"])
    referee = Signer.from_text(DEV_SIGNING_KEY)
    check, reason = failure(verify(referee.sign(document), trusted=[referee.public]))
    assert check == "ledger" and reason.startswith("checkpoint:")


def test_a_hand_stored_before_the_chain_verifies_as_no_chain() -> None:
    document = evidence()
    for event in document["events"]:
        event["prev"] = event["hash"] = None
    document["chain"] = {"head": None, "chained": 0, "unchained": len(document["events"]),
                         "intact": True, "problem": ""}
    document["ledger"] = None
    report = forged(document)
    assert report.ok
    statuses = {line.check: line.status for line in report.lines}
    assert statuses["chain"] == NO_CHAIN and statuses["ledger"] == SKIPPED


def test_a_ledger_that_shrank_since_an_earlier_checkpoint_was_rolled_back() -> None:
    earlier = evidence()
    bigger = copy.deepcopy(earlier["ledger"]["checkpoint"])
    bigger["size"] = 5
    check, reason = failure(verify(evidence(), since={"ledger": {"checkpoint":
                                                                 FORGER.sign(bigger)}}))
    assert check == "consistency" and "rolled back" in reason


def test_without_the_rules_engine_its_checks_are_skipped_not_passed() -> None:
    report = Verifier(evidence(), rules=None).run()
    statuses = {line.check: line.status for line in report.lines}
    assert statuses["re-rule"] == SKIPPED and statuses["deck"] == OK
    assert "canonical deck the evidence names" in next(
        line.detail for line in report.lines if line.check == "deck")


def test_fiftyk_verify_exits_1_at_the_first_failure_and_2_for_an_unreadable_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document = evidence()
    document["ruling"]["status"] = "rejected"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(document))
    assert main(["verify", str(changed)]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1].strip().startswith("FAILED  signature:")
    assert "signature FAILED" in captured.err
    (tmp_path / "broken.json").write_text("{")
    assert main(["verify", str(tmp_path / "broken.json")]) == 2
    assert main(["verify", str(tmp_path / "missing.json")]) == 2


@contextlib.contextmanager
def _inside(directory: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(before)


def _run_snippets(page: str, example: Path, tmp_path: Path) -> list[str]:
    """Run every Python snippet of `page` on `example` as hand.json; what each printed."""
    snippets = re.findall(r"```python\n(.*?)```", page, re.S)
    (tmp_path / "hand.json").write_text(example.read_text("utf-8"))
    printed = []
    with _inside(tmp_path):
        for snippet in snippets:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(snippet, "docs/fairness.md", "exec"), {})
            assert "False" not in out.getvalue(), snippet
            printed.append(out.getvalue())
    return printed


def test_the_python_checks_of_docs_fairness_pass_on_the_examples(tmp_path: Path) -> None:
    page = (ROOT / "docs" / "fairness.md").read_text("utf-8")
    before, _, entropy = page.partition("\n## Seat entropy\n")
    assert len(_run_snippets(before, EXAMPLE, tmp_path)) == 4
    # The seat-entropy section's checks, on a Shengji hand one seat sent nothing to.
    assert _run_snippets(entropy.partition("\n## ")[0], ENTROPY_EXAMPLE, tmp_path) == ["True\n"]


def test_the_seat_entropy_example_verifies_and_names_every_contribution() -> None:
    document = json.loads(ENTROPY_EXAMPLE.read_text("utf-8"))
    report = verify(document, trusted=[Signer.from_text(DEV_SIGNING_KEY).public])
    assert report.ok, "\n".join(map(str, report.lines))
    deck = next(line for line in report.lines if line.check == "deck")
    assert deck.detail.startswith("fiftyk-shuffle/2") and "3 sent, 1 empty" in deck.detail
    assert document["deal"]["contributions"][3] == ""


@pytest.mark.parametrize(("change", "check"), [
    (lambda d: d["deal"]["contributions"].__setitem__(3, "00" * 16), "deal"),
    (lambda d: d["deal"].__setitem__("seed", "11" * 32), "deal"),
    (lambda d: d["deal"].__setitem__("algorithm", "fiftyk-shuffle/1"), "deal"),
    (lambda d: d["deal"]["deck"].reverse(), "deal"),
    (lambda d: d["transcript"]["deal"]["contributions"].__setitem__(0, ""), "transcript deal"),
])
def test_a_changed_seat_entropy_input_is_caught(change: Any, check: str) -> None:
    document = json.loads(ENTROPY_EXAMPLE.read_text("utf-8"))
    change(document)
    assert failure(forged(document))[0] == check


def test_the_seat_entropy_checks_recompute_from_the_inputs_not_the_first_event() -> None:
    """The deck and the commitment are recomputed from the stated inputs: a changed
    contribution gives another deck, another seed does not open the commitment."""
    document = json.loads(ENTROPY_EXAMPLE.read_text("utf-8"))
    deal = copy.deepcopy(document["deal"])
    deal["contributions"][3] = "00" * 16
    verifier = Verifier({**document, "deal": deal}, rules=None)
    with pytest.raises(CheckFailed, match="does not give the dealt deck"):
        verifier._deck()
    deal = copy.deepcopy(document["deal"])
    deal["seed"] = "11" * 32
    with pytest.raises(CheckFailed, match="not the commitment"):
        Verifier({**document, "deal": deal}, rules=None)._commitment()


@pytest.mark.parametrize("path", [EXAMPLE, ENTROPY_EXAMPLE], ids=lambda p: p.name)
def test_the_example_evidence_files_are_current_exports_with_the_transcripts_deal(
        path: Path) -> None:
    """The published examples carry what `fiftyk export` writes today: the transcript's own
    `deal` block (which the web page's fairness check reads) agrees with the evidence's."""
    document = json.loads(path.read_text("utf-8"))
    deal, stated = document["deal"], document["transcript"].get("deal")
    assert stated is not None, f"{path.name} predates the transcript's deal block"
    assert (stated["algorithm"], stated["seed"], stated["commitment"]) == (
        deal["algorithm"], deal["seed"], deal["commitment"])


# -- seat-entropy receipts (fiftyk verify --receipt) -----------------------------------------

REFEREE = Signer.from_text(DEV_SIGNING_KEY)


def entropy_evidence() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(ENTROPY_EXAMPLE.read_text("utf-8"))
    return loaded


def receipt_for(document: dict[str, Any], seat: int, *, data: bytes | None = None,
                signer: Signer = REFEREE, **changes: Any) -> dict[str, Any]:
    """A contribution receipt for a seat of the seat-entropy example (its bytes as dealt,
    unless `data`)."""
    sent = bytes.fromhex(document["deal"]["contributions"][seat]) if data is None else data
    body = entropy_receipt_body(document["table_id"], {
        "number": document["hand_number"], "commitment": document["deal"]["commitment"],
        "deadline": "2026-12-01T16:00:10+00:00"}, seat=seat, entropy=sent, commitment=None,
        table_version=7)
    body.update(changes)
    return signer.sign(body)


def receipt_line(document: dict[str, Any], receipt: dict[str, Any], *,
                 trusted: bool = True) -> Line:
    report = verify(document, trusted=[REFEREE.public] if trusted else None,
                    receipts=[receipt])
    [line] = [line for line in report.lines if line.check == "receipt"]
    return line


def test_a_receipt_for_bytes_in_the_deal_checks_out() -> None:
    document = entropy_evidence()
    line = receipt_line(document, receipt_for(document, 1))
    assert line.status == OK and "seat 1's bytes" in line.detail
    assert receipt_line(document, receipt_for(document, 1), trusted=False).status \
        == UNVERIFIED


def test_a_receipt_for_bytes_the_deal_left_out_fails_naming_the_seat() -> None:
    document = entropy_evidence()
    line = receipt_line(document, receipt_for(document, 3, data=b"\x05" * 32))
    assert line.status == FAILED
    assert "counted seat 3's contribution as empty although the referee accepted its" \
        in line.detail
    line = receipt_line(document, receipt_for(document, 1, data=b"\x05" * 32))
    assert "counted seat 1's contribution as other bytes" in line.detail


def test_a_receipt_for_another_draw_is_a_re_draw() -> None:
    document = entropy_evidence()
    line = receipt_line(document, receipt_for(document, 1, draw_commitment="cd" * 32))
    assert line.status == FAILED and line.detail.startswith("re-draw: ")
    assert "a quiet re-draw" in line.detail


def test_a_forged_or_misdirected_receipt_frames_nobody() -> None:
    document = entropy_evidence()
    forged = receipt_line(document, receipt_for(document, 3, data=b"\x05" * 32,
                                                signer=FORGER))
    assert forged.status == FAILED and forged.detail.startswith("the receipt: ")
    elsewhere = receipt_line(document, receipt_for(document, 1, hand_number=2))
    assert elsewhere.status == FAILED
    assert elsewhere.detail.startswith("the receipt: the receipt is for table")
