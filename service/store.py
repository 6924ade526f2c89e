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
- Outage: every call the application makes on the PostgreSQL recorder (append, stream read,
  feed read, feed head) waits at most `timeout_seconds` for the store — the pool's wait for a
  connection, `POSTGRES_CONNECT_TIMEOUT` — and retries a dropped connection only within
  that budget; then it raises `StoreUnavailable` (gRPC `UNAVAILABLE`, `STORE_UNAVAILABLE`)
  instead of the library's ten retries of a full pool wait each (about 92 s of hang). While
  the health probe (`StoreAvailability.probe`, run by the composition root) finds the
  database unreachable, calls fail at once instead of each waiting out the budget.
- Aggregate cache: `AGGREGATE_CACHE_MAXSIZE` hot aggregates per process, always with
  `AGGREGATE_CACHE_FASTFORWARD` on: every read of a cached aggregate first selects the events
  stored after its cached version, so processes sharing one database never act on stale state
  (the library then deep-copies the cached aggregate before a command mutates it).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar
from uuid import UUID

import psycopg
from eventsourcing.persistence import (
    InterfaceError,
    Notification,
    OperationalError,
    StoredEvent,
)
from eventsourcing.postgres import (
    PostgresAggregateRecorder,
    PostgresApplicationRecorder,
    PostgresDatastore,
    PostgresFactory,
)
from eventsourcing.utils import get_topic
from psycopg.sql import SQL, Identifier
from psycopg_pool import PoolTimeout

from fiftyk_referee.service.config import SQLITE_FILE_NAME, Database
from fiftyk_referee.service.errors import StoreUnavailable

DEFAULT_POOL_SIZE = 10
DEFAULT_LOCK_TIMEOUT_MS = 5_000
DEFAULT_CACHE_SIZE = 1_000
CONN_MAX_AGE_SECONDS = 1_800
IDLE_IN_TRANSACTION_TIMEOUT_SECONDS = 5
MS_PER_SECOND = 1_000
DEFAULT_STORE_TIMEOUT_SECONDS = 5
MAX_ATTEMPTS = 10  # as the library: enough to get past every dropped connection in the pool
UNAVAILABLE_MESSAGE = "the event store is unavailable; try again later"
log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")


class StoreAvailability:
    """Whether the PostgreSQL database answers, as the last probe found.

    The probe keeps one connection of its own (outside the pool, so it never waits behind
    commands) and runs `SELECT 1` on it; a failure closes it and the next probe reconnects.
    """

    def __init__(self, datastore: PostgresDatastore, timeout_seconds: float) -> None:
        pooled = datastore.pool.kwargs
        kwargs = dict((pooled() if callable(pooled) else pooled) or {})
        kwargs.pop("row_factory", None)
        self._connect_kwargs = kwargs
        self.timeout_seconds = timeout_seconds
        self.up = True  # until a probe says otherwise: calls then wait out their own budget
        self._connection: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        """The database, for logs: `dbname on host:port as user` (never the password)."""
        k = self._connect_kwargs
        return f"{k.get('dbname')} on {k.get('host')}:{k.get('port')} as {k.get('user')}"

    def check(self) -> None:
        """Raise StoreUnavailable at once while the last probe found the database down."""
        if not self.up:
            raise StoreUnavailable(UNAVAILABLE_MESSAGE)

    def probe(self) -> bool:
        """Ask the database `SELECT 1` (blocking, bounded by the timeout); record and return
        whether it answered."""
        with self._lock:
            try:
                try:
                    self._select_one()
                except psycopg.Error:
                    # The kept connection may have been dropped by an idle timeout or a
                    # proxy while the database is fine: one fresh try before saying down.
                    self._close()
                    self._select_one()
            except psycopg.Error as error:
                self._close()
                if self.up:
                    log.warning("event store unreachable (%s): %s", self.where,
                                one_line(str(error)))
                self.up = False
                return False
            if not self.up:
                log.warning("event store reachable again (%s)", self.where)
            self.up = True
            return True

    def _select_one(self) -> None:
        if self._connection is None or self._connection.closed:
            self._connection = psycopg.connect(
                **self._connect_kwargs, autocommit=True,
                connect_timeout=max(1, math.ceil(self.timeout_seconds)))
        self._connection.execute("SELECT 1")

    def mark_down(self) -> None:
        """Record that the database stopped answering (a probe that ran out of time)."""
        if self.up:
            log.warning("event store did not answer the probe in time (%s)", self.where)
        self.up = False

    def _close(self) -> None:
        if self._connection is not None:
            # A dead connection may fail to close: it is gone anyway.
            with contextlib.suppress(psycopg.Error):
                self._connection.close()
            self._connection = None

    def close(self) -> None:
        """Close the probe's connection."""
        with self._lock:
            self._close()


def one_line(text: str) -> str:
    """A driver message on one line (libpq's span several)."""
    return " ".join(text.split())


class _Guarded(Protocol):
    """A recorder whose calls `_bounded` guards."""

    availability: StoreAvailability


G = TypeVar("G", bound=_Guarded)


def availability_of(datastore: PostgresDatastore, timeout_seconds: float) -> StoreAvailability:
    """The one availability (and probe) of a datastore, shared by its recorders: the events
    table's and the snapshots table's calls fail fast together."""
    known = _AVAILABILITIES.get(datastore)
    if known is None:
        known = _AVAILABILITIES[datastore] = StoreAvailability(datastore, timeout_seconds)
    return known


_AVAILABILITIES: weakref.WeakKeyDictionary[PostgresDatastore, StoreAvailability] = (
    weakref.WeakKeyDictionary())


def _bounded(method: Callable[Concatenate[G, P], T]) -> Callable[Concatenate[G, P], T]:
    """Run a recorder call within the store timeout: fail fast while the probe finds the
    database down; retry a dropped connection while the budget lasts; then StoreUnavailable.

    A dropped connection fails at once and the pool discards it, so the retry follows
    without a pause (after a database restart every pooled connection fails once; the
    library's 0.2 s pause per attempt added seconds). A pool timeout is not retried: the
    pool already waited the whole budget for a new connection.
    """

    @functools.wraps(method)
    def call(self: G, /, *args: P.args, **kwargs: P.kwargs) -> T:
        availability = self.availability
        availability.check()
        deadline = time.monotonic() + availability.timeout_seconds
        attempt = 0
        while True:
            attempt += 1
            try:
                return method(self, *args, **kwargs)
            except StoreUnavailable:
                raise
            except (InterfaceError, OperationalError) as error:
                timed_out = isinstance(error.__cause__, PoolTimeout)
                if timed_out or attempt >= MAX_ATTEMPTS or time.monotonic() >= deadline:
                    log.warning("event store call %s failed after %d attempt(s) (%s): %s",
                                method.__name__, attempt, availability.where,
                                one_line(str(error)))
                    raise StoreUnavailable(UNAVAILABLE_MESSAGE) from error

    return call


def _unretried(function: Callable[P, T]) -> Callable[P, T]:
    """The library method without its own retry decorator (ten full waits): ours bounds it."""
    inner: Callable[P, T] = getattr(function, "__wrapped__", function)
    return inner


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
        # The pool's wait for a connection is the configured store timeout.
        self.availability = availability_of(datastore, float(datastore.pool.timeout))
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

    @_bounded
    def insert_events(self, /, stored_events: Sequence[StoredEvent],
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

    @_bounded
    def select_events(self, /, originator_id: UUID | str, *, gt: int | None = None,
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


    @_bounded
    def select_notifications(self, /, start: int | None, limit: int, stop: int | None = None,
                             topics: Sequence[str] = (), *, inclusive_of_start: bool = True
                             ) -> Sequence[Notification]:
        """A page of the global feed, as the library selects it, within the store timeout."""
        select = _unretried(PostgresApplicationRecorder.select_notifications)
        page: Sequence[Notification] = select(self, start, limit, stop, topics,
                                              inclusive_of_start=inclusive_of_start)
        return page

    @_bounded
    def max_notification_id(self, /) -> int | None:
        """The feed head, as the library reads it, within the store timeout."""
        head: int | None = _unretried(PostgresApplicationRecorder.max_notification_id)(self)
        return head


class BoundedAggregateRecorder(PostgresAggregateRecorder):
    """The library's aggregate recorder — the snapshots table — within the store timeout.

    A table's current state is read from its latest snapshot, then the events after it, so
    every read goes through this recorder too: unbounded, it held calls for the library's
    ten full waits during an outage and ended them `UNKNOWN`.
    """

    def __init__(self, datastore: PostgresDatastore, *,
                 events_table_name: str = "stored_events") -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        self.availability = availability_of(datastore, float(datastore.pool.timeout))

    @_bounded
    def insert_events(self, /, stored_events: Sequence[StoredEvent],
                      **kwargs: Any) -> Sequence[int] | None:
        """Store snapshots, as the library does, within the store timeout."""
        insert = _unretried(PostgresAggregateRecorder.insert_events)
        done: Sequence[int] | None = insert(self, stored_events, **kwargs)
        return done

    @_bounded
    def select_events(self, /, originator_id: UUID | str, *, gt: int | None = None,
                      lte: int | None = None, desc: bool = False,
                      limit: int | None = None) -> Sequence[StoredEvent]:
        """Snapshots of one aggregate, as the library selects them, within the timeout."""
        select = _unretried(PostgresAggregateRecorder.select_events)
        found: Sequence[StoredEvent] = select(self, originator_id, gt=gt, lte=lte, desc=desc,
                                              limit=limit)
        return found


class RefereePostgresFactory(PostgresFactory):
    """The library's PostgreSQL factory with the referee's recorders: one-call appends for
    the events, and every recorder bounded by the store timeout."""

    aggregate_recorder_class = BoundedAggregateRecorder
    application_recorder_class = OneCallPostgresRecorder


class DatabaseUnreachable(RuntimeError):
    """PostgreSQL did not answer at start within the configured wait; the message is one line
    naming the database (never its password)."""


def describe(database: Database) -> str:
    """`PostgreSQL database NAME on HOST:PORT as USER`: for messages, without the password."""
    return (f"PostgreSQL database {database.dbname} on {database.host}:{database.port}"
            f" as {database.user}")


def wait_for_database(database: Database, *, wait_seconds: float, timeout_seconds: int,
                      poll_seconds: float = 1.0) -> None:
    """Return once PostgreSQL answers `SELECT 1`; DatabaseUnreachable after `wait_seconds`.

    A database that is still starting (a compose or Kubernetes rollout) gets the whole wait;
    SQLite needs none.
    """
    if database.kind != "postgresql":
        return
    deadline = time.monotonic() + wait_seconds
    attempts = 0
    while True:
        attempts += 1
        try:
            with psycopg.connect(dbname=database.dbname, host=database.host,
                                 port=database.port, user=database.user,
                                 password=database.password, autocommit=True,
                                 connect_timeout=max(1, timeout_seconds)) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.Error as error:
            if time.monotonic() + poll_seconds >= deadline:
                reason = one_line(str(error))
                if database.password:  # libpq never echoes it; make sure of it anyway
                    reason = reason.replace(database.password, "***")
                raise DatabaseUnreachable(
                    f"cannot reach {describe(database)} after {wait_seconds:g} s"
                    f" ({attempts} attempts): {reason}") from None
            time.sleep(poll_seconds)


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
    timeout_seconds: int = DEFAULT_STORE_TIMEOUT_SECONDS,
) -> dict[str, str]:
    """The `eventsourcing` environment for a database (`Config.database`) and the settings."""
    if pool_size < 1:
        raise ValueError("the connection pool needs at least one connection")
    if timeout_seconds < 1:
        raise ValueError("the store timeout must be at least a second (the library counts"
                         " whole seconds)")
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
            "PERSISTENCE_MODULE": get_topic(RefereePostgresFactory),
            "POSTGRES_DBNAME": database.dbname,
            "POSTGRES_HOST": database.host,
            "POSTGRES_PORT": str(database.port),
            "POSTGRES_USER": database.user,
            "POSTGRES_PASSWORD": database.password,
            "APPLICATION_RECORDER_TOPIC": get_topic(OneCallPostgresRecorder),
            "POSTGRES_POOL_SIZE": str(pool_size),
            "POSTGRES_MAX_OVERFLOW": str(overflow),
            "POSTGRES_LOCK_TIMEOUT": str(lock_seconds),
            # The pool's wait for a connection: the longest a call waits for the store.
            "POSTGRES_CONNECT_TIMEOUT": str(timeout_seconds),
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
    "BoundedAggregateRecorder",
    "DatabaseUnreachable",
    "OneCallPostgresRecorder",
    "RefereePostgresFactory",
    "StoreAvailability",
    "availability_of",
    "describe",
    "lock_timeout_seconds",
    "persistence_env",
    "wait_for_database",
]
