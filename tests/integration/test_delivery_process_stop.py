"""A server stopped while its webhook delivery process is still starting ends that process
at once, cleanly: it had begun nothing (no lease taken, no attempt sent), so there is
nothing to finish and nothing to wait for. Here the process can never finish starting: its
database hangs (every PostgreSQL process stopped), so opening the event store never ends."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.ops.config import parse_database_url
from fiftyk_referee.service.ops.webhook_settings import parse_webhook_settings
from fiftyk_referee.service.webhooks.process import DeliveryProcess, DeliverySpec
from tests.support.pgserver import TEST_DATABASE, ThrowawayPostgres

# The attempt timeout bounds a stop's wait for a process that has begun delivering: long,
# so that a stop which waited for this process (it never begins) would show it as a kill.
SETTINGS = "timeout=60,lease=120,poll=0.1"
PROCESS_LOGGER = "fiftyk_referee.service.webhooks.process"
SPAWN_WAIT_SECONDS = 60.0  # a bound for the process to be spawned, not a speed requirement


@pytest.mark.postgres
def test_a_delivery_process_stopped_while_starting_ends_at_once_and_cleanly(
        own_postgres: ThrowawayPostgres, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    database = parse_database_url(own_postgres.url(TEST_DATABASE), tmp_path)
    spec = DeliverySpec(persistence=persistence_env(database, pool_size=1, create_schema=False),
                        settings=parse_webhook_settings(SETTINGS),
                        holder=DeliveryProcess.new_holder(), log_level="INFO")
    own_postgres.freeze()
    process = DeliveryProcess(spec)
    with caplog.at_level(logging.INFO, PROCESS_LOGGER):
        process.start()
        try:
            deadline = time.monotonic() + SPAWN_WAIT_SECONDS
            while process.pid is None:
                assert time.monotonic() < deadline, "the delivery process was not spawned"
                time.sleep(0.02)
        finally:
            process.stop()
    assert process.pid is None  # ended, and not restarted
    assert process.exit_status == 0  # it ended by itself, not killed, not failed
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
