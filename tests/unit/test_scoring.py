"""Hand scoring (docs/rules.md#scoring), every case computed by hand from the rule text."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.fiftyk.scoring import (
    HandFacts,
    HandScore,
    bomb_multiplier,
    catch_of,
    decimal_to_json,
    score_hand,
    teams_of,
)


def ruleset(preset: str, **options: Any) -> Ruleset:
    return Ruleset.from_spec(preset, options)


def facts(finish: tuple[int, ...], still_in: tuple[int, ...], collected: tuple[int, ...],
          leftover: tuple[int, ...] | None = None,
          bombs: tuple[tuple[int, int], ...] = ()) -> HandFacts:
    players = len(collected)
    return HandFacts(players=players, finish_order=finish, still_in=still_in,
                     collected=collected, leftover_points=leftover or (0,) * players,
                     unbeaten_bombs=bombs)


def team_scores(score: HandScore) -> list[Decimal]:
    return [team.score for team in score.teams]


def seat_scores(score: HandScore) -> list[Decimal]:
    return [seat.score for seat in score.seats]


def D(text: str) -> Decimal:
    return Decimal(text)


# Team 0 (seats 0, 2) double-catches: seats 1 and 3 still hold 15 and 10 points.
DOUBLE_CATCH_HAND = facts((0, 2), (1, 3), (30, 20, 40, 85), (0, 15, 0, 10))


# -- full-deal teams: finishing penalty --------------------------------------------------


def test_transcript_example_double_catch_raw_scores_255_and_minus_55() -> None:
    hand = facts((2, 0), (1, 3), (35, 0, 120, 45))
    score = score_hand(ruleset("classic"), hand)
    assert score.to_json() == {
        "teams": [
            {"seats": [0, 2], "collected": 155, "score": 255, "rating": None},
            {"seats": [1, 3], "collected": 45, "score": -55, "rating": None},
        ],
        "seats": [
            {"seat": 0, "score": 255, "rating": None},
            {"seat": 1, "score": -55, "rating": None},
            {"seat": 2, "score": 255, "rating": None},
            {"seat": 3, "score": -55, "rating": None},
        ],
        "winner": {"team": 0, "seat": None},
    }


def test_double_catch_moves_double_catch_points_and_leftover_goes_to_winners() -> None:
    score = score_hand(ruleset("classic"), DOUBLE_CATCH_HAND)
    # team 0: 70 collected + 100 + 25 leftover; team 1: 105 − 100
    assert team_scores(score) == [195, 5]
    assert score.winner_team == 0
    assert score.winner_seat is None
    assert score.places == (0, 2, 1, 3)


def test_single_catch_when_first_and_third_out_are_partners() -> None:
    hand = facts((0, 1, 2), (3,), (50, 40, 30, 60), (0, 0, 0, 20))
    score = score_hand(ruleset("classic"), hand)
    # team 0: 80 + 50 + 20 leftover; team 1: 100 − 50
    assert team_scores(score) == [150, 50]
    assert catch_of(hand, teams_of(ruleset("classic"), 4)) == (0, "single")


def test_first_and_fourth_against_second_and_third_pays_nobody_and_equal_is_a_draw() -> None:
    hand = facts((0, 1, 3), (2,), (70, 40, 30, 60))
    score = score_hand(ruleset("classic"), hand)
    assert team_scores(score) == [100, 100]
    assert score.winner_team is None
    assert score.to_json()["winner"] == {"team": None, "seat": None}


def test_catch_penalties_come_from_the_ruleset() -> None:
    score = score_hand(ruleset("classic", double_catch=70), DOUBLE_CATCH_HAND)
    assert team_scores(score) == [165, 35]


def test_a_partner_only_implied_second_by_still_in_does_not_catch() -> None:
    hand = facts((0,), (2, 1, 3), (50, 50, 50, 50))
    score = score_hand(ruleset("classic"), hand)
    assert team_scores(score) == [100, 100]
    assert score.places == (0, 2, 1, 3)


def test_a_hand_where_nobody_went_out_still_scores_without_penalty() -> None:
    hand = facts((), (3, 0, 1, 2), (20, 30, 40, 50), (10, 0, 5, 45))
    score = score_hand(ruleset("classic"), hand)
    # each team receives the other team's leftover: team 0 60 + 45, team 1 80 + 15
    assert team_scores(score) == [105, 95]
    assert score.places == (3, 0, 1, 2)


def test_every_seat_of_a_team_game_carries_its_team_score() -> None:
    score = score_hand(ruleset("classic"), DOUBLE_CATCH_HAND)
    assert seat_scores(score) == [195, 5, 195, 5]
    assert [seat.rating for seat in score.seats] == [None] * 4


# -- full-deal teams: leftover points ----------------------------------------------------


def test_leftover_deduct_subtracts_from_the_holders_team() -> None:
    score = score_hand(ruleset("classic", leftover="deduct"), DOUBLE_CATCH_HAND)
    # team 0: 70 + 100; team 1: 105 − 100 − 25
    assert team_scores(score) == [170, -20]


def test_leftover_void_gives_the_points_to_nobody() -> None:
    score = score_hand(ruleset("classic", leftover="void"), DOUBLE_CATCH_HAND)
    assert team_scores(score) == [170, 5]


def test_leftover_of_the_fourth_placed_goes_to_the_other_team() -> None:
    hand = facts((0, 1, 3), (2,), (60, 40, 20, 40), (0, 0, 40, 0))
    score = score_hand(ruleset("classic"), hand)
    assert team_scores(score) == [80, 120]
    assert score.winner_team == 1


# -- the settling steps: bomb bonus ------------------------------------------------------


@pytest.mark.parametrize(("size", "bonus"), [(4, 0), (5, 50), (6, 100), (7, 300), (8, 1000)])
def test_extra_bonus_for_an_unbeaten_bomb_by_its_size(size: int, bonus: int) -> None:
    hand = facts((0, 1, 3), (2,), (70, 40, 30, 60), bombs=((3, size),))
    score = score_hand(ruleset("fuzhou"), hand)
    assert team_scores(score) == [100, 100 + bonus]


def test_fuzhou_extra_bonuses_go_to_each_bombs_team() -> None:
    hand = facts((1, 3), (0, 2), (40, 60, 20, 80), bombs=((0, 5), (1, 6), (2, 4)))
    score = score_hand(ruleset("fuzhou"), hand)
    # team 0: 60 − 100 + 50; team 1: 140 + 100 + 100
    assert team_scores(score) == [10, 340]


@pytest.mark.parametrize(("sizes", "factor"), [
    ((), 1), ((5,), 1), ((6,), 2), ((7,), 4), ((8,), 8), ((6, 7), 8), ((8, 6, 5), 16),
])
def test_bomb_multipliers_multiply_together(sizes: tuple[int, ...], factor: int) -> None:
    assert bomb_multiplier(sizes) == factor


def test_multiplier_raises_every_teams_score() -> None:
    hand = facts((0, 2), (1, 3), (30, 20, 40, 85), (0, 15, 0, 10), bombs=((1, 7), (0, 6)))
    score = score_hand(ruleset("classic", bomb_bonus="multiplier"), hand)
    assert team_scores(score) == [195 * 8, 5 * 8]


def test_without_bomb_bonus_unbeaten_bombs_change_nothing() -> None:
    hand = facts((0, 2), (1, 3), (30, 20, 40, 85), (0, 15, 0, 10), bombs=((1, 8),))
    assert team_scores(score_hand(ruleset("classic"), hand)) == [195, 5]


def test_extra_bonus_counts_before_the_diff_tenth_transform() -> None:
    hand = facts((1, 2, 3), (0,), (50, 20, 60, 40), (30, 0, 0, 0), bombs=((0, 5),))
    score = score_hand(ruleset("jinzhou", bomb_bonus="extra"), hand)
    # team 0: 110 − 30 − 30 + 50 = 100; team 1: 60 + 30 = 90; difference 10 → ±1
    assert team_scores(score) == [1, -1]


def test_multiplier_applies_to_the_diff_tenth_score() -> None:
    hand = facts((1, 2, 3), (0,), (50, 20, 60, 40), (30, 0, 0, 0), bombs=((1, 6), (0, 7)))
    score = score_hand(ruleset("jinzhou", bomb_bonus="multiplier"), hand)
    assert team_scores(score) == [-32, 32]


# -- the settling steps: final score -----------------------------------------------------


def test_diff_tenth_can_end_in_a_half() -> None:
    hand = facts((0, 2), (1, 3), (45, 30, 60, 60), (0, 0, 0, 5))
    score = score_hand(ruleset("jinzhou", leftover="void"), hand)
    # team 0: 105 + 50 = 155; team 1: 90 − 50 = 40; difference 115
    assert team_scores(score) == [D("11.5"), D("-11.5")]
    assert score.winner_team == 0


def test_diff_tenth_with_single_catch_and_deduct_gives_a_negative_score() -> None:
    hand = facts((1, 2, 3), (0,), (50, 20, 60, 40), (30, 0, 0, 0))
    score = score_hand(ruleset("jinzhou"), hand)
    # team 0: 110 − 30 − 30 deducted = 50; team 1: 60 + 30 = 90
    assert team_scores(score) == [-4, 4]
    assert score.winner_team == 1


def test_diff_tenth_half_scores_serialise_as_json_decimals() -> None:
    hand = facts((0, 2), (1, 3), (100, 10, 75, 10), (0, 5, 0, 0))
    result = score_hand(ruleset("jinzhou", leftover="void"), hand).to_json()
    teams: Any = result["teams"]
    assert [team["score"] for team in teams] == [25.5, -25.5]
    assert '"score": 25.5' in json.dumps(result)
    assert '"score": -25.5' in json.dumps(result)


# -- QQ rules, 4 players -----------------------------------------------------------------


def test_qq4_first_out_plus_20_and_players_left_lose_20_and_their_points() -> None:
    hand = facts((0, 2), (1, 3), (30, 25, 20, 15), (0, 10, 0, 0))
    score = score_hand(ruleset("qq4"), hand)
    # team 0: 50 + 20; team 1: 40 − 20 − 10 − 20
    assert team_scores(score) == [70, -10]
    assert [team.rating for team in score.teams] == [70, -10]
    assert [seat.rating for seat in score.seats] == [35, -5, 35, -5]
    assert seat_scores(score) == [70, -10, 70, -10]
    assert score.winner_team == 0
    assert not score.doubled


def test_qq4_tie_goes_to_the_team_of_the_first_player_out() -> None:
    hand = facts((1, 0, 2), (3,), (25, 30, 15, 20), (0, 0, 0, 10))
    score = score_hand(ruleset("qq4"), hand)
    # team 0: 40; team 1: 50 + 20 − 20 − 10
    assert team_scores(score) == [40, 40]
    assert score.winner_team == 1


def test_qq4_ratings_double_when_the_losers_collected_nothing_and_were_not_first_out() -> None:
    hand = facts((0, 2), (1, 3), (60, 0, 40, 0))
    score = score_hand(ruleset("qq4"), hand)
    assert team_scores(score) == [120, -40]
    assert score.doubled
    assert [team.rating for team in score.teams] == [240, -80]
    assert [seat.rating for seat in score.seats] == [120, -40, 120, -40]


def test_qq4_no_doubling_when_the_losers_had_the_first_player_out() -> None:
    hand = facts((1, 0, 2), (3,), (60, 0, 40, 0))
    score = score_hand(ruleset("qq4"), hand)
    assert team_scores(score) == [100, 0]
    assert not score.doubled
    assert [team.rating for team in score.teams] == [100, 0]


def test_qq4_odd_team_rating_splits_into_halves() -> None:
    hand = facts((0, 2), (1, 3), (15, 25, 10, 35), (0, 0, 0, 15))
    score = score_hand(ruleset("qq4"), hand)
    # team 0: 25 + 20 = 45; team 1: 60 − 40 − 15 = 5
    assert team_scores(score) == [45, 5]
    seats: Any = score.to_json()["seats"]
    assert [seat["rating"] for seat in seats] == [22.5, 2.5, 22.5, 2.5]
    assert '"rating": 22.5' in json.dumps(score.to_json())


# -- QQ rules, 3 players -----------------------------------------------------------------


def test_qq3_places_by_score_with_first_out_bonus_and_last_player_penalty() -> None:
    hand = facts((1, 0), (2,), (30, 20, 40), (0, 0, 10))
    score = score_hand(ruleset("qq3"), hand)
    assert seat_scores(score) == [30, 40, 10]
    assert score.places == (1, 0, 2)
    assert score.winner_seat == 1
    assert score.winner_team is None
    assert score.teams == ()
    assert [seat.rating for seat in score.seats] == [30, 40, 10]
    assert not score.doubled


def test_qq3_score_tie_goes_to_the_earlier_finisher() -> None:
    hand = facts((2, 0), (1,), (30, 50, 10), (0, 10, 0))
    score = score_hand(ruleset("qq3"), hand)
    assert seat_scores(score) == [30, 20, 30]
    assert score.places == (2, 0, 1)
    assert score.winner_seat == 2


def test_qq3_a_finisher_ranks_before_the_player_left_on_equal_score() -> None:
    hand = facts((0, 1), (2,), (40, 20, 40))
    score = score_hand(ruleset("qq3"), hand)
    assert seat_scores(score) == [60, 20, 20]
    assert score.places == (0, 1, 2)


def test_qq3_ratings_double_when_second_and_third_placed_collected_nothing() -> None:
    hand = facts((1, 0), (2,), (0, 0, 100))
    score = score_hand(ruleset("qq3"), hand)
    assert seat_scores(score) == [0, 20, 80]
    assert score.places == (2, 1, 0)
    assert score.doubled
    assert [seat.rating for seat in score.seats] == [0, 40, 160]


def test_qq3_no_doubling_when_the_third_placed_collected_points() -> None:
    hand = facts((0, 1), (2,), (80, 0, 20))
    score = score_hand(ruleset("qq3"), hand)
    assert seat_scores(score) == [100, 0, 0]
    assert score.places == (0, 1, 2)
    assert not score.doubled


def test_qq4_an_unbeaten_bomb_scores_for_its_team() -> None:
    hand = facts((0, 2), (1, 3), (30, 25, 20, 15), (0, 10, 0, 0), bombs=((1, 6),))
    # Without the bomb: team 0 70, team 1 -10. Seat 1's 6-card bomb: +100 to team 1, or ×2.
    extra = score_hand(ruleset("qq4", bomb_bonus="extra"), hand)
    assert team_scores(extra) == [70, 90]
    assert extra.winner_team == 1
    assert team_scores(score_hand(ruleset("qq4", bomb_bonus="multiplier"), hand)) == [140, -20]


def test_qq3_an_unbeaten_bomb_scores_for_its_seat() -> None:
    hand = facts((1, 0), (2,), (30, 20, 40), (0, 0, 10), bombs=((2, 6),))
    score = score_hand(ruleset("qq3", bomb_bonus="extra"), hand)
    assert seat_scores(score) == [30, 40, 110]
    assert score.places == (2, 1, 0)


# -- 5/6-card games ----------------------------------------------------------------------


def test_stock_first_out_every_other_player_pays_the_winner() -> None:
    hand = facts((1,), (2, 0), (10, 15, 20), (5, 0, 10))
    score = score_hand(ruleset("six_card"), hand)
    assert seat_scores(score) == [-10, 55, 0]
    assert score.winner_seat == 1
    assert score.places == (1, 2, 0)
    assert [seat.rating for seat in score.seats] == [None] * 3


def test_stock_leftover_to_winners_goes_to_the_first_player_out() -> None:
    hand = facts((1,), (2, 0), (10, 15, 20), (5, 0, 10))
    score = score_hand(ruleset("five_card", leftover="to_winners"), hand)
    assert seat_scores(score) == [-10, 70, 0]


def test_stock_winner_is_the_highest_score_not_the_first_out() -> None:
    hand = facts((1,), (0, 2), (80, 0, 0))
    score = score_hand(ruleset("six_card"), hand)
    assert seat_scores(score) == [60, 40, -20]
    assert score.winner_seat == 0


def test_stock_equal_scores_go_to_the_better_placed_seat() -> None:
    hand = facts((2,), (1, 0), (90, 90, 10))
    score = score_hand(ruleset("six_card"), hand)
    assert seat_scores(score) == [70, 70, 50]
    assert score.winner_seat == 1


def test_stock_last_standing_everyone_pays_each_player_out_before_them() -> None:
    hand = facts((2, 0, 3), (1,), (30, 20, 50, 40), (0, 25, 0, 0))
    rules = ruleset("six_card_two_packs", end="last_standing", leftover="to_winners")
    score = score_hand(rules, hand)
    # 0 pays 2; 3 pays 2, 0; 1 pays 2, 0, 3 — net +60, +20, −20, −60; 1's 25 points go to 2
    assert seat_scores(score) == [50, -40, 135, 20]
    assert score.places == (2, 0, 3, 1)
    assert score.winner_seat == 2


def test_stock_first_out_pays_only_the_first_player_out_and_last_standing_pays_each() -> None:
    # Seats 1 then 2 go out; seat 0 is left (its 5 points void). Payment 20.
    hand = facts((1, 2), (0,), (10, 15, 20), (5, 0, 0))
    first_out = score_hand(ruleset("six_card", end="first_out"), hand)
    assert seat_scores(first_out) == [-10, 55, 0]  # 0 and 2 pay 1
    assert first_out.doubled is False
    last_standing = score_hand(ruleset("six_card", end="last_standing"), hand)
    assert seat_scores(last_standing) == [-30, 55, 20]  # 2 pays 1; 0 pays 1 and 2
    assert last_standing.doubled is False


def test_stock_hand_without_anyone_out_has_no_payments() -> None:
    hand = facts((), (0, 1), (20, 30), (15, 5))
    for end in ("first_out", "last_standing"):
        rules = ruleset("six_card", end=end, leftover="to_winners")
        assert seat_scores(score_hand(rules, hand)) == [20, 30]


def test_stock_games_honour_a_bomb_bonus_option_per_seat() -> None:
    hand = facts((0,), (1,), (20, 30), bombs=((1, 6),))
    score = score_hand(ruleset("six_card_two_packs", bomb_bonus="extra"), hand)
    assert seat_scores(score) == [40, 110]


# -- results and table totals ------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [
    (D("255"), 255), (D("-55"), -55), (D("25.5"), 25.5), (D("-0.5"), -0.5), (D("30.0"), 30),
])
def test_decimal_to_json_gives_ints_for_integral_values_and_floats_for_fractions(
    value: Decimal, expected: float,
) -> None:
    converted = decimal_to_json(value)
    assert converted == expected
    assert type(converted) is type(expected)


def test_team_games_total_per_team_and_other_games_per_seat() -> None:
    team_score = score_hand(ruleset("classic"), DOUBLE_CATCH_HAND)
    assert team_score.side_totals() == {"team:0": 195, "team:1": 5}
    seat_score = score_hand(ruleset("six_card"), facts((1,), (2, 0), (10, 15, 20)))
    assert seat_score.side_totals() == {"seat:0": -10, "seat:1": 55, "seat:2": 0}


def test_teams_sit_opposite_and_only_in_team_rulesets() -> None:
    assert teams_of(ruleset("classic"), 4) == ((0, 2), (1, 3))
    assert teams_of(ruleset("qq4"), 4) == ((0, 2), (1, 3))
    assert teams_of(ruleset("qq3"), 3) == ()
    assert teams_of(ruleset("six_card"), 4) == ()


@pytest.mark.parametrize("bad", [
    {"collected": (0, 0, 0)},
    {"finish_order": (0, 0)},
    {"finish_order": (0,), "still_in": (0, 1)},
    {"still_in": (4,)},
    {"unbeaten_bombs": ((7, 6),)},
])
def test_inconsistent_hand_facts_are_refused(bad: dict[str, Any]) -> None:
    fields: dict[str, Any] = {"players": 4, "finish_order": (0, 2), "still_in": (1, 3),
                              "collected": (0,) * 4, "leftover_points": (0,) * 4, **bad}
    with pytest.raises(ValueError, match="inconsistent hand facts"):
        HandFacts(**fields)


def test_inconsistent_hand_facts_name_every_problem() -> None:
    with pytest.raises(ValueError) as refused:
        HandFacts(players=4, finish_order=(0, 0), still_in=(1, 3), collected=(0,) * 3,
                  leftover_points=(0,) * 4)
    assert str(refused.value) == (
        "inconsistent hand facts: collected and leftover_points need one entry per seat;"
        " finish_order (0, 0) and still_in (1, 3) must be distinct seats")


# -- properties --------------------------------------------------------------------------

POINTS = st.integers(min_value=0, max_value=40).map(lambda n: n * 5)


@st.composite
def team_hands(draw: st.DrawFn) -> HandFacts:
    """A team hand that ended when a team was out (or earlier, as after a resignation)."""
    order = draw(st.permutations(range(4)))
    ended = next(k for k in range(2, 5) if {0, 2} <= set(order[:k]) or {1, 3} <= set(order[:k]))
    cut = draw(st.integers(min_value=0, max_value=ended))
    still_in = tuple(order[cut:])
    collected = tuple(draw(POINTS) for _ in range(4))
    leftover = tuple(draw(POINTS) if seat in still_in else 0 for seat in range(4))
    bombs = tuple(draw(st.lists(st.tuples(st.integers(0, 3), st.integers(4, 8)), max_size=3)))
    return HandFacts(4, tuple(order[:cut]), still_in, collected, leftover, bombs)


@given(team_hands())
def test_penalties_only_move_points_in_raw_team_scoring(hand: HandFacts) -> None:
    score = score_hand(ruleset("classic"), hand)
    assert sum(team_scores(score)) == sum(hand.collected) + sum(hand.leftover_points)


@given(team_hands())
def test_diff_tenth_team_scores_are_opposite(hand: HandFacts) -> None:
    score = score_hand(ruleset("jinzhou", bomb_bonus="multiplier"), hand)
    first, second = team_scores(score)
    assert first == -second
    assert first * 2 == (first * 2).to_integral_value()  # tenths of multiples of 5


@given(team_hands())
def test_the_winning_team_has_the_strictly_higher_score(hand: HandFacts) -> None:
    score = score_hand(ruleset("fuzhou", leftover="deduct"), hand)
    first, second = team_scores(score)
    expected = None if first == second else (0 if first > second else 1)
    assert score.winner_team == expected


def test_qq_team_with_the_higher_total_wins_even_without_the_first_player_out() -> None:
    # Seat 0 (team 0) goes out first (+20), but team 1 (seats 1, 3) collected 80 points:
    # team 0 has 0 + 20 = 20, team 1 80 - (20 + 5) = 55.
    score = score_hand(ruleset("qq4"), facts((0, 1, 2), (3,), (0, 50, 0, 30), (0, 0, 0, 5)))
    assert team_scores(score) == [D("20"), D("55")]
    assert score.winner_team == 1
    assert score.doubled is False  # the losing team had the first player out


def test_qq_team_draw_with_nobody_out_is_neither_won_nor_doubled() -> None:
    score = score_hand(ruleset("qq4"), facts((), (0, 1, 2, 3), (30, 20, 10, 20), (5, 5, 5, 5)))
    assert score.winner_team is None
    assert score.doubled is False
    assert team_scores(score) == [D("-10"), D("-10")]
    assert [t.rating for t in score.teams] == [D("-10"), D("-10")]


def test_team_scores_are_tidy_and_a_team_game_is_never_doubled() -> None:
    # jinzhou (team scoring, final diff_tenth): team 0 has 70 + 50 (double catch) = 120,
    # team 1 105 - 50 - 25 (leftover deducted) = 30; a tenth of the difference is 9.
    score = score_hand(ruleset("jinzhou"), DOUBLE_CATCH_HAND)
    assert [str(t.score) for t in score.teams] == ["9", "-9"]  # not "9.0"
    assert score.doubled is False
