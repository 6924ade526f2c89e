"""What a viewer sees of a 五十K hand: frozen, typed, and nothing that viewer may not see.

`Hand.view(viewer)` builds a `HandView` for one viewer of `domain/observer.py`: a seat sees
its own cards and, of every other seat, what the table may see (counts where the ruleset
shows them); a spectator sees no cards; the auditor sees every hand, the stock and the
seed. The gRPC edge converts these views field by field; nothing reads them by string keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any, ClassVar

from fiftyk_referee.domain.observer import Viewer, sees_everything

NAME = "fiftyk"  # the game's name in the registry, on tables, transcripts and events


class HandStatus(StrEnum):
    """Where a hand stands."""

    PLAYING = "playing"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class TrickEntry:
    """One action of the current trick: a play (cards and combination) or a pass."""

    seat: int
    cards: tuple[str, ...] | None  # None for a pass
    combination: str  # the combination type of a play, "" for a pass
    by_referee: bool  # decided by the referee (a turn clock, an empty hand)

    @property
    def is_pass(self) -> bool:
        """Whether the entry is a pass."""
        return self.cards is None


@dataclass(frozen=True, slots=True)
class TopPlay:
    """The play a follower must beat."""

    seat: int
    combination: str
    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SeatState:
    """One seat as the viewer sees it."""

    seat: int
    card_count: int | None  # None when the rules hide it from this viewer
    collected: int  # trick points collected
    resigned: bool
    finish_place: int | None  # 1 for the first out, None while still playing
    cards: tuple[str, ...] | None  # only for the auditor (every seat) — never another seat's


@dataclass(frozen=True, slots=True)
class TeamResult:
    """One team's part of a hand's result."""

    seats: tuple[int, ...]
    collected: int
    score: Decimal
    rating: Decimal | None


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat's part of a hand's result."""

    seat: int
    score: Decimal
    rating: Decimal | None


@dataclass(frozen=True, slots=True)
class HandResult:
    """A finished hand's result (as recorded in its `HandEnded` event)."""

    teams: tuple[TeamResult, ...]
    seats: tuple[SeatResult, ...]
    winning_team: int | None
    winning_seat: int | None
    places: tuple[int, ...]
    finish_order: tuple[int, ...]
    side_totals: Mapping[str, Decimal]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HandResult:
        """Read the stored result JSON (numbers or decimal text)."""
        return cls(
            teams=tuple(TeamResult(tuple(t["seats"]), int(t["collected"]), _decimal(t["score"]),
                                   _optional_decimal(t["rating"])) for t in data["teams"]),
            seats=tuple(SeatResult(int(s["seat"]), _decimal(s["score"]),
                                   _optional_decimal(s["rating"])) for s in data["seats"]),
            winning_team=data["winner"]["team"],
            winning_seat=data["winner"]["seat"],
            places=tuple(data.get("places", ())),
            finish_order=tuple(data.get("finish_order", ())),
            side_totals={side: _decimal(v) for side, v in data.get("side_totals", {}).items()},
        )


def _decimal(value: Any) -> Decimal:
    return Decimal(str(value))


def _optional_decimal(value: Any) -> Decimal | None:
    return None if value is None else _decimal(value)


@dataclass(frozen=True, slots=True)
class Announcement:
    """A seat announced how few cards it holds (报牌)."""

    seat: int
    cards: int


@dataclass(frozen=True, slots=True)
class HandView:
    """A 五十K hand as one viewer may see it."""

    game: ClassVar[str] = NAME
    viewer: Viewer
    hand_id: str
    table_id: str
    number: int
    version: int
    ruleset: Mapping[str, Any]  # the stored ruleset spec
    players: int
    dealer: int
    status: HandStatus
    turn: int | None
    leader: int | None
    trick: tuple[TrickEntry, ...]
    top: TopPlay | None
    trick_points: int
    seats: tuple[SeatState, ...]
    own_cards: tuple[str, ...]  # the viewing seat's cards, sorted; empty for others
    stock_count: int | None  # None when the ruleset has no stock
    stock: tuple[str, ...] | None  # only for the auditor
    announcements: tuple[Announcement, ...]
    finish_order: tuple[int, ...]
    commitment: str
    seed: str | None  # revealed when the hand is over (always to the auditor)
    first_leader: int | None  # only for the auditor
    result: HandResult | None
    turn_deadline: datetime | None

    @property
    def is_over(self) -> bool:
        """Whether the hand has ended."""
        return self.status == HandStatus.OVER

    @property
    def to_act(self) -> int | None:
        """The seat to act (the game protocol's name for `turn`)."""
        return self.turn

    @property
    def full(self) -> bool:
        """Whether the view shows every hand (the auditor's)."""
        return sees_everything(self.viewer)


__all__ = [
    "Announcement", "HandResult", "HandStatus", "HandView", "SeatResult", "SeatState",
    "TeamResult", "TopPlay", "TrickEntry",
]
