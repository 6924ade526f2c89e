"""What a viewer sees of a 斗地主 hand: frozen, typed, and nothing that viewer may not see.

`DoudizhuHand.view(viewer)` builds a `DoudizhuView` for one viewer of `domain/observer.py`:
a seat sees its own cards and how many every other seat holds (counts are public in
斗地主); the 底牌 (the three cards kept back) are hidden from everyone until the landlord
takes them, and then shown to all; a spectator sees the public state; the auditor sees
every hand, the 底牌, the deck and the seed. The gRPC edge converts these views field by
field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any, ClassVar

from fiftyk_referee.domain.doudizhu.bidding import BidEntry
from fiftyk_referee.domain.doudizhu.rulesets import GAME_NAME
from fiftyk_referee.domain.observer import Viewer, sees_everything

LANDLORD_ROLE, FARMER_ROLE = "landlord", "farmer"


class Phase(StrEnum):
    """Where a hand stands."""

    BIDDING = "bidding"
    PLAYING = "playing"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class TableEntry:
    """One action of the current round of play: a play (cards and combination) or a pass."""

    seat: int
    cards: tuple[str, ...] | None  # None for a pass
    combination: str  # the combination's kind for a play, "" for a pass
    by_referee: bool  # decided by the referee (a turn clock)

    @property
    def is_pass(self) -> bool:
        """Whether the entry is a pass."""
        return self.cards is None


@dataclass(frozen=True, slots=True)
class TopPlay:
    """The play the next seat must beat (or pass), and who made it."""

    seat: int
    combination: str
    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SeatState:
    """One seat as the viewer sees it."""

    seat: int
    card_count: int  # public in 斗地主
    role: str | None  # "landlord" or "farmer" once the landlord is known
    plays: int  # how many plays the seat has made
    cards: tuple[str, ...] | None  # only for the auditor (every seat), sorted


@dataclass(frozen=True, slots=True)
class DoudizhuResult:
    """A finished hand's result (as recorded in its `HandEnded` event)."""

    redeal: bool  # everybody passed in the bidding: no landlord, no score
    landlord: int | None
    bid: int  # the points bid (1 in a room that calls and robs)
    robs: int
    winner: str | None  # "landlord" or "farmers" (None for a redeal)
    winning_seat: int | None  # the seat that played its last card
    bombs: int
    rockets: int
    spring: bool
    anti_spring: bool
    uncapped_multiplier: int
    multiplier: int  # the multiplier the hand was paid at
    base_score: int
    unit: int  # base_score × multiplier: what each farmer won or paid
    scores: tuple[int, ...]  # per seat; they add up to 0
    kitty: tuple[str, ...]
    side_totals: Mapping[str, Decimal]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DoudizhuResult:
        """Read the stored result JSON."""
        return cls(
            redeal=bool(data["redeal"]), landlord=data["landlord"], bid=int(data["bid"]),
            robs=int(data["robs"]), winner=data["winner"], winning_seat=data["winning_seat"],
            bombs=int(data["bombs"]), rockets=int(data["rockets"]),
            spring=bool(data["spring"]), anti_spring=bool(data["anti_spring"]),
            uncapped_multiplier=int(data["uncapped_multiplier"]),
            multiplier=int(data["multiplier"]), base_score=int(data["base_score"]),
            unit=int(data["unit"]), scores=tuple(int(s) for s in data["scores"]),
            kitty=tuple(data["kitty"]),
            side_totals={side: Decimal(str(v)) for side, v in data["side_totals"].items()},
        )


@dataclass(frozen=True, slots=True)
class DoudizhuView:
    """A 斗地主 hand as one viewer may see it."""

    game: ClassVar[str] = GAME_NAME
    viewer: Viewer
    hand_id: str
    table_id: str
    number: int
    version: int
    ruleset: Mapping[str, Any]  # the stored ruleset spec
    players: int
    dealer: int
    phase: Phase
    to_act: int | None
    bidding: str  # "points" or "rob"
    first_bidder: int
    bids: tuple[BidEntry, ...]  # what each seat said, in order
    highest_bid: int  # the highest points bid so far (1 once a rob room's landlord is called)
    robs: int
    landlord: int | None
    kitty: tuple[str, ...] | None  # the 底牌: shown to all once the landlord took them
    kitty_count: int
    own_cards: tuple[str, ...]  # the viewing seat's cards, sorted; empty for others
    seats: tuple[SeatState, ...]
    trick: tuple[TableEntry, ...]  # the current round of play, since its lead
    top: TopPlay | None
    leader: int | None  # who led the current round of play
    bombs: int
    rockets: int
    multiplier: int  # as it stands, capped (a spring, decided at the end, only then)
    uncapped_multiplier: int  # the same before `multiplier_cap`
    commitment: str
    seed: str | None  # revealed when the hand is over (always to the auditor)
    deck: tuple[str, ...] | None  # only for the auditor
    result: DoudizhuResult | None
    turn_deadline: datetime | None

    @property
    def is_over(self) -> bool:
        """Whether the hand has ended."""
        return self.phase == Phase.OVER

    @property
    def full(self) -> bool:
        """Whether the view shows every hand (the auditor's)."""
        return sees_everything(self.viewer)


__all__ = ["FARMER_ROLE", "LANDLORD_ROLE", "DoudizhuResult", "DoudizhuView", "Phase",
           "SeatState", "TableEntry", "TopPlay"]
