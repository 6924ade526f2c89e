"""A store written before the service's modules moved into folders still loads.

The event store records each stored object's class as a topic (`module:Class`). Two of the
service's own classes are stored: command receipts (`service/trust/receipts.py`) and the
snapshots of tables (`service/core/aggregates.py`). Their modules moved from the top of
`service/` into `trust/` and `core/`; a store written before names them by the old modules,
and must still answer: a retried request finds its receipt, a table loads from its snapshot.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from uuid import UUID

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.ops.config import parse_database_url

PRESET = "qq4"
PLAYERS = 4
# Today's module of each stored service class -> the module a store written before named.
MOVED = {
    "fiftyk_referee.service.trust.receipts:": "fiftyk_referee.service.receipts:",
    "fiftyk_referee.service.core.aggregates:": "fiftyk_referee.service.aggregates:",
}


def open_referee(path: Path) -> Referee:
    """The referee on the SQLite store at `path`."""
    database = parse_database_url(str(path), path.parent)
    return Referee(persistence_env(database, pool_size=4, max_overflow=8,
                                   lock_timeout_ms=5_000, cache_size=100))


def rewrite_to_old_topics(path: Path) -> int:
    """Give every stored receipt and snapshot the topic a store written before recorded."""
    rewritten = 0
    with sqlite3.connect(path) as connection:
        for table in ("stored_events", "stored_snapshots"):
            for new, old in MOVED.items():
                cursor = connection.execute(
                    f"UPDATE {table} SET topic = ? || substr(topic, ?) WHERE topic LIKE ?",
                    (old, len(new) + 1, new + "%"))
                rewritten += cursor.rowcount
    return rewritten


def test_a_store_written_before_the_moves_finds_its_receipts_and_snapshots(
        tmp_path: Path) -> None:
    path = tmp_path / "before-the-moves.sqlite"
    app = open_referee(path)
    created = app.create_table(PRESET, {}, PLAYERS, request_id="create-1")
    table_id = UUID(str(created.table_id))
    for seat in range(PLAYERS):
        app.join_table(table_id, f"p{seat}", seat, request_id=f"join-{seat}")
    app.take_snapshot(table_id)
    before = app.get_table(table_id)
    app.close()
    # One receipt per request (create, four joins) and the table's snapshot.
    assert rewrite_to_old_topics(path) == 1 + PLAYERS + 1

    reopened = open_referee(path)
    try:
        again = reopened.create_table(PRESET, {}, PLAYERS, request_id="create-1")
        assert again.replayed and UUID(str(again.table_id)) == table_id
        assert reopened.join_table(table_id, "p0", 0, request_id="join-0").replayed
        table = reopened.get_table(table_id)
        assert table.version == before.version
        assert table.seats == before.seats
    finally:
        reopened.close()
