"""The games the referee hosts now, by name.

The domain names no game: the service fills this registry with the games of the installed
bundles (`service/core/bundles.py`, entry-point group `fiftyk_referee.games`) on first use, through
the loader it sets here. A game that is not installed is simply absent: asking for it is
refused with `INVALID_RULESET` (a transcript: `INVALID_TRANSCRIPT`).

The default game is configuration, not an import: the game of the data that names none
(tables, commands and transcripts of 0.1, from before games had names), as the installed
bundles declare it (at most one does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from fiftyk_referee.domain.errors import Reason, RuleError, shown
from fiftyk_referee.domain.game import Game

GAMES: dict[str, Game] = {}  # filled in place: modules hold this dict
_default: list[str] = [""]
_reasons: set[str] = set()  # the hosted games' own reason codes
# Counts changes to GAMES, so that what is built from the registry knows to rebuild.
_generation = [0]
# Who fills the registry on first use (set by the service; nothing without it).
_loader: list[Callable[[], None]] = []
_loaded: list[bool] = []


def set_loader(load: Callable[[], None]) -> None:
    """Have `load` fill the registry (`host_games`) the first time a game is looked up."""
    _loader[:] = [load]


def _ensure_loaded() -> None:
    if not _loaded and _loader:
        _loader[0]()  # it calls host_games, which marks the registry loaded


def host_games(games: Iterable[Game], default: str = "", reasons: Iterable[str] = ()) -> None:
    """Host exactly these games (`default`: the game of data that names none, or none;
    `reasons`: their own reason codes)."""
    hosted = {}
    for game in games:
        if game.name in hosted:
            raise ValueError(f"two games are named {game.name!r}")
        hosted[game.name] = game
    if default and default not in hosted:
        raise ValueError(f"the default game {default!r} is not hosted")
    _loaded[:] = [True]
    GAMES.clear()
    GAMES.update(hosted)
    _default[0] = default
    _reasons.clear()
    _reasons.update(reasons)
    _generation[0] += 1


def hosted() -> Mapping[str, Game]:
    """Every hosted game by name."""
    _ensure_loaded()
    return GAMES


def hosted_reasons() -> frozenset[str]:
    """The hosted games' own reason codes (the core's are `domain.errors.Reason`)."""
    _ensure_loaded()
    return frozenset(_reasons)


def generation() -> int:
    """How many times the registry has changed."""
    _ensure_loaded()
    return _generation[0]


def default_game() -> str:
    """The game of data that names none (`""` when no hosted game is the default)."""
    _ensure_loaded()
    return _default[0]


def _unknown(name: str) -> str:
    allowed = ", ".join(sorted(GAMES)) or "none (no game is installed)"
    if not name:
        return f"no game named and no default game installed; allowed: {allowed}"
    return f"unknown game {shown(name)} (not installed); allowed: {allowed}"


def game_named(name: str) -> Game:
    """The hosted game called `name`, the default game for `""` (`INVALID_RULESET` for
    a game that is not installed)."""
    _ensure_loaded()
    game = GAMES.get(name or _default[0])
    if game is None:
        raise RuleError(Reason.INVALID_RULESET, _unknown(name))
    return game


def game_of_transcript(transcript: Any) -> Game:
    """The game a transcript names (`"game"`, the default game when absent;
    `INVALID_TRANSCRIPT` for one that is not installed)."""
    _ensure_loaded()
    name = ""
    if isinstance(transcript, Mapping) and isinstance(transcript.get("game"), str):
        name = transcript["game"]
    game = GAMES.get(name or _default[0])
    if game is None:
        raise RuleError(Reason.INVALID_TRANSCRIPT, _unknown(name))
    return game


def adjudicate(transcript: Any) -> dict[str, Any]:
    """Rule on a transcript with the game it names (`"game"`, the default when absent)."""
    return game_of_transcript(transcript).adjudicate(transcript)


def game_of(hand: object) -> Game:
    """The game a hand aggregate belongs to."""
    _ensure_loaded()
    for game in GAMES.values():
        if game.owns(hand):
            return game
    raise RuleError(Reason.INVALID_ACTION, f"no hosted game plays {type(hand).__name__}")


__all__ = ["GAMES", "adjudicate", "default_game", "game_named", "game_of", "game_of_transcript",
           "generation", "host_games", "hosted", "hosted_reasons", "set_loader"]
