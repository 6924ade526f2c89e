"""The configured database and store settings become the event store library's environment."""

from __future__ import annotations

from pathlib import Path

import psycopg
import psycopg.errors
import pytest
from eventsourcing.persistence import InternalError
from eventsourcing.utils import Environment, get_topic
from psycopg.conninfo import conninfo_to_dict

from fiftyk_referee.service.core.store import (
    FailoverPool,
    RefereePostgresFactory,
    connection_params,
    describe,
    is_read_only_error,
    lock_timeout_seconds,
    persistence_env,
)
from fiftyk_referee.service.ops.config import parse_database_url


def test_a_postgresql_url_selects_the_postgres_module_with_its_connection_settings() -> None:
    database = parse_database_url("postgresql://ref:s%40cret@db.internal:6543/fiftyk", Path())
    env = persistence_env(database, pool_size=8, lock_timeout_ms=2_500, create_schema=False)
    assert env["PERSISTENCE_MODULE"] == get_topic(RefereePostgresFactory)
    assert (env["POSTGRES_DBNAME"], env["POSTGRES_HOST"], env["POSTGRES_PORT"]) == (
        "fiftyk", "db.internal", "6543")
    assert (env["POSTGRES_USER"], env["POSTGRES_PASSWORD"]) == ("ref", "s@cret")
    params = conninfo_to_dict(env["FIFTYK_POSTGRES_CONNINFO"])
    assert (params["host"], params["port"], params["password"]) == (
        "db.internal", "6543", "s@cret")
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
    cluster = parse_database_url("postgresql://ref:pw@db1:5433,db2/fiftyk", Path())
    assert describe(cluster) == "PostgreSQL database fiftyk on db1:5433,db2:5432 as ref"


def test_the_connection_string_keeps_every_cluster_setting_and_bounds_a_silent_server(
) -> None:
    database = parse_database_url(
        "postgres://h1:1,h2:2/db?target_session_attrs=read-write&sslmode=verify-full"
        "&sslrootcert=/ca.pem&connect_timeout=9", Path())
    params = conninfo_to_dict(persistence_env(database, timeout_seconds=3,
                                              reconnect_seconds=0.5)["FIFTYK_POSTGRES_CONNINFO"])
    assert (params["host"], params["port"]) == ("h1,h2", "1,2")
    assert (params["target_session_attrs"], params["sslmode"], params["sslrootcert"]) == (
        "read-write", "verify-full", "/ca.pem")
    assert params["connect_timeout"] == "9"  # the URL's own setting wins
    assert params["tcp_user_timeout"] == "3000"
    assert params["keepalives"] == "1"
    plain = connection_params(parse_database_url("postgres://h/db", Path()), 3)
    assert plain["connect_timeout"] == "3"


def test_the_pool_follows_the_whole_connection_string_and_reconnects_within_the_interval(
) -> None:
    database = parse_database_url("postgres://u@h1:1,h2:2/db?sslmode=require", Path())
    factory = RefereePostgresFactory(Environment(env=persistence_env(
        database, pool_size=3, reconnect_seconds=0.25)))
    pool = factory.datastore.pool
    assert isinstance(pool, FailoverPool)
    assert pool.reconnect_seconds == 0.25
    assert (pool.min_size, pool.max_size) == (3, 4)
    params = conninfo_to_dict(str(pool.conninfo))
    assert (params["host"], params["target_session_attrs"], params["sslmode"]) == (
        "h1,h2", "read-write", "require")
    assert pool.name == "h1:1,h2:2"


def test_a_read_only_server_is_told_from_other_errors() -> None:
    read_only = psycopg.errors.ReadOnlySqlTransaction("cannot execute INSERT")
    assert is_read_only_error(read_only)
    wrapped = InternalError("cannot execute INSERT")
    wrapped.__cause__ = read_only
    assert is_read_only_error(wrapped)
    assert not is_read_only_error(psycopg.errors.AdminShutdown("terminating"))
    assert not is_read_only_error(InternalError("something else"))
