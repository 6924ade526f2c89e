"""Transcripts in, results out (docs/transcript.md): rulings, unreadable files, exports."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from fiftyk_referee.domain.errors import Reason
from fiftyk_referee.domain.fiftyk import GAME
from fiftyk_referee.domain.fiftyk.hand import first_leader
from fiftyk_referee.domain.fiftyk.reasons import FiftykReason
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.fiftyk.transcript import (
    InvalidTranscript,
    adjudicate,
    export_transcript,
    load_transcript,
)
from fiftyk_referee.domain.table import Table
from tests.support.checks import assert_adjudication_reproduces
from tests.support.scenarios import (
    CLASSIC_HANDS,
    CLASSIC_SCRIPT,
    CLASSIC_TEAM_SCORES,
    classic_transcript,
)
from tests.support.scripted import deal, run

RESULT_FIELDS = {"format", "status", "actions_applied", "rejected", "finish_order", "collected",
                 "teams", "seats", "winner"}


def ruled(data: dict[str, Any]) -> dict[str, Any]:
    result = adjudicate(data)
    assert set(result) == RESULT_FIELDS
    assert result["format"] == "fiftyk-result/1"
    return result


def test_a_completed_hand_is_scored_as_the_rules_say() -> None:
    result = ruled(classic_transcript())
    assert result["status"] == "completed"
    assert result["rejected"] is None
    assert result["actions_applied"] == 15
    assert result["finish_order"] == [0, 2]
    assert result["collected"] == [45, 30, 30, 0]
    assert result["teams"] == [
        {"seats": [0, 2], "collected": 75, "score": CLASSIC_TEAM_SCORES[0], "rating": None},
        {"seats": [1, 3], "collected": 30, "score": CLASSIC_TEAM_SCORES[1], "rating": None},
    ]
    assert result["seats"] == [{"seat": s, "score": CLASSIC_TEAM_SCORES[s % 2], "rating": None}
                               for s in range(4)]
    assert result["winner"] == {"team": 0, "seat": None}


def test_hands_and_deck_transcripts_of_the_same_deal_rule_alike() -> None:
    data = classic_transcript()
    hand = deal("classic", CLASSIC_HANDS)
    by_hands = {k: v for k, v in data.items() if k != "deck"}
    by_hands["hands"] = [[str(c) for c in reversed(h)] for h in hand.hands]  # any order
    assert ruled(by_hands) == ruled(data)


def test_the_default_dealer_is_the_last_seat() -> None:
    data = classic_transcript()
    assert load_transcript(data).dealer == 3
    data["dealer"] = 0  # seat 1 is now dealt the first card (a ♥3): seat 0 may not lead
    result = ruled(data)
    assert result["status"] == "rejected"
    assert result["rejected"]["reason"] == "NOT_YOUR_TURN"


def test_actions_running_out_leave_the_hand_in_progress_without_scores() -> None:
    data = classic_transcript()
    data["actions"] = data["actions"][:4]
    result = ruled(data)
    assert result["status"] == "in_progress"
    assert (result["actions_applied"], result["finish_order"]) == (4, [0])
    assert result["collected"] == [45, 0, 0, 0]
    assert result["teams"] == [
        {"seats": [0, 2], "collected": 45, "score": None, "rating": None},
        {"seats": [1, 3], "collected": 0, "score": None, "rating": None},
    ]
    assert all(seat["score"] is None for seat in result["seats"])
    assert result["winner"] == {"team": None, "seat": None}


REJECTIONS: list[tuple[int, Any, Reason]] = [
    (0, {"seat": 1, "play": ["3C"]}, Reason.NOT_YOUR_TURN),
    (0, {"seat": 0, "play": ["2S"]}, Reason.CARDS_NOT_IN_HAND),
    (0, {"seat": 0, "play": ["3S", "4S"]}, Reason.INVALID_COMBINATION),
    (0, {"seat": 0, "play": []}, Reason.INVALID_COMBINATION),
    (0, {"seat": 0, "pass": True}, FiftykReason.MUST_LEAD),
    (0, {"seat": 0, "play": ["3Z"]}, Reason.UNKNOWN_CARD),
    (0, {"seat": 0, "play": [3]}, Reason.UNKNOWN_CARD),
    (0, {"seat": 0, "play": "3H"}, Reason.UNKNOWN_CARD),
    (0, {"seat": 9, "pass": True}, Reason.INVALID_SEAT),
    (0, {"seat": "0", "pass": True}, Reason.INVALID_ACTION),
    (0, {"seat": True, "pass": True}, Reason.INVALID_ACTION),
    (0, ["seat", 0], Reason.INVALID_ACTION),
    (0, {"seat": 0}, Reason.INVALID_ACTION),
    (0, {"seat": 0, "play": ["3H"], "pass": True}, Reason.INVALID_ACTION),
    (1, {"seat": 1, "pass": False}, Reason.INVALID_ACTION),
    (11, {"seat": 2, "play": ["5D"]}, FiftykReason.DOES_NOT_BEAT),  # a single 5 on a 4-bomb
    (4, {"seat": 0, "pass": True}, FiftykReason.PLAYER_OUT),
    (15, {"seat": 3, "pass": True}, Reason.HAND_OVER),
]


@pytest.mark.parametrize(("index", "action", "reason"), REJECTIONS)
def test_a_refused_action_is_a_ruling_and_nothing_after_it_applies(
    index: int, action: Any, reason: Reason
) -> None:
    data = classic_transcript()
    data["actions"] = [*data["actions"][:index], action, *data["actions"][index:]]
    result = ruled(data)
    assert result["status"] == "rejected"
    assert result["actions_applied"] == index
    assert result["rejected"]["action"] == index
    assert result["rejected"]["reason"] == reason.value
    assert result["rejected"]["message"]
    scores = [seat["score"] for seat in result["seats"]]
    if index == 15:  # the hand was over: its result stands beside the ruling
        assert scores == [270, -70, 270, -70]
    else:
        assert scores == [None] * 4


def test_a_resignation_is_an_action_of_its_own() -> None:
    data = classic_transcript()
    data["actions"] = [*data["actions"][:4], {"seat": 1, "resign": True},
                       {"seat": 2, "play": ["5H", "5C", "5C", "5D"]}]
    result = ruled(data)
    assert (result["status"], result["actions_applied"]) == ("in_progress", 6)
    data["actions"][4] = {"seat": 1, "resign": "yes"}
    assert ruled(data)["rejected"]["reason"] == "INVALID_ACTION"


def test_card_notation_in_actions_accepts_t_lower_case_and_suit_symbols() -> None:
    data = classic_transcript()
    first = data["actions"][0]["play"]
    data["actions"][0]["play"] = [c.lower().replace("10", "T").replace("h", "♥") for c in first]
    assert ruled(data) == ruled(classic_transcript())


def unreadable(data: Any) -> str:
    with pytest.raises(InvalidTranscript) as error:
        adjudicate(data)
    assert error.value.reason == Reason.INVALID_TRANSCRIPT
    return error.value.message


def broken(**changes: Any) -> dict[str, Any]:
    data = classic_transcript()
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


@pytest.mark.parametrize(("data", "says"), [
    ([], "JSON object"),
    (broken(format="fiftyk-transcript/2"), "format"),
    (broken(format=None), "format"),
    (broken(ruleset={"preset": "bridge"}), "unknown preset"),
    (broken(ruleset={"preset": "classic", "options": {"jokers_wild": True}}), "unknown option"),
    (broken(ruleset={"preset": "classic", "options": {"double_catch": -1}}), "double_catch"),
    (broken(ruleset={"preset": "classic", "options": ["wind"]}), "options"),
    (broken(ruleset="classic"), "ruleset"),
    (broken(players=3), "players"),
    (broken(players="4"), "players"),
    (broken(players=None), "players"),
    (broken(dealer=4), "dealer"),
    (broken(dealer=True), "dealer"),
    (broken(deck=None), "exactly one"),
    (broken(hands=[[]] * 4), "exactly one"),
    (broken(actions={"seat": 0}), "actions"),
    (broken(first_leader=4), "first_leader"),
    (broken(first_leader=1), "contradicts"),
])
def test_malformed_files_rulesets_and_deals_are_unreadable(data: Any, says: str) -> None:
    assert says in unreadable(data)


def test_a_deck_must_be_the_presets_whole_deck() -> None:
    deck = classic_transcript()["deck"]
    assert "missing" in unreadable(broken(deck=deck[1:]))
    assert "3Q" in unreadable(broken(deck=[*deck[:-1], "3Q"]))
    assert "card strings" in unreadable(broken(deck=[*deck[:-1], 3]))
    assert "card strings" in unreadable(broken(deck="3H 3S"))


def test_hands_must_make_up_the_deck_and_fit_the_deal() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    hands = [[str(c) for c in h] for h in hand.hands]

    def by_hands(hands_value: Any, **extra: Any) -> dict[str, Any]:
        return {**broken(deck=None), "hands": hands_value, **extra}

    assert "4 card lists" in unreadable(by_hands(hands[:3]))
    moved = copy.deepcopy(hands)
    moved[1].append(moved[0].pop())  # 26 and 28 cards: not what a deal gives
    assert "not a deal" in unreadable(by_hands(moved))
    assert "exactly" in unreadable(by_hands([*hands[:3], hands[3][1:]]))
    assert "stock" in unreadable(by_hands(hands, stock=["3H"]))
    not_a_list = [hands[0], "3H 3S", *hands[2:]]
    assert unreadable(by_hands(not_a_list)) == "hands[1] must be a list of card strings"


def test_a_stock_game_transcript_gives_hands_and_the_stock_in_drawing_order() -> None:
    hand = deal("five_card", ["3H 7S 9*3", "4S 8*4", "5S J*4"], "K*4 A 2*2 10*4 Q ...")
    hands = [[str(c) for c in h] for h in hand.hands]
    stock = [str(c) for c in hand.stock]
    data: dict[str, Any] = {
        "format": "fiftyk-transcript/1", "ruleset": {"preset": "five_card"}, "players": 3,
        "hands": hands, "stock": stock,
        "actions": [{"seat": 0, "play": ["3H"]}, {"seat": 1, "play": ["4S"]},
                    {"seat": 2, "play": ["5S"]}, {"seat": 0, "play": ["7S"]},
                    {"seat": 1, "play": ["8S", "8H", "8C", "8D"]},
                    {"seat": 2, "play": ["JS", "JH", "JC", "JD"]},
                    {"seat": 0, "pass": True},  # seat 1 passes by itself (empty hand)
                    {"seat": 2, "play": ["KS", "KH", "KC", "KD"]}],
    }
    result = ruled(data)
    assert (result["status"], result["actions_applied"]) == ("in_progress", 8)
    assert result["collected"] == [0, 0, 5]
    short = copy.deepcopy(data)
    short["hands"][0] = short["hands"][0][:4]
    short["stock"] = [*short["stock"], hands[0][4]]
    assert "5 cards" in unreadable(short)


def test_exports_of_live_hands_adjudicate_to_their_results() -> None:
    rng = random.Random(11)
    rules = Ruleset.from_spec("classic", {"first_lead": "previous_first_out"})
    table = Table.open(GAME, rules, 4)
    for chair in range(4):
        table.join(chair, f"p{chair}")
    for _ in range(2):
        hand = table.start_hand(seed=rng.randbytes(32))
        while not hand.is_over:
            seat = hand.turn
            assert seat is not None
            plays = hand.legal_plays(seat)
            if hand.top is not None and (not plays or rng.random() < 0.5):
                hand.pass_turn(seat)
            else:
                hand.play(seat, list(rng.choice(plays).cards))
        exported = export_transcript(hand)
        assert exported["first_leader"] == hand.first_leader
        assert exported["ruleset"] == {"preset": "classic",
                                       "options": {"first_lead": "previous_first_out"}}
        assert_adjudication_reproduces(hand)
        table.record_hand(hand)


def test_under_previous_first_out_the_named_first_leader_stands_whoever_holds_the_lead_card(
) -> None:
    data = classic_transcript()
    dealer = 3  # a transcript without "dealer": the last seat dealt
    holder = first_leader(Ruleset.from_spec("classic"), data["deck"], 4, dealer, None)
    other = (holder + 1) % 4
    data["ruleset"] = {"preset": "classic", "options": {"first_lead": "previous_first_out"}}
    data.update(first_leader=other, actions=[])
    result = adjudicate(data)
    assert result["status"] == "in_progress"
    assert unreadable({**data, "ruleset": {"preset": "classic"}}).startswith(
        f'"first_leader" {other} contradicts the deal')


def test_exports_of_unfinished_hands_adjudicate_as_in_progress() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    run(hand, CLASSIC_SCRIPT.splitlines()[1])
    exported = export_transcript(hand)
    assert "first_leader" not in exported
    assert exported["actions"] == hand.actions
    assert assert_adjudication_reproduces(hand)["status"] == "in_progress"
