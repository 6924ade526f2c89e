"""斗地主's rulesets (presets, options, validation, JSON, fingerprints), its match and its
questions to the rules oracle."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from fiftyk_referee.domain.doudizhu.combinations import DEFAULT, DOUZERO
from fiftyk_referee.domain.doudizhu.game import GAME
from fiftyk_referee.domain.doudizhu.rulesets import (
    PRESETS,
    DoudizhuRules,
    describe_options,
)
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.fiftyk.game import OBSERVATIONS as FIFTYK_OBSERVATIONS
from fiftyk_referee.domain.game import Rules
from fiftyk_referee.domain.oracle import BadQuestion


def test_the_presets_bid_as_their_rooms_and_douzero_reads_combinations_as_douzero() -> None:
    classic, rob, douzero = (DoudizhuRules.from_spec(p) for p in ("classic", "rob", "douzero"))
    assert (classic.bidding, rob.bidding, douzero.bidding) == ("points", "rob", "points")
    assert classic.combos == DEFAULT and rob.combos == DEFAULT and douzero.combos == DOUZERO
    as_rules: Rules = classic  # mypy checks the protocol here
    assert as_rules.turn_timeout == 0 and set(GAME.presets) == set(PRESETS)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_json_round_trip_and_stable_fingerprint(preset: str) -> None:
    rules = DoudizhuRules.from_spec(preset, {"base_score": 5, "kickers_rocket": True})
    again = DoudizhuRules.from_json(json.loads(json.dumps(rules.to_json())))
    assert again == rules and again.fingerprint == rules.fingerprint
    assert rules.fingerprint != DoudizhuRules.from_spec(preset).fingerprint
    assert DoudizhuRules.from_json({"preset": preset}).to_json() == {"preset": preset,
                                                                      "options": {}}


def test_options_list_every_resolved_value_combination_choices_included() -> None:
    options = DoudizhuRules.from_spec("douzero").options()
    assert {spec["name"] for spec in describe_options()} == set(options)
    assert options["kickers_rocket"] is True and options["bidding"] == "points"
    assert DoudizhuRules.from_spec("douzero").overrides() == {}
    assert DoudizhuRules.from_cli("classic", ["hands=4", "spring=off"]).options()["hands"] == 4


@pytest.mark.parametrize("options", [
    {"bidding": "auction"}, {"base_score": 0}, {"multiplier_cap": -1}, {"hands": 0},
    {"turn_timeout": 86_401}, {"spring": 1}, {"kickers_rocket": "yes"}, {"nonsense": 1},
])
def test_bad_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(RuleError) as refused:
        DoudizhuRules.from_spec("classic", options)
    assert refused.value.reason == Reason.INVALID_RULESET


@pytest.mark.parametrize("spec", [
    {"preset": "landlord"}, {"options": {}}, {"preset": "classic", "extra": 1},
    {"preset": "classic", "options": [1]}, "classic",
])
def test_bad_ruleset_specs_are_refused(spec: Any) -> None:
    with pytest.raises(RuleError) as refused:
        DoudizhuRules.from_json(spec)
    assert refused.value.reason == Reason.INVALID_RULESET


@pytest.mark.parametrize("players", [2, 4, True, "3"])
def test_only_three_seats_play(players: Any) -> None:
    with pytest.raises(RuleError) as refused:
        DoudizhuRules.from_spec("classic").check_players(players)
    assert refused.value.reason == Reason.INVALID_RULESET


def test_every_seat_scores_for_itself_and_the_match_ends_after_its_hands() -> None:
    rules = DoudizhuRules.from_spec("classic", {"hands": 3})
    assert GAME.side_seats(rules, 3) == {"seat:0": (0,), "seat:1": (1,), "seat:2": (2,)}
    scores = {"seat:0": Decimal(4), "seat:1": Decimal(-2), "seat:2": Decimal(-2)}
    assert GAME.match_end(rules, 2, scores) is None
    assert GAME.match_end(rules, 3, scores) == "3 hands played"
    assert GAME.match_end(DoudizhuRules.from_spec("classic"), 10_000, scores) is None


def test_the_base_deck_is_one_pack_with_both_jokers() -> None:
    deck = GAME.base_deck(DoudizhuRules.from_spec("classic"))
    assert len(deck) == len(set(deck)) == 54 and deck[-2:] == ["SJ", "BJ"]


# -- the rules oracle ------------------------------------------------------------------------


def ask(kind: str, given: dict[str, Any], preset: str = "classic",
        options: dict[str, Any] | None = None) -> Any:
    return GAME.answer({"game": "doudizhu", "kind": kind, "preset": preset,
                        "options": options, "input": given})


def test_the_oracle_classifies_and_compares_plays() -> None:
    assert ask("classify", {"cards": ["3S", "3H", "3C", "4D"]})["type"] == "triple_single"
    assert ask("classify", {"cards": ["3S", "4H"]}) == {"type": "INVALID_COMBINATION"}
    assert ask("beats", {"top": ["SJ", "BJ"], "play": ["2S", "2H", "2C", "2D"]}) == {
        "beats": False}
    assert ask("beats", {"top": ["AS"], "play": ["2S", "2H", "2C", "2D"]}) == {"beats": True}
    assert ask("beats", {"top": ["AS"], "play": ["3S", "4H"]})["beats"] is False


def test_the_oracle_lists_legal_plays_for_a_lead_and_a_follow() -> None:
    lead = ask("legal_plays", {"hand": ["3S", "3H", "4S"], "top": []})
    assert {tuple(p["cards"]) for p in lead["plays"]} == {("3S",), ("4S",), ("3S", "3H")}
    assert lead["count"] == 3
    follow = ask("legal_plays", {"hand": ["3S", "3H", "4S"], "top": ["3D"]})
    assert [p["cards"] for p in follow["plays"]] == [["4S"]]


def test_the_oracle_scores_a_hand_from_its_facts() -> None:
    answer = ask("score", {"bid": 3, "robs": 0, "bombs": 1, "rockets": 1, "winner": "landlord",
                           "spring": True}, options={"base_score": 2})
    assert answer["multiplier"] == 24 and answer["scores"] == [96, -48, -48]
    answer = ask("score", {"bid": 1, "robs": 2, "bombs": 0, "rockets": 0, "winner": "farmers",
                           "spring": False}, preset="rob", options={"multiplier_cap": 2})
    assert (answer["uncapped_multiplier"], answer["multiplier"]) == (4, 2)
    assert answer["scores"] == [-4, 2, 2]


@pytest.mark.parametrize(("kind", "given"), [
    ("classify", {"cards": "3S"}),
    ("beats", {"top": ["3S"]}),
    ("score", {"bid": 4, "robs": 0, "bombs": 0, "rockets": 0, "winner": "landlord",
               "spring": False}),
    ("score", {"bid": 1, "robs": 0, "bombs": 0, "rockets": 2, "winner": "landlord",
               "spring": False}),
    ("score", {"bid": 1, "robs": 0, "bombs": 0, "rockets": 0, "winner": "nobody",
               "spring": False}),
    ("nonsense", {}),
])
def test_malformed_questions_are_refused(kind: str, given: dict[str, Any]) -> None:
    with pytest.raises(BadQuestion):
        ask(kind, given)


def test_cards_beyond_the_pack_or_a_top_that_is_no_play_are_refused() -> None:
    with pytest.raises(RuleError) as twice:
        ask("classify", {"cards": ["3S", "3S"]})
    assert twice.value.reason == Reason.CARD_NOT_IN_DECK
    with pytest.raises(RuleError) as no_play:
        ask("beats", {"top": ["3S", "4S"], "play": ["5S"]})
    assert no_play.value.reason == Reason.INVALID_COMBINATION


def test_the_counters_shared_with_fiftyk_are_described_as_fiftyk_describes_them() -> None:
    # The metrics keep one counter per name: two games describing it differently cannot be
    # hosted together (service/ops/metrics.py refuses).
    theirs = {spec.name: spec for spec in FIFTYK_OBSERVATIONS}
    shared = [spec for spec in GAME.observations if spec.name in theirs]
    assert {spec.name for spec in shared} == {"tricks", "bombs"}
    for spec in shared:
        assert (spec.help, spec.label) == (theirs[spec.name].help, theirs[spec.name].label)


def test_the_oracle_rules_on_cards_that_read_two_ways_as_the_table_does() -> None:
    """Under `douzero`, 666777888999 reads also as three triples with a neighbouring triple
    as wings, which beats the triples 3-5 with J Q K: the table accepts that play, and so
    must the oracle (it once read the play as a bare plane of four and said no)."""
    top = ["3S", "3H", "3C", "4S", "4H", "4C", "5S", "5H", "5C", "JD", "QD", "KD"]
    play = ["6S", "6H", "6C", "7S", "7H", "7C", "8S", "8H", "8C", "9S", "9H", "9C"]
    assert ask("beats", {"top": top, "play": play}, preset="douzero") == {"beats": True}
    assert ask("beats", {"top": top, "play": play}) == {"beats": False}
