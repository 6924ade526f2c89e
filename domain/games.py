"""The games the referee hosts, by name: the one place a new game is registered."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fiftyk_referee.domain import fiftyk, shengji
from fiftyk_referee.domain.errors import Reason, RuleError, shown
from fiftyk_referee.domain.game import Game

DEFAULT_GAME = fiftyk.NAME  # tables stored before games had names are 五十K tables
GAMES: dict[str, Game] = {fiftyk.NAME: fiftyk.GAME, shengji.GAME.name: shengji.GAME}
BUILT_IN = frozenset(GAMES)
# Counts changes to GAMES, so that what is built from the registry knows to rebuild.
_generation = [0]


def generation() -> int:
    """How many times the registry has changed (0: the built-in games only)."""
    return _generation[0]


def register_game(game: Game) -> None:
    """Host another game (its edge converter registers at the gRPC edge the same way); a
    name already taken by another game is refused."""
    held = GAMES.get(game.name)
    if held is not None and held is not game:
        raise ValueError(f"a game named {game.name!r} is already registered")
    GAMES[game.name] = game
    _generation[0] += 1


def unregister_game(name: str) -> None:
    """Stop hosting a game registered with `register_game` (the built-in ones stay)."""
    if name in BUILT_IN:
        raise ValueError(f"{name!r} is a built-in game")
    if GAMES.pop(name, None) is not None:
        _generation[0] += 1


def game_named(name: str) -> Game:
    """The registered game called `name` (`INVALID_RULESET` for an unknown one)."""
    game = GAMES.get(name or DEFAULT_GAME)
    if game is None:
        raise RuleError(Reason.INVALID_RULESET,
                        f"unknown game {shown(name)}; allowed: {', '.join(sorted(GAMES))}")
    return game


def game_of_transcript(transcript: Any) -> Game:
    """The game a transcript names (`"game"`, 五十K when absent; `INVALID_TRANSCRIPT` for an
    unknown one)."""
    name = DEFAULT_GAME
    if isinstance(transcript, Mapping) and isinstance(transcript.get("game"), str):
        name = transcript["game"]
    game = GAMES.get(name)
    if game is None:
        raise RuleError(Reason.INVALID_TRANSCRIPT,
                        f"unknown game {shown(name)}; allowed: {', '.join(sorted(GAMES))}")
    return game


def adjudicate(transcript: Any) -> dict[str, Any]:
    """Rule on a transcript with the game it names (`"game"`, 五十K when absent)."""
    return game_of_transcript(transcript).adjudicate(transcript)


def game_of(hand: object) -> Game:
    """The game a hand aggregate belongs to."""
    for game in GAMES.values():
        if game.owns(hand):
            return game
    raise RuleError(Reason.INVALID_ACTION, f"no registered game plays {type(hand).__name__}")


__all__ = ["DEFAULT_GAME", "GAMES", "adjudicate", "game_named", "game_of", "game_of_transcript",
           "generation", "register_game", "unregister_game"]
