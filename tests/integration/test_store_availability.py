"""The store's health probe on a real PostgreSQL: a dropped probe connection is not an
outage, a stopped server is, and a call then fails at once with STORE_UNAVAILABLE; a server
that refuses writes is not ready, and a write to it is STORE_UNAVAILABLE too."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import OneCallPostgresRecorder, persistence_env
from fiftyk_referee.service.errors import StoreUnavailable
from fiftyk_referee.service.ops.config import parse_database_url
from tests.support.pgserver import TEST_DATABASE, ThrowawayPostgres

pytestmark = pytest.mark.postgres


def _app(url: str) -> tuple[Referee, OneCallPostgresRecorder]:
    app = Referee(persistence_env(parse_database_url(url, Path()), pool_size=2,
                                  timeout_seconds=2))
    recorder = app.recorder
    assert isinstance(recorder, OneCallPostgresRecorder)
    return app, recorder


def test_a_dropped_probe_connection_is_not_an_outage(fresh_postgres_db: str) -> None:
    app, recorder = _app(fresh_postgres_db)
    try:
        assert recorder.availability.probe()
        dbname = fresh_postgres_db.rsplit("/", 1)[1]
        with psycopg.connect(fresh_postgres_db.rsplit("/", 1)[0] + "/postgres",
                             autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                          " WHERE datname = %s AND pid <> pg_backend_pid()", (dbname,))
        assert recorder.availability.probe()  # reconnected at once
        assert recorder.availability.up
    finally:
        recorder.availability.close()
        app.close()


def test_a_stopped_server_is_down_and_calls_fail_fast_until_it_is_back(
    own_postgres: ThrowawayPostgres,
) -> None:
    app, recorder = _app(own_postgres.url(TEST_DATABASE))
    try:
        assert recorder.availability.probe()
        own_postgres.pause()
        assert not recorder.availability.probe()
        started = time.monotonic()
        with pytest.raises(StoreUnavailable):
            app.head_position()
        assert time.monotonic() - started < 0.5  # no wait for the pool: known down
        own_postgres.resume()
        assert recorder.availability.probe()
        assert app.head_position() >= 0
    finally:
        recorder.availability.close()
        app.close()


def _set_read_only(url: str, read_only: bool) -> None:
    """Make the database refuse writes (as a standby, or a primary being demoted, does) and
    drop every connection to it, as a failover does."""
    dbname = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        admin.execute(sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = {}").format(
            sql.Identifier(dbname), sql.Literal("on" if read_only else "off")))
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                      " WHERE datname = %s AND pid <> pg_backend_pid()", (dbname,))


def test_a_server_that_refuses_writes_is_not_ready_and_a_write_is_store_unavailable(
    fresh_postgres_db: str,
) -> None:
    app, recorder = _app(fresh_postgres_db)
    try:
        assert recorder.availability.probe()
        _set_read_only(fresh_postgres_db, True)
        # A write on a read-only server (SQLSTATE 25006) is retryable, never an internal error.
        with pytest.raises(StoreUnavailable) as refused:
            app.create_table("classic", None, 4)
        assert refused.value.retry_after_seconds > 0
        assert app.head_position() >= 0  # reads still work on a read-only server
        assert not recorder.availability.probe()  # ready means "can write"
        _set_read_only(fresh_postgres_db, False)
        assert recorder.availability.probe()
        assert not app.create_table("classic", None, 4).replayed
    finally:
        app.close()
