"""The referee's queries: loading tables and hands, and what they show.

Reads go through the aggregate cache (`cache.py`): a table or hand by id (NOT_FOUND when
there is none), a hand's view for a viewer and a seat's legal actions, a table's score
sheet, a hand's history and its state at any version (dispute replay), a table rebuilt from
its events alone, and the global feed. `Queries` is the root of the referee's parts
(`application.py` composes them): it declares what the wiring gives every part.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from time import perf_counter
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application

from fiftyk_referee.domain.aggregate import Aggregate
from fiftyk_referee.domain.errors import Reason, RuleError, shown
from fiftyk_referee.domain.game import GameHand, GameResult, GameView, LegalActions, Observation
from fiftyk_referee.domain.games import game_of
from fiftyk_referee.domain.observer import AUDITOR, Viewer
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.cache import AggregateCache, replay
from fiftyk_referee.service.core.public_events import (
    PUBLIC_EVENTS,
    FeedPage,
    HistoryPage,
    feed_event,
)
from fiftyk_referee.service.core.runner import RunnerMetrics
from fiftyk_referee.service.errors import InvalidArgument, NotFound, ServiceReason

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1_000


class MetricsHook(RunnerMetrics, Protocol):
    """What the application reports to `service.ops.metrics.Metrics` (optional)."""

    def observe_rebuild(self, seconds: float) -> None:
        """Observe one rebuild's duration."""

    def hand_started(self, game: str, preset: str) -> None:
        """Count a hand dealt."""

    def hand_completed(self, game: str, preset: str) -> None:
        """Count a hand played to the end."""

    def observe(self, game: str, preset: str, observation: Observation) -> None:
        """Count one of a game's observations (tricks won, bombs played, ...)."""

    def integrity_checked(self, problems: int, hands: int) -> None:
        """Record one integrity audit: the problems found and the hands in the ledger."""


@dataclass(frozen=True)
class HandScoreRow:
    """One completed hand on a table's score sheet."""

    hand_id: str
    number: int
    game: str  # the name of the game: its converter at the edge reads `result`
    result: GameResult


@dataclass(frozen=True)
class ScoreSheet:
    """A table's completed hands and cumulative scores."""

    hands: list[HandScoreRow]
    totals: dict[str, Decimal]
    match_over: bool
    version: int


def parse_id(text: str | UUID, what: str) -> UUID:
    """A UUID from its text form, or InvalidArgument naming the field."""
    if isinstance(text, UUID):
        return text
    try:
        return UUID(str(text))
    except ValueError:
        raise InvalidArgument(ServiceReason.INVALID_ID,
                              f"{what} {shown(text)} is not a valid id") from None


class Queries(Application[UUID]):
    """Loading aggregates and reading them; what every part of the referee builds on."""

    cache: AggregateCache
    metrics: MetricsHook | None

    def _load(self, aggregate_id: str | UUID, reason: ServiceReason, what: str, *,
              version: int | None = None) -> Aggregate:
        uid = parse_id(aggregate_id, f"{what} id")
        try:
            return self.cache.get(uid, version)
        except AggregateNotFoundError:
            raise NotFound(reason, f"no {what} {uid}") from None

    def _load_table(self, table_id: str | UUID, *, version: int | None = None) -> Table:
        table = self._load(table_id, ServiceReason.TABLE_NOT_FOUND, "table", version=version)
        if not isinstance(table, Table):
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, f"no table {table_id}")
        return table

    def _load_hand(self, hand_id: str | UUID, *, version: int | None = None) -> GameHand:
        hand = self._load(hand_id, ServiceReason.HAND_NOT_FOUND, "hand", version=version)
        try:
            game_of(hand)
        except RuleError:
            raise NotFound(ServiceReason.HAND_NOT_FOUND, f"no hand {hand_id}") from None
        return hand  # type: ignore[return-value]  # game_of checked it is a game's hand

    def get_table(self, table_id: str | UUID) -> Table:
        """The table's current state."""
        return self._load_table(table_id)

    def get_hand(self, hand_id: str | UUID, table_id: str | UUID | None = None) -> GameHand:
        """A hand's current state (of the given table, when one is named)."""
        hand = self._load_hand(hand_id)
        if table_id is not None and hand.table_id != str(parse_id(table_id, "table id")):
            raise NotFound(ServiceReason.HAND_NOT_FOUND,
                           f"hand {hand.id} is not a hand of table {table_id}")
        return hand

    def _hand_of(self, table_id: str | UUID, hand_id: str | UUID | None,
                 *, current_only: bool = False) -> GameHand:
        """The named hand of a table, or the table's current (else last) hand."""
        if hand_id:
            return self.get_hand(hand_id, table_id)
        table = self.get_table(table_id)
        chosen = table.current_hand or (None if current_only else
                                        (table.hand_ids[-1] if table.hand_ids else None))
        if chosen is None:
            raise RuleError(Reason.NO_HAND_IN_PROGRESS, "no hand is being played at this table")
        return self.get_hand(chosen, table.id)

    def legal_actions(self, table_id: str | UUID, hand_id: str | UUID | None,
                      seat: int, limit: int | None = None) -> tuple[LegalActions, int]:
        """What a seat may do now (nothing when it is not its turn), and the hand's version."""
        hand = self._hand_of(table_id, hand_id)
        if not 0 <= seat < hand.players:
            raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{hand.players - 1}")
        return hand.legal_actions(seat, limit), hand.version

    def hand_view(self, table_id: str | UUID, hand_id: str | UUID | None,
                  viewer: Viewer) -> GameView:
        """A hand as `viewer` may see it (the current, else the last hand when unnamed)."""
        return self._hand_of(table_id, hand_id).view(viewer)

    def scores(self, table_id: str | UUID) -> ScoreSheet:
        """The table's completed hands with their results, and the cumulative scores."""
        table = self.get_table(table_id)
        rows: list[HandScoreRow] = []
        for hand_id in table.hand_ids:
            if hand_id == table.current_hand:
                continue
            hand = self.get_hand(hand_id)
            result = hand.view(AUDITOR).result
            if hand.is_over and result is not None:
                rows.append(HandScoreRow(hand_id, hand.number, table.game_name, result))
        return ScoreSheet(hands=rows, totals=dict(table.scores), match_over=table.match_over,
                          version=table.version)

    def hand_history(self, hand_id: str | UUID, *, after_version: int = 0,
                     limit: int = DEFAULT_PAGE_SIZE) -> HistoryPage:
        """A hand's events in version order, each with its public name (no viewer yet)."""
        hand = self.get_hand(hand_id)
        size = _page_size(limit)
        selected = list(self.events.get(hand.id, gt=after_version or None, limit=size + 1))
        records = [record for e in selected[:size] if (record := feed_event(e)) is not None]
        return HistoryPage(events=records, has_more=len(selected) > size)

    def hand_at(self, hand_id: str | UUID, version: int) -> GameHand:
        """A hand as it stood right after event `version` (dispute replay)."""
        current = self.get_hand(hand_id)
        if not 1 <= version <= current.version:
            raise NotFound(ServiceReason.VERSION_NOT_FOUND,
                           f"hand {current.id} has versions 1..{current.version}, not {version}")
        started = perf_counter()
        hand = self._load_hand(current.id, version=version)
        if self.metrics is not None:
            self.metrics.observe_rebuild(perf_counter() - started)
        return hand

    def export_transcript(self, hand_id: str | UUID) -> dict[str, Any]:
        """A stored hand as its game's transcript."""
        hand = self.get_hand(hand_id)
        return game_of(hand).export_transcript(hand)

    def rebuild_table(self, table_id: str | UUID) -> Table:
        """The table replayed from its stored events alone: no snapshot, no cache."""
        uid = parse_id(table_id, "table id")
        started = perf_counter()
        table = replay(None, self.events.get(uid))
        if not isinstance(table, Table):
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, f"no table {uid}")
        if self.metrics is not None:
            self.metrics.observe_rebuild(perf_counter() - started)
        return table

    def rebuild_scores(self, table_id: str | UUID) -> dict[str, Decimal]:
        """A table's cumulative scores recomputed from its events alone."""
        return dict(self.rebuild_table(table_id).scores)

    def read_events(self, after_position: int = 0, limit: int = DEFAULT_PAGE_SIZE,
                    names: Sequence[str] = ()) -> FeedPage:
        """Published events of every aggregate in the order they were recorded, after a
        position; `names` keeps only events with these public names (all when empty)."""
        size = _page_size(limit)
        notifications = self.recorder.select_notifications(
            start=after_position or None, limit=size + 1, topics=PUBLIC_EVENTS.topics(names),
            inclusive_of_start=False,
        )
        events = []
        for notification in notifications[:size]:
            event = feed_event(self.mapper.to_domain_event(notification), notification.id)
            if event is not None:  # pragma: no branch - the topics select published events
                events.append(event)
        last = events[-1].position if events else after_position
        return FeedPage(events=events, last_position=last, has_more=len(notifications) > size)

    def head_position(self) -> int:
        """The position of the last event recorded (0 when the store is empty)."""
        return self.recorder.max_notification_id() or 0


def _page_size(limit: int) -> int:
    if limit <= 0:
        return DEFAULT_PAGE_SIZE
    return min(limit, MAX_PAGE_SIZE)


__all__ = ["DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE", "HandScoreRow", "MetricsHook", "Queries",
           "ScoreSheet", "parse_id"]
