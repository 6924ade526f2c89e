"""斗地主's legal plays: scripted positions, then properties against brute force over every
sub-multiset of small hands (docs/doudizhu.md#combinations)."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fiftyk_referee.domain.cards import (
    BIG_JOKER,
    SMALL_JOKER,
    SUITS,
    TWO,
    Card,
    canonical_key,
    make_deck,
)
from fiftyk_referee.domain.doudizhu.combinations import (
    BOMB,
    DEFAULT,
    DOUZERO,
    FOUR_TWO_SINGLES,
    KINDS,
    PLANE,
    PLANE_SINGLES,
    RLCARD,
    ROCKET,
    TRIPLE_SINGLE,
    Combination,
    ComboOptions,
    beats,
    classify,
    read_play,
    readings,
)
from fiftyk_referee.domain.doudizhu.legal import can_beat, legal_plays
from tests.unit.test_doudizhu_combinations import cards, combo

DECK = make_deck(1, jokers=True)
# Cards of one rank in a drawn hand: triples weigh most (planes need runs of them).
RANK_COUNTS = st.sampled_from([0, 1, 2, 3, 3, 3, 4])
ALL_OPTIONS = [
    DEFAULT, DOUZERO, RLCARD,
    dataclasses.replace(DEFAULT, kickers_share_rank=False, kickers_pairs_one_rank=True,
                        kickers_adjacent_triple=True),
    dataclasses.replace(DOUZERO, kickers_pairs_one_rank=True, four_two_singles=False),
    dataclasses.replace(RLCARD, four_two_pairs=False, kickers_rocket=True),
]


def ranks(play: Combination | Sequence[Card]) -> str:
    """A play as its rank characters, ascending ('333 4' -> '3334')."""
    chars = {10: "T", 11: "J", 12: "Q", 13: "K", 14: "A", 15: "2", SMALL_JOKER: "S",
             BIG_JOKER: "B"}
    got = play.cards if isinstance(play, Combination) else play
    return "".join(chars.get(c.rank, str(c.rank)) for c in sorted(got, key=canonical_key))


def plays(hand: str, top: str | None = None, options: ComboOptions = DEFAULT) -> set[str]:
    on = None if top is None else combo(top, options)
    return {ranks(p) for p in legal_plays(cards(hand), on, options)}


def test_a_lead_of_a_small_hand_lists_every_play_once() -> None:
    assert plays("3334") == {"3", "4", "33", "333", "3334"}
    assert plays("3333 S B") == {
        "3", "S", "B", "33", "333", "333S", "333B", "3333", "SB",
    }  # 3333+SB is no 四带二 by the rule book
    assert plays("3333 S B", options=DOUZERO) == plays("3333 S B") | {"3333SB"}


def test_a_follow_lists_the_same_kind_and_length_higher_then_bombs_and_the_rocket() -> None:
    assert plays("66 77 9 2222 SB", "55") == {"66", "77", "22", "2222", "SB"}
    assert plays("34567 89 TJ", "34567") == {"45678", "56789", "6789T", "789TJ"}
    assert plays("3456789TJ", "345678") == {"456789", "56789T", "6789TJ"}
    assert plays("666 777 3 4 5", "333 444 5 6") == {"34666777", "35666777", "45666777"}


def test_bombs_follow_only_higher_bombs_and_nothing_follows_the_rocket() -> None:
    assert plays("3333 6666 SB", "5555") == {"6666", "SB"}
    assert plays("3333 6666 SB", "SB") == set()
    assert not can_beat(cards("3333 6666 SB"), combo("SB"), DEFAULT)
    assert can_beat(cards("3333 6666"), combo("5555"), DEFAULT)
    assert not can_beat(cards("3333 44"), combo("5555"), DEFAULT)


def test_a_kicker_never_takes_a_card_of_its_own_triple_or_four() -> None:
    lead = legal_plays(cards("4444 5"), None, DOUZERO)
    assert {ranks(p) for p in lead if p.kind == TRIPLE_SINGLE} == {"4445"}
    assert not [p for p in lead if p.kind == FOUR_TWO_SINGLES]


def test_plays_take_the_first_cards_of_each_rank_in_canonical_order() -> None:
    hand = [Card(3, "D"), Card(3, "S"), Card(3, "C"), Card(4, "H")]
    by_ranks = {ranks(p): p for p in legal_plays(hand, None, DEFAULT)}
    assert by_ranks["33"].cards == (Card(3, "S"), Card(3, "C"))
    assert by_ranks["3334"].cards == (Card(3, "S"), Card(3, "C"), Card(3, "D"), Card(4, "H"))


def test_cards_that_read_two_ways_are_one_play_in_its_preferred_reading() -> None:
    hand = "333 444 555 666 9"
    lead = [p for p in legal_plays(cards(hand), None, DOUZERO)
            if ranks(p) == "333444555666"]
    assert [(p.kind, p.rank) for p in lead] == [(PLANE, 6)]
    top = combo("333 444 555 789", DOUZERO)
    follow = [p for p in legal_plays(cards(hand), top, DOUZERO) if ranks(p) == "333444555666"]
    assert [(p.kind, p.rank) for p in follow] == [(PLANE_SINGLES, 6)]
    assert "333444555666" not in plays(hand, "333 444 555 789")  # one reading by default


def test_the_order_of_the_hand_does_not_change_the_plays() -> None:
    rng = random.Random(27)
    hand = rng.sample(DECK, 20)
    shuffled = list(hand)
    rng.shuffle(shuffled)
    assert legal_plays(hand, None, DOUZERO) == legal_plays(shuffled, None, DOUZERO)


def test_a_landlord_hand_leads_only_distinct_plays_that_classify_as_listed() -> None:
    rng = random.Random(20)
    for options in ALL_OPTIONS:
        for _ in range(5):
            hand = rng.sample(DECK, 20)
            lead = legal_plays(hand, None, options)
            assert len({p.cards for p in lead}) == len(lead)
            for play in lead:
                assert classify(play.cards, options) == play
            assert {p.kind for p in lead} <= set(KINDS)


def _brute_force(
    hand: Sequence[Card], top: Combination | None, options: ComboOptions
) -> set[tuple[int, ...]]:
    """Rank multisets of every sub-multiset of the hand that some reading lets it play."""
    by_rank: dict[int, list[Card]] = {}
    for card in sorted(hand, key=canonical_key):
        by_rank.setdefault(card.rank, []).append(card)
    found: set[tuple[int, ...]] = set()
    for taken in itertools.product(*(range(len(cs) + 1) for cs in by_rank.values())):
        sub = [c for cs, k in zip(by_rank.values(), taken, strict=True) for c in cs[:k]]
        read = readings(sub, options)
        if read if top is None else any(beats(r, top) for r in read):
            found.add(tuple(c.rank for c in sub))
    return found


@st.composite
def skewed_hands(draw: st.DrawFn, most: int = 13) -> list[Card]:
    """Up to `most` cards bunched on a few neighbouring ranks (0 to 4 cards of each), so that
    pairs, triples, bombs, chains and planes come up often; jokers now and then."""
    low = draw(st.integers(3, TWO))
    hand: list[Card] = []
    for offset, count in enumerate(draw(st.lists(RANK_COUNTS, min_size=1, max_size=6))):
        if low + offset <= TWO:
            suits = draw(st.permutations(SUITS))[:count]
            hand += [Card(low + offset, suit) for suit in suits]
    hand += [Card(rank, "") for rank in (SMALL_JOKER, BIG_JOKER) if draw(st.booleans())]
    extra = draw(st.lists(st.sampled_from(DECK), max_size=2, unique=True))
    hand += [c for c in extra if c not in hand]
    hand = draw(st.permutations(hand))
    return hand[:most]


@st.composite
def tops(draw: st.DrawFn, options: ComboOptions) -> Combination | None:
    """A lead (None) or a play some hand could make."""
    other = draw(skewed_hands(most=16))
    found = legal_plays(other, None, options)
    if not found or draw(st.integers(0, 4)) == 0:
        return None
    return draw(st.sampled_from(found))


PROPERTY = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPERTY
@given(st.data(), st.sampled_from(ALL_OPTIONS))
def test_legal_plays_are_exactly_the_sub_multisets_that_play(
    data: st.DataObject, options: ComboOptions
) -> None:
    hand = data.draw(skewed_hands())
    top = data.draw(tops(options))
    got = legal_plays(hand, top, options)
    keys = [tuple(c.rank for c in p.cards) for p in got]
    assert len(set(keys)) == len(keys), "a play is listed twice"
    assert set(keys) == _brute_force(hand, top, options)
    held = Counter(hand)
    for play in got:
        assert not Counter(play.cards) - held, "a play uses a card the hand does not hold"
        assert play.cards == tuple(sorted(play.cards, key=canonical_key))
        assert read_play(play.cards, top, options) == play
        if top is not None:
            assert beats(play, top)
    if top is not None:
        assert can_beat(hand, top, options) is bool(got)


@pytest.mark.parametrize("options", ALL_OPTIONS)
def test_every_kind_turns_up_in_some_lead(options: ComboOptions) -> None:
    rng = random.Random(7)
    seen: set[str] = set()
    for _ in range(300):
        seen |= {p.kind for p in legal_plays(rng.sample(DECK, 20), None, options)}
    expected = set(KINDS) - {k for k in ("four_two_singles", "four_two_pairs")
                             if not getattr(options, k)}
    assert seen == expected


def test_bombs_and_the_rocket_are_listed_on_any_non_bomb() -> None:
    hand = cards("3333 SB 4")
    for top in ("5", "2", "KK", "AAA 2", "3456789TJQKA", "2222 3 4"):
        got = {ranks(p) for p in legal_plays(hand, combo(top), DEFAULT)
               if p.kind in (BOMB, ROCKET)}
        assert got == {"3333", "SB"}, top


def test_suits_never_matter() -> None:
    one = [Card(5, s) for s in SUITS[:3]] + [Card(9, "D")]
    other = [Card(5, s) for s in SUITS[1:]] + [Card(9, "S")]
    assert [ranks(p) for p in legal_plays(one, None, DEFAULT)] == [
        ranks(p) for p in legal_plays(other, None, DEFAULT)]


def test_two_copies_of_a_joker_are_never_a_pair_even_in_a_malformed_hand() -> None:
    small = Card(SMALL_JOKER, "")
    assert [ranks(p) for p in legal_plays([small, small], None, DEFAULT)] == ["S"]
    assert classify([small, small], DEFAULT) is None
