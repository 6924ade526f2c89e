"""Cards: the notation of docs/rules.md#cards, point values and decks."""

from __future__ import annotations

from collections import Counter

import pytest

from fiftyk_referee.domain.cards import (
    ACE,
    BIG_JOKER,
    BJ,
    JACK,
    KING,
    QUEEN,
    SJ,
    SMALL_JOKER,
    TEN,
    TWO,
    Card,
    card_points,
    format_cards,
    make_deck,
    parse_card,
    parse_cards,
    sort_cards,
)
from fiftyk_referee.domain.errors import Reason, RuleError, UnknownCard


@pytest.mark.parametrize(
    ("token", "card"),
    [
        ("3S", Card(3, "S")),
        ("10H", Card(TEN, "H")),
        ("QC", Card(QUEEN, "C")),
        ("AD", Card(ACE, "D")),
        ("2S", Card(TWO, "S")),
        ("JH", Card(JACK, "H")),
        ("KD", Card(KING, "D")),
        ("SJ", SJ),
        ("BJ", BJ),
    ],
)
def test_canonical_tokens_parse_to_their_card(token: str, card: Card) -> None:
    assert parse_card(token) == card
    assert str(card) == token


@pytest.mark.parametrize(
    ("token", "canonical"),
    [
        ("TH", "10H"),
        ("tc", "10C"),
        ("10d", "10D"),
        ("qs", "QS"),
        ("ah", "AH"),
        ("sj", "SJ"),
        ("bj", "BJ"),
        ("Bj", "BJ"),
        ("3♠", "3S"),
        ("10♥", "10H"),
        ("K♣", "KC"),
        ("a♦", "AD"),
        ("T♦", "10D"),
        (" 5S ", "5S"),
    ],
)
def test_parser_accepts_t_lower_case_and_suit_symbols(token: str, canonical: str) -> None:
    assert str(parse_card(token)) == canonical


@pytest.mark.parametrize(
    "token",
    ["", "S", "1S", "11H", "3X", "3", "ZZ", "JJ", "SJS", "BJH", "XS", "10", "S3", "♠3", "3 S",
     "0S", "1OH", "joker"],
)
def test_bad_token_is_refused_as_unknown_card_naming_it(token: str) -> None:
    with pytest.raises(UnknownCard) as refused:
        parse_card(token)
    assert refused.value.reason is Reason.UNKNOWN_CARD
    assert refused.value.token == token
    assert repr(token) in refused.value.message


def test_non_string_token_is_refused_as_unknown_card() -> None:
    with pytest.raises(RuleError) as refused:
        parse_card(3)  # type: ignore[arg-type]
    assert refused.value.reason is Reason.UNKNOWN_CARD


def test_parse_cards_takes_a_list_or_a_string_split_by_spaces_or_commas() -> None:
    expected = [Card(3, "S"), Card(TEN, "H"), SJ]
    assert parse_cards(["3S", "10H", "SJ"]) == expected
    assert parse_cards("3S 10H SJ") == expected
    assert parse_cards("3s,th, sj") == expected


def test_parse_cards_names_the_first_bad_token_among_several() -> None:
    with pytest.raises(UnknownCard) as refused:
        parse_cards("3S 4S 1X 5S")
    assert refused.value.token == "1X"


def test_format_cards_is_canonical_notation_in_canonical_order() -> None:
    cards = parse_cards("bj 2d th 3h 3s sj ac 10s")
    assert format_cards(cards) == ["3S", "3H", "10S", "10H", "AC", "2D", "SJ", "BJ"]


def test_sort_orders_by_rank_then_spades_hearts_clubs_diamonds() -> None:
    cards = parse_cards("5D 5C 5H 5S 4D")
    assert [str(c) for c in sort_cards(cards)] == ["4D", "5S", "5H", "5C", "5D"]


def test_jokers_are_jokers_and_other_cards_are_not() -> None:
    assert SJ.is_joker and BJ.is_joker
    assert SJ.rank == SMALL_JOKER and BJ.rank == BIG_JOKER
    assert not parse_card("2S").is_joker


@pytest.mark.parametrize(
    ("token", "plain", "with_joker_points"),
    [
        ("5S", 5, 5), ("10H", 10, 10), ("KC", 10, 10), ("3D", 0, 0), ("QS", 0, 0),
        ("AH", 0, 0), ("2C", 0, 0), ("SJ", 0, 10), ("BJ", 0, 10),
    ],
)
def test_point_values_of_single_cards(token: str, plain: int, with_joker_points: int) -> None:
    card = parse_card(token)
    assert card_points(card) == plain
    assert card_points(card, joker_points=True) == with_joker_points


@pytest.mark.parametrize(
    ("packs", "jokers", "size", "plain_points", "joker_points_total"),
    [(2, True, 108, 200, 240), (2, False, 104, 200, 200), (1, True, 54, 100, 120),
     (1, False, 52, 100, 100)],
)
def test_decks_have_their_size_and_points(
    packs: int, jokers: bool, size: int, plain_points: int, joker_points_total: int
) -> None:
    deck = make_deck(packs, jokers=jokers)
    assert len(deck) == size
    assert sum(card_points(card) for card in deck) == plain_points
    assert sum(card_points(card, joker_points=True) for card in deck) == joker_points_total


@pytest.mark.parametrize(("packs", "jokers"), [(2, True), (2, False), (1, True), (1, False)])
def test_deck_is_a_multiset_with_each_card_once_per_pack(packs: int, jokers: bool) -> None:
    counts = Counter(make_deck(packs, jokers=jokers))
    assert set(counts.values()) == {packs}
    assert (SJ in counts) is jokers and (BJ in counts) is jokers
    assert len(counts) == 52 + (2 if jokers else 0)
    assert make_deck(packs, jokers=jokers) == sort_cards(counts.elements())


def test_every_card_of_the_deck_round_trips_through_its_notation() -> None:
    for card in make_deck(1, jokers=True):
        assert parse_card(str(card)) == card
        assert parse_card(str(card).lower()) == card
