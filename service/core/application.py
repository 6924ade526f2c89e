"""The referee's use cases: get the aggregates, let the domain decide, save what changed.

Every command reads like the `eventsourcing` library's examples: load a table or hand,
call one domain method, and return a `Decision` naming the aggregates it changed. The
command runner (`service/core/runner.py`) saves them in one transaction with the command's
receipt, retries lost races and answers repeated request ids; the aggregate cache
(`service/core/cache.py`) serves reads and private copies. A hand that ends is recorded on its
table (`Table.record_hand`) in the same transaction as the hand's last events.

The use cases know games only through the game boundary (`domain/game.py`): tables name
their game, hands are `GameHand`s, and the registry (`domain/games.py`) finds a game by name.

Storage: the table streams are snapshotted every `TABLE_SNAPSHOT_INTERVAL` events (a match
can run for thousands of hands); hands are short and are replayed from their events. The
cache's settings come from `service.core.store.persistence_env`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from decimal import Decimal
from time import perf_counter
from typing import Any, ClassVar, Protocol, TypeVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.domain import EventSourcingError
from eventsourcing.persistence import EventStore, JSONTranscoder, Mapper, StoredEvent, Transcoder
from eventsourcing.utils import EnvType

from fiftyk_referee.domain.aggregate import Aggregate
from fiftyk_referee.domain.chain import check_stream
from fiftyk_referee.domain.errors import Reason, RuleError, shown
from fiftyk_referee.domain.game import (
    PASS,
    PLAY,
    RESIGN,
    Action,
    GameHand,
    GameResult,
    GameView,
    LegalActions,
    Observation,
)
from fiftyk_referee.domain.games import DEFAULT_GAME, game_named, game_of
from fiftyk_referee.domain.observer import AUDITOR, Viewer
from fiftyk_referee.domain.spectators import SpectatorPolicy
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.aggregates import AggregateSnapshot
from fiftyk_referee.service.core.cache import AggregateCache, replay
from fiftyk_referee.service.core.commands import (
    CREATE_SCOPE,
    AbortTable,
    Act,
    CloseDraw,
    CloseTable,
    Command,
    ContributeEntropy,
    CreateTable,
    HandCommand,
    JoinTable,
    LeaveTable,
    ReissueSeatToken,
    ReplaceSeat,
    StartHand,
    TableCommand,
    TimeOut,
)
from fiftyk_referee.service.core.public_events import (
    PUBLIC_EVENTS,
    FeedEvent,
    FeedPage,
    HistoryPage,
    feed_event,
)
from fiftyk_referee.service.core.runner import (
    DEFAULT_MAX_ATTEMPTS,
    CommandRunner,
    Decision,
    Outcome,
    RunnerMetrics,
)
from fiftyk_referee.service.core.topics import register_legacy_topics
from fiftyk_referee.service.core.transcodings import DomainTranscoder
from fiftyk_referee.service.errors import (
    Conflict,
    DataLoss,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ServiceReason,
    Unauthenticated,
)
from fiftyk_referee.service.ops.metrics import game_event_metrics
from fiftyk_referee.service.trust.chain_store import ChainedEventStore, ChainedMapper, chained_event
from fiftyk_referee.service.trust.entropy_receipts import entropy_receipt_body
from fiftyk_referee.service.trust.evidence import DISTRIBUTION, build_evidence, engine_version
from fiftyk_referee.service.trust.integrity import IntegrityAudit
from fiftyk_referee.service.trust.ledger import HandLog
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, Signer
from fiftyk_referee.service.trust.verifier import (
    FAILED,
    NO_CHAIN,
    OK,
    SKIPPED,
    Line,
    Report,
    Verifier,
    rules_engine,
)

TABLE_SNAPSHOT_INTERVAL = 50
# Random table ids drawn at most for a shard's new table (service/core/shards.py): with N shards a
# draw misses with probability 1 - 1/N, so 1,000 draws all miss practically never.
MAX_PLACEMENT_DRAWS = 1_000
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1_000
RULING_FORMAT = "fiftyk-ruling/1"
CommandT = TypeVar("CommandT", bound=Command)


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


class NamedCommands:
    """The commands by name, for callers in Python (tests, bots, the turn clock): each
    builds its command and runs it through `execute` (the referee's own, or a router's
    that hands it to the table's shard: `service/core/shards.py`)."""

    def execute(self, command: Command) -> Outcome:
        """Run one command to its outcome."""
        raise NotImplementedError


    def create_table(self, preset: str, options: Mapping[str, Any] | None, players: int, *,
                     allow_preset_deck: bool = False, name: str = "",
                     request_id: str | None = None, game: str = DEFAULT_GAME,
                     spectators: SpectatorPolicy | None = None,
                     entropy_window: int | None = None,
                     entropy_direct: bool = False) -> Outcome:
        """Open a table of a game with a ruleset (preset plus overrides) and a seat count;
        `entropy_window` (seconds) makes its deals seat-entropy deals (commit, then reveal,
        unless `entropy_direct`)."""
        return self.execute(CreateTable(
            preset=preset, options=dict(options or {}), players=players,
            allow_preset_deck=allow_preset_deck, name=name, game=game, spectators=spectators,
            entropy_window=entropy_window, entropy_direct=entropy_direct,
            request_id=request_id))

    def join_table(self, table_id: str | UUID, player_id: str, seat: int | None = None, *,
                   request_id: str | None = None) -> Outcome:
        """Seat a player: at the given seat, or the lowest free one."""
        return self.execute(JoinTable(table_id=str(table_id), player_id=player_id, seat=seat,
                                      request_id=request_id))

    def leave_table(self, table_id: str | UUID, seat: int, *,
                    request_id: str | None = None) -> Outcome:
        """Free a seat between hands."""
        return self.execute(LeaveTable(table_id=str(table_id), seat=seat,
                                       request_id=request_id))

    def start_hand(self, table_id: str | UUID, *, deck: Sequence[str] | None = None,
                   request_id: str | None = None, now: datetime | None = None) -> Outcome:
        """Deal the table's next hand (shuffled, or a preset deck if the table allows it);
        at a seat-entropy table, open its draw (the outcome has no hand then)."""
        return self.execute(StartHand(table_id=str(table_id),
                                      deck=tuple(deck) if deck else None,
                                      request_id=request_id, now=now))

    def contribute_entropy(self, table_id: str | UUID, seat: int, entropy: bytes = b"", *,
                           commitment: bytes | None = None,
                           request_id: str | None = None, player_id: str | None = None,
                           token_generation: int | None = None,
                           now: datetime | None = None) -> Outcome:
        """A seat's contribution to the deal being drawn, or with `commitment` its
        commitment to it (the outcome's hand: the hand it dealt, when it was the last one;
        its `detail`: the unsigned receipt, `entropy_receipt`)."""
        return self.execute(ContributeEntropy(
            table_id=str(table_id), seat=seat, entropy=bytes(entropy),
            commitment=bytes(commitment) if commitment is not None else None,
            player_id=player_id, token_generation=token_generation, now=now,
            request_id=request_id))


    def close_draw(self, table_id: str | UUID, number: int, now: datetime, *,
                   request_id: str | None = None) -> Outcome:
        """Deal a seat-entropy draw whose window closed (the referee's clock)."""
        return self.execute(CloseDraw(table_id=str(table_id), number=number, now=now,
                                      request_id=request_id))

    def act(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
            action: Action, *, request_id: str | None = None, player_id: str | None = None,
            expected_version: int | None = None, names_cards: bool = True,
            token_generation: int | None = None) -> Outcome:
        """One seat's action in a hand (`player_id`: who must hold the seat in this hand;
        `token_generation`: the generation of the seat token it acts with)."""
        return self.execute(Act(
            table_id=str(table_id), hand_id=str(hand_id) if hand_id else None, seat=seat,
            action=action, player_id=player_id, expected_version=expected_version,
            names_cards=names_cards, token_generation=token_generation,
            request_id=request_id))

    # -- the table's lifecycle (docs/integrating.md, "Running a lobby") ----------------------

    def close_table(self, table_id: str | UUID, reason: str = "", *,
                    request_id: str | None = None) -> Outcome:
        """Deal no more hands at a table; a hand in progress finishes and counts."""
        return self.execute(CloseTable(table_id=str(table_id), reason=reason,
                                       request_id=request_id))

    def abort_table(self, table_id: str | UUID, reason: str = "", *,
                    request_id: str | None = None) -> Outcome:
        """Close a table at once, voiding the hand in progress (`detail`: its id, if any)."""
        return self.execute(AbortTable(table_id=str(table_id), reason=reason,
                                       request_id=request_id))

    def replace_seat(self, table_id: str | UUID, seat: int, player_id: str, *,
                     request_id: str | None = None) -> Outcome:
        """Give a taken seat to another player between hands (the old token stops working)."""
        return self.execute(ReplaceSeat(table_id=str(table_id), seat=seat,
                                        player_id=player_id, request_id=request_id))

    def reissue_seat_token(self, table_id: str | UUID, seat: int, *,
                           request_id: str | None = None) -> Outcome:
        """Make a new seat token current for a taken seat; older ones stop working."""
        return self.execute(ReissueSeatToken(table_id=str(table_id), seat=seat,
                                             request_id=request_id))

    def play(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
             cards: Iterable[str], *, request_id: str | None = None,
             player_id: str | None = None, token_generation: int | None = None) -> Outcome:
        """Play cards for a seat."""
        return self.act(table_id, hand_id, seat, Action.play([str(c) for c in cards]),
                        request_id=request_id, player_id=player_id,
                        token_generation=token_generation)

    def pass_turn(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int, *,
                  request_id: str | None = None, player_id: str | None = None,
                  token_generation: int | None = None) -> Outcome:
        """Pass for a seat."""
        return self.act(table_id, hand_id, seat, Action(PASS), request_id=request_id,
                        player_id=player_id, names_cards=False,
                        token_generation=token_generation)

    def resign(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int, *,
               request_id: str | None = None, player_id: str | None = None,
               token_generation: int | None = None) -> Outcome:
        """Resign the current hand for a seat."""
        return self.act(table_id, hand_id, seat, Action(RESIGN), request_id=request_id,
                        player_id=player_id, names_cards=False,
                        token_generation=token_generation)

    def declare(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
                cards: Iterable[str], *, request_id: str | None = None,
                player_id: str | None = None, token_generation: int | None = None) -> Outcome:
        """Declare trump cards for a seat (Shengji; no cards: declare nothing this round)."""
        return self.act(table_id, hand_id, seat, Action("declare", tuple(map(str, cards))),
                        request_id=request_id, player_id=player_id,
                        token_generation=token_generation)

    def bury(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
             cards: Iterable[str], *, request_id: str | None = None,
             player_id: str | None = None, token_generation: int | None = None) -> Outcome:
        """Bury the dealer's cards in the kitty (Shengji)."""
        return self.act(table_id, hand_id, seat, Action("bury", tuple(map(str, cards))),
                        request_id=request_id, player_id=player_id,
                        token_generation=token_generation)

    def time_out(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
                 now: datetime, *, request_id: str | None = None) -> Outcome:
        """Apply the referee's decision for a seat whose turn has expired at `now`."""
        return self.execute(TimeOut(table_id=str(table_id),
                                    hand_id=str(hand_id) if hand_id else None, seat=seat,
                                    now=now, request_id=request_id))


class Referee(NamedCommands, Application[UUID]):
    """The referee: tables, hands, their history, and the global feed."""

    name = "Referee"
    snapshotting_intervals: ClassVar[dict[type[Any], int]] = {Table: TABLE_SNAPSHOT_INTERVAL}
    snapshotting_projectors: ClassVar[dict[type[Any], Any]] = {Table: replay}
    snapshot_class = AggregateSnapshot

    def __init__(self, env: EnvType | None = None, *, metrics: MetricsHook | None = None,
                 max_attempts: int = DEFAULT_MAX_ATTEMPTS, signer: Signer | None = None,
                 owns: Callable[[UUID], bool] | None = None) -> None:
        register_legacy_topics()
        super().__init__(env)
        # Which new table ids this store may take: all of them, unless it is one shard of
        # several (service/core/shards.py), which takes only the ids that hash to it.
        self._owns = owns
        self.metrics = metrics
        # The development key unless the composition root passes the configured one.
        self.signer = signer if signer is not None else Signer.from_text(DEV_SIGNING_KEY)
        self.ledger = HandLog(self.recorder, self.mapper, self.signer)
        self.audit = IntegrityAudit(self, metrics=metrics)
        self.cache = AggregateCache(self.repository)
        self.runner = CommandRunner(self.cache, self.save, self._outcome_of_receipt,
                                    metrics=metrics, max_attempts=max_attempts)

    def construct_transcoder(self) -> Transcoder:
        """The JSON transcoder with the domain's transcodings (see service.core.transcodings)."""
        transcoder = DomainTranscoder()
        self.register_transcodings(transcoder)
        return transcoder

    def construct_mapper(self) -> Mapper[UUID]:
        """The mapper that takes the hash chain's link off stored events (chain_store.py)."""
        return ChainedMapper(transcoder=self.construct_transcoder())

    def construct_event_store(self) -> EventStore[UUID]:
        """The event store that seals every event into its stream's hash chain; a table's
        `HandRecorded` chains in the head of the hand it records."""
        return ChainedEventStore(self.mapper, self.recorder,
                                 links={Table.HandRecorded: ("hand_id", "hand_head")})

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        """The domain transcoder registers everything itself; nothing to add."""

    # -- loading ----------------------------------------------------------------------------

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

    def _outcome_of_receipt(self, kind: str, result: Mapping[str, Any]) -> Outcome:
        """A command's original outcome, from the versions its receipt recorded."""
        table = None
        if result.get("table_version") is not None:
            table = self._load_table(result["table_id"], version=result["table_version"])
        hand = None
        if result.get("hand_id"):
            hand = self._load_hand(result["hand_id"], version=result["hand_version"])
        return Outcome(kind=kind, table=table, hand=hand, seat=result.get("seat"),
                       detail=result.get("detail") or "", replayed=True,
                       table_version=result.get("seen_table_version"))

    # -- commands ---------------------------------------------------------------------------

    def execute(self, command: Command) -> Outcome:
        """Run one command to its outcome: the runner fingerprints this very object for its
        receipt and the handler of its type decides on it."""
        command = _normalized(command)
        handler = self._handlers[type(command)]
        return self.runner.run(command.kind, command.scope, command.request_id,
                               command.arguments(), lambda: handler(command))

    def check(self, command: Act) -> Outcome:
        """A dry run of `command`, recording nothing: its refusal, or the hand as it stands
        now (never what the action would leave: that can hold what the seat may not see,
        such as the result and the seed of a hand the action would end). The game judges
        the action only on what the seat may see (`GameHand.check`)."""
        command = _normalized(command)
        return self.cache.decide(lambda: self._check_act(command), optimistic=False)

    @property
    def _handlers(self) -> dict[type[Command], Callable[[Any], Decision]]:
        return {CreateTable: self._create_table, JoinTable: self._join_table,
                LeaveTable: self._leave_table, StartHand: self._start_hand, Act: self._act,
                TimeOut: self._time_out, CloseTable: self._close_table,
                AbortTable: self._abort_table, ReplaceSeat: self._replace_seat,
                ReissueSeatToken: self._reissue_seat_token,
                ContributeEntropy: self._contribute_entropy, CloseDraw: self._close_draw}

    def _create_table(self, command: CreateTable) -> Decision:
        chosen = game_named(command.game)
        rules = chosen.rules(command.preset, command.options)
        for _ in range(MAX_PLACEMENT_DRAWS):
            table = Table.open(chosen, rules, command.players,
                               allow_preset_deck=command.allow_preset_deck,
                               name=command.name, spectators=command.spectators,
                               entropy_window=command.entropy_window,
                               entropy_direct=command.entropy_direct)
            # A shard keeps only a table whose (random) id hashes to it: another draw
            # costs microseconds, and a table's id alone then names its shard for ever.
            if self._owns is None or self._owns(table.id):
                return Decision(Outcome(command.kind, table), [table])
        raise RuntimeError(f"no table id of {MAX_PLACEMENT_DRAWS} random ones belongs to"
                           " this shard: is its shard map empty?")

    def _join_table(self, command: JoinTable) -> Decision:
        table = self.get_table(command.table_id)
        chosen = command.seat
        if chosen is None:
            free = [s for s, occupant in enumerate(table.seats) if occupant is None]
            if not free:
                raise RuleError(Reason.SEAT_TAKEN, "every seat at this table is taken")
            chosen = free[0]
        table.join(chosen, command.player_id)
        return Decision(Outcome(command.kind, table, seat=chosen), [table])

    def _leave_table(self, command: LeaveTable) -> Decision:
        table = self.get_table(command.table_id)
        table.leave(command.seat)
        return Decision(Outcome(command.kind, table, seat=command.seat), [table])

    def _start_hand(self, command: StartHand) -> Decision:
        table = self.get_table(command.table_id)
        hand = table.start_hand(deck=list(command.deck) if command.deck else None,
                                now=command.now or datetime.now(UTC))
        return self._dealt(command, table, hand)

    def _dealt(self, command: Command, table: Table, hand: GameHand | None, *,
               seat: int | None = None) -> Decision:
        """Save the table, and the hand it dealt, if it dealt one (a draw may not yet)."""
        if hand is None:
            return Decision(Outcome(command.kind, table, seat=seat), [table])
        decision = Decision(Outcome(command.kind, table, hand, seat=seat),
                            [table, hand])  # type: ignore[list-item]  # hands are aggregates
        if self.metrics is not None:
            metrics, game, preset = self.metrics, table.game_name, table.rules.preset
            decision.on_saved.append(lambda: metrics.hand_started(game, preset))
        return decision

    def _contribute_entropy(self, command: ContributeEntropy) -> Decision:
        # Read through to the store: a reissued token or a replaced seat counts at once.
        table = self._fresh_table(parse_id(command.table_id, "table id"))
        if command.token_generation is not None:
            check_token_generation(table, command.seat, command.token_generation)
        if command.player_id is not None and (
                not 0 <= command.seat < table.players
                or table.seats[command.seat] != command.player_id):
            raise PermissionDenied(ServiceReason.WRONG_SEAT,
                                   "the seat token's player no longer holds that seat")
        now = command.now or datetime.now(UTC)
        draw, version = table.draw, table.version
        hand: GameHand | None = None
        if command.commitment is not None:
            table.commit_entropy(command.seat, command.commitment, now)
        else:
            hand = table.contribute(command.seat, command.entropy, now)
        decision = self._dealt(command, table, hand, seat=command.seat)
        if draw is not None:  # pragma: no branch - contributions are refused without one
            receipt = entropy_receipt_body(str(table.id), draw, seat=command.seat,
                                           entropy=command.entropy,
                                           commitment=command.commitment,
                                           table_version=version + 1)
            decision.outcome = replace(decision.outcome, detail=json.dumps(receipt))
        return decision

    def _close_draw(self, command: CloseDraw) -> Decision:
        table = self.get_table(command.table_id)
        return self._dealt(command, table, table.close_draw(command.number, command.now))

    def _close_table(self, command: CloseTable) -> Decision:
        table = self.get_table(command.table_id)
        table.close(command.reason)
        return Decision(Outcome(command.kind, table), [table])

    def _abort_table(self, command: AbortTable) -> Decision:
        table = self.get_table(command.table_id)
        voided = table.abort(command.reason)
        return Decision(Outcome(command.kind, table, detail=voided or ""), [table])

    def _replace_seat(self, command: ReplaceSeat) -> Decision:
        table = self.get_table(command.table_id)
        table.replace_seat(command.seat, command.player_id)
        return Decision(Outcome(command.kind, table, seat=command.seat), [table])

    def _reissue_seat_token(self, command: ReissueSeatToken) -> Decision:
        table = self.get_table(command.table_id)
        table.reissue_token(command.seat)
        return Decision(Outcome(command.kind, table, seat=command.seat), [table])

    def _act(self, command: Act) -> Decision:
        seen, hand = self._acting(command)
        hand.act(command.seat, command.action)
        return self._hand_decision(command, hand, seen)

    def _check_act(self, command: Act) -> Outcome:
        seen, hand = self._acting(command)
        hand.check(command.seat, command.action)
        return Outcome(command.kind, None, hand, seat=command.seat, table_version=seen.version)

    def _acting(self, command: Act) -> tuple[Table, GameHand]:
        """The table and hand `command` acts on, once the seat, the version it names and
        the kind of its action are checked."""
        seen = self._table_now(command)
        if command.token_generation is not None:
            check_token_generation(seen, command.seat, command.token_generation)
        _check_kind(seen.game_name, command.action.kind)
        hand = self._acting_hand(command, seen)
        if command.player_id is not None:
            _check_seat_holder(hand, command.seat, command.player_id)
        if command.expected_version is not None and command.expected_version != hand.version:
            raise Conflict(ServiceReason.STALE_VERSION,
                           f"the hand is at version {hand.version}, not"
                           f" {command.expected_version}: read it again and decide anew")
        return seen, hand

    def _time_out(self, command: TimeOut) -> Decision:
        seen = self._table_now(command)
        hand = self._acting_hand(command, seen)
        taken = hand.time_out(command.seat, command.now)
        return self._hand_decision(command, hand, seen, detail=taken.kind)

    def _table_now(self, command: HandCommand) -> Table:
        """The command's table: on a first attempt the cached copy, which the decision names
        as a guard (`_hand_decision`), so a seat token reissued or a hand voided on another
        replica since still counts at once: the append is refused and the retry reads the
        table from the store."""
        return self.get_table(parse_id(command.table_id, "table id"))

    def _acting_hand(self, command: HandCommand, seen: Table) -> GameHand:
        if command.hand_id is not None and command.hand_id in seen.voided_hands:
            raise RuleError(Reason.HAND_VOIDED,
                            f"hand {command.hand_id} was voided: the table was aborted")
        return self._hand_of(command.table_id, command.hand_id, current_only=True)

    def _hand_decision(self, command: HandCommand, hand: GameHand, seen: Table,
                       detail: str = "") -> Decision:
        changed: list[Aggregate] = [hand]  # type: ignore[list-item]  # an aggregate
        table = None
        if hand.is_over:
            table = self.get_table(command.table_id)
            table.record_hand(hand)
            changed.append(table)
        decision = Decision(Outcome(command.kind, table, hand, seat=command.seat,
                                    detail=detail, table_version=seen.version), changed,
                            guards={seen.id: seen.version})
        if self.metrics is not None:
            decision.on_saved.append(game_event_metrics(self.metrics, hand))
        return decision

    def check_seat_token(self, table_id: str | UUID, seat: int, player_id: str,
                         token_generation: int) -> Table:
        """The table, if a seat token of this player and generation still holds the seat
        (read through to the store: a reissue on another replica counts at once)."""
        table = self._fresh_table(parse_id(table_id, "table id"))
        check_token_generation(table, seat, token_generation)
        if not 0 <= seat < table.players or table.seats[seat] != player_id:
            raise PermissionDenied(ServiceReason.WRONG_SEAT,
                                   "the seat token's player no longer holds that seat")
        return table

    def _fresh_table(self, table_id: UUID) -> Table:
        """The table fast-forwarded from the store (never the optimistic cached copy)."""
        with self.cache.fresh():
            return self.get_table(table_id)

    # -- queries ----------------------------------------------------------------------------

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

    def _stored_events(self, stream: UUID) -> list[StoredEvent]:
        events = self.events
        if not isinstance(events, ChainedEventStore):  # pragma: no cover - construct_event_store
            raise TypeError("the referee's event store is a ChainedEventStore")
        return events.stored(stream)

    def _stored_hand(self, hand_id: str | UUID) -> tuple[GameHand, list[StoredEvent]]:
        """A hand replayed from its stored events as the store holds them now (no cache),
        and those events; DataLoss when they no longer replay."""
        uid = parse_id(hand_id, "hand id")
        stored = self._stored_events(uid)
        if not stored:
            raise NotFound(ServiceReason.HAND_NOT_FOUND, f"no hand {uid}")
        return self._replayed(uid, stored), stored

    def _replayed(self, uid: UUID, stored: list[StoredEvent]) -> GameHand:
        """The hand these stored events replay to; DataLoss when they no longer replay."""
        try:
            hand = replay(None, map(self.mapper.to_domain_event, stored))
        except (EventSourcingError, ValueError, TypeError, KeyError, AttributeError,
                RuleError) as error:
            raise DataLoss(ServiceReason.EVENTS_TAMPERED,
                           f"the stored events of hand {uid} do not replay"
                           f" ({type(error).__name__}: {error}); VerifyHand names the"
                           " broken check") from None
        try:
            game_of(hand)
        except RuleError:
            raise NotFound(ServiceReason.HAND_NOT_FOUND, f"no hand {uid}") from None
        return hand  # type: ignore[no-any-return]  # game_of checked it is a game's hand

    def unsigned_evidence(self, hand_id: str | UUID, *,
                          since_size: int | None = None) -> dict[str, Any]:
        """A stored hand's evidence as the store holds it now (docs/fairness.md), unsigned."""
        hand, stored = self._stored_hand(hand_id)
        evidence = build_evidence(game_of(hand), hand, stored, self.ledger)
        ledger = evidence.get("ledger")
        if since_size and ledger is not None:
            if not 0 < since_size <= ledger["size"]:
                raise InvalidArgument(
                    ServiceReason.INVALID_REQUEST,
                    f"the ledger holds {ledger['size']} hands; no consistency proof from"
                    f" {since_size}")
            ledger["consistency"] = {"from_size": since_size,
                                     "proof": self.ledger.consistency(since_size,
                                                                      ledger["size"])}
        return evidence

    def export_evidence(self, hand_id: str | UUID, *,
                        since_size: int | None = None) -> dict[str, Any]:
        """A stored hand's evidence, signed by the referee (`fiftyk verify` checks it)."""
        return self.signer.sign(self.unsigned_evidence(hand_id, since_size=since_size))

    def entropy_receipt(self, outcome: Outcome) -> dict[str, Any] | None:
        """The referee's signed receipt for an accepted commitment or contribution
        (docs/fairness.md#receipts); None for any other outcome."""
        if outcome.kind != ContributeEntropy.KIND or not outcome.detail.startswith("{"):
            return None
        return self.signer.sign(json.loads(outcome.detail))

    def signed_ruling(self, transcript_text: str, result: Mapping[str, Any]) -> dict[str, Any]:
        """A ruling signed by the referee: the submitted transcript's SHA-256 and the result."""
        return self.signer.sign({
            "format": RULING_FORMAT,
            "transcript_sha256": hashlib.sha256(transcript_text.encode()).hexdigest(),
            "result": dict(result),
            "engine": {"name": DISTRIBUTION, "version": engine_version()},
            "time": datetime.now(UTC).isoformat(),
        })

    def verify_hand(self, hand_id: str | UUID) -> Report:
        """Check a stored hand as an auditor would: its evidence, built from the store now,
        through every check of `fiftyk verify`, plus its head as its table recorded it."""
        uid = parse_id(hand_id, "hand id")
        stored = self._stored_events(uid)
        if not stored:
            raise NotFound(ServiceReason.HAND_NOT_FOUND, f"no hand {uid}")
        chain = check_stream(str(uid), [chained_event(e) for e in stored])
        if not chain.ok:
            return Report([Line("chain", FAILED, chain.problem)])
        try:
            # The events just read and checked, not a second read: one snapshot of the store.
            hand = self._replayed(uid, stored)
        except DataLoss as error:
            return Report([Line("replay", FAILED, error.message)])
        evidence = self.signer.sign(build_evidence(game_of(hand), hand, stored, self.ledger,
                                                   chain=chain))
        report = Verifier(evidence, trusted=[self.signer.public], rules=rules_engine()).run()
        if report.ok:
            report.lines.append(self._table_link_line(evidence))
        if report.ok:
            report.lines.append(self._history_line())
        return report

    def _history_line(self) -> Line:
        """Whether the ledger extends every signed checkpoint: this process's log, brought
        up to date from the store's new records (a vanished tail makes it read the store
        again from the start), checked by a consistency proof from its kept subtrees, so
        the cost does not grow with the ledger; and whether the latest integrity audit,
        which reads the whole ledger again, found it edited."""
        self.ledger.refresh()
        log, size = self.ledger.view()
        problems = self.audit.history_problems(log, size=size)
        if problems:
            return Line("ledger history", FAILED, problems[0])
        last = self.audit.last
        if last is not None and last.history:
            return Line("ledger history", FAILED,
                        f"the integrity audit of {last.time} found: {last.history[0]}")
        return Line("ledger history", OK, f"the ledger of {size} hands extends every"
                                          " checkpoint signed before")

    def _table_link_line(self, evidence: Mapping[str, Any]) -> Line:
        """Whether the hand's head is the one its table's stream chained in."""
        head = evidence["chain"]["head"]
        if not evidence["over"]:
            return Line("table link", SKIPPED, "the hand is not over")
        table_id = parse_id(evidence["table_id"], "table id")
        for event in self._table_records(table_id, evidence["hand_id"]):
            if isinstance(event, Table.HandRecorded) and event.hand_id == evidence["hand_id"]:
                if event.hand_head is None:
                    return Line("table link", NO_CHAIN, "recorded before the hash chain")
                if event.hand_head != head:
                    return Line("table link", FAILED,
                                f"the table recorded head {event.hand_head}, the hand's"
                                f" events now hash to {head}: the hand was replaced")
                return Line("table link", OK, "the table's chain recorded this head")
        return Line("table link", FAILED, "the table has no record of this hand")

    def _table_records(self, table_id: UUID, hand_id: str) -> Iterable[Any]:
        """The table's events that may record the hand: the one event at the version the
        ledger read the record from (however long the table's history; a record moved or
        removed since is not there), or the whole stream for a hand not in the ledger."""
        recorded = self.ledger.recorded(hand_id)
        if recorded is None or recorded.table_id != str(table_id):
            return self.events.get(table_id)
        version = recorded.table_version
        stored = self.recorder.select_events(table_id, gt=version - 1, lte=version)
        return map(self.mapper.to_domain_event, stored)

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


def _normalized(command: CommandT) -> CommandT:
    """The command with its ids in their canonical text (what receipts fingerprint)."""
    if not isinstance(command, TableCommand):
        return command
    tid = str(parse_id(command.table_id, "table id"))
    if isinstance(command, HandCommand) and command.hand_id:
        return replace(command, table_id=tid, hand_id=str(parse_id(command.hand_id, "hand id")))
    return replace(command, table_id=tid)


def check_token_generation(table: Table, seat: int, generation: int) -> None:
    """Unauthenticated (`TOKEN_REVOKED`) when a newer token was issued for the seat."""
    if generation != table.token_generation(seat):
        raise Unauthenticated(ServiceReason.TOKEN_REVOKED,
                              "this seat token was replaced by a newer one"
                              " (ReissueSeatToken or ReplaceSeat)")


def _check_kind(game: str, kind: str) -> None:
    """INVALID_ACTION, naming the game's kinds (message and `kinds` metadata), unless
    `kind` is one of them (kinds are lower-case words, compared exactly) or a kind most
    trick games share, which a game without it refuses with its own reason (Shengji's
    "pass": `PASS_NOT_ALLOWED`)."""
    kinds = [spec.kind for spec in game_named(game).action_kinds]
    if kind not in kinds and kind not in (PLAY, PASS, RESIGN):
        listed = ", ".join(kinds)
        hint = " (kinds are written in lower case)" if kind.lower() in kinds else ""
        raise InvalidArgument(Reason.INVALID_ACTION,
                              f"{game} has no {shown(kind)} action: its kinds are {listed}"
                              f"{hint}", metadata={"game": game, "kind": kind, "kinds": listed})


def _check_seat_holder(hand: GameHand, seat: int, player_id: str) -> None:
    """PermissionDenied unless `player_id` held `seat` when the hand was dealt."""
    players = hand.seat_players or []
    if not 0 <= seat < len(players) or players[seat] != player_id:
        raise PermissionDenied(ServiceReason.WRONG_SEAT,
                               "the seat token's player does not hold that seat in this hand")


def _page_size(limit: int) -> int:
    if limit <= 0:
        return DEFAULT_PAGE_SIZE
    return min(limit, MAX_PAGE_SIZE)


__all__ = [
    "CREATE_SCOPE",
    "MAX_PLACEMENT_DRAWS",
    "TABLE_SNAPSHOT_INTERVAL",
    "FeedEvent",
    "FeedPage",
    "HandScoreRow",
    "HistoryPage",
    "MetricsHook",
    "NamedCommands",
    "Outcome",
    "Referee",
    "ScoreSheet",
    "parse_id",
    "replay",
]
