"""The rules engines' remembered work answers exactly as work done afresh, for every game.

五十K remembers recent readings of plays (`classify`) and of hands (`legal_plays`) in
bounded caches; Shengji builds each card's sort key and suit group once per trump order
and shares one follow's match vectors among the candidate plays it checks; 斗地主 remembers
its readings of plays (`readings`) in a bounded cache. Each is checked
here against the answer computed without it, on seeded random hands.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator, Sequence

import pytest

from fiftyk_referee.domain.cards import SUITS, Card, make_deck, parse_cards, sort_key
from fiftyk_referee.domain.doudizhu.combinations import forget_readings as ddz_forget_readings
from fiftyk_referee.domain.doudizhu.combinations import read_play as ddz_read_play
from fiftyk_referee.domain.doudizhu.combinations import readings as ddz_readings
from fiftyk_referee.domain.doudizhu.legal import legal_plays as ddz_legal_plays
from fiftyk_referee.domain.doudizhu.rulesets import PRESETS as DOUDIZHU_PRESETS
from fiftyk_referee.domain.doudizhu.rulesets import DoudizhuRules
from fiftyk_referee.domain.errors import InvalidCombination
from fiftyk_referee.domain.fiftyk import combinations, legal
from fiftyk_referee.domain.fiftyk.combinations import classify, forget_readings
from fiftyk_referee.domain.fiftyk.legal import forget_hands, legal_plays
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.domain.shengji import play as shengji_play
from fiftyk_referee.domain.shengji.cards import (
    LEVEL_RANK,
    RANKS_LOW_TO_HIGH,
    TRUMP,
    trump_order,
)
from fiftyk_referee.domain.shengji.play import follow_error, make_lead

SEED = 20_261_202
FIFTYK_PRESETS = sorted(PRESETS)


def fiftyk_hands(ruleset: Ruleset, count: int, rng: random.Random) -> Iterator[list[Card]]:
    """Random hands of up to 27 cards from the ruleset's deck."""
    deck = make_deck(ruleset.packs, jokers=ruleset.jokers)
    for _ in range(count):
        rng.shuffle(deck)
        yield deck[:rng.randint(5, min(27, len(deck)))]


# -- 五十K ------------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", FIFTYK_PRESETS)
def test_classify_reads_a_play_the_same_in_any_order_first_time_or_remembered(
    preset: str,
) -> None:
    ruleset = Ruleset.from_spec(preset)
    rng = random.Random(SEED)
    for hand in fiftyk_hands(ruleset, 12, rng):
        for play in legal_plays(hand, None, ruleset)[:40]:
            cards = list(play.cards)
            forget_readings()
            first = classify(cards, ruleset)
            rng.shuffle(cards)
            assert classify(cards, ruleset) == first == play  # another order, remembered
            forget_readings()
            assert classify(cards, ruleset) == play  # that order, read afresh


def test_a_card_set_that_is_no_combination_is_refused_every_time() -> None:
    ruleset = Ruleset.from_spec("classic")
    cards = [Card(3, "S"), Card(4, "H")]
    for _ in range(3):  # refusals are remembered too, and still raise
        with pytest.raises(InvalidCombination):
            classify(cards, ruleset)


def test_the_engines_caches_stay_within_their_bounds() -> None:
    ruleset = Ruleset.from_spec("classic")
    rng = random.Random(SEED)
    deck = make_deck(2, jokers=True)
    for _ in range(combinations.READING_CACHE_SIZE + 500):
        rng.shuffle(deck)
        with contextlib.suppress(InvalidCombination):
            classify(deck[:3], ruleset)
    for _ in range(legal.SHAPE_CACHE_SIZE + 50):
        rng.shuffle(deck)
        legal_plays(deck[:10], None, ruleset)
    assert combinations._reading.cache_info().currsize <= combinations.READING_CACHE_SIZE
    assert legal._shape.cache_info().currsize <= legal.SHAPE_CACHE_SIZE


@pytest.mark.parametrize("preset", FIFTYK_PRESETS)
def test_legal_plays_from_a_remembered_hand_equal_a_first_look(preset: str) -> None:
    ruleset = Ruleset.from_spec(preset)
    rng = random.Random(SEED)
    for hand in fiftyk_hands(ruleset, 10, rng):
        forget_hands()
        leads = legal_plays(hand, None, ruleset)
        tops = [leads[0], leads[-1], rng.choice(leads)]
        first_looks = []
        for top in tops:
            forget_hands()
            first_looks.append(legal_plays(hand, top, ruleset))
        assert legal_plays(hand, None, ruleset) == leads
        assert [legal_plays(hand, top, ruleset) for top in tops] == first_looks


def test_legal_plays_follow_a_hand_that_changes_in_place() -> None:
    ruleset = Ruleset.from_spec("classic")
    hand = [Card(5, "S"), Card(5, "H"), Card(9, "C")]
    assert len(legal_plays(hand, None, ruleset)) == 3  # 5, 9 and the pair of 5s
    hand.remove(Card(5, "H"))
    assert [p.cards for p in legal_plays(hand, None, ruleset)] == [(Card(5, "S"),),
                                                                   (Card(9, "C"),)]


# -- Shengji ----------------------------------------------------------------------------------


def every_trump_order() -> Iterator[tuple[int, str | None, bool]]:
    for rank in RANKS_LOW_TO_HIGH:
        for suit in (*SUITS, None):
            for permanent_two in (False, True):
                yield rank, suit, permanent_two


def test_a_trump_orders_looked_up_keys_and_groups_are_its_card_info() -> None:
    for rank, suit, permanent_two in every_trump_order():
        order = trump_order(rank, suit, permanent_two)
        for card, info in order.info.items():
            assert order.sort_key(card) == (info.strength, card.suit)
            assert order.group_of[card] == info.group
        cards = list(order.info)
        for group in (*SUITS, TRUMP):
            assert order.in_group(cards, group) == [c for c in cards
                                                    if order.info[c].group == group]
            assert order.not_in_group(cards, group) == [c for c in cards
                                                        if order.info[c].group != group]


def recursive_choices(counts: Sequence[tuple[Card, int]], k: int) -> Iterator[list[Card]]:
    """The definition: take as many of the first card as possible first, then fewer."""
    if k == 0:
        yield []
        return
    if not counts:
        return
    (card, have), rest = counts[0], counts[1:]
    for take in range(min(have, k), -1, -1):
        for tail in recursive_choices(rest, k - take):
            yield [card] * take + tail


def test_multiset_choices_are_listed_as_their_recursive_definition_lists_them() -> None:
    rng = random.Random(SEED)
    deck = sorted(set(make_deck(1, jokers=True)), key=sort_key)
    for _ in range(300):
        cards = rng.sample(deck, rng.randint(0, 7))
        counts = [(card, rng.randint(1, 3)) for card in cards]
        for k in range(0, 8):
            assert shengji_play._choices(counts, k) == list(recursive_choices(counts, k))


@pytest.mark.parametrize("lead_text", ["3C 3C", "3C 3C 4C 4C", "AC KC KC QC QC",
                                       "5S 5S 6S 6S", "9C 9C 9C"])
def test_one_follow_check_shared_by_many_candidates_answers_as_fresh_checks(
    lead_text: str,
) -> None:
    order = trump_order(LEVEL_RANK["2"], "S", False)
    lead = make_lead(parse_cards(lead_text), order)
    rng = random.Random(SEED)
    deck = make_deck(2, jokers=True)
    for _ in range(25):
        rng.shuffle(deck)
        hand = deck[:25]
        held = order.in_group(hand, lead.group)
        shared = shengji_play._FollowCheck(held, lead, order)
        for _ in range(30):  # plays from the whole hand, and from the lead's suit alone
            pool = held if len(held) > lead.size and rng.random() < 0.7 else hand
            play = rng.sample(pool, lead.size)
            assert shared.error(play) == follow_error(hand, play, lead, order)


# -- 斗地主 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", sorted(DOUDIZHU_PRESETS))
def test_doudizhu_reads_a_play_the_same_in_any_order_first_time_or_remembered(
    preset: str,
) -> None:
    """斗地主 remembers readings per cards as given: every order of a play's cards, read
    afresh or remembered, has the same readings, and a play on a top reads the same."""
    combos = DoudizhuRules.from_spec(preset).combos
    rng = random.Random(SEED)
    deck = make_deck(1, jokers=True)
    for _ in range(12):
        rng.shuffle(deck)
        hand = deck[:20]  # a landlord's hand
        leads = ddz_legal_plays(hand, None, combos)
        for play in rng.sample(leads, min(40, len(leads))):
            cards = list(play.cards)
            ddz_forget_readings()
            first = ddz_readings(cards, combos)
            assert play in first
            rng.shuffle(cards)
            assert ddz_readings(cards, combos) == first  # another order, then remembered
            assert ddz_readings(cards, combos) == first
            for top in rng.sample(leads, min(5, len(leads))):
                remembered = ddz_read_play(cards, top, combos)
                ddz_forget_readings()
                assert ddz_read_play(cards, top, combos) == remembered
