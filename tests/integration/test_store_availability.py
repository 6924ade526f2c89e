"""The store's health probe on a real PostgreSQL: a dropped probe connection is not an
outage, a stopped server is, and a call then fails at once with STORE_UNAVAILABLE."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from fiftyk_referee.service.application import Referee
from fiftyk_referee.service.config import parse_database_url
from fiftyk_referee.service.errors import StoreUnavailable
from fiftyk_referee.service.store import OneCallPostgresRecorder, persistence_env
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
