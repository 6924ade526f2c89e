"""Hypothesis properties of the Shengji rules engine and hand.

- The match vector equals a brute-force oracle that tries every assignment of the
  holding's tuples to the lead's slots: in plain suits (one card per tier) and in trump
  holdings whose steps hold several tuples (the off-suit level cards and 2s), where it
  tries every reading of the holding as runs.
- A holding's vector is the best any n of its cards reach, and the example follows the
  legal-actions answer lists are legal (`follow_error`) and accepted by the hand.
- Every hand hypothesis plays keeps its points, replays from its events and never shows a
  seat another seat's cards.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fiftyk_referee.domain.cards import Card, parse_cards
from fiftyk_referee.domain.shengji import GAME
from fiftyk_referee.domain.shengji.cards import (
    LEVEL_RANK,
    RANKS_LOW_TO_HIGH,
    TrumpOrder,
    trump_order,
)
from fiftyk_referee.domain.shengji.combinations import MIN_RUN, PAIR_WIDTH, TRIPLE_WIDTH
from fiftyk_referee.domain.shengji.play import (
    Lead,
    follow_error,
    follow_examples,
    make_lead,
    match_vector,
)
from tests.unit.shengji.helpers import (
    assert_points_conserved,
    assert_replay_rebuilds,
    assert_views_private,
)
from tests.unit.shengji.test_playouts import step

ORDER = trump_order(LEVEL_RANK["10"], "H", False)
CLUB_RANKS = [r for r in RANKS_LOW_TO_HIGH if r != LEVEL_RANK["10"]]
Vector = tuple[int, int, int, int]


DENSE_RANKS = CLUB_RANKS[3:9]  # six consecutive tiers: runs are common


def clubs(copies: int, max_ranks: int, ranks: Sequence[int] = CLUB_RANKS
          ) -> st.SearchStrategy[list[Card]]:
    """A multiset of clubs: up to `copies` of each of up to `max_ranks` ranks."""
    return st.lists(
        st.tuples(st.sampled_from(list(ranks)), st.integers(1, copies)),
        min_size=1, max_size=max_ranks, unique_by=lambda t: t[0],
    ).map(lambda picks: [Card(rank, "C") for rank, n in picks for _ in range(n)])


def oracle(cards: Sequence[Card], lead: Lead, order: TrumpOrder = ORDER) -> Vector:
    """The match vector by brute force over every assignment of tuples to slots.

    Each tuple is placed on its own, so every reading of the holding as runs is tried:
    where a step holds two tuples, a run may go through either of them.
    """
    counts = Counter(cards)
    tuples = [(order.pos(c), min(n, TRIPLE_WIDTH)) for c, n in counts.items() if n >= 2]
    slots: list[tuple[int | None, int]] = []  # (bin, width)
    for b, (width, length) in enumerate(lead.bins):
        slots += [(b, width)] * length
    slots += [(None, TRIPLE_WIDTH)] * lead.triples + [(None, PAIR_WIDTH)] * lead.pairs
    best: Vector = (0, 0, 0, 0)

    def score(holder: Sequence[tuple[int, int] | None]) -> Vector:
        e1 = e2 = 0
        for b, (width, _) in enumerate(lead.bins):
            e1_bin, e2_bin = _runs([h for h, s in zip(holder, slots, strict=True)
                                    if s[0] == b], width)
            e1 += e1_bin
            e2 += e2_bin
        e3 = sum(1 for h, s in zip(holder, slots, strict=True)
                 if h is not None and s[1] == TRIPLE_WIDTH and h[1] == TRIPLE_WIDTH)
        return e1, e2, e3, sum(1 for h in holder if h is not None)

    def fill(holder: list[tuple[int, int] | None], free: frozenset[int]) -> None:
        nonlocal best
        if len(holder) == len(slots):
            best = max(best, score(holder))
            return
        fill([*holder, None], free)
        for t in free:
            fill([*holder, tuples[t]], free - {t})

    fill([], frozenset(range(len(tuples))))
    return best


def _runs(cells: Sequence[tuple[int, int] | None], bin_width: int) -> tuple[int, int]:
    """(triples in X's titanics, tuples in X's runs) placed along one bin's slots."""
    e1 = e2 = 0
    i = 0
    while i < len(cells):
        j = i
        while (cells[i] is not None and j + 1 < len(cells) and cells[j + 1] is not None
               and _step(cells[j], cells[j + 1])):
            j += 1
        if j > i:
            e2 += j - i + 1
            if bin_width == TRIPLE_WIDTH:
                e1 += _triple_stretches([c[1] for c in cells[i:j + 1] if c is not None])
        i = j + 1
    return e1, e2


def _step(a: tuple[int, int] | None, b: tuple[int, int] | None) -> bool:
    return a is not None and b is not None and abs(a[0] - b[0]) == 1 and (
        a[0] < b[0])


def _triple_stretches(widths: Sequence[int]) -> int:
    total = streak = 0
    for width in (*widths, 0):
        if width == TRIPLE_WIDTH:
            streak += 1
        else:
            total += streak if streak >= MIN_RUN else 0
            streak = 0
    return total


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lead_cards=clubs(3, 4, DENSE_RANKS), held=clubs(3, 5, DENSE_RANKS))
def test_match_vector_equals_the_brute_force_oracle(lead_cards: list[Card],
                                                    held: list[Card]) -> None:
    lead = make_lead(lead_cards, ORDER)
    assert match_vector(Counter(held), lead, ORDER)[0] == oracle(held, lead)


CHANGZHU = trump_order(LEVEL_RANK["10"], "H", True)
# Trump steps around the ones that hold several tuples: the off-suit 10s (and, under
# `permanent_two`, the off-suit 2s) share a step between AH and 10H.
LEVEL_STEPS = "QH KH AH 10S 10C 10D 10H SJ"
CHANGZHU_STEPS = "KH AH 2S 2C 2D 2H 10S 10C 10H"
LOW_TRUMPS = "3H 4H 5H 6H 7H"
TrumpCase = tuple[TrumpOrder, list[Card], list[Card]]


def copies(pool: str, fewest: int, most: int, max_cards: int) -> st.SearchStrategy[list[Card]]:
    """A multiset of cards of `pool`: `fewest` to `most` copies of up to `max_cards` cards."""
    return st.lists(
        st.tuples(st.sampled_from(pool.split()), st.integers(fewest, most)),
        min_size=1, max_size=max_cards, unique_by=lambda t: t[0],
    ).map(lambda picks: [c for text, n in picks for c in parse_cards([text] * n)])


@st.composite
def trump_runs(draw: st.DrawFn) -> list[Card]:
    """A low trump tractor or titanic, sometimes with a pair or triple beside it."""
    ranks = LOW_TRUMPS.split()
    width = draw(st.integers(PAIR_WIDTH, TRIPLE_WIDTH))
    length = draw(st.integers(MIN_RUN, len(ranks) - 1))
    start = draw(st.integers(0, len(ranks) - 1 - length))
    run = [text for text in ranks[start:start + length] for _ in range(width)]
    extra = draw(st.sampled_from(["", "SJ SJ", "SJ SJ SJ"]))
    return parse_cards(run + extra.split())


def trump_cases() -> st.SearchStrategy[TrumpCase]:
    """A trump order, a low trump lead and a holding of tuples around the shared steps."""
    leads = st.one_of(copies(LOW_TRUMPS, 1, 3, 4), trump_runs())
    return st.one_of(
        st.tuples(st.just(ORDER), leads, copies(LEVEL_STEPS, 2, 3, 6)),
        st.tuples(st.just(CHANGZHU), leads, copies(CHANGZHU_STEPS, 2, 3, 6)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=trump_cases())
@example(case=(ORDER, parse_cards("3H 3H 4H 4H 5H 5H 6H 6H"),
               parse_cards("AH AH 10S 10S 10C 10C 10H 10H 8H 8H")))
@example(case=(ORDER, parse_cards("10D 10D 10H 10H SJ SJ SJ"),
               parse_cards("AH AH AH 10C 10C 10S 10S 10S 5H")))
def test_match_vector_is_the_best_over_every_reading_of_a_trump_holding(
        case: TrumpCase) -> None:
    order, lead_cards, held = case
    lead = make_lead(lead_cards, order)
    assert match_vector(Counter(held), lead, order)[0] == oracle(held, lead, order)


@settings(max_examples=100, deadline=None)
@given(lead_cards=clubs(2, 4), held=clubs(2, 6), others=st.integers(0, 4))
def test_the_holdings_vector_is_reached_and_examples_are_legal(
        lead_cards: list[Card], held: list[Card], others: int) -> None:
    lead = make_lead(lead_cards, ORDER)
    n = lead.size
    fillers = [Card(rank, suit) for suit in "DS" for rank in CLUB_RANKS]
    hand = held + fillers[:others + max(0, n - len(held))]  # every seat holds ≥ n cards
    plays, truncated = follow_examples(hand, lead, ORDER)
    assert plays
    for play in plays:
        assert len(play) == n and not Counter(play) - Counter(hand)
        assert follow_error(hand, play, lead, ORDER) is None
    if not truncated:  # a complete answer lists every legal follow
        every = {tuple(sorted(p)) for p in itertools.combinations(hand, n)
                 if follow_error(hand, p, lead, ORDER) is None}
        assert every == {tuple(sorted(p)) for p in plays}
    if len(held) > n:
        want, witness = match_vector(Counter(held), lead, ORDER, witness=True)
        assert len(witness) <= n and not Counter(witness) - Counter(held)
        assert match_vector(Counter(witness), lead, ORDER)[0] == want
        best = max(match_vector(Counter(subset), lead, ORDER)[0]
                   for subset in itertools.combinations(held, n))
        assert best == want


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(preset=st.sampled_from(["tractor", "titanic", "shengji_one_pack", "tractor_changzhu"]),
       seed=st.binary(min_size=32, max_size=32), choices=st.integers(0, 2**32))
def test_hands_keep_points_replay_and_stay_private(preset: str, seed: bytes,
                                                   choices: int) -> None:
    rules = GAME.rules(preset, {"declare_pacing": "final"})
    hand = GAME.deal(table_id="p", number=1, rules=rules, players=4, dealer=0,
                     seat_players=[None] * 4, carry={}, deck=None, seed=seed)
    rng = random.Random(choices)
    events = list(hand.collect_events())
    while not hand.is_over:
        step(hand, rng)
        assert_points_conserved(hand)
        assert_views_private(hand)
    events += list(hand.collect_events())
    assert_replay_rebuilds(hand, events)
