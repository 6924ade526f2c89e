"""What a viewer sees of a Shengji hand, and a finished hand's result: frozen dataclasses
behind the game protocol's `GameView` and `GameResult` (`domain/game.py`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar

from fiftyk_referee.domain.shengji.cards import LEVELS

GAME_NAME = "shengji"
OVER = "over"  # the phase of a hand that has ended
TEAMS = 2


@dataclass(frozen=True, slots=True)
class Declaration:
    """The standing declaration: who, which cards, after which round, its rung and suit."""

    seat: int
    cards: tuple[str, ...]
    round: int
    rung: int
    suit: str | None


@dataclass(frozen=True, slots=True)
class FailedThrow:
    """A throw another seat could beat: who threw, and the component it was made to play."""

    seat: int
    forced: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ShengjiResult:
    """A finished hand's result: the attackers' points, the level outcome and the match.

    `detail` is the whole result JSON of the transcript format (`docs/shengji.md`)."""

    attacker_points: int
    kitty_bonus: int
    side: str  # "dealer" or "attackers": who climbs
    levels: int  # how many levels it climbs
    levels_before: tuple[str, ...]  # per team
    levels_after: tuple[str, ...]
    next_dealer: int
    game_over: bool
    game_winner: int | None  # the team that won the match with this hand
    detail: Mapping[str, Any]

    @classmethod
    def from_json(cls, result: Mapping[str, Any]) -> ShengjiResult:
        """The typed result of a stored result JSON."""
        winner = result["game_winner"]
        return cls(
            attacker_points=int(result["attackers"]["points"]),
            kitty_bonus=int(result["attackers"]["kitty_bonus"]),
            side=str(result["outcome"]["side"]), levels=int(result["outcome"]["levels"]),
            levels_before=tuple(result["levels"]["before"]),
            levels_after=tuple(result["levels"]["after"]),
            next_dealer=int(result["next_dealer"]), game_over=bool(result["game_over"]),
            game_winner=None if winner is None else int(winner), detail=copy.deepcopy(
                dict(result)))

    def to_json(self) -> dict[str, Any]:
        """The result JSON (a copy)."""
        return copy.deepcopy(dict(self.detail))

    @property
    def level_progress(self) -> tuple[int, ...]:
        """Per team: levels climbed this hand, plus one for winning the match (past A)."""
        progress = [LEVELS.index(a) - LEVELS.index(b)
                    for a, b in zip(self.levels_after, self.levels_before, strict=True)]
        if self.game_winner is not None:
            progress[self.game_winner] += 1
        return tuple(progress)

    @property
    def side_totals(self) -> Mapping[str, Decimal]:
        """The hand's score per team: its level progress (what the match adds up)."""
        return {f"team:{team}": Decimal(step) for team, step in enumerate(self.level_progress)}


@dataclass(frozen=True, slots=True)
class ShengjiView:
    """A hand as one viewer may see it (another seat's cards and the kitty only if allowed)."""

    game: ClassVar[str] = GAME_NAME
    hand_id: str
    table_id: str
    number: int
    version: int
    ruleset: Mapping[str, Any]
    phase: str
    seat: int | None
    cards: tuple[str, ...]  # the viewer's own cards (empty for spectators)
    counts: tuple[int, ...]
    dealer: int | None  # None while a first hand's dealer is not fixed
    levels: tuple[str, str]
    trump_rank: str
    trump_suit: str | None
    declaration: Declaration | None
    round: int  # rounds dealt so far
    spoken: tuple[int, ...]  # seats that declared nothing since the last declaration
    kitty_count: int
    kitty: tuple[str, ...] | None  # the dealer who took it, and audit
    trick: tuple[tuple[int, tuple[str, ...]], ...]
    leader: int | None
    to_act: int | None
    winning: int | None  # the seat whose play leads the trick so far
    collected: tuple[int, ...]
    tricks_played: int
    throws_failed: tuple[FailedThrow, ...]
    commitment: str
    seed: str | None  # revealed when the hand is over
    result: ShengjiResult | None
    turn_deadline: datetime | None
    hands: tuple[tuple[str, ...], ...] | None = None  # audit only
    deck: tuple[str, ...] | None = None  # audit only


    @property
    def is_over(self) -> bool:
        """Whether the hand has ended."""
        return self.phase == OVER


__all__ = ["GAME_NAME", "OVER", "Declaration", "FailedThrow", "ShengjiResult", "ShengjiView"]
