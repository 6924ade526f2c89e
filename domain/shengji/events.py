"""The Shengji hand's public events (`shengji.*`), and what each viewer may see of them.

Hidden cards travel in four events: the deal (the whole deck, and the secret seed), each
round of the paced deal (a seat sees its own new cards, of the others how many), and the
kitty taken and buried (the dealer who holds it sees it, others a count). The audit role
sees everything (`domain/observer.py`). Everything else happens in the open: declarations
show their cards, plays and failed throws are face up, and `shengji.hand_ended` reveals
the seed and the kitty with the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from fiftyk_referee.domain.events import EventCatalog, EventKind, PublicEvent, stored_event
from fiftyk_referee.domain.observer import Viewer, sees_cards_of, sees_everything
from fiftyk_referee.domain.shengji.hand import GAME_NAME, ShengjiHand


@dataclass(frozen=True, slots=True)
class SeatCards:
    """One seat's cards in an event: how many, and which if the viewer may see them."""

    seat: int
    count: int
    cards: tuple[str, ...]  # empty unless the viewer sees this seat's cards


@dataclass(frozen=True, slots=True)
class HandDealt(PublicEvent):
    """A Shengji hand was set up: the deck is shuffled and committed, no card dealt yet."""

    NAME: ClassVar[str] = "shengji.hand_dealt"
    table_id: str
    hand_number: int
    ruleset: Mapping[str, Any]
    dealer: int | None  # None: a first hand, whose dealer the declarations decide
    levels: tuple[str, ...]  # per team
    room_points: tuple[int, ...]  # per seat (QQ rules)
    player_ids: tuple[str | None, ...]
    deal_commitment: str
    deck: tuple[str, ...]  # audit only
    deal_seed: str | None  # audit only


@dataclass(frozen=True, slots=True)
class RoundDealt(PublicEvent):
    """One round of the paced deal: every seat received cards."""

    NAME: ClassVar[str] = "shengji.round_dealt"
    round: int
    hands: tuple[SeatCards, ...]


@dataclass(frozen=True, slots=True)
class DeclaredNothing(PublicEvent):
    """A seat let the declaration window pass."""

    NAME: ClassVar[str] = "shengji.declared_nothing"
    seat: int


@dataclass(frozen=True, slots=True)
class Declared(PublicEvent):
    """A seat declared (or overcalled) trumps by showing cards."""

    NAME: ClassVar[str] = "shengji.declared"
    seat: int
    cards: tuple[str, ...]
    round: int
    suit: str | None  # None: no-trump (jokers)


@dataclass(frozen=True, slots=True)
class WindowClosed(PublicEvent):
    """A declaration window closed (`by`: "passes", "timer" or "transcript")."""

    NAME: ClassVar[str] = "shengji.window_closed"
    round: int
    by: str


@dataclass(frozen=True, slots=True)
class KittyTaken(PublicEvent):
    """The dealer took the kitty; the trump suit is fixed."""

    NAME: ClassVar[str] = "shengji.kitty_taken"
    dealer: int
    trump_suit: str | None
    kitty: SeatCards  # the dealer's seat; cards only for the dealer and audit


@dataclass(frozen=True, slots=True)
class KittyBuried(PublicEvent):
    """The dealer buried cards as the new kitty."""

    NAME: ClassVar[str] = "shengji.kitty_buried"
    buried: SeatCards  # cards only for the dealer and audit
    by_referee: bool


@dataclass(frozen=True, slots=True)
class ThrowFailed(PublicEvent):
    """A throw failed: the attempted cards are shown, the forced component is played."""

    NAME: ClassVar[str] = "shengji.throw_failed"
    seat: int
    attempted: tuple[str, ...]
    forced: tuple[str, ...]
    action: int  # its index among the hand's actions (the transcript's numbering)


@dataclass(frozen=True, slots=True)
class CardsPlayed(PublicEvent):
    """A seat played cards to the trick."""

    NAME: ClassVar[str] = "shengji.cards_played"
    seat: int
    cards: tuple[str, ...]
    by_referee: bool


@dataclass(frozen=True, slots=True)
class TrickWon(PublicEvent):
    """A trick was won; `next_leader` leads the next one (None: the hand is over)."""

    NAME: ClassVar[str] = "shengji.trick_won"
    seat: int
    points: int
    next_leader: int | None


@dataclass(frozen=True, slots=True)
class HandEnded(PublicEvent):
    """The hand is over: the stored result (docs/transcript.md#shengji-result), and the seed."""

    NAME: ClassVar[str] = "shengji.hand_ended"
    result: Mapping[str, Any]  # the result's fields from `dealer` on, as recorded
    deal_seed: str | None


def _seat_cards(seat: int, cards: Sequence[str], viewer: Viewer) -> SeatCards:
    return SeatCards(seat=seat, count=len(cards),
                     cards=tuple(cards) if sees_cards_of(viewer, seat) else ())


def _dealt(stored: Any, viewer: Viewer) -> HandDealt:
    everything = sees_everything(viewer)
    dealer = stored.dealer
    return HandDealt(
        table_id=str(stored.table_id), hand_number=int(stored.number),
        ruleset=dict(stored.ruleset), dealer=int(dealer) if dealer is not None else None,
        levels=tuple(stored.levels), room_points=tuple(stored.room_points),
        player_ids=tuple(stored.seat_players or ()), deal_commitment=str(stored.commitment),
        deck=tuple(stored.deck) if everything else (),
        deal_seed=stored.seed if everything else None)


def _round_dealt(stored: Any, viewer: Viewer) -> RoundDealt:
    return RoundDealt(round=int(stored.round),
                      hands=tuple(_seat_cards(seat, cards, viewer)
                                  for seat, cards in enumerate(stored.cards)))


def _declared_nothing(stored: Any, viewer: Viewer) -> DeclaredNothing:
    del viewer
    return DeclaredNothing(seat=int(stored.seat))


def _declared(stored: Any, viewer: Viewer) -> Declared:
    del viewer  # a declaration shows its cards to everyone
    return Declared(seat=int(stored.seat), cards=tuple(stored.cards), round=int(stored.round),
                    suit=stored.suit)


def _window_closed(stored: Any, viewer: Viewer) -> WindowClosed:
    del viewer
    return WindowClosed(round=int(stored.round), by=str(stored.by))


def _kitty_taken(stored: Any, viewer: Viewer) -> KittyTaken:
    dealer = int(stored.dealer)
    return KittyTaken(dealer=dealer, trump_suit=stored.suit,
                      kitty=_seat_cards(dealer, stored.kitty, viewer))


def _kitty_buried(stored: Any, viewer: Viewer) -> KittyBuried:
    return KittyBuried(buried=_seat_cards(int(stored.seat), stored.cards, viewer),
                       by_referee=bool(stored.timeout))


def _throw_failed(stored: Any, viewer: Viewer) -> ThrowFailed:
    del viewer
    return ThrowFailed(seat=int(stored.seat), attempted=tuple(stored.attempted),
                       forced=tuple(stored.forced), action=int(stored.action))


def _played(stored: Any, viewer: Viewer) -> CardsPlayed:
    del viewer
    return CardsPlayed(seat=int(stored.seat), cards=tuple(stored.cards),
                       by_referee=bool(stored.timeout))


def _trick_won(stored: Any, viewer: Viewer) -> TrickWon:
    del viewer
    leader = stored.leader
    return TrickWon(seat=int(stored.seat), points=int(stored.points),
                    next_leader=int(leader) if leader is not None else None)


def _ended(stored: Any, viewer: Viewer) -> HandEnded:
    del viewer  # the seed and the kitty are revealed to everyone once the hand is over
    return HandEnded(result=dict(stored.result), deal_seed=stored.seed)


SHENGJI_EVENTS = EventCatalog(GAME_NAME, [
    EventKind(stored_event(ShengjiHand, "Dealt"), HandDealt, _dealt),
    EventKind(stored_event(ShengjiHand, "RoundDealt"), RoundDealt, _round_dealt),
    EventKind(stored_event(ShengjiHand, "DeclaredNothing"), DeclaredNothing, _declared_nothing),
    EventKind(stored_event(ShengjiHand, "Declared"), Declared, _declared),
    EventKind(stored_event(ShengjiHand, "WindowClosed"), WindowClosed, _window_closed),
    EventKind(stored_event(ShengjiHand, "KittyTaken"), KittyTaken, _kitty_taken),
    EventKind(stored_event(ShengjiHand, "KittyBuried"), KittyBuried, _kitty_buried),
    EventKind(stored_event(ShengjiHand, "ThrowFailed"), ThrowFailed, _throw_failed),
    EventKind(stored_event(ShengjiHand, "CardsPlayed"), CardsPlayed, _played),
    EventKind(stored_event(ShengjiHand, "TrickWon"), TrickWon, _trick_won),
    EventKind(stored_event(ShengjiHand, "HandEnded"), HandEnded, _ended),
])


__all__ = [
    "SHENGJI_EVENTS", "CardsPlayed", "Declared", "DeclaredNothing", "HandDealt", "HandEnded",
    "KittyBuried", "KittyTaken", "RoundDealt", "SeatCards", "ThrowFailed", "TrickWon",
    "WindowClosed",
]
