"""`fiftyk demo`: seat bots at a new table through the real API and play complete hands.

The platform key creates the table and seats one bot per seat; each bot then acts only with
its own seat token, asking the server for its legal plays and choosing one (or passing).
The account is built from the bots' own responses: the cards each was dealt, every trick,
who went out, the hand's scoring and the running scores.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from dataclasses import dataclass

import grpc

from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.service import config_keys as keys
from fiftyk_referee.service.client import (
    RefereeClient,
    TlsClient,
    add_tls_arguments,
    tls_from_args,
)
from fiftyk_referee.service.config import DEV_PLATFORM_KEY
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.hand_text import (
    cards_text,
    pass_text,
    place_text,
    play_text,
    result_lines,
    totals_text,
    trick_text,
)

PASS_PROBABILITY = 0.3
MAX_COMMANDS_PER_HAND = 10_000
DEFAULT_PLAYERS = 4
CALL_TIMEOUT_SECONDS = 30.0


@dataclass
class Bots:
    """A table with a bot in every seat."""

    table_id: str
    platform: RefereeClient
    seats: list[RefereeClient]


def default_players(preset: str) -> int:
    """Four seats where the preset allows them, else its first player count."""
    counts = Ruleset.from_spec(preset).player_counts()
    return DEFAULT_PLAYERS if DEFAULT_PLAYERS in counts else counts[0]


def seat_bots(platform: RefereeClient, preset: str, players: int) -> Bots:
    """Create the table and seat one bot per seat."""
    table = platform.create_table(preset, players, name="fiftyk demo").table
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


def run_demo(server: str, preset: str, players: int, hands: int, platform_key: str,
             seed: int | None, tls: TlsClient | None = None) -> int:
    """Play `hands` hands; 0 when every hand completed."""
    rng = random.Random(seed)
    client = RefereeClient(server, timeout=CALL_TIMEOUT_SECONDS, tls=tls)
    completed = 0
    try:
        bots = seat_bots(client.as_platform(platform_key), preset, players)
        table = bots.platform.get_table(bots.table_id)
        print(f"fiftyk demo: table {bots.table_id} at {server}: preset {preset},"
              f" {players} players, ruleset {table.ruleset.fingerprint[:12]}")
        for number in range(1, hands + 1):
            view = play_hand(bots, number, rng)
            if view.status != pb.HAND_STATUS_COMPLETED:
                print(f"fiftyk demo: hand {number} did not end", file=sys.stderr)
                break
            completed += 1
            sheet = bots.platform.scores(bots.table_id)
            print(f"scores after {completed} hand(s): {totals_text(sheet.totals)}")
        sheet = bots.platform.scores(bots.table_id)
        print(f"\nfinal scores after {completed} hand(s): {totals_text(sheet.totals)}")
    except grpc.RpcError as error:
        code, reason, message = error_reason(error)
        print(f"fiftyk demo: {code.name} {reason or ''} {message}".rstrip(), file=sys.stderr)
    finally:
        client.close()
    print(f"fiftyk demo: {completed}/{hands} hands completed")
    return 0 if completed == hands else 1


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `demo`."""
    parser = sub.add_parser(
        "demo", help="bots play complete hands against a running referee",
        description="Create a table with the platform key, seat one bot per seat and play"
        " complete hands through the gRPC API, printing the deal, every trick, points and"
        " scores. Exits 0 when every hand completed.",
    )
    parser.add_argument("--server", required=True, metavar="HOST:PORT",
                        help="the referee's gRPC address, e.g. 127.0.0.1:50051")
    parser.add_argument("--preset", default="classic", choices=list(PRESETS),
                        help="ruleset preset (default classic)")
    parser.add_argument("--players", type=int,
                        help="seats (default 4 where the preset allows, else its smallest)")
    parser.add_argument("--hands", type=int, default=1, help="hands to play (default 1)")
    parser.add_argument("--seed", type=int, help="seed of the bots' choices (default random)")
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
    players = args.players or default_players(args.preset)
    key = args.platform_key or os.environ.get(keys.PLATFORM_KEY) or DEV_PLATFORM_KEY
    return run_demo(args.server, args.preset, players, args.hands, key, args.seed,
                    tls_from_args(args))


__all__ = ["add_parser", "run", "run_demo"]
