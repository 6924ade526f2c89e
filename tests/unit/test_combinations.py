"""Classifying (docs/rules.md#combinations) and comparing plays (who beats what), per preset."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from fiftyk_referee.domain.cards import parse_cards
from fiftyk_referee.domain.errors import InvalidCombination, Reason
from fiftyk_referee.domain.fiftyk.combinations import (
    BOMB,
    FIFTY_K,
    NORMAL,
    PURE_FIFTY_K,
    RUNG_BIG_JOKER_PAIR,
    RUNG_BOMB_3,
    RUNG_BOMB_4,
    RUNG_BOMB_5,
    RUNG_BOMB_6,
    RUNG_BOMB_7,
    RUNG_BOMB_8,
    RUNG_DOUBLE_FIFTY_K,
    RUNG_FIFTY_K,
    RUNG_JOKER_PAIR_MIXED,
    RUNG_JOKER_QUAD,
    RUNG_JOKER_TRIPLE,
    RUNG_PURE_DOUBLE_FIFTY_K,
    RUNG_PURE_FIFTY_K,
    RUNG_SMALL_JOKER_PAIR,
    Combination,
    beats,
    classify,
)
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset

Opts = dict[str, Any]
NO: Opts = {}
INVALID = None


def rules(preset: str, options: Opts | None = None) -> Ruleset:
    """A ruleset for a preset plus overrides."""
    return Ruleset.from_spec(preset, options or {})


def combo(preset: str, cards: str, options: Opts | None = None) -> Combination:
    """Classify a card string under a preset."""
    return classify(parse_cards(cards), rules(preset, options))


# -- classification --------------------------------------------------------------------------

# (preset, options, cards, expected type or INVALID). Every preset, every type it has, and
# the types it must refuse.
CLASSIFY: list[tuple[str, Opts, str, str | None]] = [
    # classic: two packs, jokers, joker rungs
    ("classic", NO, "3S", "single"),
    ("classic", NO, "BJ", "single"),
    ("classic", NO, "SJ", "single"),
    ("classic", NO, "2S 2S", "pair"),
    ("classic", NO, "7H 7D", "pair"),
    ("classic", NO, "QS QH QC", "triple"),
    ("classic", NO, "3S 4H 5C 6D 7S", "straight"),
    ("classic", NO, "10S JH QC KD AS", "straight"),
    ("classic", NO, "3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS", "straight"),
    ("classic", NO, "3S 3H 4S 4H 5C 5D", "pair_straight"),
    ("classic", NO, "QS QH KS KH AS AH", "pair_straight"),
    ("classic", NO, "3S 3H 3C 4S 4H 4C 5S 5H 5C", "triple_straight"),
    ("classic", NO, "5S 10H KC", "fifty_k"),
    ("classic", NO, "5H 10H KH", "pure_fifty_k"),
    ("classic", NO, "3S 3H 3C 3D", "bomb"),
    ("classic", NO, "3S 3S 3H 3H 3C 3C 3D 3D", "bomb"),
    ("classic", NO, "SJ BJ", "joker_pair_mixed"),
    ("classic", NO, "SJ SJ", "small_joker_pair"),
    ("classic", NO, "BJ BJ", "big_joker_pair"),
    ("classic", NO, "SJ SJ BJ", "joker_triple"),
    ("classic", NO, "SJ BJ BJ", "joker_triple"),
    ("classic", NO, "SJ SJ BJ BJ", "joker_quad"),
    ("classic", NO, "3S 4H", INVALID),
    ("classic", NO, "3S 4S 5S 6S", INVALID),  # shorter than min_straight
    ("classic", NO, "JS QS KS AS 2S", INVALID),  # 2 never connects under ace_high
    ("classic", NO, "AS 2S 3S 4S 5S", INVALID),
    ("classic", NO, "2S 3S 4S 5S 6S", INVALID),
    ("classic", NO, "QS KS AS 2S 3S", INVALID),
    ("classic", NO, "KS AS 2S 3S 4S", INVALID),
    ("classic", NO, "3S 3H 4S 4H", INVALID),  # two pairs: below min_pair_straight
    ("classic", NO, "AS AH 2S 2H 3S 3H", INVALID),
    ("classic", NO, "3S 3H 3C 4S 4H 4C", INVALID),  # two triples: below min_triple_straight
    ("classic", NO, "3S 3H 3C 4S", INVALID),  # kickers are off
    ("classic", NO, "3S 3H 3C 4S 4H", INVALID),
    ("classic", NO, "3S 3H 3C 3D 4S 5S", INVALID),  # four_with_two is off
    ("classic", NO, "5S 5H 10S 10H KS KH", INVALID),  # double 50K is off
    ("classic", NO, "5S 10S", INVALID),
    ("classic", NO, "5S 10S KS KH", INVALID),
    ("classic", NO, "SJ 2S", INVALID),
    ("classic", NO, "QS KS AS SJ BJ", INVALID),  # jokers never in a sequence
    ("classic", NO, "3S 3H 3C SJ", INVALID),
    ("classic", NO, "3S 4S 5S 6S 8S", INVALID),
    ("classic", NO, "3S 3H 4S 4H 5S", INVALID),
    # jinzhou: triples are 3-bombs (炮)
    ("jinzhou", NO, "3S 3H 3C", "bomb"),
    ("jinzhou", NO, "2S 2H 2C 2D", "bomb"),
    ("jinzhou", NO, "3S 3H 3C 4S 4H 4C 5S 5H 5C", "triple_straight"),
    ("jinzhou", NO, "3S 3H 4S 4H 5C 5D", "pair_straight"),
    ("jinzhou", NO, "5S 10S KS", "pure_fifty_k"),
    ("jinzhou", NO, "SJ BJ", "joker_pair_mixed"),
    ("jinzhou", NO, "SJ SJ BJ BJ", "joker_quad"),
    ("jinzhou", NO, "3S 3H 3C 4S", INVALID),
    # fuzhou: 104 cards, no jokers, ordinary bombs
    ("fuzhou", NO, "9S 9H 9C 9D 9S", "bomb"),
    ("fuzhou", NO, "9S 9H 9C", "triple"),
    ("fuzhou", NO, "3S 4H 5C 6D 7S 8S", "straight"),
    ("fuzhou", NO, "5D 10D KD", "pure_fifty_k"),
    # jiaodong: one pack, three_high, mixed joker pair, kickers, four + two
    ("jiaodong", NO, "3S", "single"),
    ("jiaodong", NO, "SJ BJ", "pair"),
    ("jiaodong", NO, "3S 3H", "pair"),
    ("jiaodong", NO, "4S 5H 6C 7D 8S", "straight"),
    ("jiaodong", NO, "10S JH QC KD AS", "straight"),
    ("jiaodong", NO, "3S 4H 5C 6D 7S", INVALID),  # three_high: 3 never in a sequence
    ("jiaodong", NO, "JS QS KS AS 2S", INVALID),
    ("jiaodong", NO, "KS AS 2S 3S 4S", INVALID),
    ("jiaodong", NO, "3S 3H 4S 4H 5S 5H", INVALID),
    ("jiaodong", NO, "4S 4H 5S 5H 6S 6H", "pair_straight"),
    ("jiaodong", NO, "3S 3H 3C 4S 4H 4C 5S 5H 5C", INVALID),
    ("jiaodong", NO, "4S 4H 4C 5S 5H 5C 6S 6H 6C", "triple_straight"),
    ("jiaodong", NO, "9S 9H 9C 4D", "triple_with_single"),
    ("jiaodong", NO, "9S 9H 9C BJ", "triple_with_single"),
    ("jiaodong", NO, "9S 9H 9C 4D 4S", "triple_with_pair"),
    ("jiaodong", NO, "9S 9H 9C SJ BJ", INVALID),  # the mixed joker pair is no kicker pair
    ("jiaodong", NO, "9S 9H 9C 4D 5S", INVALID),
    ("jiaodong", NO, "4S 4H 4C 5S 5H 5C 6S 6H 6C 7S 8S 9S", "triple_straight_with_singles"),
    ("jiaodong", NO, "4S 4H 4C 5S 5H 5C 6S 6H 6C 3S SJ BJ", "triple_straight_with_singles"),
    ("jiaodong", NO, "4S 4H 4C 5S 5H 5C 6S 6H 6C 7S 7H 8S 8H 9S 9H",
     "triple_straight_with_pairs"),
    # two triples are no plane where triple straights need three (min_triple_straight)
    ("jiaodong", NO, "4S 4H 4C 5S 5H 5C 9S JS", INVALID),
    ("jiaodong", NO, "4S 4H 4C 5S 5H 5C 9S 9H JS JH", INVALID),
    # kicker ranks must differ from each other and from the triples
    ("jiaodong", NO, "4S 4H 4C 5S 5H 5C 6S 6H 6C 7S 7H 8S", INVALID),
    ("jiaodong", NO, "4S 4H 4C 5S 5H 5C 6S 6H 6C 4D 7S 8S", INVALID),
    ("jiaodong", NO, "4S 4H 4C 5S 5H 5C 6S 6H 6C 7S 7H 7C 7D 8S 8H", INVALID),
    ("jiaodong", NO, "4S 4H 4C 5S 5H 5C 6S 6H 6C 8S 8H 8C", INVALID),
    ("jiaodong", NO, "3S 3H 3C 3D 5S 6S", "four_with_two"),
    ("jiaodong", NO, "3S 3H 3C 3D 5S 5H", "four_with_two"),
    ("jiaodong", NO, "3S 3H 3C 3D SJ BJ", "four_with_two"),
    ("jiaodong", NO, "3S 3H 3C 3D 5S", INVALID),
    ("jiaodong", NO, "3S 3H 3C 3D 5S 6S 7S", INVALID),
    ("jiaodong", NO, "3S 3H 3C 3D", "bomb"),
    ("jiaodong", NO, "5C 10D KS", "fifty_k"),
    ("jiaodong", NO, "5C 10C KC", "pure_fifty_k"),
    ("jiaodong", {"joker_pair_mixed": False}, "SJ BJ", INVALID),
    # QQ: no jokers, groups from 2, kickers, suit-ranked pure 50Ks
    ("qq4", NO, "3S 3H 4S 4H", "pair_straight"),
    ("qq4", NO, "3S 3H 3C 4S 4H 4C", "triple_straight"),
    ("qq4", NO, "3S 3H 3C 4S 4H 4C 9S JS", "triple_straight_with_singles"),
    ("qq4", NO, "3S 3H 3C 4S 4H 4C 9S 9H JS JH", "triple_straight_with_pairs"),
    ("qq4", NO, "3S 3H 3C 4S 4H 4C 9S 9H", INVALID),
    ("qq4", NO, "KS KH KC AS AH AC 9S 9H JS JH", "triple_straight_with_pairs"),
    ("qq4", NO, "AS AH AC 2S 2H 2C", INVALID),
    ("qq4", NO, "AS AH 2S 2H", INVALID),
    ("qq4", NO, "3S 3H 3C 3D 4S 5S", INVALID),  # four_with_two is off
    ("qq4", NO, "JS QS KS AS 2S", INVALID),
    ("qq3", NO, "8S 8H 8C 8D", "bomb"),
    ("qq3", NO, "8S 8H 8C 2D", "triple_with_single"),
    ("qq3", NO, "5S 10S KS", "pure_fifty_k"),
    # five/six-card: no sequences, no kickers, jokers are singles
    ("five_card", NO, "3S 4S 5S 6S 7S", INVALID),
    ("five_card", NO, "3S 3H 4S 4H 5S 5H", INVALID),
    ("five_card", NO, "3S 3H 3C 4S", INVALID),
    ("five_card", NO, "SJ BJ", INVALID),
    ("five_card", NO, "3S 3H 3C", "triple"),
    ("five_card", NO, "3S 3H 3C 3D", "bomb"),
    ("five_card", NO, "5S 10H KD", "fifty_k"),
    ("five_card", NO, "BJ", "single"),
    ("six_card", NO, "4S 5S 6S 7S 8S 9S", INVALID),
    ("six_card", NO, "2S 2H", "pair"),
    ("six_card", NO, "5S 10S KS", "pure_fifty_k"),
    ("six_card", NO, "5S 5S 10S 10S KS KS", INVALID),
    # two-pack six-card: identical jokers are pairs, double 50Ks exist
    ("six_card_two_packs", NO, "SJ SJ", "pair"),
    ("six_card_two_packs", NO, "BJ BJ", "pair"),
    ("six_card_two_packs", NO, "SJ BJ", INVALID),
    ("six_card_two_packs", NO, "SJ SJ BJ", INVALID),
    ("six_card_two_packs", NO, "SJ SJ BJ BJ", INVALID),
    ("six_card_two_packs", NO, "3S 3S 3H 3H 3C 3C 3D 3D", "bomb"),
    ("six_card_two_packs", NO, "5S 5H 10S 10H KS KH", "double_fifty_k"),
    ("six_card_two_packs", NO, "5S 5S 10S 10S KS KS", "pure_double_fifty_k"),
    ("six_card_two_packs", NO, "5S 5S 10S 10S KS KH", "double_fifty_k"),
    ("six_card_two_packs", NO, "5S 5S 10S 10S KS", INVALID),
    ("six_card_two_packs", NO, "5S 10S KS", "pure_fifty_k"),
    ("six_card_two_packs", {"sequences": True, "kickers": True}, "3S 3H 3C SJ SJ",
     "triple_with_pair"),
    # option variants
    ("classic", {"kickers": True}, "3S 3H 3C SJ SJ", INVALID),  # SJ SJ is a joker rung here
    ("classic", {"kickers": True}, "3S 3H 3C SJ", "triple_with_single"),
    ("classic", {"kickers": True}, "3S 3H 3C 3D 3S", "bomb"),
    ("classic", {"four_with_two": True}, "3S 3H 3C 3D SJ SJ", "four_with_two"),
    ("classic", {"four_with_two": True}, "3S 3H 3C 3D 3S 3H", "bomb"),
    ("classic", {"double_fifty_k": True}, "5S 5H 10S 10H KS KH", "double_fifty_k"),
    ("classic", {"min_straight": 3}, "3S 4H 5C", "straight"),
    ("classic", {"min_pair_straight": 2}, "3S 3H 4S 4H", "pair_straight"),
    ("classic", {"min_triple_straight": 2}, "3S 3H 3C 4S 4H 4C", "triple_straight"),
    ("classic", {"sequences": False}, "3S 4H 5C 6D 7S", INVALID),
    ("classic", {"sequence_order": "ace_two_low"}, "AS 2S 3S 4S 5S", "straight"),
    ("classic", {"sequence_order": "ace_two_low"}, "2S 3S 4S 5S 6S", "straight"),
    ("classic", {"sequence_order": "ace_two_low"}, "10S JS QS KS AS", "straight"),
    ("classic", {"sequence_order": "ace_two_low"}, "QS KS AS 2S 3S", INVALID),
    ("classic", {"sequence_order": "ace_two_low"}, "KS AS 2S 3S 4S", INVALID),
    ("classic", {"sequence_order": "ace_two_low"}, "JS QS KS AS 2S", INVALID),
    ("classic", {"sequence_order": "ace_two_low"}, "AS 3S 4S 5S 6S", INVALID),
    ("classic", {"sequence_order": "ace_two_low"},
     "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS", "straight"),
    ("classic", {"sequence_order": "ace_two_low"}, "AS AH 2S 2H 3S 3H", "pair_straight"),
    ("classic", {"sequence_order": "ace_two_low"}, "KS KH AS AH 2S 2H", INVALID),
    ("classic", {"sequence_order": "ace_two_low"}, "AS AH AC 2S 2H 2C 3S 3H 3C",
     "triple_straight"),
    ("classic", {"sequence_order": "ace_two_low", "min_straight": 3}, "AS 2S 3S", "straight"),
    ("classic", {"sequence_order": "ace_two_low", "min_straight": 3}, "KS AS 2S", INVALID),
    ("qq4", {"sequence_order": "ace_two_low"}, "AS AH 2S 2H", "pair_straight"),
    ("classic", {"sequence_order": "ace_two_low_singles_only"}, "AS 2S 3S 4S 5S", "straight"),
    ("classic", {"sequence_order": "ace_two_low_singles_only"}, "2S 3S 4S 5S 6S", "straight"),
    ("classic", {"sequence_order": "ace_two_low_singles_only"}, "10S JS QS KS AS",
     "straight"),
    ("classic", {"sequence_order": "ace_two_low_singles_only"}, "AS AH 2S 2H 3S 3H", INVALID),
    ("classic", {"sequence_order": "ace_two_low_singles_only"}, "2S 2H 3S 3H 4S 4H", INVALID),
    ("classic", {"sequence_order": "ace_two_low_singles_only"}, "QS QH KS KH AS AH", INVALID),
    ("classic", {"sequence_order": "ace_two_low_singles_only"}, "JS JH QS QH KS KH",
     "pair_straight"),
    ("classic", {"sequence_order": "ace_two_low_singles_only"},
     "QS QH QC KS KH KC AS AH AC", INVALID),
    ("classic", {"sequence_order": "ace_two_low_singles_only"},
     "AS AH AC 2S 2H 2C 3S 3H 3C", INVALID),
    ("qq4", {"sequence_order": "ace_two_low_singles_only"},
     "KS KH KC AS AH AC 9S 9H JS JH", INVALID),
]


@pytest.mark.parametrize(("preset", "options", "cards", "expected"), CLASSIFY,
                         ids=[f"{p}-{o}-{c}" for p, o, c, _ in CLASSIFY])
def test_cards_classify_to_the_expected_type(
    preset: str, options: Opts, cards: str, expected: str | None
) -> None:
    ruleset = rules(preset, options)
    if expected is INVALID:
        with pytest.raises(InvalidCombination) as refused:
            classify(parse_cards(cards), ruleset)
        assert refused.value.reason is Reason.INVALID_COMBINATION
    else:
        result = classify(parse_cards(cards), ruleset)
        assert result.type == expected
        assert result.size == len(parse_cards(cards))


def test_every_type_code_of_section_3_is_classified_somewhere() -> None:
    seen = {expected for *_, expected in CLASSIFY if expected}
    assert seen == {
        "single", "pair", "triple", "straight", "pair_straight", "triple_straight",
        "triple_with_single", "triple_with_pair", "triple_straight_with_singles",
        "triple_straight_with_pairs", "four_with_two", "fifty_k", "pure_fifty_k", "bomb",
        "joker_pair_mixed", "small_joker_pair", "big_joker_pair", "joker_triple", "joker_quad",
        "double_fifty_k", "pure_double_fifty_k",
    }


def test_every_preset_has_classification_cases() -> None:
    assert {preset for preset, *_ in CLASSIFY} == set(PRESETS)


def test_empty_play_is_not_a_combination() -> None:
    with pytest.raises(InvalidCombination) as refused:
        classify([], rules("classic"))
    assert refused.value.message == "a play needs at least one card"


def test_cards_that_form_nothing_are_refused_naming_them_and_the_preset() -> None:
    with pytest.raises(InvalidCombination) as refused:
        classify(parse_cards("4H 3S"), rules("classic"))
    assert refused.value.message == "3S 4H is not a combination of preset 'classic'"


def test_classification_is_canonical_whatever_the_order_of_the_cards() -> None:
    a = combo("classic", "7S 3H 5C 4D 6S")
    b = combo("classic", "3H 4D 5C 6S 7S")
    assert a == b
    assert a.card_strings() == ["3H", "4D", "5C", "6S", "7S"]
    assert str(a) == "straight(3H 4D 5C 6S 7S)"


def test_three_cards_that_are_a_pure_fifty_k_read_as_the_stronger_reading() -> None:
    result = combo("classic", "KH 5H 10H", {"min_straight": 3})
    assert (result.type, result.rung) == (PURE_FIFTY_K, RUNG_PURE_FIFTY_K)


@pytest.mark.parametrize(
    ("preset", "cards", "plain", "with_joker_points"),
    [("classic", "5S 10H KC", 25, 25), ("jiaodong", "SJ BJ", 0, 20),
     ("classic", "KS KH KC KD", 40, 40), ("classic", "3S", 0, 0)],
)
def test_combination_points_are_its_cards_points(
    preset: str, cards: str, plain: int, with_joker_points: int
) -> None:
    result = combo(preset, cards)
    assert result.points() == plain
    assert result.points(joker_points=True) == with_joker_points


# -- rank keys: sequences compare by their top card in the order they use ----------------------


@pytest.mark.parametrize(
    ("options", "lower", "higher"),
    [
        ({"sequence_order": "ace_two_low"}, "AS 2S 3S 4S 5S", "2S 3S 4S 5S 6S"),
        ({"sequence_order": "ace_two_low"}, "2S 3S 4S 5S 6S", "3S 4S 5S 6S 7S"),
        ({"sequence_order": "ace_two_low"}, "9S 10S JS QS KS", "10S JS QS KS AS"),
        ({"sequence_order": "ace_two_low_singles_only"}, "AS 2S 3S 4S 5S", "2S 3S 4S 5S 6S"),
        ({"sequence_order": "ace_two_low_singles_only"}, "2D 3S 4S 5S 6S", "3S 4S 5S 6S 7S"),
        ({"sequence_order": "ace_two_low"}, "AS AH 2S 2H 3S 3H", "2S 2H 3S 3H 4S 4H"),
        ({"sequence_order": "ace_two_low"}, "2S 2H 3S 3H 4S 4H", "3S 3H 4S 4H 5S 5H"),
        ({"sequence_order": "ace_two_low"}, "AS AH AC 2S 2H 2C 3S 3H 3C",
         "2S 2H 2C 3S 3H 3C 4S 4H 4C"),
        (NO, "9S 10S JS QS KS", "10S JS QS KS AS"),
        (NO, "3S 4S 5S 6S 7S", "4H 5H 6H 7H 8H"),
        (NO, "JS JH QS QH KS KH", "QS QH KS KH AS AH"),
    ],
)
def test_higher_sequence_beats_lower_one_of_the_same_length(
    options: Opts, lower: str, higher: str
) -> None:
    ruleset = rules("classic", options)
    low, high = classify(parse_cards(lower), ruleset), classify(parse_cards(higher), ruleset)
    assert beats(high, low, ruleset)
    assert not beats(low, high, ruleset)


def test_a_2_3_4_5_is_the_lowest_straight_of_five_under_ace_two_low() -> None:
    ruleset = rules("classic", {"sequence_order": "ace_two_low"})
    lowest = classify(parse_cards("AS 2S 3S 4S 5S"), ruleset)
    for start in range(3, 11):
        ranks = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"][start - 3:start + 2]
        other = classify(parse_cards(" ".join(r + "H" for r in ranks)), ruleset)
        assert beats(other, lowest, ruleset)


# -- who beats what among normal types ---------------------------------------------------------

# (preset, options, play, top, play beats top?)
BEATS: list[tuple[str, Opts, str, str, bool]] = [
    ("classic", NO, "4S", "3S", True),
    ("classic", NO, "3S", "3H", False),  # equal is not higher
    ("classic", NO, "2S", "AS", True),
    ("classic", NO, "SJ", "2S", True),
    ("classic", NO, "BJ", "SJ", True),
    ("classic", NO, "SJ", "BJ", False),
    ("classic", NO, "AS AH", "KS KH", True),
    ("classic", NO, "AS AH", "KS", False),  # different type
    ("classic", NO, "AS", "KS KH", False),
    ("classic", NO, "4S 4H 4C", "3S 3H 3C", True),
    ("classic", NO, "4S 5S 6S 7S 8S", "3S 4S 5S 6S 7S", True),
    ("classic", NO, "4S 5S 6S 7S 8S 9S", "3S 4S 5S 6S 7S", False),  # different size
    ("classic", NO, "3S 4S 5S 6S 7S", "4S 5S 6S 7S 8S", False),
    ("classic", NO, "4S 4H 5S 5H 6S 6H", "3S 3H 4S 4H 5S 5H", True),
    ("classic", NO, "4S 4H 5S 5H 6S 6H 7S 7H", "3S 3H 4S 4H 5S 5H", False),
    ("classic", NO, "4S 4H 4C 5S 5H 5C 6S 6H 6C", "3S 3H 3C 4S 4H 4C 5S 5H 5C", True),
    ("jiaodong", NO, "3S", "2S", True),  # three_high
    ("jiaodong", NO, "SJ", "3S", True),
    ("jiaodong", NO, "3S 3H", "2S 2H", True),
    ("jiaodong", NO, "SJ BJ", "3S 3H", True),  # the mixed joker pair is the top pair
    ("jiaodong", NO, "3S 3H 3C 4S", "2S 2H 2C AS", True),
    ("jiaodong", NO, "10S JS QS KS AS", "4S 5S 6S 7S 8S", True),
    ("jiaodong", NO, "4S 4H 4C 3S", "3S 3H 3C AS", False),
    ("jiaodong", NO, "4S 4H 4C 3S", "AS AH AC KS", False),
    ("jiaodong", NO, "AS AH AC 3S", "KS KH KC 2S", True),  # kicker types by the triple rank
    ("jiaodong", NO, "AS AH AC 3S 3H", "KS KH KC 2S 2H", True),
    ("jiaodong", NO, "AS AH AC 3S", "KS KH KC 2S 2H", False),
    ("qq4", NO, "5S 5H 5C 6S 6H 6C 3S 4S", "4S 4H 4C 5S 5H 5C 2S AH", True),
    ("qq4", NO, "4S 4H 4C 5S 5H 5C 2S AH", "5S 5H 5C 6S 6H 6C 3S 4S", False),
    ("qq4", NO, "5S 5H 5C 6S 6H 6C 3S 3H 4S 4H", "4S 4H 4C 5S 5H 5C 2S 2H AS AH", True),
    ("qq4", NO, "5S 5H 5C 6S 6H 6C 3S 3H 4S 4H", "4S 4H 4C 5S 5H 5C 2S AH", False),
    ("qq4", NO, "6S 6H 6C 7S 7H 7C 3S 4S", "3S 3H 3C 4S 4H 4C 5S 5H 5C 2S AH KD", False),
    ("jiaodong", NO, "6S 6H 6C 7S 7H 7C 8S 8H 8C 3S 4S 5S",
     "5S 5H 5C 6S 6H 6C 7S 7H 7C 2S AH KD", True),
    ("jiaodong", NO, "4S 4H 4C 4D 3S 5S", "3S 3H 3C 3D 2S 2H", False),  # 3 is high
    ("jiaodong", NO, "3S 3H 3C 3D 4S 5S", "2S 2H 2C 2D AS AH", True),
    ("jiaodong", NO, "3S 3H 3C 3D 4S 5S", "2S 2H 2C 2D", False),  # a bomb is no four+two
    ("six_card_two_packs", NO, "SJ SJ", "2S 2H", True),
    ("six_card_two_packs", NO, "BJ BJ", "SJ SJ", True),
    ("six_card_two_packs", NO, "2S 2H", "SJ SJ", False),
    ("qq4", NO, "4S 4H 5S 5H", "3S 3H 4S 4H", True),
    ("qq4", NO, "4S 4H 5S 5H", "3S 3H 4S 4H 5S 5H", False),
    ("five_card", NO, "BJ", "SJ", True),
    ("five_card", NO, "2S 2H 2C", "AS AH AC", True),
]


@pytest.mark.parametrize(("preset", "options", "play", "top", "expected"), BEATS,
                         ids=[f"{p}-{a}-over-{b}" for p, _, a, b, _ in BEATS])
def test_normal_play_beats_top_only_with_same_type_size_and_higher_rank(
    preset: str, options: Opts, play: str, top: str, expected: bool
) -> None:
    ruleset = rules(preset, options)
    assert beats(combo(preset, play, options), combo(preset, top, options), ruleset) is expected


# -- the bomb-class ladders ----------------------------------------------------------------------

# Each ladder lowest rung first, with the rung each play must get. Bombs use ranks that fall
# as the rung rises, so only the rung can explain a win.
FULL_DEAL_LADDER = [
    ("5S 10H KC", RUNG_FIFTY_K),
    ("SJ BJ", RUNG_JOKER_PAIR_MIXED),
    ("5S 10S KS", RUNG_PURE_FIFTY_K),
    ("SJ SJ", RUNG_SMALL_JOKER_PAIR),
    ("BJ BJ", RUNG_BIG_JOKER_PAIR),
    ("2S 2H 2C 2D", RUNG_BOMB_4),
    ("AS AH AC AD AS", RUNG_BOMB_5),
    ("SJ SJ BJ", RUNG_JOKER_TRIPLE),
    ("KS KH KC KD KS KH", RUNG_BOMB_6),
    ("QS QH QC QD QS QH QC", RUNG_BOMB_7),
    ("SJ SJ BJ BJ", RUNG_JOKER_QUAD),
    ("3S 3H 3C 3D 3S 3H 3C 3D", RUNG_BOMB_8),
]
NO_JOKER_LADDER = [
    ("5S 10H KC", RUNG_FIFTY_K),
    ("5S 10S KS", RUNG_PURE_FIFTY_K),
    ("2S 2H 2C 2D", RUNG_BOMB_4),
    ("AS AH AC AD AS", RUNG_BOMB_5),
    ("KS KH KC KD KS KH", RUNG_BOMB_6),
    ("QS QH QC QD QS QH QC", RUNG_BOMB_7),
    ("3S 3H 3C 3D 3S 3H 3C 3D", RUNG_BOMB_8),
]
ONE_PACK_LADDER = [
    ("5S 10H KC", RUNG_FIFTY_K),
    ("5S 10S KS", RUNG_PURE_FIFTY_K),
    ("3S 3H 3C 3D", RUNG_BOMB_4),
]
TWO_PACK_STOCK_LADDER = [
    ("5S 10H KC", RUNG_FIFTY_K),
    ("5S 10S KS", RUNG_PURE_FIFTY_K),
    ("2S 2H 2C 2D", RUNG_BOMB_4),
    ("AS AH AC AD AS", RUNG_BOMB_5),
    ("5S 5H 10S 10H KS KH", RUNG_DOUBLE_FIFTY_K),
    ("5S 5S 10S 10S KS KS", RUNG_PURE_DOUBLE_FIFTY_K),
    ("KS KH KC KD KS KH", RUNG_BOMB_6),
    ("QS QH QC QD QS QH QC", RUNG_BOMB_7),
    ("3S 3H 3C 3D 3S 3H 3C 3D", RUNG_BOMB_8),
]
LADDERS: list[tuple[str, Opts, list[tuple[str, int]]]] = [
    ("classic", NO, FULL_DEAL_LADDER),
    ("jinzhou", NO, [("2S 2H 2C", RUNG_BOMB_3), *FULL_DEAL_LADDER]),
    ("fuzhou", NO, NO_JOKER_LADDER),
    ("classic", {"jokers": False, "joker_bombs": False}, NO_JOKER_LADDER),
    ("jiaodong", NO, ONE_PACK_LADDER),
    ("qq4", NO, ONE_PACK_LADDER),
    ("qq3", NO, ONE_PACK_LADDER),
    ("five_card", NO, ONE_PACK_LADDER),
    ("six_card", NO, ONE_PACK_LADDER),
    ("six_card_two_packs", NO, TWO_PACK_STOCK_LADDER),
]


@pytest.mark.parametrize(("preset", "options", "ladder"), LADDERS,
                         ids=[f"{p}-{o}" for p, o, _ in LADDERS])
def test_ladder_rungs_are_assigned_and_a_higher_rung_beats_every_lower_rung(
    preset: str, options: Opts, ladder: list[tuple[str, int]]
) -> None:
    ruleset = rules(preset, options)
    plays = [classify(parse_cards(cards), ruleset) for cards, _ in ladder]
    assert [p.rung for p in plays] == [rung for _, rung in ladder]
    for (i, high), (j, low) in itertools.permutations(enumerate(plays), 2):
        assert beats(high, low, ruleset) is (i > j), (str(high), str(low))


def test_every_ladder_rung_is_exercised() -> None:
    rungs = {rung for _, _, ladder in LADDERS for _, rung in ladder}
    assert rungs == {
        RUNG_BOMB_3, RUNG_FIFTY_K, RUNG_JOKER_PAIR_MIXED, RUNG_PURE_FIFTY_K,
        RUNG_SMALL_JOKER_PAIR, RUNG_BIG_JOKER_PAIR, RUNG_BOMB_4, RUNG_BOMB_5,
        RUNG_DOUBLE_FIFTY_K, RUNG_PURE_DOUBLE_FIFTY_K, RUNG_JOKER_TRIPLE, RUNG_BOMB_6,
        RUNG_BOMB_7, RUNG_JOKER_QUAD, RUNG_BOMB_8,
    }
    assert {p for p, _, _ in LADDERS} == set(PRESETS)


def test_normal_types_have_no_rung() -> None:
    assert combo("classic", "3S 3H 3C").rung == NORMAL
    assert not combo("classic", "3S 3H 3C").is_bomb_class
    assert combo("jinzhou", "3S 3H 3C").is_bomb_class


# (preset, options, play, top, play beats top?) on the same rung
SAME_RUNG: list[tuple[str, Opts, str, str, bool]] = [
    ("classic", NO, "4S 4H 4C 4D", "3S 3H 3C 3D", True),
    ("classic", NO, "3S 3H 3C 3D", "4S 4H 4C 4D", False),
    ("classic", NO, "3S 3H 3C 3D", "3S 3H 3C 3D", False),
    ("classic", NO, "2S 2H 2C 2D 2S", "AS AH AC AD AS", True),
    ("jinzhou", NO, "4S 4H 4C", "3S 3H 3C", True),
    ("jiaodong", NO, "3S 3H 3C 3D", "2S 2H 2C 2D", True),  # three_high bombs
    ("classic", NO, "5S 10H KC", "5H 10D KS", False),  # impure 50Ks never beat each other
    ("classic", NO, "5S 10S KS", "5D 10D KD", False),  # pure 50Ks: no suit order in classic
    ("classic", NO, "5D 10D KD", "5S 10S KS", False),
    ("jinzhou", NO, "5S 10S KS", "5H 10H KH", True),  # 黑红花片
    ("jinzhou", NO, "5H 10H KH", "5C 10C KC", True),
    ("jinzhou", NO, "5C 10C KC", "5D 10D KD", True),
    ("jinzhou", NO, "5D 10D KD", "5S 10S KS", False),
    ("jinzhou", NO, "5S 10S KS", "5S 10S KS", False),
    ("qq4", NO, "5S 10S KS", "5D 10D KD", True),
    ("qq3", NO, "5H 10H KH", "5S 10S KS", False),
    ("six_card_two_packs", NO, "5S 5S 10S 10S KS KS", "5D 5D 10D 10D KD KD", False),
    ("six_card_two_packs", {"pure_fifty_k_suit_order": True}, "5S 5S 10S 10S KS KS",
     "5D 5D 10D 10D KD KD", True),
    ("six_card_two_packs", NO, "5S 5H 10S 10H KS KH", "5C 5D 10C 10D KC KD", False),
    ("classic", NO, "SJ BJ BJ", "SJ SJ BJ", False),  # joker combos of one rung never
    ("classic", NO, "SJ SJ BJ", "SJ BJ BJ", False),
]


@pytest.mark.parametrize(("preset", "options", "play", "top", "expected"), SAME_RUNG,
                         ids=[f"{p}-{a}-over-{b}" for p, _, a, b, _ in SAME_RUNG])
def test_on_the_same_rung_bombs_compare_by_rank_and_fifty_ks_by_suit_order_only(
    preset: str, options: Opts, play: str, top: str, expected: bool
) -> None:
    ruleset = rules(preset, options)
    assert beats(combo(preset, play, options), combo(preset, top, options), ruleset) is expected


# -- bomb class against normal types, standard and jinzhou reach -------------------------------

NORMAL_TOPS = {
    "single": "BJ",
    "pair": "2S 2H",
    "straight": "10S JS QS KS AS",
    "pair_straight": "QS QH KS KH AS AH",
    "triple_straight": "QS QH QC KS KH KC AS AH AC",
    "long_triple_straight": "3S 3H 3C 4S 4H 4C 5S 5H 5C 6S 6H 6C 7S 7H 7C",
}


@pytest.mark.parametrize("top", sorted(NORMAL_TOPS))
@pytest.mark.parametrize("bomb", [cards for cards, _ in FULL_DEAL_LADDER])
def test_every_bomb_class_play_beats_every_normal_play_under_standard_reach(
    top: str, bomb: str
) -> None:
    ruleset = rules("classic")
    assert beats(combo("classic", bomb), combo("classic", NORMAL_TOPS[top]), ruleset)
    assert not beats(combo("classic", NORMAL_TOPS[top]), combo("classic", bomb), ruleset)


@pytest.mark.parametrize(
    ("preset", "top", "play"),
    [("jiaodong", "3S 3H 3C 3D 4S 5S", "4S 4H 4C 4D"),
     ("jiaodong", "3S 3H 3C 4S 4H", "5S 10H KC"),
     ("qq4", "3S 3H 3C 4S 4H 4C 9S 9H JS JH", "5S 10H KC"),
     ("qq4", "3S 3H 3C", "5S 10H KC"),
     ("six_card_two_packs", "SJ SJ", "5S 10H KC"),
     ("jiaodong", "SJ BJ", "5S 10H KC")],
)
def test_bomb_class_beats_kicker_types_four_with_two_triples_and_joker_pairs(
    preset: str, top: str, play: str
) -> None:
    ruleset = rules(preset)
    assert beats(combo(preset, play), combo(preset, top), ruleset)


JINZHOU_PLAYS = [
    ("2S 2H 2C", RUNG_BOMB_3),
    *FULL_DEAL_LADDER,
]


def jinzhou_reaches(rung: int, top: str) -> bool:
    """docs/rules.md#who-beats-what: what each rung may beat under bomb_reach=jinzhou."""
    if top == "pair_straight":
        return rung >= RUNG_BOMB_4
    if top in ("triple_straight", "long_triple_straight"):
        return rung >= RUNG_BOMB_6
    return True


@pytest.mark.parametrize("top", sorted(NORMAL_TOPS))
@pytest.mark.parametrize(("bomb", "rung"), JINZHOU_PLAYS)
def test_jinzhou_reach_limits_which_rungs_beat_pair_and_triple_straights(
    top: str, bomb: str, rung: int
) -> None:
    ruleset = rules("jinzhou")
    play = combo("jinzhou", bomb)
    assert play.rung == rung
    assert beats(play, combo("jinzhou", NORMAL_TOPS[top]), ruleset) is jinzhou_reaches(rung,
                                                                                         top)


def test_three_bomb_beats_a_pair_straight_only_without_jinzhou_reach() -> None:
    jinzhou = rules("jinzhou")
    standard = rules("jinzhou", {"bomb_reach": "standard"})
    three_bomb, pair_straight = "3S 3H 3C", "3S 3H 4S 4H 5S 5H"
    assert not beats(combo("jinzhou", three_bomb), combo("jinzhou", pair_straight), jinzhou)
    assert beats(classify(parse_cards(three_bomb), standard),
                 classify(parse_cards(pair_straight), standard), standard)


def test_under_jinzhou_reach_with_four_bombs_triples_are_beaten_by_any_bomb() -> None:
    options = {"min_bomb": 4}
    ruleset = rules("jinzhou", options)
    assert beats(combo("jinzhou", "5S 10H KC", options), combo("jinzhou", "2S 2H 2C", options),
                 ruleset)


def test_a_normal_play_never_beats_a_bomb_class_play() -> None:
    ruleset = rules("classic")
    assert not beats(combo("classic", "BJ"), combo("classic", "5S 10H KC"), ruleset)
    assert not beats(combo("classic", "QS QH QC KS KH KC AS AH AC"),
                     combo("classic", "5S 10H KC"), ruleset)


def test_bomb_types_are_reported_with_size_and_rank() -> None:
    five = combo("classic", "9S 9H 9C 9D 9S")
    assert (five.type, five.size, five.rung) == (BOMB, 5, RUNG_BOMB_5)
    assert combo("classic", "5S 10H KC").type == FIFTY_K
