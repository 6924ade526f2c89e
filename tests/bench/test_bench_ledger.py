"""`scripts/bench ledger` runs, prints its table and its JSON, and measures what it says."""

from __future__ import annotations

import json

import pytest

from bench.__main__ import main

pytestmark = pytest.mark.bench


def test_bench_ledger_reads_the_same_records_per_call_at_every_ledger_size(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ledger", "--sizes", "20", "50", "--repeat", "2", "--idle-tables", "3",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    small, large = report["sizes"]
    assert (small["size"], large["size"]) == (20, 50)  # the template's 10 hands per copy
    assert small["verify_hand"]["feed_rows"] == large["verify_hand"]["feed_rows"]
    assert small["evidence"]["feed_rows"] == large["evidence"]["feed_rows"]
    # A new process reads the whole ledger once.
    assert large["first_verify_hand"]["feed_rows"] > large["size"]
    memory = report["memory"]
    assert memory["tables"] == 3 and memory["traced_kib"] > 0 and memory["sites"]


def test_bench_ledger_prints_a_row_per_size(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ledger", "--sizes", "10", "--repeat", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("ledger size") and lines[1].startswith("10 ")
