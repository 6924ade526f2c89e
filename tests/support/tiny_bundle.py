"""Tiny's bundle (`tests/support/tiny_game.py`): what its entry point names.

A test installs it as a package would, through an entry point in the group
`fiftyk_referee.games` (tests/e2e/test_third_game.py), and the referee hosts it as it hosts
the built-in games. It brings no converters, command-line side or renderer of its own, so
its views, results and events travel as JSON values.
"""

from __future__ import annotations

from fiftyk_referee.service.core.bundles import GameBundle
from tests.support import tiny_game

BUNDLE = GameBundle(game=tiny_game.GAME, title="Tiny", reasons=tiny_game.TinyReason)

__all__ = ["BUNDLE"]
