"""斗地主's combinations: every kind, every option both ways, the readings of ambiguous cards
and who beats what (docs/doudizhu.md#combinations)."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fiftyk_referee.domain.cards import (
    ACE,
    BIG_JOKER,
    KING,
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
    FOUR_TWO_PAIRS,
    FOUR_TWO_SINGLES,
    KINDS,
    OPTION_SPECS,
    PAIR,
    PAIR_STRAIGHT,
    PLANE,
    PLANE_PAIRS,
    PLANE_SINGLES,
    READING_CACHE_SIZE,
    RLCARD,
    ROCKET,
    SINGLE,
    STRAIGHT,
    TRIPLE,
    TRIPLE_PAIR,
    TRIPLE_SINGLE,
    Combination,
    ComboOptions,
    _readings,
    beats,
    classify,
    describe,
    forget_readings,
    read_play,
    readings,
)
from fiftyk_referee.domain.doudizhu.legal import legal_plays
from fiftyk_referee.domain.errors import InvalidRuleset

_RANK_BY_CHAR = {str(r): r for r in range(3, 10)} | {
    "T": 10, "J": 11, "Q": 12, "K": KING, "A": ACE, "2": TWO, "S": SMALL_JOKER, "B": BIG_JOKER,
}


def cards(text: str) -> list[Card]:
    """Cards from rank characters, suits dealt round-robin per rank: '333T' -> 3S 3H 3C 10S;
    S and B are the small and big joker."""
    dealt: dict[int, int] = {}
    out: list[Card] = []
    for char in text.replace(" ", ""):
        rank = _RANK_BY_CHAR[char]
        if rank >= SMALL_JOKER:
            out.append(Card(rank, ""))
            continue
        n = dealt.get(rank, 0)
        dealt[rank] = n + 1
        out.append(Card(rank, SUITS[n]))
    return out


def combo(text: str, options: ComboOptions = DEFAULT) -> Combination:
    found = classify(cards(text), options)
    assert found is not None, text
    return found


@pytest.mark.parametrize(("text", "kind", "rank", "length"), [
    ("3", SINGLE, 3, 1),
    ("B", SINGLE, BIG_JOKER, 1),
    ("22", PAIR, TWO, 1),
    ("JJJ", TRIPLE, 11, 1),
    ("JJJ3", TRIPLE_SINGLE, 11, 1),
    ("222S", TRIPLE_SINGLE, TWO, 1),
    ("333 22", TRIPLE_PAIR, 3, 1),
    ("34567", STRAIGHT, 7, 5),
    ("3456789TJQKA", STRAIGHT, ACE, 12),
    ("33 44 55", PAIR_STRAIGHT, 5, 3),
    ("QQ KK AA", PAIR_STRAIGHT, ACE, 3),
    ("333 444", PLANE, 4, 2),
    ("KKK AAA", PLANE, ACE, 2),
    ("333 444 555 666 777 888", PLANE, 8, 6),
    ("333 444 9 J", PLANE_SINGLES, 4, 2),
    ("333 444 S 2", PLANE_SINGLES, 4, 2),
    ("555 666 777 3 4 B", PLANE_SINGLES, 7, 3),
    ("QQQ KKK AAA 222", PLANE_SINGLES, ACE, 3),  # 2 is no chain rank: 222 never extends it
    ("333 444 99 JJ", PLANE_PAIRS, 4, 2),
    ("333 444 555 666 77 88 99 22", PLANE_PAIRS, 6, 4),
    ("5555 3 K", FOUR_TWO_SINGLES, 5, 1),
    ("2222 S 3", FOUR_TWO_SINGLES, TWO, 1),
    ("5555 33 KK", FOUR_TWO_PAIRS, 5, 1),
    ("7777", BOMB, 7, 1),
    ("2222", BOMB, TWO, 1),
    ("SB", ROCKET, BIG_JOKER, 1),
])
def test_each_kind_is_read_with_its_deciding_rank_and_length(
    text: str, kind: str, rank: int, length: int
) -> None:
    got = combo(text)
    assert (got.kind, got.rank, got.length) == (kind, rank, length)
    assert got.cards == tuple(sorted(cards(text), key=canonical_key))


def test_every_kind_of_the_plan_is_covered() -> None:
    assert set(KINDS) == {
        SINGLE, PAIR, TRIPLE, TRIPLE_SINGLE, TRIPLE_PAIR, STRAIGHT, PAIR_STRAIGHT, PLANE,
        PLANE_SINGLES, PLANE_PAIRS, FOUR_TWO_SINGLES, FOUR_TWO_PAIRS, BOMB, ROCKET,
    }


@pytest.mark.parametrize("text", [
    "",
    "34",  # two ranks
    "SS",  # (not in one pack) two small jokers are no pair
    "3456",  # four singles are too short a straight
    "JQKA2",  # 2 is never in a chain
    "TJQKAS",  # nor a joker
    "34568",  # a gap
    "33 44",  # two pairs are too short a pair straight
    "KK AA 22",
    "AAA 222",  # no 2 in a plane
    "333 555",  # not consecutive
    "3333 4",  # the single kicker of a triple is never its own rank: this is no combination
    "333 SB",  # the rocket is not a pair
    "5555 SB 33",  # nor a pair kicker of 四带两对
    "333 444 5",  # too few wings
    "333 444 55 6",  # wings of both sizes
    "333 444 555 66 77 8",  # three triples, two pairs and a single: neither
    "3333 4444",  # two bombs
    "5555 3",
    "5555 33 4",
    "5555 3 4 6",
    "4444 5555 6666",
    "333 444 3 4",  # never a wing of the plane's own ranks (7 cards anyway)
])
def test_cards_that_form_nothing_are_no_combination(text: str) -> None:
    for options in (DEFAULT, DOUZERO, RLCARD):
        assert classify(cards(text), options) is None, text


def test_own_rank_kicker_is_a_bomb_not_a_triple_with_a_single() -> None:
    assert combo("3333").kind == BOMB
    assert combo("3333", DOUZERO).kind == BOMB


# Each option, both ways: (option, cards, reading with the option on, reading with it off).
OPTION_EXAMPLES = [
    ("kickers_share_rank", "333 444 55", (PLANE_SINGLES, 4, 2), None),
    ("kickers_share_rank", "4444 55", (FOUR_TWO_SINGLES, 4, 1), None),
    ("kickers_share_rank", "333 444 555 999", (PLANE_SINGLES, 5, 3), None),
    ("kickers_share_rank", "333 444 555 66 7", (PLANE_SINGLES, 5, 3), None),  # mixed wings
    ("kickers_whole_bomb", "333 444 555 666 9999", (PLANE_SINGLES, 6, 4), None),
    ("kickers_rocket", "3333 SB", (FOUR_TWO_SINGLES, 3, 1), None),
    ("kickers_rocket", "333 444 SB", (PLANE_SINGLES, 4, 2), None),
    ("kickers_pairs_one_rank", "3333 5555", (FOUR_TWO_PAIRS, 5, 1), None),
    ("kickers_pairs_one_rank", "333 444 5555", (PLANE_PAIRS, 4, 2), None),
    ("kickers_adjacent_triple", "333 444 555 666 777 8", (PLANE_SINGLES, 7, 4), None),
    ("kickers_adjacent_triple", "444 555 666 777 888 Q", (PLANE_SINGLES, 8, 4), None),
    ("four_two_singles", "4444 5 6", (FOUR_TWO_SINGLES, 4, 1), None),
    ("four_two_pairs", "4444 55 66", (FOUR_TWO_PAIRS, 4, 1), None),
]


@pytest.mark.parametrize(("name", "text", "on", "off"), OPTION_EXAMPLES)
def test_each_option_decides_its_example_both_ways(
    name: str, text: str, on: tuple[str, int, int], off: None
) -> None:
    enabled = dataclasses.replace(DEFAULT, **{name: True})
    disabled = dataclasses.replace(DEFAULT, **{name: False})
    got = combo(text, enabled)
    assert (got.kind, got.rank, got.length) == on
    assert classify(cards(text), disabled) is off


def test_every_option_has_an_example_both_ways() -> None:
    assert {name for name, *_ in OPTION_EXAMPLES} == {spec.name for spec in OPTION_SPECS}


def test_wings_of_a_triple_away_from_the_plane_are_fine_by_default() -> None:
    # 999TTTJJJ with 777: 777 is no neighbour of the plane, so no longer plane hides in it.
    assert combo("999 TTT JJJ 777").rank == 11
    # 777 next to 333444555666 would make a plane of five (with 8 left over): not wings.
    assert classify(cards("333 444 555 666 777 8")) is None
    assert combo("999 TTT JJJ 888") == combo("888 999 TTT JJJ")  # a plane of four


def test_a_plane_with_a_neighbouring_triple_reads_three_ways_under_douzero() -> None:
    found = readings(cards("333 444 555 666"), DOUZERO)
    assert [(c.kind, c.rank, c.length) for c in found] == [
        (PLANE, 6, 4), (PLANE_SINGLES, 6, 3), (PLANE_SINGLES, 5, 3),
    ]
    assert [(c.kind, c.rank) for c in readings(cards("333 444 555 666"))] == [(PLANE, 6)]


def test_a_lead_is_the_longest_main_part_then_the_highest_rank() -> None:
    assert combo("333 444 555 666", DOUZERO).kind == PLANE
    double = dataclasses.replace(DEFAULT, kickers_pairs_one_rank=True)
    assert combo("3333 5555", double).rank == 5


def test_a_follow_is_read_as_the_reading_that_beats_the_table() -> None:
    top = combo("333 444 555 789", DOUZERO)
    play = read_play(cards("333 444 555 666"), top, DOUZERO)
    assert play is not None
    assert (play.kind, play.rank, play.length) == (PLANE_SINGLES, 6, 3)
    # Under the rule book those cards are only a plane of four: they do not follow.
    default_top = combo("333 444 555 789")
    assert read_play(cards("333 444 555 666"), default_top) is None
    assert read_play(cards("444 555 666 789"), default_top) == combo("444 555 666 789")


def test_read_play_of_a_lead_is_the_classification() -> None:
    assert read_play(cards("333 444 555 666"), None, DOUZERO) == combo("333444555666", DOUZERO)
    assert read_play(cards("34"), None) is None


BEATS_TABLE = [
    ("4", "3", True),
    ("3", "4", False),
    ("2", "A", True),
    ("S", "2", True),
    ("B", "S", True),
    ("44", "4", False),  # another kind
    ("44", "33", True),
    ("33", "33", False),  # equal is not higher
    ("45678", "34567", True),
    ("456789", "34567", False),  # another length
    ("44 55 66", "33 44 55", True),
    ("44 55 66 77", "33 44 55", False),
    ("444 555", "333 444", True),
    ("444 3", "333 K", True),  # the triple decides, not the kicker
    ("333 A", "333 K", False),
    ("444 33", "333 22", True),
    ("444 3", "333 22", False),
    ("444 555 3 6", "333 444 A 2", True),
    ("444 555 33 66", "333 444 AA 22", True),
    ("444 555 33 66", "333 444 A 2", False),
    ("5555 3 4", "4444 A 2", True),
    ("5555 33 44", "4444 AA 22", True),
    ("5555 3 4", "4444 AA 22", False),
    ("3333", "3456789TJQKA", True),  # a bomb beats any non-bomb
    ("3333", "2222 S 3", True),
    ("3333", "2", True),
    ("4444", "3333", True),
    ("3333", "4444", False),
    ("2222", "SB", False),
    ("SB", "2222", True),
    ("SB", "3", True),
    ("SB", "SB", False),
    ("2222 3 4", "3333", False),  # 四带二 is no bomb
    ("3", "3333", False),
]


@pytest.mark.parametrize(("play", "top", "expected"), BEATS_TABLE)
def test_who_beats_what(play: str, top: str, expected: bool) -> None:
    assert beats(combo(play), combo(top)) is expected


def test_options_round_trip_through_ruleset_values() -> None:
    for options in (DEFAULT, DOUZERO, RLCARD):
        values = options.to_options()
        assert set(values) == {spec.name for spec in OPTION_SPECS}
        assert ComboOptions.from_options({**values, "preset": "x", "base": 1}) == options
    assert ComboOptions.from_options({}) == DEFAULT
    assert {spec.name: spec.default for spec in OPTION_SPECS} == DEFAULT.to_options()


def test_an_option_that_is_not_a_bool_is_refused_with_its_name() -> None:
    with pytest.raises(InvalidRuleset, match="kickers_rocket"):
        ComboOptions.from_options({"kickers_rocket": "yes"})


def test_options_and_combinations_are_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT.kickers_rocket = True  # type: ignore[misc]
    with pytest.raises(AttributeError):
        combo("3").rank = 4  # type: ignore[misc]
    assert hash(DEFAULT) == hash(ComboOptions())
    assert ComboOptions() == DEFAULT
    assert DOUZERO != DEFAULT


def test_engine_instances_differ_where_the_engines_do() -> None:
    # DouZero's generator takes any cards outside the main part as wings; RLCard's takes no
    # bomb, no rocket and no triple next to the plane. Both take a pair as two single kickers.
    for text in ("333 444 SB", "3333 SB", "333 444 555 666 9999",
                 "333 444 555 666 777 8"):
        assert classify(cards(text), DOUZERO) is not None, text
        assert classify(cards(text), RLCARD) is None, text
    for text in ("333 444 55", "4444 55", "333 444 555 999"):
        assert classify(cards(text), DOUZERO) is not None
        assert classify(cards(text), RLCARD) is not None


def test_describe_names_kind_rank_and_length() -> None:
    assert describe(combo("333 444 9 J")) == "plane_singles of 2 up to 4"
    assert describe(combo("SB")) == "rocket of BJ"
    assert str(combo("33")) == "pair(3S 3H)"


DECK = make_deck(1, jokers=True)
# Cards of one rank in a drawn hand: triples weigh most (planes need runs of them).
RANK_COUNTS = st.sampled_from([0, 1, 2, 3, 3, 3, 4])
ALL_OPTIONS = [DEFAULT, DOUZERO, RLCARD, dataclasses.replace(
    DEFAULT, kickers_share_rank=False, kickers_pairs_one_rank=True, kickers_adjacent_triple=True)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(DECK), min_size=1, max_size=12, unique=True),
       st.sampled_from(ALL_OPTIONS), st.randoms(use_true_random=False))
def test_a_reading_does_not_depend_on_the_order_of_the_cards(
    hand: list[Card], options: ComboOptions, rng: random.Random
) -> None:
    shuffled = list(hand)
    rng.shuffle(shuffled)
    assert readings(hand, options) == readings(shuffled, options)
    for reading in readings(hand, options):
        assert reading.cards == tuple(sorted(hand, key=canonical_key))
        assert beats(reading, reading) is False


@st.composite
def bunched_cards(draw: st.DrawFn) -> list[Card]:
    """Up to 20 cards bunched on neighbouring ranks, where planes and bombs live."""
    low = draw(st.integers(3, TWO))
    hand: list[Card] = []
    for offset, count in enumerate(draw(st.lists(RANK_COUNTS, min_size=1, max_size=7))):
        if low + offset <= TWO:
            hand += [Card(low + offset, suit) for suit in SUITS[:count]]
    hand += [Card(rank, "") for rank in (SMALL_JOKER, BIG_JOKER) if draw(st.booleans())]
    return hand[:20]


@settings(max_examples=400, deadline=None)
@given(bunched_cards(), st.fixed_dictionaries(
    {name: st.booleans() for name in ("kickers_share_rank", "kickers_whole_bomb",
                                      "kickers_rocket", "four_two_singles", "four_two_pairs")}))
def test_without_the_two_ambiguous_options_cards_read_at_most_one_way(
    hand: list[Card], flags: dict[str, bool]
) -> None:
    options = ComboOptions(**flags)
    assert not options.ambiguous
    assert len(readings(hand, options)) <= 1
    for play in legal_plays(hand, None, options):
        assert readings(play.cards, options) == (play,)


@pytest.mark.parametrize("options", [DEFAULT, DOUZERO])
def test_a_remembered_reading_equals_a_first_reading_in_any_order(options: ComboOptions) -> None:
    rng = random.Random(20_261_202)
    for _ in range(12):
        hand = rng.sample(DECK, 20)
        for play in legal_plays(hand, None, options)[:40]:
            shuffled = list(play.cards)
            forget_readings()
            first = readings(shuffled, options)
            rng.shuffle(shuffled)
            assert readings(shuffled, options) == first
            forget_readings()
            assert readings(shuffled, options) == first and first[0] == play
    for _ in range(3):  # refusals are remembered too, and stay refusals
        assert classify(cards("34"), options) is None


def test_the_readings_cache_stays_within_its_bound() -> None:
    rng = random.Random(20_261_202)
    for _ in range(READING_CACHE_SIZE + 500):
        classify(rng.sample(DECK, 3), DEFAULT)
    assert _readings.cache_info().currsize <= READING_CACHE_SIZE


# -- An independent reading, straight from the rule book ----------------------------------------
# Each kind is tried as "take the main part out, then look at what is left", by brute force over
# every rank the main part could start at; the engine reads a rank count pattern instead.


LENIENT = ComboOptions(**{f.name: True for f in dataclasses.fields(ComboOptions)})


def _rule_book_readings(ranks: Counter[int], o: ComboOptions) -> set[tuple[str, int, int]]:
    n = sum(ranks.values())
    found: set[tuple[str, int, int]] = set()
    if n == 0:
        return found
    natural = range(3, TWO + 1)
    for rank in natural:
        for kind, size in ((SINGLE, 1), (PAIR, 2), (TRIPLE, 3), (BOMB, 4)):
            if ranks == Counter({rank: size}):
                found.add((kind, rank, 1))
    for joker in (SMALL_JOKER, BIG_JOKER):
        if ranks == Counter({joker: 1}):
            found.add((SINGLE, joker, 1))
    if ranks == Counter({SMALL_JOKER: 1, BIG_JOKER: 1}):
        found.add((ROCKET, BIG_JOKER, 1))
    for width, kind, shortest in ((1, STRAIGHT, 5), (2, PAIR_STRAIGHT, 3), (3, PLANE, 2)):
        for low in range(3, ACE + 1):
            for high in range(low + shortest - 1, ACE + 1):
                if ranks == Counter({r: width for r in range(low, high + 1)}):
                    found.add((kind, high, high - low + 1))
    for low in range(3, TWO + 1):
        for high in range(low, TWO + 1):
            steps = high - low + 1
            if steps > 1 and high > ACE:  # a plane stays within 3..A; a triple may be of 2s
                continue
            body = Counter({r: 3 for r in range(low, high + 1)})
            if any(ranks[r] < 3 for r in body):
                continue
            rest = ranks - body
            if any(r in body for r in rest):
                continue
            if sum(rest.values()) == steps and _singles_ok(rest, low, high, steps, o):
                found.add((TRIPLE_SINGLE if steps == 1 else PLANE_SINGLES, high, steps))
            if sum(rest.values()) == 2 * steps and _pairs_ok(rest, o):
                found.add((TRIPLE_PAIR if steps == 1 else PLANE_PAIRS, high, steps))
    for four in natural:
        if ranks[four] != 4:
            continue
        rest = ranks - Counter({four: 4})
        if o.four_two_singles and sum(rest.values()) == 2 and _singles_ok(rest, 0, 0, 2, o):
            found.add((FOUR_TWO_SINGLES, four, 1))
        if o.four_two_pairs and sum(rest.values()) == 4 and _pairs_ok(rest, o):
            found.add((FOUR_TWO_PAIRS, four, 1))
    return found


def _singles_ok(rest: Counter[int], low: int, high: int, steps: int, o: ComboOptions) -> bool:
    if steps == 1 and low:  # 三带一: any one card
        return True
    if not o.kickers_share_rank and any(c > 1 for c in rest.values()):
        return False
    if not o.kickers_whole_bomb and any(c == 4 for c in rest.values()):
        return False
    if not o.kickers_rocket and rest[SMALL_JOKER] and rest[BIG_JOKER]:
        return False
    neighbours = [r for r in (low - 1, high + 1) if low and 3 <= r <= ACE]
    return o.kickers_adjacent_triple or all(rest[r] < 3 for r in neighbours)


def _pairs_ok(rest: Counter[int], o: ComboOptions) -> bool:
    return all(r <= TWO and (c == 2 or (c == 4 and o.kickers_pairs_one_rank))
               for r, c in rest.items())


@settings(max_examples=200, deadline=None)
@given(bunched_cards(), st.fixed_dictionaries(
    {f.name: st.booleans() for f in dataclasses.fields(ComboOptions)}))
def test_readings_are_the_rule_books_readings(hand: list[Card], flags: dict[str, bool]) -> None:
    options = ComboOptions(**flags)
    # Candidates: what the hand could play under the most lenient options, the hand itself.
    leads = legal_plays(hand, None, LENIENT)
    for play in [hand, *(p.cards for p in leads[::max(1, len(leads) // 60)])]:
        got = {(c.kind, c.rank, c.length) for c in readings(play, options)}
        assert got == _rule_book_readings(Counter(c.rank for c in play), options), play
