"""Scoring: 抠底 multipliers, level bands per pack count, rotation, the match end, QQ."""

from __future__ import annotations

import pytest

from fiftyk_referee.domain.cards import parse_cards
from fiftyk_referee.domain.shengji import GAME
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, trump_order
from fiftyk_referee.domain.shengji.play import make_lead
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.domain.shengji.scoring import (
    ATTACKERS,
    DEALER,
    HandFacts,
    kitty_multiplier,
    level_outcome,
    level_progress,
    qq_multiplier,
    score_hand,
)

TRACTOR = ShengjiRules.from_spec("tractor")


@pytest.mark.parametrize(("cards", "multiplier"), [
    (1, 2), (2, 4), (3, 8), (4, 16), (6, 64), (8, 64), (12, 64)])
def test_seed_kitty_multipliers(cards: int, multiplier: int) -> None:
    assert kitty_multiplier(TRACTOR, cards) == multiplier


def test_kitty_cap_and_double() -> None:
    assert kitty_multiplier(ShengjiRules.from_spec("tractor", {"kitty_cap": 8}), 6) == 8
    assert kitty_multiplier(ShengjiRules.from_spec("tractor", {"kitty_multiplier": "double"}),
                            6) == 2


BANDS = {
    "shengji_one_pack": [(0, DEALER, 3), (5, DEALER, 2), (15, DEALER, 2), (20, DEALER, 1),
                         (35, DEALER, 1), (40, ATTACKERS, 0), (55, ATTACKERS, 0),
                         (60, ATTACKERS, 1), (80, ATTACKERS, 2)],
    "tractor": [(0, DEALER, 3), (5, DEALER, 2), (35, DEALER, 2), (40, DEALER, 1),
                (75, DEALER, 1), (80, ATTACKERS, 0), (115, ATTACKERS, 0), (120, ATTACKERS, 1),
                (160, ATTACKERS, 2), (200, ATTACKERS, 3)],
    "titanic": [(0, DEALER, 3), (55, DEALER, 2), (60, DEALER, 1), (115, DEALER, 1),
                (120, ATTACKERS, 0), (175, ATTACKERS, 0), (180, ATTACKERS, 1),
                (240, ATTACKERS, 2)],
}


@pytest.mark.parametrize("preset", sorted(BANDS))
def test_level_bands_of_each_pack_count(preset: str) -> None:
    band = ShengjiRules.from_spec(preset).band
    for points, side, levels in BANDS[preset]:
        assert level_outcome(points, band) == (side, levels), points


def facts(**changes: object) -> HandFacts:
    """Facts of a tractor hand dealt by seat 0 at level 2, changed as given."""
    base: dict[str, object] = {
        "dealer": 0, "levels": ("2", "2"), "trick_points": 0, "kitty_points": 0,
        "last_winner": 0, "last_lead_largest": 1, "failed_throws": (), "room_points": (0,) * 4}
    base.update(changes)
    return HandFacts(**base)  # type: ignore[arg-type]


def test_dealer_side_win_rotates_to_the_partner() -> None:
    result = score_hand(TRACTOR, facts(trick_points=40))
    assert result["outcome"] == {"side": DEALER, "levels": 1}
    assert result["levels"]["after"] == ["3", "2"]
    assert result["next_dealer"] == 2


def test_attackers_take_over_and_the_next_seat_deals() -> None:
    result = score_hand(TRACTOR, facts(trick_points=80, dealer=1))
    assert result["outcome"] == {"side": ATTACKERS, "levels": 0}
    assert result["next_dealer"] == 2


def test_kitty_bonus_only_when_attackers_win_the_last_trick() -> None:
    won = score_hand(TRACTOR, facts(trick_points=30, kitty_points=25, last_winner=1,
                                    last_lead_largest=2))
    assert won["attackers"]["kitty_bonus"] == 100 and won["attackers"]["points"] == 130
    assert won["last_trick"] == {"winner": 1, "side": ATTACKERS, "multiplier": 4}
    kept = score_hand(TRACTOR, facts(trick_points=30, kitty_points=25, last_winner=2))
    assert kept["attackers"]["kitty_bonus"] == 0


def test_throw_penalty_moves_points_and_never_below_zero() -> None:
    rules = ShengjiRules.from_spec("tractor", {"throw_penalty": 10})
    assert score_hand(rules, facts(trick_points=20, failed_throws=(0,)))["attackers"][
        "points"] == 30
    assert score_hand(rules, facts(trick_points=5, failed_throws=(1,)))["attackers"][
        "points"] == 0


def test_levels_stop_at_ace_and_the_defender_at_ace_wins() -> None:
    result = score_hand(TRACTOR, facts(levels=("K", "2")))
    assert result["levels"]["after"] == ["A", "2"] and not result["game_over"]
    result = score_hand(TRACTOR, facts(levels=("A", "5"), trick_points=40))
    assert result["game_over"] and result["game_winner"] == 0
    assert level_progress(result) == [1, 0]


def test_attackers_reaching_ace_must_defend_it() -> None:
    result = score_hand(TRACTOR, facts(levels=("2", "K"), trick_points=200))
    assert result["levels"]["after"] == ["2", "A"] and not result["game_over"]


def test_without_defending_ace_a_gain_past_ace_wins() -> None:
    rules = ShengjiRules.from_spec("tractor", {"must_defend_a": False})
    result = score_hand(rules, facts(levels=("K", "2"), trick_points=0))
    assert result["game_winner"] == 0 and result["levels"]["after"] == ["A", "2"]


QQ = ShengjiRules.from_spec("tractor_qq")


def test_seed_qq_examples() -> None:
    at_90 = score_hand(QQ, facts(room_points=(90,) * 4))
    assert at_90["room_points"]["delta"] == [8, -8, 8, -8]
    at_400 = score_hand(QQ, facts(room_points=(400,) * 4))
    assert at_400["room_points"]["delta"] == [12, -12, 12, -12]
    special = ShengjiRules.from_spec("tractor_qq", {"qq_da_guang": 6})
    assert score_hand(special, facts(room_points=(400,) * 4))["room_points"]["base"] == 6
    assert score_hand(special, facts(room_points=(400,) * 4))["room_points"]["delta"][0] == 18


def test_qq_lowest_total_decides_and_the_cap_applies_to_attackers() -> None:
    mixed = score_hand(QQ, facts(room_points=(80, 400, 500, 300), trick_points=40))
    assert mixed["room_points"]["multiplier"] == 2 and mixed["room_points"]["base"] == 2
    attack = score_hand(QQ, facts(trick_points=200))
    assert attack["room_points"]["base"] == 4 and attack["room_points"]["delta"][1] == 4


@pytest.mark.parametrize(("lead", "multiplier"), [
    ("4C 4C", 4), ("4C 4C 5C 5C", 16), ("4C 4C 5C 5C 6C 6C", 64),
    ("AC KC QC JC 10C 9C 8C 7C 7C", 4), ("AC KC QC JC", 2), ("AC AC JC JC", 4),
])
def test_seed_kitty_multipliers_of_last_leads(lead: str, multiplier: int) -> None:
    order = trump_order(LEVEL_RANK["2"], "S", False)
    largest = make_lead(parse_cards(lead), order).components[0].size
    assert kitty_multiplier(TRACTOR, largest) == multiplier


@pytest.mark.parametrize(("lead", "multiplier"), [
    ("5C 5C 5C", 8), ("4C 4C 4C 5C 5C 5C", 64)])
def test_seed_kitty_multipliers_of_titanic_leads(lead: str, multiplier: int) -> None:
    order = trump_order(LEVEL_RANK["2"], "S", False)
    largest = make_lead(parse_cards(lead), order).components[0].size
    assert kitty_multiplier(ShengjiRules.from_spec("titanic"), largest) == multiplier


def test_qq_room_points_triple_from_exactly_the_triple_bound() -> None:
    assert qq_multiplier(QQ, (300, 300, 300, 300)) == 3
    assert qq_multiplier(QQ, (300, 300, 299, 300)) == 2
    assert score_hand(QQ, facts(room_points=(300,) * 4))["room_points"]["multiplier"] == 3


def test_without_defending_ace_the_winners_still_climb_below_ace() -> None:
    # The dealer side at 2 holds the attackers to 0 points: three levels, to 5.
    rules = ShengjiRules.from_spec("tractor", {"must_defend_a": False})
    result = score_hand(rules, facts(levels=("2", "2"), trick_points=0))
    assert result["outcome"] == {"side": DEALER, "levels": 3}
    assert result["levels"]["after"] == ["5", "2"]
    assert not result["game_over"]


def test_a_match_with_a_hands_limit_ends_after_that_many_hands() -> None:
    limited = GAME.rules("tractor", {"hands": 2})
    assert GAME.match_end(limited, 1, {}) is None
    assert GAME.match_end(limited, 2, {}) == "2 hands played"
    assert GAME.match_end(GAME.rules("tractor"), 50, {}) is None


def test_qq_room_points_go_to_the_attackers_of_a_dealer_on_team_one() -> None:
    # Seat 1 deals; seats 0 and 2 attack and score 80: they win the room points.
    moved = score_hand(QQ, facts(dealer=1, trick_points=80))
    assert moved["outcome"]["side"] == ATTACKERS
    base = moved["room_points"]["base"]
    assert base > 0 and moved["room_points"]["delta"] == [base, -base, base, -base]


def test_a_match_won_while_climbing_counts_the_levels_and_the_win() -> None:
    # Without defending A, the dealer side at K holds the attackers to 0: K -> A (one level)
    # and the match (one step past A).
    rules = ShengjiRules.from_spec("tractor", {"must_defend_a": False})
    result = score_hand(rules, facts(levels=("K", "2"), trick_points=0))
    assert result["game_winner"] == 0
    assert level_progress(result) == [2, 0]


def test_without_defending_ace_reaching_ace_exactly_does_not_end_the_match() -> None:
    rules = ShengjiRules.from_spec("tractor", {"must_defend_a": False})
    result = score_hand(rules, facts(levels=("K", "2"), trick_points=40))
    assert result["levels"]["after"] == ["A", "2"]
    assert not result["game_over"] and result["game_winner"] is None


def test_qq_room_points_after_the_hand_are_the_totals_plus_the_delta() -> None:
    moved = score_hand(QQ, facts(room_points=(90, 100, 110, 120)))["room_points"]
    assert moved["delta"] == [8, -8, 8, -8]
    assert moved["after"] == [98, 92, 118, 112]
