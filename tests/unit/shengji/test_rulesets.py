"""Rulesets: options, the presets, validation, JSON round trip, fingerprints."""

from __future__ import annotations

import json

import pytest

from fiftyk_referee.domain.errors import InvalidRuleset, Reason
from fiftyk_referee.domain.game import Rules
from fiftyk_referee.domain.shengji.rulesets import PRESETS, ShengjiRules, describe_options

EXPECTED = {
    "shengji_one_pack": (1, 6, 20, 12, False, False, False),
    "tractor": (2, 8, 40, 25, True, False, False),
    "tractor_changzhu": (2, 8, 40, 25, True, True, False),
    "titanic": (3, 6, 60, 39, True, False, False),
    "tractor_qq": (2, 8, 40, 25, True, False, True),
    "shengji_io": (2, 8, 40, 25, True, False, False),
}


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_presets_resolve_as_the_rule_book_says(preset: str) -> None:
    rules = ShengjiRules.from_spec(preset)
    assert (rules.packs, rules.kitty_size, rules.band, rules.hand_size, rules.bury_points,
            rules.permanent_two, rules.qq_points) == EXPECTED[preset]
    as_rules: Rules = rules  # mypy checks the protocol here
    assert as_rules.preset == preset


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_json_round_trip_and_stable_fingerprint(preset: str) -> None:
    rules = ShengjiRules.from_spec(preset, {"start_level": "5", "throw_penalty": 10})
    again = ShengjiRules.from_json(json.loads(json.dumps(rules.to_json())))
    assert again == rules and again.fingerprint == rules.fingerprint
    assert rules.fingerprint != ShengjiRules.from_spec(preset).fingerprint


def test_by_packs_defaults_follow_the_final_pack_count() -> None:
    rules = ShengjiRules.from_spec("tractor", {"packs": 3})
    assert (rules.kitty_size, rules.band) == (6, 60)
    assert ShengjiRules.from_spec("tractor", {"packs": 3, "kitty_size": 10}).kitty_size == 10
    assert ShengjiRules.from_spec("tractor", {"packs": 1}).hand_size == 12


def test_an_explicit_null_by_packs_option_takes_the_pack_default() -> None:
    rules = ShengjiRules.from_spec("tractor", {"kitty_size": None, "band": None})
    assert (rules.kitty_size, rules.band) == (8, 40)
    rules = ShengjiRules.from_spec("titanic", {"kitty_size": None})
    assert rules.kitty_size == 6


@pytest.mark.parametrize("options", [
    {"packs": 4}, {"kitty_size": 7}, {"kitty_size": 13}, {"throw_penalty": 7},
    {"band": 42}, {"qq_double_at": 300, "qq_triple_at": 300}, {"start_level": "1"},
    {"declare_pacing": "never"}, {"kitty_cap": 128}, {"nonsense": 1}, {"bury_points": 1},
    {"packs": 1, "kitty_size": 10, "bury_points": False},
])
def test_bad_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(InvalidRuleset) as error:
        ShengjiRules.from_spec("tractor", options)
    assert error.value.reason == Reason.INVALID_RULESET


def test_unknown_preset_and_players() -> None:
    with pytest.raises(InvalidRuleset):
        ShengjiRules.from_spec("classic")
    rules = ShengjiRules.from_spec("tractor")
    assert rules.check_players(4) == 4
    with pytest.raises(InvalidRuleset):
        rules.check_players(3)


def test_every_option_is_described_with_its_default_and_allowed_values() -> None:
    described = {row["name"]: row for row in describe_options()}
    assert set(described) == set(ShengjiRules.from_spec("tractor").options())
    assert described["packs"]["allowed"] == "1, 2, 3"
    assert described["kitty_size"]["default"] is None  # by packs
