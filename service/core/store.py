"""The event store's persistence settings: a database becomes the library's environment.

The configuration module parses the database URL (`service.ops.config.parse_database_url`: a
libpq URL or keyword string selects `eventsourcing.postgres`, psycopg 3 with a connection
pool; a file path, `sqlite:///…` or nothing selects SQLite). This module translates those
settings into the `eventsourcing` environment variables (names checked against the installed
library's `PostgresFactory` / `SQLiteFactory`); it reads no environment itself.

- High availability: the pool connects with the whole libpq connection string, so a URL
  listing every node of a cluster (`pg_autoctl show uri`, or an operator's read-write
  service) with `target_session_attrs=read-write` reaches whichever node is the primary.
  After a failover the pool reconnects within one probe interval (`FailoverPool`); a write
  that meets a read-only server drains the pool (`StoreAvailability`).

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
  the health probe (`StoreAvailability.probe`, run by the composition root) finds that no
  pooled connection can write, calls fail at once instead of each waiting out the budget.
  One use case makes several recorder calls (a snapshot, then the events after it; a read,
  then an append), and under load it first waits for a worker: a caller's budget
  (`store_budget`, opened by the gRPC edge when the call arrives) is shared by all of them,
  so the whole call waits at most `timeout_seconds` for the store, not that much per
  recorder call — the pool's wait for a connection and the retries take what is left.
- Aggregate cache: `AGGREGATE_CACHE_MAXSIZE` hot aggregates per process, always with
  `AGGREGATE_CACHE_FASTFORWARD` on: every read of a cached aggregate first selects the events
  stored after its cached version, so processes sharing one database never act on stale state
  (the library then deep-copies the cached aggregate before a command mutates it). A
  command's first attempt decides on cached state without that read; its append then fails
  as a conflict if anything it used moved on (the streams it writes by their next version,
  the streams it only read by the append's guards), and the retry fast-forwards.

Its length (about 800 lines) is what the referee adds to the library's recorders (the
budgeted and guarded PostgreSQL and SQLite recorders, the failover pool, the typed arrays),
kept beside the settings that choose them.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar
from uuid import UUID

import psycopg
import psycopg.errors
from eventsourcing.persistence import (
    IntegrityError,
    InterfaceError,
    InternalError,
    Notification,
    OperationalError,
    StoredEvent,
)
from eventsourcing.postgres import (
    ConnectionPool,
    PostgresAggregateRecorder,
    PostgresApplicationRecorder,
    PostgresDatastore,
    PostgresFactory,
)
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteCursor
from eventsourcing.utils import get_topic
from psycopg import Connection
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import DictRow, dict_row
from psycopg.sql import SQL, Composable, Identifier
from psycopg.types.array import ListBinaryDumper
from psycopg_pool import PoolTimeout
from psycopg_pool.pool import AddConnection, MaintenanceTask

from fiftyk_referee.service.errors import StoreUnavailable
from fiftyk_referee.service.ops.config import SQLITE_FILE_NAME, Database

DEFAULT_POOL_SIZE = 10
DEFAULT_LOCK_TIMEOUT_MS = 5_000
DEFAULT_CACHE_SIZE = 1_000
CONN_MAX_AGE_SECONDS = 1_800
IDLE_IN_TRANSACTION_TIMEOUT_SECONDS = 5
MS_PER_SECOND = 1_000
DEFAULT_STORE_TIMEOUT_SECONDS = 3
DEFAULT_RECONNECT_SECONDS = 1.0  # the readiness probe's default interval
# libpq's own floor for connect_timeout is 2 s; more than a few seconds per host only delays
# reaching the next host of the list.
MIN_CONNECT_TIMEOUT_SECONDS = 2
MAX_CONNECT_TIMEOUT_SECONDS = 5
KEEPALIVE_IDLE_SECONDS = 10
KEEPALIVE_INTERVAL_SECONDS = 3
KEEPALIVE_COUNT = 3
APPLICATION_NAME = "fiftyk-referee"
MIN_POOL_WAIT_SECONDS = 0.1
CONNINFO_ENV = "FIFTYK_POSTGRES_CONNINFO"
RECONNECT_ENV = "FIFTYK_POSTGRES_RECONNECT_SECONDS"
# Whether the connection's server refuses writes: a standby in recovery, or a server (or
# session) set read-only, as pg_auto_failover does to a primary it is demoting.
WRITABLE_QUERY = ("SELECT pg_is_in_recovery()"
                  " OR current_setting('transaction_read_only')::boolean AS read_only")
MAX_ATTEMPTS = 10  # as the library: enough to get past every dropped connection in the pool
UNAVAILABLE_MESSAGE = "the event store is unavailable; try again later"
log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")


_CALL = threading.local()  # the budget of the call this worker thread runs (store_budget)


@contextlib.contextmanager
def store_budget(until: float) -> Iterator[None]:
    """Let every store wait of the call run inside (on this thread) end by `until`
    (monotonic seconds): the pool's wait for a connection and the retries after a dropped
    one. A budget opened inside another keeps the outer one."""
    if getattr(_CALL, "until", None) is not None:
        yield
        return
    _CALL.until = until
    try:
        yield
    finally:
        _CALL.until = None


def budget_left(seconds: float) -> float:
    """`seconds`, or less when the current call's budget ends sooner."""
    until: float | None = getattr(_CALL, "until", None)
    return seconds if until is None else min(seconds, until - time.monotonic())


class FailoverPool(ConnectionPool[Connection[DictRow]]):  # the library's pool class
    """psycopg's pool, retrying a lost connection at least every `reconnect_seconds`.

    The stock pool doubles the pause between attempts to replace a lost connection (1, 2,
    4, ... s): after an outage of T the pool could stay empty for about T more while the
    database already answered. Capping the pause at the readiness probe's interval makes
    the pool reconnect to a returned database, or to a newly promoted primary, within one
    probe interval.
    """

    def __init__(self, *args: Any, reconnect_seconds: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reconnect_seconds = reconnect_seconds

    def getconn(self, timeout: float | None = None) -> Connection[DictRow]:
        """A connection, waiting at most the pool's timeout — or what is left of the current
        call's budget (`store_budget`), never less than a last short wait."""
        if timeout is None:
            timeout = max(budget_left(self.timeout), MIN_POOL_WAIT_SECONDS)
        return super().getconn(timeout)

    def schedule_task(self, task: MaintenanceTask, delay: float) -> None:
        """Schedule a maintenance task; a reconnection attempt waits at most the cap."""
        if isinstance(task, AddConnection):
            delay = min(delay, self.reconnect_seconds)
        super().schedule_task(task, delay)


def is_read_only_error(error: BaseException) -> bool:
    """Whether a driver error (or the library's wrapper of one) says the server refuses
    writes (SQLSTATE 25006): a standby, or a primary being demoted in a failover."""
    cause = error if isinstance(error, psycopg.Error) else error.__cause__
    return isinstance(cause, psycopg.errors.ReadOnlySqlTransaction)


class StoreAvailability:
    """Whether the event store can take writes, as the last probe found.

    The probe asks a connection of the pool that serves commands (so "ready" means the
    commands' own pool can write) whether its server is in recovery or read-only. A lost
    connection makes the pool test and replace every idle one; a read-only server (a
    standby, a demoted primary) drains the pool, so new connections follow
    `target_session_attrs=read-write` to the new primary.
    """

    def __init__(self, datastore: PostgresDatastore, timeout_seconds: float) -> None:
        self.pool = datastore.pool
        self.timeout_seconds = timeout_seconds
        reconnect = getattr(self.pool, "reconnect_seconds", DEFAULT_RECONNECT_SECONDS)
        # A caller refused during an outage is told to come back after one probe interval.
        self.retry_after_seconds = float(reconnect)
        self.up = True  # until a probe says otherwise: calls then wait out their own budget
        self.server = ""  # host:port of the writable server the last good probe reached
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        """The server(s), for logs: the one last reached, else the configured list."""
        return self.server or self.pool.name

    def check(self) -> None:
        """Raise StoreUnavailable at once while the last probe found the store unwritable."""
        if not self.up:
            raise self.unavailable()

    def unavailable(self) -> StoreUnavailable:
        """The error a call fails with while the store cannot take writes."""
        return StoreUnavailable(UNAVAILABLE_MESSAGE, retry_after_seconds=self.retry_after_seconds)

    def probe(self) -> bool:
        """Ask a pooled connection whether its server takes writes (blocking, bounded by the
        timeout); record and return the answer."""
        with self._lock:
            deadline = time.monotonic() + self.timeout_seconds
            try:
                try:
                    server, read_only = self._ask(self.timeout_seconds)
                except psycopg.OperationalError:
                    # A lost connection: the others idle in the pool were probably lost with
                    # it (a restart, a failover). Test and replace them, then ask again.
                    self.pool.check()
                    server, read_only = self._ask(deadline - time.monotonic())
            except (psycopg.Error, PoolTimeout) as error:
                return self._down(one_line(str(error)))
            if read_only:
                self.pool.drain()
                return self._down(f"{server} is read-only (a standby, or a demoted primary)")
            if not self.up:
                log.warning("event store writable again (%s)", server)
            self.up = True
            self.server = server
            return True

    def _ask(self, timeout: float) -> tuple[str, bool]:
        # A pool timeout of 0 or less would fail at once: a last short wait instead.
        with self.pool.connection(timeout=max(timeout, MIN_POOL_WAIT_SECONDS)) as conn:
            row = conn.execute(WRITABLE_QUERY).fetchone()
            read_only = bool(row and row["read_only"])
            return f"{conn.info.host}:{conn.info.port}", read_only

    def _down(self, reason: str) -> bool:
        if self.up:
            log.warning("event store cannot take writes (%s): %s", self.where, reason)
        self.up = False
        return False

    def read_only_seen(self) -> None:
        """A write met a read-only server: drain the pool so the next connections find the
        writable primary."""
        self.pool.drain()

    def mark_down(self) -> None:
        """Record that the database stopped answering (a probe that ran out of time)."""
        if self.up:
            log.warning("event store did not answer the probe in time (%s)", self.where)
        self.up = False

    def close(self) -> None:
        """Nothing of its own to close: the probe borrows the pool's connections."""


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
    store unwritable; retry a dropped connection, or a server that turned read-only, while
    the budget lasts; then StoreUnavailable.

    A dropped connection fails at once and the pool discards it, so the retry follows
    without a pause (after a database restart every pooled connection fails once; the
    library's 0.2 s pause per attempt added seconds). A read-only server (SQLSTATE 25006:
    the connection reached a standby, or a primary demoted by a failover) drains the pool
    first, so the retry connects anew and `target_session_attrs=read-write` finds the
    primary. A pool timeout is not retried: the pool already waited the whole budget.
    """

    @functools.wraps(method)
    def call(self: G, /, *args: P.args, **kwargs: P.kwargs) -> T:
        availability = self.availability
        availability.check()
        deadline = time.monotonic() + budget_left(availability.timeout_seconds)
        attempt = 0
        while True:
            attempt += 1
            try:
                return method(self, *args, **kwargs)
            except StoreUnavailable:
                raise
            except (InterfaceError, OperationalError, InternalError) as error:
                read_only = is_read_only_error(error)
                if not read_only and isinstance(error, InternalError):
                    raise
                if read_only:
                    availability.read_only_seen()
                timed_out = isinstance(error.__cause__, PoolTimeout)
                if timed_out or attempt >= MAX_ATTEMPTS or time.monotonic() >= deadline:
                    log.warning("event store call %s failed after %d attempt(s) (%s): %s",
                                method.__name__, attempt, availability.where,
                                one_line(str(error)))
                    raise availability.unavailable() from error

    return call


def _unretried(function: Callable[P, T]) -> Callable[P, T]:
    """The library method without its own retry decorator (ten full waits): ours bounds it."""
    inner: Callable[P, T] = getattr(function, "__wrapped__", function)
    return inner


class ArrayParameter(list[Any]):
    """A list sent to PostgreSQL as the binary array `element[]`, its type known in advance.

    Sent as a plain list, every array parameter is inspected on every call (the types of its
    elements, the largest integer) to choose its PostgreSQL type, then written as text — a
    bytea element as escaped hex, searched by regular expressions: under load, about a tenth
    of the server's CPU per command went there. A connection set up by `send_typed_arrays`
    writes these lists in binary without looking at their elements.
    """

    element = ""


class UUIDArray(ArrayParameter):
    """`uuid[]`: stream ids."""

    element = "uuid"


class TextArray(ArrayParameter):
    """`text[]`: topics (and stream ids where the store keeps them as text)."""

    element = "text"


class BigintArray(ArrayParameter):
    """`bigint[]`: versions."""

    element = "int8"


class ByteaArray(ArrayParameter):
    """`bytea[]`: event states."""

    element = "bytea"


ID_ARRAYS: dict[str, type[ArrayParameter]] = {"uuid": UUIDArray, "text": TextArray}
_ARRAY_DUMPERS = {
    parameter: type(f"{parameter.__name__}Dumper", (ListBinaryDumper,), {
        "oid": psycopg.postgres.types[parameter.element].array_oid,
        "element_oid": psycopg.postgres.types[parameter.element].oid})
    for parameter in (UUIDArray, TextArray, BigintArray, ByteaArray)
}


def send_typed_arrays(conn: Connection[Any]) -> None:
    """Set up a connection to send the `ArrayParameter` lists with their fixed types.

    Per connection, as it opens: a connection copies psycopg's global adapters when it opens
    and would not see a dumper registered globally later.
    """
    for parameter, dumper in _ARRAY_DUMPERS.items():
        conn.adapters.register_dumper(parameter, dumper)


def statement_text(statement: Composable) -> str:
    """A composed statement as text, once: psycopg would otherwise compose it per call."""
    return statement.as_string()


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
    `IntegrityError`. Reads of one stream use statements composed once, not per call, and
    the append's arrays are sent with their types fixed in advance (`ArrayParameter`).

    Guards: an append may name streams it read but does not change, each with the version
    it read (`insert_events(..., guards={id: version})`). Under the same table lock the
    function checks that none of them moved on, and refuses the append as a conflict
    (`IntegrityError`, SQLSTATE 23505) if one did: a hand command decided on a cached table
    then costs no read of the table, and still never acts on a seat token reissued, or a
    table closed, by another replica in the meantime.
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
        self.guarded_append_function = f"fiftyk_append_guarded_{id_type}"
        # One primary-key probe per guard (a join on unnest() may scan the table).
        guard_check = (
            " FOR i IN 1 .. coalesce(array_length(guard_ids, 1), 0) LOOP"
            " IF EXISTS (SELECT 1 FROM {table} WHERE originator_id = guard_ids[i]"
            " AND originator_version > guard_versions[i]) THEN"
            " RAISE unique_violation USING MESSAGE ="
            " 'a stream this append was decided on has moved on';"
            " END IF;"
            " END LOOP;"
        )
        statements = []
        for name, guard_params, check in (
                (self.append_function, "", ""),
                (self.guarded_append_function,
                 ", guard_ids {id_type}[], guard_versions bigint[]", guard_check)):
            function = Identifier(name)
            self.sql_create_statements.append(SQL(
                "CREATE OR REPLACE FUNCTION {schema}.{function}(ids {id_type}[],"
                " versions bigint[], topics text[], states bytea[]" + guard_params + ")"
                " RETURNS SETOF bigint LANGUAGE plpgsql AS $BODY$"
                " BEGIN"
                " SET LOCAL lock_timeout = '{lock_timeout}s';"
                " LOCK TABLE {table} IN EXCLUSIVE MODE;"
                + check +
                " NOTIFY {channel};"
                " RETURN QUERY INSERT INTO {table} AS t"
                " (originator_id, originator_version, topic, state)"
                " SELECT * FROM unnest(ids, versions, topics, states)"
                " RETURNING notification_id;"
                " END; $BODY$"
            ).format(
                schema=schema, function=function, id_type=Identifier(id_type), table=table,
                lock_timeout=self.datastore.lock_timeout,
                channel=Identifier(self.channel_name),
            ))
            arguments = SQL(", ").join([SQL("%s")] * (6 if check else 4))
            statements.append(statement_text(
                SQL("SELECT * FROM {}.{}({})").format(schema, function, arguments)))
        self.append_statement, self.guarded_append_statement = statements
        self._ids = ID_ARRAYS[id_type]
        select = SQL("SELECT * FROM {} WHERE originator_id = %s").format(table)
        self._selects = {
            (gt, lte, desc, limit): statement_text(
                select
                + (SQL(" AND originator_version > %s") if gt else SQL(""))
                + (SQL(" AND originator_version <= %s") if lte else SQL(""))
                + SQL(" ORDER BY originator_version")
                + (SQL(" DESC") if desc else SQL(" ASC"))
                + (SQL(" LIMIT %s") if limit else SQL("")))
            for gt in (False, True) for lte in (False, True) for desc in (False, True)
            for limit in (False, True)
        }

    @_bounded
    def insert_events(self, /, stored_events: Sequence[StoredEvent], *,
                      guards: Mapping[UUID, int] | None = None,
                      **kwargs: Any) -> Sequence[int] | None:
        """Append the events in one statement, unless a guarded stream moved past the
        version it was read at; return their feed positions."""
        if not stored_events:
            return []
        params: tuple[ArrayParameter, ...] = (
            self._ids(e.originator_id for e in stored_events),
            BigintArray(e.originator_version for e in stored_events),
            TextArray(e.topic for e in stored_events),
            ByteaArray(e.state for e in stored_events),
        )
        statement, function = self.append_statement, self.append_function
        if guards:
            params += (self._ids(guards), BigintArray(guards.values()))
            statement, function = self.guarded_append_statement, self.guarded_append_function
        with self.datastore.get_connection() as conn, conn.cursor() as curs:
            curs.execute(statement, params, prepare=True)
            return [row[function] for row in curs.fetchall()]

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
    """The library's PostgreSQL factory with the referee's recorders — one-call appends for
    the events, every recorder bounded by the store timeout — and the referee's pool (whose
    connections send the appends' arrays typed in advance: `send_typed_arrays`).

    The library connects with five discrete settings (one host, one port); the pool here
    connects with the whole libpq connection string of the configured database (every host
    of a cluster, `target_session_attrs`, TLS settings) and reconnects at least every
    `FIFTYK_POSTGRES_RECONNECT_SECONDS` (`FailoverPool`). Every other pool setting is the
    library's, read from the same environment.
    """

    aggregate_recorder_class = BoundedAggregateRecorder
    application_recorder_class = OneCallPostgresRecorder

    def __init__(self, env: Any) -> None:
        super().__init__(env)
        conninfo = self.env.get(CONNINFO_ENV)
        if not conninfo:
            raise OSError(f"the referee's PostgreSQL connection string is not in {CONNINFO_ENV}")
        reconnect = float(self.env.get(RECONNECT_ENV) or DEFAULT_RECONNECT_SECONDS)
        stock = self.datastore.pool
        after_connect = self.datastore.after_connect_func()

        def configure(conn: Connection[DictRow]) -> None:
            after_connect(conn)
            send_typed_arrays(conn)

        self.datastore.pool = FailoverPool(
            conninfo,
            name=Database("postgresql", params=tuple(
                (key, str(value)) for key, value in conninfo_to_dict(conninfo).items())
            ).addresses,
            connection_class=Connection[DictRow],
            kwargs={"row_factory": dict_row},
            min_size=stock.min_size,
            max_size=stock.max_size,
            open=False,
            configure=configure,
            timeout=stock.timeout,
            max_waiting=stock.max_waiting,
            max_lifetime=stock.max_lifetime,
            reconnect_seconds=reconnect,
        )


class GuardedSQLiteRecorder(SQLiteApplicationRecorder):
    """The library's SQLite recorder, with the PostgreSQL recorder's guards: the append is
    refused as a conflict when a guarded stream moved past the version it was read at.

    The check runs after the inserts, in the same transaction, so the database's write lock
    is held; a guarded stream is never one the append itself writes (the runner leaves
    those out), so the append cannot trip its own guard.
    """

    def _insert_events(self, c: SQLiteCursor, stored_events: Sequence[StoredEvent], *,
                       guards: Mapping[UUID, int] | None = None,
                       **kwargs: Any) -> Sequence[int] | None:
        positions = super()._insert_events(c, stored_events, **kwargs)
        for stream, version in (guards or {}).items():
            c.execute(f"SELECT 1 FROM {self.events_table_name}"
                      " WHERE originator_id = ? AND originator_version > ? LIMIT 1",
                      (stream.hex, version))
            if c.fetchone() is not None:
                raise IntegrityError(f"stream {stream} moved on past version {version}")
        return positions


class DatabaseUnreachable(RuntimeError):
    """PostgreSQL did not answer at start within the configured wait; the message is one line
    naming the database (never its password)."""


def describe(database: Database) -> str:
    """`PostgreSQL database NAME on HOST:PORT[,HOST:PORT] as USER`: for messages, without the
    password."""
    user = database.user or "the default user"
    return f"PostgreSQL database {database.dbname} on {database.addresses} as {user}"


def connection_params(database: Database, timeout_seconds: int) -> dict[str, str]:
    """The libpq parameters the referee connects with: the configured ones, plus bounds on a
    dead or silent server where the configuration sets none.

    `connect_timeout` is per host: a primary that vanished (no answer at all) costs at most
    that before libpq tries the next host. `tcp_user_timeout` and the keepalives end a
    connection whose server went silent mid-statement (a partition, a crashed machine),
    which TCP alone would keep for many minutes.
    """
    timeout = max(MIN_CONNECT_TIMEOUT_SECONDS, timeout_seconds)
    defaults = {
        "connect_timeout": str(min(timeout, MAX_CONNECT_TIMEOUT_SECONDS)),
        "tcp_user_timeout": str(timeout * MS_PER_SECOND),
        "keepalives": "1",
        "keepalives_idle": str(KEEPALIVE_IDLE_SECONDS),
        "keepalives_interval": str(KEEPALIVE_INTERVAL_SECONDS),
        "keepalives_count": str(KEEPALIVE_COUNT),
        "application_name": APPLICATION_NAME,
    }
    return {**defaults, **dict(database.params)}


def wait_for_database(database: Database, *, wait_seconds: float, timeout_seconds: int,
                      poll_seconds: float = 1.0) -> None:
    """Return once PostgreSQL answers `SELECT 1`; DatabaseUnreachable after `wait_seconds`.

    A database that is still starting (a compose or Kubernetes rollout) gets the whole wait;
    SQLite needs none.
    """
    if database.kind != "postgresql":
        return
    conninfo = make_conninfo("", **connection_params(database, timeout_seconds))
    deadline = time.monotonic() + wait_seconds
    attempts = 0
    while True:
        attempts += 1
        try:
            with psycopg.connect(conninfo, autocommit=True) as conn:
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
    reconnect_seconds: float = DEFAULT_RECONNECT_SECONDS,
) -> dict[str, str]:
    """The `eventsourcing` environment for a database (`Config.database`) and the settings."""
    if pool_size < 1:
        raise ValueError("the connection pool needs at least one connection")
    if reconnect_seconds <= 0:
        raise ValueError("the reconnect interval must be positive")
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
            # The library insists on these five; its pool is replaced by one connecting
            # with the whole connection string (RefereePostgresFactory).
            "POSTGRES_DBNAME": database.dbname,
            "POSTGRES_HOST": database.host,
            "POSTGRES_PORT": database.port,
            "POSTGRES_USER": database.user,
            "POSTGRES_PASSWORD": database.password,
            CONNINFO_ENV: make_conninfo("", **connection_params(database, timeout_seconds)),
            RECONNECT_ENV: str(reconnect_seconds),
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
        "APPLICATION_RECORDER_TOPIC": get_topic(GuardedSQLiteRecorder),
        "SQLITE_DBNAME": str(path),
        "SQLITE_LOCK_TIMEOUT": str(lock_seconds),
    })
    return env


__all__ = [
    "DEFAULT_CACHE_SIZE",
    "DEFAULT_LOCK_TIMEOUT_MS",
    "DEFAULT_POOL_SIZE",
    "DEFAULT_RECONNECT_SECONDS",
    "BoundedAggregateRecorder",
    "DatabaseUnreachable",
    "FailoverPool",
    "GuardedSQLiteRecorder",
    "OneCallPostgresRecorder",
    "RefereePostgresFactory",
    "StoreAvailability",
    "availability_of",
    "budget_left",
    "connection_params",
    "describe",
    "is_read_only_error",
    "lock_timeout_seconds",
    "persistence_env",
    "store_budget",
    "wait_for_database",
]
