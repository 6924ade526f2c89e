"""Plain-text accounts of 升级/拖拉机 hands for the command line (`fiftyk demo --game shengji`).

Everything here formats fiftyk.referee.v1 messages; nothing calls the server. What it tells
is what a spectator may see: declarations, the dealer and trump, how many cards were buried
(never which), the tricks, points, and the levels.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.hand_text import cards_text

SUIT_NAMES = {"S": "spades", "H": "hearts", "C": "clubs", "D": "diamonds"}
TEAM_SEATS = ((0, 2), (1, 3))
WINNERS = {"dealer": "the dealer side wins", "attackers": "the attackers win"}


def team_text(team: int) -> str:
    """`team 0+2`."""
    return "team " + "+".join(str(s) for s in TEAM_SEATS[team])


def levels_text(levels: Sequence[str]) -> str:
    """`team 0+2 at 2, team 1+3 at 5`."""
    return ", ".join(f"{team_text(t)} at {level}" for t, level in enumerate(levels))


def declaration_text(seat: int, cards: Sequence[str], round_: int) -> str:
    """`round 3: seat 1 declares 2H 2H`."""
    return f"round {round_}: seat {seat} declares {cards_text(cards)}"


def trump_text(state: pb.ShengjiState) -> str:
    """`trump: rank 2, hearts (seat 1 declared 2H 2H after round 7)`, or no-trump."""
    suit = SUIT_NAMES.get(state.trump_suit, state.trump_suit) if state.HasField(
        "trump_suit") else "no trump suit"
    text = f"trump: rank {state.trump_rank}, {suit}"
    if state.HasField("declaration"):
        declared = state.declaration
        text += (f" (seat {declared.seat} declared {cards_text(declared.cards)}"
                 f" after round {declared.round})")
    else:
        text += " (nobody declared)"
    return text


def result_lines(result: pb.ShengjiResult, levels_before: Sequence[str]) -> list[str]:
    """A finished hand's scoring: the attackers' points, who won, the levels, the next dealer."""
    detail = json.loads(result.result_json)
    attackers = detail["attackers"]
    seats = "+".join(str(s) for s in attackers["seats"])
    lines = [f"attackers team {seats}: {attackers['trick_points']} trick points,"
             f" kitty bonus {attackers['kitty_bonus']}, penalty {attackers['penalty']}"
             f" = {result.attacker_points} points"]
    step = "level" if result.levels == 1 else "levels"
    lines.append(f"{WINNERS.get(result.side, result.side)}: {result.levels} {step} up")
    changes = ", ".join(f"{team_text(t)} {before} → {after}" for t, (before, after) in
                        enumerate(zip(levels_before, result.levels_after, strict=True)))
    lines.append(f"levels: {changes}; next dealer seat {result.next_dealer}")
    if result.game_over and result.HasField("game_winner"):
        lines.append(f"{team_text(result.game_winner)} wins the match")
    return lines


def match_text(table: pb.TableView, levels: Sequence[str], next_dealer: int) -> str:
    """The match after the last hand: levels, the next dealer, or how it ended."""
    text = f"match after {table.hands_played} hand(s): {levels_text(levels)}"
    if table.match_over:
        return text + f"; over: {table.match_end_reason}"
    return text + f"; next dealer seat {next_dealer}"


__all__ = ["declaration_text", "levels_text", "match_text", "result_lines", "team_text",
           "trump_text"]
