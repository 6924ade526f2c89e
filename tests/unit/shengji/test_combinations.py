"""Trump order and combinations: the seed's tractor and non-tractor lists."""

from __future__ import annotations

import pytest

from fiftyk_referee.domain.cards import parse_cards
from fiftyk_referee.domain.errors import InvalidCombination, Reason
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, TRUMP, trump_order
from fiftyk_referee.domain.shengji.combinations import (
    PAIR,
    SINGLE,
    THROW,
    TITANIC,
    TRACTOR,
    TRIPLE,
    classify,
    decompose,
    is_titanic,
    is_tractor,
)

TEN_HEARTS = trump_order(LEVEL_RANK["10"], "H", False)
TEN_HEARTS_CHANGZHU = trump_order(LEVEL_RANK["10"], "H", True)
FIVE_SPADES = trump_order(LEVEL_RANK["5"], "S", False)
FIVE_NO_TRUMP = trump_order(LEVEL_RANK["5"], None, False)


def strengths(text: str, order: object = TEN_HEARTS) -> list[int]:
    """Strengths of cards, in the order written."""
    assert hasattr(order, "strength")
    return [order.strength(c) for c in parse_cards(text)]


def test_seed_trump_order_level_ten_hearts() -> None:
    s = strengths("BJ SJ 10H 10S AH KH QH JH 9H 2H")
    assert s == sorted(s, reverse=True) and len(set(s)) == len(s)
    assert strengths("10S 10C 10D") == [TEN_HEARTS.strength(parse_cards("10S")[0])] * 3
    plain = strengths("AS KS QS JS 9S 2S")
    assert plain == sorted(plain, reverse=True)
    assert TEN_HEARTS.group(parse_cards("AS")[0]) == "S"
    assert TEN_HEARTS.group(parse_cards("10S")[0]) == TRUMP
    assert max(plain) < min(strengths("2H"))  # any trump beats any plain card


def test_seed_trump_order_with_permanent_two() -> None:
    s = strengths("BJ SJ 10H 10S 2H 2S AH 3H", TEN_HEARTS_CHANGZHU)
    assert s == sorted(s, reverse=True) and len(set(s)) == len(s)
    assert TEN_HEARTS_CHANGZHU.is_trump(parse_cards("2C")[0])
    plain = strengths("AS 3S", TEN_HEARTS_CHANGZHU)
    assert plain[0] > plain[1]


@pytest.mark.parametrize("text", [
    "KC KC QC QC", "JC JC 9C 9C", "5C 5C 4C 4C 3C 3C", "SJ SJ 10H 10H",
    "10H 10H 10S 10S", "10S 10S AH AH", "10H 10H 10S 10S AH AH",
])
def test_seed_tractors(text: str) -> None:
    assert is_tractor(parse_cards(text), TEN_HEARTS)


@pytest.mark.parametrize("text", [
    "5C 5C 4C", "5C 4C 4C", "5C 5C 3C 3C", "JC JC QC", "10S 10S 10C 10C", "AS AS 2S 2S",
])
def test_seed_non_tractors(text: str) -> None:
    assert not is_tractor(parse_cards(text), TEN_HEARTS)


def test_jacks_and_tens_of_spades_span_two_groups_or_are_not_consecutive() -> None:
    with pytest.raises(InvalidCombination) as error:
        classify(parse_cards("JS JS 10S 10S"), TEN_HEARTS)
    assert error.value.reason == Reason.INVALID_COMBINATION
    spades = trump_order(LEVEL_RANK["10"], "S", False)
    assert not is_tractor(parse_cards("JS JS 10S 10S"), spades)


def test_permanent_two_moves_the_tier_next_to_trump_ace() -> None:
    assert is_tractor(parse_cards("2S 2S AH AH"), TEN_HEARTS_CHANGZHU)
    assert not is_tractor(parse_cards("10S 10S AH AH"), TEN_HEARTS_CHANGZHU)


@pytest.mark.parametrize("text", [
    "3C 3C 3C 4C 4C 4C", "4C 4C 4C 6C 6C 6C", "5H 5H 5H 5S 5S 5S", "BJ BJ BJ SJ SJ SJ",
    "AS AS AS 5H 5H 5H", "5S 5S 5S SJ SJ SJ",
])
def test_seed_titanics_at_level_five_spades(text: str) -> None:
    assert is_titanic(parse_cards(text), FIVE_SPADES)


def test_seed_non_titanics() -> None:
    with pytest.raises(InvalidCombination):
        classify(parse_cards("5H 5H 5H 6H 6H 6H"), FIVE_SPADES)
    assert not is_titanic(parse_cards("5H 5H 5H 5S 5S 5S"), FIVE_NO_TRUMP)


def test_single_pair_triple() -> None:
    assert classify(parse_cards("3C"), TEN_HEARTS)[0] == SINGLE
    assert classify(parse_cards("3C 3C"), TEN_HEARTS)[0] == PAIR
    assert classify(parse_cards("3C 3C 3C"), TEN_HEARTS)[0] == TRIPLE


def test_throw_decomposition_keeps_copies_together() -> None:
    kind, parts = classify(parse_cards("7C 7C 7C 8C 8C"), TEN_HEARTS)
    assert kind == THROW
    assert [(p.kind, p.length) for p in parts] == [(TRIPLE, 1), (PAIR, 1)]
    kind, parts = classify(parse_cards("9C 8C 8C 4C 4C"), TEN_HEARTS)
    assert kind == THROW
    assert sorted(p.kind for p in parts) == [PAIR, PAIR, SINGLE]


def test_longest_run_first() -> None:
    parts = decompose(parse_cards("3C 3C 4C 4C 6C 6C 7C 7C 8C 8C AC"), TEN_HEARTS)
    assert [(p.kind, p.length) for p in parts] == [(TRACTOR, 3), (TRACTOR, 2), (SINGLE, 1)]
    parts = decompose(parse_cards("3C 3C 3C 4C 4C 4C 5C 5C"), TEN_HEARTS)
    assert [(p.kind, p.length) for p in parts] == [(TITANIC, 2), (PAIR, 1)]


def test_cards_of_two_suit_groups_are_neither_a_tractor_nor_a_titanic() -> None:
    # JS and 10S are adjacent ranks, but at level 10 the 10S is a trump: no combination.
    assert not is_tractor(parse_cards("JS JS 10S 10S"), TEN_HEARTS)
    assert not is_titanic(parse_cards("JS JS JS 10S 10S 10S"), TEN_HEARTS)
