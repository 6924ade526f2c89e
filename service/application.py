"""The referee's use cases over the event store (`eventsourcing.application.Application`).

Commands load aggregates from the repository, let the domain validate and decide, and save
every aggregate a command changed in ONE `save(...)` call, which the recorder writes in one
database transaction: a hand that ends is recorded on its table (`Table.record_hand`) in the
same transaction as the hand's last events.

Concurrency (optimistic, per aggregate stream). Every stored event has a unique
(aggregate id, version) key, so of two commands racing on the same hand or table exactly
one append succeeds; the loser's whole transaction is rolled back (`IntegrityError`).
Decision: the loser is retried transparently — the application reloads the aggregates
(the cache fast-forwards to the winner's events) and runs the command again, up to
`max_attempts` times in all. The domain validates again, so a command that is no longer
valid fails with its rule error (typically `NOT_YOUR_TURN`), and one that still is (a seat
joining while another seat was taken) succeeds. Only when every attempt lost a race does the
command fail with `Conflict` (`CONCURRENT_UPDATE`, gRPC `ABORTED`). No event is lost or
applied twice and versions stay gapless, because nothing is ever appended except on top of
the version the command was decided on.

Idempotency. Every command takes an optional `request_id`. An accepted command with a
request id also saves a `CommandReceipt` aggregate, in the same transaction as its events,
whose id is `uuid5(RECEIPT_NAMESPACE, f"{scope}:{request_id}")` — the scope is the table id
(`tables` for creating a table), so ids only need to be unique per table. The receipt holds
the command's fingerprint (kind and arguments) and its outcome (the ids and versions it
produced). A retry with the same id writes nothing and returns the original outcome,
rebuilt from the aggregates at the recorded versions — also after a restart, since the
receipt is stored, not remembered. The same id with a different command is refused with
`AlreadyExists` (`REQUEST_ID_REUSED`). Two identical requests racing collide on the receipt's
version 1: the loser is retried and finds the winner's receipt. Window: receipts are kept
forever (as long as the event store keeps the events); a rejected command stores nothing,
so retrying it runs it again.

Cache-first decisions. A command's first attempt decides on the cached aggregates without
reading the store (within one process the cache is current: saved aggregates are put back
into it). If another process appended meanwhile, the save collides and the retry reads the
new events first (fast-forward); a refusal on cached state is judged again on fresh state
before it is reported. Queries always fast-forward.

Storage: the Table streams are snapshotted every `TABLE_SNAPSHOT_INTERVAL` events (a match
can run for thousands of hands); hands are short and are replayed from their events. The
aggregate cache with fast-forwarding is configured by `service.store.persistence_env`.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from time import perf_counter
from typing import Any, ClassVar, Protocol, TypeVar, cast
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import Aggregate, DomainEventProtocol
from eventsourcing.persistence import IntegrityError, JSONTranscoder, Transcoder
from eventsourcing.utils import EnvType

from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.fiftyk.combinations import Combination
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.fiftyk.transcript import export_transcript
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.errors import (
    AlreadyExists,
    Conflict,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ServiceError,
    ServiceReason,
)
from fiftyk_referee.service.metrics import bomb_size_label
from fiftyk_referee.service.plain import plain_json
from fiftyk_referee.service.receipts import CommandReceipt, fingerprint_of, receipt_id
from fiftyk_referee.service.topics import register_legacy_topics
from fiftyk_referee.service.transcodings import DomainTranscoder

TABLE_SNAPSHOT_INTERVAL = 50
DEFAULT_MAX_ATTEMPTS = 8
LOCK_STRIPES = 64
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1_000
CREATE_SCOPE = "tables"
ACCEPTED = "accepted"
# Attributes every stored event has; the rest of an event's attributes is its payload.
EVENT_ENVELOPE = frozenset({"originator_id", "originator_version", "timestamp",
                            "originator_topic"})
TRICK_WON = "TrickWon"

AggregateT = TypeVar("AggregateT", bound=Aggregate)


class MetricsHook(Protocol):
    """What the application reports to `service.metrics.Metrics` (optional)."""

    def command(self, kind: str, outcome: str) -> None:
        """Count a command with `accepted` or its reason code."""

    def conflict(self) -> None:
        """Count an append refused by optimistic concurrency control."""

    def retry(self) -> None:
        """Count a command retried after a conflict."""

    def idempotent_replay(self) -> None:
        """Count a command answered from its receipt."""

    def observe_append(self, seconds: float) -> None:
        """Observe one append's duration."""

    def observe_rebuild(self, seconds: float) -> None:
        """Observe one rebuild's duration."""

    def hand_started(self, preset: str) -> None:
        """Count a hand dealt."""

    def hand_completed(self, preset: str) -> None:
        """Count a hand played to the end."""

    def trick(self, preset: str) -> None:
        """Count a trick won."""

    def bomb(self, size: str) -> None:
        """Count a bomb played."""




# Values no aggregate ever mutates in place: a copy of an aggregate may share them.
IMMUTABLE_TYPES: frozenset[type] = frozenset({
    str, int, float, bool, bytes, type(None), Decimal, UUID, datetime, Card, Combination,
    Ruleset,
})


def _copy_value(value: Any) -> Any:
    kind = type(value)
    if kind in IMMUTABLE_TYPES:
        return value
    if kind is list:
        return [_copy_value(item) for item in value]
    if kind is dict:
        return {key: _copy_value(item) for key, item in value.items()}
    if kind is set:
        return {_copy_value(item) for item in value}
    if kind is tuple:
        return tuple(_copy_value(item) for item in value)
    return copy.deepcopy(value)


def private_copy(aggregate: AggregateT) -> AggregateT:
    """A copy of an aggregate that commands may mutate, sharing only immutable values.

    Aggregates that know which of their containers events mutate provide `clone()`: copying
    just those is an order of magnitude cheaper than walking every value.
    """
    clone = getattr(aggregate, "clone", None)
    if callable(clone):
        twin: AggregateT = clone()
        return twin
    duplicate = object.__new__(type(aggregate))
    duplicate.__dict__.update({k: _copy_value(v) for k, v in vars(aggregate).items()})
    return duplicate


def replay(aggregate: Any, domain_events: Iterable[Any]) -> Any:
    """Apply stored events to an aggregate (None before its first event).

    The library's `project_aggregate` does the same after an `isinstance` check against a
    runtime-checkable Protocol per event, which on Python 3.11 costs more than applying a
    typical hand event; every event read back from this application's store is an
    aggregate event or snapshot with a `mutate` method.
    """
    for domain_event in domain_events:
        aggregate = domain_event.mutate(aggregate)
    return aggregate






def event_name(domain_event: object) -> str:
    """An event's name: its class name (`Dealt`, `CardsPlayed`, `SeatTaken`, ...)."""
    return type(domain_event).__name__


def event_payload(domain_event: object) -> dict[str, Any]:
    """An event's attributes without the envelope, as plain JSON."""
    state = {k: v for k, v in vars(domain_event).items() if k not in EVENT_ENVELOPE}
    result: dict[str, Any] = plain_json(state)
    return result


@dataclass(frozen=True)
class Outcome:
    """What an accepted command produced: the aggregates as they stood right after it."""

    kind: str
    table: Table | None  # None for hand commands that left the table unchanged
    hand: Hand | None = None
    seat: int | None = None
    detail: str = ""  # `time_out`: "pass" or "play"
    replayed: bool = False

    @property
    def table_id(self) -> str:
        """The table's id as text."""
        if self.table is not None:
            return str(self.table.id)
        return self.hand.table_id if self.hand is not None else ""

    @property
    def hand_id(self) -> str | None:
        """The hand's id as text, if the command concerned a hand."""
        return str(self.hand.id) if self.hand is not None else None

    @property
    def version(self) -> int:
        """The version of the aggregate the command was about (the hand's, else the table's)."""
        if self.hand is not None:
            return self.hand.version
        return self.table.version if self.table is not None else 0

    def receipt_result(self) -> dict[str, Any]:
        """The ids and versions a receipt records to rebuild this outcome later."""
        return {
            "table_id": self.table_id,
            "table_version": self.table.version if self.table is not None else None,
            "hand_id": self.hand_id,
            "hand_version": self.hand.version if self.hand is not None else None,
            "seat": self.seat,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class LegalPlays:
    """The plays a seat may make now, and whether it may pass instead."""

    plays: list[Combination]
    may_pass: bool
    version: int


@dataclass(frozen=True)
class HandScoreRow:
    """One completed hand on a table's score sheet."""

    hand_id: str
    number: int
    result: dict[str, Any]


@dataclass(frozen=True)
class ScoreSheet:
    """A table's completed hands and cumulative scores."""

    hands: list[HandScoreRow]
    totals: dict[str, Decimal]
    match_over: bool
    version: int


@dataclass(frozen=True)
class HandEventRecord:
    """One stored event of a hand, for histories."""

    version: int
    name: str
    timestamp: datetime
    payload: dict[str, Any]


@dataclass(frozen=True)
class HistoryPage:
    """A page of a hand's events."""

    events: list[HandEventRecord]
    has_more: bool


@dataclass(frozen=True)
class FeedEvent:
    """One event of the global feed (the notification log)."""

    position: int
    originator_id: str
    originator_version: int
    topic: str
    name: str
    timestamp: datetime
    payload: dict[str, Any]


@dataclass(frozen=True)
class FeedPage:
    """A page of the global feed."""

    events: list[FeedEvent]
    last_position: int
    has_more: bool


@dataclass
class _Decision:
    """The aggregates a command changed, and the outcome to report."""

    outcome: Outcome
    changed: list[Aggregate] = field(default_factory=list)
    on_saved: list[Callable[[], None]] = field(default_factory=list)


def parse_id(text: str | UUID, what: str) -> UUID:
    """A UUID from its text form, or InvalidArgument naming the field."""
    if isinstance(text, UUID):
        return text
    try:
        return UUID(str(text))
    except ValueError:
        raise InvalidArgument(ServiceReason.INVALID_ID,
                              f"{what} {text!r} is not a valid id") from None


class Referee(Application[UUID]):
    """The referee: tables, hands, their history, and the global feed."""

    name = "Referee"
    snapshotting_intervals: ClassVar[dict[type[Any], int]] = {Table: TABLE_SNAPSHOT_INTERVAL}
    snapshotting_projectors: ClassVar[dict[type[Any], Any]] = {Table: replay}

    def __init__(self, env: EnvType | None = None, *, metrics: MetricsHook | None = None,
                 max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
        if max_attempts < 1:
            raise ValueError("a command needs at least one attempt")
        register_legacy_topics()
        super().__init__(env)
        self.metrics = metrics
        self.max_attempts = max_attempts
        self._stripes = [threading.Lock() for _ in range(LOCK_STRIPES)]
        self._local = threading.local()

    def construct_transcoder(self) -> Transcoder:
        """The JSON transcoder with the domain's transcodings (see service.transcodings)."""
        transcoder = DomainTranscoder()
        self.register_transcodings(transcoder)
        return transcoder

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        """The domain transcoder registers everything itself; nothing to add."""

    # -- loading ----------------------------------------------------------------------------

    def _load(self, cls: type[AggregateT], aggregate_id: str | UUID, reason: ServiceReason,
              what: str, *, version: int | None = None) -> AggregateT:
        uid = parse_id(aggregate_id, f"{what} id")
        try:
            aggregate = self._get(uid, version)
        except AggregateNotFoundError:
            raise NotFound(reason, f"no {what} {uid}") from None
        if not isinstance(aggregate, cls):
            raise NotFound(reason, f"no {what} {uid}")
        return aggregate

    def _get(self, aggregate_id: UUID, version: int | None) -> Aggregate:
        """An aggregate the caller may mutate: a private copy when it comes from the cache.

        The repository fast-forwards a cached aggregate under a lock but copies it after
        releasing that lock, so a copy could be torn by a concurrent fast-forward. Reads of
        the same id are therefore serialised here (striped locks), and the copy shares the
        immutable values (`private_copy`), several times faster than `copy.deepcopy`.
        """
        if version is not None or self.repository.cache is None:
            fresh: Aggregate = self.repository.get(aggregate_id, version=version,
                                                   projector_func=replay)
            return fresh
        cache = self.repository.cache
        with self._stripes[aggregate_id.int % len(self._stripes)]:
            if getattr(self._local, "optimistic", False):
                try:
                    hit = cache.get(aggregate_id)
                except KeyError:
                    pass
                else:
                    return private_copy(cast(Aggregate, hit))
            cached: Aggregate = self.repository.get(aggregate_id, deepcopy_from_cache=False,
                                                    projector_func=replay)
            return private_copy(cached)

    def _remember(self, aggregates: Iterable[Aggregate | None]) -> None:
        """Put just-saved aggregates in the cache (the library leaves that to fast-forward)."""
        cache = self.repository.cache
        if cache is None:
            return
        for aggregate in aggregates:
            if aggregate is None:
                continue
            with self._stripes[aggregate.id.int % len(self._stripes)]:
                try:
                    known = cache.get(aggregate.id)
                except KeyError:
                    cache.put(aggregate.id, aggregate)
                    continue
                if known.version < aggregate.version:
                    cache.put(aggregate.id, aggregate)

    def _decide(self, decide: Callable[[], _Decision], *, optimistic: bool) -> _Decision:
        """Decide on cached state without reading the store first, when `optimistic`.

        A command decided on stale state (another process appended since) cannot be saved:
        its events collide with the stored versions and the retry fast-forwards. A refusal
        proves nothing about fresh state, so a refused optimistic decision is judged again
        on fast-forwarded state before the refusal is reported.
        """
        if optimistic and self.repository.cache is not None:
            self._local.optimistic = True
            try:
                return decide()
            except (RuleError, ServiceError):
                pass
            finally:
                self._local.optimistic = False
        return decide()

    def get_table(self, table_id: str | UUID) -> Table:
        """The table's current state."""
        return self._load(Table, table_id, ServiceReason.TABLE_NOT_FOUND, "table")

    def get_hand(self, hand_id: str | UUID, table_id: str | UUID | None = None) -> Hand:
        """A hand's current state (of the given table, when one is named)."""
        hand = self._load(Hand, hand_id, ServiceReason.HAND_NOT_FOUND, "hand")
        if table_id is not None and hand.table_id != str(parse_id(table_id, "table id")):
            raise NotFound(ServiceReason.HAND_NOT_FOUND,
                           f"hand {hand.id} is not a hand of table {table_id}")
        return hand

    def _hand_of(self, table_id: str | UUID, hand_id: str | UUID | None,
                 *, current_only: bool = False) -> Hand:
        """The named hand of a table, or the table's current (else last) hand."""
        if hand_id:
            return self.get_hand(hand_id, table_id)
        table = self.get_table(table_id)
        chosen = table.current_hand or (None if current_only else
                                        (table.hand_ids[-1] if table.hand_ids else None))
        if chosen is None:
            raise RuleError(Reason.NO_HAND_IN_PROGRESS, "no hand is being played at this table")
        return self.get_hand(chosen, table.id)

    # -- the command runner -----------------------------------------------------------------

    def _run(self, kind: str, scope: str, request_id: str | None, arguments: Mapping[str, Any],
             decide: Callable[[], _Decision]) -> Outcome:
        receipt_key = receipt_id(scope, request_id) if request_id else None
        fingerprint = fingerprint_of(kind, arguments) if request_id else ""
        for attempt in range(1, self.max_attempts + 1):
            if receipt_key is not None and request_id is not None:
                replayed = self._replay(receipt_key, kind, request_id, fingerprint)
                if replayed is not None:
                    self._count(kind, ACCEPTED)
                    return replayed
            try:
                decision = self._decide(decide, optimistic=attempt == 1)
            except (RuleError, ServiceError) as error:
                if receipt_key is not None and request_id is not None:
                    # A duplicate of this request may have been accepted since the check
                    # above, so the refusal may only be seeing its effect.
                    replayed = self._replay(receipt_key, kind, request_id, fingerprint)
                    if replayed is not None:
                        self._count(kind, ACCEPTED)
                        return replayed
                self._count(kind, str(error.reason))
                raise
            receipt = None
            if receipt_key is not None and request_id is not None:
                receipt = CommandReceipt(scope=scope, request_id=request_id, kind=kind,
                                         fingerprint=fingerprint,
                                         result=decision.outcome.receipt_result())
            started = perf_counter()
            try:
                self.save(*decision.changed, receipt)
            except IntegrityError:
                if self.metrics is not None:
                    self.metrics.conflict()
                if attempt == self.max_attempts:
                    self._count(kind, ServiceReason.CONCURRENT_UPDATE)
                    raise Conflict(
                        ServiceReason.CONCURRENT_UPDATE,
                        f"{kind}: another command changed the same state first, {attempt}"
                        " times in a row; read the new state and try again",
                    ) from None
                if self.metrics is not None:
                    self.metrics.retry()
                continue
            if self.metrics is not None:
                self.metrics.observe_append(perf_counter() - started)
            self._remember(decision.changed)
            for callback in decision.on_saved:
                callback()
            self._count(kind, ACCEPTED)
            return decision.outcome
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _count(self, kind: str, outcome: str) -> None:
        if self.metrics is not None:
            self.metrics.command(kind, outcome)

    def _replay(self, key: UUID, kind: str, request_id: str, fingerprint: str) -> Outcome | None:
        try:
            receipt = self._get(key, None)
        except AggregateNotFoundError:
            return None
        if not isinstance(receipt, CommandReceipt):  # pragma: no cover - ids are namespaced
            return None
        if receipt.fingerprint != fingerprint or receipt.kind != kind:
            raise AlreadyExists(
                ServiceReason.REQUEST_ID_REUSED,
                f"request id {request_id!r} was already used for a different command"
                f" ({receipt.kind}); use a new request id for a new command",
            )
        if self.metrics is not None:
            self.metrics.idempotent_replay()
        result = receipt.result
        table = None
        if result.get("table_version") is not None:
            table = self._load(Table, result["table_id"], ServiceReason.TABLE_NOT_FOUND,
                               "table", version=result["table_version"])
        hand = None
        if result.get("hand_id"):
            hand = self._load(Hand, result["hand_id"], ServiceReason.HAND_NOT_FOUND, "hand",
                              version=result["hand_version"])
        return Outcome(kind=kind, table=table, hand=hand, seat=result.get("seat"),
                       detail=result.get("detail") or "", replayed=True)

    # -- table commands ---------------------------------------------------------------------

    def create_table(self, preset: str, options: Mapping[str, Any] | None, players: int, *,
                     allow_preset_deck: bool = False, name: str = "",
                     request_id: str | None = None) -> Outcome:
        """Open a table with a ruleset (preset plus option overrides) and a number of seats."""
        arguments = {"preset": preset, "options": dict(options or {}), "players": players,
                     "allow_preset_deck": allow_preset_deck, "name": name}

        def decide() -> _Decision:
            ruleset = Ruleset.from_spec(preset, options)
            table = Table.open(ruleset, players, allow_preset_deck=allow_preset_deck,
                               name=name)
            return _Decision(Outcome("create_table", table), [table])

        return self._run("create_table", CREATE_SCOPE, request_id, arguments, decide)

    def join_table(self, table_id: str | UUID, player_id: str, seat: int | None = None, *,
                   request_id: str | None = None) -> Outcome:
        """Seat a player: at the given seat, or the lowest free one."""
        tid = parse_id(table_id, "table id")

        def decide() -> _Decision:
            table = self.get_table(tid)
            chosen = seat
            if chosen is None:
                free = [s for s, occupant in enumerate(table.seats) if occupant is None]
                if not free:
                    raise RuleError(Reason.SEAT_TAKEN, "every seat at this table is taken")
                chosen = free[0]
            table.join(chosen, player_id)
            return _Decision(Outcome("join_table", table, seat=chosen), [table])

        return self._run("join_table", str(tid), request_id,
                         {"table_id": str(tid), "player_id": player_id, "seat": seat}, decide)

    def leave_table(self, table_id: str | UUID, seat: int, *,
                    request_id: str | None = None) -> Outcome:
        """Free a seat between hands."""
        tid = parse_id(table_id, "table id")

        def decide() -> _Decision:
            table = self.get_table(tid)
            table.leave(seat)
            return _Decision(Outcome("leave_table", table, seat=seat), [table])

        return self._run("leave_table", str(tid), request_id,
                         {"table_id": str(tid), "seat": seat}, decide)

    def start_hand(self, table_id: str | UUID, *, deck: Sequence[str] | None = None,
                   request_id: str | None = None) -> Outcome:
        """Deal the table's next hand (shuffled, or a preset deck if the table allows it)."""
        tid = parse_id(table_id, "table id")
        cards = list(deck) if deck else None

        def decide() -> _Decision:
            table = self.get_table(tid)
            hand = table.start_hand(deck=cards)
            decision = _Decision(Outcome("start_hand", table, hand), [table, hand])
            if self.metrics is not None:
                metrics = self.metrics
                decision.on_saved.append(lambda: metrics.hand_started(hand.rules.preset))
            return decision

        return self._run("start_hand", str(tid), request_id,
                         {"table_id": str(tid), "deck": cards}, decide)

    # -- hand commands ----------------------------------------------------------------------

    def _hand_command(self, kind: str, table_id: str | UUID, hand_id: str | UUID | None,
                      seat: int, request_id: str | None, arguments: dict[str, Any],
                      act: Callable[[Hand], tuple[str, Combination | None]],
                      player_id: str | None = None) -> Outcome:
        tid = parse_id(table_id, "table id")
        hid = parse_id(hand_id, "hand id") if hand_id else None

        def decide() -> _Decision:
            hand = self._hand_of(tid, hid, current_only=True)
            if player_id is not None:
                _check_seat_holder(hand, seat, player_id)
            tricks_before = hand.tricks_won
            detail, combo = act(hand)
            changed: list[Aggregate] = [hand]
            table = None
            if hand.is_over:
                table = self.get_table(tid)
                table.record_hand(hand)
                changed.append(table)
            decision = _Decision(Outcome(kind, table, hand, seat=seat, detail=detail), changed)
            if self.metrics is not None:
                decision.on_saved.append(
                    self._game_metrics(hand, hand.tricks_won - tricks_before, combo))
            return decision

        arguments = {"table_id": str(tid), "hand_id": str(hid) if hid else None,
                     "seat": seat, **arguments}
        return self._run(kind, str(tid), request_id, arguments, decide)

    def _game_metrics(self, hand: Hand, tricks: int, combo: Combination | None
                      ) -> Callable[[], None]:
        metrics = self.metrics
        preset = hand.rules.preset

        def report() -> None:
            if metrics is None:  # pragma: no cover - only registered with metrics
                return
            for _ in range(tricks):
                metrics.trick(preset)
            if combo is not None and combo.is_bomb_class:
                metrics.bomb(bomb_size_label(combo))
            if hand.is_over:
                metrics.hand_completed(preset)

        return report

    def play(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
             cards: Iterable[str], *, request_id: str | None = None,
             player_id: str | None = None) -> Outcome:
        """Play cards for a seat (`player_id`: the player who must hold it in this hand)."""
        played = [str(c) for c in cards]

        def act(hand: Hand) -> tuple[str, Combination | None]:
            return "", hand.play(seat, played)

        return self._hand_command("play", table_id, hand_id, seat, request_id,
                                  {"cards": played}, act, player_id=player_id)

    def pass_turn(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int, *,
                  request_id: str | None = None, player_id: str | None = None) -> Outcome:
        """Pass for a seat."""

        def act(hand: Hand) -> tuple[str, Combination | None]:
            hand.pass_turn(seat)
            return "", None

        return self._hand_command("pass", table_id, hand_id, seat, request_id, {}, act,
                                  player_id=player_id)

    def resign(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int, *,
               request_id: str | None = None, player_id: str | None = None) -> Outcome:
        """Resign the current hand for a seat."""

        def act(hand: Hand) -> tuple[str, Combination | None]:
            hand.resign(seat)
            return "", None

        return self._hand_command("resign", table_id, hand_id, seat, request_id, {}, act,
                                  player_id=player_id)

    def time_out(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
                 now: datetime, *, request_id: str | None = None) -> Outcome:
        """Apply the referee's decision for a seat whose turn has expired at `now`."""

        def act(hand: Hand) -> tuple[str, Combination | None]:
            return hand.time_out(seat, now), None

        # `now` is not part of the fingerprint: a retry is the same ruling, asked later.
        return self._hand_command("timeout", table_id, hand_id, seat, request_id, {}, act)

    # -- queries ----------------------------------------------------------------------------

    def table_view(self, table_id: str | UUID) -> dict[str, Any]:
        """The table's public state."""
        return self.get_table(table_id).view()

    def hand_view(self, table_id: str | UUID, hand_id: str | UUID | None,
                  seat: int) -> dict[str, Any]:
        """A hand as one seat may see it (the current, else the last hand when unnamed)."""
        return self._hand_of(table_id, hand_id).view(seat)

    def audit_view(self, table_id: str | UUID, hand_id: str | UUID | None) -> dict[str, Any]:
        """A hand with every card, for auditors."""
        return self._hand_of(table_id, hand_id).audit_view()

    def legal_plays(self, table_id: str | UUID, hand_id: str | UUID | None,
                    seat: int) -> LegalPlays:
        """The plays a seat may make now (empty when it is not its turn)."""
        hand = self._hand_of(table_id, hand_id)
        if not 0 <= seat < hand.players:
            raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{hand.players - 1}")
        plays = hand.legal_plays(seat)
        may_pass = not hand.is_over and hand.turn == seat and hand.top is not None
        return LegalPlays(plays=plays, may_pass=may_pass, version=hand.version)

    def scores(self, table_id: str | UUID) -> ScoreSheet:
        """The table's completed hands with their results, and the cumulative scores."""
        table = self.get_table(table_id)
        rows: list[HandScoreRow] = []
        for hand_id in table.hand_ids:
            if hand_id == table.current_hand:
                continue
            hand = self.get_hand(hand_id)
            if hand.result is not None:
                rows.append(HandScoreRow(hand_id, hand.number, hand.result))
        return ScoreSheet(hands=rows, totals=dict(table.scores), match_over=table.match_over,
                          version=table.version)

    def hand_history(self, hand_id: str | UUID, *, after_version: int = 0,
                     limit: int = DEFAULT_PAGE_SIZE) -> HistoryPage:
        """A hand's stored events in order: version, event name, timestamp, payload."""
        hand = self.get_hand(hand_id)
        size = _page_size(limit)
        selected = list(self.events.get(hand.id, gt=after_version or None, limit=size + 1))
        records = [
            HandEventRecord(version=e.originator_version, name=event_name(e),
                            timestamp=_timestamp_of(e), payload=event_payload(e))
            for e in selected[:size]
        ]
        return HistoryPage(events=records, has_more=len(selected) > size)

    def hand_at(self, hand_id: str | UUID, version: int) -> Hand:
        """A hand as it stood right after event `version` (dispute replay)."""
        current = self.get_hand(hand_id)
        if not 1 <= version <= current.version:
            raise NotFound(ServiceReason.VERSION_NOT_FOUND,
                           f"hand {current.id} has versions 1..{current.version}, not {version}")
        started = perf_counter()
        hand = self._load(Hand, current.id, ServiceReason.HAND_NOT_FOUND, "hand",
                          version=version)
        if self.metrics is not None:
            self.metrics.observe_rebuild(perf_counter() - started)
        return hand

    def export_transcript(self, hand_id: str | UUID) -> dict[str, Any]:
        """A stored hand as a TRANSCRIPT.md transcript."""
        return export_transcript(self.get_hand(hand_id))

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

    # -- the global feed --------------------------------------------------------------------

    def read_events(self, after_position: int = 0, limit: int = DEFAULT_PAGE_SIZE,
                    topics: Sequence[str] = ()) -> FeedPage:
        """Events of every aggregate in the order they were recorded, after a position."""
        size = _page_size(limit)
        notifications = self.recorder.select_notifications(
            start=after_position or None, limit=size + 1, topics=list(topics),
            inclusive_of_start=False,
        )
        events = []
        for notification in notifications[:size]:
            domain_event = self.mapper.to_domain_event(notification)
            events.append(FeedEvent(
                position=notification.id,
                originator_id=str(notification.originator_id),
                originator_version=notification.originator_version,
                topic=notification.topic,
                name=event_name(domain_event),
                timestamp=_timestamp_of(domain_event),
                payload=event_payload(domain_event),
            ))
        last = events[-1].position if events else after_position
        return FeedPage(events=events, last_position=last, has_more=len(notifications) > size)

    def head_position(self) -> int:
        """The position of the last event recorded (0 when the store is empty)."""
        return self.recorder.max_notification_id() or 0


def _check_seat_holder(hand: Hand, seat: int, player_id: str) -> None:
    """PermissionDenied unless `player_id` held `seat` when the hand was dealt."""
    players = hand.seat_players or []
    if not 0 <= seat < len(players) or players[seat] != player_id:
        raise PermissionDenied(ServiceReason.WRONG_SEAT,
                               "the seat token's player does not hold that seat in this hand")


def _timestamp_of(domain_event: DomainEventProtocol[UUID]) -> datetime:
    stamp = getattr(domain_event, "timestamp", None)
    if not isinstance(stamp, datetime):  # pragma: no cover - every stored event has one
        raise TypeError(f"event {event_name(domain_event)} has no timestamp")
    return stamp


def _page_size(limit: int) -> int:
    if limit <= 0:
        return DEFAULT_PAGE_SIZE
    return min(limit, MAX_PAGE_SIZE)


__all__ = [
    "CREATE_SCOPE",
    "TABLE_SNAPSHOT_INTERVAL",
    "FeedEvent",
    "FeedPage",
    "HandEventRecord",
    "HandScoreRow",
    "HistoryPage",
    "LegalPlays",
    "MetricsHook",
    "Outcome",
    "Referee",
    "ScoreSheet",
    "event_name",
    "event_payload",
    "fingerprint_of",
    "parse_id",
    "plain_json",
    "receipt_id",
    "replay",
]
