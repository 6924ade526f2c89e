"""Scoring a Shengji hand (docs/shengji.md#scoring-a-hand): points, 抠底, levels, match, QQ.

Pure functions of a hand's facts; the hand aggregate gathers the facts and records the
result. **Decision** (issue 12): the room-point balances the QQ doubling rule reads are the
table's own history — every table starts its players at 0 and each hand's `carry` hands the
totals to the next deal; a transcript states them in its `room_points` field. The referee
takes no balance from the platform at seating, so every figure is reproducible from the
table's events alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fiftyk_referee.domain.shengji.cards import LEVELS, TOP_LEVEL
from fiftyk_referee.domain.shengji.rulesets import PLAYERS, ShengjiRules

DEALER, ATTACKERS = "dealer", "attackers"
DA_GUANG_LEVELS, XIAO_GUANG_LEVELS = 3, 2  # 大光, 小光
TAKE_OVER_BANDS = 2  # attackers take over from 2 bands on
QQ_BASE = 2
MULTIPLIER_BASE = 2
QQ_DOUBLE, QQ_TRIPLE = 2, 3


def team_of(seat: int) -> int:
    """Team 0 = seats {0, 2}, team 1 = seats {1, 3}."""
    return seat % 2


def seats_of(team: int) -> list[int]:
    """The two seats of a team."""
    return [team, team + 2]


def kitty_multiplier(rules: ShengjiRules, largest_component: int) -> int:
    """抠底 multiplier: 2^cards of the last lead's largest component (capped), 2 × them, or 2."""
    if rules.kitty_multiplier == "double":
        return MULTIPLIER_BASE
    if rules.kitty_multiplier == "times":
        return min(MULTIPLIER_BASE * largest_component, rules.kitty_cap)
    return min(1 << largest_component, rules.kitty_cap)  # 2 ** s


def level_outcome(attackers_points: int, band: int) -> tuple[str, int]:
    """(winning side, levels gained) for the attackers' total (before the A cap)."""
    if attackers_points <= 0:
        return DEALER, DA_GUANG_LEVELS
    if attackers_points < band:
        return DEALER, XIAO_GUANG_LEVELS
    if attackers_points < TAKE_OVER_BANDS * band:
        return DEALER, 1
    return ATTACKERS, (attackers_points - TAKE_OVER_BANDS * band) // band


def qq_multiplier(rules: ShengjiRules, totals: Sequence[int]) -> int:
    """×3 when every player has ≥ qq_triple_at, ×2 when every one has ≥ qq_double_at."""
    lowest = min(totals)
    if lowest >= rules.qq_triple_at:
        return QQ_TRIPLE
    if lowest >= rules.qq_double_at:
        return QQ_DOUBLE
    return 1


def qq_base(rules: ShengjiRules, side: str, levels: int, attackers_points: int) -> int:
    """A hand's room-point base (docs/shengji.md#qq-room-points)."""
    if attackers_points <= 0 and rules.qq_da_guang is not None:
        return rules.qq_da_guang
    base = QQ_BASE + (levels - 1 if side == DEALER else levels)
    return min(base, rules.qq_max)


def kitty_bonus(rules: ShengjiRules, kitty_points: int, last_lead_largest: int,
                attackers_won_last: bool) -> tuple[int | None, int]:
    """(抠底 multiplier or None, bonus): the kitty scores only when attackers win the last trick."""
    if not attackers_won_last:
        return None, 0
    multiplier = kitty_multiplier(rules, last_lead_largest)
    return multiplier, kitty_points * multiplier


def room_points_moved(rules: ShengjiRules, totals: Sequence[int], dealer: int,
                      attackers_points: int) -> dict[str, Any]:
    """A hand's QQ room points: `{"multiplier", "base", "delta"}` for the four seats."""
    side, gained = level_outcome(attackers_points, rules.band)
    winner_team = team_of(dealer) if side == DEALER else 1 - team_of(dealer)
    mult = qq_multiplier(rules, totals)
    base = qq_base(rules, side, gained, attackers_points)
    delta = [base * mult if team_of(s) == winner_team else -base * mult for s in range(PLAYERS)]
    return {"multiplier": mult, "base": base, "delta": delta}


@dataclass(frozen=True)
class HandFacts:
    """What scoring needs of a finished hand."""

    dealer: int
    levels: tuple[str, str]  # before the hand, [team 0, team 1]
    trick_points: int  # point cards in tricks the attackers won
    kitty_points: int  # point cards in the buried kitty
    last_winner: int
    last_lead_largest: int  # cards of the largest component of the last trick's lead
    failed_throws: tuple[int, ...]  # seats whose throw failed, in order
    room_points: tuple[int, ...]  # QQ totals before the hand


def score_hand(rules: ShengjiRules, facts: HandFacts) -> dict[str, Any]:
    """The scoring fields of the result (docs/transcript.md#shengji-result), `last_trick` on."""
    dealer_team = team_of(facts.dealer)
    attack_team = 1 - dealer_team
    attackers_won_last = team_of(facts.last_winner) == attack_team
    won_with, bonus = kitty_bonus(rules, facts.kitty_points, facts.last_lead_largest,
                                  attackers_won_last)
    multiplier = won_with or 0  # the result's last_trick.multiplier is 0 when it scored nothing
    penalty = sum(rules.throw_penalty if team_of(s) == dealer_team else -rules.throw_penalty
                  for s in facts.failed_throws)
    points = max(0, facts.trick_points + bonus + penalty)
    side, gained = level_outcome(points, rules.band)
    winner_team = dealer_team if side == DEALER else attack_team
    before = [LEVELS.index(level) for level in facts.levels]
    after = list(before)
    game_winner: int | None = None
    if rules.must_defend_a:
        if side == DEALER and before[dealer_team] == TOP_LEVEL:
            game_winner = dealer_team
        after[winner_team] = min(TOP_LEVEL, before[winner_team] + gained)
    elif before[winner_team] + gained > TOP_LEVEL:
        game_winner = winner_team
        after[winner_team] = TOP_LEVEL
    else:
        after[winner_team] = before[winner_team] + gained
    next_dealer = (facts.dealer + 2) % PLAYERS if side == DEALER else (facts.dealer + 1) % PLAYERS
    room: dict[str, Any] | None = None
    if rules.qq_points:
        room = room_points_moved(rules, facts.room_points, facts.dealer, points)
        room["after"] = [t + d for t, d in zip(facts.room_points, room["delta"], strict=True)]
    return {
        "last_trick": {"winner": facts.last_winner,
                       "side": ATTACKERS if attackers_won_last else DEALER,
                       "multiplier": multiplier},
        "attackers": {"seats": seats_of(attack_team), "trick_points": facts.trick_points,
                      "kitty_bonus": bonus, "penalty": penalty, "points": points},
        "outcome": {"side": side, "levels": gained},
        "levels": {"before": list(facts.levels), "after": [LEVELS[i] for i in after]},
        "next_dealer": next_dealer,
        "game_over": game_winner is not None,
        "game_winner": game_winner,
        "room_points": room,
    }


def level_progress(result: dict[str, Any]) -> list[int]:
    """Per team: levels climbed this hand, plus 1 for winning the match (a score past A).

    The match's cumulative scores (start level + the sum of these) are each team's level,
    counting the match win as one step past A — `GAME.match_end` reads that.
    """
    before = [LEVELS.index(level) for level in result["levels"]["before"]]
    after = [LEVELS.index(level) for level in result["levels"]["after"]]
    progress = [a - b for a, b in zip(after, before, strict=True)]
    if result["game_winner"] is not None:
        progress[result["game_winner"]] += 1
    return progress


__all__ = [
    "ATTACKERS", "DEALER", "HandFacts", "kitty_bonus", "kitty_multiplier", "level_outcome",
    "level_progress", "qq_base", "qq_multiplier", "room_points_moved", "score_hand", "seats_of",
    "team_of",
]
