"""The hand aggregate: one deal of a table, from the deal to the score (docs/rules.md#a-hand).

Public command methods validate and decide; they then trigger events whose methods only
mutate. Automatic consequences of an action (a trick won, cards drawn from the stock, an
announcement, a player going out, the end of the hand) are decided by the command and
recorded as events of their own, so the event stream reads as the referee's account.

Its length (about 760 lines) is one aggregate whose event methods must stay on its class
(a stored event's topic names it).
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from fiftyk_referee.domain.aggregate import Aggregate, AggregateEvent, event
from fiftyk_referee.domain.cards import (
    Card,
    card_points,
    format_cards,
    make_deck,
    parse_card,
    sort_cards,
    sort_key,
)
from fiftyk_referee.domain.deal import SEED_BYTES, commitment, deal, deal_order, shuffled
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.fiftyk.combinations import BOMB, Combination, beats, classify, tables
from fiftyk_referee.domain.fiftyk.legal import can_beat, legal_plays
from fiftyk_referee.domain.fiftyk.reasons import FiftykReason
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.fiftyk.scoring import HandFacts, HandScore, score_hand, teams_of
from fiftyk_referee.domain.fiftyk.views import (
    Announcement,
    HandResult,
    HandStatus,
    HandView,
    SeatState,
    TopPlay,
    TrickEntry,
)
from fiftyk_referee.domain.game import (
    PASS,
    PLAY,
    RESIGN,
    Action,
    HandRecord,
    LegalActions,
    LegalPlay,
)
from fiftyk_referee.domain.observer import Viewer, seat_of, sees_cards_of, sees_everything

HAND_NAMESPACE = uuid5(NAMESPACE_URL, "https://fiftyk-referee/hand")
PLAYING, OVER = HandStatus.PLAYING, HandStatus.OVER
PASS_BY_PLAYER, PASS_EMPTY_HAND, PASS_TIMEOUT = "player", "empty_hand", "timeout"
FIRST_LEAD_FALLBACK = "holder:3H"
PLAY_ACTION, PASS_ACTION, RESIGN_ACTION = "play", "pass", "resign"
FIRST_OUT = "first_out"  # the carry key: who went out first (may lead the next hand)


@lru_cache(maxsize=256)
def _ruleset_from_text(text: str) -> Ruleset:
    return Ruleset.from_json(json.loads(text))


@lru_cache(maxsize=256)
def _spec_text(ruleset: Ruleset) -> str:
    return json.dumps(ruleset.to_json(), sort_keys=True)


def spec_of(ruleset: Ruleset) -> dict[str, Any]:
    """A fresh copy of the ruleset's JSON spec (`to_json`, cached: it is costly)."""
    spec: dict[str, Any] = json.loads(_spec_text(ruleset))
    return spec


def ruleset_of(spec: dict[str, Any]) -> Ruleset:
    """The Ruleset for a stored JSON spec (cached: events carry specs, not objects)."""
    return _ruleset_from_text(json.dumps(spec, sort_keys=True))


def hand_id_for(table_id: str, number: int) -> UUID:
    """The deterministic id of a table's n-th hand (so racing deals collide, not fork)."""
    return uuid5(HAND_NAMESPACE, f"{table_id}/{number}")


def lead_card_of(first_lead: str) -> Card | None:
    """The card a `holder:XX` first-lead option names, else None."""
    kind, _, card = first_lead.partition(":")
    return parse_card(card) if kind == "holder" else None


def first_leader(ruleset: Ruleset, deck: Sequence[str], players: int, dealer: int,
                 previous_first_out: int | None) -> int:
    """Who leads the first trick (docs/rules.md#the-first-lead, `first_lead`)."""
    rule = ruleset.first_lead
    if rule == "previous_first_out":
        if previous_first_out is not None:
            return previous_first_out
        rule = FIRST_LEAD_FALLBACK
    wanted = lead_card_of(rule)
    dealt = len(deck) if ruleset.hand_size is None else ruleset.hand_size * players
    if wanted is not None:
        for index, seat in enumerate(deal_order(players, dealer, min(dealt, len(deck)))):
            if parse_card(deck[index]) == wanted:
                return seat
    return (dealer + 1) % players


def check_deck(ruleset: Ruleset, deck: Sequence[str]) -> None:
    """Refuse a preset deck whose multiset is not exactly the ruleset's deck."""
    try:
        cards = [parse_card(c) for c in deck]
    except RuleError as error:
        raise RuleError(Reason.INVALID_DEAL, f"deck: {error.message}") from error
    want = Counter(make_deck(ruleset.packs, jokers=ruleset.jokers))
    have = Counter(cards)
    if have != want:
        missing = " ".join(format_cards((want - have).elements()))
        extra = " ".join(format_cards((have - want).elements()))
        raise RuleError(
            Reason.INVALID_DEAL,
            f"the deck must be exactly the {ruleset.deck_size}-card deck of preset"
            f" {ruleset.preset!r}; missing {missing or 'nothing'}, extra {extra or 'nothing'}",
        )


# Hot-path tables: every card's notation and points, and the canonical decks.
_TEXT: dict[Card, str] = {card: str(card) for card in make_deck(1, jokers=True)}
_POINTS: dict[Card, int] = {card: card_points(card) for card in _TEXT}
_POINTS_WITH_JOKERS: dict[Card, int] = {card: card_points(card, joker_points=True)
                                        for card in _TEXT}


@lru_cache(maxsize=8)
def _base_deck(packs: int, jokers: bool) -> tuple[Card, ...]:
    return tuple(make_deck(packs, jokers=jokers))


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


class Hand(Aggregate):
    """One deal: the cards, the tricks, going out, and the hand's score."""

    # Containers set when the hand is dealt (or ends) and never changed in place: copies of
    # the hand for a command may share them (`service/core/cache.py`).
    NEVER_MUTATED: ClassVar[frozenset[str]] = frozenset(
        {"ruleset_spec", "seat_players", "result", "draw_record"})
    # The record of its seat-entropy draw (a class default: hands stored before it have none).
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
        ruleset: Ruleset,
        players: int,
        dealer: int,
        deck: Sequence[str] | None = None,
        seed: bytes | None = None,
        previous_first_out: int | None = None,
        seat_players: Sequence[str | None] | None = None,
        contributions: Sequence[str] | None = None,
        draw: Mapping[str, Any] | None = None,
    ) -> Hand:
        """Deal a new hand: shuffle from a secret seed, or use a (permitted) preset deck.

        `seat_players` records who sat where when the hand was dealt (seats cannot change
        during a hand), so a command's seat can be checked against the hand alone.
        `contributions` (hex per seat, empty for none) makes it a seat-entropy deal
        (`domain/deal.py`, `fiftyk-shuffle/2`) of the seed.
        """
        ruleset.check_players(players)
        if not 0 <= dealer < players:
            raise RuleError(Reason.INVALID_SEAT, f"dealer must be a seat 0..{players - 1}")
        if deck is None:
            seed = seed if seed is not None else secrets.token_bytes(SEED_BYTES)
            base = _base_deck(ruleset.packs, ruleset.jokers)
            dealt, digest = shuffled(seed, base, hand_id=str(cls.create_id(table_id, number)),
                                     contributions=contributions)
            cards = [_TEXT[c] for c in dealt]
        else:
            check_deck(ruleset, deck)
            cards = [str(parse_card(c)) for c in deck]
            seed, contributions, draw = None, None, None
            digest = commitment(None, cards)
        leader = first_leader(ruleset, cards, players, dealer, previous_first_out)
        return cls(
            table_id=table_id,
            number=number,
            ruleset=spec_of(ruleset),
            players=players,
            dealer=dealer,
            deck=cards,
            first_leader=leader,
            commitment=digest,
            seed=seed.hex() if seed is not None else None,
            seat_players=list(seat_players) if seat_players is not None else None,
            contributions=list(contributions) if contributions is not None else None,
            draw=dict(draw) if draw is not None else None,
        )

    @event("Dealt")
    def __init__(
        self,
        table_id: str,
        number: int,
        ruleset: dict[str, Any],
        players: int,
        dealer: int,
        deck: list[str],
        first_leader: int,
        commitment: str,
        seed: str | None,
        seat_players: list[str | None] | None = None,
        contributions: list[str] | None = None,
        draw: dict[str, Any] | None = None,
    ) -> None:
        self.table_id = table_id
        # Every seat's contribution to a seat-entropy deal (None: not one; docs/fairness.md).
        self.contributions = tuple(contributions) if contributions is not None else None
        self.draw_record = draw  # its draw's record (domain.table.draw_record); None: none
        self.seat_players = list(seat_players) if seat_players is not None else None
        self.number = number
        self.ruleset_spec = ruleset
        self.rules = ruleset_of(ruleset)
        self.players = players
        self.teams = teams_of(self.rules, players)
        self.dealer = dealer
        self.deck = tuple(deck)
        self.commitment = commitment
        self.seed = seed
        self.hands, self.stock, _ = deal(deck, players, dealer, self.rules.hand_size)
        self.first_leader = first_leader
        self.leader = first_leader
        self.turn: int | None = first_leader
        self.top: Combination | None = None
        self.top_seat: int | None = None
        # (seat, cards or None for a pass, combination type or "", decided by the referee)
        self.trick: list[tuple[int, tuple[str, ...] | None, str, bool]] = []
        self.table_points = 0
        self.passed: set[int] = set()
        self.out: list[int] = []
        self.resigned: list[int] = []
        self.collected = [0] * players
        self.announced: dict[int, int] = {}
        self.unbeaten_bombs: list[tuple[int, int]] = []
        self.tricks_won = 0
        # Every action in order, as (seat, "play" | "pass" | "resign", cards): immutable
        # entries, so copying the hand for a command copies the list, not each entry.
        self.action_log: list[tuple[int, str, tuple[str, ...]]] = []
        self.status = PLAYING
        self.result: dict[str, Any] | None = None


    # -- queries ----------------------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        """The hand has ended and been scored."""
        return self.status == OVER

    def is_active(self, seat: int) -> bool:
        """Still playing: neither out nor resigned."""
        return seat not in self.out and seat not in self.resigned

    def active_seats(self) -> list[int]:
        """Seats still playing, in seat order."""
        return [s for s in range(self.players) if self.is_active(s)]

    def next_active(self, seat: int) -> int | None:
        """The next seat after `seat` in turn order that is still playing (None if none)."""
        for step in range(1, self.players):
            candidate = (seat + step) % self.players
            if self.is_active(candidate):
                return candidate
        return None

    def partner_of(self, seat: int) -> int | None:
        """The partner seat in team games."""
        for team in self.teams:
            if seat in team:
                return next(s for s in team if s != seat)
        return None

    def legal_plays(self, seat: int) -> list[Combination]:
        """Every distinct legal play for `seat` now (empty when it is not their turn)."""
        if self.is_over or seat != self.turn:
            return []
        return legal_plays(self.hands[seat], self.top, self.rules)

    def turn_deadline(self) -> datetime | None:
        """When the current turn times out (last event time + turn_timeout), if clocked."""
        if self.is_over or not self.rules.turn_timeout or self.turn is None:
            return None
        return self.modified_on + timedelta(seconds=self.rules.turn_timeout)

    @property
    def actions(self) -> list[dict[str, Any]]:
        """The actions so far in transcript form: `{"seat": s, "play": [...]}` or a pass."""
        return [{"seat": seat, "play": list(cards)} if kind == PLAY_ACTION
                else {"seat": seat, kind: True} for seat, kind, cards in self.action_log]

    @property
    def to_act(self) -> int | None:
        """The seat whose action the hand waits for (None once over)."""
        return self.turn

    def legal_actions(self, seat: int, limit: int | None = None) -> LegalActions:
        """What `seat` may do now: its legal plays (at most `limit`), and whether it may pass."""
        plays = self.legal_plays(seat)
        shown = plays if limit is None else plays[:limit]
        may_pass = not self.is_over and seat == self.turn and self.top is not None
        kinds = {kind for kind, open_ in ((PLAY, bool(plays)), (PASS, may_pass)) if open_}
        return LegalActions(
            seat=seat,
            plays=tuple(LegalPlay(tuple(c.card_strings()), c.type) for c in shown),
            may_pass=may_pass, kinds=frozenset(kinds), truncated=len(shown) < len(plays),
        )

    def record(self) -> HandRecord:
        """What the finished hand leaves on its table: side totals, and who went out first."""
        if not self.is_over or self.result is None:
            raise RuleError(Reason.HAND_IN_PROGRESS, "the hand is not over yet")
        totals = {side: Decimal(str(v)) for side, v in self.result["side_totals"].items()}
        return HandRecord(hand_id=str(self.id), totals=totals,
                          carry={FIRST_OUT: self.out[0] if self.out else None})

    # -- commands ---------------------------------------------------------------------------

    def _check_turn(self, seat: int) -> None:
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.players:
            raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{self.players - 1}")
        if not self.is_active(seat):
            state = "gone out" if seat in self.out else "resigned"
            raise RuleError(FiftykReason.PLAYER_OUT, f"seat {seat} has {state} and no longer plays")
        if seat != self.turn:
            raise RuleError(Reason.NOT_YOUR_TURN, f"it is seat {self.turn}'s turn, not {seat}'s")

    def play(self, seat: int, cards: Iterable[str | Card], *, timeout: bool = False) -> Combination:
        """Play cards that form a combination beating the trick's top play (or any, leading)."""
        combo = self._checked_play(seat, cards)
        points = _POINTS_WITH_JOKERS if self.rules.joker_points else _POINTS
        self.trigger_event(
            self.CardsPlayed, seat=seat, cards=[_TEXT[c] for c in combo.cards],
            type=combo.type, rank=combo.rank, rung=combo.rung,
            points=sum(points[c] for c in combo.cards), timeout=timeout,
        )
        self._after_hand_change(seat)
        self._advance()
        return combo

    def _checked_play(self, seat: int, cards: Iterable[str | Card]) -> Combination:
        """The combination `seat` would play, or the play's refusal."""
        self._check_turn(seat)
        parsed = [c if isinstance(c, Card) else parse_card(c) for c in cards]
        if not parsed:
            raise RuleError(Reason.INVALID_COMBINATION, "a play needs at least one card")
        missing = _missing(self.hands[seat], parsed)
        if missing:
            raise RuleError(
                Reason.CARDS_NOT_IN_HAND,
                f"seat {seat} does not hold {' '.join(format_cards(missing))}",
            )
        combo = classify(parsed, self.rules)
        if self.top is not None and not beats(combo, self.top, self.rules):
            raise RuleError(
                FiftykReason.DOES_NOT_BEAT,
                f"{combo.type} {' '.join(combo.card_strings())} does not beat"
                f" {self.top.type} {' '.join(self.top.card_strings())}",
            )
        return combo

    def pass_turn(self, seat: int, *, timeout: bool = False) -> None:
        """Pass (过): allowed for everyone but the player who must lead."""
        self._check_pass(seat)
        self.trigger_event(self.Passed, seat=seat, why=PASS_TIMEOUT if timeout else PASS_BY_PLAYER)
        self._advance()

    def _check_pass(self, seat: int) -> None:
        self._check_turn(seat)
        if self.top is None:
            raise RuleError(FiftykReason.MUST_LEAD, f"seat {seat} leads this trick and cannot pass")

    def resign(self, seat: int) -> None:
        """Resign: the seat stops playing, keeps its cards (leftover) and is placed last."""
        self._check_resign(seat)
        self._resigned(seat=seat)
        self._advance()

    def _check_resign(self, seat: int) -> None:
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.players:
            raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{self.players - 1}")
        if not self.is_active(seat):
            raise RuleError(FiftykReason.PLAYER_OUT, f"seat {seat} no longer plays")

    def act(self, seat: int, action: Action) -> None:
        """Apply one seat's action: play, pass or resign (the game protocol's entry point)."""
        self._check_action(action)
        if action.kind == PLAY:
            self.play(seat, action.cards)
        elif action.kind == PASS:
            self.pass_turn(seat)
        else:
            self.resign(seat)

    def check(self, seat: int, action: Action) -> None:
        """Refuse `action` as `act` would, changing nothing: every rule it checks reads only
        the seat's own cards and the table's public state (the trick's top play, who still
        plays), never another seat's cards or the stock."""
        self._check_action(action)
        if action.kind == PLAY:
            self._checked_play(seat, action.cards)
        elif action.kind == PASS:
            self._check_pass(seat)
        else:
            self._check_resign(seat)

    @staticmethod
    def _check_action(action: Action) -> None:
        """The action's own form: a kind of 五十K's, cards and value as that kind takes them."""
        if action.value is not None:
            raise RuleError(Reason.INVALID_ACTION, f"a 五十K {action.kind} takes no value")
        if action.kind not in (PLAY, PASS, RESIGN):
            raise RuleError(Reason.INVALID_ACTION, f"五十K has no {action.kind!r} action")
        if action.kind != PLAY and action.cards:
            raise RuleError(Reason.INVALID_ACTION, f"a 五十K {action.kind} names no cards")

    def time_out(self, seat: int, now: datetime) -> Action:
        """Apply the referee's decision for an expired turn: pass if allowed, else lowest single."""
        self._check_turn(seat)
        deadline = self.turn_deadline()
        if deadline is None:
            raise RuleError(Reason.NO_TIMEOUT_CONFIGURED, "this table has no turn clock")
        if now < deadline:
            raise RuleError(Reason.TURN_NOT_EXPIRED, f"seat {seat}'s turn runs until {deadline}")
        if self.top is not None:
            self.pass_turn(seat, timeout=True)
            return Action(PASS)
        key = tables(self.rules).key
        lowest = min(self.hands[seat], key=lambda c: (key[c.rank], sort_key(c)))
        self.play(seat, [lowest], timeout=True)
        return Action.play([_TEXT[lowest]])

    # -- automatic consequences ---------------------------------------------------------------

    def _after_hand_change(self, seat: int) -> None:
        count = len(self.hands[seat])
        limit = self.rules.announce_at
        if limit and 0 < count <= limit and self.announced.get(seat) != count:
            self._announced(seat=seat, count=count)
        if count == 0 and not self.stock and seat not in self.out:
            self._went_out(seat=seat, place=len(self.out) + 1)

    def _trick_complete(self) -> bool:
        top, passed, out, resigned = self.top_seat, self.passed, self.out, self.resigned
        if top is None:
            return False
        for s in range(self.players):  # every other seat still playing has passed
            if s != top and s not in passed and s not in out and s not in resigned:
                return False
        return True

    def _next_leader(self, winner: int) -> int | None:
        if self.is_active(winner):
            return winner
        if self.rules.wind == "partner":
            partner = self.partner_of(winner)
            if partner is not None and self.is_active(partner):
                return partner
        return self.next_active(winner)

    def _advance(self) -> None:
        while True:
            if self._hand_ended():
                self._finish()
                return
            if self._trick_complete():
                winner = self.top_seat
                if winner is None:  # unreachable: _trick_complete needs a top seat
                    return
                self.trigger_event(self.TrickWon, seat=winner, points=self.table_points,
                                   leader=self._next_leader(winner))
                self._replenish(winner)
                continue
            turn = self.turn
            if turn is not None and self.rules.has_stock and not self.hands[turn] and self.stock:
                self.trigger_event(self.Passed, seat=turn, why=PASS_EMPTY_HAND)
                continue
            return

    def _replenish(self, winner: int) -> None:
        size = self.rules.hand_size
        if size is None:
            return
        order = [(winner + i) % self.players for i in range(self.players)]
        for seat in order:
            if not self.is_active(seat):
                continue
            want = size - len(self.hands[seat])
            if want > 0 and self.stock:
                drawn = [str(c) for c in self.stock[:want]]
                self._drew(seat=seat, cards=drawn)
                self._after_hand_change(seat)
        if not self.stock:
            for seat in order:
                if self.is_active(seat) and not self.hands[seat]:
                    self._went_out(seat=seat, place=len(self.out) + 1)

    def _sides_active(self) -> int:
        if self.teams:
            return sum(1 for team in self.teams if any(self.is_active(s) for s in team))
        return self.players - len(self.out) - len(self.resigned)  # out and resigned are disjoint

    def _hand_ended(self) -> bool:
        r = self.rules
        out = self.out
        if not out and not self.resigned:
            return False  # everyone still plays: no end condition can hold yet
        if self._sides_active() < 2:
            return True
        teams = self.teams
        if teams:
            return any(all(s in out for s in team) for team in teams)
        if r.scoring == "qq":
            return len(out) >= 2
        if r.end == "first_out":
            return len(out) >= 1
        return False  # last_standing: covered by fewer than two sides playing

    def _still_in(self) -> list[int]:
        start = self.out[-1] if self.out else self.dealer
        ordered = [(start + i) % self.players for i in range(1, self.players + 1)]
        playing = [s for s in ordered if s not in self.out and s not in self.resigned]
        return playing + list(reversed(self.resigned))

    def _finish(self) -> None:
        if self.top_seat is not None and self.trick:
            # Decision (docs/rules.md#the-end-of-a-hand): a trick cut short goes to its top play.
            self.trigger_event(self.TrickWon, seat=self.top_seat, points=self.table_points,
                               leader=None)
        still_in = self._still_in()
        jp = self.rules.joker_points
        facts = HandFacts(
            players=self.players,
            finish_order=tuple(self.out),
            still_in=tuple(still_in),
            collected=tuple(self.collected),
            leftover_points=tuple(
                0 if s in self.out else sum(card_points(c, joker_points=jp) for c in self.hands[s])
                for s in range(self.players)
            ),
            unbeaten_bombs=tuple(self.unbeaten_bombs),
        )
        scored: HandScore = score_hand(self.rules, facts)
        result = {
            "finish_order": list(self.out),
            "collected": list(self.collected),
            **scored.to_json(),
            "places": list(scored.places),
            "side_totals": {k: str(v) for k, v in scored.side_totals().items()},
        }
        self._ended(result=result, seed=self.seed)

    # -- events (mutation only) -------------------------------------------------------------
    # The three events of nearly every step (CardsPlayed, Passed, TrickWon) are declared as
    # event classes and triggered with `trigger_event`: the same names, topics and payloads
    # as `@event` methods, without binding a method's arguments for each event.

    class CardsPlayed(AggregateEvent):
        """Cards played by a seat."""

        seat: int
        cards: list[str]
        type: str
        rank: int
        rung: int
        points: int
        timeout: bool

        def apply(self, aggregate: Any) -> None:
            """Mutate the hand."""
            aggregate._played(self.seat, self.cards, self.type, self.rank, self.rung,
                              self.points, self.timeout)

    class Passed(AggregateEvent):
        """A pass (by the player, the referee's clock, or an empty hand)."""

        seat: int
        why: str

        def apply(self, aggregate: Any) -> None:
            """Mutate the hand."""
            aggregate._passed(self.seat, self.why)

    def _played(self, seat: int, cards: list[str], type: str, rank: int, rung: int,
                points: int, timeout: bool) -> None:
        played = [parse_card(c) for c in cards]
        hand = self.hands[seat]
        for card in played:
            hand.remove(card)
        self.top = Combination(type, tuple(played), rank, rung)
        self.top_seat = seat
        self.trick.append((seat, tuple(cards), type, timeout))
        self.table_points += points
        self.passed = set()
        self.turn = self.next_active(seat)
        self.action_log.append((seat, PLAY_ACTION, tuple(cards)))

    def _passed(self, seat: int, why: str) -> None:
        self.passed.add(seat)
        self.trick.append((seat, None, "", why != PASS_BY_PLAYER))
        self.turn = self.next_active(seat)
        if why != PASS_EMPTY_HAND:
            self.action_log.append((seat, PASS_ACTION, ()))

    @event("Resigned")
    def _resigned(self, seat: int) -> None:
        self.resigned.append(seat)
        self.passed.discard(seat)
        if self.turn == seat:
            self.turn = self.next_active(seat)
        self.action_log.append((seat, RESIGN_ACTION, ()))

    class TrickWon(AggregateEvent):
        """A trick won: its points to the seat; who leads next (None when the hand ends)."""

        seat: int
        points: int
        leader: int | None

        def apply(self, aggregate: Any) -> None:
            """Mutate the hand."""
            aggregate._trick_won(self.seat, self.points, self.leader)

    def _trick_won(self, seat: int, points: int, leader: int | None) -> None:
        self.collected[seat] += points
        if self.top is not None and self.top.type == BOMB:
            self.unbeaten_bombs.append((seat, len(self.top.cards)))
        self.tricks_won += 1
        self.top = None
        self.top_seat = None
        self.trick = []
        self.table_points = 0
        self.passed = set()
        self.leader = leader if leader is not None else seat
        self.turn = leader

    @event("CardsDrawn")
    def _drew(self, seat: int, cards: list[str]) -> None:
        del self.stock[: len(cards)]
        self.hands[seat].extend(parse_card(c) for c in cards)

    @event("Announced")
    def _announced(self, seat: int, count: int) -> None:
        self.announced[seat] = count

    @event("WentOut")
    def _went_out(self, seat: int, place: int) -> None:
        del place  # recorded in the event for readers; equal to the position in `out`
        self.out.append(seat)

    @event("HandEnded")
    def _ended(self, result: dict[str, Any], seed: str | None) -> None:
        del seed  # revealed in the event for verification; already known to the aggregate
        self.result = result
        self.status = OVER
        self.turn = None

    # -- views ------------------------------------------------------------------------------

    def _count_visible(self, viewer: Viewer, seat: int) -> bool:
        if self.rules.hand_counts == "public" or sees_cards_of(viewer, seat):
            return True
        # A count is shown while it is the one announced (a refilled hand hides it again) and
        # once the seat is out; every change to a count within announce_at is announced.
        return seat in self.out or self.announced.get(seat) == len(self.hands[seat])

    def view(self, viewer: Viewer) -> HandView:
        """The hand as `viewer` may see it: a seat its own cards, never another seat's."""
        own = seat_of(viewer)
        if own is not None and not 0 <= own < self.players:
            raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{self.players - 1}")
        everything = sees_everything(viewer)
        places = {seat: place for place, seat in enumerate(self.out, start=1)}
        top = None
        if self.top is not None and self.top_seat is not None:
            top = TopPlay(self.top_seat, self.top.type, tuple(self.top.card_strings()))
        return HandView(
            viewer=viewer,
            hand_id=str(self.id),
            table_id=self.table_id,
            number=self.number,
            version=self.version,
            ruleset=self.ruleset_spec,
            players=self.players,
            dealer=self.dealer,
            status=HandStatus(self.status),
            turn=self.turn,
            leader=self.leader,
            trick=tuple(TrickEntry(s, c, kind, referee) for s, c, kind, referee in self.trick),
            top=top,
            trick_points=self.table_points,
            seats=tuple(
                SeatState(
                    seat=seat,
                    card_count=len(cards) if self._count_visible(viewer, seat) else None,
                    collected=self.collected[seat],
                    resigned=seat in self.resigned,
                    finish_place=places.get(seat),
                    cards=tuple(str(c) for c in sort_cards(cards)) if everything else None,
                )
                for seat, cards in enumerate(self.hands)
            ),
            own_cards=(tuple(str(c) for c in sort_cards(self.hands[own]))
                       if own is not None else ()),
            stock_count=len(self.stock) if self.rules.has_stock else None,
            stock=tuple(str(c) for c in self.stock) if everything else None,
            announcements=tuple(Announcement(s, n) for s, n in sorted(self.announced.items())),
            finish_order=tuple(self.out),
            commitment=self.commitment,
            seed=self.seed if self.is_over or everything else None,
            first_leader=self.first_leader if everything else None,
            result=HandResult.from_json(self.result) if self.result is not None else None,
            turn_deadline=self.turn_deadline(),
        )

    def can_seat_beat(self, seat: int) -> bool:
        """Whether `seat` could beat the current top play (False when leading)."""
        return self.top is not None and can_beat(self.hands[seat], self.top, self.rules)


__all__ = [
    "OVER", "PLAYING", "Hand", "check_deck", "first_leader", "hand_id_for",
    "lead_card_of", "ruleset_of",
]
