"""Shared fixtures: a throwaway PostgreSQL 15 server for the whole test session."""

from __future__ import annotations

import atexit
import uuid
from collections.abc import Iterator

import pytest

from tests.support.pgserver import (
    TEST_DATABASE,
    PostgresStartError,
    ThrowawayPostgres,
    create_database,
    drop_database,
)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[ThrowawayPostgres]:
    """A running throwaway PostgreSQL 15 server, shared by the whole session."""
    try:
        server = ThrowawayPostgres()
    except PostgresStartError as exc:
        pytest.fail(str(exc), pytrace=False)
    # Stops the server even if the session dies without running fixture teardown.
    atexit.register(server.stop)
    try:
        server.start()
    except PostgresStartError as exc:
        server.stop()
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres_url(postgres_server: ThrowawayPostgres) -> str:
    """URL of the session's `fiftyk_test` database."""
    return postgres_server.url(TEST_DATABASE)


@pytest.fixture
def fresh_postgres_db(postgres_server: ThrowawayPostgres) -> Iterator[str]:
    """URL of a brand-new empty database, dropped after the test."""
    name = f"fiftyk_{uuid.uuid4().hex[:16]}"
    admin_url = postgres_server.url("postgres")
    create_database(admin_url, name)
    yield postgres_server.url(name)
    drop_database(admin_url, name)


@pytest.fixture
def own_postgres() -> Iterator[ThrowawayPostgres]:
    """A PostgreSQL server of this test's own, which the test may stop and start again
    (`pause`/`resume`) without disturbing the session's shared server."""
    try:
        server = ThrowawayPostgres()
    except PostgresStartError as exc:
        pytest.fail(str(exc), pytrace=False)
    atexit.register(server.stop)
    try:
        server.start()
    except PostgresStartError as exc:
        server.stop()
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.stop()
