"""One call, one store budget: during an outage every wait of a call for the store — each
recorder call's wait for a pooled connection, the retries — shares the call's single store
timeout (`store_budget`), instead of each recorder call (a snapshot read, then the events
after it; a read, then an append), and the queueing for a worker before them, starting a
full timeout of its own. Checked structurally on a real PostgreSQL that is stopped: the
pool reports the wait it was given ("after N sec"), so no assertion depends on the clock."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from psycopg_pool import PoolTimeout

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import (
    MIN_POOL_WAIT_SECONDS,
    OneCallPostgresRecorder,
    persistence_env,
    store_budget,
)
from fiftyk_referee.service.errors import StoreUnavailable
from fiftyk_referee.service.ops.config import parse_database_url
from tests.support.pgserver import TEST_DATABASE, ThrowawayPostgres

pytestmark = pytest.mark.postgres
TIMEOUT_SECONDS = 2


def _pool_wait(error: BaseException) -> float:
    """The wait the pool was given, from the PoolTimeout behind a StoreUnavailable."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, PoolTimeout):
        cause = cause.__cause__
    assert cause is not None, f"no pool timeout behind {error!r}"
    found = re.search(r"after ([0-9.]+) sec", str(cause))
    assert found, str(cause)
    return float(found.group(1))


def test_the_recorder_calls_of_one_call_share_one_store_timeout(
    own_postgres: ThrowawayPostgres,
) -> None:
    app = Referee(persistence_env(parse_database_url(own_postgres.url(TEST_DATABASE), Path()),
                                  pool_size=2, timeout_seconds=TIMEOUT_SECONDS))
    recorder = app.recorder
    assert isinstance(recorder, OneCallPostgresRecorder)
    try:
        table_id = app.create_table("classic", None, 4).table_id
        own_postgres.pause()
        # Outside any call's budget, a recorder call waits the whole store timeout.
        with pytest.raises(StoreUnavailable) as alone:
            app.head_position()
        assert _pool_wait(alone.value) == TIMEOUT_SECONDS
        # Within a call whose budget is spent (by an earlier recorder call, or queued for a
        # worker), the next recorder call only makes a last short wait, not a new timeout.
        with store_budget(time.monotonic()):
            with pytest.raises(StoreUnavailable) as spent:
                app.get_table(table_id)
            with pytest.raises(StoreUnavailable) as again:
                app.head_position()
        assert _pool_wait(spent.value) == MIN_POOL_WAIT_SECONDS
        assert _pool_wait(again.value) == MIN_POOL_WAIT_SECONDS
        # A budget with time left gives the wait what is left: never more than the timeout.
        with store_budget(time.monotonic() + 10 * TIMEOUT_SECONDS), \
                pytest.raises(StoreUnavailable) as roomy:
            app.head_position()
        assert _pool_wait(roomy.value) == TIMEOUT_SECONDS
        own_postgres.resume()
        assert str(app.get_table(table_id).id) == str(table_id)
    finally:
        recorder.availability.close()
        app.close()
