"""`scripts/bench webhooks` runs every mode tiny and reports latency, deliveries and lag.

No timing is asserted (the tiny figures mean nothing): what must hold is that every mode ran
against a real referee and a real endpoint, that the endpoint received what the mode says,
and that the ratios are the quotients of the figures they compare.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.__main__ import main
from bench.webhooks import MODES

pytestmark = pytest.mark.bench

TINY = ["--repeats", "1", "--seconds", "1", "--warmup", "0.3", "--tables", "1",
        "--processes", "1", "--receiver-delay", "0.2", "--timeout", "0.5"]


def _run(tmp_path: Path, *arguments: str) -> dict[str, Any]:
    out_file = tmp_path / "webhooks.json"
    assert main(["webhooks", *TINY, *arguments, "--json", str(out_file)]) == 0
    report: dict[str, Any] = json.loads(out_file.read_text())
    return report


def _check(report: dict[str, Any], backend: str) -> None:
    runs = {mode: runs[0] for mode, runs in report["runs"][backend].items()}
    assert set(runs) == set(MODES)
    for mode, run in runs.items():
        assert run["probe_plays"] > 0 and run["load_commands_per_second"] > 0, mode
        assert run["probe_play_p99_ms"] >= run["probe_play_p50_ms"] > 0, mode
    assert "deliveries" not in runs["none"]
    assert runs["hang"]["deliveries"] == 0  # the endpoint never answered
    assert runs["fast"]["deliveries"] > 0 and runs["backlog"]["deliveries"] > 0
    assert runs["fast"]["lag_p99_ms"] >= runs["fast"]["lag_p50_ms"] > 0
    assert runs["fast"]["deliveries_per_second"] > 0
    assert runs["backlog"]["catch_up_per_second"] > 0
    summary = report["summary"][backend]
    base = summary["none"]["probe_play_p99_ms"]
    for mode in ("slow", "hang", "fast", "backlog"):
        assert summary[mode]["p99_ratio"] == round(summary[mode]["probe_play_p99_ms"] / base, 2)
        assert summary[mode]["pooled_p99_ratio"] == round(
            summary[mode]["probe_play_p99_pooled_ms"]
            / summary["none"]["probe_play_p99_pooled_ms"], 2)


def test_bench_webhooks_runs_every_mode_on_sqlite(tmp_path: Path) -> None:
    _check(_run(tmp_path, "--backends", "sqlite"), "sqlite")


@pytest.mark.postgres
def test_bench_webhooks_runs_every_mode_on_postgresql(tmp_path: Path,
                                                      postgres_url: str) -> None:
    admin = postgres_url.rsplit("/", 1)[0] + "/postgres"
    _check(_run(tmp_path, "--backends", "postgresql", "--postgres-url", admin), "postgresql")
