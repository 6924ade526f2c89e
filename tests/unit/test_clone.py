"""`clone()` gives commands an independent copy: acting on it never changes the original."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.domain.table import Table

HANDS_PER_PRESET = 3
PASS_PROBABILITY = 0.3


def _state(aggregate: Hand | Table) -> dict[str, Any]:
    return copy.deepcopy({k: v for k, v in vars(aggregate).items() if k != "_pending_events"})


def _act(hand: Hand, rng: random.Random) -> None:
    seat = hand.turn
    assert seat is not None
    plays = hand.legal_plays(seat)
    if hand.top is not None and (not plays or rng.random() < PASS_PROBABILITY):
        hand.pass_turn(seat)
    else:
        hand.play(seat, list(rng.choice(plays).cards))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_acting_on_a_clone_leaves_the_hand_and_table_untouched(preset: str) -> None:
    rng = random.Random(preset)
    rules = Ruleset.preset_named(preset)
    players = rules.player_counts()[-1]
    table = Table.open(rules, players)
    for seat in range(players):
        table.join(seat, f"p{seat}")
    for _ in range(HANDS_PER_PRESET):
        hand = table.start_hand(seed=rng.randbytes(32))
        while not hand.is_over:
            before = _state(hand)
            _act(hand.clone(), rng)
            assert _state(hand) == before
            _act(hand, rng)
        before_table = _state(table)
        table.clone().record_hand(hand)
        assert _state(table) == before_table
        table.record_hand(hand)


def test_a_clone_equals_its_original() -> None:
    table = Table.open(Ruleset.preset_named("classic"), 4)
    for seat in range(4):
        table.join(seat, f"p{seat}")
    hand = table.start_hand(seed=bytes(32))
    assert _state(hand.clone()) == _state(hand)
    assert _state(table.clone()) == _state(table)
