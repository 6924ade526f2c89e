"""The configured database and store settings become the event store library's environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from eventsourcing.utils import get_topic

from fiftyk_referee.service.config import parse_database_url
from fiftyk_referee.service.store import (
    RefereePostgresFactory,
    describe,
    lock_timeout_seconds,
    persistence_env,
)


def test_a_postgresql_url_selects_the_postgres_module_with_its_connection_settings() -> None:
    database = parse_database_url("postgresql://ref:s%40cret@db.internal:6543/fiftyk", Path())
    env = persistence_env(database, pool_size=8, lock_timeout_ms=2_500, create_schema=False)
    assert env["PERSISTENCE_MODULE"] == get_topic(RefereePostgresFactory)
    assert (env["POSTGRES_DBNAME"], env["POSTGRES_HOST"], env["POSTGRES_PORT"]) == (
        "fiftyk", "db.internal", "6543")
    assert (env["POSTGRES_USER"], env["POSTGRES_PASSWORD"]) == ("ref", "s@cret")
    assert (env["POSTGRES_POOL_SIZE"], env["POSTGRES_MAX_OVERFLOW"]) == ("8", "4")
    assert env["POSTGRES_LOCK_TIMEOUT"] == "3"
    assert env["CREATE_TABLE"] == "n"
    assert env["AGGREGATE_CACHE_FASTFORWARD"] == "y"


def test_no_url_selects_sqlite_in_the_data_directory(tmp_path: Path) -> None:
    env = persistence_env(parse_database_url("", tmp_path / "data"))
    assert env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite"
    assert env["SQLITE_DBNAME"] == str(tmp_path / "data" / "fiftyk.sqlite")
    assert env["SQLITE_LOCK_TIMEOUT"] == "5"
    assert (tmp_path / "data").is_dir()


def test_without_schema_creation_no_directory_is_made(tmp_path: Path) -> None:
    env = persistence_env(parse_database_url("", tmp_path / "absent"), create_schema=False)
    assert env["CREATE_TABLE"] == "n"
    assert not (tmp_path / "absent").exists()


def test_the_lock_timeout_never_means_waiting_forever() -> None:
    assert lock_timeout_seconds(1) == 1
    assert lock_timeout_seconds(1_000) == 1
    assert lock_timeout_seconds(1_001) == 2
    with pytest.raises(ValueError):
        lock_timeout_seconds(0)


def test_the_store_timeout_bounds_the_pools_wait_for_a_connection() -> None:
    database = parse_database_url("postgresql://ref:pw@db:5432/fiftyk", Path())
    assert persistence_env(database, timeout_seconds=3)["POSTGRES_CONNECT_TIMEOUT"] == "3"
    with pytest.raises(ValueError, match="at least a second"):
        persistence_env(database, timeout_seconds=0)


def test_the_database_description_never_shows_the_password() -> None:
    database = parse_database_url("postgresql://ref:pw-secret@db:5433/fiftyk", Path())
    assert describe(database) == "PostgreSQL database fiftyk on db:5433 as ref"
