"""Trick positions where a small slip in the rules would go unnoticed by a player for a long
time: same-step trump cards in a house reading, a failed throw's blocker, the follow duty of a
long titanic throw, and the example follows a client is shown (rule book and house)."""

from __future__ import annotations

from collections import Counter

import pytest

from fiftyk_referee.domain.cards import Card, parse_cards
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, TrumpOrder, trump_order
from fiftyk_referee.domain.shengji.combinations import THROW, TRACTOR
from fiftyk_referee.domain.shengji.play import (
    EXAMPLE_LIMIT,
    Lead,
    follow_error,
    follow_examples,
    make_lead,
)
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.domain.shengji.tricks import TrickRules

HEARTS_10 = trump_order(LEVEL_RANK["10"], "H", False)  # level 10, ♥ trump
DIAMONDS_10 = trump_order(LEVEL_RANK["10"], "D", False)  # level 10, ♦ trump
HEARTS_2 = trump_order(LEVEL_RANK["2"], "H", False)  # level 2, ♥ trump
HOUSE = TrickRules.of(ShengjiRules.from_spec("shengji_io"))


def cards(text: str) -> list[Card]:
    """Cards from notation."""
    return parse_cards(text)


def shown(parts: object) -> list[str]:
    """Cards as notation."""
    return [str(c) for c in parts]  # type: ignore[attr-defined]


def reading(lead: Lead) -> list[tuple[str, list[str]]]:
    """A lead's components: (kind, cards), in the lead's order."""
    return [(c.kind, shown(c.cards)) for c in lead.components]


# -- `lead_reading=largest_unit`: cards on one step ------------------------------------------

def test_house_reading_links_the_trump_suit_ace_to_an_off_suit_rank_pair() -> None:
    # A♥ is the highest plain trump, the off-suit 10s the next step: one tractor.
    lead = HOUSE.read(cards("AH AH 10D 10D"), HEARTS_10)
    assert lead.kind == TRACTOR
    assert reading(lead) == [(TRACTOR, ["AH", "AH", "10D", "10D"])]


def test_house_reading_takes_the_spade_pair_into_the_tractor_of_same_step_pairs() -> None:
    # 10♠ and 10♥ share a step below 10♦: the walk starts at 10♠ (spades first), whose run
    # uses every copy it holds, so 10♥10♥ is the lone pair.
    lead = HOUSE.read(cards("10S 10S 10H 10H 10D 10D"), DIAMONDS_10)
    assert lead.kind == THROW
    assert reading(lead) == [(TRACTOR, ["10S", "10S", "10D", "10D"]), ("pair", ["10H", "10H"])]


def test_house_reading_of_two_same_step_pairs_after_the_ace_is_the_last_split_found() -> None:
    # From A♥ the walk reaches 10♠ first, then 10♣: the split found last (A♥-10♣) wins.
    lead = HOUSE.read(cards("AH AH 10S 10S 10C 10C"), HEARTS_10)
    assert reading(lead) == [(TRACTOR, ["AH", "AH", "10C", "10C"]), ("pair", ["10S", "10S"])]


@pytest.mark.parametrize(("throw", "order", "pair"), [
    ("10S 10S 10H 10H 10D 10D", DIAMONDS_10, ["10H", "10H"]),
    ("AH AH 10S 10S 10C 10C", HEARTS_10, ["10S", "10S"]),
])
def test_a_failed_house_throw_of_same_step_pairs_plays_the_lone_pair_of_the_reading(
        throw: str, order: TrumpOrder, pair: list[str]) -> None:
    blocker = [cards("BJ BJ"), cards("3C"), cards("4C")]  # beats the pair, not the tractor
    forced = HOUSE.forced(HOUSE.read(cards(throw), order), blocker, order)
    assert forced is not None and shown(forced.cards) == pair


# -- `failed_throw_play=first_blocker`: what beats a run ---------------------------------------

def test_a_shorter_tractor_does_not_block_a_thrown_tractor() -> None:
    lead = HOUSE.read(cards("5S 5S 6S 6S 7S 7S AS"), HEARTS_2)
    assert reading(lead)[0] == (TRACTOR, ["5S", "5S", "6S", "6S", "7S", "7S"])
    assert HOUSE.forced(lead, [cards("8S 8S 9S 9S"), cards("3C"), cards("4C")], HEARTS_2) is None
    longer = HOUSE.forced(lead, [cards("8S 8S 9S 9S 10S 10S"), cards("3C"), cards("4C")],
                          HEARTS_2)
    assert longer is not None and shown(longer.cards) == ["5S", "5S", "6S", "6S", "7S", "7S"]


def test_a_tractor_starting_on_the_throw_runs_second_step_blocks_it_whatever_the_suit() -> None:
    # ♥ trump, level 10: A♥ A♥ 10♦ 10♦ is a tractor whose second step is the off-suit 10s.
    # 10♠ 10♠ 10♥ 10♥ is a tractor starting on that step (10♠, like 10♦, is an off-suit
    # 10): as long, as wide, its lowest step at the throw run's second step, so it beats the
    # run and the throw plays the tractor (the big joker no seat beats stays in the hand).
    lead = HOUSE.read(cards("AH AH 10D 10D BJ"), HEARTS_10)
    others = [cards("10S 10S 10H 10H"), cards("3C"), cards("4C")]
    forced = HOUSE.forced(lead, others, HEARTS_10)
    assert forced is not None and shown(forced.cards) == ["AH", "AH", "10D", "10D"]
    # A tractor starting on the run's own first step does not beat it.
    low = HOUSE.forced(lead, [cards("KH KH AH AH"), cards("3C"), cards("4C")], HEARTS_10)
    assert low is None


# -- `follow_duty=format_order`: the suit first ------------------------------------------------

def test_house_follower_holding_enough_of_the_suit_may_not_play_off_suit() -> None:
    lead = HOUSE.read(cards("3S 3S"), HEARTS_10)
    hand = cards("5S 9S KS 4C 6D")
    found = HOUSE.follow_error(hand, cards("5S 4C"), lead, HEARTS_10)
    assert found is not None and found[0] == ShengjiReason.MUST_FOLLOW_SUIT
    exactly_two = cards("5S 9S 4C 6D")
    found = HOUSE.follow_error(exactly_two, cards("5S 4C"), lead, HEARTS_10)
    assert found is not None and found[0] == ShengjiReason.MUST_FOLLOW_SUIT
    assert HOUSE.follow_error(exactly_two, cards("5S 9S"), lead, HEARTS_10) is None
    assert HOUSE.follow_error(hand, cards("5S KS"), lead, HEARTS_10) is None


def test_house_follower_short_of_the_suit_plays_all_of_it_then_anything() -> None:
    lead = HOUSE.read(cards("3S 3S 4S"), HEARTS_10)
    hand = cards("5S 4C 6D 7D")
    assert HOUSE.follow_error(hand, cards("5S 4C 6D"), lead, HEARTS_10) is None
    found = HOUSE.follow_error(hand, cards("4C 6D 7D"), lead, HEARTS_10)
    assert found is not None and found[0] == ShengjiReason.MUST_FOLLOW_SUIT


# -- the rule book's follow duty on a titanic throw -----------------------------------------

TITANIC_THROW = "4S 4S 4S 5S 5S 5S 6S 6S 6S 8S 8S 8S 9S 9S 9S"  # titanics of 3 and of 2


def test_four_consecutive_triples_fill_both_titanics_of_a_throw() -> None:
    # Three packs, level 2: 10-J-Q-K of spades, a triple each, split 2 + 2 (or 3 + 1
    # short) over the lead's titanics of 3 and 2; the best placement puts all four triples
    # in titanics, so a follow with only three of them is short.
    lead = make_lead(cards(TITANIC_THROW), HEARTS_2)
    held = cards("10S 10S 10S JS JS JS QS QS QS KS KS KS 3S 3S 7S AS")
    short = cards("10S 10S 10S JS JS JS QS QS QS KS KS 3S 3S 7S AS")
    found = follow_error(held, short, lead, HEARTS_2)
    assert found is not None and found[0] == ShengjiReason.MUST_FOLLOW_TRACTOR
    assert "4 triples in titanics" in found[1]
    full = cards("10S 10S 10S JS JS JS QS QS QS KS KS KS 3S 3S 7S")
    assert follow_error(held, full, lead, HEARTS_2) is None


# -- example follows: distinct, legal, and complete when they say so -------------------------

def every_legal_follow(rules: TrickRules, hand: list[Card], lead: Lead,
                       order: TrumpOrder) -> set[tuple[Card, ...]]:
    """Every distinct legal follow, found by trying every multiset of the lead's size."""
    counts = sorted(Counter(hand).items(), key=lambda item: order.sort_key(item[0]))
    found: set[tuple[Card, ...]] = set()

    def pick(index: int, left: int, chosen: list[Card]) -> None:
        if left == 0:
            if rules.follow_error(hand, chosen, lead, order) is None:
                found.add(tuple(sorted(chosen, key=order.sort_key)))
            return
        if index == len(counts):
            return
        card, have = counts[index]
        for take in range(min(have, left), -1, -1):
            pick(index + 1, left - take, chosen + [card] * take)

    pick(0, lead.size, [])
    return found


BOOK = TrickRules.of(ShengjiRules.from_spec("tractor"))


@pytest.mark.parametrize(("rules", "lead", "hand"), [
    (BOOK, "3S 3S 4S", "5S 5S 5S 6S 6S 9S 9S KS 4C"),
    (BOOK, "3S 3S 3S 4S 4S", "5S 5S 5S 6S 6S 6S 9S KS 4C"),  # free triples after the owed
    (BOOK, "3S 3S", "5S 5S 6S 6S 9S 9S KS 2D"),
    (HOUSE, "3S 3S 4S", "5S 5S 5S 6S 6S 9S 9S KS 4C"),
    (HOUSE, "3S 3S", "5S 5S 6S 6S 9S 9S KS 2D"),
    (HOUSE, "3S 3S 4S 4S", "5S 5S 6S 6S 7S 9S 9S KS KS 4C"),
    (BOOK, "3S 5S 7S", "9S 9S JS KS KS 4C"),  # singles owed: candidates repeat
    (HOUSE, "3S 5S 7S", "9S 9S JS KS KS 4C"),
])
def test_a_complete_example_list_is_every_legal_follow_once(
        rules: TrickRules, lead: str, hand: str) -> None:
    held = cards(hand)
    led = rules.read(cards(lead), HEARTS_10)
    plays, truncated = rules.examples(held, led, HEARTS_10)
    keys = [tuple(sorted(p, key=HEARTS_10.sort_key)) for p in plays]
    assert len(keys) == len(set(keys)), "an example is listed twice"
    every = every_legal_follow(rules, held, led, HEARTS_10)
    assert len(every) <= EXAMPLE_LIMIT and not truncated
    assert set(keys) == every


THREE_PACK_SPADES = ("3S 3S 3S 5S 5S 5S 6S 7S 7S 8S 9S 9S 10S JS JS QS KS KS AS 4C 4C 6D 7D"
                     " 8D")


def test_book_examples_of_a_long_holding_with_free_triples_are_each_legal_follow_once() -> None:
    # Three packs: a triple and two singles led; the follower owes one triple (the lowest,
    # 3♠) and may add any two other spades, 5♠ 5♠ 5♠ (a free triple) included. The examples
    # try a bounded number of candidates: with the 5♠ first, each distinct second card once
    # (10♠ is a trump at level 10).
    held = cards(THREE_PACK_SPADES)
    led = BOOK.read(cards("4S 4S 4S 2S 6S"), HEARTS_10)
    plays, truncated = BOOK.examples(held, led, HEARTS_10)
    assert [" ".join(shown(p)) for p in plays] == [
        f"3S 3S 3S 5S {second}" for second in ("5S", "6S", "7S", "8S", "9S", "JS", "QS", "KS",
                                                "AS")]
    assert truncated  # far more legal follows than the examples show
    for play in plays:
        assert BOOK.follow_error(held, play, led, HEARTS_10) is None


def test_house_examples_of_a_long_holding_with_free_triples_are_distinct_and_legal() -> None:
    held = cards(THREE_PACK_SPADES)
    led = HOUSE.read(cards("4S 4S 4S 2S 6S"), HEARTS_10)
    plays, truncated = HOUSE.examples(held, led, HEARTS_10)
    keys = [tuple(sorted(p, key=HEARTS_10.sort_key)) for p in plays]
    assert len(keys) == len(set(keys)) >= 1 and truncated
    for play in plays:
        assert HOUSE.follow_error(held, play, led, HEARTS_10) is None
    assert shown(plays[0]) == ["3S", "3S", "3S", "5S", "5S"]  # the owed format at its lowest


@pytest.mark.parametrize("distinct", [EXAMPLE_LIMIT, EXAMPLE_LIMIT + 1])
def test_a_void_seat_on_a_single_gets_every_distinct_card_and_is_truncated_only_past_the_limit(
        distinct: int) -> None:
    lead = make_lead(cards("3S"), HEARTS_10)
    pool = [c for c in cards(
        "2C 3C 4C 5C 6C 7C 8C 9C JC QC KC AC 2D 3D 4D 5D 6D 7D 8D 9D JD QD KD AD 2H 3H")]
    hand = pool[:distinct] + pool[:1]  # one card twice: still `distinct` distinct cards
    plays, truncated = follow_examples(hand, lead, HEARTS_10)
    assert len(plays) == EXAMPLE_LIMIT
    assert truncated == (distinct > EXAMPLE_LIMIT)


@pytest.mark.parametrize(("hand", "count"), [
    ("4C 4C 5C 5C 6C 6C 7C 8C 9C JC", EXAMPLE_LIMIT),  # 21 two-card choices and 3 pairs
    ("4C 4C 5C 5C 6C 6C 7C 7C 8C 9C JC", EXAMPLE_LIMIT + 1),  # one more pair
])
def test_a_void_seat_on_a_pair_is_told_its_follows_are_complete_only_when_they_all_fit(
        hand: str, count: int) -> None:
    # Void in spades: any two cards follow. Exactly EXAMPLE_LIMIT legal follows all fit in
    # the list, which is then complete; one more and it is truncated.
    lead = make_lead(cards("3S 3S"), HEARTS_10)
    plays, truncated = follow_examples(cards(hand), lead, HEARTS_10)
    every = every_legal_follow(BOOK, cards(hand), lead, HEARTS_10)
    assert len(every) == count
    assert len(plays) == EXAMPLE_LIMIT
    assert truncated == (count > EXAMPLE_LIMIT)
    if not truncated:
        assert {tuple(sorted(p, key=HEARTS_10.sort_key)) for p in plays} == every
