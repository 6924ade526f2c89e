"""升级 / 拖拉机 (Shengji / Tractor): the referee's second game (docs/shengji.md). Pure, no I/O.

Modules: `cards` (trump order of a hand), `rulesets` (options and presets), `combinations`,
`play` (leads, throws, following, winning, legal actions), `formats` (the house trick rules
of the `shengji_io` preset), `tricks` (a table's trick rules: the rule book's or the house
options), `scoring`, `hand` (the event-sourced hand), `transcript`
(docs/transcript.md#shengji-hands), `events` (its public `shengji.*` events, per viewer),
`views` (what a viewer sees, the result), `oracle` (its rules-oracle questions), `game`
(`GAME`, the game-boundary object).

The match across hands (docs/shengji.md#dealer-rotation-and-the-end-of-a-match): each
hand's `HandRecord.carry` holds what the next deal needs — `next_dealer` (rotation, also
read by the table), `levels`, `room_points` — and `totals` hold each team's level progress,
one step past A for the match win, so a team's cumulative score plus its start level is its
level and `match_end` can read the match's end off the scores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fiftyk_referee.domain.shengji.game import GAME, ShengjiGame

__all__ = ["GAME", "ShengjiGame"]


def __getattr__(name: str) -> object:
    # Loaded on first use, as 五十K's: the game object brings the hand aggregate.
    if name in __all__:
        from fiftyk_referee.domain.shengji import game

        return getattr(game, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
