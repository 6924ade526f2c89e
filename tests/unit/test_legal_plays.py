"""Legal plays and `beats`: examples plus hypothesis properties against brute force."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fiftyk_referee.domain.cards import (
    ACE,
    BIG_JOKER,
    FIVE,
    KING,
    SMALL_JOKER,
    TEN,
    THREE,
    TWO,
    Card,
    make_deck,
    parse_cards,
)
from fiftyk_referee.domain.errors import InvalidCombination
from fiftyk_referee.domain.fiftyk import GAME as FIFTYK
from fiftyk_referee.domain.fiftyk.combinations import (
    DOUBLE_FIFTY_K,
    FIFTY_K,
    PURE_DOUBLE_FIFTY_K,
    PURE_FIFTY_K,
    TRIPLE_STRAIGHT_WITH_PAIRS,
    TRIPLE_STRAIGHT_WITH_SINGLES,
    Combination,
    beats,
    classify,
)
from fiftyk_referee.domain.fiftyk.events import HandDealt
from fiftyk_referee.domain.fiftyk.legal import can_beat, iter_legal_plays, legal_plays
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.domain.observer import SeatViewer

Opts = dict[str, Any]

# Every preset, plus option variants that change what combinations exist or how they compare.
VARIANTS: list[tuple[str, Opts]] = [
    *((preset, {}) for preset in sorted(PRESETS)),
    ("classic", {"sequence_order": "ace_two_low", "min_straight": 3}),
    ("classic", {"sequence_order": "ace_two_low_singles_only", "min_pair_straight": 2,
                 "min_triple_straight": 2}),
    ("classic", {"kickers": True, "four_with_two": True, "min_triple_straight": 2}),
    ("classic", {"bomb_reach": "jinzhou", "double_fifty_k": True,
                 "pure_fifty_k_suit_order": True}),
    ("jinzhou", {"min_straight": 3, "min_pair_straight": 2}),
    ("jiaodong", {"min_straight": 3, "min_triple_straight": 2}),
    ("qq4", {"sequence_order": "ace_two_low"}),
    ("fuzhou", {"sequence_order": "ace_two_low", "min_triple_straight": 2}),
    ("six_card_two_packs", {"sequences": True, "kickers": True, "min_straight": 3,
                            "min_pair_straight": 2, "min_triple_straight": 2}),
    ("six_card", {"sequences": True, "four_with_two": True, "min_straight": 3}),
]
VARIANT_IDS = [f"{p}{'-' + str(o) if o else ''}" for p, o in VARIANTS]

# Ranks along the line where sequences live (A and 2 at both ends), then the jokers.
RANK_LINE = (ACE, TWO, *range(THREE, KING + 1), ACE, TWO, SMALL_JOKER, BIG_JOKER)
ALL_RANKS = tuple(range(THREE, BIG_JOKER + 1))

BRUTE_FORCE_HAND = 9
PROPERTY = settings(max_examples=100, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def ruleset_of(preset: str, options: Opts) -> Ruleset:
    """A ruleset for a variant."""
    return Ruleset.from_spec(preset, options)


# -- the "distinct" equivalence and brute force ------------------------------------------------


def play_key(play: Combination, ruleset: Ruleset) -> Hashable:
    """Plays with equal keys are the same play (the issue's "distinct" equivalence).

    Suits matter only for 50Ks: pure and impure are different plays, and each suit's pure
    50K is its own play when pure_fifty_k_suit_order ranks them.
    """
    if play.type in (FIFTY_K, DOUBLE_FIFTY_K):
        return (play.type,)
    if play.type in (PURE_FIFTY_K, PURE_DOUBLE_FIFTY_K):
        return (play.type, play.cards[0].suit if ruleset.pure_fifty_k_suit_order else None)
    return (play.type, tuple(sorted(card.rank for card in play.cards)))


def sub_multisets(hand: Sequence[Card]) -> Iterator[list[Card]]:
    """Every non-empty sub-multiset of a hand."""
    counts = list(Counter(hand).items())
    for choice in itertools.product(*(range(n + 1) for _, n in counts)):
        cards = [card for (card, _), k in zip(counts, choice, strict=True) for _ in range(k)]
        if cards:
            yield cards


def brute_force_plays(
    hand: Sequence[Card], top: Combination | None, ruleset: Ruleset
) -> set[Hashable]:
    """Keys of every combination the hand's cards form that beats `top` (any when None)."""
    keys: set[Hashable] = set()
    for cards in sub_multisets(hand):
        try:
            play = classify(cards, ruleset)
        except InvalidCombination:
            continue
        if top is None or beats(play, top, ruleset):
            keys.add(play_key(play, ruleset))
    return keys


# -- strategies --------------------------------------------------------------------------------


@st.composite
def hands(draw: st.DrawFn, ruleset: Ruleset, max_size: int) -> list[Card]:
    """A hand from the ruleset's deck, usually crowded into a few ranks so combos appear."""
    deck = make_deck(ruleset.packs, jokers=ruleset.jokers)
    shape = draw(st.sampled_from(["window", "few", "fifty_k", "any"]))
    if shape == "window":
        start = draw(st.integers(0, len(RANK_LINE) - 2))
        width = draw(st.integers(1, 5))
        ranks = set(RANK_LINE[start:start + width])
    elif shape == "few":
        ranks = draw(st.sets(st.sampled_from(ALL_RANKS), min_size=1, max_size=3))
    elif shape == "fifty_k":
        ranks = {FIVE, TEN, KING, draw(st.sampled_from(ALL_RANKS))}
    else:
        ranks = set(ALL_RANKS)
    pool = [card for card in deck if card.rank in ranks] or deck
    indices = draw(st.lists(st.integers(0, len(pool) - 1), unique=True, min_size=1,
                            max_size=min(max_size, len(pool))))
    return [pool[i] for i in indices]


@st.composite
def tops(draw: st.DrawFn, ruleset: Ruleset) -> Combination | None:
    """None (leading) or any play some other hand could lead."""
    if draw(st.integers(0, 3)) == 0:
        return None
    other = draw(hands(ruleset, 12))
    return draw(st.sampled_from(legal_plays(other, None, ruleset)))


@st.composite
def situations(
    draw: st.DrawFn, variant: tuple[str, Opts], max_size: int
) -> tuple[Ruleset, list[Card], Combination | None]:
    """A ruleset, a hand and the trick's top play."""
    ruleset = ruleset_of(*variant)
    return ruleset, draw(hands(ruleset, max_size)), draw(tops(ruleset))


# -- properties ----------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
@PROPERTY
@given(data=st.data())
def test_legal_plays_equal_brute_force_enumeration_on_small_hands(
    variant: tuple[str, Opts], data: st.DataObject
) -> None:
    ruleset, hand, top = data.draw(situations(variant, BRUTE_FORCE_HAND))
    plays = legal_plays(hand, top, ruleset)
    keys = [play_key(play, ruleset) for play in plays]
    assert len(keys) == len(set(keys)), "a play is listed twice"
    assert set(keys) == brute_force_plays(hand, top, ruleset)
    if top is not None:
        assert can_beat(hand, top, ruleset) is bool(plays)


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
@PROPERTY
@given(data=st.data())
def test_every_legal_play_uses_hand_cards_classifies_to_itself_and_beats_the_top(
    variant: tuple[str, Opts], data: st.DataObject
) -> None:
    ruleset, hand, top = data.draw(situations(variant, 27))
    in_hand = Counter(hand)
    plays = list(iter_legal_plays(hand, top, ruleset))
    for play in plays:
        assert not Counter(play.cards) - in_hand
        assert classify(list(play.cards), ruleset) == play
        if top is not None:
            assert beats(play, top, ruleset)
    if top is not None:
        assert can_beat(hand, top, ruleset) is bool(plays)


def beats_matrix(plays: list[Combination], ruleset: Ruleset) -> list[int]:
    """Row i is a bitset of the plays that play i beats."""
    rows = []
    for play in plays:
        row = 0
        for j, other in enumerate(plays):
            if beats(play, other, ruleset):
                row |= 1 << j
        rows.append(row)
    return rows


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_beats_is_irreflexive_asymmetric_and_transitive(
    variant: tuple[str, Opts], data: st.DataObject
) -> None:
    ruleset = ruleset_of(*variant)
    plays: dict[Hashable, Combination] = {}
    for _ in range(3):
        for play in legal_plays(data.draw(hands(ruleset, 10)), None, ruleset):
            plays.setdefault(play_key(play, ruleset), play)
    listed = list(plays.values())
    rows = beats_matrix(listed, ruleset)
    for i, row in enumerate(rows):
        assert not row >> i & 1, f"{listed[i]} beats itself"
        for j in range(len(listed)):
            if row >> j & 1:
                assert not rows[j] >> i & 1, f"{listed[i]} and {listed[j]} beat each other"
                assert rows[j] & ~row == 0, f"{listed[i]} > {listed[j]} is not transitive"


# -- examples ------------------------------------------------------------------------------------


def names(plays: list[Combination]) -> list[str]:
    """Plays as `type(cards)` strings."""
    return [str(play) for play in plays]


def test_leading_lists_one_play_per_shape_and_both_fifty_k_kinds() -> None:
    ruleset = ruleset_of("classic", {})
    plays = legal_plays(parse_cards("5S 5H 10S KS"), None, ruleset)
    assert sorted(names(plays)) == sorted([
        "single(5S)", "single(10S)", "single(KS)", "pair(5S 5H)",
        "fifty_k(5H 10S KS)", "pure_fifty_k(5S 10S KS)",
    ])


def test_each_suits_pure_fifty_k_is_its_own_play_when_suits_rank_them() -> None:
    hand = parse_cards("5S 10S KS 5D 10D KD")
    ordered = legal_plays(hand, None, ruleset_of("jinzhou", {}))
    unordered = legal_plays(hand, None, ruleset_of("classic", {}))
    assert [p for p in names(ordered) if p.startswith("pure")] == [
        "pure_fifty_k(5S 10S KS)", "pure_fifty_k(5D 10D KD)"]
    assert [p for p in names(unordered) if p.startswith("pure")] == ["pure_fifty_k(5S 10S KS)"]
    assert names(ordered).count("fifty_k(5S 10S KD)") == 1


def test_following_a_single_two_needs_a_joker_or_a_bomb_class_play() -> None:
    ruleset = ruleset_of("classic", {})
    top = classify(parse_cards("2S"), ruleset)
    hand = parse_cards("3S 3H 3C 3D AS AH SJ 5S 10S KD")
    assert sorted(names(legal_plays(hand, top, ruleset))) == sorted([
        "single(SJ)", "bomb(3S 3H 3C 3D)", "fifty_k(5S 10S KD)"])


def test_following_a_pair_straight_lists_same_length_higher_ones_and_bombs() -> None:
    ruleset = ruleset_of("classic", {})
    top = classify(parse_cards("5S 5H 6S 6H 7S 7H"), ruleset)
    hand = parse_cards("6C 6D 7C 7D 8S 8H 9S 9H 4S 4H 4C 4D")
    assert sorted(names(legal_plays(hand, top, ruleset))) == sorted([
        "pair_straight(6C 6D 7C 7D 8S 8H)", "pair_straight(7C 7D 8S 8H 9S 9H)",
        "bomb(4S 4H 4C 4D)"])


def test_under_jinzhou_a_three_bomb_cannot_follow_a_pair_straight_but_a_four_bomb_can() -> None:
    ruleset = ruleset_of("jinzhou", {})
    top = classify(parse_cards("5S 5H 6S 6H 7S 7H"), ruleset)
    hand = parse_cards("9S 9H 9C 9D 5D 10D KC")
    assert names(legal_plays(hand, top, ruleset)) == ["bomb(9S 9H 9C 9D)"]
    assert not can_beat(parse_cards("9S 9H 9C 5D 10D KC"), top, ruleset)


def test_following_a_bomb_lists_only_higher_bomb_class_plays() -> None:
    ruleset = ruleset_of("classic", {})
    top = classify(parse_cards("9S 9H 9C 9D"), ruleset)
    hand = parse_cards("8S 8H 8C 8D 8S JS JH JC JD SJ SJ 5S 10S KS")
    assert sorted(names(legal_plays(hand, top, ruleset))) == sorted([
        "bomb(8S 8S 8H 8C 8D)", "bomb(JS JH JC JD)"])


def test_can_beat_is_false_when_nothing_beats() -> None:
    ruleset = ruleset_of("qq4", {})
    top = classify(parse_cards("2S 2H"), ruleset)
    assert not can_beat(parse_cards("AS AH KS KH 3C"), top, ruleset)
    assert legal_plays(parse_cards("AS AH KS KH 3C"), top, ruleset) == []


@pytest.mark.parametrize(
    ("preset", "hand", "expected"),
    [
        ("classic", "SJ BJ", ["single(SJ)", "single(BJ)", "joker_pair_mixed(SJ BJ)"]),
        ("jiaodong", "SJ BJ", ["single(SJ)", "single(BJ)", "pair(SJ BJ)"]),
        ("five_card", "SJ BJ", ["single(SJ)", "single(BJ)"]),
        ("six_card_two_packs", "SJ SJ BJ", ["single(SJ)", "single(BJ)", "pair(SJ SJ)"]),
        ("classic", "SJ SJ BJ", ["single(SJ)", "single(BJ)", "joker_pair_mixed(SJ BJ)",
                                 "small_joker_pair(SJ SJ)", "joker_triple(SJ SJ BJ)"]),
    ],
)
def test_joker_plays_depend_on_one_pack_or_two_pack_games(
    preset: str, hand: str, expected: list[str]
) -> None:
    ruleset = ruleset_of(preset, {})
    assert sorted(names(legal_plays(parse_cards(hand), None, ruleset))) == sorted(expected)


def test_ace_two_low_hand_finds_both_low_straights_but_not_the_wrapping_one() -> None:
    ruleset = ruleset_of("classic", {"sequence_order": "ace_two_low"})
    hand = parse_cards("QS KS AS 2S 3S 4S 5S 6S")
    straights = [p for p in names(legal_plays(hand, None, ruleset)) if p.startswith("straight")]
    assert sorted(straights) == sorted([
        "straight(3S 4S 5S AS 2S)", "straight(3S 4S 5S 6S 2S)",
        "straight(3S 4S 5S 6S AS 2S)"])


def test_three_high_keeps_threes_out_of_straights_in_legal_plays() -> None:
    ruleset = ruleset_of("jiaodong", {})
    hand = parse_cards("3S 4S 5S 6S 7S 8S")
    straights = [p for p in names(legal_plays(hand, None, ruleset)) if p.startswith("straight")]
    assert straights == ["straight(4S 5S 6S 7S 8S)"]


def test_a_fiftyk_answer_lists_every_legal_play_and_needs_no_constraint_records() -> None:
    rules = FIFTYK.rules("classic")
    hand = FIFTYK.deal(table_id="t", number=1, rules=rules, players=4, dealer=0,
                       seat_players=[None] * 4, carry={}, deck=None, seed=b"s" * 32)
    seat = hand.to_act
    assert seat is not None
    answer = hand.legal_actions(seat)
    assert len(answer.plays) > 1 and not answer.truncated
    assert answer.requirements == () and answer.constraints == ()
    assert hand.legal_actions(seat, 1).truncated


def test_following_a_plane_with_pairs_lists_only_same_length_planes_with_pairs() -> None:
    qq4 = Ruleset.from_spec("qq4", {})
    top = classify(parse_cards("3S 3H 3C 4S 4H 4C 5S 5H 6S 6H"), qq4)
    assert top.type == TRIPLE_STRAIGHT_WITH_PAIRS
    # 777 888 999 and pairs of 10, J, Q: two-triple planes with two pairs beat it; the
    # three-triple plane (15 cards) is another size.
    hand = parse_cards("7S 7H 7C 8S 8H 8C 9S 9H 9C 10S 10H JS JH QS QH")
    plays = legal_plays(hand, top, qq4)
    assert plays, "a higher plane with pairs must be listed"
    assert {(p.type, len(p.cards)) for p in plays} == {(TRIPLE_STRAIGHT_WITH_PAIRS, 10)}
    assert can_beat(hand, top, qq4)


def test_following_a_plane_with_singles_lists_only_same_length_planes() -> None:
    qq4 = Ruleset.from_spec("qq4", {})
    top = classify(parse_cards("3S 3H 3C 4S 4H 4C 5S 6S"), qq4)
    assert top.type == TRIPLE_STRAIGHT_WITH_SINGLES
    hand = parse_cards("7S 7H 7C 8S 8H 8C 9S 9H 9C 10S JS QS")
    plays = legal_plays(hand, top, qq4)
    assert plays
    assert {(p.type, len(p.cards)) for p in plays} == {(TRIPLE_STRAIGHT_WITH_SINGLES, 8)}


# -- following: equal is not higher, and low sequences rank by their low-order top ---------------


def test_an_a_2_3_4_5_does_not_follow_an_a_2_3_4_5_under_ace_two_low() -> None:
    ruleset = ruleset_of("classic", {"sequence_order": "ace_two_low"})
    top = classify(parse_cards("AS 2S 3S 4S 5S"), ruleset)
    hand = parse_cards("AH 2H 3H 4H 5H 6H")
    assert names(legal_plays(hand, top, ruleset)) == ["straight(3H 4H 5H 6H 2H)"]


def test_a_a_2_2_is_the_lowest_pair_straight_of_two_pairs_under_ace_two_low() -> None:
    ruleset = ruleset_of("qq4", {"sequence_order": "ace_two_low"})
    top = classify(parse_cards("3S 3H 4S 4H"), ruleset)
    hand = parse_cards("AS AH 2S 2H")
    assert legal_plays(hand, top, ruleset) == []
    assert not can_beat(hand, top, ruleset)
    low = classify(hand, ruleset)
    assert beats(top, low, ruleset) and not beats(low, top, ruleset)


def test_a_low_pair_straight_is_listed_with_its_cards_in_canonical_order() -> None:
    ruleset = ruleset_of("classic", {"sequence_order": "ace_two_low"})
    hand = parse_cards("AS AH 2S 2H 3S 3H")
    pair_straights = [p for p in legal_plays(hand, None, ruleset) if p.type == "pair_straight"]
    assert names(pair_straights) == ["pair_straight(3S 3H AS AH 2S 2H)"]
    assert pair_straights[0] == classify(hand, ruleset)


def test_a_plane_follows_a_plane_only_with_a_higher_top_triple() -> None:
    ruleset = ruleset_of("classic", {"kickers": True, "min_triple_straight": 2})
    top = classify(parse_cards("3S 3H 3C 4S 4H 4C 9S JS"), ruleset)
    # 333 444 ties the top (not higher); 444 555, found after it, beats it.
    hand = parse_cards("3S 3H 3D 4S 4H 4D 5S 5H 5D 9H")
    assert names(legal_plays(hand, top, ruleset)) == [
        "triple_straight_with_singles(3S 4S 4H 4D 5S 5H 5D 9H)"]


def test_four_with_two_follows_only_with_a_higher_four() -> None:
    ruleset = ruleset_of("classic", {"four_with_two": True})
    top = classify(parse_cards("3S 3H 3C 3D 5S 6S"), ruleset)
    hand = parse_cards("3S 3H 3C 3D 7S 8S")
    assert names(legal_plays(hand, top, ruleset)) == ["bomb(3S 3H 3C 3D)"]


def test_a_double_fifty_k_and_a_pure_double_fifty_k_follow_a_four_bomb() -> None:
    ruleset = ruleset_of("six_card_two_packs", {})
    top = classify(parse_cards("2S 2H 2C 2D"), ruleset)
    hand = parse_cards("5S 5S 5H 10S 10S KS KS")
    assert sorted(names(legal_plays(hand, top, ruleset))) == [
        "double_fifty_k(5S 5H 10S 10S KS KS)", "pure_double_fifty_k(5S 5S 10S 10S KS KS)"]


def test_an_empty_hand_has_no_legal_plays() -> None:
    # A seat of a 5/6-card game that waits to draw holds no cards.
    ruleset = ruleset_of("six_card", {})
    assert legal_plays([], None, ruleset) == []
    assert not can_beat([], classify(parse_cards("3S"), ruleset), ruleset)


def test_four_with_two_single_kickers_is_a_legal_play_under_jiaodong() -> None:
    ruleset = ruleset_of("jiaodong", {})  # 四带二 on: a four with two kickers of any ranks
    hand = parse_cards("7S 7H 7C 7D 9S JS")
    fours = [p for p in names(legal_plays(hand, None, ruleset)) if p.startswith("four_with")]
    assert fours == ["four_with_two(7S 7H 7C 7D 9S JS)"]
    top = classify(parse_cards("4S 4H 4C 4D 5S 6S"), ruleset)
    following = names(legal_plays(hand, top, ruleset))
    assert "four_with_two(7S 7H 7C 7D 9S JS)" in following


def test_four_with_two_lists_a_pair_kicker_and_every_two_single_kickers() -> None:
    ruleset = ruleset_of("jiaodong", {})
    hand = parse_cards("7S 7H 7C 7D 9S 9H JS")
    fours = [p for p in names(legal_plays(hand, None, ruleset)) if p.startswith("four_with")]
    assert sorted(fours) == sorted([
        "four_with_two(7S 7H 7C 7D 9S 9H)", "four_with_two(7S 7H 7C 7D 9S JS)"])


def test_ace_two_low_runs_reach_the_king() -> None:
    # The low order is A 2 3 … K: a straight from A or 2 may run up to the K.
    ruleset = ruleset_of("classic", {"sequence_order": "ace_two_low"})
    hand = parse_cards("AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS")
    straights = {p for p in names(legal_plays(hand, None, ruleset)) if p.startswith("straight")}
    assert "straight(3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S)" in straights  # A … K
    assert "straight(3S 4S 5S 6S 7S 8S 9S 10S JS QS KS 2S)" in straights  # 2 … K
    assert "straight(3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS)" in straights  # 3 … A, natural
    pairs = parse_cards("AS AH 2S 2H 3S 3H 4S 4H 5S 5H 6S 6H 7S 7H 8S 8H 9S 9H 10S 10H JS JH"
                        " QS QH KS KH")
    pair_runs = {p for p in names(legal_plays(pairs, None, ruleset))
                 if p.startswith("pair_straight") and "KS" in p and "2S" in p}
    assert len(pair_runs) == 2  # A A … K K and 2 2 … K K


def test_the_public_deal_event_names_its_table_and_dealer() -> None:
    rules = FIFTYK.rules("classic")
    hand = FIFTYK.deal(table_id="table-7", number=3, rules=rules, players=4, dealer=2,
                       seat_players=[None] * 4, carry={}, deck=None, seed=b"s" * 32)
    dealt = FIFTYK.public_event(hand.collect_events()[0], SeatViewer(1))
    assert isinstance(dealt, HandDealt)
    assert (dealt.table_id, dealt.hand_number, dealt.dealer) == ("table-7", 3, 2)
