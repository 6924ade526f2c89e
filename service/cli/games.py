"""The games at the command line: how `fiftyk demo` plays each and `fiftyk replay` tells it.

The shared commands (`demo.py`, `replay.py`) know a game only by name, through the installed
games' bundles (`GameBundle.cli`, in each game's package `service/games/<game>/`). A game's
hands are told from what the API answers (views, events), so this is client work: it runs on
the plain install.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from fiftyk_referee.service.core.bundles import installed
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb


@runtime_checkable
class CliGame(Protocol):
    """One game at the command line."""

    @property
    def name(self) -> str:
        """The game's name, as its bundle and its events name it."""

    @property
    def title(self) -> str:
        """The game's name for people (`fiftyk --help` lists the games by it)."""

    @property
    def default_preset(self) -> str:
        """The preset `fiftyk demo` plays when none is asked for."""

    def default_players(self, preset: str) -> int:
        """The seats `fiftyk demo` fills when no count is asked for."""

    def play_hand(self, platform: RefereeClient, table_id: str,
                  seats: Sequence[RefereeClient], number: int, rng: random.Random
                  ) -> pb.HandView:
        """Deal a hand, let the seats' bots play it out, print it; the last view."""

    def match_line(self, platform: RefereeClient, table_id: str, view: pb.HandView,
                   completed: int) -> str:
        """The match after a completed hand (scores, or levels and the next dealer)."""

    def final_line(self, platform: RefereeClient, table_id: str, completed: int,
                   last: str) -> str:
        """The match when the demo ends (`last`: the last match line, empty before one)."""

    def account(self, audit: RefereeClient, hand_id: str, events: Sequence[pb.Event]
                ) -> list[str]:
        """A stored hand (its audit history) told trick by trick, with event versions."""

    def state_lines(self, view: pb.HandView, dealt: pb.Event) -> list[str]:
        """The game's own state lines (e.g. the trump); may order the view's cards."""


def cli_games() -> dict[str, CliGame]:
    """Every installed game that has a command-line side, by name."""
    found: dict[str, CliGame] = {}
    for name, bundle in installed().items():
        if bundle.cli is not None:
            side = bundle.cli()
            if not isinstance(side, CliGame) or side.name != name:
                raise TypeError(f"the bundle {name!r} has no command-line side for its game:"
                                f" {type(side).__name__}")
            found[name] = side
    return found


def cli_game(name: str) -> CliGame:
    """The named game's command-line side (ValueError for a game it does not know)."""
    try:
        return cli_games()[name]
    except KeyError:
        raise ValueError(f"the command line does not know the game {name!r}") from None


def game_of(events: Sequence[pb.Event]) -> CliGame:
    """The game a hand's events belong to (their namespace: `<game>.hand_dealt`, ...)."""
    if not events:
        raise ValueError("a hand has at least its deal event")
    return cli_game(events[0].name.partition(".")[0])


__all__ = ["CliGame", "cli_game", "cli_games", "game_of"]
