"""Invariants every hand must keep, checked by scripted tests and random playouts alike."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from functools import cache
from typing import Any

from fiftyk_referee.domain.cards import card_points, make_deck
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.transcript import adjudicate, export_transcript
from fiftyk_referee.domain.observer import SPECTATOR, SeatViewer, Viewer, seat_of

RESULT_KEYS = ("finish_order", "collected", "teams", "seats", "winner")
CARD_FREE_KEYS = ("own_cards", "trick", "top")  # the seat's own cards and the public trick


def state_of(hand: Hand) -> dict[str, Any]:
    """The aggregate's public attributes (what replaying its events must rebuild)."""
    return {k: v for k, v in vars(hand).items() if not k.startswith("_")}


def replay(events: Sequence[Any]) -> Hand:
    """Rebuild a hand from its events, as the event store does."""
    hand: Any = None
    for event in events:
        hand = event.mutate(hand)
    if not isinstance(hand, Hand):
        raise AssertionError("the events did not rebuild a Hand")
    return hand


def assert_replay_rebuilds(hand: Hand) -> list[Any]:
    """Collect the pending events; replaying them must give identical state. Returns them."""
    events = list(hand.collect_events())
    rebuilt = replay(events)
    assert state_of(rebuilt) == state_of(hand)
    assert (rebuilt.version, rebuilt.id) == (hand.version, hand.id)
    return events


@cache
def _deck_points(packs: int, jokers: bool, joker_points: bool) -> int:
    return sum(card_points(c, joker_points=joker_points) for c in make_deck(packs, jokers=jokers))


def assert_points_conserved(hand: Hand) -> None:
    """Every point card is collected, in a hand or in the stock."""
    rules = hand.rules
    jp = rules.joker_points
    deck_points = _deck_points(rules.packs, rules.jokers, jp)
    held = sum(card_points(c, joker_points=jp) for h in hand.hands for c in h)
    stocked = sum(card_points(c, joker_points=jp) for c in hand.stock)
    in_trick = 0 if hand.is_over else hand.table_points
    assert sum(hand.collected) + held + stocked + in_trick == deck_points


def assert_adjudication_reproduces(hand: Hand) -> dict[str, Any]:
    """Adjudicating the exported transcript (through JSON) gives the live result."""
    transcript = json.loads(json.dumps(export_transcript(hand)))
    ruling = adjudicate(transcript)
    assert ruling["rejected"] is None
    assert ruling["status"] == ("completed" if hand.is_over else "in_progress")
    assert ruling["actions_applied"] == len(hand.actions)
    assert ruling["finish_order"] == hand.out
    assert ruling["collected"] == hand.collected
    if hand.result is not None:
        for key in RESULT_KEYS:
            assert ruling[key] == hand.result[key], key
    return ruling


_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value (keys included)."""
    return _QUOTED.findall(json.dumps(value, default=str))


# Every card in canonical notation, as views write cards.
CARD_STRINGS = frozenset(str(card) for card in make_deck(1, jokers=True))


def assert_views_private(hand: Hand) -> None:
    """Each seat's view holds its own cards and no card hidden in another seat's hand.

    Cards may appear only as the seat's own `own_cards` and in the trick (played, so
    public); the trick must be exactly what was played since the trick began. Spectators
    see no hand at all.
    """
    played: Counter[str] = Counter()
    for entry in hand.trick:
        cards = entry[1]
        if cards is not None:
            played.update(cards)
    viewers: list[Viewer] = [SeatViewer(seat) for seat in range(hand.players)]
    for viewer in [*viewers, SPECTATOR]:
        view = hand.view(viewer)
        seat = seat_of(viewer)
        assert view.stock is None and all(state.cards is None for state in view.seats)
        own = Counter(str(c) for c in hand.hands[seat]) if seat is not None else Counter()
        assert Counter(view.own_cards) == own
        shown: Counter[str] = Counter()
        for entry in view.trick:
            shown.update(entry.cards or ())
        assert shown == played
        if view.top is not None:
            assert Counter(view.top.cards) <= played
        rest = {k: v for k, v in asdict(view).items() if k not in CARD_FREE_KEYS}
        leaked = [s for s in _strings(rest) if s in CARD_STRINGS]
        assert leaked == [], f"{viewer}'s view shows cards {leaked}"
        if not hand.is_over:
            assert view.seed is None
        for state in view.seats:
            if state.seat == seat:
                assert state.card_count == len(hand.hands[state.seat])
            assert state.card_count is None or state.card_count == len(hand.hands[state.seat])
