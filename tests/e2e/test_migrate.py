"""`fiftyk migrate` creates the schema once (as the Kubernetes Job does); servers then run
without schema creation and play."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.harness import LiveServer, server_config


def _migrate(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fiftyk_referee.service.cli", "migrate"],
        env={**os.environ, "FIFTYK_DATABASE_URL": url, "FIFTYK_CREATE_SCHEMA": "false"},
        capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.postgres
def test_migrate_makes_the_tables_a_server_without_schema_rights_needs(
    fresh_postgres_db: str, tmp_path: Path,
) -> None:
    first = _migrate(fresh_postgres_db)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("fiftyk migrate: the tables exist in PostgreSQL database")
    again = _migrate(fresh_postgres_db)  # idempotent: a re-run of the Job changes nothing
    assert again.returncode == 0, again.stderr
    live = LiveServer(server_config(tmp_path, database_url=fresh_postgres_db,
                                    create_schema=False))
    try:
        platform = live.platform()
        table = platform.create_table("classic", 4).table
        assert platform.get_table(table.table_id).table_id == table.table_id
        # The lobby's and the webhooks' tables were made by the migration too.
        assert [t.table_id for t in platform.list_tables().tables] == [table.table_id]
        assert platform.register_webhook("https://hooks.example.com/in").secret
    finally:
        live.stop()
