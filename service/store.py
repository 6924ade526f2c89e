"""The event store's persistence settings: a database becomes the library's environment.

The configuration module parses the database URL (`service.config.parse_database_url`:
`postgresql://…` selects `eventsourcing.postgres`, psycopg 3 with a connection pool; a file
path, `sqlite:///…` or nothing selects SQLite). This module only translates those settings
into the `eventsourcing` environment variables (names checked
against the installed library's `PostgresFactory` / `SQLiteFactory`); it reads no
environment itself.

- Pool: `POSTGRES_POOL_SIZE` connections are kept open, `POSTGRES_MAX_OVERFLOW` more may be
  opened under load. A command holds one connection for its reads and one short
  transaction for its append, so the pool is sized to the server's worker threads plus the
  projection's thread; beyond that, callers wait up to the connect timeout for a connection.
- Lock timeout: the PostgreSQL recorder takes an EXCLUSIVE table lock per append (it keeps
  the global feed gapless). `POSTGRES_LOCK_TIMEOUT` bounds that wait; the library counts it
  in whole seconds and treats 0 as "forever", so it is rounded up and never 0. SQLite gets the
  same bound as its busy timeout.
- `CREATE_TABLE`: schema creation on first start; turn it off for a database user without DDL
  rights (the tables must then exist — run once with a user that has them).
- Aggregate cache: `AGGREGATE_CACHE_MAXSIZE` hot aggregates per process, always with
  `AGGREGATE_CACHE_FASTFORWARD` on: every read of a cached aggregate first selects the events
  stored after its cached version, so processes sharing one database never act on stale state
  (the library then deep-copies the cached aggregate before a command mutates it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

from eventsourcing.persistence import InterfaceError, OperationalError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from eventsourcing.utils import get_topic, retry
from psycopg.sql import SQL, Identifier

from fiftyk_referee.service.config import SQLITE_FILE_NAME, Database

DEFAULT_POOL_SIZE = 10
DEFAULT_LOCK_TIMEOUT_MS = 5_000
DEFAULT_CACHE_SIZE = 1_000
CONNECT_TIMEOUT_SECONDS = 10
CONN_MAX_AGE_SECONDS = 1_800
IDLE_IN_TRANSACTION_TIMEOUT_SECONDS = 5
MS_PER_SECOND = 1_000


class OneCallPostgresRecorder(PostgresApplicationRecorder):
    """The library's PostgreSQL recorder, appending with one function call per transaction.

    The stock recorder appends in a client-side pipeline (BEGIN, SET LOCAL lock_timeout,
    LOCK TABLE, NOTIFY, INSERT ... RETURNING, COMMIT) of composite-typed rows; psycopg's
    pipeline and composite bookkeeping cost about 0.5 ms of Python CPU per append, under the
    GIL. This recorder does the same work inside one PL/pgSQL function called in autocommit
    mode with four plain arrays, so the call is its own transaction: the EXCLUSIVE table lock
    is still taken first and held until commit, so positions are still handed out in commit
    order and the feed stays gapless (unlike the library's optional `es_insert_events_*`
    function, which does not lock the table). Duplicate versions still fail with
    `IntegrityError`. Reads of one stream use statements composed once, not per call.
    """

    def __init__(self, datastore: PostgresDatastore, *,
                 events_table_name: str = "stored_events") -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        schema = Identifier(self.datastore.schema)
        table = SQL("{}.{}").format(schema, Identifier(self.events_table_name))
        id_type = self.datastore.originator_id_type
        self.append_function = f"fiftyk_append_{id_type}"
        function = Identifier(self.append_function)
        self.sql_create_statements.append(SQL(
            "CREATE OR REPLACE FUNCTION {schema}.{function}(ids {id_type}[], versions bigint[],"
            " topics text[], states bytea[]) RETURNS SETOF bigint LANGUAGE plpgsql AS $BODY$"
            " BEGIN"
            " SET LOCAL lock_timeout = '{lock_timeout}s';"
            " LOCK TABLE {table} IN EXCLUSIVE MODE;"
            " NOTIFY {channel};"
            " RETURN QUERY INSERT INTO {table} AS t"
            " (originator_id, originator_version, topic, state)"
            " SELECT * FROM unnest(ids, versions, topics, states)"
            " RETURNING notification_id;"
            " END; $BODY$"
        ).format(
            schema=schema, function=function, id_type=Identifier(id_type), table=table,
            lock_timeout=self.datastore.lock_timeout, channel=Identifier(self.channel_name),
        ))
        self.append_statement = SQL("SELECT * FROM {}.{}(%s, %s, %s, %s)").format(
            schema, function)
        select = SQL("SELECT * FROM {} WHERE originator_id = %s").format(table)
        self._selects = {
            (gt, lte, desc, limit): select
            + (SQL(" AND originator_version > %s") if gt else SQL(""))
            + (SQL(" AND originator_version <= %s") if lte else SQL(""))
            + SQL(" ORDER BY originator_version")
            + (SQL(" DESC") if desc else SQL(" ASC"))
            + (SQL(" LIMIT %s") if limit else SQL(""))
            for gt in (False, True) for lte in (False, True) for desc in (False, True)
            for limit in (False, True)
        }

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def insert_events(self, stored_events: Sequence[StoredEvent],
                      **kwargs: Any) -> Sequence[int] | None:
        """Append the events in one statement; return their feed positions."""
        if not stored_events:
            return []
        params = (
            [e.originator_id for e in stored_events],
            [e.originator_version for e in stored_events],
            [e.topic for e in stored_events],
            [e.state for e in stored_events],
        )
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(self.append_statement, params, prepare=True)
            return [row[self.append_function] for row in curs.fetchall()]

    @retry((InterfaceError, OperationalError), max_attempts=10, wait=0.2)
    def select_events(self, originator_id: UUID | str, *, gt: int | None = None,
                      lte: int | None = None, desc: bool = False,
                      limit: int | None = None) -> Sequence[StoredEvent]:
        """One stream's events, as the library selects them."""
        key = (gt is not None, lte is not None, desc, limit is not None)
        params = [originator_id, *(v for v in (gt, lte, limit) if v is not None)]
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(self._selects[key], params, prepare=True)
            return [
                StoredEvent(originator_id=row["originator_id"],
                            originator_version=row["originator_version"],
                            topic=row["topic"], state=bytes(row["state"]))
                for row in curs.fetchall()
            ]


def lock_timeout_seconds(lock_timeout_ms: int) -> int:
    """The library's whole-second lock timeout: rounded up, at least 1 (0 would mean forever)."""
    if lock_timeout_ms <= 0:
        raise ValueError("the lock timeout must be positive: a command never waits forever")
    return max(1, math.ceil(lock_timeout_ms / MS_PER_SECOND))


def persistence_env(
    database: Database,
    *,
    pool_size: int = DEFAULT_POOL_SIZE,
    max_overflow: int | None = None,
    lock_timeout_ms: int = DEFAULT_LOCK_TIMEOUT_MS,
    create_schema: bool = True,
    cache_size: int = DEFAULT_CACHE_SIZE,
) -> dict[str, str]:
    """The `eventsourcing` environment for a database (`Config.database`) and the settings."""
    if pool_size < 1:
        raise ValueError("the connection pool needs at least one connection")
    overflow = max_overflow if max_overflow is not None else max(1, pool_size // 2)
    lock_seconds = lock_timeout_seconds(lock_timeout_ms)
    env = {
        "CREATE_TABLE": "y" if create_schema else "n",
        "AGGREGATE_CACHE_MAXSIZE": str(cache_size) if cache_size > 0 else "",
        "AGGREGATE_CACHE_FASTFORWARD": "y",
        "DEEPCOPY_FROM_AGGREGATE_CACHE": "y",
    }
    if database.kind == "postgresql":
        env.update({
            "PERSISTENCE_MODULE": "eventsourcing.postgres",
            "POSTGRES_DBNAME": database.dbname,
            "POSTGRES_HOST": database.host,
            "POSTGRES_PORT": str(database.port),
            "POSTGRES_USER": database.user,
            "POSTGRES_PASSWORD": database.password,
            "APPLICATION_RECORDER_TOPIC": get_topic(OneCallPostgresRecorder),
            "POSTGRES_POOL_SIZE": str(pool_size),
            "POSTGRES_MAX_OVERFLOW": str(overflow),
            "POSTGRES_LOCK_TIMEOUT": str(lock_seconds),
            "POSTGRES_CONNECT_TIMEOUT": str(CONNECT_TIMEOUT_SECONDS),
            "POSTGRES_CONN_MAX_AGE": str(CONN_MAX_AGE_SECONDS),
            # No ping per checkout (a round trip per query): the recorders already retry
            # a statement that fails on a dropped connection.
            "POSTGRES_PRE_PING": "n",
            "POSTGRES_IDLE_IN_TRANSACTION_SESSION_TIMEOUT": str(
                IDLE_IN_TRANSACTION_TIMEOUT_SECONDS
            ),
        })
        return env
    path = database.sqlite_path or Path(SQLITE_FILE_NAME)
    if create_schema:
        path.parent.mkdir(parents=True, exist_ok=True)
    env.update({
        "PERSISTENCE_MODULE": "eventsourcing.sqlite",
        "SQLITE_DBNAME": str(path),
        "SQLITE_LOCK_TIMEOUT": str(lock_seconds),
    })
    return env


__all__ = [
    "DEFAULT_CACHE_SIZE",
    "DEFAULT_LOCK_TIMEOUT_MS",
    "DEFAULT_POOL_SIZE",
    "OneCallPostgresRecorder",
    "lock_timeout_seconds",
    "persistence_env",
]
