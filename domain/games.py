"""The games the referee hosts, by name: the one place a new game is registered."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fiftyk_referee.domain import fiftyk
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import Game

DEFAULT_GAME = fiftyk.NAME  # tables stored before games had names are 五十K tables
GAMES: dict[str, Game] = {fiftyk.NAME: fiftyk.GAME}


def game_named(name: str) -> Game:
    """The registered game called `name` (`INVALID_RULESET` for an unknown one)."""
    game = GAMES.get(name or DEFAULT_GAME)
    if game is None:
        raise RuleError(Reason.INVALID_RULESET,
                        f"unknown game {name!r}; allowed: {', '.join(sorted(GAMES))}")
    return game


def adjudicate(transcript: Any) -> dict[str, Any]:
    """Rule on a transcript with the game its `format` names (五十K's rules when none does)."""
    name = DEFAULT_GAME
    if isinstance(transcript, Mapping):
        for game in GAMES.values():
            if transcript.get("format") == game.transcript_format:
                name = game.name
    return GAMES[name].adjudicate(transcript)


def game_of(hand: object) -> Game:
    """The game a hand aggregate belongs to."""
    for game in GAMES.values():
        if game.owns(hand):
            return game
    raise RuleError(Reason.INVALID_ACTION, f"no registered game plays {type(hand).__name__}")


__all__ = ["DEFAULT_GAME", "GAMES", "adjudicate", "game_named", "game_of"]
