"""Invariants every hand must keep, checked by scripted tests and random playouts alike."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from domain.cards import Card, card_points, make_deck, parse_card
from domain.errors import RuleError
from domain.hand import Hand
from domain.transcript import adjudicate, export_transcript

RESULT_KEYS = ("finish_order", "collected", "teams", "seats", "winner")
CARD_FREE_KEYS = ("cards", "trick", "top")  # the seat's own cards and the public trick


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


def assert_points_conserved(hand: Hand) -> None:
    """Every point card is collected, in a hand or in the stock."""
    rules = hand.rules
    jp = rules.joker_points
    deck_points = sum(card_points(c, joker_points=jp)
                      for c in make_deck(rules.packs, jokers=rules.jokers))
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


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def _as_card(text: str) -> Card | None:
    try:
        card = parse_card(text)
    except RuleError:
        return None
    return card if str(card) == text else None


def assert_views_private(hand: Hand) -> None:
    """Each seat's view holds its own cards and no card hidden in another seat's hand.

    Cards may appear only as the seat's own `cards` and in the trick (played, so public);
    the trick must be exactly what was played since the trick began.
    """
    played: Counter[str] = Counter()
    for entry in hand.trick:
        cards = entry[1]
        if cards is not None:
            played.update(cards)
    for seat in range(hand.players):
        view = hand.view(seat)
        assert "hands" not in view and "stock" not in view
        assert Counter(view["cards"]) == Counter(str(c) for c in hand.hands[seat])
        shown: Counter[str] = Counter()
        for entry in view["trick"]:
            shown.update(entry.get("cards", []))
        assert shown == played
        if view["top"] is not None:
            assert Counter(view["top"]["cards"]) <= played
        rest = {k: v for k, v in view.items() if k not in CARD_FREE_KEYS}
        leaked = [s for s in _strings(rest) if _as_card(s) is not None]
        assert leaked == [], f"seat {seat}'s view shows cards {leaked}"
        if not hand.is_over:
            assert view["seed"] is None
        counts = view["counts"]
        assert counts[seat] == len(hand.hands[seat])
        for other, count in enumerate(counts):
            assert count is None or count == len(hand.hands[other])
