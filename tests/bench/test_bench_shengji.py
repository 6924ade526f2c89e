"""`scripts/bench shengji` runs, prints its table and writes its JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.__main__ import main
from bench.shengji import LEADS

pytestmark = pytest.mark.bench


def test_bench_shengji_prints_a_table_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "shengji.json"
    assert main(["shengji", "--repeat", "1", "--playouts", "1", "--json", str(out_file)]) == 0
    table = capsys.readouterr().out
    for name in LEADS:
        assert f"follow check: {name}" in table
    report = json.loads(out_file.read_text())
    assert report["benchmark"] == "shengji" and report["playout_steps_per_second"] > 0
    assert len(report["results"]) == 2 * len(LEADS) + 2
    assert "legal actions: the hand, playouts" in table
    assert all(row["samples"] > 0 and row["median_us"] > 0 for row in report["results"])
