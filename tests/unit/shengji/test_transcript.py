"""Shengji transcripts (docs/transcript.md#shengji-hands): reading, rulings, export, re-ruling."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from fiftyk_referee.domain.errors import Reason
from fiftyk_referee.domain.fiftyk.transcript import InvalidTranscript
from fiftyk_referee.domain.shengji import GAME
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from tests.unit.shengji.helpers import deck_for
from tests.unit.shengji.test_playouts import play_out

RULES = ShengjiRules.from_spec("tractor")


def transcript(actions: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A tractor transcript of a first hand where seat 1 holds 2H first and seat 2 2S 2S."""
    deck = deck_for(RULES, {1: "2H", 2: "3C 2S 2S"}, dealer=None)
    data: dict[str, Any] = {"format": "fiftyk-transcript/1", "game": "shengji",
                            "ruleset": {"preset": "tractor", "options": {}}, "players": 4,
                            "dealer": None, "deck": deck, "actions": actions}
    data.update(fields)
    return data


def rejected(actions: list[dict[str, Any]]) -> tuple[int, str]:
    """(action index, reason) of the ruling on a transcript that must be rejected."""
    result = GAME.adjudicate(transcript(actions))
    assert result["status"] == "rejected", result
    return result["rejected"]["action"], result["rejected"]["reason"]


def test_declarations_with_rounds_fix_the_dealer_and_trump() -> None:
    result = GAME.adjudicate(transcript([{"seat": 1, "declare": ["2H"], "round": 1},
                                         {"seat": 2, "declare": ["2S", "2S"], "round": 3}]))
    assert result["status"] == "in_progress" and result["actions_applied"] == 2
    assert result["dealer"] is None  # the windows are still open


def test_rulings_on_bad_actions() -> None:
    assert rejected([{"seat": 1, "pass": True}]) == (0, ShengjiReason.PASS_NOT_ALLOWED)
    assert rejected([{"seat": 1, "declare": ["2H"], "round": 3},
                     {"seat": 2, "declare": ["2S", "2S"], "round": 2}]) == (
        1, ShengjiReason.NOT_DECLARATION_PHASE)
    assert rejected([{"seat": 2, "declare": ["2S"], "round": 1}]) == (
        0, Reason.CARDS_NOT_IN_HAND)
    assert rejected([{"seat": 1, "declare": ["2H"], "round": 1},
                     {"seat": 2, "declare": ["2S"], "round": 2}]) == (
        1, ShengjiReason.DECLARATION_TOO_WEAK)
    assert rejected([{"seat": 1, "declare": ["2H"], "round": 1},
                     {"seat": 1, "play": ["2H"]}]) == (1, ShengjiReason.MUST_BURY)
    assert rejected([{"seat": 1, "declare": ["ZZ"]}]) == (0, Reason.UNKNOWN_CARD)
    assert rejected([{"seat": 1, "bury": ["2H"] * 8}]) == (0, Reason.NOT_YOUR_TURN)
    assert rejected([{"seat": 1}]) == (0, Reason.INVALID_ACTION)


@pytest.mark.parametrize("change", [
    {"format": "other"}, {"game": "fiftyk"}, {"players": 3}, {"dealer": 4},
    {"levels": ["2", "3"]}, {"room_points": [0, 0]}, {"deck": ["3C"]},
    {"ruleset": {"preset": "classic"}},
])
def test_unreadable_transcripts(change: dict[str, Any]) -> None:
    with pytest.raises(InvalidTranscript) as error:
        GAME.adjudicate(transcript([], **change))
    assert error.value.reason == Reason.INVALID_TRANSCRIPT


def test_a_live_hand_exports_a_transcript_that_re_rules_to_its_result() -> None:
    rules = GAME.rules("tractor_qq", {"throw_penalty": 5})
    hand = GAME.deal(table_id="x", number=1, rules=rules, players=4, dealer=0,
                     seat_players=[None] * 4, carry={}, deck=None, seed=b"s" * 32)
    play_out(hand, random.Random(3), check_views=False)
    exported = GAME.export_transcript(hand)
    assert exported["game"] == "shengji" and exported["dealer"] is None
    result = GAME.adjudicate(json.loads(json.dumps(exported)))
    assert result["status"] == "completed" and result["room_points"] is not None
    assert hand.result is not None
    assert {k: result[k] for k in hand.result} == hand.result


def test_the_hands_form_equals_the_deck_form() -> None:
    deck = deck_for(RULES, {}, dealer=2, seed=11)
    first = 3
    hands = [[] for _ in range(4)]  # type: list[list[str]]
    for index, card in enumerate(deck[:4 * RULES.hand_size]):
        hands[(first + index) % 4].append(card)
    base = transcript([], dealer=2, levels=["5", "2"], deck=deck)
    by_hands = {k: v for k, v in base.items() if k != "deck"}
    by_hands.update(hands=hands, kitty=deck[4 * RULES.hand_size:])
    actions = [{"seat": 3, "play": [hands[3][0]]}]
    one = GAME.adjudicate({**base, "actions": actions})
    two = GAME.adjudicate({**by_hands, "actions": actions})
    assert one == two and one["dealer"] == 2


# -- malformed transcripts are refused, never a crash ------------------------------------------

@pytest.mark.parametrize("change", [{"levels": "22"}, {"levels": 5}, {"dealer": "1"}])
def test_malformed_levels_and_dealer_are_unreadable(change: dict[str, Any]) -> None:
    with pytest.raises(InvalidTranscript) as error:
        GAME.adjudicate(transcript([], **change))
    assert error.value.reason == Reason.INVALID_TRANSCRIPT


def test_an_action_that_is_not_an_object_with_a_seat_number_is_invalid() -> None:
    not_an_object: Any = ["2H"]
    assert rejected([not_an_object]) == (0, Reason.INVALID_ACTION)
    assert rejected([{"seat": "1", "declare": ["2H"], "round": 1}]) == (
        0, Reason.INVALID_ACTION)


@pytest.mark.parametrize("given", [None, 5, ""])
def test_action_cards_that_are_not_a_list_of_strings_are_unknown_cards(given: Any) -> None:
    assert rejected([{"seat": 1, "declare": given, "round": 1}]) == (0, Reason.UNKNOWN_CARD)


def test_the_hands_form_needs_four_hands() -> None:
    deck = deck_for(RULES, {}, dealer=2, seed=11)
    hands: list[list[str]] = [[] for _ in range(4)]
    for index, card in enumerate(deck[:4 * RULES.hand_size]):
        hands[(3 + index) % 4].append(card)
    base = {k: v for k, v in transcript([], dealer=2, levels=["5", "2"]).items() if k != "deck"}
    kitty = deck[4 * RULES.hand_size:]
    with pytest.raises(InvalidTranscript) as error:
        GAME.adjudicate({**base, "hands": hands[:3], "kitty": kitty})
    assert '"hands" must be a list of 4 card lists' in str(error.value)
    assert GAME.adjudicate({**base, "hands": hands, "kitty": kitty})["status"] == "in_progress"
