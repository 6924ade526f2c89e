"""五十K at the command line: the demo's bots and the replay's account (`service/cli/games.py`).

The demo's account is built from the bots' own responses: the cards each was dealt, every
trick, who went out, the hand's scoring and the running scores. The replay tells a stored
hand from its audit history, with the event versions every trick spans.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.service.cli.hand_text import (
    cards_text,
    pass_text,
    place_text,
    play_text,
    result_lines,
    seat_line,
    totals_text,
    trick_text,
)
from fiftyk_referee.service.games.fiftyk.text import TrickAccount
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

PASS_PROBABILITY = 0.3
MAX_COMMANDS_PER_HAND = 10_000
DEFAULT_PLAYERS = 4


def choose(legal: pb.ListLegalPlaysResponse, rng: random.Random) -> pb.LegalPlay | None:
    """A bot's decision: pass (None) when allowed and it feels like it, else any legal play."""
    if legal.may_pass and (not legal.plays or rng.random() < PASS_PROBABILITY):
        return None
    return rng.choice(list(legal.plays))


def _header(dealt: pb.HandView, preset: str, last: int) -> list[str]:
    seed = f", seed {dealt.deal_seed}" if dealt.HasField("deal_seed") else ", preset deck"
    return [
        f"hand {dealt.hand_id} (table {dealt.table_id}, hand {dealt.hand_number}):"
        f" preset {preset}, {len(dealt.seats)} players, {last} events",
        f"deal commitment {dealt.deal_commitment}{seed}",
        f"dealer seat {dealt.dealer}, seat {dealt.turn_seat} leads",
    ]


class FiftykCli:
    """五十K's demo and replay."""

    name = "fiftyk"
    title = "五十K"
    default_preset = "classic"

    def default_players(self, preset: str) -> int:
        """Four seats where the preset allows them, else its first player count."""
        counts = Ruleset.from_spec(preset).player_counts()
        return DEFAULT_PLAYERS if DEFAULT_PLAYERS in counts else counts[0]

    def play_hand(self, platform: RefereeClient, table_id: str,
                  seats: Sequence[RefereeClient], number: int, rng: random.Random
                  ) -> pb.HandView:
        """Deal one hand, let the bots play it out, and print it; returns the final view."""
        dealt = platform.start_hand(table_id).hand
        hand_id = dealt.hand_id
        print(f"\nhand {number} {hand_id}: dealer seat {dealt.dealer},"
              f" seat {dealt.turn_seat} leads")
        for seat, bot in enumerate(seats):
            cards = bot.hand_view(table_id, hand_id).own_cards
            print(f"  seat {seat} bot-{seat}: {cards_text(cards)} ({len(cards)})")
        view, tricks = dealt, 0
        actions: list[str] = []
        notes: list[str] = []  # what happened during the open trick, told after it
        for _ in range(MAX_COMMANDS_PER_HAND):
            if view.status == pb.HAND_STATUS_COMPLETED:
                break
            seat = view.turn_seat
            bot = seats[seat]
            choice = choose(bot.legal_plays(table_id, hand_id), rng)
            if choice is None:
                after = bot.pass_turn(table_id, hand_id).hand
            else:
                after = bot.play(table_id, hand_id, choice.cards).hand
            actions.append(pass_text(seat) if choice is None
                           else play_text(seat, choice.combination_type, list(choice.cards)))
            notes.extend(f"seat {out} goes out ({place_text(place)})" for place, out in
                         enumerate(after.finish_order[len(view.finish_order):],
                                   start=len(view.finish_order) + 1))
            if len(after.trick) <= len(view.trick):  # a trick only grows until it is won
                tricks += 1
                points = (sum(s.collected for s in after.seats)
                          - sum(s.collected for s in view.seats))
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

    def match_line(self, platform: RefereeClient, table_id: str, view: pb.HandView,
                   completed: int) -> str:
        """The running scores."""
        sheet = platform.scores(table_id)
        return f"scores after {completed} hand(s): {totals_text(sheet.totals)}"

    def final_line(self, platform: RefereeClient, table_id: str, completed: int,
                   last: str) -> str:
        """The final scores."""
        sheet = platform.scores(table_id)
        return f"final scores after {completed} hand(s): {totals_text(sheet.totals)}"

    def account(self, audit: RefereeClient, hand_id: str, events: Sequence[pb.Event]
                ) -> list[str]:
        """The whole hand: the deal, every trick with its event versions, and the result."""
        dealt = audit.hand_at(hand_id, 1)
        preset = events[0].fiftyk_hand_dealt.ruleset.spec.preset
        lines = _header(dealt, preset, len(events))
        lines.extend("  " + seat_line(state) for state in dealt.seats)
        if dealt.stock:
            lines.append(f"  stock: {' '.join(dealt.stock)}")
        tricks = TrickAccount()
        for event in events[1:]:
            lines.extend("  " + line for line in tricks.lines(event))
        final = audit.hand_at(hand_id, events[-1].aggregate_version)
        if final.status == pb.HAND_STATUS_COMPLETED and final.HasField("result"):
            lines.append("result:")
            lines.extend(f"  {line}" for line in result_lines(final.result))
        else:
            lines.append(f"in progress: seat {final.turn_seat} to act")
        return lines

    def state_lines(self, view: pb.HandView, dealt: pb.Event) -> list[str]:
        """Nothing beyond every game's state."""
        return []


FIFTYK_CLI = FiftykCli()

__all__ = ["FIFTYK_CLI", "FiftykCli", "choose"]
