"""Random legal playouts of complete hands at real tables, for every preset.

Each step lists the legal plays of the seat to act and picks one at random (or passes), with
resignations and turn timeouts mixed in. After every step the points are counted and, in the
first hands of each preset, each seat's view is checked for privacy (the views of the others
are checked when they end); after every hand the events are replayed, the exported
transcript is adjudicated, and the table's cumulative score is checked.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from fiftyk_referee.domain.fiftyk import GAME
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.domain.observer import SeatViewer
from fiftyk_referee.domain.table import Table
from tests.support.checks import (
    assert_adjudication_reproduces,
    assert_points_conserved,
    assert_replay_rebuilds,
    assert_views_private,
)
from tests.support.depth import playout_hands

HANDS_PER_PRESET = playout_hands(60)
VIEW_CHECKED_HANDS = 30  # hands per preset whose views are checked after every step
HANDS_PER_TABLE = 4
PASS_RATE = 0.3  # chance of passing when a play was possible
RESIGN_RATE = 0.002  # per step
TIMEOUT_RATE = 0.05  # per step, at tables with a turn clock
STEP_LIMIT = 5_000
LONG_AFTER = datetime(3000, 1, 1, tzinfo=UTC)  # every turn deadline has passed by then

TEAM_VARIANTS: tuple[dict[str, Any], ...] = (
    {},
    {"wind": "partner", "announce_at": 5, "hand_counts": "announced"},
    {"turn_timeout": 30, "first_lead": "previous_first_out"},
    {"bomb_bonus": "multiplier", "leftover": "deduct", "final": "diff_tenth"},
)
SOLO_VARIANTS: tuple[dict[str, Any], ...] = (
    {},
    {"announce_at": 2, "hand_counts": "announced", "first_lead": "previous_first_out"},
    {"turn_timeout": 30, "leftover": "to_winners"},
    {"bomb_bonus": "extra", "final": "diff_tenth"},
)
STOCK_VARIANTS: tuple[dict[str, Any], ...] = (
    {},
    {"end": "last_standing", "announce_at": 2, "hand_counts": "announced"},
    {"turn_timeout": 30, "leftover": "to_winners", "first_lead": "previous_first_out"},
    {"end": "last_standing", "bomb_bonus": "extra", "final": "diff_tenth"},
)


def variants(preset: str) -> tuple[dict[str, Any], ...]:
    """Option overrides that the preset's playouts rotate through."""
    base = Ruleset.from_spec(preset)
    if base.has_stock:
        return STOCK_VARIANTS
    return TEAM_VARIANTS if base.teams else SOLO_VARIANTS


def step(hand: Hand, rng: random.Random, clocked: bool) -> None:
    """One random legal action of the seat to act (or a random resignation)."""
    if rng.random() < RESIGN_RATE:
        hand.resign(rng.choice(hand.active_seats()))
        return
    seat = hand.turn
    assert seat is not None
    if clocked and rng.random() < TIMEOUT_RATE:
        hand.time_out(seat, LONG_AFTER)
        return
    plays = hand.legal_plays(seat)
    if hand.top is None:
        assert plays, "a leader always has a play"
        hand.play(seat, list(rng.choice(plays).cards))
        return
    assert bool(plays) == hand.can_seat_beat(seat)
    if not plays or rng.random() < PASS_RATE:
        hand.pass_turn(seat)
    else:
        hand.play(seat, list(rng.choice(plays).cards))


def play_out(hand: Hand, rng: random.Random, *, check_views: bool) -> None:
    """Play the hand to its end, checking points (and views) after every step."""
    clocked = hand.rules.turn_timeout > 0
    steps = 0
    while not hand.is_over:
        if check_views:
            assert_views_private(hand)
        step(hand, rng, clocked)
        steps += 1
        assert steps < STEP_LIMIT
        assert_points_conserved(hand)
    assert_views_private(hand)


def check_finished(hand: Hand) -> None:
    """The checks every finished hand must pass."""
    assert hand.result is not None
    assert_replay_rebuilds(hand)
    assert_adjudication_reproduces(hand)
    seed = hand.seed
    assert seed is not None
    assert hand.view(SeatViewer(0)).seed == seed


@pytest.mark.parametrize("preset", list(PRESETS))
def test_random_playouts_keep_every_invariant(preset: str) -> None:
    rng = random.Random(f"playouts/{preset}")
    options = variants(preset)
    played = 0
    table_number = 0
    while played < HANDS_PER_PRESET:
        ruleset = Ruleset.from_spec(preset, options[table_number % len(options)])
        players = rng.choice(ruleset.player_counts())
        table = Table.open(GAME, ruleset, players)
        for seat in range(players):
            table.join(seat, f"player-{seat}")
        totals: dict[str, Decimal] = dict.fromkeys(table.scores, Decimal(0))
        for number in range(HANDS_PER_TABLE):
            hand = table.start_hand(seed=rng.randbytes(32))
            assert hand.dealer == (players - 1 + number) % players
            play_out(hand, rng, check_views=played < VIEW_CHECKED_HANDS)
            check_finished(hand)
            table.record_hand(hand)
            assert hand.result is not None
            for side, value in hand.result["side_totals"].items():
                totals[side] += Decimal(value)
            played += 1
        assert table.scores == totals
        assert table.hands_played == HANDS_PER_TABLE
        table_number += 1
