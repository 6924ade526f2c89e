"""Every use case the gRPC edge runs gets one store budget, from the call's arrival: its
recorder calls (and its wait for a worker) share the store timeout (service.core.store)."""

from __future__ import annotations

from pathlib import Path

from fiftyk_referee.service.core.store import budget_left
from tests.e2e.harness import LiveServer, server_config

LONGER = 1_000.0


def test_a_use_case_runs_within_the_calls_store_budget(tmp_path: Path) -> None:
    live = LiveServer(server_config(tmp_path, db_timeout_seconds=2))
    try:
        servicer = live.running.servicer
        assert servicer is not None
        left = live.run(servicer.edge.call(budget_left, LONGER))
        assert 0 < left <= live.config.db_timeout_seconds
        assert budget_left(LONGER) == LONGER  # outside a call: no budget
    finally:
        live.stop()
