"""五十K (fifty-K): the rules engine, the hand aggregate and the game object of the game."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fiftyk_referee.domain.fiftyk.game import GAME, NAME

__all__ = ["GAME", "NAME"]


def __getattr__(name: str) -> object:
    # Loaded on first use: the game object brings the hand aggregate and with it the event
    # store library (the server extra), which the rules engine (rulesets, combinations, legal
    # plays) used by the client-side commands does not need.
    if name in __all__:
        from fiftyk_referee.domain.fiftyk import game

        return getattr(game, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
