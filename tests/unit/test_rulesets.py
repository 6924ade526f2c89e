"""Rulesets: options with defaults, the presets of docs/rules.md#presets, validation, JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from fiftyk_referee.domain.errors import InvalidRuleset, Reason, RuleError
from fiftyk_referee.domain.fiftyk import GAME as FIFTYK
from fiftyk_referee.domain.fiftyk.rulesets import (
    DEFAULTS,
    OPTION_SPECS,
    OPTIONS,
    PRESETS,
    Ruleset,
    describe_options,
)
from fiftyk_referee.domain.shengji import GAME as SHENGJI

ALL_PRESETS = sorted(PRESETS)

# docs/rules.md#presets, column by column: players, cards, smallest bomb, joker rungs.
PRESET_TABLE: dict[str, tuple[tuple[int, ...], int, int, bool]] = {
    "classic": ((4,), 108, 4, True),
    "jinzhou": ((4,), 108, 3, True),
    "fuzhou": ((4,), 104, 4, False),
    "jiaodong": ((4,), 54, 4, False),
    "qq4": ((4,), 52, 4, False),
    "qq3": ((3,), 52, 4, False),
    "five_card": ((2, 3, 4), 54, 4, False),
    "six_card": ((2, 3, 4), 54, 4, False),
    "six_card_two_packs": ((2, 3, 4, 5, 6), 108, 4, False),
}

# The fingerprints go into events and transcripts: they must never drift silently. When an
# option is added or a preset changes on purpose, update this table in the same commit.
GOLDEN_FINGERPRINT_PREFIXES = {
    "classic": "80e0dc1bdfc1",
    "jinzhou": "4492a0e3a08f",
    "fuzhou": "53968343738b",
    "jiaodong": "8e7039053e8c",
    "qq4": "dfa3354158fb",
    "qq3": "f5075dfbdf6f",
    "five_card": "862a184a92be",
    "six_card": "4447c0c28522",
    "six_card_two_packs": "a3a07d4f588d",
}


def refused(preset: str, options: dict[str, Any] | None = None) -> str:
    """The message of the InvalidRuleset raised for this spec."""
    with pytest.raises(InvalidRuleset) as error:
        Ruleset.from_spec(preset, options)
    assert error.value.reason is Reason.INVALID_RULESET
    return error.value.message


# -- presets ---------------------------------------------------------------------------------


def test_there_are_exactly_the_nine_presets_of_section_10() -> None:
    assert set(PRESETS) == set(PRESET_TABLE)


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_preset_matches_section_10_players_cards_and_bombs(preset: str) -> None:
    players, cards, min_bomb, joker_rungs = PRESET_TABLE[preset]
    ruleset = Ruleset.from_spec(preset)
    assert ruleset.player_counts() == players
    assert ruleset.deck_size == cards
    assert ruleset.min_bomb == min_bomb
    assert ruleset.joker_bombs is joker_rungs


def test_classic_is_the_defaults_with_leftover_to_winners() -> None:
    classic = Ruleset.from_spec("classic")
    assert classic.options() == {**DEFAULTS, "leftover": "to_winners"}
    assert (classic.double_catch, classic.single_catch, classic.final) == (100, 50, "raw")


def test_jinzhou_has_three_bombs_jinzhou_reach_suit_order_and_its_scoring() -> None:
    r = Ruleset.from_spec("jinzhou")
    assert (r.min_bomb, r.bomb_reach, r.pure_fifty_k_suit_order) == (3, "jinzhou", True)
    assert (r.double_catch, r.single_catch, r.leftover, r.final) == (50, 30, "deduct",
                                                                      "diff_tenth")


def test_fuzhou_is_104_cards_with_extra_bomb_bonus_and_void_leftover() -> None:
    r = Ruleset.from_spec("fuzhou")
    assert (r.packs, r.jokers, r.bomb_bonus, r.leftover) == (2, False, "extra", "void")


def test_jiaodong_turns_on_every_one_pack_extra_the_sources_mention() -> None:
    r = Ruleset.from_spec("jiaodong")
    assert (r.packs, r.jokers, r.joker_bombs) == (1, True, False)
    assert r.joker_points and r.three_high and r.joker_pair_mixed
    assert r.kickers and r.four_with_two
    assert (r.double_catch, r.single_catch, r.leftover) == (0, 0, "void")


@pytest.mark.parametrize("preset", ["qq4", "qq3"])
def test_qq_presets_have_kickers_groups_from_two_suit_order_and_no_2_in_sequences(
    preset: str,
) -> None:
    r = Ruleset.from_spec(preset)
    assert (r.packs, r.jokers, r.scoring) == (1, False, "qq")
    assert r.kickers and r.pure_fifty_k_suit_order
    assert (r.min_pair_straight, r.min_triple_straight) == (2, 2)
    assert r.sequence_order == "ace_high"
    assert r.teams is (preset == "qq4")


@pytest.mark.parametrize(
    ("preset", "hand_size", "packs"),
    [("five_card", 5, 1), ("six_card", 6, 1), ("six_card_two_packs", 6, 2)],
)
def test_stock_presets_have_no_sequences_no_kickers_and_a_hand_size(
    preset: str, hand_size: int, packs: int
) -> None:
    r = Ruleset.from_spec(preset)
    assert (r.hand_size, r.packs, r.scoring, r.teams) == (hand_size, packs, "stock", False)
    assert not (r.sequences or r.kickers or r.four_with_two or r.joker_bombs)
    assert r.double_fifty_k is (packs == 2)
    assert r.has_stock


@pytest.mark.parametrize("hand_size", [6, 8, 10])
def test_six_card_two_packs_allows_hand_sizes_6_8_10(hand_size: int) -> None:
    r = Ruleset.from_spec("six_card_two_packs", {"hand_size": hand_size})
    assert r.hand_size == hand_size
    assert r.player_counts() == (2, 3, 4, 5, 6)


# -- validation ------------------------------------------------------------------------------


def test_unknown_preset_is_refused_listing_the_presets() -> None:
    message = refused("shanghai")
    assert "'shanghai'" in message
    for name in PRESETS:
        assert name in message


def test_unknown_option_is_refused_listing_every_option() -> None:
    message = refused("classic", {"jokers_wild": True})
    assert "'jokers_wild'" in message
    for name in OPTION_SPECS:
        assert name in message


@pytest.mark.parametrize(
    ("option", "value", "allowed"),
    [
        ("teams", "yes", "true, false"),
        ("teams", 1, "true, false"),
        ("min_straight", "5", "an integer from 3 to 12"),
        ("min_straight", True, "an integer from 3 to 12"),
        ("min_straight", 5.0, "an integer from 3 to 12"),
        ("wind", 3, '"next", "partner"'),
        ("sequence_order", None, '"ace_high", "ace_two_low", "ace_two_low_singles_only"'),
        ("hands", "ten", "an integer from 1 to 10000, or null"),
        ("packs", "2", "1, 2"),
    ],
)
def test_wrong_type_is_refused_listing_what_is_allowed(
    option: str, value: Any, allowed: str
) -> None:
    message = refused("classic", {option: value})
    assert message.startswith(f"option {option}=")
    assert allowed in message


@pytest.mark.parametrize(
    ("preset", "option", "value", "allowed"),
    [
        ("classic", "min_straight", 2, "an integer from 3 to 12"),
        ("classic", "min_straight", 13, "an integer from 3 to 12"),
        ("classic", "min_pair_straight", 1, "an integer from 2 to 12"),
        ("classic", "min_triple_straight", 13, "an integer from 2 to 12"),
        ("classic", "announce_at", -1, "an integer from 0 to 54"),
        ("classic", "packs", 3, "1, 2"),
        ("classic", "min_bomb", 5, "3, 4"),
        ("classic", "double_catch", -10, "an integer from 0 to 100000"),
        ("classic", "turn_timeout", 86_401, "an integer from 0 to 86400"),
        ("six_card", "hand_size", 7, "null, 5, 6, 8, 10"),
        ("classic", "bomb_bonus", "triple", '"none", "multiplier", "extra"'),
        ("classic", "first_lead", "holder:2S", '"holder:3H", "holder:3S", "holder:AH"'),
        ("classic", "teams", None, "true, false"),
    ],
)
def test_value_out_of_range_is_refused_listing_what_is_allowed(
    preset: str, option: str, value: Any, allowed: str
) -> None:
    assert allowed in refused(preset, {option: value})


@pytest.mark.parametrize(
    ("preset", "options", "problem"),
    [
        ("classic", {"jokers": False}, "joker_points, joker_pair_mixed and joker_bombs need"
                                       " jokers=true"),
        ("fuzhou", {"joker_points": True}, "need jokers=true"),
        ("classic", {"packs": 1}, "joker_bombs needs packs=2 and a full deal"),
        ("six_card_two_packs", {"joker_bombs": True}, "joker_bombs needs packs=2 and a full"
                                                      " deal"),
        ("classic", {"joker_bombs": False, "joker_pair_mixed": True},
         "joker_pair_mixed needs packs=1"),
        ("six_card", {"double_fifty_k": True}, "double_fifty_k needs packs=2"),
        ("classic", {"hand_size": 6}, "scoring=stock goes with a hand_size"),
        ("five_card", {"hand_size": None}, "scoring=stock goes with a hand_size"),
        ("classic", {"teams": False}, "scoring=team needs teams=true"),
        ("five_card", {"teams": True}, "scoring=stock plays without teams"),
        ("five_card", {"leftover": "deduct"}, "scoring=stock allows leftover=void or"
                                              " to_winners"),
        ("qq3", {"wind": "partner"}, "wind=partner needs teams=true"),
        ("jinzhou", {"kickers": True}, "min_bomb=3 (triples are bombs) cannot be combined"
                                       " with kickers or four_with_two"),
        ("classic", {"min_bomb": 3, "four_with_two": True}, "min_bomb=3"),
        ("jiaodong", {"min_bomb": 3}, "min_bomb=3"),
        ("jiaodong", {"sequence_order": "ace_two_low"}, "three_high needs"
                                                        " sequence_order=ace_high"),
        ("classic", {"three_high": True, "sequence_order": "ace_two_low_singles_only"},
         "three_high needs sequence_order=ace_high"),
    ],
)
def test_inconsistent_combination_is_refused_saying_what_it_needs(
    preset: str, options: dict[str, Any], problem: str
) -> None:
    message = refused(preset, options)
    assert message.startswith("inconsistent options: ")
    assert problem in message


def test_every_inconsistency_is_reported_at_once() -> None:
    message = refused("qq3", {"wind": "partner", "jokers": True, "joker_pair_mixed": True,
                              "kickers": True, "min_bomb": 3})
    assert "wind=partner needs teams=true" in message
    assert "min_bomb=3" in message


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("classic", {"sequence_order": "ace_two_low", "min_straight": 3}),
        ("classic", {"kickers": True, "four_with_two": True, "double_fifty_k": True}),
        ("classic", {"bomb_reach": "jinzhou"}),
        ("jinzhou", {"pure_fifty_k_suit_order": False, "min_bomb": 4, "kickers": True}),
        ("jiaodong", {"three_high": False, "sequence_order": "ace_two_low_singles_only"}),
        ("six_card_two_packs", {"sequences": True, "kickers": True}),
        ("five_card", {"end": "last_standing", "leftover": "to_winners"}),
        ("qq4", {"wind": "partner", "announce_at": 3, "hand_counts": "announced"}),
        ("classic", {"hands": 8, "target_score": 1000, "turn_timeout": 30}),
    ],
)
def test_consistent_overrides_are_accepted(preset: str, options: dict[str, Any]) -> None:
    ruleset = Ruleset.from_spec(preset, options)
    for name, value in options.items():
        assert getattr(ruleset, name) == value


# -- command-line values ---------------------------------------------------------------------


def test_cli_values_are_typed_by_the_option_schema() -> None:
    r = Ruleset.from_cli("qq4", ["wind=partner", "min_straight=3", "announce_at=2"])
    assert (r.wind, r.min_straight, r.announce_at) == ("partner", 3, 2)
    r = Ruleset.from_cli("jiaodong", ["joker_pair_mixed=false", "kickers=FALSE"])
    assert (r.joker_pair_mixed, r.kickers) == (False, False)
    r = Ruleset.from_cli("classic", ["hands=none", "target_score=500"])
    assert (r.hands, r.target_score) == (None, 500)
    r = Ruleset.from_cli("six_card", ["hand_size=5"])
    assert r.hand_size == 5


@pytest.mark.parametrize(
    ("assignment", "fragment"),
    [
        ("wind", "must be written NAME=VALUE"),
        ("colour=red", "unknown option 'colour'"),
        ("kickers=maybe", "allowed: true, false"),
        ("min_straight=five", "an integer from 3 to 12"),
        ("wind=left", '"next", "partner"'),
        ("teams=none", "allowed: true, false"),
    ],
)
def test_unusable_cli_values_are_refused(assignment: str, fragment: str) -> None:
    with pytest.raises(InvalidRuleset) as error:
        Ruleset.from_cli("classic", [assignment])
    assert fragment in error.value.message


# -- JSON and fingerprint --------------------------------------------------------------------


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_preset_round_trips_through_plain_json(preset: str) -> None:
    ruleset = Ruleset.from_spec(preset)
    text = json.dumps(ruleset.to_json())
    again = Ruleset.from_json(json.loads(text))
    assert again == ruleset
    assert again.fingerprint == ruleset.fingerprint
    assert ruleset.to_json() == {"preset": preset, "options": {}}


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_overrides_round_trip_through_json_and_change_the_fingerprint(preset: str) -> None:
    overrides = {"announce_at": 2, "turn_timeout": 15, "hands": 3}
    ruleset = Ruleset.from_spec(preset, overrides)
    data = json.loads(json.dumps(ruleset.to_json()))
    assert data == {"preset": preset, "options": overrides}
    assert Ruleset.from_json(data) == ruleset
    assert ruleset.fingerprint != Ruleset.from_spec(preset).fingerprint


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_fingerprint_of_each_preset_is_pinned(preset: str) -> None:
    fingerprint = Ruleset.from_spec(preset).fingerprint
    assert len(fingerprint) == 64
    assert fingerprint.startswith(GOLDEN_FINGERPRINT_PREFIXES[preset])


def test_fingerprint_ignores_override_order_and_restating_preset_values() -> None:
    a = Ruleset.from_spec("classic", {"wind": "partner", "announce_at": 3})
    b = Ruleset.from_spec("classic", {"announce_at": 3, "wind": "partner"})
    c = Ruleset.from_spec("classic", {"announce_at": 3, "wind": "partner", "packs": 2})
    assert a.fingerprint == b.fingerprint == c.fingerprint
    assert c.to_json() == a.to_json()


def test_equal_options_reached_from_different_presets_have_equal_fingerprints() -> None:
    qq3 = Ruleset.from_spec("qq3")
    qq4_without_teams = Ruleset.from_spec("qq4", {"teams": False})
    assert qq3.fingerprint == qq4_without_teams.fingerprint


def test_every_preset_has_its_own_fingerprint() -> None:
    fingerprints = {Ruleset.from_spec(p).fingerprint for p in PRESETS}
    assert len(fingerprints) == len(PRESETS)


def test_fingerprint_is_the_same_in_another_process() -> None:
    code = (
        "from fiftyk_referee.domain.fiftyk.rulesets import Ruleset, PRESETS;"
        "print(' '.join(Ruleset.from_spec(p).fingerprint for p in sorted(PRESETS)))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    assert out == [Ruleset.from_spec(p).fingerprint for p in ALL_PRESETS]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ([], 'a ruleset is an object {"preset": NAME'),
        ({"options": {}}, 'a ruleset is an object {"preset": NAME'),
        ({"preset": "classic", "extra": 1}, "unknown ruleset field(s): extra"),
        ({"preset": "classic", "options": []}, "options must be an object"),
        ({"preset": "classic", "options": {"min_bomb": 2}}, "min_bomb=2 is not allowed"),
        ({"preset": 7}, "unknown preset 7"),
    ],
)
def test_bad_json_rulesets_are_refused(data: Any, fragment: str) -> None:
    with pytest.raises(InvalidRuleset) as error:
        Ruleset.from_json(data)
    assert fragment in error.value.message


@pytest.mark.parametrize("data", [[], {"options": {}}, "classic", None])
def test_a_ruleset_that_is_no_object_with_a_preset_is_told_the_shape(data: Any) -> None:
    with pytest.raises(InvalidRuleset) as error:
        Ruleset.from_json(data)
    assert error.value.message == 'a ruleset is an object {"preset": NAME, "options": {...}}'


# -- schema and seats ------------------------------------------------------------------------


def test_every_option_has_a_default_that_passes_its_own_check() -> None:
    for spec in OPTIONS:
        assert spec.check(spec.default) == spec.default
        assert DEFAULTS[spec.name] == spec.default


def test_preset_values_are_all_known_options() -> None:
    for values in PRESETS.values():
        assert set(values) <= set(OPTION_SPECS)


def test_describe_options_lists_every_option_with_default_and_allowed_values() -> None:
    described = describe_options()
    assert [d["name"] for d in described] == [s.name for s in OPTIONS]
    by_name = {d["name"]: d for d in described}
    assert by_name["wind"] == {"name": "wind", "default": "next",
                               "allowed": '"next", "partner"', "doc": by_name["wind"]["doc"]}
    json.dumps(described)  # plain data


@pytest.mark.parametrize(
    ("preset", "good", "bad"),
    [("classic", [4], [3, 5]), ("qq3", [3], [2, 4]), ("qq4", [4], [3]),
     ("five_card", [2, 3, 4], [1, 5]), ("six_card_two_packs", [2, 6], [1, 7])],
)
def test_check_players_accepts_only_the_allowed_seat_counts(
    preset: str, good: list[int], bad: list[int]
) -> None:
    ruleset = Ruleset.from_spec(preset)
    for n in good:
        assert ruleset.check_players(n) == n
    for n in [*bad, True, "4"]:
        with pytest.raises(InvalidRuleset) as error:
            ruleset.check_players(n)
        assert "allowed: " in error.value.message


def test_stock_seat_counts_shrink_when_the_hands_would_not_fit_the_deck() -> None:
    assert Ruleset.from_spec("five_card", {"hand_size": 10}).player_counts() == (2, 3, 4)
    assert Ruleset.from_spec("six_card_two_packs",
                             {"hand_size": 10, "jokers": False}).player_counts() == (
        2, 3, 4, 5, 6)


@pytest.mark.parametrize(("size", "allowed"), [(5, True), (6, True), (8, True), (10, True),
                                               (7, False), (9, False), (11, False)])
def test_a_stock_game_deals_only_the_hand_sizes_the_options_allow(size: int,
                                                                  allowed: bool) -> None:
    if allowed:
        assert Ruleset.from_spec("five_card", {"hand_size": size}).hand_size == size
    else:
        with pytest.raises(InvalidRuleset):
            Ruleset.from_spec("five_card", {"hand_size": size})


def test_the_fiftyk_game_refuses_another_games_ruleset_by_name() -> None:
    tractor = SHENGJI.rules("tractor")
    with pytest.raises(RuleError) as error:
        FIFTYK.deal(table_id="t", number=1, rules=tractor, players=4, dealer=0,
                    seat_players=[None] * 4, carry={}, deck=None, seed=b"s" * 32)
    assert error.value.reason == Reason.INVALID_RULESET
    assert error.value.message == "not a 五十K ruleset: 'tractor'"
