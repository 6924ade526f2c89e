"""斗地主 at the command line: the demo's bots (`demo.py`) and the replay's account.

The replay tells a stored hand from its audit history: the deal with every seat's cards,
the bidding, the landlord and the 底牌, each lead with its event versions, and the result.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from fiftyk_referee.service.cli.hand_text import totals_text
from fiftyk_referee.service.games.doudizhu import demo as demo_doudizhu
from fiftyk_referee.service.games.doudizhu import doudizhu_pb2 as dpb
from fiftyk_referee.service.games.doudizhu.text import (
    DoudizhuAccount,
    payload,
    result_lines,
    sorted_cards,
    state_of,
    state_text,
    to_act_text,
)
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

SEATS = 3  # 斗地主 is played by three


class DoudizhuCli:
    """斗地主's demo and replay."""

    name = "doudizhu"
    title = "斗地主"
    default_preset = "classic"

    def default_players(self, preset: str) -> int:
        """Three: every 斗地主 preset seats three."""
        return SEATS

    def play_hand(self, platform: RefereeClient, table_id: str,
                  seats: Sequence[RefereeClient], number: int, rng: random.Random
                  ) -> pb.HandView:
        """Deal one hand, let the bots bid and play it out, and print it; the last view."""
        return demo_doudizhu.play_hand(platform, table_id, seats, number, rng)

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
        """The deal, the bidding, the landlord and its 底牌, every lead, the result."""
        dealt = payload(events[0])
        assert isinstance(dealt, dpb.HandDealt)
        seed = f", seed {dealt.deal_seed}" if dealt.HasField("deal_seed") else ", preset deck"
        lines = [
            f"hand {hand_id} (table {dealt.table_id}, hand {dealt.hand_number}): game doudizhu,"
            f" preset {dealt.ruleset.spec.preset}, {SEATS} players, {len(events)} events",
            f"deal commitment {dealt.deal_commitment}{seed}",
            f"dealer seat {dealt.dealer}",
        ]
        told = DoudizhuAccount()
        for event in events:
            lines.extend("  " + line for line in told.lines(event))
        ended = payload(events[-1])
        if isinstance(ended, dpb.HandEnded):
            lines.append("result:")
            lines.extend(f"  {line}" for line in result_lines(ended.result))
        else:
            view = audit.hand_at(hand_id, events[-1].aggregate_version)
            lines.append(f"in progress ({state_of(view).phase}): {to_act_text(view)}")
        return lines

    def state_lines(self, view: pb.HandView, dealt: pb.Event) -> list[str]:
        """The phase, the landlord and its 底牌, the multiplier; cards sorted by rank."""
        for seat in view.seats:
            ordered = sorted_cards(seat.cards)
            del seat.cards[:]
            seat.cards.extend(ordered)
        own = sorted_cards(view.own_cards)
        del view.own_cards[:]
        view.own_cards.extend(own)
        return [state_text(state_of(view))]


DOUDIZHU_CLI = DoudizhuCli()

__all__ = ["DOUDIZHU_CLI", "DoudizhuCli"]
