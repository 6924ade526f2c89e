"""The 五十K hand's public events (`fiftyk.*`), and what each viewer may see of them.

Two hand events carry hidden cards: the deal (the whole deck, and the secret seed) and cards
drawn from the stock. A seat sees its own cards and, of every other seat, how many; a
spectator sees only counts; the audit role sees everything (`domain/observer.py` decides:
`sees_cards_of`, `sees_everything`). Everything else a hand records happens in the open at
the table and reads the same for every viewer. The seed is revealed to all by
`fiftyk.hand_ended`, so the deal's commitment can be checked once the hand is over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from fiftyk_referee.domain.cards import format_cards
from fiftyk_referee.domain.deal import deal
from fiftyk_referee.domain.events import EventCatalog, EventKind, PublicEvent, stored_event
from fiftyk_referee.domain.fiftyk.hand import (
    PASS_BY_PLAYER,
    PASS_EMPTY_HAND,
    PASS_TIMEOUT,
    Hand,
    ruleset_of,
)
from fiftyk_referee.domain.fiftyk.views import HandResult
from fiftyk_referee.domain.observer import Viewer, sees_cards_of, sees_everything

NAMESPACE = "fiftyk"
PASS_REASONS = (PASS_BY_PLAYER, PASS_TIMEOUT, PASS_EMPTY_HAND)


@dataclass(frozen=True, slots=True)
class DealtHand:
    """One seat's part of a deal: how many cards, and which ones if the viewer may see."""

    seat: int
    card_count: int
    cards: tuple[str, ...]  # sorted; empty unless the viewer sees this seat's cards


@dataclass(frozen=True, slots=True)
class HandDealt(PublicEvent):
    """A hand was dealt: who plays, who leads, the fairness commitment, each seat's cards."""

    NAME: ClassVar[str] = "fiftyk.hand_dealt"
    table_id: str
    hand_number: int
    ruleset: Mapping[str, Any]  # the stored spec: {"preset": P, "options": {...}}
    players: int
    dealer: int
    first_leader: int
    player_ids: tuple[str | None, ...]  # who held each seat at the deal (empty if unknown)
    deal_commitment: str
    hands: tuple[DealtHand, ...]
    stock_count: int | None  # 5/6-card games only
    deck: tuple[str, ...]  # the deck in deal order: audit only
    deal_seed: str | None  # the shuffle seed: audit only (everyone sees it at the end)


@dataclass(frozen=True, slots=True)
class CardsPlayed(PublicEvent):
    """A seat played a combination."""

    NAME: ClassVar[str] = "fiftyk.cards_played"
    seat: int
    cards: tuple[str, ...]
    combination_type: str
    points: int
    by_referee: bool


@dataclass(frozen=True, slots=True)
class Passed(PublicEvent):
    """A seat passed: by choice (`player`), by the turn clock (`timeout`), or with an empty
    hand while the stock still deals (`empty_hand`)."""

    NAME: ClassVar[str] = "fiftyk.passed"
    seat: int
    reason: str


@dataclass(frozen=True, slots=True)
class Resigned(PublicEvent):
    """A seat gave up the hand."""

    NAME: ClassVar[str] = "fiftyk.resigned"
    seat: int


@dataclass(frozen=True, slots=True)
class TrickWon(PublicEvent):
    """A trick was won: its points go to the seat; `next_leader` leads (None: hand over)."""

    NAME: ClassVar[str] = "fiftyk.trick_won"
    seat: int
    points: int
    next_leader: int | None


@dataclass(frozen=True, slots=True)
class CardsDrawn(PublicEvent):
    """A seat drew cards from the stock (5/6-card games)."""

    NAME: ClassVar[str] = "fiftyk.cards_drawn"
    seat: int
    count: int
    cards: tuple[str, ...]  # empty unless the viewer sees this seat's cards


@dataclass(frozen=True, slots=True)
class Announced(PublicEvent):
    """A seat announced it holds few cards (报牌, option `announce_at`)."""

    NAME: ClassVar[str] = "fiftyk.announced"
    seat: int
    cards_left: int


@dataclass(frozen=True, slots=True)
class WentOut(PublicEvent):
    """A seat played its last card (and the stock is empty)."""

    NAME: ClassVar[str] = "fiftyk.went_out"
    seat: int
    place: int


@dataclass(frozen=True, slots=True)
class HandEnded(PublicEvent):
    """The hand is over and scored; the seed that opens the deal's commitment is revealed."""

    NAME: ClassVar[str] = "fiftyk.hand_ended"
    result: HandResult  # scores, winner, places, finish order, side totals (exact decimals)
    collected: tuple[int, ...]  # trick points per seat
    deal_seed: str | None  # None for preset decks


def _dealt(stored: Any, viewer: Viewer) -> HandDealt:
    rules = ruleset_of(stored.ruleset)
    players = int(stored.players)
    hands, stock, _ = deal(stored.deck, players, int(stored.dealer), rules.hand_size)
    everything = sees_everything(viewer)
    return HandDealt(
        table_id=str(stored.table_id), hand_number=int(stored.number),
        ruleset=dict(stored.ruleset), players=players, dealer=int(stored.dealer),
        first_leader=int(stored.first_leader),
        player_ids=tuple(getattr(stored, "seat_players", None) or ()),
        deal_commitment=str(stored.commitment),
        hands=tuple(
            DealtHand(seat=seat, card_count=len(cards),
                      cards=tuple(format_cards(cards)) if sees_cards_of(viewer, seat) else ())
            for seat, cards in enumerate(hands)
        ),
        stock_count=len(stock) if rules.has_stock else None,
        deck=tuple(stored.deck) if everything else (),
        deal_seed=stored.seed if everything else None,
    )


def _played(stored: Any, viewer: Viewer) -> CardsPlayed:
    del viewer  # a play is made face up
    return CardsPlayed(seat=int(stored.seat), cards=tuple(stored.cards),
                       combination_type=str(stored.type), points=int(stored.points),
                       by_referee=bool(stored.timeout))


def _passed(stored: Any, viewer: Viewer) -> Passed:
    del viewer
    return Passed(seat=int(stored.seat), reason=str(stored.why))


def _resigned(stored: Any, viewer: Viewer) -> Resigned:
    del viewer
    return Resigned(seat=int(stored.seat))


def _trick_won(stored: Any, viewer: Viewer) -> TrickWon:
    del viewer
    leader = stored.leader
    return TrickWon(seat=int(stored.seat), points=int(stored.points),
                    next_leader=int(leader) if leader is not None else None)


def _drawn(stored: Any, viewer: Viewer) -> CardsDrawn:
    seat = int(stored.seat)
    cards: Sequence[str] = stored.cards
    return CardsDrawn(seat=seat, count=len(cards),
                      cards=tuple(cards) if sees_cards_of(viewer, seat) else ())


def _announced(stored: Any, viewer: Viewer) -> Announced:
    del viewer
    return Announced(seat=int(stored.seat), cards_left=int(stored.count))


def _went_out(stored: Any, viewer: Viewer) -> WentOut:
    del viewer
    return WentOut(seat=int(stored.seat), place=int(stored.place))


def _ended(stored: Any, viewer: Viewer) -> HandEnded:
    del viewer  # the seed is revealed to everyone once the hand is over
    result: Mapping[str, Any] = stored.result
    return HandEnded(result=HandResult.from_json(result),
                     collected=tuple(result.get("collected", ())), deal_seed=stored.seed)


FIFTYK_EVENTS = EventCatalog(NAMESPACE, [
    EventKind(stored_event(Hand, "Dealt"), HandDealt, _dealt),
    EventKind(stored_event(Hand, "CardsPlayed"), CardsPlayed, _played),
    EventKind(stored_event(Hand, "Passed"), Passed, _passed),
    EventKind(stored_event(Hand, "Resigned"), Resigned, _resigned),
    EventKind(stored_event(Hand, "TrickWon"), TrickWon, _trick_won),
    EventKind(stored_event(Hand, "CardsDrawn"), CardsDrawn, _drawn),
    EventKind(stored_event(Hand, "Announced"), Announced, _announced),
    EventKind(stored_event(Hand, "WentOut"), WentOut, _went_out),
    EventKind(stored_event(Hand, "HandEnded"), HandEnded, _ended),
])


__all__ = [
    "FIFTYK_EVENTS", "PASS_REASONS", "Announced", "CardsDrawn", "CardsPlayed", "DealtHand",
    "HandDealt", "HandEnded", "Passed", "Resigned", "TrickWon", "WentOut",
]
