"""Leads, throws, following, trumping and the trick winner: the seed's examples."""

from __future__ import annotations

from collections import Counter

import pytest

from fiftyk_referee.domain.cards import Card, parse_cards
from fiftyk_referee.domain.errors import InvalidCombination, Reason
from fiftyk_referee.domain.game import Constraint
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, TRUMP, TrumpOrder, trump_order
from fiftyk_referee.domain.shengji.combinations import THROW
from fiftyk_referee.domain.shengji.play import (
    EXAMPLE_LIMIT,
    failed_throw,
    follow_constraint,
    follow_error,
    follow_examples,
    lead_examples,
    make_lead,
    match_vector,
    play_key,
    trick_winner,
)
from fiftyk_referee.domain.shengji.reasons import ShengjiReason

HEARTS = trump_order(LEVEL_RANK["10"], "H", False)
TITANIC_SPADES = trump_order(LEVEL_RANK["5"], "S", False)


def cards(text: str) -> list[Card]:
    """Cards from notation."""
    return parse_cards(text)


def key(play: str, lead: str, order: TrumpOrder = HEARTS) -> int | None:
    """The key of a play against a lead."""
    return play_key(cards(play), make_lead(cards(lead), order), order)


def reason(hand: str, play: str, lead: str, order: TrumpOrder = HEARTS) -> Reason | None:
    """The reason a follow is refused (None when legal)."""
    found = follow_error(cards(hand), cards(play), make_lead(cards(lead), order), order)
    return None if found is None else found[0]


# -- leads and throws ----------------------------------------------------------------------

def test_a_lead_spanning_two_suit_groups_is_invalid() -> None:
    with pytest.raises(InvalidCombination):
        make_lead(cards("AC KD"), HEARTS)
    with pytest.raises(InvalidCombination):
        make_lead(cards("AC 10C"), HEARTS)  # 10C is a trump at level 10


def test_seed_throw_98844_with_a_higher_single_forces_the_nine() -> None:
    lead = make_lead(cards("9C 8C 8C 4C 4C"), HEARTS)
    assert lead.kind == THROW
    forced = failed_throw(lead, [cards("JC 3S"), cards("2D"), cards("3H")], HEARTS)
    assert forced is not None and list(forced.cards) == cards("9C")


def test_seed_throw_98844_with_queens_forces_the_fours() -> None:
    lead = make_lead(cards("9C 8C 8C 4C 4C"), HEARTS)
    forced = failed_throw(lead, [cards("2D"), cards("QC QC"), cards("3H")], HEARTS)
    assert forced is not None and list(forced.cards) == cards("4C 4C")


def test_seed_throw_98844_with_fives_forces_the_fours() -> None:
    lead = make_lead(cards("9C 8C 8C 4C 4C"), HEARTS)
    forced = failed_throw(lead, [cards("5C 5C"), cards("2D"), cards("3H")], HEARTS)
    assert forced is not None and list(forced.cards) == cards("4C 4C")


def test_a_throw_nobody_can_beat_stands_and_equal_is_not_higher() -> None:
    lead = make_lead(cards("AC KC KC"), HEARTS)
    assert failed_throw(lead, [cards("QC QC JC"), cards("KC 2D"), cards("3H")], HEARTS) is None


def test_a_tractor_out_of_a_longer_one_beats_a_thrown_tractor() -> None:
    lead = make_lead(cards("3C 3C 4C 4C AC"), HEARTS)
    forced = failed_throw(lead, [cards("6C 6C 7C 7C 8C 8C")], HEARTS)
    assert forced is not None and list(forced.cards) == cards("3C 3C 4C 4C")


def test_one_component_is_never_checked() -> None:
    lead = make_lead(cards("3C 3C"), HEARTS)
    assert failed_throw(lead, [cards("AC AC")], HEARTS) is None


# -- following ------------------------------------------------------------------------------

def test_wrong_card_count() -> None:
    assert reason("3C 4C 5C", "3C 4C", "AC") == ShengjiReason.WRONG_CARD_COUNT


def test_must_follow_suit_while_holding_it() -> None:
    assert reason("3C 4D", "4D", "AC") == ShengjiReason.MUST_FOLLOW_SUIT
    assert reason("3C 4D", "3C", "AC") is None
    assert reason("3C 4D 5D", "4D 5D", "AC AC") == ShengjiReason.MUST_FOLLOW_SUIT
    assert reason("3C 4D 5D", "3C 5D", "AC AC") is None


def test_pair_led_a_pair_if_you_have_one() -> None:
    assert reason("3C 3C 5C", "3C 5C", "AC AC") == ShengjiReason.MUST_FOLLOW_PAIR
    assert reason("3C 3C 5C", "3C 3C", "AC AC") is None


def test_tractor_led_a_tractor_else_pairs_else_singles() -> None:
    lead = "3C 3C 4C 4C"
    assert reason("7C 7C 8C 8C 9C 9C JC", "7C 7C 9C 9C", lead) == ShengjiReason.MUST_FOLLOW_TRACTOR
    assert reason("7C 7C 8C 8C 9C 9C JC", "8C 8C 9C 9C", lead) is None
    assert reason("7C 7C JC JC 9C 2C", "7C 7C 9C 2C", lead) == ShengjiReason.MUST_FOLLOW_PAIR
    assert reason("7C 7C JC JC 9C 2C", "7C 7C JC JC", lead) is None
    assert reason("7C 7C JC 9C 2C", "7C 7C 9C 2C", lead) is None
    assert reason("7C 7C JC 9C 2C", "JC 9C 2C 7C", lead) == ShengjiReason.MUST_FOLLOW_PAIR


def test_several_shorter_tractors_may_fill_a_longer_one() -> None:
    lead = "3C 3C 4C 4C 5C 5C 6C 6C"
    hand = "7C 7C 8C 8C JC JC QC QC 2C 2C"
    assert reason(hand, "7C 7C 8C 8C JC JC QC QC", lead) is None
    assert reason(hand, "7C 7C 8C 8C JC JC 2C 2C", lead) == ShengjiReason.MUST_FOLLOW_TRACTOR


LEVEL_STEP_TRACTOR_LEAD = "3H 3H 4H 4H 5H 5H 6H 6H"
LEVEL_STEP_PAIRS = "AH AH 10S 10S 10C 10C 10H 10H 8H 8H 2C 3D"
LEVEL_STEP_TRIPLE_LEAD = "10D 10D 10H 10H SJ SJ SJ"
LEVEL_STEP_TRIPLES = "AH AH AH 10C 10C 10S 10S 10S 5H 3C 4D"


def test_two_runs_through_the_level_step_owe_the_whole_tractor() -> None:
    # AH-10S and 10C-10H fill all four slots; the one long run AH-10S-10H fills only three.
    lead = LEVEL_STEP_TRACTOR_LEAD
    assert reason(LEVEL_STEP_PAIRS, "AH AH 10S 10S 10H 10H 8H 8H", lead) == \
        ShengjiReason.MUST_FOLLOW_TRACTOR
    assert reason(LEVEL_STEP_PAIRS, "AH AH 10S 10S 10C 10C 10H 10H", lead) is None
    assert reason(LEVEL_STEP_PAIRS, "AH AH 10C 10C 10S 10S 10H 10H", lead) is None


def test_a_run_through_the_level_step_leaves_the_triple_for_the_triple_slot() -> None:
    # AH-10C fills the tractor and 10S 10S 10S the triple slot; AH-10S would use the triple.
    lead = LEVEL_STEP_TRIPLE_LEAD
    assert reason(LEVEL_STEP_TRIPLES, "AH AH 10S 10S 10C 10C 5H", lead) == \
        ShengjiReason.MUST_FOLLOW_TRIPLE
    assert reason(LEVEL_STEP_TRIPLES, "AH AH 10C 10C 10S 10S 10S", lead) is None


@pytest.mark.parametrize(("lead", "holding"), [
    (LEVEL_STEP_TRACTOR_LEAD, LEVEL_STEP_PAIRS), (LEVEL_STEP_TRIPLE_LEAD, LEVEL_STEP_TRIPLES)])
def test_the_first_example_follow_meets_the_best_reading(lead: str, holding: str) -> None:
    hand = cards(holding)
    led = make_lead(cards(lead), HEARTS)
    plays, _ = follow_examples(hand, led, HEARTS)
    assert plays and all(follow_error(hand, p, led, HEARTS) is None for p in plays)
    want = follow_constraint(hand, led, HEARTS).vector
    assert match_vector(Counter(plays[0]), led, HEARTS)[0] == want


def test_the_2s_step_under_permanent_two_is_read_every_way() -> None:
    # Level 10, hearts trump, every 2 a trump: AH < the off-suit 2s < 2H < the off-suit 10s.
    order = trump_order(LEVEL_RANK["10"], "H", True)
    lead = LEVEL_STEP_TRACTOR_LEAD
    hand = "AH AH 2S 2S 2C 2C 2H 2H 8H 8H 3C 4D"
    assert reason(hand, "AH AH 2S 2S 2H 2H 8H 8H", lead, order) == ShengjiReason.MUST_FOLLOW_TRACTOR
    assert reason(hand, "AH AH 2S 2S 2C 2C 2H 2H", lead, order) is None


def test_seed_titanic_follow_order() -> None:
    lead = make_lead(cards("3C 3C 3C 4C 4C 4C"), TITANIC_SPADES)
    holdings = ["7C 7C 7C 8C 8C 8C", "7C 7C 8C 8C 2C KC", "7C 7C 7C JC JC JC",
                "7C 7C 7C JC JC KC", "7C 7C 7C JC QC KC", "7C 7C JC JC QC KC",
                "7C 7C JC QC KC AC", "7C 9C JC QC KC AC"]
    vectors = [match_vector(Counter(cards(h)), lead, TITANIC_SPADES)[0] for h in holdings]
    assert vectors == sorted(vectors, reverse=True)
    assert len(set(vectors)) == len(vectors)


def test_seed_triple_follow_order() -> None:
    lead = make_lead(cards("3C 3C 3C"), TITANIC_SPADES)
    vectors = [match_vector(Counter(cards(h)), lead, TITANIC_SPADES)[0]
               for h in ("7C 7C 7C", "7C 7C 8C", "7C 8C 9C")]
    assert vectors[0] > vectors[1] > vectors[2]
    assert reason("7C 7C 7C 8C 8C", "7C 8C 8C", "3C 3C 3C", TITANIC_SPADES) == \
        ShengjiReason.MUST_FOLLOW_TRIPLE


def test_a_short_seat_plays_its_whole_suit_then_anything() -> None:
    assert reason("3C 4D 5D 6D", "3C 4D", "AC AC") is None
    assert reason("3C 4D 5D 6D", "4D 5D", "AC AC") == ShengjiReason.MUST_FOLLOW_SUIT


# -- winning --------------------------------------------------------------------------------

def test_seed_trumping_a_tractor_and_two_singles() -> None:
    assert key("9H 9H 8H 8H 7H 2H", "AC KC 5C 5C 4C 4C") is not None
    assert key("9H 9H 8H 8H 7H 2H", "AC AC 5C 5C 4C 4C") is None


def test_seed_overtrumping_a_pair_key() -> None:
    lead = "5C 4C 4C"
    trumped = key("9H 7H 7H", lead)
    over = key("8H 8H 4H", lead)
    assert trumped is not None and over is not None and over > trumped
    assert trumped > (key(lead, lead) or 0)


def test_seed_single_key_cannot_be_overtrumped_lower() -> None:
    lead = "5C 6C 7C"
    trumped = key("9H 7H 7H", lead)
    other = key("8H 8H 4H", lead)
    assert trumped is not None and other is not None and other < trumped


def test_mixed_plays_never_win_and_trumping_a_trump_lead_is_following() -> None:
    assert key("AC 3H", "5C 6C") is None
    assert key("AS", "5C") is None
    assert key("3H", "5H") is not None and (key("3H", "5H") or 0) < (key("5H", "5H") or 0)


def test_a_longer_tractor_needs_the_same_length() -> None:
    assert key("9H 9H 8H 8H", "3C 3C 4C 4C") is not None
    assert key("9H 9H 8H 8H 7H 7H", "3C 3C 4C 4C 5C 5C") is not None
    assert key("9H 9H 8H 8H 4H 4H", "3C 3C 4C 4C 5C 5C") is None


# -- legal actions ---------------------------------------------------------------------------

def test_follow_examples_are_legal_and_constraints_say_what_is_owed() -> None:
    hand = cards("7C 7C 8C 8C 9C JC JC 3D 4D 5S 10H")
    lead = make_lead(cards("3C 3C 4C 4C"), HEARTS)
    plays, truncated = follow_examples(hand, lead, HEARTS)
    assert plays and not truncated  # the one tractor is the only legal follow
    for play in plays:
        assert follow_error(hand, play, lead, HEARTS) is None
    assert Counter(plays[0]) == Counter(cards("7C 7C 8C 8C"))
    constraint = follow_constraint(hand, lead, HEARTS)
    assert constraint.count == 4 and constraint.from_group == 4
    assert constraint.vector[1] == 2
    assert any("tractor" in line for line in constraint.describe())


def test_a_void_seat_gets_shaped_trump_examples() -> None:
    hand = cards("3D 4D 9H 9H 8H 8H")
    lead = make_lead(cards("3C 3C 4C 4C"), HEARTS)
    plays, _ = follow_examples(hand, lead, HEARTS)
    assert any(play_key(p, lead, HEARTS) is not None for p in plays)


def test_lead_examples_hold_every_component() -> None:
    found = {tuple(map(str, c)): kind for c, kind in lead_examples(cards("7C 7C 8C 8C 9C"),
                                                                    HEARTS)}
    assert found[("7C", "7C", "8C", "8C")] == "tractor"
    assert found[("7C", "7C")] == "pair"
    assert found[("9C",)] == "single"


def test_example_leads_never_join_two_suit_groups() -> None:
    # Spades 33 and clubs 44 hold adjacent ranks, but a lead spans one suit group: no tractor.
    found = [tuple(map(str, c)) for c, _ in lead_examples(cards("3S 3S 4C 4C"), HEARTS)]
    assert sorted(found) == [("3S",), ("3S", "3S"), ("4C",), ("4C", "4C")]


def test_a_single_lead_lists_every_distinct_legal_card_completely() -> None:
    lead = make_lead(cards("AC"), HEARTS)
    hand = cards("3C 3C 4C 5D 6D")
    plays, truncated = follow_examples(hand, lead, HEARTS)
    assert sorted(map(tuple, plays)) == sorted([tuple(cards("3C")), tuple(cards("4C"))])
    assert not truncated
    void, truncated = follow_examples(cards("5D 5D 6D 3H"), lead, HEARTS)
    assert len(void) == 3 and not truncated


def test_a_forced_follow_is_a_complete_answer() -> None:
    lead = make_lead(cards("4C 4C"), HEARTS)
    assert follow_examples(cards("3S 5D"), lead, HEARTS) == ([cards("3S 5D")], False)
    assert follow_examples(cards("3C 3C 5C 6D"), lead, HEARTS) == ([cards("3C 3C")], False)


def test_a_short_list_of_every_legal_follow_is_complete() -> None:
    lead = make_lead(cards("4C 4C"), HEARTS)
    hand = cards("2C 3C 4C 5C 6C 7C 8C 3D")
    plays, truncated = follow_examples(hand, lead, HEARTS)
    assert len(plays) == 21 and not truncated  # every two of the seven clubs
    assert len({tuple(p) for p in plays}) == 21


def test_constraint_records_say_what_the_seat_owes_and_from_which_tuples() -> None:
    lead = make_lead(cards(LEVEL_STEP_TRIPLE_LEAD), HEARTS)
    records = follow_constraint(cards(LEVEL_STEP_TRIPLES), lead, HEARTS).requirements()
    assert records == (
        Constraint("count", count=7),
        Constraint("suit", count=7, group=TRUMP),
        Constraint("slots", count=1, group=TRUMP, width=3, length=1),
        Constraint("slots", count=1, group=TRUMP, width=2, length=2),
        Constraint("run_tuples", count=2, group=TRUMP, width=2, cards=("AH", "10C", "10S")),
        Constraint("triples", count=1, group=TRUMP, width=3, cards=("AH", "10S")),
        Constraint("tuples", count=3, group=TRUMP, width=2, cards=("AH", "10C", "10S")))


def test_constraint_records_of_a_titanic_and_of_a_short_seat() -> None:
    lead = make_lead(cards("3C 3C 3C 4C 4C 4C"), TITANIC_SPADES)
    records = follow_constraint(cards("7C 7C 7C 8C 8C 8C JC JC 2D"), lead,
                                TITANIC_SPADES).requirements()
    assert Constraint("titanic_triples", count=2, group="C", width=3,
                      cards=("7C", "8C")) in records
    assert Constraint("tuples", count=2, group="C", width=2,
                      cards=("7C", "8C", "JC")) in records
    short = follow_constraint(cards("4C 5D 6D"), make_lead(cards("AC AC"), HEARTS), HEARTS)
    assert short.requirements() == (Constraint("count", count=2),
                                    Constraint("suit", count=1, group="C"),
                                    Constraint("include", group="C", cards=("4C",)))


# -- rules the mutation run found unpinned -----------------------------------------------------

def test_trumping_a_throw_needs_the_shape_of_every_component() -> None:
    # Level 2, hearts trump: the clubs throw QQJJ + 99 + 7 is not beaten by trumps 33 44 6 8
    # 10 (no pair beside the tractor), but is by 33 44 66 10.
    order = trump_order(LEVEL_RANK["2"], "H", False)
    lead = cards("QC QC JC JC 9C 9C 7C")
    assert make_lead(lead, order).kind == THROW
    assert trick_winner([lead, cards("3H 3H 4H 4H 6H 8H 10H")], order) == 0
    assert trick_winner([lead, cards("3H 3H 4H 4H 6H 6H 10H")], order) == 1


def test_trumping_a_throw_needs_a_pair_for_each_of_its_pairs() -> None:
    # Level 2, hearts trump: the clubs throw QQJJ + 99 + 77 needs trumps of a tractor and two
    # more pairs; the tractor's own cards cannot serve as one of them.
    order = trump_order(LEVEL_RANK["2"], "H", False)
    lead = cards("QC QC JC JC 9C 9C 7C 7C")
    assert [c.kind for c in make_lead(lead, order).components] == ["tractor", "pair", "pair"]
    assert trick_winner([lead, cards("3H 3H 4H 4H 6H 6H 8H 10H")], order) == 0
    assert trick_winner([lead, cards("3H 3H 4H 4H 6H 6H 8H 8H")], order) == 1


def test_the_first_listed_follow_is_the_lowest_legal_one() -> None:
    # Level 9, spades trump, three packs: to hearts 2233 666777 KK the lowest legal follow
    # keeps the aces as a pair and plays the three tens.
    order = trump_order(LEVEL_RANK["9"], "S", False)
    lead = make_lead(cards("2H 2H 3H 3H 6H 6H 6H 7H 7H 7H KH KH"), order)
    hand = cards("2H 3H 5H 8H 8H 10H 10H 10H JH JH KH AH AH AH 4C 5D")
    plays, _ = follow_examples(hand, lead, order)
    assert plays[0] == sorted(cards("2H 3H 5H 8H 8H 10H 10H 10H JH JH AH AH"),
                              key=order.sort_key)


def test_follows_to_a_titanic_are_listed_when_a_run_mixes_a_pair_and_a_triple() -> None:
    order = trump_order(LEVEL_RANK["8"], "H", False)
    lead = make_lead(cards("KC KC KC AC AC AC"), order)
    hand = cards("2C 2C 4C 4C 5C 6C 6C 6C 10C JC JC QC QC QC 3S")
    plays, _ = follow_examples(hand, lead, order)
    assert plays[0] == sorted(cards("2C JC JC QC QC QC"), key=order.sort_key)
    assert all(follow_error(hand, p, lead, order) is None for p in plays)


def test_holding_exactly_the_leads_count_in_suit_lists_one_complete_answer() -> None:
    plays, truncated = follow_examples(cards("9C 3C 5S 6D"), make_lead(cards("4C 4C"), HEARTS),
                                       HEARTS)
    assert plays == [sorted(cards("3C 9C"), key=HEARTS.sort_key)]
    assert truncated is False


def test_a_tractor_leaves_no_triple_owed_in_its_leftover_slots() -> None:
    # Three packs: to clubs 33 44 55, a seat holding 88 99 QQQ K A may play 88 99 QQ.
    lead = make_lead(cards("3C 3C 4C 4C 5C 5C"), HEARTS)
    hand = cards("8C 8C 9C 9C QC QC QC KC AC")
    assert follow_error(hand, cards("8C 8C 9C 9C QC QC"), lead, HEARTS) is None
    plays, _ = follow_examples(hand, lead, HEARTS)
    assert sorted(cards("8C 8C 9C 9C QC QC"), key=HEARTS.sort_key) in plays


def test_at_most_example_limit_follows_are_listed() -> None:
    # To a pair of clubs, twelve different clubs give 66 legal two-card follows.
    hand = cards("2C 3C 4C 5C 6C 7C 8C 9C JC QC KC AC")
    plays, truncated = follow_examples(hand, make_lead(cards("4C 4C"), HEARTS), HEARTS)
    assert len(plays) == EXAMPLE_LIMIT == 24
    assert truncated is True


def test_the_constraint_in_words_names_the_owed_triples() -> None:
    lead = make_lead(cards("9C 9C 9C"), TITANIC_SPADES)
    constraint = follow_constraint(cards("3C 3C 3C 4C 8C 2H"), lead, TITANIC_SPADES)
    assert constraint.vector == (0, 0, 1, 1)
    assert "1 triples where the lead has triples" in constraint.describe()


def test_a_void_follower_is_offered_its_trump_pair() -> None:
    # Ten plain cards give 45 plain discards, more than the candidates tried: the trump pair
    # is listed because a void seat's shaped trump plays come first.
    hand = cards("3H 3H 5S 6S 7S 8S 9S JS QD KD AD 2S")
    plays, _ = follow_examples(hand, make_lead(cards("4C 4C"), HEARTS), HEARTS)
    assert sorted(cards("3H 3H"), key=HEARTS.sort_key) in plays


def test_a_titanic_through_the_level_step_is_owed_from_its_triples() -> None:
    # Three packs: to the trump titanic AH×3 10S×3, a seat holding 10C×3 10D×2 10H×3 must
    # run its triples 10C-10H (the pair 10D would make no titanic).
    lead = make_lead(cards("AH AH AH 10S 10S 10S"), HEARTS)
    hand = cards("10C 10C 10C 10D 10D 10H 10H 10H 3S 4S")
    assert follow_error(hand, cards("10C 10C 10C 10H 10H 10H"), lead, HEARTS) is None
    refused = follow_error(hand, cards("10C 10D 10D 10H 10H 10H"), lead, HEARTS)
    assert refused is not None and refused[0] == ShengjiReason.MUST_FOLLOW_TRACTOR


def test_a_trump_order_needs_a_real_suit_and_rank() -> None:
    with pytest.raises(ValueError, match="not a suit"):
        trump_order(LEVEL_RANK["2"], "X", False)
    with pytest.raises(ValueError, match="not a trump rank"):
        trump_order(99, "S", False)


def test_a_lead_of_two_tractors_owes_a_tractor_in_each() -> None:
    # Level K, hearts trump, 常主 2: clubs 5566 + 7 + 8899 to a follower holding the runs
    # 33-44 and J-Q-A (the K is trump): both tractors must be filled from the two runs.
    order = trump_order(LEVEL_RANK["K"], "H", True)
    lead = make_lead(cards("5C 5C 6C 6C 7C 8C 8C 9C 9C"), order)
    hand = cards("3C 3C 4C 4C 7C JC JC QC QC AC AC 5D")
    assert follow_error(hand, cards("3C 3C 4C 4C JC JC QC QC AC"), lead, order) is None
    found = follow_error(hand, cards("3C 3C 4C 4C 7C JC QC AC AC"), lead, order)
    assert found is not None and found[0] == ShengjiReason.MUST_FOLLOW_TRACTOR


def test_the_lowest_follow_to_a_long_tractor_may_split_it_between_two_runs() -> None:
    # Level J, no trump suit: to hearts 55667788 + 9 a follower holding the runs 22-33-44
    # and 10-Q-K-A owes four pairs of tractors; the lowest way is 2233 and 10 10 QQ.
    order = trump_order(LEVEL_RANK["J"], None, False)
    lead = make_lead(cards("5H 5H 6H 6H 7H 7H 8H 8H 9H"), order)
    hand = cards("2H 2H 3H 3H 4H 4H 9H 10H 10H QH QH KH KH AH AH")
    plays, _ = follow_examples(hand, lead, order)
    assert plays[0] == sorted(cards("2H 2H 3H 3H 4H 10H 10H QH QH"), key=order.sort_key)


def test_a_throw_stands_against_pairs_that_make_no_tractor() -> None:
    # Level 2, hearts trump: AC + QQJJ. KK and 99 are higher pairs but no tractor (10 between).
    order = trump_order(LEVEL_RANK["2"], "H", False)
    lead = make_lead(cards("AC QC QC JC JC"), order)
    assert failed_throw(lead, [cards("KC KC 9C 9C"), cards("3C"), cards("4C")], order) is None
    assert failed_throw(lead, [cards("KC KC AC AC")], order) == lead.components[0]


def test_a_throws_three_pair_tractor_is_beaten_only_by_a_longer_run() -> None:
    order = trump_order(LEVEL_RANK["2"], "H", False)
    lead = make_lead(cards("AC 8C 8C 7C 7C 6C 6C"), order)
    assert failed_throw(lead, [cards("KC KC QC QC")], order) is None
    forced = failed_throw(lead, [cards("KC KC QC QC JC JC")], order)
    assert forced is not None and forced.cards == tuple(cards("6C 6C 7C 7C 8C 8C"))


def test_a_throw_fails_on_a_pair_among_the_off_suit_level_cards() -> None:
    # Level 10, hearts trump: 10S 10S beats the thrown AH AH, whatever else shares its tier.
    order = trump_order(LEVEL_RANK["10"], "H", False)
    lead = make_lead(cards("BJ AH AH"), order)
    forced = failed_throw(lead, [cards("10S 10S 10C")], order)
    assert forced is not None and forced.cards == tuple(cards("AH AH"))


def test_trumps_over_a_throw_are_keyed_by_their_highest_reading() -> None:
    # 334455 over QQJJ + 77 reads as the tractor 4455 (and the pair 33), not 3344 + 55.
    order = trump_order(LEVEL_RANK["2"], "H", False)
    highest = key("4H 4H 5H 5H", "QC QC JC JC", order)
    assert key("3H 3H 4H 4H 5H 5H", "QC QC JC JC 7C 7C", order) == highest
    assert highest != key("3H 3H 4H 4H", "QC QC JC JC", order)


def test_example_leads_come_longest_first_then_low_to_high() -> None:
    order = trump_order(LEVEL_RANK["2"], "H", False)
    found = [(" ".join(map(str, c)), kind)
             for c, kind in lead_examples(cards("3C 4C 4C 5C 5C 9D KH"), order)]
    assert found == [("4C 4C 5C 5C", "tractor"), ("4C 4C", "pair"), ("5C 5C", "pair"),
                     ("3C", "single"), ("4C", "single"), ("5C", "single"), ("9D", "single"),
                     ("KH", "single")]


def test_one_run_of_four_pairs_fills_a_leads_two_tractors() -> None:
    # Level 2, hearts trump: clubs 5566 + 8 + 991010 to a follower holding J-Q-K-A as pairs:
    # the run splits in two, one tractor for each of the lead's.
    order = trump_order(LEVEL_RANK["2"], "H", False)
    lead = make_lead(cards("5C 5C 6C 6C 8C 9C 9C 10C 10C"), order)
    hand = cards("JC JC QC QC KC KC AC AC 3C 4C 7C 4D")
    assert follow_error(hand, cards("JC JC QC QC KC KC AC AC 3C"), lead, order) is None
    found = follow_error(hand, cards("JC JC QC QC KC AC 3C 4C 7C"), lead, order)
    assert found is not None and found[0] == ShengjiReason.MUST_FOLLOW_TRACTOR


def test_a_seat_holding_just_the_leads_count_owes_its_whole_suit_and_no_shape() -> None:
    # The pair 55 to a led pair: all of the suit is owed (and enough), no slot is named.
    exact = follow_constraint(cards("5C 5C 3D"), make_lead(cards("4C 4C"), HEARTS), HEARTS)
    assert exact.describe() == ("play exactly 2 cards", "all 2 of clubs")
    assert exact.requirements() == (Constraint("count", count=2),
                                    Constraint("suit", count=2, group="C"),
                                    Constraint("include", group="C", cards=("5C", "5C")))


def test_the_trumps_a_short_seat_must_play_are_listed_in_the_trump_order() -> None:
    # Level 10, hearts trump: 3H < AH < 10S in the trump order (not 3, 10, A by rank).
    short = follow_constraint(cards("10S AH 3H 5D"), make_lead(cards("4H 4H 6H 6H"), HEARTS),
                              HEARTS)
    assert short.requirements()[-1] == Constraint("include", group=TRUMP,
                                                  cards=("3H", "AH", "10S"))


def test_a_tractor_and_a_titanic_of_the_same_size_never_beat_each_other() -> None:
    # Three packs: six cards of pairs in a run are not a titanic's shape, nor the reverse.
    assert key("6H 6H 6H 7H 7H 7H", "3C 3C 4C 4C 5C 5C") is None
    assert key("6H 6H 7H 7H 8H 8H", "3C 3C 3C 4C 4C 4C") is None
    assert key("6H 6H 6H 7H 7H 7H", "3C 3C 3C 4C 4C 4C") is not None


def test_the_constraint_in_words_for_a_void_seat_and_for_a_titanic() -> None:
    void = follow_constraint(cards("3H 5D 6S"), make_lead(cards("4C 4C"), HEARTS), HEARTS)
    assert void.describe() == ("play exactly 2 cards",
                               "no clubs left: any cards (all trumps with the lead's shape win)")
    lead = make_lead(cards("3C 3C 3C 4C 4C 4C"), TITANIC_SPADES)
    titanic = follow_constraint(cards("7C 7C 7C 8C 8C 8C JC JC 2D"), lead, TITANIC_SPADES)
    assert titanic.describe() == (
        "play exactly 6 cards", "all 6 of clubs", "2 triples in runs matching the lead's titanics",
        "2 tuples in runs matching the lead's tractors and titanics",
        "2 triples where the lead has triples",
        "2 pairs or triples where the lead has pairs or triples")


def test_a_follow_may_keep_its_triples_in_either_run_of_a_two_run_holding() -> None:
    # Level 8, spades trump, 常主 2, three packs: to diamonds 555 66 77 999 101010 (7 and 9 are
    # adjacent) a seat holding 333 44 and QQQ KK AAA owes two triples; breaking the 333 and
    # playing QQQ with AAA meets the same duty as keeping it.
    order = trump_order(LEVEL_RANK["8"], "S", True)
    lead = make_lead(cards("5D 5D 5D 6D 6D 7D 7D 9D 9D 9D 10D 10D 10D"), order)
    hand = cards("3D 3D 3D 4D 4D 6D JD QD QD QD KD KD AD AD AD 5C")
    assert follow_error(hand, cards("3D 3D 3D 4D 4D 6D QD QD KD KD AD AD AD"), lead,
                        order) is None
    assert follow_error(hand, cards("3D 3D 4D 4D 6D QD QD QD KD KD AD AD AD"), lead,
                        order) is None
