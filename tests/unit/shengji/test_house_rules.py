"""The `shengji_io` preset: every house rule on a position where it and the rule book differ."""

from __future__ import annotations

import random
from collections import Counter
from itertools import islice

import pytest

from fiftyk_referee.domain.cards import Card, parse_cards
from fiftyk_referee.domain.errors import Reason
from fiftyk_referee.domain.game import Action, Constraint
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, trump_order
from fiftyk_referee.domain.shengji.formats import (
    can_make,
    describe_format,
    owed_formats,
    requirements,
)
from fiftyk_referee.domain.shengji.hand import BURY
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import PRESETS, ShengjiRules
from fiftyk_referee.domain.shengji.scoring import kitty_multiplier
from fiftyk_referee.domain.shengji.tricks import TrickRules
from tests.unit.shengji.helpers import close_windows, new_hand

HEARTS = trump_order(LEVEL_RANK["10"], "H", False)  # level 10, ♥ trump
BOOK = TrickRules.of(ShengjiRules.from_spec("tractor"))
HOUSE = TrickRules.of(ShengjiRules.from_spec("shengji_io"))


def cards(text: str) -> list[Card]:
    """Cards from notation."""
    return parse_cards(text)


def refusal(rules: TrickRules, lead: str, hand: str, play: str) -> Reason | None:
    """The reason a follow is refused under these trick rules (None: legal)."""
    found = rules.follow_error(cards(hand), cards(play), rules.read(cards(lead), HEARTS), HEARTS)
    return None if found is None else found[0]


def test_the_preset_is_the_tractor_table_with_the_house_options() -> None:
    house = ShengjiRules.from_spec("shengji_io")
    assert (house.packs, house.kitty_size, house.band, house.hand_size) == (2, 8, 40, 25)
    assert (house.lead_reading, house.follow_duty, house.failed_throw_play,
            house.throw_evaluation) == ("largest_unit", "format_order", "first_blocker", "all")
    assert (house.first_hand_dealer, house.kitty_multiplier) == ("final_declarer", "times")


@pytest.mark.parametrize("preset", sorted(set(PRESETS) - {"shengji_io"}))
def test_every_other_preset_keeps_the_rule_books_trick_rules(preset: str) -> None:
    assert TrickRules.of(ShengjiRules.from_spec(preset)) == TrickRules()


def test_new_options_leave_the_fingerprints_of_existing_tables_alone() -> None:
    # Pinned before the trick options existed: stored tables keep their fingerprint.
    assert ShengjiRules.from_spec("tractor").fingerprint == (
        "d2ff5d94c527ca17e26e22735a07ca84640b34bd8c44dbdcb01ee604b9fd8fc9")
    house = ShengjiRules.from_spec("tractor", {"throw_evaluation": "highest"})
    assert house.fingerprint != ShengjiRules.from_spec("tractor").fingerprint


# -- a follower owes the first format of the lead's sequence ------------------------------

def test_a_follower_holding_a_tractor_of_the_leads_length_must_play_it() -> None:
    lead = "3S 3S 4S 4S 5S 5S 6S 6S"
    hand = "7S 7S 8S 8S 9S 9S JS JS KS KS AS AS 2D"  # 7-8-9-J (10 is trump) and K-A
    two_short_ones = "KS KS AS AS 7S 7S 8S 8S"
    assert refusal(BOOK, lead, hand, two_short_ones) is None  # four run tuples either way
    assert refusal(HOUSE, lead, hand, two_short_ones) == ShengjiReason.MUST_FOLLOW_TRACTOR
    assert refusal(HOUSE, lead, hand, "7S 7S 8S 8S 9S 9S JS JS") is None


def test_without_the_leads_format_the_next_one_down_is_owed() -> None:
    lead = "3S 3S 4S 4S"
    assert (refusal(HOUSE, lead, "7S 7S 9S 9S 2S 5S", "7S 7S 2S 5S")
            == ShengjiReason.MUST_FOLLOW_PAIR)
    assert refusal(HOUSE, lead, "7S 7S 9S 9S 2S 5S", "7S 7S 9S 9S") is None
    assert refusal(HOUSE, lead, "7S 7S 9S 2S 5S", "9S 2S 5S 7S") == ShengjiReason.MUST_FOLLOW_PAIR
    assert refusal(HOUSE, lead, "7S 9S JS 2S 5S", "9S JS 2S 5S") is None


def test_the_sequence_of_owed_formats_walks_down_one_split_at_a_time() -> None:
    assert list(requirements([(2, 2)])) == [((2,), (2,)), ((2,), (1,), (1,)), ((1,),) * 4]
    assert list(requirements([(3,)])) == [((2,), (1,)), ((1,),) * 3]
    assert list(requirements([(2,), (2,)])) == [((2,), (1,), (1,)), ((1,),) * 4]
    # A titanic: two triples, then a triple joined to a pair, before three pairs.
    first = list(islice(requirements([(3, 3)]), 4))
    assert first == [((3,), (3,)), ((3, 2), (1,)), ((2, 3), (1,)), ((3,), (2,), (1,))]
    assert describe_format(((2, 2, 2), (2,), (1,))) == "a tractor of 3, a pair, a single"


def test_an_owed_format_is_named_in_words() -> None:
    assert describe_format(((3, 3), (3,), (1,), (1,))) == "a titanic of 2, a triple, 2 × single"
    assert describe_format(((3, 2), (2,), (2,))) == "a run of triple-pair, 2 × pair"


def test_three_packs_a_triple_is_not_owed_where_the_house_reads_a_tractor() -> None:
    lead = "7S 7S 7S 8S 8S"  # the rule book: a triple and a pair; the house: 7-8 and a 7
    assert [c.kind for c in BOOK.read(cards(lead), HEARTS).components] == ["triple", "pair"]
    assert [c.kind for c in HOUSE.read(cards(lead), HEARTS).components] == ["tractor", "single"]
    hand, play = "9S 9S 9S 3S 4S 6S", "9S 9S 3S 4S 6S"
    assert refusal(BOOK, lead, hand, play) == ShengjiReason.MUST_FOLLOW_TRIPLE
    assert refusal(HOUSE, lead, hand, play) is None


def test_house_examples_and_constraints_name_the_owed_format() -> None:
    lead = HOUSE.read(cards("3S 3S 4S 4S 5S 5S 6S 6S"), HEARTS)
    hand = cards("7S 7S 8S 8S 9S 9S JS JS KS KS AS AS 2D")
    plays, truncated = HOUSE.examples(hand, lead, HEARTS)
    assert plays and not truncated  # the one four-pair tractor is the only legal follow
    assert all(HOUSE.follow_error(hand, p, lead, HEARTS) is None for p in plays)
    assert [Counter(p) for p in plays] == [Counter(cards("7S 7S 8S 8S 9S 9S JS JS"))]
    assert "spades making a tractor of 4" in HOUSE.constraints(hand, lead, HEARTS)[-1]
    assert HOUSE.requirements(hand, lead, HEARTS)[-1] == Constraint(
        "format", count=8, group="S", cards=("7S", "7S", "8S", "8S", "9S", "9S", "JS", "JS"))
    loose = cards("7S 7S 8S 8S 9S 9S JS JS QS QS 2D")  # two four-pair tractors now
    assert HOUSE.examples(loose, lead, HEARTS) == (
        [sorted(cards("7S 7S 8S 8S 9S 9S JS JS"), key=HEARTS.sort_key),
         sorted(cards("8S 8S 9S 9S JS JS QS QS"), key=HEARTS.sort_key)], False)


# -- failed throws ----------------------------------------------------------------------------

def test_a_failed_throw_plays_the_first_unit_the_first_blocking_seat_beats() -> None:
    throw = "9C 8C 8C 4C 4C"
    others = [cards("QC QC 3S"), cards("2D"), cards("3H")]  # seat 1 beats the 9 and both pairs
    book = BOOK.forced(BOOK.read(cards(throw), HEARTS), others, HEARTS)
    house = HOUSE.forced(HOUSE.read(cards(throw), HEARTS), others, HEARTS)
    assert book is not None and list(book.cards) == cards("4C 4C")  # the lowest failed part
    assert house is not None and list(house.cards) == cards("9C")  # the smallest unit first


def test_each_trick_option_stands_alone_a_house_reading_with_the_books_failed_throw() -> None:
    # lead_reading=largest_unit alone: the throw is read into the house's units, and the
    # rule book's failed-throw play still forces its lowest failed component.
    mixed = TrickRules.of(ShengjiRules.from_spec("tractor", {"lead_reading": "largest_unit"}))
    others = [cards("QC QC 3S"), cards("2D"), cards("3H")]
    forced = mixed.forced(mixed.read(cards("9C 8C 8C 4C 4C"), HEARTS), others, HEARTS)
    assert forced is not None and list(forced.cards) == cards("4C 4C")


def test_the_seat_asked_first_decides_the_forced_unit() -> None:
    throw = "9C 8C 8C 4C 4C"
    first_beats_a_pair = [cards("5C 5C"), cards("JC"), cards("3H")]
    house = HOUSE.forced(HOUSE.read(cards(throw), HEARTS), first_beats_a_pair, HEARTS)
    assert house is not None and list(house.cards) == cards("4C 4C")
    first_beats_the_nine = [cards("JC"), cards("5C 5C"), cards("3H")]
    house = HOUSE.forced(HOUSE.read(cards(throw), HEARTS), first_beats_the_nine, HEARTS)
    assert house is not None and list(house.cards) == cards("9C")


# -- over-trumping a throw --------------------------------------------------------------------

@pytest.mark.parametrize(("policy", "winners"), [
    ("key_component", (2, 2)), ("all", (1, 1)), ("highest", (2, 1)), ("unit_length", (2, 2)),
])
def test_over_trumping_a_throw_follows_the_evaluation_policy(
        policy: str, winners: tuple[int, int]) -> None:
    rules = TrickRules.of(ShengjiRules.from_spec("shengji_io", {"throw_evaluation": policy}))
    throw = cards("AC AC KC")  # a pair and a single nobody can beat
    lead = rules.read(throw, HEARTS)
    trumped = cards("3H 3H 4H")
    higher_pair_lower_single = [throw, trumped, cards("5H 5H 2H"), cards("3C 3D 3S")]
    higher_pair_lowest_top = [throw, cards("3H 3H 9H"), cards("5H 5H 4H"), cards("3C 3D 3S")]
    assert (rules.winner(higher_pair_lower_single, lead, HEARTS),
            rules.winner(higher_pair_lowest_top, lead, HEARTS)) == winners


# -- scoring and the first dealer ------------------------------------------------------------

@pytest.mark.parametrize(("largest", "power", "times"), [(1, 2, 2), (2, 4, 4), (3, 8, 6),
                                                         (4, 16, 8), (6, 64, 12)])
def test_the_kitty_multiplier_is_twice_the_largest_unit(largest: int, power: int,
                                                         times: int) -> None:
    assert kitty_multiplier(ShengjiRules.from_spec("tractor"), largest) == power
    assert kitty_multiplier(ShengjiRules.from_spec("shengji_io"), largest) == times


def test_the_standing_declarer_deals_the_first_hand() -> None:
    for preset, dealer in (("tractor", 1), ("shengji_io", 2)):
        hand = new_hand(preset, dealer=None, hands={1: "2S", 2: "2H 2H"})
        close_windows(hand, {1: (1, "2S"), hand.rules.hand_size: (2, "2H 2H")})
        assert hand.dealer == dealer, preset


# -- a whole hand under the preset -----------------------------------------------------------

def test_a_shengji_io_hand_forces_the_house_component_and_scores() -> None:
    hands = {0: "9C 8C 8C 4C 4C 10H", 1: "QC QC"}
    for preset, forced in (("tractor", ["4C", "4C"]), ("shengji_io", ["9C"])):
        hand = new_hand(preset, levels=("10", "10"), hands=hands)
        close_windows(hand, {hand.rules.hand_size: (0, "10H")})
        hand.act(0, Action(BURY, tuple(map(str, hand.kitty_dealt))))
        hand.act(0, Action.play(["9C", "8C", "8C", "4C", "4C"]))
        assert hand.throws_failed[-1]["forced"] == forced, preset
        assert [str(c) for c in hand.trick[0][1]] == forced


def _walk(held: list[Card], play: list[Card], lead_cards: list[Card]) -> bool:
    """The follow rule as stated: down the sequence, the play making a format is legal, the
    holding making one the play does not is refused."""
    lead = HOUSE.read(lead_cards, HEARTS)
    for wanted in owed_formats(lead.components):
        if can_make(Counter(play), wanted, HEARTS):
            return True
        if can_make(Counter(held), wanted, HEARTS):
            return False
    return True


def test_the_house_follow_check_is_the_walk_down_the_sequence() -> None:
    rng = random.Random(17)
    spades = [c for c in cards("3S 4S 5S 6S 7S 8S 9S JS QS") for _ in range(2)]
    for _ in range(150):
        lead_cards = rng.sample(spades, rng.randint(2, 6))
        rest = list((Counter(spades) - Counter(lead_cards)).elements())
        held = rng.sample(rest, min(len(rest), len(lead_cards) + rng.randint(1, 4)))
        for _ in range(4):
            play = rng.sample(held, len(lead_cards))
            lead = HOUSE.read(lead_cards, HEARTS)
            legal = HOUSE.follow_error(held, play, lead, HEARTS) is None
            assert legal == _walk(held, play, lead_cards), (lead_cards, held, play)


def test_a_leader_is_told_which_component_a_failed_throw_plays() -> None:
    assert "plays its lowest failed component" in BOOK.lead_constraint()
    assert HOUSE.lead_constraint().endswith(
        "plays the first component the first seat able to beat one beats)")
    for rules in (BOOK, HOUSE):
        assert rules.lead_constraint().startswith("lead any cards of one suit group: one"
                                                  " combination, or a throw")
    hand = new_hand("shengji_io", levels=("10", "10"), hands={0: "10H"})
    close_windows(hand, {hand.rules.hand_size: (0, "10H")})
    hand.act(0, Action(BURY, tuple(map(str, hand.kitty_dealt))))
    assert hand.legal_actions(0).constraints == (HOUSE.lead_constraint(),)


def test_house_examples_of_a_long_holding_are_the_owed_format_at_its_lowest() -> None:
    # Eleven spades to 3344 + 9: a pair and three singles owed (the first format this hand can
    # make). Too many possible follows to check them all (more than 256): the answer is the
    # lowest way to make the format, and says other legal follows exist.
    lead = HOUSE.read(cards("3S 3S 4S 4S 9S"), HEARTS)
    hand = cards("2S 5S 5S 6S 7S 8S 9S JS QS KS AS 2D")
    assert HOUSE.examples(hand, lead, HEARTS) == (
        [sorted(cards("2S 5S 5S 6S 7S"), key=HEARTS.sort_key)], True)
    assert HOUSE.constraints(hand, lead, HEARTS) == (
        "play exactly 5 cards", "all 5 of spades",
        "spades making a pair, 3 × single (the first format of the lead's sequence your hand"
        " can make)")
    assert HOUSE.requirements(hand, lead, HEARTS) == (
        Constraint("count", count=5), Constraint("suit", count=5, group="S"),
        Constraint("format", count=5, group="S", cards=("5S", "5S", "2S", "6S", "7S")))


def test_house_examples_of_many_trumps_come_lowest_first_in_the_trump_order() -> None:
    # Two trump singles led, twelve trumps held (nothing owed but the suit): the off-suit 10s
    # (level 10) and the jokers rank above A♥ in this game's order, though a 10 is below a J
    # by the cards' face value.
    lead = HOUSE.read(cards("9H 7H"), HEARTS)
    hand = cards("5H 5H 6H 7H 10S JH QH KH AH 10C SJ BJ 2D 3S")
    examples, truncated = HOUSE.examples(hand, lead, HEARTS)
    assert truncated and len(examples) == 24
    keys = [[HEARTS.sort_key(card) for card in play] for play in examples]
    assert keys == sorted(keys)
    assert examples[:4] == [cards("5H 5H"), cards("5H 6H"), cards("5H 7H"), cards("5H JH")]
    # Fifteen trumps against three singles: too many follows (455) to list them all, so the
    # examples are only the ones drawn from the holding, lowest first.
    lead = HOUSE.read(cards("9H 7H 6H"), HEARTS)
    hand = cards("2H 3H 4H 5H 6H 8H JH QH KH AH 10S 10C 10D SJ BJ 2D 3S")
    examples, truncated = HOUSE.examples(hand, lead, HEARTS)
    assert truncated and len(examples) == 24
    assert examples[:3] == [cards("2H 3H 4H"), cards("2H 3H 5H"), cards("2H 3H 6H")]


def test_a_house_seat_short_of_the_suit_or_holding_just_enough_owes_no_format() -> None:
    lead = HOUSE.read(cards("3S 3S 4S 4S"), HEARTS)
    short = cards("5S 5S 6S 2D 3D 4C")
    assert HOUSE.constraints(short, lead, HEARTS) == (
        "play exactly 4 cards", "all your 3 spades, then any other cards")
    assert HOUSE.requirements(short, lead, HEARTS) == (
        Constraint("count", count=4), Constraint("suit", count=3, group="S"),
        Constraint("include", group="S", cards=("5S", "5S", "6S")))
    exact = cards("5S 5S 7S 8S 2D")
    assert HOUSE.constraints(exact, lead, HEARTS) == (
        "play exactly 4 cards", "all 4 of spades")
    assert HOUSE.requirements(exact, lead, HEARTS) == (
        Constraint("count", count=4), Constraint("suit", count=4, group="S"),
        Constraint("include", group="S", cards=("5S", "5S", "7S", "8S")))
    assert HOUSE.examples(exact, lead, HEARTS) == (
        [sorted(cards("5S 5S 7S 8S"), key=HEARTS.sort_key)], False)
