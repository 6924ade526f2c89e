"""Hypothesis properties of the Shengji rules engine and hand.

- The match vector equals a brute-force oracle that tries every assignment of the
  holding's tuples to the lead's slots (plain suits: one card per tier).
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

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.shengji import GAME
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, RANKS_LOW_TO_HIGH, trump_order
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


def oracle(cards: Sequence[Card], lead: Lead) -> Vector:
    """The match vector by brute force over every assignment of tuples to slots."""
    counts = Counter(cards)
    tuples = [(ORDER.pos(c), min(n, TRIPLE_WIDTH)) for c, n in counts.items() if n >= 2]
    slots: list[tuple[int | None, int, int]] = []  # (bin, index in bin, width)
    for b, (width, length) in enumerate(lead.bins):
        slots += [(b, i, width) for i in range(length)]
    slots += [(None, 0, TRIPLE_WIDTH)] * lead.triples + [(None, 0, PAIR_WIDTH)] * lead.pairs
    best: Vector = (0, 0, 0, 0)
    for choice in itertools.product(range(-1, len(slots)), repeat=len(tuples)):
        used = [c for c in choice if c >= 0]
        if len(used) != len(set(used)):
            continue
        holder = {slot: tuples[t] for t, slot in enumerate(choice) if slot >= 0}
        e1 = e2 = 0
        for b, (width, length) in enumerate(lead.bins):
            base = next(i for i, s in enumerate(slots) if s[0] == b)
            cells = [holder.get(base + i) for i in range(length)]
            e1_bin, e2_bin = _runs(cells, width)
            e1 += e1_bin
            e2 += e2_bin
        e3 = sum(1 for slot, (_, w) in holder.items()
                 if slots[slot][2] == TRIPLE_WIDTH and w == TRIPLE_WIDTH)
        vector = (e1, e2, e3, len(holder))
        best = max(best, vector)
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


@settings(max_examples=100, deadline=None)
@given(lead_cards=clubs(2, 4), held=clubs(2, 6), others=st.integers(0, 4))
def test_the_holdings_vector_is_reached_and_examples_are_legal(
        lead_cards: list[Card], held: list[Card], others: int) -> None:
    lead = make_lead(lead_cards, ORDER)
    n = lead.size
    fillers = [Card(rank, suit) for suit in "DS" for rank in CLUB_RANKS]
    hand = held + fillers[:others + max(0, n - len(held))]  # every seat holds ≥ n cards
    plays, _ = follow_examples(hand, lead, ORDER)
    assert plays
    for play in plays:
        assert len(play) == n and not Counter(play) - Counter(hand)
        assert follow_error(hand, play, lead, ORDER) is None
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
