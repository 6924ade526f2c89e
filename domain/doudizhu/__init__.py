"""斗地主 (Dou Dizhu): rulesets, combinations, legal plays, bidding, the hand aggregate,
its events, views, scoring, transcripts, the rules oracle and the game object."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fiftyk_referee.domain.doudizhu.game import GAME
    from fiftyk_referee.domain.doudizhu.rulesets import GAME_NAME as NAME

__all__ = ["GAME", "NAME"]


def __getattr__(name: str) -> object:
    # Loaded on first use, as 五十K's package does: the rules engine (rulesets, combinations,
    # legal plays) serves the client-side commands without loading the hand aggregate.
    if name == "GAME":
        from fiftyk_referee.domain.doudizhu import game

        return game.GAME
    if name == "NAME":
        from fiftyk_referee.domain.doudizhu import rulesets

        return rulesets.GAME_NAME
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
