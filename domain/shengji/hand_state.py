"""What a Shengji hand holds, for the modules of its phases (`declaring`, `burying`, `playing`).

The hand aggregate (`hand.py`) is one class made of its phases: each phase module is a part
of it with that phase's commands, checks and answers. This module is what they share: the
hand's state as the created event sets it up (`ShengjiHand.__init__`), the small checks
every phase makes, and the events a phase records. The events themselves are declared on
`ShengjiHand` (an event's stored topic names its aggregate's class); here they are only
named, with their fields, so that a phase can record them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from fiftyk_referee.domain.cards import Card, parse_card
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, TrumpOrder
from fiftyk_referee.domain.shengji.play import Lead
from fiftyk_referee.domain.shengji.rulesets import PLAYERS, ShengjiRules
from fiftyk_referee.domain.shengji.tricks import TrickRules
from fiftyk_referee.domain.shengji.views import OVER, Declaration

DECLARE = "declare"  # show trump cards (or none) in the open declaration window
BURY = "bury"  # the dealer returns cards to the kitty
DECLARING, BURYING, PLAYING = "declaring", "burying", "playing"
RANK_NAMES = {rank: name for name, rank in LEVEL_RANK.items()}


def rank_name(rank: int) -> str:
    """A level rank's name ("2" .. "A")."""
    return RANK_NAMES[rank]


class HandState:
    """A Shengji hand's state and what every phase shares (see the module's docstring)."""

    # The deal.
    rules: ShengjiRules
    tricks: TrickRules
    deck: tuple[str, ...]
    seed: str | None
    levels: tuple[str, str]
    room_points: tuple[int, ...]
    first_seat: int
    rank: int
    order: TrumpOrder
    phase: str
    hands: list[list[Card]]
    actions: list[dict[str, Any]]
    modified_on: datetime
    # Declaring.
    round: int
    spoken: set[int]
    declaration: Declaration | None
    first_declarer: int | None
    dealer: int
    dealer_fixed: bool
    kitty_dealt: tuple[Card, ...]
    # Burying.
    kitty: tuple[Card, ...]
    # Playing.
    trick: list[tuple[int, tuple[Card, ...]]]
    lead: Lead | None
    best_seat: int | None
    best_key: int
    turn: int | None
    collected: list[int]
    last_lead_largest: int
    last_winner: int | None
    throws_failed: list[dict[str, Any]]
    failed_seats: list[int]


    @property
    def is_over(self) -> bool:
        """The hand has ended and has its result."""
        return self.phase == OVER

    def _parse(self, cards: Iterable[str]) -> list[Card]:
        if isinstance(cards, str):
            raise RuleError(Reason.UNKNOWN_CARD, "cards are a list of card tokens")
        return [parse_card(c) for c in cards]

    def _check_seat(self, seat: int) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or seat not in range(PLAYERS):
            raise RuleError(Reason.INVALID_SEAT, "seat must be 0..3")

    @staticmethod
    def _missing(hand: Sequence[Card], cards: Sequence[Card]) -> list[Card]:
        remaining = list(hand)
        missing = []
        for card in cards:
            try:
                remaining.remove(card)
            except ValueError:
                missing.append(card)
        return missing

    def turn_deadline(self) -> datetime | None:
        """When the seat to act runs out of time (last event + turn_timeout), if clocked."""
        if self.is_over or not self.rules.turn_timeout:
            return None
        return self.modified_on + timedelta(seconds=self.rules.turn_timeout)

    # -- the events a phase records (declared on ShengjiHand) --------------------------------

    def _round_dealt(self, round: int, cards: list[list[str]]) -> None:
        raise NotImplementedError

    def _spoke(self, seat: int) -> None:
        raise NotImplementedError

    def _declared(self, seat: int, cards: list[str], round: int, rung: int,
                  suit: str | None) -> None:
        raise NotImplementedError

    def _window_closed(self, round: int, by: str) -> None:
        raise NotImplementedError

    def _kitty_taken(self, dealer: int, suit: str | None, kitty: list[str]) -> None:
        raise NotImplementedError

    def _buried(self, seat: int, cards: list[str], timeout: bool) -> None:
        raise NotImplementedError

    def _throw_failed(self, seat: int, attempted: list[str], forced: list[str],
                      action: int) -> None:
        raise NotImplementedError

    def _played(self, seat: int, cards: list[str], key: int | None, timeout: bool) -> None:
        raise NotImplementedError

    def _trick_won(self, seat: int, points: int, leader: int | None) -> None:
        raise NotImplementedError

    def _ended(self, result: dict[str, Any], seed: str | None) -> None:
        raise NotImplementedError


__all__ = ["BURY", "BURYING", "DECLARE", "DECLARING", "PLAYING", "HandState", "rank_name"]
