"""A hand inside its match: the declaration window a client names, the result a hand leaves
on the match, the match's end past A, and the deal and ruleset a table is given."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from fiftyk_referee.domain.errors import InvalidRuleset, Reason, RuleError
from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.observer import SeatViewer
from fiftyk_referee.domain.shengji import GAME
from fiftyk_referee.domain.shengji.hand import DECLARE, ShengjiHand, check_deck
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.domain.shengji.scoring import score_hand
from fiftyk_referee.domain.shengji.views import ShengjiResult
from tests.unit.shengji.helpers import NOTHING, deck_for, new_hand
from tests.unit.shengji.test_scoring import facts

TRACTOR = ShengjiRules.from_spec("tractor")


def refusal(call: Any) -> RuleError:
    """The error a call is refused with."""
    with pytest.raises(RuleError) as error:
        call()
    return error.value


# -- the declaration window a client names --------------------------------------------------

def test_a_declaration_naming_a_closed_window_is_refused() -> None:
    hand = new_hand(dealer=None)
    for seat in range(4):  # everyone declares nothing after round 1: round 2 is dealt
        hand.act(seat, Action(DECLARE, (), value="1"))
    assert hand.round == 2
    error = refusal(lambda: hand.act(0, Action(DECLARE, (), value="1")))
    assert error.reason == ShengjiReason.WRONG_WINDOW
    assert 0 not in hand.spoken
    hand.act(0, Action(DECLARE, (), value="2"))  # the open window is accepted
    assert 0 in hand.spoken


@pytest.mark.parametrize("value", ["one", "-1", "1.0", "1" * 10])
def test_a_declaration_value_that_is_not_a_round_number_is_an_invalid_action(value: str) -> None:
    hand = new_hand(dealer=None)
    error = refusal(lambda: hand.act(0, Action(DECLARE, (), value=value)))
    assert error.reason == Reason.INVALID_ACTION and "round number" in error.message


def test_a_declaration_naming_a_window_not_open_yet_is_refused() -> None:
    hand = new_hand(dealer=None)
    assert refusal(lambda: hand.act(0, Action(DECLARE, (), value="2"))).reason == \
        ShengjiReason.WRONG_WINDOW
    hand.act(0, NOTHING)  # naming no window is always the open one
    assert 0 in hand.spoken


# -- what a hand leaves on the match --------------------------------------------------------

def test_a_hand_that_does_not_end_the_match_scores_the_levels_climbed() -> None:
    # The dealer side (team 0) holds the attackers to 0 points: three levels, 2 -> 5.
    result = ShengjiResult.from_json(score_hand(TRACTOR, facts(trick_points=0)))
    assert not result.game_over and result.game_winner is None
    assert result.level_progress == (3, 0)
    assert result.side_totals == {"team:0": Decimal(3), "team:1": Decimal(0)}
    # The attackers (team 1) score 160 of the tractor table: two levels for them.
    attackers = ShengjiResult.from_json(score_hand(TRACTOR, facts(trick_points=160)))
    assert attackers.level_progress == (0, 2)
    assert attackers.side_totals == {"team:0": Decimal(0), "team:1": Decimal(2)}


def test_a_hand_winning_the_match_scores_one_step_past_a() -> None:
    rules = ShengjiRules.from_spec("tractor", {"must_defend_a": False})
    result = ShengjiResult.from_json(score_hand(rules, facts(levels=("K", "2"))))
    assert result.game_over and result.game_winner == 0
    assert result.level_progress == (2, 0)  # K -> A, then the match
    assert result.side_totals == {"team:0": Decimal(2), "team:1": Decimal(0)}


# -- the match's end --------------------------------------------------------------------------

@pytest.mark.parametrize("team", [0, 1])
def test_the_match_ends_when_a_team_passes_a(team: int) -> None:
    climbed = Decimal(len("23456789") + len(["10", "J", "Q", "K", "A"]))  # 2 -> past A: 13
    scores = {f"team:{team}": climbed, f"team:{1 - team}": Decimal(5)}
    assert GAME.match_end(TRACTOR, 9, scores) == f"team {team} won the match"
    at_a = {f"team:{team}": climbed - 1, f"team:{1 - team}": Decimal(5)}
    assert GAME.match_end(TRACTOR, 9, at_a) is None  # reaching A is not passing it


def test_the_match_end_counts_from_the_start_level() -> None:
    from_ten = GAME.rules("tractor", {"start_level": "10"})
    assert GAME.match_end(from_ten, 3, {"team:1": Decimal(5)}) == "team 1 won the match"
    assert GAME.match_end(from_ten, 3, {"team:1": Decimal(4)}) is None


# -- the deal and the ruleset a table is given -----------------------------------------------

@pytest.mark.parametrize("card", ["1S", "XX", "10", ""])
def test_a_supplied_deck_with_a_malformed_card_is_an_invalid_deal(card: str) -> None:
    deck = deck_for(TRACTOR, {})
    deck[5] = card
    error = refusal(lambda: check_deck(TRACTOR, deck))
    assert error.reason == Reason.INVALID_DEAL and "deck" in error.message
    error = refusal(lambda: ShengjiHand.deal_new(table_id="t", number=1, rules=TRACTOR,
                                                 dealer=0, deck=deck))
    assert error.reason == Reason.INVALID_DEAL


def test_a_well_formed_deck_is_returned_in_notation() -> None:
    deck = deck_for(TRACTOR, {})
    assert check_deck(TRACTOR, deck) == deck


@pytest.mark.parametrize("spec", [
    None, "tractor", ["tractor"], 7, {"options": {}}, {"preset": "tractor", "extra": 1},
    {"preset": "tractor", "options": ["kitty_cap"]},
])
def test_a_ruleset_that_is_not_an_object_with_a_preset_is_invalid(spec: Any) -> None:
    with pytest.raises(InvalidRuleset) as error:
        ShengjiRules.from_json(spec)
    assert error.value.reason == Reason.INVALID_RULESET and error.value.message
    with pytest.raises(InvalidRuleset):
        GAME.rules_from_json(spec)


def test_a_ruleset_object_with_a_preset_and_options_is_read() -> None:
    rules = ShengjiRules.from_json({"preset": "tractor", "options": {"kitty_cap": 8}})
    assert rules.kitty_cap == 8
    assert ShengjiRules.from_json({"preset": "tractor"}) == TRACTOR


# -- asking a hand for what it does not have ----------------------------------------------------

def test_a_hand_in_progress_leaves_no_record_on_the_match() -> None:
    hand = new_hand()
    error = refusal(hand.record)
    assert error.reason == Reason.HAND_IN_PROGRESS and error.message == "the hand is not over"


def test_the_shengji_ruling_of_another_game_s_hand_is_refused() -> None:
    error = refusal(lambda: GAME.ruling(object()))
    assert error.reason == Reason.INVALID_ACTION and error.message == "not a Shengji hand"


@pytest.mark.parametrize("seat", [4, -1])
def test_a_view_for_a_seat_that_is_not_at_the_table_is_refused(seat: int) -> None:
    hand = new_hand()
    error = refusal(lambda: hand.view(SeatViewer(seat)))
    assert error.reason == Reason.INVALID_SEAT and error.message == "seat must be 0..3"
