"""`fiftyk demo`: seat bots at a new table through the real API and play complete hands.

The platform key creates the table and seats one bot per seat; each bot then acts only with
its own seat token, asking the server for its legal plays and choosing one (or passing).
The account is built from the bots' own responses: the cards each was dealt, every trick,
who went out, the hand's scoring and the running scores. `--game shengji` plays 升级/拖拉机
hands instead (`service/cli/demo_shengji.py`).
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
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS as FIFTYK_PRESETS
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.games import DEFAULT_GAME, GAMES, game_named
from fiftyk_referee.domain.shengji.rulesets import PRESETS as SHENGJI_PRESETS
from fiftyk_referee.service.cli import demo_shengji
from fiftyk_referee.service.cli.hand_text import (
    cards_text,
    pass_text,
    place_text,
    play_text,
    result_lines,
    totals_text,
    trick_text,
)
from fiftyk_referee.service.cli.shengji_text import match_text
from fiftyk_referee.service.cli.terminal import add_text_argument, for_people_wanted, people_output
from fiftyk_referee.service.client import (
    RefereeClient,
    TlsClient,
    add_tls_arguments,
    open_channel,
    tls_from_args,
)
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops import config_keys as keys
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY

PASS_PROBABILITY = 0.3
MAX_COMMANDS_PER_HAND = 10_000
DEFAULT_PLAYERS = 4
CALL_TIMEOUT_SECONDS = 30.0
SHENGJI = "shengji"
# The RPCs a bot acts with, which `--pace` slows down.
PACED_METHODS = frozenset({"Act", "Play", "Pass", "Resign", "Declare", "Bury"})
DEFAULT_PRESETS = {DEFAULT_GAME: "classic", SHENGJI: "tractor"}


@dataclass
class Bots:
    """A table with a bot in every seat."""

    table_id: str
    platform: RefereeClient
    seats: list[RefereeClient]


def default_players(preset: str, game: str = DEFAULT_GAME) -> int:
    """Four seats where the preset allows them, else its first player count."""
    if game != DEFAULT_GAME:
        return DEFAULT_PLAYERS  # Shengji is played by four
    counts = Ruleset.from_spec(preset).player_counts()
    return DEFAULT_PLAYERS if DEFAULT_PLAYERS in counts else counts[0]


def seat_bots(platform: RefereeClient, preset: str, players: int,
              game: str = DEFAULT_GAME) -> Bots:
    """Create the table and seat one bot per seat."""
    table = platform.create_table(preset, players, name="fiftyk demo",
                                  game="" if game == DEFAULT_GAME else game).table
    seats: list[RefereeClient] = []
    for seat in range(players):
        joined = platform.join_table(table.table_id, f"bot-{seat}", seat)
        seats.append(platform.as_seat(joined.seat_token))
    return Bots(table.table_id, platform, seats)


def choose(legal: pb.ListLegalPlaysResponse, rng: random.Random) -> pb.LegalPlay | None:
    """A bot's decision: pass (None) when allowed and it feels like it, else any legal play."""
    if legal.may_pass and (not legal.plays or rng.random() < PASS_PROBABILITY):
        return None
    return rng.choice(list(legal.plays))


def play_hand(bots: Bots, number: int, rng: random.Random) -> pb.HandView:
    """Deal one hand, let the bots play it out, and print it; returns the final view."""
    dealt = bots.platform.start_hand(bots.table_id).hand
    hand_id = dealt.hand_id
    print(f"\nhand {number} {hand_id}: dealer seat {dealt.dealer},"
          f" seat {dealt.turn_seat} leads")
    for seat, bot in enumerate(bots.seats):
        cards = bot.hand_view(bots.table_id, hand_id).own_cards
        print(f"  seat {seat} bot-{seat}: {cards_text(cards)} ({len(cards)})")
    view, tricks = dealt, 0
    actions: list[str] = []
    notes: list[str] = []  # what happened during the open trick, told after it
    for _ in range(MAX_COMMANDS_PER_HAND):
        if view.status == pb.HAND_STATUS_COMPLETED:
            break
        seat = view.turn_seat
        bot = bots.seats[seat]
        choice = choose(bot.legal_plays(bots.table_id, hand_id), rng)
        if choice is None:
            after = bot.pass_turn(bots.table_id, hand_id).hand
        else:
            after = bot.play(bots.table_id, hand_id, choice.cards).hand
        actions.append(pass_text(seat) if choice is None
                       else play_text(seat, choice.combination_type, list(choice.cards)))
        notes.extend(f"seat {out} goes out ({place_text(place)})" for place, out in
                     enumerate(after.finish_order[len(view.finish_order):],
                               start=len(view.finish_order) + 1))
        if len(after.trick) <= len(view.trick):  # a trick only grows until it is won
            tricks += 1
            points = sum(s.collected for s in after.seats) - sum(s.collected for s in view.seats)
            winner = view.top_play.seat if choice is None else seat
            for line in [trick_text(tricks, actions, winner, points), *notes]:
                print(f"  {line}")
            actions, notes = [], []
        view = after
    if actions:
        print("  " + trick_text(tricks + 1, actions, None, None) + " (unfinished)")
    for line in notes:
        print(f"  {line}")
    if view.status == pb.HAND_STATUS_COMPLETED and view.HasField("result"):
        print(f"  hand {number} result:")
        for line in result_lines(view.result):
            print(f"    {line}")
    return view


def _shengji_match(bots: Bots, view: pb.HandView) -> str:
    """The Shengji match after a hand (levels, next dealer, or how it ended)."""
    table = bots.platform.get_table(bots.table_id)
    result = view.shengji.result
    return match_text(table, list(result.levels_after), result.next_dealer)


class _Pace(grpc.UnaryUnaryClientInterceptor):
    """Waits before every action a bot sends, so that people can follow the table."""

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds

    def intercept_unary_unary(self, continuation: Any, client_call_details: Any,
                              request: Any) -> Any:
        """Wait, then send (only actions: the bots' reads and the platform's calls go on)."""
        if str(client_call_details.method).rsplit("/", 1)[-1] in PACED_METHODS:
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
             seed: int | None, tls: TlsClient | None = None, game: str = DEFAULT_GAME, *,
             pace: float = 0.0, web: str | None = None) -> int:
    """Play `hands` hands of `game`; 0 when every hand completed."""
    rng = random.Random(seed)
    opened = open_channel(server, tls)
    channel = grpc.intercept_channel(opened, _Pace(pace)) if pace > 0 else opened
    client = RefereeClient(channel, timeout=CALL_TIMEOUT_SECONDS)
    completed = 0
    try:
        bots = seat_bots(client.as_platform(platform_key), preset, players, game)
        table = bots.platform.get_table(bots.table_id)
        shengji = game == SHENGJI
        named = f"game {game}, " if shengji else ""
        print(f"fiftyk demo: table {bots.table_id} at {server}: {named}preset {preset},"
              f" {players} players, ruleset {table.ruleset.fingerprint[:12]}")
        _announce_spectators(bots, web)
        match = ""
        for number in range(1, hands + 1):
            if shengji:
                view = demo_shengji.play_hand(bots.platform, bots.table_id, bots.seats,
                                              number, rng)
            else:
                view = play_hand(bots, number, rng)
            if view.status != pb.HAND_STATUS_COMPLETED:
                print(f"fiftyk demo: hand {number} did not end", file=sys.stderr)
                break
            completed += 1
            if shengji:
                match = _shengji_match(bots, view)
                print(match)
                continue
            sheet = bots.platform.scores(bots.table_id)
            print(f"scores after {completed} hand(s): {totals_text(sheet.totals)}")
        if shengji:
            print(f"\nfinal {match or 'match: no hand completed'}")
        else:
            sheet = bots.platform.scores(bots.table_id)
            print(f"\nfinal scores after {completed} hand(s): {totals_text(sheet.totals)}")
    except grpc.RpcError as error:
        code, reason, message = error_reason(error)
        print(f"fiftyk demo: {code.name} {reason or ''} {message}".rstrip(), file=sys.stderr)
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
        " scores (Shengji: the declarations, dealer and trump, how many cards were buried,"
        " every trick, points and the levels). Exits 0 when every hand completed.",
    )
    parser.add_argument("--server", required=True, metavar="HOST:PORT",
                        help="the referee's gRPC address, e.g. 127.0.0.1:50051")
    parser.add_argument("--game", default=DEFAULT_GAME, choices=sorted(GAMES),
                        help=f"the game (default {DEFAULT_GAME})")
    parser.add_argument("--preset", choices=[*FIFTYK_PRESETS, *SHENGJI_PRESETS],
                        help="ruleset preset of the game (default classic; shengji: tractor)")
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


def run(args: argparse.Namespace) -> int:
    """Run the demo from parsed arguments."""
    if args.hands < 1:
        print("fiftyk demo: --hands must be at least 1", file=sys.stderr)
        return 2
    preset = args.preset or DEFAULT_PRESETS[args.game]
    try:
        game_named(args.game).rules(preset)
    except RuleError as error:
        print(f"fiftyk demo: {args.game}: {error.message}", file=sys.stderr)
        return 2
    players = args.players or default_players(preset, args.game)
    key = args.platform_key or os.environ.get(keys.PLATFORM_KEY) or DEV_PLATFORM_KEY
    if args.pace < 0:
        print("fiftyk demo: --pace must not be negative", file=sys.stderr)
        return 2
    with people_output(for_people_wanted(args.text)):
        return run_demo(args.server, preset, players, args.hands, key, args.seed,
                        tls_from_args(args), args.game, pace=args.pace, web=args.web)


__all__ = ["add_parser", "run", "run_demo"]
