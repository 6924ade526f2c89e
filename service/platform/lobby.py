"""The lobby: a read model of every table, for `ListTables`, kept from the global feed.

One row per table (`lobby_tables`: game, preset, name, seats, state, hands played, the hand
in progress, when it opened and when it or one of its hands last recorded an event) plus its
seated players (`lobby_seats`, for the player filter) and a map from hand to table
(`lobby_hands`, so a hand's events count as its table's activity). `Lobby.catch_up` reads the
feed after the position recorded in `process_positions` and applies a page of events in one
transaction with the new position (`service/platform/process_store.py`): each event is applied once,
also with several replicas on one PostgreSQL database, and the lobby survives restarts and
rebuilds from the whole feed when its tables are new.

Listing catches up first, so a listing reflects every command acknowledged before it
(`as_of_position`); a background thread (`LobbyFollower`) keeps it current in between, from
the events the feed hub has already read and decoded (it reads the store itself only for
what the hub's batches do not cover). Tables
are sorted by the feed position of their last event, most recent first, which is their
last activity; pages continue after the last position shown (keyset paging).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fiftyk_referee.domain.observer import SPECTATOR
from fiftyk_referee.domain.table import TABLE_STATES, table_state
from fiftyk_referee.domain.table_events import (
    HandRecorded,
    HandStarted,
    HandVoided,
    MatchEnded,
    SeatLeft,
    SeatReplaced,
    SeatTaken,
    TableClosed,
    TableOpened,
)
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.public_events import PUBLIC_EVENTS, FeedEvent, feed_event
from fiftyk_referee.service.errors import InvalidArgument, ServiceError, ServiceReason
from fiftyk_referee.service.platform.process_store import (
    STORE_ERRORS,
    ProcessStore,
    Statements,
    datastore_of,
)

PROCESS_NAME = "lobby"
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500
BATCH_SIZE = 500
DEFAULT_FOLLOW_SECONDS = 0.5
# Events offered by the feed hub and not applied yet, at most (beyond: read back later).
MAX_PENDING = 10 * BATCH_SIZE
log = logging.getLogger(__name__)

CREATE_STATEMENTS = (
    "CREATE TABLE IF NOT EXISTS lobby_tables (table_id TEXT PRIMARY KEY, game TEXT NOT NULL,"
    " preset TEXT NOT NULL, name TEXT NOT NULL, players INTEGER NOT NULL,"
    " seats TEXT NOT NULL, state TEXT NOT NULL, closed INTEGER NOT NULL,"
    " match_over INTEGER NOT NULL, hands_played INTEGER NOT NULL, current_hand TEXT,"
    " created_at TEXT NOT NULL, last_activity TEXT NOT NULL, last_position BIGINT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS lobby_tables_activity ON lobby_tables (last_position)",
    "CREATE TABLE IF NOT EXISTS lobby_seats (table_id TEXT NOT NULL, seat INTEGER NOT NULL,"
    " player_id TEXT NOT NULL, PRIMARY KEY (table_id, seat))",
    "CREATE INDEX IF NOT EXISTS lobby_seats_player ON lobby_seats (player_id)",
    "CREATE TABLE IF NOT EXISTS lobby_hands (hand_id TEXT PRIMARY KEY,"
    " table_id TEXT NOT NULL)",
)
_COLUMNS = ("table_id, game, preset, name, players, seats, state, closed, match_over,"
            " hands_played, current_hand, created_at, last_activity, last_position")


@dataclass
class LobbyTable:
    """One table as the lobby lists it."""

    table_id: str
    game: str
    preset: str
    name: str
    players: int
    seats: list[str | None]
    closed: bool
    match_over: bool
    hands_played: int
    current_hand: str | None
    created_at: datetime
    last_activity: datetime
    last_position: int

    @property
    def state(self) -> str:
        """`waiting`, `playing`, `finished` or `closed`."""
        return table_state(closed=self.closed, match_over=self.match_over,
                           playing=self.current_hand is not None)

    def row(self) -> tuple[Any, ...]:
        """The row's values, in `_COLUMNS` order."""
        return (self.table_id, self.game, self.preset, self.name, self.players,
                json.dumps(self.seats), self.state, int(self.closed), int(self.match_over),
                self.hands_played, self.current_hand, self.created_at.isoformat(),
                self.last_activity.isoformat(), self.last_position)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> LobbyTable:
        """A row read back."""
        return cls(table_id=row["table_id"], game=row["game"], preset=row["preset"],
                   name=row["name"], players=int(row["players"]),
                   seats=list(json.loads(row["seats"])), closed=bool(row["closed"]),
                   match_over=bool(row["match_over"]), hands_played=int(row["hands_played"]),
                   current_hand=row["current_hand"],
                   created_at=datetime.fromisoformat(row["created_at"]),
                   last_activity=datetime.fromisoformat(row["last_activity"]),
                   last_position=int(row["last_position"]))


@dataclass(frozen=True)
class TableQuery:
    """A ListTables filter and page."""

    game: str = ""
    preset: str = ""
    states: tuple[str, ...] = ()
    player_id: str = ""
    page_size: int = DEFAULT_PAGE_SIZE
    before_position: int | None = None  # from the page token


@dataclass(frozen=True)
class TablePage:
    """A page of the lobby."""

    tables: list[LobbyTable]
    next_before: int | None  # where the next page starts (None: this is the last)
    as_of_position: int


@dataclass
class _Batch:
    """The rows one batch of events touches, read once and written once."""

    statements: Statements
    tables: dict[str, LobbyTable | None] = field(default_factory=dict)
    hands: dict[str, str | None] = field(default_factory=dict)
    new_hands: dict[str, str] = field(default_factory=dict)

    def table(self, table_id: str) -> LobbyTable | None:
        if table_id not in self.tables:
            self.statements.execute(f"SELECT {_COLUMNS} FROM lobby_tables WHERE table_id=?",
                                    (table_id,))
            row = self.statements.fetchone()
            self.tables[table_id] = LobbyTable.from_row(row) if row is not None else None
        return self.tables[table_id]

    def table_of_hand(self, hand_id: str) -> str | None:
        if hand_id not in self.hands:
            self.statements.execute("SELECT table_id FROM lobby_hands WHERE hand_id=?",
                                    (hand_id,))
            row = self.statements.fetchone()
            self.hands[hand_id] = str(row["table_id"]) if row is not None else None
        return self.hands[hand_id]

    def write(self) -> None:
        placeholders = ", ".join("?" * len(_COLUMNS.split(",")))
        updates = ", ".join(f"{c.strip()}=excluded.{c.strip()}"
                            for c in _COLUMNS.split(",")[1:])
        for table in self.tables.values():
            if table is None:
                continue
            self.statements.execute(
                f"INSERT INTO lobby_tables ({_COLUMNS}) VALUES ({placeholders})"
                f" ON CONFLICT (table_id) DO UPDATE SET {updates}", table.row())
            self.statements.execute("DELETE FROM lobby_seats WHERE table_id=?",
                                    (table.table_id,))
            for seat, player in enumerate(table.seats):
                if player is not None:
                    self.statements.execute("INSERT INTO lobby_seats VALUES (?, ?, ?)",
                                            (table.table_id, seat, player))
        for hand_id, table_id in self.new_hands.items():
            self.statements.execute("INSERT INTO lobby_hands VALUES (?, ?)"
                                    " ON CONFLICT (hand_id) DO NOTHING", (hand_id, table_id))


def _apply(batch: _Batch, event: FeedEvent) -> None:
    """One feed event's change to the lobby."""
    public = event.public(SPECTATOR)
    if isinstance(public, TableOpened):
        batch.tables[event.aggregate_id] = LobbyTable(
            table_id=event.aggregate_id, game=public.game,
            preset=str(public.ruleset.get("preset", "")), name=public.table_name,
            players=public.players, seats=[None] * public.players, closed=False,
            match_over=False, hands_played=0, current_hand=None, created_at=event.timestamp,
            last_activity=event.timestamp, last_position=event.position)
        return
    table_id = batch.table_of_hand(event.aggregate_id) or event.aggregate_id
    table = batch.table(table_id)
    if table is None:  # a hand whose deal predates the lobby's own first table event
        return
    table.last_activity, table.last_position = event.timestamp, event.position
    if table_id != event.aggregate_id:
        return  # a hand's event: activity only
    if isinstance(public, SeatTaken | SeatReplaced):
        table.seats[public.seat] = public.player_id
    elif isinstance(public, SeatLeft):
        table.seats[public.seat] = None
    elif isinstance(public, HandStarted):
        table.current_hand = public.hand_id
        batch.hands[public.hand_id] = table_id
        batch.new_hands[public.hand_id] = table_id
    elif isinstance(public, HandRecorded):
        table.current_hand = None
        table.hands_played += 1
    elif isinstance(public, HandVoided):
        table.current_hand = None
    elif isinstance(public, MatchEnded):
        table.match_over = True
    elif isinstance(public, TableClosed):
        table.closed = True


def encode_page_token(before_position: int) -> str:
    """The opaque token of the page that starts below a feed position."""
    text = json.dumps({"before": before_position}, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_page_token(token: str) -> int | None:
    """The position a page token continues below (None for no token); INVALID_REQUEST if
    the token is not one this server handed out."""
    if not token:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (ValueError, binascii.Error):
        data = None
    before = data.get("before") if isinstance(data, dict) else None
    if not isinstance(before, int) or isinstance(before, bool) or before < 0:
        raise InvalidArgument(ServiceReason.INVALID_REQUEST,
                              "page_token is not a token a ListTables answer returned")
    return before


class Lobby:
    """The lobby read model over the referee's store."""

    def __init__(self, app: Referee, *, create: bool = True,
                 batch_size: int = BATCH_SIZE) -> None:
        self.app = app
        self.batch_size = batch_size
        self.store = ProcessStore(datastore_of(app), create_statements=CREATE_STATEMENTS,
                                  create=create)
        self._topics = PUBLIC_EVENTS.topics()
        self._lock = threading.Lock()

    def position(self) -> int:
        """The feed position the lobby reflects."""
        return self.store.position(PROCESS_NAME)

    def catch_up(self) -> int:
        """Apply every feed event recorded so far; return the lobby's position."""
        with self._lock:
            head = self.app.head_position()
            position = self.position()
            while position < head:
                position = self._batch(position, head)
            return position

    def apply(self, after: int, events: Sequence[FeedEvent]) -> int:
        """Apply feed events a caller already read and decoded (the feed hub's batches):
        `events` must be every published event after position `after`, in order. What the
        lobby lacks up to `after` is read from the store first; events it has applied are
        skipped. Returns the lobby's position."""
        with self._lock:
            position = self.position()
            while position < after:
                position = self._batch(position, after)
            while newer := [e for e in events if e.position > position][:self.batch_size]:
                position = self._write(position, newer, newer[-1].position)
            return position

    def _batch(self, seen: int, head: int) -> int:
        """Apply the events after `seen` (at most a batch, up to `head`); the new position."""
        notifications = self.app.recorder.select_notifications(
            start=seen, limit=self.batch_size, stop=head, topics=self._topics,
            inclusive_of_start=False)
        events = [e for n in notifications
                  if (e := feed_event(self.app.mapper.to_domain_event(n), n.id)) is not None]
        reached = notifications[-1].id if len(notifications) == self.batch_size else head
        return self._write(seen, events, reached)

    def _write(self, seen: int, events: Sequence[FeedEvent], reached: int) -> int:
        """Apply `events` (those after `seen`, up to `reached`) and move the position to
        `reached`, in one transaction; the position another replica claimed first if it
        moved on meanwhile."""
        with self.store.transaction() as statements:
            claimed = statements.claim_position(PROCESS_NAME)
            if claimed != seen:  # another replica applied them meanwhile
                return claimed
            batch = _Batch(statements)
            for event in events:
                _apply(batch, event)
            batch.write()
            statements.set_position(PROCESS_NAME, reached)
        return reached

    def list_tables(self, query: TableQuery) -> TablePage:
        """A page of tables matching `query`, most recently active first."""
        unknown = [s for s in query.states if s not in TABLE_STATES]
        if unknown:
            raise InvalidArgument(ServiceReason.INVALID_REQUEST, f"unknown state {unknown[0]!r}")
        as_of = self.catch_up()
        size = min(query.page_size, MAX_PAGE_SIZE) if query.page_size > 0 else DEFAULT_PAGE_SIZE
        where: list[str] = []
        parameters: list[Any] = []
        for column, value in (("game", query.game), ("preset", query.preset)):
            if value:
                where.append(f"{column}=?")
                parameters.append(value)
        if query.states:
            where.append(f"state IN ({', '.join('?' * len(query.states))})")
            parameters.extend(query.states)
        if query.player_id:
            where.append("table_id IN (SELECT table_id FROM lobby_seats WHERE player_id=?)")
            parameters.append(query.player_id)
        if query.before_position is not None:
            where.append("last_position < ?")
            parameters.append(query.before_position)
        sql = f"SELECT {_COLUMNS} FROM lobby_tables"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY last_position DESC LIMIT ?"
        parameters.append(size + 1)
        with self.store.transaction(commit=False) as statements:
            statements.execute(sql, parameters)
            rows = [LobbyTable.from_row(row) for row in statements.fetchall()]
        more = len(rows) > size
        rows = rows[:size]
        return TablePage(tables=rows, next_before=rows[-1].last_position if more else None,
                         as_of_position=as_of)


class LobbyFollower:
    """Keeps the lobby current on a background thread between listings, from the events the
    feed hub has already read and decoded (`offer`, its listener): the lobby reads the
    store itself only for what the hub's batches do not cover (the events before the hub
    started, a backlog larger than `max_pending`, or a batch a store error lost)."""

    def __init__(self, lobby: Lobby, after: int, *,
                 poll_seconds: float = DEFAULT_FOLLOW_SECONDS,
                 max_pending: int = MAX_PENDING) -> None:
        """`after`: the hub's position when `offer` starts to receive its batches."""
        self.lobby = lobby
        self.poll_seconds = poll_seconds
        self.max_pending = max_pending
        self._after = after  # every event after it up to the pending ones is offered
        self._pending: list[FeedEvent] = []
        self._guard = threading.Lock()
        self._offered = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def offer(self, events: list[FeedEvent]) -> None:
        """The hub's next batch (called on the event loop: only a hand-over)."""
        with self._guard:
            self._pending.extend(events)
            excess = len(self._pending) - self.max_pending
            if excess > 0:  # the oldest ones are read back from the store instead
                self._after = self._pending[excess - 1].position
                del self._pending[:excess]
        self._offered.set()

    def _take(self) -> tuple[int, list[FeedEvent]]:
        with self._guard:
            after, events = self._after, self._pending
            self._pending = []
            if events:
                self._after = events[-1].position
            self._offered.clear()
        return after, events

    def start(self) -> None:
        """Follow the feed until `stop`."""
        self._thread = threading.Thread(target=self._follow, name="lobby", daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        retry = True  # the first round catches up with what was written before the hub
        while not self._stopping.is_set():
            if not retry:
                self._offered.wait()  # `stop` sets it too
                if self._stopping.is_set():
                    return
            after, events = self._take()
            try:
                self.lobby.apply(after, events)
                retry = False
            except STORE_ERRORS as error:  # the store is down or busy: read them back
                log.warning("lobby: the store did not answer (%s); retrying", error)
                retry = True
            except ServiceError as error:  # e.g. STORE_UNAVAILABLE from the bounded recorder
                log.warning("lobby: %s; retrying", error.message)
                retry = True
            # One transaction a round at most, however many batches the hub hands over
            # meanwhile (under load it hands one over after nearly every command).
            self._stopping.wait(self.poll_seconds)

    def stop(self) -> None:
        """Stop following."""
        self._stopping.set()
        self._offered.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def states_of(names: Iterable[str]) -> tuple[str, ...]:
    """Lobby state names, deduplicated in order."""
    return tuple(dict.fromkeys(names))


__all__ = [
    "DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "Lobby", "LobbyFollower", "LobbyTable", "TablePage",
    "TableQuery", "decode_page_token", "encode_page_token", "states_of",
]

