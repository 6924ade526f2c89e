"""`scripts/bench webhooks` runs a short load and reports latency, deliveries and lag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.__main__ import main

pytestmark = pytest.mark.bench


def test_bench_webhooks_reports_commands_and_deliveries(tmp_path: Path) -> None:
    out_file = tmp_path / "webhooks.json"
    assert main(["webhooks", "--tables", "1", "--seconds", "1", "--json", str(out_file)]) == 0
    report = json.loads(out_file.read_text())
    assert report["commands"] > 0 and report["deliveries"] > report["commands"]
    assert report["lag_p99_ms"] >= report["lag_p50_ms"] > 0
