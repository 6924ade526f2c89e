"""The Shengji hand aggregate: the paced deal, declarations, the kitty, tricks, the result.

Public command methods validate and decide; they then trigger events whose methods only
mutate (the shuffle seed, the commitment, the dealer, the trick's winner, the forced play of
a failed throw and the result are all decided before an event and carried in it), so
replaying the events rebuilds the hand exactly. The hand satisfies the game boundary's
`GameHand` protocol (`domain/game.py`).

Phases, one module each, each a part of the aggregate with that phase's commands, checks
and answers: `declaring.py` (the deal, round by round, with a declaration window after each
round under `declare_pacing=rounds`, or one final window), `burying.py` (the dealer has
taken the kitty and must bury), `playing.py` (tricks), then `over`. What they share (the
hand's state, the events they record) is `hand_state.py`; this module keeps the aggregate
itself: the deal, the dispatch of an action to its phase, the events, the answers.
It is about 500 lines because an event's methods must stay on the aggregate's class (a
stored event's topic names it).

Decisions of the live protocol (docs/shengji.md#the-deal-and-declarations):

- In a window a seat "declares nothing" with a DECLARE action naming no cards (a `pass`
  action is `PASS_NOT_ALLOWED`); any seat may speak in any order while the window is open,
  so `to_act` names the first seat (from the seat dealt first) that has not yet spoken.
- `time_out` during a window is the table's timer: the window closes (every seat that has
  not spoken declares nothing), recorded as `WindowClosed` with `by="timer"`.
- `legal_actions` in a window lists the card sets the seat may declare (plays of kind
  `declaration`, sent as DECLARE actions); while burying, the dealer's lowest allowed cards
  (kind `bury`); while playing, `play.py`'s bounded answer (constraints plus examples).
- The `dealer` argument of a deal is not Shengji's: a first hand (no `dealer` in the carry)
  takes its dealer from the declarations, later hands from the rotation carried by the
  previous hand. Until a first hand's dealer is fixed, `dealer` holds seat 0 (the default)
  and `dealer_fixed` is false.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from fiftyk_referee.domain.aggregate import Aggregate, event
from fiftyk_referee.domain.cards import Card, parse_card
from fiftyk_referee.domain.deal import SEED_BYTES, commitment, deal_inputs, shuffled
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import PASS, PLAY, RESIGN, Action, HandRecord, LegalActions
from fiftyk_referee.domain.observer import Viewer, seat_of, sees_cards_of, sees_everything
from fiftyk_referee.domain.shengji.burying import Burying, check_bury
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, LEVELS, TrumpOrder, trump_order
from fiftyk_referee.domain.shengji.declaring import (
    BY_TIMER,
    DEFAULT_FIRST_DEALER,
    DeclarationOutcome,
    Declaring,
    base_deck,
    check_deck,
    declaration_rung,
    first_hand_dealer,
    judge_declarations,
    overcall,
    window_of,
)
from fiftyk_referee.domain.shengji.hand_state import (
    BURY,
    BURYING,
    DECLARE,
    DECLARING,
    PLAYING,
    rank_name,
)
from fiftyk_referee.domain.shengji.play import Lead
from fiftyk_referee.domain.shengji.playing import Playing
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import PLAYERS, ShengjiRules
from fiftyk_referee.domain.shengji.scoring import level_progress, team_of
from fiftyk_referee.domain.shengji.tricks import TrickRules
from fiftyk_referee.domain.shengji.views import (
    GAME_NAME,
    OVER,
    Declaration,
    FailedThrow,
    ShengjiResult,
    ShengjiView,
)

HAND_NAMESPACE = uuid5(NAMESPACE_URL, "https://fiftyk-referee/shengji/hand")
NEXT_DEALER = "next_dealer"  # the carry key the table reads for who deals next
FIRST_SEAT_OF_FIRST_HAND = 0


@lru_cache(maxsize=64)
def _rules_from_text(text: str) -> ShengjiRules:
    return ShengjiRules.from_json(json.loads(text))


def rules_of(spec: Mapping[str, Any]) -> ShengjiRules:
    """The rules a stored spec describes (cached: events carry specs, not objects)."""
    return _rules_from_text(json.dumps(spec, sort_keys=True))


def hand_id_for(table_id: str, number: int) -> UUID:
    """The deterministic id of a table's n-th Shengji hand."""
    return uuid5(HAND_NAMESPACE, f"{table_id}/{number}")


def _action_json(seat: int, kind: str, cards: tuple[str, ...], round: int | None
                 ) -> dict[str, Any]:
    """One transcript action: `{"seat": s, "play": [...]}`, a bury, or a declaration (with
    the deal round it followed)."""
    action: dict[str, Any] = {"seat": seat, kind: list(cards)}
    if round is not None:
        action["round"] = round
    return action


class ShengjiHand(Declaring, Burying, Playing, Aggregate):
    """One Shengji hand, from the paced deal to the result."""

    # The record of its seat-entropy draw (a class default: hands stored before it have none).
    draw_record: Mapping[str, Any] | None = None

    @staticmethod
    def create_id(table_id: str, number: int) -> UUID:
        """Hands are identified by table and number."""
        return hand_id_for(table_id, number)

    @classmethod
    def deal_new(
        cls,
        *,
        table_id: str,
        number: int,
        rules: ShengjiRules,
        dealer: int | None = None,
        levels: Sequence[str] | None = None,
        room_points: Sequence[int] | None = None,
        deck: Sequence[str] | None = None,
        seed: bytes | None = None,
        seat_players: Sequence[str | None] | None = None,
        contributions: Sequence[str] | None = None,
        draw: Mapping[str, Any] | None = None,
    ) -> ShengjiHand:
        """Deal a hand (first round, or all rounds under `declare_pacing=final`).

        `dealer` None is a first hand (争庄): both `levels` must then be equal.
        `contributions` (hex per seat, empty for none) makes it a seat-entropy deal
        (`domain/deal.py`, `fiftyk-shuffle/2`) of the seed: the kitty is part of its deck.
        """
        if dealer is not None and (isinstance(dealer, bool) or dealer not in range(PLAYERS)):
            raise RuleError(Reason.INVALID_SEAT, "dealer must be a seat 0..3 or null")
        levels = list(levels) if levels is not None else [rules.start_level] * 2
        if len(levels) != len(("team 0", "team 1")) or any(lv not in LEVELS for lv in levels):
            raise RuleError(Reason.INVALID_DEAL, f"levels are two of {' '.join(LEVELS)}")
        if dealer is None and levels[0] != levels[1]:
            raise RuleError(Reason.INVALID_DEAL, "a first hand (no dealer) needs equal levels")
        room = list(room_points) if room_points is not None else [0] * PLAYERS
        if len(room) != PLAYERS or not all(isinstance(p, int) and not isinstance(p, bool)
                                           for p in room):
            raise RuleError(Reason.INVALID_DEAL, "room_points are four integers")
        if deck is None:
            seed = seed if seed is not None else secrets.token_bytes(SEED_BYTES)
            dealt, digest = shuffled(seed, base_deck(rules.packs),
                                     hand_id=str(cls.create_id(table_id, number)),
                                     contributions=contributions)
            cards = [str(c) for c in dealt]
        else:
            cards = check_deck(rules, deck)
            seed, contributions, draw = None, None, None
            digest = commitment(None, cards)
        hand = cls(
            table_id=table_id, number=number, ruleset=rules.to_json(), dealer=dealer,
            levels=levels, room_points=room, deck=cards, commitment=digest,
            seed=seed.hex() if seed is not None else None,
            seat_players=list(seat_players) if seat_players is not None else None,
            contributions=list(contributions) if contributions is not None else None,
            draw=dict(draw) if draw is not None else None,
        )
        hand._deal_next()
        return hand

    @event("Dealt")
    def __init__(self, table_id: str, number: int, ruleset: dict[str, Any], dealer: int | None,
                 levels: list[str], room_points: list[int], deck: list[str], commitment: str,
                 seed: str | None, seat_players: list[str | None] | None,
                 contributions: list[str] | None = None,
                 draw: dict[str, Any] | None = None) -> None:
        self.table_id = table_id
        # Every seat's contribution to a seat-entropy deal (None: not one; docs/fairness.md).
        self.contributions = tuple(contributions) if contributions is not None else None
        self.draw_record = draw  # its draw's record (domain.table.draw_record); None: none
        self.number = number
        self.players = PLAYERS
        self.ruleset_spec = ruleset
        self.rules = rules_of(ruleset)
        self.tricks = TrickRules.of(self.rules)
        self.seat_players = list(seat_players) if seat_players is not None else None
        self.given_dealer = dealer
        self.dealer = dealer if dealer is not None else DEFAULT_FIRST_DEALER
        self.dealer_fixed = dealer is not None
        self.levels = (levels[0], levels[1])
        self.room_points = tuple(room_points)
        self.deck = tuple(deck)
        self.commitment = commitment
        self.seed = seed
        self.first_seat = FIRST_SEAT_OF_FIRST_HAND if dealer is None else (dealer + 1) % PLAYERS
        team = team_of(dealer) if dealer is not None else 0
        self.rank = LEVEL_RANK[levels[team]]
        self.order: TrumpOrder = trump_order(self.rank, None, self.rules.permanent_two)
        self.phase = DECLARING
        self.round = 0
        self.hands: list[list[Card]] = [[] for _ in range(PLAYERS)]
        self.spoken: set[int] = set()
        self.declaration: Declaration | None = None
        self.first_declarer: int | None = None
        self.kitty_dealt = tuple(parse_card(c) for c in deck[PLAYERS * self.rules.hand_size:])
        self.kitty: tuple[Card, ...] = ()
        self.trick: list[tuple[int, tuple[Card, ...]]] = []
        self.lead: Lead | None = None
        self.best_seat: int | None = None
        self.best_key = -1
        self.leader: int | None = None
        self.turn: int | None = None
        self.collected = [0] * PLAYERS
        self.tricks_played = 0
        self.last_lead_largest = 0
        self.last_winner: int | None = None
        self.throws_failed: list[dict[str, Any]] = []
        self.failed_seats: list[int] = []
        self.forced_next = False
        # The transcript's actions in order, as (seat, "declare" | "bury" | "play", cards,
        # round or None): immutable entries, so copying the hand for a command copies the
        # list, not each entry (`actions` gives them as the transcript's JSON objects).
        self.action_log: list[tuple[int, str, tuple[str, ...], int | None]] = []
        self.result: dict[str, Any] | None = None

    # -- queries ----------------------------------------------------------------------------

    @property
    def actions(self) -> list[dict[str, Any]]:
        """The actions so far in transcript form: `{"seat": s, "play": [...]}`, a bury, or a
        declaration with its round."""
        return [_action_json(*action) for action in self.action_log]

    @property
    def to_act(self) -> int | None:
        """The seat the hand waits for (in a window: the first that has not spoken)."""
        if self.phase == DECLARING:
            for step in range(PLAYERS):
                seat = (self.first_seat + step) % PLAYERS
                if seat not in self.spoken:
                    return seat
            return None
        if self.phase == BURYING:
            return self.dealer
        return self.turn

    # -- commands ---------------------------------------------------------------------------

    def act(self, seat: int, action: Action) -> None:
        """Validate and apply one seat's action (a `RuleError` with a reason if refused)."""
        cards = self._checked_action(seat, action)
        if action.kind == DECLARE:
            self.declare(seat, cards, window=window_of(action.value))
        elif action.kind == BURY:
            self.bury(seat, cards)
        else:
            self.play(seat, cards)

    def check(self, seat: int, action: Action) -> None:
        """Refuse `action` as `act` would, changing nothing and reading only what the seat
        sees: its own cards (the kitty too, for the dealer about to bury), the open window,
        the standing declaration and the trick so far. A lead is checked for its form alone
        (one suit group): whether a throw stands depends on the other seats' cards, so only
        the real play decides it."""
        cards = self._checked_action(seat, action)
        if action.kind == DECLARE:
            self._checked_declaration(seat, cards, window_of(action.value))
        elif action.kind == BURY:
            self._check_bury(seat, cards)
        else:
            self._checked_play(seat, cards)

    def _checked_action(self, seat: int, action: Action) -> list[Card]:
        """The action's cards, if its form and the hand's state allow a kind of Shengji's."""
        cards = self._parse(action.cards)
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        self._check_seat(seat)
        if action.value is not None and action.kind != DECLARE:
            raise RuleError(Reason.INVALID_ACTION, f"a Shengji {action.kind} takes no value")
        if action.kind == PASS:
            raise RuleError(ShengjiReason.PASS_NOT_ALLOWED, "nobody passes in Shengji")
        if action.kind == RESIGN:
            raise RuleError(Reason.INVALID_ACTION, "nobody resigns in Shengji: the hand is"
                            " played to its last trick")
        if action.kind not in (DECLARE, BURY, PLAY):
            raise RuleError(Reason.INVALID_ACTION, f"Shengji has no {action.kind!r} action")
        return cards

    def time_out(self, seat: int, now: datetime) -> Action:
        """Act for a seat whose clock ran out (docs/shengji.md#timeouts); returns the action."""
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        self._check_seat(seat)
        deadline = self.turn_deadline()
        if deadline is None:
            raise RuleError(Reason.NO_TIMEOUT_CONFIGURED, "this table has no turn clock")
        if self.phase == DECLARING:
            if seat in self.spoken:
                raise RuleError(Reason.NOT_YOUR_TURN, f"seat {seat} has spoken in this window")
        elif seat != self.to_act:
            raise RuleError(Reason.NOT_YOUR_TURN, f"seat {seat} is not the seat to act")
        if now < deadline:
            raise RuleError(Reason.TURN_NOT_EXPIRED, f"seat {seat}'s time runs until {deadline}")
        if self.phase == DECLARING:
            self._close_window(BY_TIMER)
            return Action(DECLARE, ())
        if self.phase == BURYING:
            cards = self.lowest_bury()
            self.bury(seat, cards, timeout=True)
            return Action(BURY, tuple(map(str, cards)))
        if self.lead is None:
            lowest = min(self.hands[seat], key=self.order.sort_key)
            play = [lowest]
        else:
            plays, _ = self.tricks.examples(self.hands[seat], self.lead, self.order)
            play = plays[0]
        self.play(seat, play, timeout=True)
        return Action.play([str(c) for c in play])

    # -- events (mutation only) -------------------------------------------------------------

    @event("RoundDealt")
    def _round_dealt(self, round: int, cards: list[list[str]]) -> None:
        # Each seat's new cards are in the event so a seat's stream can show it its own.
        for seat, dealt in enumerate(cards):
            self.hands[seat].extend(parse_card(c) for c in dealt)
        self.round = round
        self.spoken = set()

    @event("DeclaredNothing")
    def _spoke(self, seat: int) -> None:
        self.spoken.add(seat)

    @event("Declared")
    def _declared(self, seat: int, cards: list[str], round: int, rung: int,
                  suit: str | None) -> None:
        self.declaration = Declaration(seat, tuple(cards), round, rung, suit)
        if self.first_declarer is None:
            self.first_declarer = seat
        self.spoken = set()
        self.action_log.append((seat, "declare", tuple(cards), round))

    @event("WindowClosed")
    def _window_closed(self, round: int, by: str) -> None:
        del round, by  # for readers of the stream
        self.spoken = set()

    @event("KittyTaken")
    def _kitty_taken(self, dealer: int, suit: str | None, kitty: list[str]) -> None:
        del kitty  # the kitty is in the deck; the event names it for the audit stream
        self.dealer = dealer
        self.dealer_fixed = True
        self.order = trump_order(self.rank, suit, self.rules.permanent_two)
        self.hands[dealer].extend(self.kitty_dealt)
        self.phase = BURYING

    @event("KittyBuried")
    def _buried(self, seat: int, cards: list[str], timeout: bool) -> None:
        del timeout
        buried = [parse_card(c) for c in cards]
        hand = self.hands[seat]
        for card in buried:
            hand.remove(card)
        self.kitty = tuple(buried)
        self.phase = PLAYING
        self.leader = seat
        self.turn = seat
        self.action_log.append((seat, "bury", tuple(cards), None))

    @event("ThrowFailed")
    def _throw_failed(self, seat: int, attempted: list[str], forced: list[str],
                      action: int) -> None:
        self.throws_failed.append({"action": action, "seat": seat, "forced": list(forced)})
        self.failed_seats.append(seat)
        self.action_log.append((seat, "play", tuple(attempted), None))  # written as attempted
        self.forced_next = True

    @event("CardsPlayed")
    def _played(self, seat: int, cards: list[str], key: int | None, timeout: bool) -> None:
        del timeout
        played = tuple(parse_card(c) for c in cards)
        hand = self.hands[seat]
        for card in played:
            hand.remove(card)
        if self.lead is None:
            self.lead = self.tricks.read(played, self.order)
        if self.forced_next:
            self.forced_next = False  # the attempted throw is the transcript's action
        else:
            self.action_log.append((seat, "play", tuple(cards), None))
        if key is not None:
            self.best_key = key
            self.best_seat = seat
        self.trick.append((seat, played))
        self.turn = (seat + 1) % PLAYERS

    @event("TrickWon")
    def _trick_won(self, seat: int, points: int, leader: int | None) -> None:
        self.collected[seat] += points
        self.tricks_played += 1
        self.last_winner = seat
        self.last_lead_largest = self.lead.largest if self.lead else 0
        self.trick = []
        self.lead = None
        self.best_seat = None
        self.best_key = -1
        self.leader = leader
        self.turn = leader

    @event("HandEnded")
    def _ended(self, result: dict[str, Any], seed: str | None) -> None:
        del seed  # revealed in the event for verification
        self.result = result
        self.phase = OVER
        self.turn = None

    # -- answers ----------------------------------------------------------------------------

    def legal_actions(self, seat: int, limit: int | None = None) -> LegalActions:
        """What `seat` may do now, at most `limit` example plays (`play.py`: bounded answers)."""
        answer = self._legal_actions(seat)
        if limit is None or len(answer.plays) <= limit:
            return answer
        return replace(answer, plays=answer.plays[:max(limit, 0)], truncated=True)

    def _legal_actions(self, seat: int) -> LegalActions:
        if self.is_over or isinstance(seat, bool) or seat not in range(PLAYERS):
            return LegalActions(seat=seat)
        if self.phase == DECLARING:
            return self._declare_actions(seat)
        if self.phase == BURYING:
            return self._bury_actions(seat)
        return self._play_actions(seat)

    def view(self, viewer: Viewer) -> ShengjiView:
        """The hand as `viewer` may see it: never another seat's cards or a hidden kitty."""
        seat = seat_of(viewer)
        if seat is not None and seat not in range(PLAYERS):
            raise RuleError(Reason.INVALID_SEAT, "seat must be 0..3")
        audit = sees_everything(viewer)
        own = tuple(str(c) for c in sorted(self.hands[seat], key=self.order.sort_key)) \
            if seat is not None else ()
        kitty_seen = bool(self.kitty) and (audit or sees_cards_of(viewer, self.dealer))
        deadline = self.turn_deadline()
        return ShengjiView(
            hand_id=str(self.id), table_id=self.table_id, number=self.number,
            version=self.version, ruleset=dict(self.ruleset_spec), phase=self.phase,
            seat=seat, cards=own, counts=tuple(len(h) for h in self.hands),
            dealer=self.dealer if self.dealer_fixed else None, levels=self.levels,
            trump_rank=rank_name(self.rank),
            trump_suit=self.order.suit if self.phase != DECLARING else None,
            declaration=self.declaration, round=self.round, spoken=tuple(sorted(self.spoken)),
            kitty_count=self.rules.kitty_size,
            kitty=tuple(map(str, self.kitty)) if kitty_seen else None,
            trick=tuple((s, tuple(map(str, cs))) for s, cs in self.trick),
            leader=self.leader, to_act=self.to_act, winning=self.best_seat,
            collected=tuple(self.collected), tricks_played=self.tricks_played,
            throws_failed=tuple(FailedThrow(int(t["seat"]), tuple(t["forced"]))
                                for t in self.throws_failed),
            commitment=self.commitment, seed=self.seed if self.is_over or audit else None,
            result=None if self.result is None else ShengjiResult.from_json(self.result),
            turn_deadline=deadline,
            hands=tuple(tuple(map(str, h)) for h in self.hands) if audit else None,
            deck=self.deck if audit else None,
        )

    def record(self) -> HandRecord:
        """What the finished hand leaves on the match: level progress, and the next deal's carry."""
        if self.result is None:
            raise RuleError(Reason.HAND_IN_PROGRESS, "the hand is not over")
        result = self.result
        progress = level_progress(result)
        room = result["room_points"]
        return HandRecord(
            hand_id=str(self.id),
            totals={f"team:{t}": Decimal(progress[t]) for t in range(len(progress))},
            carry={NEXT_DEALER: result["next_dealer"], "levels": list(result["levels"]["after"]),
                   "room_points": list(room["after"]) if room else list(self.room_points),
                   "game_over": result["game_over"], "game_winner": result["game_winner"]},
        )

    def transcript(self) -> dict[str, Any]:
        """The hand as a `fiftyk-transcript/1` transcript with `"game": "shengji"`."""
        data: dict[str, Any] = {
            "format": "fiftyk-transcript/1",
            "game": GAME_NAME,
            "ruleset": self.rules.to_json(),
            "players": PLAYERS,
            "dealer": self.given_dealer,
            "levels": list(self.levels),
            "room_points": list(self.room_points),
            "deck": list(self.deck),
            "actions": self.actions,
        }
        if self.is_over:  # the seed is revealed to everyone once the hand is over
            data["deal"] = deal_inputs(self.seed, self.commitment, hand_id=str(self.id),
                                       contributions=self.contributions,
                                       draw=self.draw_record)
        return data


__all__ = [
    "BURY", "BURYING", "DECLARE", "DECLARING", "GAME_NAME", "NEXT_DEALER", "OVER", "PLAYING",
    "Declaration",
    "DeclarationOutcome", "ShengjiHand", "ShengjiView", "check_bury", "check_deck",
    "declaration_rung", "first_hand_dealer", "hand_id_for", "judge_declarations", "overcall",
    "rules_of",
]
