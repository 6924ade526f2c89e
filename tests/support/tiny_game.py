"""Tiny: a two-seat trick game of six cards that exists only in the tests.

It proves the game protocol (`domain/game.py`) and the bundles (`service/core/bundles.py`):
installed by a test through an entry point (its bundle: `tests/support/tiny_bundle.py`), it
is played through every RPC of a real `fiftyk serve` — tables, seats, deals, actions, views,
legal actions, scores, the feed, transcripts, evidence, `Adjudicate`, webhooks — and no file
of the referee names it. (OpenSpiel keeps Kuhn poker for the same purpose.)

The rules: the deck is J, Q and K of spades and hearts; each seat gets three cards. The
leader plays any card; the other seat must follow the led suit when it can. The higher card
of the led suit wins the trick and leads the next. After three tricks each seat scores the
tricks it won. Actions: `play` (one card) and `resign` (the other seat takes every trick
left).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar
from uuid import NAMESPACE_URL, UUID, uuid5

from fiftyk_referee.domain.aggregate import Aggregate, event
from fiftyk_referee.domain.errors import GameReason, InvalidRuleset, Reason, RuleError
from fiftyk_referee.domain.events import EventCatalog, EventKind, PublicEvent, stored_event
from fiftyk_referee.domain.game import (
    PLAY,
    RESIGN,
    Action,
    ActionSpec,
    Game,
    GameHand,
    HandRecord,
    LegalActions,
    LegalPlay,
    Observation,
    ObservationSpec,
    Rules,
    ValueCodec,
)
from fiftyk_referee.domain.observer import Viewer, seat_of, sees_everything
from fiftyk_referee.domain.transcripts import COMPLETED, RESULT_FORMAT, TRANSCRIPT_FORMAT

NAME = "tiny"
PRESET = "tiny"
SEATS = 2
DECK = ("JS", "QS", "KS", "JH", "QH", "KH")
RANKS = {"J": 0, "Q": 1, "K": 2}
HAND_SIZE = 3


class TinyReason(GameReason, game=NAME):
    """Tiny's own refusal (the core's reasons cover the rest)."""

    FOLLOW_SUIT = "FOLLOW_SUIT"  # a card off the led suit by a seat that holds one


@dataclass(frozen=True, slots=True)
class TinyRules:
    """Tiny's only ruleset (no options)."""

    preset: str = PRESET

    @property
    def fingerprint(self) -> str:
        """The hash of the resolved ruleset."""
        return hashlib.sha256(json.dumps(self.to_json()).encode()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        """The preset, no options."""
        return {"preset": self.preset, "options": {}}

    def options(self) -> dict[str, Any]:
        """No options."""
        return {}

    def check_players(self, players: Any) -> int:
        """Two seats."""
        if players != SEATS:
            raise InvalidRuleset(f"tiny is played by {SEATS}, not {players!r}")
        return SEATS

    @property
    def turn_timeout(self) -> int | None:
        """No turn clock."""
        return None


@dataclass(frozen=True, slots=True)
class TinyResult:
    """Tricks won per seat."""

    tricks: tuple[int, ...]

    @property
    def side_totals(self) -> Mapping[str, Decimal]:
        """Each seat's tricks."""
        return {f"seat:{seat}": Decimal(n) for seat, n in enumerate(self.tricks)}


@dataclass(frozen=True, slots=True)
class TinyView:
    """A Tiny hand as one viewer sees it."""

    game: ClassVar[str] = NAME
    hand_id: str
    table_id: str
    number: int
    version: int
    viewer_seat: int | None
    own_cards: tuple[str, ...]
    counts: tuple[int, ...]
    hands: tuple[tuple[str, ...], ...] | None  # the auditor's only
    trick: tuple[tuple[int, str], ...]
    to_act: int | None
    tricks: tuple[int, ...]
    result: TinyResult | None

    @property
    def is_over(self) -> bool:
        """Whether every trick is played."""
        return self.result is not None


def _beats(card: str, best: str) -> bool:
    return card[-1] == best[-1] and RANKS[card[0]] > RANKS[best[0]]


class TinyHand(Aggregate):
    """One Tiny hand."""

    @staticmethod
    def create_id(table_id: str, number: int) -> UUID:
        """Hands are identified by table and number."""
        return uuid5(NAMESPACE_URL, f"tiny-hand/{table_id}/{number}")

    @event("Dealt")
    def __init__(self, table_id: str, number: int, dealer: int, deck: list[str],
                 seat_players: list[str | None], contributions: list[str] | None = None,
                 draw: dict[str, Any] | None = None) -> None:
        self.table_id = table_id
        self.number = number
        self.players = SEATS
        self.dealer = dealer
        self.seat_players: list[str | None] | None = list(seat_players)
        self.deck = tuple(deck)
        self.commitment = hashlib.sha256(json.dumps(list(deck)).encode()).hexdigest()
        self.seed: str | None = None  # a preset or test-shuffled deck: nothing to reveal
        self.contributions = tuple(contributions) if contributions is not None else None
        self.draw_record: Mapping[str, Any] | None = draw
        self.hands = [list(deck[:HAND_SIZE]), list(deck[HAND_SIZE:])]
        self.trick: list[tuple[int, str]] = []
        self.turn: int | None = (dealer + 1) % SEATS
        self.tricks = [0, 0]
        self.actions: list[dict[str, Any]] = []

    @property
    def rules(self) -> Rules:
        """The one ruleset."""
        return TinyRules()

    @property
    def is_over(self) -> bool:
        """Every trick played, or a seat resigned."""
        return self.turn is None

    @property
    def to_act(self) -> int | None:
        """The seat to play."""
        return self.turn

    def act(self, seat: int, action: Action) -> None:
        """Play one card, or resign."""
        self.check(seat, action)
        if action.kind == RESIGN:
            self._resigned(seat=seat)
        else:
            self._played(seat=seat, card=action.cards[0])

    def check(self, seat: int, action: Action) -> None:
        """Refuse the action as `act` would, changing nothing (its own cards only)."""
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        if seat not in range(SEATS):
            raise RuleError(Reason.INVALID_SEAT, "seat must be 0 or 1")
        if action.value is not None:
            raise RuleError(Reason.INVALID_ACTION, "tiny actions take no value")
        if action.kind == RESIGN:
            return
        if action.kind != PLAY:
            raise RuleError(Reason.INVALID_ACTION, f"tiny has no {action.kind!r} action")
        if seat != self.turn:
            raise RuleError(Reason.NOT_YOUR_TURN, f"seat {self.turn} is to play")
        if len(action.cards) != 1:
            raise RuleError(Reason.INVALID_COMBINATION, "play exactly one card")
        card = action.cards[0]
        if card not in self.hands[seat]:
            raise RuleError(Reason.CARDS_NOT_IN_HAND, f"seat {seat} does not hold {card}")
        if card not in self._playable(seat):
            raise RuleError(TinyReason.FOLLOW_SUIT, "follow the led suit")

    def _playable(self, seat: int) -> list[str]:
        hand = self.hands[seat]
        if not self.trick:
            return list(hand)
        suited = [c for c in hand if c[-1] == self.trick[0][1][-1]]
        return suited or list(hand)

    @event("Played")
    def _played(self, seat: int, card: str) -> None:
        self.hands[seat].remove(card)
        self.trick.append((seat, card))
        self.actions.append({"seat": seat, "play": [card]})
        if len(self.trick) < SEATS:
            self.turn = (seat + 1) % SEATS
            return
        winner, best = self.trick[0]
        for other, card_played in self.trick[1:]:
            if _beats(card_played, best):
                winner, best = other, card_played
        self.tricks[winner] += 1
        self.trick = []
        self.turn = winner if self.hands[winner] else None

    @event("Resigned")
    def _resigned(self, seat: int) -> None:
        self.tricks[1 - seat] += len(self.hands[1 - seat])
        self.hands = [[], []]
        self.trick = []
        self.turn = None
        self.actions.append({"seat": seat, "resign": True})

    def time_out(self, seat: int, now: datetime) -> Action:
        """No turn clock."""
        raise RuleError(Reason.NO_TIMEOUT_CONFIGURED, "tiny has no turn clock")

    def turn_deadline(self) -> datetime | None:
        """No turn clock."""
        return None

    def legal_actions(self, seat: int, limit: int | None = None) -> LegalActions:
        """The seat's playable cards, on its turn."""
        if seat != self.turn:
            return LegalActions(seat=seat)
        plays = [LegalPlay((card,), "single") for card in self._playable(seat)]
        shown = plays if limit is None else plays[:limit]
        return LegalActions(seat=seat, plays=tuple(shown), kinds=frozenset({PLAY}),
                            truncated=len(shown) < len(plays))

    def view(self, viewer: Viewer) -> TinyView:
        """Only the viewer's own cards (all of them for the auditor)."""
        seat = seat_of(viewer)
        return TinyView(
            hand_id=str(self.id), table_id=self.table_id, number=self.number,
            version=self.version, viewer_seat=seat,
            own_cards=tuple(self.hands[seat]) if seat is not None else (),
            counts=tuple(len(h) for h in self.hands),
            hands=tuple(tuple(h) for h in self.hands) if sees_everything(viewer) else None,
            trick=tuple(self.trick), to_act=self.turn, tricks=tuple(self.tricks),
            result=TinyResult(tuple(self.tricks)) if self.is_over else None)

    def record(self) -> HandRecord:
        """Each seat's tricks."""
        if not self.is_over:
            raise RuleError(Reason.HAND_IN_PROGRESS, "the hand is not over")
        return HandRecord(hand_id=str(self.id),
                          totals=TinyResult(tuple(self.tricks)).side_totals)


@dataclass(frozen=True, slots=True)
class TinyDealt(PublicEvent):
    """The deal: the viewer's own cards only (all for the auditor)."""

    NAME: ClassVar[str] = "tiny.dealt"
    dealer: int
    cards: tuple[tuple[str, ...], ...]  # per seat; empty where the viewer may not look


@dataclass(frozen=True, slots=True)
class TinyPlayed(PublicEvent):
    """A seat played a card."""

    NAME: ClassVar[str] = "tiny.played"
    seat: int
    card: str


@dataclass(frozen=True, slots=True)
class TinyResigned(PublicEvent):
    """A seat resigned."""

    NAME: ClassVar[str] = "tiny.resigned"
    seat: int


def _dealt(stored: Any, viewer: Viewer) -> TinyDealt:
    seat = seat_of(viewer)
    hands = (stored.deck[:HAND_SIZE], stored.deck[HAND_SIZE:])
    return TinyDealt(dealer=stored.dealer, cards=tuple(
        tuple(cards) if sees_everything(viewer) or index == seat else ()
        for index, cards in enumerate(hands)))


TINY_EVENTS = EventCatalog(NAME, [
    EventKind(stored_event(TinyHand, "Dealt"), TinyDealt, _dealt),
    EventKind(stored_event(TinyHand, "Played"), TinyPlayed,
              lambda stored, viewer: TinyPlayed(seat=stored.seat, card=stored.card)),
    EventKind(stored_event(TinyHand, "Resigned"), TinyResigned,
              lambda stored, viewer: TinyResigned(seat=stored.seat)),
])


class Tiny:
    """The Tiny game behind the game protocol."""

    name = NAME
    presets = (PRESET,)
    action_kinds = (ActionSpec(PLAY, "play one card"),
                    ActionSpec(RESIGN, "resign the hand", takes_cards=False))
    observations = (ObservationSpec("tricks", "Tricks won, by game and preset."),)
    value_codecs = (ValueCodec("tiny_rules", TinyRules, lambda r: r.to_json(),
                               lambda data: TinyRules()),)
    events = TINY_EVENTS

    def observe(self, hand: Any, events: Sequence[object]) -> list[Observation]:
        """A trick is won by every second card played."""
        return [Observation("tricks") for e in events
                if TINY_EVENTS.name_of(e) == TinyPlayed.NAME and not hand.trick]

    def answer(self, question: Mapping[str, Any]) -> Any:
        """Tiny has one question: who wins a trick (`input.plays`: the led card first)."""
        led, other = question["input"]["plays"]
        return {"winner": 1 if _beats(other, led) else 0}

    def rules(self, preset: str, options: Mapping[str, Any] | None = None) -> TinyRules:
        """The one preset, without options."""
        if preset != PRESET or options:
            raise InvalidRuleset(f"tiny has one preset, {PRESET!r}, and no options")
        return TinyRules()

    def rules_from_json(self, spec: Mapping[str, Any]) -> TinyRules:
        """The one ruleset."""
        return self.rules(spec.get("preset", PRESET), spec.get("options"))

    def side_seats(self, rules: Rules, players: int) -> dict[str, tuple[int, ...]]:
        """Each seat for itself."""
        return {f"seat:{seat}": (seat,) for seat in range(players)}

    def deal(self, *, table_id: str, number: int, rules: Rules, players: int, dealer: int,
             seat_players: Sequence[str | None], carry: Mapping[str, Any],
             deck: Sequence[str] | None, seed: bytes | None,
             contributions: Sequence[str] | None = None,
             draw: Mapping[str, Any] | None = None) -> TinyHand:
        """Shuffle the six cards (or take a preset deck); seat entropy mixes the seats'
        contributions into the shuffle."""
        cards = list(deck) if deck else list(DECK)
        if deck and sorted(deck) != sorted(DECK):
            raise RuleError(Reason.INVALID_DEAL, "a tiny deck is JS QS KS JH QH KH")
        if not deck:
            random.Random((seed or b"") + "".join(contributions or ()).encode()).shuffle(cards)
        return TinyHand(table_id=table_id, number=number, dealer=dealer, deck=cards,
                        seat_players=list(seat_players),
                        contributions=list(contributions) if contributions is not None
                        and not deck else None,
                        draw=dict(draw) if draw is not None and not deck else None)

    def match_end(self, rules: Rules, hands_played: int,
                  scores: Mapping[str, Decimal]) -> str | None:
        """Two hands make a match."""
        return "2 hands played" if hands_played >= 2 else None

    def replay(self, transcript: Any) -> tuple[TinyHand, dict[str, Any]]:
        """Replay a transcript's actions on its deck: the hand and the ruling."""
        hand = TinyHand(table_id="transcript", number=1, dealer=transcript["dealer"],
                        deck=list(transcript["deck"]), seat_players=[None, None])
        for action in transcript["actions"]:
            kind = RESIGN if action.get("resign") else PLAY
            hand.act(action["seat"], Action(kind, tuple(action.get("play", ()))))
        return hand, {"format": RESULT_FORMAT, "game": NAME, "status": COMPLETED,
                      "tricks": list(hand.tricks)}

    def adjudicate(self, transcript: Any) -> dict[str, Any]:
        """The ruling of `replay`."""
        return self.replay(transcript)[1]

    def ruling(self, hand: Any) -> dict[str, Any]:
        """The ruling of the stored hand's transcript."""
        return self.adjudicate(self.export_transcript(hand))

    def base_deck(self, rules: Rules) -> list[str]:
        """The six cards."""
        return list(DECK)

    def export_transcript(self, hand: Any) -> dict[str, Any]:
        """The deck, the dealer and the actions."""
        return {"format": TRANSCRIPT_FORMAT, "game": NAME, "ruleset": TinyRules().to_json(),
                "players": SEATS, "dealer": hand.dealer, "deck": list(hand.deck),
                "actions": [dict(a) for a in hand.actions]}

    def owns(self, hand: object) -> bool:
        """Whether `hand` is a Tiny hand."""
        return isinstance(hand, TinyHand)

    def public_event(self, stored: object, viewer: Viewer) -> PublicEvent | None:
        """A stored Tiny event as `viewer` may see it."""
        return TINY_EVENTS.public_event(stored, viewer)


GAME = Tiny()
_GAME_CHECK: Game = GAME
_HAND_CHECK: type[GameHand] = TinyHand
