"""Tables of the referee's own processes (the lobby, webhook deliveries) in the event store.

The processes that follow the global feed keep their state next to the events, in the same
database, so they survive restarts and replicas share it. This module is the little SQL they
need on both stores: statements are written once with `?` placeholders and run on SQLite
as they are and on PostgreSQL with `%s`; rows come back as plain dicts.

Positions. A process records the feed position it has applied in `process_positions`, in the
same transaction as the changes the events made (`claim_position` reads and locks it). On
PostgreSQL the row lock (`SELECT … FOR UPDATE`) makes replicas that run the same process take
turns, and each re-reads the position after it gets the lock, so an event is applied once
however many replicas follow the feed. On SQLite one process writes (the file's write lock).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from eventsourcing.application import Application
from eventsourcing.persistence import IntegrityError, InterfaceError, OperationalError
from eventsourcing.postgres import PostgresDatastore

from fiftyk_referee.service.errors import ServiceReason, Unavailable

POSITIONS_TABLE = "process_positions"
CREATE_POSITIONS = (f"CREATE TABLE IF NOT EXISTS {POSITIONS_TABLE} (name TEXT PRIMARY KEY,"
                    " position BIGINT NOT NULL)")
# What a store that does not answer raises through the datastores (the recorders translate
# driver errors; a process using the datastore directly meets them untranslated too).
STORE_ERRORS: tuple[type[Exception], ...] = (
    OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError,
    sqlite3.OperationalError)

# A unique key violated: the SQLite datastore translates it, psycopg raises its own.
INTEGRITY_ERRORS: tuple[type[Exception], ...] = (IntegrityError, psycopg.IntegrityError)


class Statements:
    """A cursor of either store that takes `?` placeholders and returns dict rows."""

    def __init__(self, cursor: Any, postgres: bool) -> None:
        self._cursor = cursor
        self._postgres = postgres

    def execute(self, sql: str, parameters: Sequence[Any] = ()) -> None:
        """Run one statement."""
        if self._postgres:
            sql = sql.replace("?", "%s")
        self._cursor.execute(sql, tuple(parameters))

    def fetchone(self) -> dict[str, Any] | None:
        """The next row, as a dict."""
        row = self._cursor.fetchone()
        return dict(row) if row is not None else None

    def fetchall(self) -> list[dict[str, Any]]:
        """Every remaining row, as dicts."""
        return [dict(row) for row in self._cursor.fetchall()]

    def claim_position(self, name: str) -> int:
        """The process's recorded feed position, locked until this transaction ends."""
        self.execute(f"INSERT INTO {POSITIONS_TABLE} (name, position) VALUES (?, 0)"
                     " ON CONFLICT (name) DO NOTHING", (name,))
        lock = " FOR UPDATE" if self._postgres else ""
        self.execute(f"SELECT position FROM {POSITIONS_TABLE} WHERE name=?{lock}", (name,))
        row = self.fetchone()
        return int(row["position"]) if row is not None else 0

    def set_position(self, name: str, position: int) -> None:
        """Record the process's new position (after `claim_position` in this transaction)."""
        self.execute(f"UPDATE {POSITIONS_TABLE} SET position=? WHERE name=?", (position, name))


class ProcessStore:
    """Transactions on the event store's database for the referee's processes."""

    def __init__(self, datastore: Any, *, create_statements: Sequence[str] = (),
                 create: bool = True) -> None:
        self.datastore = datastore
        self.postgres = isinstance(datastore, PostgresDatastore)
        self._create = (CREATE_POSITIONS, *create_statements)
        if create:
            self.create_tables()

    def create_tables(self) -> None:
        """Create the tables (idempotent)."""
        with self.transaction() as statements:
            for sql in self._create:
                statements.execute(sql)

    @contextmanager
    def transaction(self, *, commit: bool = True) -> Iterator[Statements]:
        """One transaction: committed when the block ends normally, else rolled back."""
        with self.datastore.transaction(commit=commit) as cursor:
            yield Statements(cursor, self.postgres)

    def position(self, name: str) -> int:
        """A process's recorded feed position (0 before its first batch)."""
        with self.transaction(commit=False) as statements:
            statements.execute(f"SELECT position FROM {POSITIONS_TABLE} WHERE name=?", (name,))
            row = statements.fetchone()
        return int(row["position"]) if row is not None else 0


def datastore_of(app: Application[Any]) -> Any:
    """The datastore (SQLite or PostgreSQL) the application's recorder writes to."""
    datastore = getattr(app.recorder, "datastore", None)
    if datastore is None:  # pragma: no cover - both stores' recorders have one
        raise TypeError(f"{type(app.recorder).__name__} has no datastore")
    return datastore


def unavailable(error: BaseException) -> Unavailable:
    """The refusal of a call whose store did not answer."""
    return Unavailable(ServiceReason.STORE_UNAVAILABLE,
                       f"the event store did not answer ({type(error).__name__}); retry later")


__all__ = [
    "INTEGRITY_ERRORS", "POSITIONS_TABLE", "STORE_ERRORS", "ProcessStore", "Statements",
    "datastore_of", "unavailable",
]
