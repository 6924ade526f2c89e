"""The work the hot paths of the engine do, counted rather than timed (issue 25).

Timings move with the machine's load; the lines a function runs and the calls it makes do
not. Each test pins one saving of the performance pass, so a change that loses it fails here
(and `./scripts/bench compare` shows what it costs in time).
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from fiftyk_referee.domain.cards import canonical_key, make_deck, sort_key
from fiftyk_referee.domain.fiftyk import legal
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset

# Lines of legal.py run per lead (no top play) on the 40 seeded hands below: 1,084 before the
# pass, 898 after it (runs skip the starts whose ranks held in a row are too few).
LEAD_LINES_BUDGET = 950
HANDS_SEED = 20_240_501  # bench/rules.py's deal
HAND_SIZE = 27


def _hands(ruleset: Ruleset) -> list[list[Any]]:
    rng = random.Random(HANDS_SEED)
    hands = []
    for _ in range(10):
        deck = make_deck(ruleset.packs, jokers=ruleset.jokers)
        rng.shuffle(deck)
        hands += [deck[seat * HAND_SIZE:(seat + 1) * HAND_SIZE] for seat in range(4)]
    return hands


def _lines_run(filename: str, work: Callable[[], object]) -> int:
    """How many lines of `filename` run while `work` runs."""
    count = 0

    def local(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        return local if frame.f_code.co_filename == filename else None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        work()
    finally:
        sys.settrace(previous)
    return count


@contextmanager
def _functions_called() -> Iterator[list[str]]:
    """The qualified names of the Python functions called inside the block."""
    called: list[str] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            called.append(frame.f_code.co_qualname)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield called
    finally:
        sys.setprofile(previous)


def test_a_leads_legal_plays_stay_within_their_line_budget() -> None:
    ruleset = Ruleset.from_spec("classic")
    hands = _hands(ruleset)
    legal.legal_plays(hands[0], None, ruleset)  # the ruleset's tables, built once

    def leads() -> None:
        for hand in hands:
            legal.forget_hands()  # a first look at each hand, as the benchmark times it
            legal.legal_plays(hand, None, ruleset)

    lines = _lines_run(legal.__file__, leads)
    assert lines / len(hands) <= LEAD_LINES_BUDGET


def test_an_aggregate_applies_the_events_it_records_without_the_stored_events_checks() -> None:
    # `mutate` checks an event read back from a store against the aggregate (its id, the
    # next version); an event the aggregate has just made for itself needs neither.
    hand = Hand.deal_new(table_id="work", number=1, ruleset=Ruleset.from_spec("classic"),
                         players=4, dealer=3, seed=bytes(32))
    seat = hand.turn
    assert seat is not None
    lowest = min(hand.hands[seat], key=sort_key)
    with _functions_called() as called:
        hand.play(seat, [lowest])
    assert "Hand.CardsPlayed.apply" in called
    assert not [name for name in called if name.endswith("mutate")]
    replayed: Any = None
    for event in hand.collect_events():
        replayed = event.mutate(replayed)  # replaying still checks every event
    assert replayed == hand


def test_canonical_keys_are_small_ints_that_order_cards_as_sort_key_does() -> None:
    cards = make_deck(2, jokers=True)
    random.Random(1).shuffle(cards)
    assert all(type(canonical_key(card)) is int for card in cards)
    assert sorted(cards, key=canonical_key) == sorted(cards, key=sort_key)
