"""五十K (fifty-K): the rules engine, the hand aggregate and the game object of the game."""

from fiftyk_referee.domain.fiftyk.game import GAME, NAME

__all__ = ["GAME", "NAME"]
