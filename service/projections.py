"""The standings read model: per player, hands played, hands won and total score, all tables.

Built with the library's projection support (`eventsourcing.projection.Projection` writing
to a materialised view that is a `TrackingRecorder`): every change to the view is written in
the same database transaction as the tracking record of the feed position it came from, and
the tracking upsert refuses a position that is not past the recorded one. So each event is
applied exactly once, even across crashes or with two projectors on one database (the loser
of such a race rolls back and moves on).

Player ids are not in the hand events, so the view follows seat occupancy from the table
events: `SeatTaken`/`SeatLeft` keep a seat map, `HandStarted` copies the table's seats for the
hand, and the hand's `HandEnded` result (per-seat scores and the winner) is credited to the
players who held those seats. A player's hand score is their seat's score (in team games,
their team's score). Seats cannot change while a hand is played, so the copy is exact.

`StandingsProjector` drives the projection by reading the global feed (the notification log)
from the view's tracked position. It polls rather than using the library's LISTEN/NOTIFY
subscription, which the SQLite recorder does not offer; the PostgreSQL recorder's table lock
makes commit order equal feed order, so a poller never skips an event that commits late.
It survives restarts (the position is stored with the view), catches up after downtime
(`catch_up`), and can be rebuilt from scratch (`rebuild`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

from eventsourcing.persistence import (
    InfrastructureFactory,
    IntegrityError,
    OperationalError,
    Tracking,
    TrackingRecorder,
)
from eventsourcing.postgres import PostgresDatastore, PostgresFactory, PostgresTrackingRecorder
from eventsourcing.projection import Projection
from eventsourcing.sqlite import SQLiteCursor, SQLiteDatastore, SQLiteTrackingRecorder
from eventsourcing.utils import Environment
from psycopg.sql import SQL, Identifier

from fiftyk_referee.domain.fiftyk.events import HandEnded
from fiftyk_referee.domain.table_events import HandStarted, SeatLeft, SeatTaken
from fiftyk_referee.service.application import Referee
from fiftyk_referee.service.errors import Unavailable
from fiftyk_referee.service.public_events import PUBLIC_EVENTS

# The public events that move the standings, and the stored topics (old versions' too).
FOLLOWED = (SeatTaken.NAME, SeatLeft.NAME, HandStarted.NAME, HandEnded.NAME)
PROJECTION_NAME = "standings"
DEFAULT_BATCH_SIZE = 500
DEFAULT_POLL_SECONDS = 0.5
log = logging.getLogger(__name__)
# The projection writes from one thread: a small pool of its own is enough.
PROJECTION_POOL = {"POSTGRES_POOL_SIZE": "1", "POSTGRES_MAX_OVERFLOW": "1"}


@dataclass(frozen=True)
class Standing:
    """One player's record across all tables."""

    player_id: str
    hands_played: int
    hands_won: int
    total_score: Decimal


@dataclass(frozen=True)
class SeatResult:
    """What one seat got from a finished hand."""

    seat: int
    score: Decimal
    won: bool


def seat_results(result: Mapping[str, Any]) -> list[SeatResult]:
    """Per-seat scores and wins from a HandEnded result (docs/transcript.md)."""
    winner = result.get("winner") or {}
    winners: set[int] = set()
    if winner.get("team") is not None:
        winners = set(result["teams"][winner["team"]]["seats"])
    elif winner.get("seat") is not None:
        winners = {winner["seat"]}
    return [
        SeatResult(seat=entry["seat"], score=Decimal(str(entry["score"])),
                   won=entry["seat"] in winners)
        for entry in result["seats"]
    ]


class StandingsView(TrackingRecorder, ABC):
    """The materialised standings; every write also records its feed position."""

    @abstractmethod
    def seat_changed(self, table_id: str, seat: int, player_id: str | None,
                     tracking: Tracking) -> None:
        """A seat was taken (player id) or left (None)."""

    @abstractmethod
    def hand_started(self, table_id: str, hand_id: str, tracking: Tracking) -> None:
        """Copy the table's seats for a new hand."""

    @abstractmethod
    def hand_ended(self, hand_id: str, results: Sequence[SeatResult],
                   tracking: Tracking) -> None:
        """Credit a finished hand to the players who held its seats."""

    @abstractmethod
    def standings(self) -> list[Standing]:
        """Every player, best total score first."""

    @abstractmethod
    def standing(self, player_id: str) -> Standing | None:
        """One player's record, if they finished a hand."""

    @abstractmethod
    def reset(self, application_name: str) -> None:
        """Forget everything, including the tracked position (for a rebuild)."""


def _ranked(rows: Sequence[Standing]) -> list[Standing]:
    return sorted(rows, key=lambda s: (-s.total_score, -s.hands_won, s.player_id))


class SQLiteStandingsView(SQLiteTrackingRecorder, StandingsView):
    """The standings in SQLite, next to the library's `tracking` table.

    Each transaction writes its tracking record first: a write as the first statement
    waits for SQLite's write lock (busy timeout), while a transaction that read first and
    then writes fails at once if another connection committed in between.
    """

    def __init__(self, datastore: SQLiteDatastore, **kwargs: Any) -> None:
        super().__init__(datastore, **kwargs)

    def construct_create_table_statements(self) -> list[str]:
        """The library's tracking table plus the standings tables."""
        return [
            *super().construct_create_table_statements(),
            "CREATE TABLE IF NOT EXISTS standings_players (player_id TEXT PRIMARY KEY,"
            " hands_played INTEGER NOT NULL, hands_won INTEGER NOT NULL,"
            " total_score TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS standings_seats (table_id TEXT NOT NULL,"
            " seat INTEGER NOT NULL, player_id TEXT NOT NULL, PRIMARY KEY (table_id, seat))",
            "CREATE TABLE IF NOT EXISTS standings_hands (hand_id TEXT PRIMARY KEY,"
            " players TEXT NOT NULL)",
        ]

    def seat_changed(self, table_id: str, seat: int, player_id: str | None,
                     tracking: Tracking) -> None:
        """A seat was taken or left."""
        with self.datastore.transaction(commit=True) as c:
            self._insert_tracking(c, tracking)  # first: takes the write lock
            if player_id is None:
                c.execute("DELETE FROM standings_seats WHERE table_id=? AND seat=?",
                          (table_id, seat))
            else:
                c.execute("INSERT OR REPLACE INTO standings_seats VALUES (?, ?, ?)",
                          (table_id, seat, player_id))

    def hand_started(self, table_id: str, hand_id: str, tracking: Tracking) -> None:
        """Copy the table's seats for the hand."""
        with self.datastore.transaction(commit=True) as c:
            self._insert_tracking(c, tracking)  # first: takes the write lock
            c.execute("SELECT seat, player_id FROM standings_seats WHERE table_id=?",
                      (table_id,))
            players = {str(row[0]): row[1] for row in c.fetchall()}
            c.execute("INSERT OR REPLACE INTO standings_hands VALUES (?, ?)",
                      (hand_id, json.dumps(players)))

    def hand_ended(self, hand_id: str, results: Sequence[SeatResult],
                   tracking: Tracking) -> None:
        """Credit the hand's seats to their players."""
        with self.datastore.transaction(commit=True) as c:
            self._insert_tracking(c, tracking)  # first: takes the write lock
            c.execute("SELECT players FROM standings_hands WHERE hand_id=?", (hand_id,))
            row = c.fetchone()
            players: dict[str, str] = json.loads(row[0]) if row is not None else {}
            for result in results:
                player = players.get(str(result.seat))
                if player is not None:
                    self._credit(c, player, result)
            c.execute("DELETE FROM standings_hands WHERE hand_id=?", (hand_id,))

    @staticmethod
    def _credit(c: SQLiteCursor, player_id: str, result: SeatResult) -> None:
        c.execute("SELECT hands_played, hands_won, total_score FROM standings_players"
                  " WHERE player_id=?", (player_id,))
        row = c.fetchone()
        played, won, total = (row[0], row[1], Decimal(row[2])) if row else (0, 0, Decimal(0))
        c.execute("INSERT OR REPLACE INTO standings_players VALUES (?, ?, ?, ?)",
                  (player_id, played + 1, won + int(result.won), str(total + result.score)))

    def standings(self) -> list[Standing]:
        """Every player, best total score first."""
        with self.datastore.transaction(commit=False) as c:
            c.execute("SELECT * FROM standings_players")
            return _ranked([self._standing(row) for row in c.fetchall()])

    def standing(self, player_id: str) -> Standing | None:
        """One player's record."""
        with self.datastore.transaction(commit=False) as c:
            c.execute("SELECT * FROM standings_players WHERE player_id=?", (player_id,))
            row = c.fetchone()
            return self._standing(row) if row is not None else None

    @staticmethod
    def _standing(row: Any) -> Standing:
        return Standing(player_id=row["player_id"], hands_played=row["hands_played"],
                        hands_won=row["hands_won"], total_score=Decimal(row["total_score"]))

    def reset(self, application_name: str) -> None:
        """Forget everything, including the tracked position."""
        with self.datastore.transaction(commit=True) as c:
            for table in ("standings_players", "standings_seats", "standings_hands"):
                c.execute(f"DELETE FROM {table}")
            c.execute("DELETE FROM tracking WHERE application_name=?", (application_name,))


class PostgresStandingsView(PostgresTrackingRecorder, StandingsView):
    """The standings in PostgreSQL, next to the projection's tracking table."""

    def __init__(self, datastore: PostgresDatastore, *,
                 tracking_table_name: str = f"{PROJECTION_NAME}_tracking",
                 **kwargs: Any) -> None:
        super().__init__(datastore, tracking_table_name=tracking_table_name, **kwargs)
        schema = Identifier(self.datastore.schema)
        self.players_table = SQL("{}.{}").format(schema, Identifier("standings_players"))
        self.seats_table = SQL("{}.{}").format(schema, Identifier("standings_seats"))
        self.hands_table = SQL("{}.{}").format(schema, Identifier("standings_hands"))
        self.tracking_table = SQL("{}.{}").format(schema, Identifier(self.tracking_table_name))
        self.sql_create_statements.extend([
            SQL("CREATE TABLE IF NOT EXISTS {} (player_id text PRIMARY KEY,"
                " hands_played bigint NOT NULL, hands_won bigint NOT NULL,"
                " total_score numeric NOT NULL)").format(self.players_table),
            SQL("CREATE TABLE IF NOT EXISTS {} (table_id text NOT NULL, seat int NOT NULL,"
                " player_id text NOT NULL, PRIMARY KEY (table_id, seat))"
                ).format(self.seats_table),
            SQL("CREATE TABLE IF NOT EXISTS {} (hand_id text PRIMARY KEY,"
                " players jsonb NOT NULL)").format(self.hands_table),
        ])

    def seat_changed(self, table_id: str, seat: int, player_id: str | None,
                     tracking: Tracking) -> None:
        """A seat was taken or left."""
        with self.datastore.transaction(commit=True) as curs:
            self._insert_tracking(curs, tracking)  # first: takes the write lock
            if player_id is None:
                curs.execute(SQL("DELETE FROM {} WHERE table_id=%s AND seat=%s"
                                 ).format(self.seats_table), (table_id, seat))
            else:
                curs.execute(SQL("INSERT INTO {} VALUES (%s, %s, %s) ON CONFLICT"
                                 " (table_id, seat) DO UPDATE SET player_id=EXCLUDED.player_id"
                                 ).format(self.seats_table), (table_id, seat, player_id))

    def hand_started(self, table_id: str, hand_id: str, tracking: Tracking) -> None:
        """Copy the table's seats for the hand."""
        with self.datastore.transaction(commit=True) as curs:
            self._insert_tracking(curs, tracking)  # first: takes the write lock
            curs.execute(SQL("SELECT seat, player_id FROM {} WHERE table_id=%s"
                             ).format(self.seats_table), (table_id,))
            players = {str(row["seat"]): row["player_id"] for row in curs.fetchall()}
            curs.execute(SQL("INSERT INTO {} VALUES (%s, %s) ON CONFLICT (hand_id)"
                             " DO UPDATE SET players=EXCLUDED.players").format(self.hands_table),
                         (hand_id, json.dumps(players)))

    def hand_ended(self, hand_id: str, results: Sequence[SeatResult],
                   tracking: Tracking) -> None:
        """Credit the hand's seats to their players."""
        with self.datastore.transaction(commit=True) as curs:
            self._insert_tracking(curs, tracking)  # first: takes the write lock
            curs.execute(SQL("SELECT players FROM {} WHERE hand_id=%s").format(self.hands_table),
                         (hand_id,))
            row = curs.fetchone()
            players: dict[str, str] = dict(row["players"]) if row is not None else {}
            for result in results:
                player = players.get(str(result.seat))
                if player is None:
                    continue
                curs.execute(
                    SQL("INSERT INTO {0} VALUES (%s, 1, %s, %s) ON CONFLICT (player_id) DO UPDATE"
                        " SET hands_played={0}.hands_played+1,"
                        " hands_won={0}.hands_won+EXCLUDED.hands_won,"
                        " total_score={0}.total_score+EXCLUDED.total_score"
                        ).format(self.players_table),
                    (player, int(result.won), result.score),
                )
            curs.execute(SQL("DELETE FROM {} WHERE hand_id=%s").format(self.hands_table),
                         (hand_id,))

    def standings(self) -> list[Standing]:
        """Every player, best total score first."""
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(SQL("SELECT * FROM {}").format(self.players_table))
            return _ranked([self._standing(row) for row in curs.fetchall()])

    def standing(self, player_id: str) -> Standing | None:
        """One player's record."""
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(SQL("SELECT * FROM {} WHERE player_id=%s").format(self.players_table),
                         (player_id,))
            row = curs.fetchone()
            return self._standing(row) if row is not None else None

    @staticmethod
    def _standing(row: Mapping[str, Any]) -> Standing:
        return Standing(player_id=row["player_id"], hands_played=int(row["hands_played"]),
                        hands_won=int(row["hands_won"]),
                        total_score=Decimal(row["total_score"]))

    def reset(self, application_name: str) -> None:
        """Forget everything, including the tracked position."""
        with self.datastore.transaction(commit=True) as curs:
            for table in (self.players_table, self.seats_table, self.hands_table):
                curs.execute(SQL("DELETE FROM {}").format(table))
            curs.execute(SQL("DELETE FROM {} WHERE application_name=%s"
                             ).format(self.tracking_table), (application_name,))


class StandingsProjection(Projection[StandingsView]):
    """Applies the table and hand events that move the standings."""

    name = PROJECTION_NAME
    topics = tuple(PUBLIC_EVENTS.topics(FOLLOWED))

    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        """Apply one event and record its position, atomically."""
        name = PUBLIC_EVENTS.name_of(domain_event)
        source = str(domain_event.originator_id)
        if name == SeatTaken.NAME:
            self.view.seat_changed(source, domain_event.seat, domain_event.player_id, tracking)
        elif name == SeatLeft.NAME:
            self.view.seat_changed(source, domain_event.seat, None, tracking)
        elif name == HandStarted.NAME:
            self.view.hand_started(source, domain_event.hand_id, tracking)
        elif name == HandEnded.NAME:
            self.view.hand_ended(source, seat_results(domain_event.result), tracking)
        else:
            self.view.insert_tracking(tracking)


class LagHook(Protocol):
    """Where the projector reports how far behind the feed it is (`Metrics`)."""

    def set_projection_lag(self, events: int) -> None:
        """Set the lag in events."""


class StandingsProjector:
    """Keeps the standings view up to date from the application's global feed."""

    def __init__(self, app: Referee, *, metrics: LagHook | None = None,
                 batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self.app = app
        self.metrics = metrics
        self.batch_size = batch_size
        settings = {**dict(app.env), **PROJECTION_POOL}
        factory = InfrastructureFactory.construct(Environment(PROJECTION_NAME, settings))
        self._factory = factory
        view_class: type[StandingsView]
        if isinstance(factory, PostgresFactory):
            view_class = PostgresStandingsView
        else:
            view_class = SQLiteStandingsView
        view = factory.tracking_recorder(view_class)
        if not isinstance(view, StandingsView):  # pragma: no cover - the factory honours it
            raise TypeError(f"expected a standings view, got {type(view).__name__}")
        self.view: StandingsView = view
        self.projection = StandingsProjection(self.view)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None

    def position(self) -> int:
        """The feed position of the last event the view has processed."""
        return self.view.max_tracking_id(self.app.name) or 0

    def catch_up(self) -> int:
        """Process every feed event after the tracked position; return how many were applied.

        Only the events of `StandingsProjection.topics` are read; the position then moves to
        the feed head read at the start (every event up to it is committed: the recorders
        hand out positions in commit order), so an idle projector shows no lag.
        """
        applied = 0
        with self._lock:
            position = self.position()
            head = self.app.head_position()
            while position < head:
                notifications = self.app.recorder.select_notifications(
                    start=position, limit=self.batch_size, stop=head,
                    topics=self.projection.topics, inclusive_of_start=False,
                )
                for notification in notifications:
                    domain_event = self.app.mapper.to_domain_event(notification)
                    try:
                        self.projection.process_event(
                            domain_event, Tracking(self.app.name, notification.id))
                    except IntegrityError:
                        # Another projector recorded this position first: it is applied.
                        continue
                    applied += 1
                if len(notifications) < self.batch_size:
                    break
                position = notifications[-1].id
                self._report_lag(position)  # a long catch-up shows its lag as it goes
            if self.position() < head:
                with contextlib.suppress(IntegrityError):  # another projector moved past it
                    self.view.insert_tracking(Tracking(self.app.name, head))
            self._report_lag(head)
        return applied

    def _report_lag(self, position: int) -> None:
        if self.metrics is not None:
            self.metrics.set_projection_lag(max(0, self.app.head_position() - position))

    def rebuild(self) -> int:
        """Drop the view and rebuild it from the whole feed; return the events applied."""
        with self._lock:
            self.view.reset(self.app.name)
        return self.catch_up()

    def standings(self) -> list[Standing]:
        """Every player, best total score first."""
        return self.view.standings()

    def standing(self, player_id: str) -> Standing | None:
        """One player's record."""
        return self.view.standing(player_id)

    def start(self, poll_seconds: float = DEFAULT_POLL_SECONDS) -> None:
        """Follow the feed on a background thread until `stop`."""
        if self._thread is not None:
            raise RuntimeError("the standings projector is already running")
        self._stopping.clear()
        self._thread = threading.Thread(target=self._follow, args=(poll_seconds,),
                                        name="standings-projector", daemon=True)
        self._thread.start()

    def _follow(self, poll_seconds: float) -> None:
        try:
            while not self._stopping.is_set():
                try:
                    self.catch_up()
                except OperationalError:
                    # SQLite refuses a write that races another writer ("database is
                    # locked"); the failed event rolled back, so the next round redoes it.
                    log.warning("standings projector: store busy; retrying", exc_info=True)
                except Unavailable as error:  # the store is down: the next round redoes it
                    log.debug("standings projector: %s", error.message)
                self._stopping.wait(poll_seconds)
        except BaseException as error:  # kept for `stop` to re-raise: never lost silently
            self.error = error
            raise

    def stop(self) -> None:
        """Stop following the feed; re-raise an error the thread died of."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def close(self) -> None:
        """Stop and release the view's connections."""
        try:
            self.stop()
        finally:
            self._factory.close()


__all__ = [
    "FOLLOWED",
    "PostgresStandingsView",
    "SQLiteStandingsView",
    "SeatResult",
    "Standing",
    "StandingsProjection",
    "StandingsProjector",
    "StandingsView",
    "seat_results",
]
