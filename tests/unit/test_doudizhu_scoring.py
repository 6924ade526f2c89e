"""Scoring a 斗地主 hand: the multiplier (bid, robs, bombs, spring, cap) and who pays whom."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fiftyk_referee.domain.doudizhu.rulesets import DoudizhuRules
from fiftyk_referee.domain.doudizhu.scoring import HandFacts, score_hand

CLASSIC = DoudizhuRules.from_spec("classic")


def facts(*, landlord: int = 0, bid_factor: int = 1, winner: int = 0, bombs: int = 0,
          rockets: int = 0, landlord_plays: int = 3, farmer_plays: int = 3) -> HandFacts:
    return HandFacts(landlord, bid_factor, winner, bombs, rockets, landlord_plays, farmer_plays)


@pytest.mark.parametrize(("given_facts", "multiplier", "scores", "springs"), [
    (facts(bid_factor=2), 2, (4, -2, -2), (False, False)),
    (facts(bid_factor=2, winner=1), 2, (-4, 2, 2), (False, False)),
    (facts(landlord=1, bid_factor=3, winner=2, bombs=1), 6, (6, -12, 6), (False, False)),
    (facts(bid_factor=1, farmer_plays=0), 2, (4, -2, -2), (True, False)),
    (facts(bid_factor=1, winner=2, landlord_plays=1), 2, (-4, 2, 2), (False, True)),
    # One landlord play and a landlord win is no anti-spring; farmers that played, no spring.
    (facts(bid_factor=1, landlord_plays=1), 1, (2, -1, -1), (False, False)),
    (facts(bid_factor=8, bombs=2, rockets=1, farmer_plays=0), 128, (256, -128, -128),
     (True, False)),
])
def test_the_multiplier_and_the_payments(given_facts: HandFacts, multiplier: int,
                                         scores: tuple[int, ...],
                                         springs: tuple[bool, bool]) -> None:
    score = score_hand(CLASSIC, given_facts)
    assert score.multiplier == score.uncapped == multiplier
    assert score.scores == scores and (score.spring, score.anti_spring) == springs


def test_options_switch_off_bomb_and_spring_doubling_and_cap_the_multiplier() -> None:
    hand = facts(bid_factor=3, bombs=2, farmer_plays=0)
    assert score_hand(CLASSIC, hand).multiplier == 24
    plain = DoudizhuRules.from_spec("classic", {"bomb_doubling": False, "spring": False})
    assert score_hand(plain, hand).multiplier == 3 and score_hand(plain, hand).spring
    capped = DoudizhuRules.from_spec("classic", {"multiplier_cap": 10, "base_score": 5})
    score = score_hand(capped, hand)
    assert (score.uncapped, score.multiplier, score.unit) == (24, 10, 50)
    assert score.scores == (100, -50, -50)


@given(landlord=st.integers(0, 2), winner=st.integers(0, 2), bid=st.integers(1, 3),
       robs=st.integers(0, 3), bombs=st.integers(0, 13), rockets=st.integers(0, 1),
       landlord_plays=st.integers(1, 20), farmer_plays=st.integers(0, 34),
       base=st.integers(1, 100_000), cap=st.integers(0, 1 << 20))
def test_every_hand_sums_to_zero_and_the_landlord_pays_or_wins_twice_a_farmer(
        landlord: int, winner: int, bid: int, robs: int, bombs: int, rockets: int,
        landlord_plays: int, farmer_plays: int, base: int, cap: int) -> None:
    rules = DoudizhuRules.from_spec("classic", {"base_score": base, "multiplier_cap": cap})
    score = score_hand(rules, HandFacts(landlord, bid << robs, winner, bombs, rockets,
                                        landlord_plays, farmer_plays))
    farmers = [s for seat, s in enumerate(score.scores) if seat != landlord]
    assert sum(score.scores) == 0 and farmers[0] == farmers[1]
    assert score.scores[landlord] == -2 * farmers[0] == 2 * score.unit * (
        1 if winner == landlord else -1)
    assert score.unit == base * score.multiplier
    assert score.multiplier == (min(score.uncapped, cap) if cap else score.uncapped)
    assert score.uncapped % (bid << robs) == 0 and score.uncapped >= bid << robs
    assert not (score.spring and score.anti_spring)
