"""升级/拖拉机 at the command line: the demo's bots (`demo_shengji.py`) and the replay's account.

The replay tells a stored hand from its audit history: the declarations, the deal and the
kitty, the burial, every trick with its event versions, and the result with the levels.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from fiftyk_referee.service.games.shengji import demo as demo_shengji
from fiftyk_referee.service.games.shengji.text import (
    ShengjiAccount,
    ended_lines,
    levels_text,
    match_text,
    rules_of,
    shengji_state_text,
    sort_seat_cards,
    to_act_text,
)
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

SEATS = 4  # Shengji is played by four


class ShengjiCli:
    """Shengji's demo and replay."""

    name = "shengji"
    title = "升级/拖拉机"
    default_preset = "tractor"

    def default_players(self, preset: str) -> int:
        """Four: every Shengji preset seats four."""
        return SEATS

    def play_hand(self, platform: RefereeClient, table_id: str,
                  seats: Sequence[RefereeClient], number: int, rng: random.Random
                  ) -> pb.HandView:
        """Deal one hand, let the bots play it out, and print it; returns the last view."""
        return demo_shengji.play_hand(platform, table_id, seats, number, rng)

    def match_line(self, platform: RefereeClient, table_id: str, view: pb.HandView,
                   completed: int) -> str:
        """The levels after the hand, the next dealer, or how the match ended."""
        result = view.shengji.result
        return match_text(platform.get_table(table_id), list(result.levels_after),
                          result.next_dealer)

    def final_line(self, platform: RefereeClient, table_id: str, completed: int,
                   last: str) -> str:
        """The match as the last hand left it."""
        return f"final {last or 'match: no hand completed'}"

    def account(self, audit: RefereeClient, hand_id: str, events: Sequence[pb.Event]
                ) -> list[str]:
        """Declarations, the deal and kitty, the burial, every trick, the result."""
        dealt = events[0].shengji_hand_dealt
        seed = f", seed {dealt.deal_seed}" if dealt.HasField("deal_seed") else ", preset deck"
        dealer = (f"dealer seat {dealt.dealer}" if dealt.HasField("dealer")
                  else "the dealer comes from the declarations")
        lines = [
            f"hand {hand_id} (table {dealt.table_id}, hand {dealt.hand_number}): game shengji,"
            f" preset {dealt.ruleset.spec.preset}, {SEATS} players, {len(events)} events",
            f"deal commitment {dealt.deal_commitment}{seed}",
            f"{levels_text(list(dealt.levels))}; {dealer}",
        ]
        told = ShengjiAccount(dealt)
        for event in events[1:]:
            lines.extend("  " + line for line in told.lines(event))
        last = events[-1]
        if last.HasField("shengji_hand_ended"):
            lines.append("result:")
            lines.extend(f"  {line}" for line in ended_lines(last.shengji_hand_ended))
        else:
            view = audit.hand_at(hand_id, last.aggregate_version)
            lines.append(f"in progress ({view.shengji.phase}): {to_act_text(view)}")
        return lines

    def state_lines(self, view: pb.HandView, dealt: pb.Event) -> list[str]:
        """The phase, trump and points; the seats' cards in trump order."""
        sort_seat_cards(view, rules_of(dealt.shengji_hand_dealt))
        return [shengji_state_text(view.shengji)]


SHENGJI_CLI = ShengjiCli()

__all__ = ["SHENGJI_CLI", "ShengjiCli"]
