"""Every game the referee hosts, for the tests that check a feature per game: a table of
the game with a bot in every seat, and bots that play a dealt hand to its end through the
API (ListLegalPlays and the game's commands)."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e import harness, test_doudizhu, test_shengji
from tests.e2e.harness import LiveServer, Seated


@dataclass(frozen=True)
class HostedGame:
    """A game as the per-game tests use it: a preset, its seats, a table, whole hands."""

    name: str
    preset: str
    players: int
    open_table: Callable[[LiveServer], Seated]
    play_out: Callable[[Seated, pb.HandView, random.Random], pb.HandView]

    def play_hand(self, table: Seated, rng: random.Random) -> pb.HandView:
        """Deal the table's next hand and let the bots play it out; the last view."""
        return self.play_out(table, table.platform.start_hand(table.table_id).hand, rng)


GAMES = {game.name: game for game in (
    HostedGame("fiftyk", "classic", 4, lambda server: harness.seat_bots(server, "classic", 4),
               lambda table, view, rng: harness.play_out(table, view, rng)[0]),
    HostedGame("shengji", "tractor", test_shengji.PLAYERS, test_shengji.shengji_table,
               test_shengji.play_out),
    HostedGame("doudizhu", "classic", test_doudizhu.PLAYERS, test_doudizhu.doudizhu_table,
               test_doudizhu.play_out),
)}
