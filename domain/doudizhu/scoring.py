"""Scoring a finished hand of 斗地主: the multiplier and who pays whom.

The hand is worth `base_score × multiplier`, where the multiplier is the bidding's factor
(the points bid, or 1 doubled per rob) × 2 for every bomb and rocket played (option
`bomb_doubling`) × 2 for a spring (春天: the landlord went out and the farmers never played
a card) or an anti-spring (反春: a farmer went out and the landlord played only its first
lead) (option `spring`), capped at `multiplier_cap` when that is set. The landlord plays
against both farmers: it wins twice the hand's worth or pays it twice; each farmer pays or
wins it once, so a hand's scores always add up to 0.

A redeal (everybody passed in the bidding) scores 0 for every seat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fiftyk_referee.domain.doudizhu.rulesets import PLAYERS, DoudizhuRules

LANDLORD, FARMERS = "landlord", "farmers"
SPRING_FACTOR = 2
BOMB_FACTOR = 2


@dataclass(frozen=True, slots=True)
class HandFacts:
    """What happened in a hand, as scoring needs it."""

    landlord: int
    bid_factor: int  # the points bid, doubled per rob
    winner: int  # the seat that played its last card
    bombs: int  # bombs played (four of a kind)
    rockets: int  # rockets played (both jokers)
    landlord_plays: int  # how many plays the landlord made
    farmer_plays: int  # how many plays both farmers made together


@dataclass(frozen=True, slots=True)
class Score:
    """A hand's multiplier, what made it, and each seat's score."""

    winning_side: str
    spring: bool
    anti_spring: bool
    uncapped: int
    multiplier: int
    unit: int  # base_score × multiplier: what each farmer wins or pays
    scores: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        """The scored part of a result."""
        return {"winner": self.winning_side, "spring": self.spring,
                "anti_spring": self.anti_spring, "uncapped_multiplier": self.uncapped,
                "multiplier": self.multiplier, "unit": self.unit, "scores": list(self.scores)}


def multiplier_of(rules: DoudizhuRules, bid_factor: int, bombs: int, spring: bool) -> int:
    """The multiplier before any cap: the bidding's factor, the bombs, the spring."""
    value = bid_factor
    if rules.bomb_doubling:
        value *= BOMB_FACTOR ** bombs
    if rules.spring and spring:
        value *= SPRING_FACTOR
    return value


def capped(rules: DoudizhuRules, multiplier: int) -> int:
    """The multiplier a hand is paid at (`multiplier_cap`, 0 for none)."""
    cap = rules.multiplier_cap
    return min(multiplier, cap) if cap else multiplier


def score_hand(rules: DoudizhuRules, facts: HandFacts) -> Score:
    """Score a hand the landlord or the farmers won."""
    landlord_won = facts.winner == facts.landlord
    spring = landlord_won and facts.farmer_plays == 0
    anti_spring = not landlord_won and facts.landlord_plays == 1
    uncapped = multiplier_of(rules, facts.bid_factor, facts.bombs + facts.rockets,
                             spring or anti_spring)
    multiplier = capped(rules, uncapped)
    unit = rules.base_score * multiplier
    sign = 1 if landlord_won else -1
    scores = tuple(sign * 2 * unit if seat == facts.landlord else -sign * unit
                   for seat in range(PLAYERS))
    return Score(LANDLORD if landlord_won else FARMERS, spring, anti_spring, uncapped,
                 multiplier, unit, scores)


__all__ = ["BOMB_FACTOR", "FARMERS", "LANDLORD", "SPRING_FACTOR", "HandFacts", "Score",
           "capped", "multiplier_of", "score_hand"]
