"""The throwaway PostgreSQL server that integration tests rely on."""

import psycopg
import pytest

pytestmark = pytest.mark.postgres


def test_throwaway_server_is_postgresql_15_and_stores_rows(postgres_url: str) -> None:
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute("SELECT version()").fetchone()
        assert row is not None
        assert "PostgreSQL 15" in row[0]
        conn.execute("CREATE TABLE probe (id int PRIMARY KEY, name text NOT NULL)")
        conn.execute("INSERT INTO probe VALUES (%s, %s)", (1, "五十K"))
        assert conn.execute("SELECT name FROM probe WHERE id = 1").fetchone() == ("五十K",)
        conn.execute("DROP TABLE probe")


def test_fresh_databases_are_empty_and_distinct(postgres_url: str, fresh_postgres_db: str) -> None:
    assert fresh_postgres_db != postgres_url
    with psycopg.connect(fresh_postgres_db) as conn:
        row = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        assert row == (0,)
