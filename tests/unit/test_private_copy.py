"""`private_copy` gives commands an independent copy: acting on it never changes the original.

The cache hands commands such copies; a container shared by mistake (an attribute declared
`NEVER_MUTATED` that an event does mutate) would change the cached original here.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from fiftyk_referee.domain.fiftyk import GAME
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.cache import private_copy

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
def test_acting_on_a_private_copy_leaves_the_hand_and_table_untouched(preset: str) -> None:
    rng = random.Random(preset)
    rules = Ruleset.preset_named(preset)
    players = rules.player_counts()[-1]
    table = Table.open(GAME, rules, players)
    for seat in range(players):
        table.join(seat, f"p{seat}")
    for _ in range(HANDS_PER_PRESET):
        hand = table.start_hand(seed=rng.randbytes(32))
        while not hand.is_over:
            before = _state(hand)
            _act(private_copy(hand), rng)
            assert _state(hand) == before
            _act(hand, rng)
        before_table = _state(table)
        private_copy(table).record_hand(hand)
        assert _state(table) == before_table
        table.record_hand(hand)


def test_a_private_copy_equals_its_original() -> None:
    table = Table.open(GAME, Ruleset.preset_named("classic"), 4)
    for seat in range(4):
        table.join(seat, f"p{seat}")
    hand = table.start_hand(seed=bytes(32))
    assert _state(private_copy(hand)) == _state(hand)
    assert _state(private_copy(table)) == _state(table)
