"""The referee's use cases: get the aggregates, let the domain decide, save what changed.

Every command reads like the `eventsourcing` library's examples: load a table or hand,
call one domain method, and return a `Decision` naming the aggregates it changed. The
command runner (`runner.py`) saves them in one transaction with the command's receipt,
retries lost races and answers repeated request ids; the aggregate cache (`cache.py`)
serves reads and private copies. A hand that ends is recorded on its table
(`Table.record_hand`) in the same transaction as the hand's last events.

The use cases know games only through the game boundary (`domain/game.py`): tables name
their game, hands are `GameHand`s, and the registry (`domain/games.py`) finds a game by name.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeVar
from uuid import UUID

from fiftyk_referee.domain.aggregate import Aggregate
from fiftyk_referee.domain.errors import Reason, RuleError, shown
from fiftyk_referee.domain.game import PASS, PLAY, RESIGN, GameHand
from fiftyk_referee.domain.games import game_named
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.commands import (
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
from fiftyk_referee.service.core.queries import Queries, parse_id
from fiftyk_referee.service.core.runner import CommandRunner, Decision, Outcome
from fiftyk_referee.service.errors import (
    Conflict,
    InvalidArgument,
    PermissionDenied,
    ServiceReason,
    Unauthenticated,
)
from fiftyk_referee.service.ops.metrics import game_event_metrics
from fiftyk_referee.service.trust.entropy_receipts import (
    SIGNATURE_BYTES,
    SIGNED_BYTES,
    SIGNED_COMMITMENT,
    entropy_receipt_body,
    entropy_statement,
    seat_signed,
)

# Random table ids drawn at most for a shard's new table (service/core/shards.py): with N shards a
# draw misses with probability 1 - 1/N, so 1,000 draws all miss practically never.
MAX_PLACEMENT_DRAWS = 1_000
SEAT_KEY_BYTES = 32  # an Ed25519 public key
CommandT = TypeVar("CommandT", bound=Command)


class UseCases(Queries):
    """Every command of the referee: `execute` runs one through the runner to its outcome."""

    runner: CommandRunner
    _owns: Callable[[UUID], bool] | None

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
        key = command.public_key
        if key is not None and len(key) != SEAT_KEY_BYTES:
            raise RuleError(Reason.INVALID_SEAT_KEY,
                            f"a seat key is an Ed25519 public key: {SEAT_KEY_BYTES} bytes")
        table.join(chosen, command.player_id, key.hex() if key is not None else None)
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
        signature = self._seat_signature(table, command)
        hand: GameHand | None = None
        if command.commitment is not None:
            table.commit_entropy(command.seat, command.commitment, now, signature)
        else:
            hand = table.contribute(command.seat, command.entropy, now, signature)
        decision = self._dealt(command, table, hand, seat=command.seat)
        if draw is not None:  # pragma: no branch - contributions are refused without one
            # The unsigned receipt rides in the outcome's detail, which a replay keeps.
            receipt = entropy_receipt_body(str(table.id), draw, seat=command.seat,
                                           entropy=command.entropy,
                                           commitment=command.commitment,
                                           table_version=version + 1)
            decision.outcome = replace(decision.outcome, detail=json.dumps(receipt))
        return decision

    @staticmethod
    def _seat_signature(table: Table, command: ContributeEntropy) -> str | None:
        """The seat key's signature of what the command sends (hex), checked; None when the
        seat bound no key (a signature is then ignored) or sent none (the table refuses)."""
        key, draw = table.seat_key(command.seat), table.draw
        if key is None or not command.signature or draw is None:
            return None
        if command.commitment is not None:
            kind, digest = SIGNED_COMMITMENT, command.commitment.hex()
        else:
            kind, digest = SIGNED_BYTES, hashlib.sha256(command.entropy).hexdigest()
        statement = entropy_statement(str(table.id), draw["number"], draw["commitment"], kind,
                                      digest)
        if len(command.signature) != SIGNATURE_BYTES \
                or not seat_signed(key, command.signature.hex(), statement):
            raise RuleError(Reason.ENTROPY_SIGNATURE_INVALID,
                            f"the signature is not seat {command.seat}'s key's over this"
                            f" {kind} (docs/fairness.md#seat-keys)")
        return command.signature.hex()

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
    trick games share, which a game without it refuses with its own reason (e.g.
    `PASS_NOT_ALLOWED` where nobody passes)."""
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


__all__ = ["MAX_PLACEMENT_DRAWS", "UseCases", "check_token_generation"]
