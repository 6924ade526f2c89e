"""`fiftyk demo`: seat bots at a new table through the real API and play complete hands.

The platform key creates the table and seats one bot per seat; each bot then acts only with
its own seat token, asking the server for its legal plays and choosing one (or passing).
The account is built from the bots' own responses: the cards each was dealt, every trick,
who went out, the hand's scoring and the running scores. Each game plays and tells its
hands its own way (its bundle's command-line side, `service/cli/games.py`): `--game NAME`
plays another installed game's hands.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import dataclass
from typing import Any

import grpc

from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.games import default_game, game_named, hosted
from fiftyk_referee.service.cli.games import CliGame, cli_game, cli_games
from fiftyk_referee.service.cli.server_address import add_server_argument, describe_rpc_error
from fiftyk_referee.service.cli.terminal import add_text_argument, for_people_wanted, people_output
from fiftyk_referee.service.core.bundles import legacy_rpcs
from fiftyk_referee.service.grpc.client import (
    RefereeClient,
    TlsClient,
    add_tls_arguments,
    open_channel,
    tls_from_args,
)
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops import config_keys as keys
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY

CALL_TIMEOUT_SECONDS = 30.0
# The RPCs a bot acts with, which `--pace` slows down.
PACED_METHODS = frozenset({"Act", "Play", "Pass", "Resign"})  # and the games' legacy RPCs


@dataclass
class Bots:
    """A table with a bot in every seat."""

    table_id: str
    platform: RefereeClient
    seats: list[RefereeClient]


def seat_bots(platform: RefereeClient, preset: str, players: int,
              game: str = "") -> Bots:
    """Create the table and seat one bot per seat."""
    table = platform.create_table(preset, players, name="fiftyk demo",
                                  game="" if game == default_game() else game).table
    seats: list[RefereeClient] = []
    for seat in range(players):
        joined = platform.join_table(table.table_id, f"bot-{seat}", seat)
        seats.append(platform.as_seat(joined.seat_token))
    return Bots(table.table_id, platform, seats)


class _Pace(grpc.UnaryUnaryClientInterceptor):
    """Waits before every action a bot sends, so that people can follow the table."""

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds

    def intercept_unary_unary(self, continuation: Any, client_call_details: Any,
                              request: Any) -> Any:
        """Wait, then send (only actions: the bots' reads and the platform's calls go on)."""
        method = str(client_call_details.method).rsplit("/", 1)[-1]
        if method in PACED_METHODS or method in legacy_rpcs():
            time.sleep(self._seconds)
        return continuation(client_call_details, request)


def _announce_spectators(bots: Bots, web: str | None) -> None:
    """Print a spectator token for the table, and its live page when the web is named."""
    token = bots.platform.issue_spectator_token(bots.table_id).spectator_token
    print(f"fiftyk demo: spectator token {token}")
    if web:
        print(f"fiftyk demo: watch live at {web.rstrip('/')}/#watch={bots.table_id}"
              f"&token={token}")


def run_demo(server: str, preset: str, players: int, hands: int, platform_key: str,
             seed: int | None, tls: TlsClient | None = None, game: str = "", *,
             pace: float = 0.0, web: str | None = None) -> int:
    """Play `hands` hands of `game`; 0 when every hand completed."""
    game = game or default_game()
    rng = random.Random(seed)
    opened = open_channel(server, tls)
    channel = grpc.intercept_channel(opened, _Pace(pace)) if pace > 0 else opened
    client = RefereeClient(channel, timeout=CALL_TIMEOUT_SECONDS)
    completed = 0
    try:
        bots = seat_bots(client.as_platform(platform_key), preset, players, game)
        table = bots.platform.get_table(bots.table_id)
        named = f"game {game}, " if game != default_game() else ""
        print(f"fiftyk demo: table {bots.table_id} at {server}: {named}preset {preset},"
              f" {players} players, ruleset {table.ruleset.fingerprint[:12]}")
        _announce_spectators(bots, web)
        played: CliGame = cli_game(game)
        match = ""
        for number in range(1, hands + 1):
            view = played.play_hand(bots.platform, bots.table_id, bots.seats, number, rng)
            if view.status != pb.HAND_STATUS_COMPLETED:
                print(f"fiftyk demo: hand {number} did not end", file=sys.stderr)
                break
            completed += 1
            match = played.match_line(bots.platform, bots.table_id, view, completed)
            print(match)
        print("\n" + played.final_line(bots.platform, bots.table_id, completed, match))
    except grpc.RpcError as error:
        print(f"fiftyk demo: {describe_rpc_error(server, error)}", file=sys.stderr)
    finally:
        opened.close()
    print(f"fiftyk demo: {completed}/{hands} hands completed")
    return 0 if completed == hands else 1


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `demo`."""
    parser = sub.add_parser(
        "demo", help="bots play complete hands against a running referee",
        description="Create a table with the platform key, seat one bot per seat and play"
        " complete hands through the gRPC API, printing the deal, every trick, points and"
        " scores, as each game tells its hands (--game). Exits 0 when every hand completed.",
    )
    add_server_argument(parser)
    known = cli_games()
    parser.add_argument("--game", default=default_game() or min(known, default=None),
                        choices=sorted(known), help=f"the game (default {default_game()})")
    defaults = "; ".join(f"{game.name}: {game.default_preset}" for game in known.values())
    parser.add_argument("--preset", choices=sorted({preset for game in hosted().values()
                                                    for preset in game.presets}),
                        help=f"ruleset preset of the game (default {defaults})")
    parser.add_argument("--players", type=int,
                        help="seats (default 4 where the preset allows, else its smallest)")
    parser.add_argument("--hands", type=int, default=1, help="hands to play (default 1)")
    parser.add_argument("--seed", type=int, help="seed of the bots' choices (default random)")
    add_text_argument(parser)
    parser.add_argument("--pace", type=float, default=0.0, metavar="SECONDS",
                        help="wait this long before each action, to watch the table live"
                             " (default 0)")
    parser.add_argument("--web", metavar="URL",
                        help="the referee's web table (the web= address `fiftyk serve` printed):"
                             " print a link that watches this demo's table live")
    parser.add_argument("--platform-key",
                        help=f"platform credential (default ${keys.PLATFORM_KEY}, else the"
                             " development key a loopback server accepts)")
    add_tls_arguments(parser)
    parser.set_defaults(handler=run)


def _other_game_hint(preset: str) -> str:
    """"; it is a preset of GAME: add --game GAME" for a preset of another game."""
    known = cli_games()
    owners = sorted(name for name, game in hosted().items()
                    if preset in game.presets and name in known)
    if not owners:
        return ""
    games = " or ".join(owners)
    flags = " or ".join(f"--game {name}" for name in owners)
    return f"; {preset!r} is a preset of {games}: add {flags}"


def run(args: argparse.Namespace) -> int:
    """Run the demo from parsed arguments."""
    if args.hands < 1:
        print("fiftyk demo: --hands must be at least 1", file=sys.stderr)
        return 2
    played = cli_game(args.game)
    preset = args.preset or played.default_preset
    try:
        game_named(args.game).rules(preset)
    except RuleError as error:
        print(f"fiftyk demo: {args.game}: {error.message}{_other_game_hint(preset)}",
              file=sys.stderr)
        return 2
    players = args.players or played.default_players(preset)
    key = args.platform_key or os.environ.get(keys.PLATFORM_KEY) or DEV_PLATFORM_KEY
    if args.pace < 0:
        print("fiftyk demo: --pace must not be negative", file=sys.stderr)
        return 2
    with people_output(for_people_wanted(args.text)):
        return run_demo(args.server, preset, players, args.hands, key, args.seed,
                        tls_from_args(args), args.game, pace=args.pace, web=args.web)


__all__ = ["add_parser", "run", "run_demo"]
