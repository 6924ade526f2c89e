"""Database URLs and store settings become the event store library's environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.store import lock_timeout_seconds, persistence_env, sqlite_path


def test_a_postgresql_url_selects_the_postgres_module_with_its_connection_settings() -> None:
    env = persistence_env("postgresql://ref:s%40cret@db.internal:6543/fiftyk", pool_size=8,
                          lock_timeout_ms=2_500, create_schema=False)
    assert env["PERSISTENCE_MODULE"] == "eventsourcing.postgres"
    assert (env["POSTGRES_DBNAME"], env["POSTGRES_HOST"], env["POSTGRES_PORT"]) == (
        "fiftyk", "db.internal", "6543")
    assert (env["POSTGRES_USER"], env["POSTGRES_PASSWORD"]) == ("ref", "s@cret")
    assert (env["POSTGRES_POOL_SIZE"], env["POSTGRES_MAX_OVERFLOW"]) == ("8", "4")
    assert env["POSTGRES_LOCK_TIMEOUT"] == "3"
    assert env["CREATE_TABLE"] == "n"
    assert env["AGGREGATE_CACHE_FASTFORWARD"] == "y"


def test_no_url_selects_sqlite_in_the_data_directory(tmp_path: Path) -> None:
    env = persistence_env(None, data_dir=tmp_path / "data")
    assert env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite"
    assert env["SQLITE_DBNAME"] == str(tmp_path / "data" / "fiftyk.sqlite3")
    assert (tmp_path / "data").is_dir()


def test_sqlite_urls_and_paths_follow_the_usual_conventions(tmp_path: Path) -> None:
    assert sqlite_path("sqlite:////var/lib/f.db", tmp_path) == Path("/var/lib/f.db")
    assert sqlite_path("sqlite:///f.db", tmp_path) == tmp_path / "f.db"
    assert sqlite_path("games/f.db", tmp_path) == tmp_path / "games" / "f.db"
    assert sqlite_path("/abs/f.db", tmp_path) == Path("/abs/f.db")


def test_the_lock_timeout_never_means_waiting_forever() -> None:
    assert lock_timeout_seconds(1) == 1
    assert lock_timeout_seconds(1_000) == 1
    assert lock_timeout_seconds(1_001) == 2
    with pytest.raises(ValueError):
        lock_timeout_seconds(0)


def test_connection_parameters_the_store_cannot_pass_on_are_refused() -> None:
    with pytest.raises(ValueError, match="sslmode"):
        persistence_env("postgresql://u@h/db?sslmode=require")
    with pytest.raises(ValueError, match="database"):
        persistence_env("postgresql://u@h")
