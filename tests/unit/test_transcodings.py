"""Domain transcodings: snapshots restore aggregates exactly, events stay plain JSON."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from typing import Any

from eventsourcing.persistence import Mapper

from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.fiftyk import GAME
from fiftyk_referee.domain.fiftyk.combinations import Combination
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.observer import AUDITOR
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.aggregates import AggregateSnapshot
from fiftyk_referee.service.core.transcodings import DomainTranscoder


def mapper() -> Mapper[Any]:
    return Mapper(transcoder=DomainTranscoder())


def roundtrip(value: Any) -> Any:
    transcoder = DomainTranscoder()
    return transcoder.decode(transcoder.encode(value))


def played_hand(moves: int, *, until_mid_trick: bool = False) -> Hand:
    """A five-card hand (it has a stock) after some random legal moves."""
    rng = random.Random(3)
    hand = Hand.deal_new(table_id="t", number=1, ruleset=Ruleset.from_spec("five_card"),
                         players=3, dealer=0, seed=bytes(32))
    for _ in range(moves):
        if until_mid_trick and hand.passed and hand.top is not None and hand.tricks_won:
            break
        seat = hand.turn
        assert seat is not None
        plays = hand.legal_plays(seat)
        if hand.top is not None and (not plays or rng.random() < 0.3):
            hand.pass_turn(seat)
        else:
            hand.play(seat, rng.choice(plays).card_strings())
    return hand


def test_values_json_would_change_come_back_with_their_types() -> None:
    value = {
        "card": Card(14, "S"),
        "combination": Combination("pair", (Card(3, "H"), Card(3, "S")), 3, 0),
        "ruleset": Ruleset.from_spec("jinzhou", {"announce_at": 2}),
        "tuple": (1, (2, "x")),
        "set": {3, 1, 2},
        "frozenset": frozenset({"a"}),
        "by_seat": {0: 5, 2: 1},
        "score": Decimal("-5.5"),
        "list": [Card(10, "D"), None, True],
    }
    back = roundtrip(value)
    assert back == value
    assert type(back["card"]) is Card and type(back["tuple"][1]) is tuple
    assert list(back["by_seat"]) == [0, 2]


def test_a_hand_snapshot_restores_the_exact_state() -> None:
    hand = played_hand(moves=100, until_mid_trick=True)
    assert hand.passed and hand.top is not None and hand.tricks_won  # a state worth checking
    hand.collect_events()
    stored = mapper().to_stored_event(AggregateSnapshot.take(hand))
    restored = mapper().to_domain_event(stored).mutate(None)  # type: ignore[attr-defined]
    assert isinstance(restored, Hand)
    assert vars(restored) == vars(hand)
    assert restored.view(AUDITOR) == hand.view(AUDITOR)
    assert restored.legal_plays(restored.turn or 0) == hand.legal_plays(hand.turn or 0)


def test_a_table_snapshot_restores_rules_and_exact_scores() -> None:
    table = Table.open(GAME, Ruleset.from_spec("classic"), 4)
    table.scores["team:0"] = Decimal("12.5")
    table.collect_events()
    stored = mapper().to_stored_event(AggregateSnapshot.take(table))
    restored = mapper().to_domain_event(stored).mutate(None)  # type: ignore[attr-defined]
    assert isinstance(restored, Table)
    assert vars(restored) == vars(table)
    assert restored.rules == table.rules and restored.scores["team:0"] == Decimal("12.5")


def test_hand_events_are_stored_as_plain_json() -> None:
    hand = played_hand(moves=6)
    for domain_event in hand.collect_events():
        state = json.loads(mapper().to_stored_event(domain_event).state)
        state.pop("timestamp")  # the library's own `datetime_iso` transcoding
        assert "_type_" not in json.dumps(state)
