"""The 斗地主 hand's public events (`doudizhu.*`), and what each viewer may see of them.

Hidden cards travel in one event only: the deal (each seat's 17 cards, the 底牌, the whole
deck and the secret seed). A seat sees its own cards and how many every seat holds; a
spectator sees only counts; the audit role sees everything (`domain/observer.py` decides).
The 底牌 are shown to every viewer by `doudizhu.landlord_chosen`, when the landlord takes
them. Everything else happens in the open: bids, plays and passes read the same for every
viewer, and `doudizhu.hand_ended` reveals the seed with the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from fiftyk_referee.domain.cards import format_cards, parse_card
from fiftyk_referee.domain.deal import deal
from fiftyk_referee.domain.doudizhu.hand import DoudizhuHand
from fiftyk_referee.domain.doudizhu.rulesets import GAME_NAME, HAND_SIZE, KITTY_SIZE, PLAYERS
from fiftyk_referee.domain.doudizhu.views import DoudizhuResult
from fiftyk_referee.domain.events import EventCatalog, EventKind, PublicEvent, stored_event
from fiftyk_referee.domain.observer import Viewer, sees_cards_of, sees_everything


@dataclass(frozen=True, slots=True)
class DealtHand:
    """One seat's part of a deal: how many cards, and which ones if the viewer may see."""

    seat: int
    card_count: int
    cards: tuple[str, ...]  # sorted; empty unless the viewer sees this seat's cards


@dataclass(frozen=True, slots=True)
class HandDealt(PublicEvent):
    """A hand was dealt: who deals, who bids first, the commitment, each seat's cards."""

    NAME: ClassVar[str] = "doudizhu.hand_dealt"
    table_id: str
    hand_number: int
    ruleset: Mapping[str, Any]  # the stored spec: {"preset": P, "options": {...}}
    dealer: int
    first_bidder: int
    player_ids: tuple[str | None, ...]  # who held each seat at the deal (empty if unknown)
    deal_commitment: str
    hands: tuple[DealtHand, ...]
    kitty_count: int  # the 底牌, hidden until the landlord takes them
    kitty: tuple[str, ...]  # audit only
    deck: tuple[str, ...]  # the deck in deal order: audit only
    deal_seed: str | None  # the shuffle seed: audit only (everyone sees it at the end)


@dataclass(frozen=True, slots=True)
class Bid(PublicEvent):
    """A seat spoke in the bidding: `bid` (with its points), `call`, `rob` or `pass`."""

    NAME: ClassVar[str] = "doudizhu.bid"
    seat: int
    kind: str
    points: int  # the points of a `bid` (0 for the other kinds)
    by_referee: bool  # said for the seat by its turn clock


@dataclass(frozen=True, slots=True)
class LandlordChosen(PublicEvent):
    """The bidding is over: the landlord takes the 底牌, shown to everyone, and leads."""

    NAME: ClassVar[str] = "doudizhu.landlord_chosen"
    seat: int
    kitty: tuple[str, ...]
    bid: int  # the points bid (1 in a room that calls and robs)
    robs: int


@dataclass(frozen=True, slots=True)
class CardsPlayed(PublicEvent):
    """A seat played a combination."""

    NAME: ClassVar[str] = "doudizhu.cards_played"
    seat: int
    cards: tuple[str, ...]
    combination_type: str
    by_referee: bool


@dataclass(frozen=True, slots=True)
class Passed(PublicEvent):
    """A seat passed in the play (by choice, or by the referee when its clock ran out)."""

    NAME: ClassVar[str] = "doudizhu.passed"
    seat: int
    by_referee: bool


@dataclass(frozen=True, slots=True)
class TrickEnded(PublicEvent):
    """Two passes in a row: the round of play is over; `next_leader` made its last play and
    leads the next."""

    NAME: ClassVar[str] = "doudizhu.trick_ended"
    next_leader: int


@dataclass(frozen=True, slots=True)
class HandEnded(PublicEvent):
    """The hand is over (scored, or a redeal); the seed that opens the commitment is
    revealed."""

    NAME: ClassVar[str] = "doudizhu.hand_ended"
    result: DoudizhuResult
    deal_seed: str | None  # None for preset decks


def _dealt(stored: Any, viewer: Viewer) -> HandDealt:
    hands, kitty, _ = deal(stored.deck, PLAYERS, int(stored.dealer), HAND_SIZE)
    everything = sees_everything(viewer)
    return HandDealt(
        table_id=str(stored.table_id), hand_number=int(stored.number),
        ruleset=dict(stored.ruleset), dealer=int(stored.dealer),
        first_bidder=int(stored.first_bidder),
        player_ids=tuple(getattr(stored, "seat_players", None) or ()),
        deal_commitment=str(stored.commitment),
        hands=tuple(
            DealtHand(seat=seat, card_count=len(cards),
                      cards=tuple(format_cards(cards)) if sees_cards_of(viewer, seat) else ())
            for seat, cards in enumerate(hands)),
        kitty_count=KITTY_SIZE,
        kitty=tuple(format_cards(kitty)) if everything else (),
        deck=tuple(stored.deck) if everything else (),
        deal_seed=stored.seed if everything else None,
    )


def _bid(stored: Any, viewer: Viewer) -> Bid:
    del viewer  # said aloud
    value = stored.value
    return Bid(seat=int(stored.seat), kind=str(stored.kind),
               points=int(value) if value is not None else 0, by_referee=bool(stored.timeout))


def _landlord_chosen(stored: Any, viewer: Viewer) -> LandlordChosen:
    del viewer  # the 底牌 are shown to the whole table
    return LandlordChosen(seat=int(stored.seat),
                          kitty=tuple(format_cards(parse_card(c) for c in stored.kitty)),
                          bid=int(stored.bid), robs=int(stored.robs))


def _played(stored: Any, viewer: Viewer) -> CardsPlayed:
    del viewer  # a play is made face up
    return CardsPlayed(seat=int(stored.seat), cards=tuple(stored.cards),
                       combination_type=str(stored.kind), by_referee=bool(stored.timeout))


def _passed(stored: Any, viewer: Viewer) -> Passed:
    del viewer
    return Passed(seat=int(stored.seat), by_referee=bool(stored.timeout))


def _trick_ended(stored: Any, viewer: Viewer) -> TrickEnded:
    del viewer
    return TrickEnded(next_leader=int(stored.leader))


def _ended(stored: Any, viewer: Viewer) -> HandEnded:
    del viewer  # the seed is revealed to everyone once the hand is over
    return HandEnded(result=DoudizhuResult.from_json(stored.result), deal_seed=stored.seed)


DOUDIZHU_EVENTS = EventCatalog(GAME_NAME, [
    EventKind(stored_event(DoudizhuHand, "Dealt"), HandDealt, _dealt),
    EventKind(stored_event(DoudizhuHand, "Bid"), Bid, _bid),
    EventKind(stored_event(DoudizhuHand, "LandlordChosen"), LandlordChosen, _landlord_chosen),
    EventKind(stored_event(DoudizhuHand, "CardsPlayed"), CardsPlayed, _played),
    EventKind(stored_event(DoudizhuHand, "Passed"), Passed, _passed),
    EventKind(stored_event(DoudizhuHand, "TrickEnded"), TrickEnded, _trick_ended),
    EventKind(stored_event(DoudizhuHand, "HandEnded"), HandEnded, _ended),
])


__all__ = ["DOUDIZHU_EVENTS", "Bid", "CardsPlayed", "DealtHand", "HandDealt", "HandEnded",
           "LandlordChosen", "Passed", "TrickEnded"]
