"""The 斗地主 hand aggregate: the deal, the bidding, the 底牌, the play, the result.

Public command methods validate and decide; they then record events whose methods only
mutate (the landlord, the end of a round of play and the result are decided by the command
and carried in events of their own), so replaying the events rebuilds the hand exactly and
the event stream reads as the referee's account. The hand satisfies the game boundary's
`GameHand` protocol (`domain/game.py`).
Its length (about 640 lines) is one aggregate whose event methods must stay on its class (a
stored event's topic names it); the bidding's rules are `bidding.py`'s, the combinations'
`combinations.py`'s and `legal.py`'s, the score's `scoring.py`'s.

Decisions:

- The deal gives 17 cards to each seat, one at a time from the seat after the dealer; the
  last three cards of the deck are the 底牌. The seat after the dealer bids first.
- A `pass` is the word for "no" in the bidding (不叫, 不抢) and in the play (要不起).
- When the bidding ends with a landlord, it takes the 底牌 at once (`LandlordChosen`
  shows them to every viewer) and leads. When everybody passed, the hand ends as a redeal:
  no landlord, every score 0, and the table deals its next hand.
- Two passes in a row after a play end the round (`TrickEnded`): its player leads again.
- The hand ends when a seat plays its last card.
- Nobody resigns in 斗地主: a hand is played to its end (`resign` is `INVALID_ACTION`).
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from fiftyk_referee.domain.aggregate import Aggregate, AggregateEvent, event
from fiftyk_referee.domain.cards import Card, format_cards, make_deck, parse_card, sort_key
from fiftyk_referee.domain.deal import SEED_BYTES, commitment, deal, shuffled
from fiftyk_referee.domain.doudizhu.bidding import (
    BID,
    CALL,
    PASS,
    ROB_KIND,
    BidEntry,
    new_auction,
)
from fiftyk_referee.domain.doudizhu.combinations import (
    BOMB,
    ROCKET,
    Combination,
    classify,
    read_play,
)
from fiftyk_referee.domain.doudizhu.legal import legal_plays
from fiftyk_referee.domain.doudizhu.reasons import DoudizhuReason
from fiftyk_referee.domain.doudizhu.rulesets import (
    HAND_SIZE,
    KITTY_SIZE,
    PLAYERS,
    DoudizhuRules,
)
from fiftyk_referee.domain.doudizhu.scoring import (
    BOMB_FACTOR,
    HandFacts,
    capped,
    score_hand,
)
from fiftyk_referee.domain.doudizhu.views import (
    FARMER_ROLE,
    LANDLORD_ROLE,
    DoudizhuResult,
    DoudizhuView,
    Phase,
    SeatState,
    TableEntry,
    TopPlay,
)
from fiftyk_referee.domain.errors import Reason, RuleError, shown
from fiftyk_referee.domain.game import (
    PLAY,
    RESIGN,
    Action,
    Constraint,
    HandRecord,
    LegalActions,
    LegalPlay,
)
from fiftyk_referee.domain.observer import Viewer, seat_of, sees_everything

HAND_NAMESPACE = uuid5(NAMESPACE_URL, "https://fiftyk-referee/doudizhu/hand")
BIDDING, PLAYING, OVER = Phase.BIDDING, Phase.PLAYING, Phase.OVER
KINDS = (BID, CALL, ROB_KIND, PASS, PLAY)
_TEXT: dict[Card, str] = {card: str(card) for card in make_deck(1, jokers=True)}
BASE_DECK: tuple[Card, ...] = tuple(make_deck(1, jokers=True))


@lru_cache(maxsize=64)
def _rules_from_text(text: str) -> DoudizhuRules:
    return DoudizhuRules.from_json(json.loads(text))


def rules_of(spec: Mapping[str, Any]) -> DoudizhuRules:
    """The rules a stored spec describes (cached: events carry specs, not objects)."""
    return _rules_from_text(json.dumps(spec, sort_keys=True))


def hand_id_for(table_id: str, number: int) -> UUID:
    """The deterministic id of a table's n-th 斗地主 hand (racing deals collide, not fork)."""
    return uuid5(HAND_NAMESPACE, f"{table_id}/{number}")


def check_deck(deck: Sequence[str]) -> list[str]:
    """A preset deck in notation, if it is exactly one 54-card pack (else `INVALID_DEAL`)."""
    try:
        cards = [parse_card(c) for c in deck]
    except RuleError as error:
        raise RuleError(Reason.INVALID_DEAL, f"deck: {error.message}") from error
    want, have = Counter(BASE_DECK), Counter(cards)
    if have != want:
        missing = " ".join(format_cards((want - have).elements()))
        extra = " ".join(format_cards((have - want).elements()))
        raise RuleError(Reason.INVALID_DEAL,
                        f"the deck must be exactly one 54-card pack; missing"
                        f" {missing or 'nothing'}, extra {extra or 'nothing'}")
    return [_TEXT[c] for c in cards]


@dataclass(frozen=True, slots=True)
class Standing:
    """The play on the table, as the hand keeps it (a combination's values: the hand holds
    no NamedTuple, which the service's copies of aggregates would not take as immutable)."""

    kind: str
    rank: int
    length: int
    cards: tuple[Card, ...]

    def combination(self) -> Combination:
        """The play as the rules compare it."""
        return Combination(self.kind, self.rank, self.length, self.cards)


def first_bidder_of(dealer: int) -> int:
    """The seat that bids first: the one after the dealer (it received the first card)."""
    return (dealer + 1) % PLAYERS


def _missing(hand: Sequence[Card], cards: Iterable[Card]) -> list[Card]:
    """The cards (counted with repeats) that `cards` needs beyond what `hand` holds."""
    remaining = list(hand)
    missing = []
    for card in cards:
        try:
            remaining.remove(card)
        except ValueError:
            missing.append(card)
    return missing


def _sorted_text(cards: Iterable[Card]) -> tuple[str, ...]:
    return tuple(_TEXT[c] for c in sorted(cards, key=sort_key))


def _action_json(seat: int, kind: str, cards: tuple[str, ...], value: int | None
                 ) -> dict[str, Any]:
    """One transcript action: `{"seat": s, "bid": 2}`, a call, a rob, a pass or a play."""
    if kind == PLAY:
        return {"seat": seat, PLAY: list(cards)}
    if kind == BID:
        return {"seat": seat, BID: value}
    return {"seat": seat, kind: True}


class DoudizhuHand(Aggregate):
    """One 斗地主 hand, from the deal to the result."""

    # Containers set when the hand is dealt (or ends) and never changed in place: copies of
    # the hand for a command may share them (`service/core/cache.py`).
    NEVER_MUTATED: ClassVar[frozenset[str]] = frozenset(
        {"ruleset_spec", "seat_players", "result", "draw_record", "deck", "kitty"})
    draw_record: Mapping[str, Any] | None = None

    @staticmethod
    def create_id(table_id: str, number: int) -> UUID:
        """Hands are identified by table and number."""
        return hand_id_for(table_id, number)

    # -- creation ---------------------------------------------------------------------------

    @classmethod
    def deal_new(
        cls,
        *,
        table_id: str,
        number: int,
        rules: DoudizhuRules,
        dealer: int,
        deck: Sequence[str] | None = None,
        seed: bytes | None = None,
        seat_players: Sequence[str | None] | None = None,
        contributions: Sequence[str] | None = None,
        draw: Mapping[str, Any] | None = None,
    ) -> DoudizhuHand:
        """Deal a hand: shuffle from a secret seed, or use a (permitted) preset deck.

        `contributions` (hex per seat, empty for none) makes it a seat-entropy deal
        (`domain/deal.py`, `fiftyk-shuffle/2`) of the seed.
        """
        if isinstance(dealer, bool) or not isinstance(dealer, int) or dealer not in range(
                PLAYERS):
            raise RuleError(Reason.INVALID_SEAT, f"dealer must be a seat 0..{PLAYERS - 1}")
        if deck is None:
            seed = seed if seed is not None else secrets.token_bytes(SEED_BYTES)
            dealt, digest = shuffled(seed, BASE_DECK, hand_id=str(cls.create_id(table_id, number)),
                                     contributions=contributions)
            cards = [_TEXT[c] for c in dealt]
        else:
            cards = check_deck(deck)
            seed, contributions, draw = None, None, None
            digest = commitment(None, cards)
        return cls(
            table_id=table_id, number=number, ruleset=rules.to_json(), dealer=dealer,
            deck=cards, first_bidder=first_bidder_of(dealer), commitment=digest,
            seed=seed.hex() if seed is not None else None,
            seat_players=list(seat_players) if seat_players is not None else None,
            contributions=list(contributions) if contributions is not None else None,
            draw=dict(draw) if draw is not None else None,
        )

    @event("Dealt")
    def __init__(self, table_id: str, number: int, ruleset: dict[str, Any], dealer: int,
                 deck: list[str], first_bidder: int, commitment: str, seed: str | None,
                 seat_players: list[str | None] | None = None,
                 contributions: list[str] | None = None,
                 draw: dict[str, Any] | None = None) -> None:
        self.table_id = table_id
        self.number = number
        self.players = PLAYERS
        self.ruleset_spec = ruleset
        self.rules = rules_of(ruleset)
        self.dealer = dealer
        self.deck = tuple(deck)
        self.commitment = commitment
        self.seed = seed
        self.seat_players = list(seat_players) if seat_players is not None else None
        # Every seat's contribution to a seat-entropy deal (None: not one; docs/fairness.md).
        self.contributions = tuple(contributions) if contributions is not None else None
        self.draw_record = draw  # its draw's record (domain.table.draw_record); None: none
        self.hands, stock, _ = deal(deck, PLAYERS, dealer, HAND_SIZE)
        self.kitty = tuple(stock)  # the 底牌
        self.first_bidder = first_bidder
        self.auction = new_auction(self.rules.bidding, first_bidder)
        self.phase = BIDDING
        self.landlord: int | None = None
        self.turn: int | None = first_bidder
        self.leader: int | None = None
        self.top: Standing | None = None
        self.top_seat: int | None = None
        # The current round of play: (seat, cards or None for a pass, kind, by the referee).
        self.trick: list[tuple[int, tuple[str, ...] | None, str, bool]] = []
        self.plays = [0] * PLAYERS
        self.bombs = 0
        self.rockets = 0
        # Every action in order, as (seat, kind, cards, points bid or None): immutable
        # entries, so copying the hand for a command copies the list, not each entry.
        self.action_log: list[tuple[int, str, tuple[str, ...], int | None]] = []
        self.result: dict[str, Any] | None = None

    # -- queries ----------------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        """The hand has ended (a result, or a redeal)."""
        return self.phase == OVER

    @property
    def to_act(self) -> int | None:
        """The seat whose action the hand waits for (None once over)."""
        return self.turn

    @property
    def actions(self) -> list[dict[str, Any]]:
        """The actions so far in transcript form."""
        return [_action_json(*entry) for entry in self.action_log]

    def turn_deadline(self) -> datetime | None:
        """When the seat to act runs out of time (last event + turn_timeout), if clocked."""
        if self.is_over or not self.rules.turn_timeout or self.turn is None:
            return None
        return self.modified_on + timedelta(seconds=self.rules.turn_timeout)

    def uncapped_multiplier(self) -> int:
        """The multiplier as it stands, before any cap: the bidding's factor so far and the
        bombs (a spring is decided at the end: the result's multiplier holds it)."""
        if self.result is not None:
            return int(self.result["uncapped_multiplier"])
        auction = self.auction
        outcome = auction.outcome()
        factor = outcome.factor if outcome is not None else max(auction.highest, 1) << auction.robs
        if self.rules.bomb_doubling:
            factor *= BOMB_FACTOR ** (self.bombs + self.rockets)
        return factor

    def multiplier(self) -> int:
        """The multiplier as it stands (`uncapped_multiplier`, capped); once the hand is
        over, the one it was paid at."""
        if self.result is not None:
            return int(self.result["multiplier"])
        return capped(self.rules, self.uncapped_multiplier())

    def _top(self) -> Combination | None:
        return self.top.combination() if self.top is not None else None

    def legal_plays(self, seat: int) -> list[Combination]:
        """Every distinct legal play for `seat` now (empty when it is not its turn to play)."""
        if self.phase != PLAYING or seat != self.turn:
            return []
        return legal_plays(self.hands[seat], self._top(), self.rules.combos)

    def legal_actions(self, seat: int, limit: int | None = None) -> LegalActions:
        """What `seat` may do now: its words in the bidding (the points it may bid as
        `bid` requirements), or its legal plays (at most `limit`) and whether it may pass."""
        if self.is_over or seat != self.turn:
            return LegalActions(seat=seat)
        if self.phase == BIDDING:
            kinds = self.auction.open_kinds(seat)
            values = self.auction.open_bids(seat)
            if values:
                said = f"bid {', '.join(map(str, values))} point(s)"
            else:
                said = " or ".join(kind for kind in kinds if kind != PASS)
            return LegalActions(
                seat=seat, may_pass=True, kinds=frozenset(kinds), constraints=(f"{said}, or pass",),
                requirements=tuple(Constraint(BID, count=v) for v in values))
        plays = self.legal_plays(seat)  # their cards in canonical order (legal.py)
        listed = plays if limit is None else plays[:max(limit, 0)]
        may_pass = self.top is not None
        open_kinds = frozenset(
            kind for kind, open_ in ((PLAY, bool(plays)), (PASS, may_pass)) if open_)
        return LegalActions(
            seat=seat, plays=tuple(LegalPlay(tuple(map(_TEXT.__getitem__, combo.cards)),
                                             combo.kind)
                                   for combo in listed),
            may_pass=may_pass, kinds=open_kinds, truncated=len(listed) < len(plays))

    def record(self) -> HandRecord:
        """What the finished hand leaves on the match: each seat's score."""
        if self.result is None:
            raise RuleError(Reason.HAND_IN_PROGRESS, "the hand is not over yet")
        totals = {side: Decimal(str(v)) for side, v in self.result["side_totals"].items()}
        return HandRecord(hand_id=str(self.id), totals=totals, carry={})

    # -- commands ---------------------------------------------------------------------------

    def act(self, seat: int, action: Action) -> None:
        """Validate and apply one seat's action (a `RuleError` with a reason if refused)."""
        self._check_form(seat, action)
        if action.kind == PLAY:
            self.play(seat, action.cards)
        elif self.phase == BIDDING:
            self.bid(seat, action.kind, action.value)
        else:
            self.pass_turn(seat)

    def check(self, seat: int, action: Action) -> None:
        """Refuse `action` as `act` would, changing nothing: every rule it checks reads only
        the seat's own cards and the public state (the bidding, the play to beat)."""
        self._check_form(seat, action)
        if action.kind == PLAY:
            self._checked_play(seat, action.cards)
        elif self.phase == BIDDING:
            self.auction.judge(seat, action.kind, action.value)
        else:
            self._check_pass(seat)

    def _check_form(self, seat: int, action: Action) -> None:
        """The action's own form and the hand's state: a kind of 斗地主's, a seat, not over."""
        if action.kind == RESIGN:
            raise RuleError(Reason.INVALID_ACTION,
                            "nobody resigns in 斗地主: the hand is played to its end")
        if action.kind not in KINDS:
            raise RuleError(Reason.INVALID_ACTION, f"斗地主 has no {shown(action.kind)} action")
        if action.kind != PLAY and action.cards:
            raise RuleError(Reason.INVALID_ACTION, f"a 斗地主 {action.kind} names no cards")
        if action.kind in (PLAY, PASS) and action.value is not None:
            raise RuleError(Reason.INVALID_ACTION, f"a 斗地主 {action.kind} takes no value")
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        if isinstance(seat, bool) or not isinstance(seat, int) or seat not in range(PLAYERS):
            raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{PLAYERS - 1}")
        if self.phase == PLAYING and action.kind in (BID, CALL, ROB_KIND):
            raise RuleError(DoudizhuReason.NOT_BIDDING,
                            f"the bidding is over: seat {self.landlord} is the landlord")

    def bid(self, seat: int, kind: str, value: str | None = None, *,
            timeout: bool = False) -> None:
        """Say something in the bidding: a points bid, a call, a rob or a pass."""
        entry = self.auction.judge(seat, kind, value, by_referee=timeout)
        self._bid(seat=entry.seat, kind=entry.kind, value=entry.value, timeout=timeout)
        outcome = self.auction.outcome()
        if outcome is None:
            return
        if outcome.landlord is None:
            self._finish_redeal()
            return
        self._landlord_chosen(seat=outcome.landlord, kitty=[_TEXT[c] for c in self.kitty],
                              bid=outcome.bid, robs=outcome.robs)

    def play(self, seat: int, cards: Iterable[str | Card], *, timeout: bool = False
             ) -> Combination:
        """Play cards that form a combination beating the last play (or any, leading)."""
        combo = self._checked_play(seat, cards)
        self.trigger_event(self.CardsPlayed, seat=seat,
                           cards=[_TEXT[c] for c in combo.cards], kind=combo.kind,
                           rank=combo.rank, length=combo.length, timeout=timeout)
        if not self.hands[seat]:
            self._finish(winner=seat)
        return combo

    def _check_turn(self, seat: int) -> None:
        if seat != self.turn:
            raise RuleError(Reason.NOT_YOUR_TURN, f"it is seat {self.turn}'s turn, not {seat}'s")

    def _checked_play(self, seat: int, cards: Iterable[str | Card]) -> Combination:
        """The combination `seat` would play, or the play's refusal."""
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        parsed = [c if isinstance(c, Card) else parse_card(c) for c in cards]
        if self.phase == BIDDING:
            raise RuleError(DoudizhuReason.BIDDING_OPEN,
                            "the landlord is still being bid for: bid, or pass")
        self._check_turn(seat)
        if not parsed:
            raise RuleError(Reason.INVALID_COMBINATION, "a play needs at least one card")
        missing = _missing(self.hands[seat], parsed)
        if missing:
            raise RuleError(Reason.CARDS_NOT_IN_HAND,
                            f"seat {seat} does not hold {' '.join(format_cards(missing))}")
        top = self._top()
        combo = read_play(parsed, top, self.rules.combos)
        if combo is not None:
            return combo
        lead = classify(parsed, self.rules.combos)
        if lead is None or top is None:  # (cards that read as a lead are a legal lead)
            raise RuleError(Reason.INVALID_COMBINATION,
                            f"{' '.join(_sorted_text(parsed))} is not a combination")
        raise RuleError(
            DoudizhuReason.DOES_NOT_BEAT,
            f"{lead.kind} {' '.join(_sorted_text(lead.cards))} does not beat"
            f" {top.kind} {' '.join(_sorted_text(top.cards))}")

    def pass_turn(self, seat: int, *, timeout: bool = False) -> None:
        """Pass (要不起 / 不要): allowed to every seat but the one that leads."""
        self._check_pass(seat)
        self.trigger_event(self.Passed, seat=seat, timeout=timeout)
        if self.top_seat is not None and self.turn == self.top_seat:
            self.trigger_event(self.TrickEnded, leader=self.top_seat)

    def _check_pass(self, seat: int) -> None:
        self._check_turn(seat)
        if self.top is None:
            raise RuleError(DoudizhuReason.MUST_LEAD,
                            f"seat {seat} leads and cannot pass: play a combination")

    def time_out(self, seat: int, now: datetime) -> Action:
        """Act for a seat whose clock ran out: no bid while bidding; in the play a pass when
        allowed, else its lowest single card. Returns what the referee did."""
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        if isinstance(seat, bool) or not isinstance(seat, int) or seat not in range(PLAYERS):
            raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{PLAYERS - 1}")
        self._check_turn(seat)
        deadline = self.turn_deadline()
        if deadline is None:
            raise RuleError(Reason.NO_TIMEOUT_CONFIGURED, "this table has no turn clock")
        if now < deadline:
            raise RuleError(Reason.TURN_NOT_EXPIRED, f"seat {seat}'s turn runs until {deadline}")
        if self.phase == BIDDING:
            self.bid(seat, PASS, timeout=True)
            return Action(PASS)
        if self.top is not None:
            self.pass_turn(seat, timeout=True)
            return Action(PASS)
        lowest = min(self.hands[seat], key=sort_key)
        self.play(seat, [lowest], timeout=True)
        return Action.play([_TEXT[lowest]])

    # -- the end ----------------------------------------------------------------------------

    def _finish_redeal(self) -> None:
        zero = [0] * PLAYERS
        result = {
            "redeal": True, "landlord": None, "bid": 0, "robs": 0, "winner": None,
            "winning_seat": None, "bombs": 0, "rockets": 0, "spring": False,
            "anti_spring": False, "uncapped_multiplier": 0, "multiplier": 0,
            "base_score": self.rules.base_score, "unit": 0, "scores": zero,
            "kitty": [_TEXT[c] for c in self.kitty],
            "side_totals": {f"seat:{s}": "0" for s in range(PLAYERS)},
        }
        self._ended(result=result, seed=self.seed)

    def _finish(self, winner: int) -> None:
        outcome = self.auction.outcome()
        landlord = self.landlord
        if outcome is None or landlord is None:  # unreachable: play follows the bidding
            raise RuleError(Reason.HAND_IN_PROGRESS, "the hand has no landlord")
        farmer_plays = sum(n for s, n in enumerate(self.plays) if s != landlord)
        facts = HandFacts(landlord=landlord, bid_factor=outcome.factor, winner=winner,
                          bombs=self.bombs, rockets=self.rockets,
                          landlord_plays=self.plays[landlord], farmer_plays=farmer_plays)
        score = score_hand(self.rules, facts)
        result = {
            "redeal": False, "landlord": landlord, "bid": outcome.bid, "robs": outcome.robs,
            "winning_seat": winner, "bombs": self.bombs, "rockets": self.rockets,
            "base_score": self.rules.base_score, **score.to_json(),
            "kitty": [_TEXT[c] for c in self.kitty],
            "side_totals": {f"seat:{s}": str(v) for s, v in enumerate(score.scores)},
        }
        self._ended(result=result, seed=self.seed)

    # -- events (mutation only) -------------------------------------------------------------

    @event("Bid")
    def _bid(self, seat: int, kind: str, value: int | None, timeout: bool) -> None:
        self.auction = self.auction.with_entry(BidEntry(seat, kind, value, timeout))
        self.turn = self.auction.to_act
        self.action_log.append((seat, kind, (), value))

    @event("LandlordChosen")
    def _landlord_chosen(self, seat: int, kitty: list[str], bid: int, robs: int) -> None:
        del kitty, bid, robs  # for readers of the stream: the auction and the deal hold them
        self.landlord = seat
        self.hands[seat].extend(self.kitty)
        self.phase = PLAYING
        self.leader = seat
        self.turn = seat

    class CardsPlayed(AggregateEvent):
        """Cards played by a seat: the combination's kind, rank and length."""

        seat: int
        cards: list[str]
        kind: str
        rank: int
        length: int
        timeout: bool

        def apply(self, aggregate: Any) -> None:
            """Mutate the hand."""
            aggregate._played(self.seat, self.cards, self.kind, self.rank, self.length,
                              self.timeout)

    def _played(self, seat: int, cards: list[str], kind: str, rank: int, length: int,
                timeout: bool) -> None:
        played = tuple(parse_card(c) for c in cards)
        hand = self.hands[seat]
        for card in played:
            hand.remove(card)
        self.top = Standing(kind, rank, length, played)
        self.top_seat = seat
        if not self.trick:
            self.leader = seat
        self.trick.append((seat, tuple(cards), kind, timeout))
        self.plays[seat] += 1
        if kind == BOMB:
            self.bombs += 1
        elif kind == ROCKET:
            self.rockets += 1
        self.turn = (seat + 1) % PLAYERS
        self.action_log.append((seat, PLAY, tuple(cards), None))

    class Passed(AggregateEvent):
        """A seat passed (by the player, or by the referee when its clock ran out)."""

        seat: int
        timeout: bool

        def apply(self, aggregate: Any) -> None:
            """Mutate the hand."""
            aggregate._passed(self.seat, self.timeout)

    def _passed(self, seat: int, timeout: bool) -> None:
        self.trick.append((seat, None, "", timeout))
        self.turn = (seat + 1) % PLAYERS
        self.action_log.append((seat, PASS, (), None))

    class TrickEnded(AggregateEvent):
        """Two passes in a row: the round of play is over and `leader` leads the next."""

        leader: int

        def apply(self, aggregate: Any) -> None:
            """Mutate the hand."""
            aggregate._trick_ended(self.leader)

    def _trick_ended(self, leader: int) -> None:
        self.top = None
        self.top_seat = None
        self.trick = []
        self.leader = leader
        self.turn = leader

    @event("HandEnded")
    def _ended(self, result: dict[str, Any], seed: str | None) -> None:
        del seed  # revealed in the event for verification; already known to the aggregate
        self.result = result
        self.phase = OVER
        self.turn = None

    # -- views ------------------------------------------------------------------------------

    def view(self, viewer: Viewer) -> DoudizhuView:
        """The hand as `viewer` may see it: a seat its own cards, never another seat's, and
        the 底牌 only once the landlord has taken them."""
        own = seat_of(viewer)
        if own is not None and own not in range(PLAYERS):
            raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{PLAYERS - 1}")
        audit = sees_everything(viewer)
        landlord = self.landlord
        kitty_shown = audit or landlord is not None or self.is_over
        top = None
        if self.top is not None and self.top_seat is not None:
            top = TopPlay(self.top_seat, self.top.kind, _sorted_text(self.top.cards))
        return DoudizhuView(
            viewer=viewer, hand_id=str(self.id), table_id=self.table_id, number=self.number,
            version=self.version, ruleset=dict(self.ruleset_spec), players=PLAYERS,
            dealer=self.dealer, phase=self.phase, to_act=self.turn,
            bidding=self.rules.bidding, first_bidder=self.first_bidder,
            bids=self.auction.entries,
            highest_bid=self.auction.highest, robs=self.auction.robs, landlord=landlord,
            kitty=_sorted_text(self.kitty) if kitty_shown else None,
            kitty_count=KITTY_SIZE,
            own_cards=_sorted_text(self.hands[own]) if own is not None else (),
            seats=tuple(
                SeatState(seat=seat, card_count=len(cards),
                          role=None if landlord is None else
                          LANDLORD_ROLE if seat == landlord else FARMER_ROLE,
                          plays=self.plays[seat],
                          cards=_sorted_text(cards) if audit else None)
                for seat, cards in enumerate(self.hands)),
            trick=tuple(TableEntry(s, c, kind, referee) for s, c, kind, referee in self.trick),
            top=top, leader=self.leader, bombs=self.bombs, rockets=self.rockets,
            multiplier=self.multiplier(), uncapped_multiplier=self.uncapped_multiplier(),
            commitment=self.commitment, seed=self.seed if self.is_over or audit else None,
            deck=self.deck if audit else None,
            result=None if self.result is None else DoudizhuResult.from_json(self.result),
            turn_deadline=self.turn_deadline(),
        )


__all__ = ["BIDDING", "OVER", "PLAYING", "DoudizhuHand", "check_deck", "first_bidder_of",
           "hand_id_for", "rules_of"]
