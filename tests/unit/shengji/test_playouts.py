"""Random legal playouts of whole Shengji matches, 200 hands per preset (OpenSpiel style).

Each step takes the legal-actions answer of the seat to act and does one of its actions at
random — declarations, burials, example plays, random throws (to make throws fail) and, now
and then, a random play that the referee must judge exactly as the table's trick rules'
`follow_error` does (the rule book's, or the `shengji_io` house rules'), or a
turn timeout. After every step the points are counted; in the first hands of each preset
every view is checked for privacy after every step. After every hand its events, stored as
JSON and read back, must rebuild it, every other hand's transcript must re-rule to its
result, and the next hand is dealt from its carry (levels, rotation, room points).
"""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest

from fiftyk_referee.domain.cards import Card, parse_card
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.shengji import GAME
from fiftyk_referee.domain.shengji.cards import POINTS
from fiftyk_referee.domain.shengji.hand import BURY, BURYING, DECLARE, DECLARING, ShengjiHand
from fiftyk_referee.domain.shengji.rulesets import PRESETS
from fiftyk_referee.domain.shengji.scoring import kitty_multiplier
from tests.support.depth import playout_hands
from tests.unit.shengji.helpers import (
    NOTHING,
    assert_adjudication_reproduces,
    assert_points_conserved,
    assert_replay_rebuilds,
    assert_views_private,
)

HANDS_PER_PRESET = playout_hands(60)
HANDS_PER_TABLE = 5
VIEW_CHECKED_HANDS = 3
TRANSCRIPT_EVERY = 2  # every other hand is exported and re-ruled (the costliest check)
DECLARE_RATE = 0.15
THROW_RATE = 0.15
RANDOM_PLAY_RATE = 0.2
TIMEOUT_RATE = 0.05
EXAMPLES_CHECKED = 3  # example plays checked legal per step
LONG_AFTER = datetime(3000, 1, 1, tzinfo=UTC)
VARIANTS: tuple[dict[str, Any], ...] = (
    {"declare_pacing": "final"},
    {},
    {"declare_pacing": "final", "turn_timeout": 30, "throw_penalty": 10},
    {"declare_pacing": "final", "first_hand_dealer": "final_declarer",
     "kitty_multiplier": "double", "must_defend_a": False, "start_level": "K"},
)


def random_throw(hand: ShengjiHand, seat: int, rng: random.Random) -> list[Card]:
    """A random set of cards of one suit group from the seat's hand."""
    groups: dict[str, list[Card]] = {}
    for card in hand.hands[seat]:
        groups.setdefault(hand.order.group(card), []).append(card)
    cards = rng.choice(list(groups.values()))
    return rng.sample(cards, rng.randint(1, min(len(cards), 6)))


def random_follow(hand: ShengjiHand, seat: int, rng: random.Random) -> list[Card]:
    """A random follow of the right size, mostly from the lead's suit group."""
    assert hand.lead is not None
    held = hand.hands[seat]
    in_group = [c for c in held if hand.order.group(c) == hand.lead.group]
    pool = in_group if len(in_group) >= hand.lead.size and rng.random() < 0.8 else held
    return rng.sample(pool, hand.lead.size)


def step(hand: ShengjiHand, rng: random.Random) -> None:
    """One random action of the seat to act."""
    seat = hand.to_act
    assert seat is not None
    if hand.rules.turn_timeout and rng.random() < TIMEOUT_RATE:
        hand.time_out(seat, LONG_AFTER)
        return
    answer = hand.legal_actions(seat)
    if hand.phase == DECLARING:
        if answer.plays and rng.random() < DECLARE_RATE:
            hand.act(seat, Action(DECLARE, rng.choice(answer.plays).cards))
        else:
            hand.act(seat, NOTHING)
        return
    if hand.phase == BURYING:
        held = list(hand.hands[seat])
        if not hand.rules.bury_points:
            held = [c for c in held if not POINTS[c]]
        cards = rng.sample(held, hand.rules.kitty_size)
        hand.act(seat, Action(BURY, tuple(map(str, cards))))
        return
    assert answer.plays, "the seat to play always has an example play"
    for example in rng.sample(answer.plays, min(len(answer.plays), EXAMPLES_CHECKED)):
        cards = [parse_card(c) for c in example.cards]
        assert not Counter(cards) - Counter(hand.hands[seat])
        if hand.lead is not None:
            assert hand.tricks.follow_error(hand.hands[seat], cards, hand.lead,
                                            hand.order) is None
    if hand.lead is None and rng.random() < THROW_RATE:
        hand.act(seat, Action.play([str(c) for c in random_throw(hand, seat, rng)]))
        return
    if hand.lead is not None and rng.random() < RANDOM_PLAY_RATE:
        cards = random_follow(hand, seat, rng)
        verdict = hand.tricks.follow_error(hand.hands[seat], cards, hand.lead, hand.order)
        if verdict is None:
            hand.act(seat, Action.play([str(c) for c in cards]))
            return
        with pytest.raises(RuleError) as refused:
            hand.act(seat, Action.play([str(c) for c in cards]))
        assert refused.value.reason == verdict[0]
    hand.act(seat, Action.play(rng.choice(answer.plays).cards))


def play_out(hand: ShengjiHand, rng: random.Random, check_views: bool,
             check_transcript: bool = True) -> None:
    """Play a hand to its end, checking invariants after every step."""
    events = list(hand.collect_events())
    while not hand.is_over:
        step(hand, rng)
        assert_points_conserved(hand)
        if check_views:
            assert_views_private(hand)
    events += list(hand.collect_events())
    assert_views_private(hand)
    assert_replay_rebuilds(hand, events)
    if check_transcript:
        assert_adjudication_reproduces(hand)
    result = hand.result
    assert result is not None
    assert sum(result["collected"]) + result["kitty"]["points"] == hand.rules.total_points
    attackers = result["attackers"]
    assert attackers["trick_points"] == sum(result["collected"][s] for s in attackers["seats"])
    last = result["last_trick"]
    won_by_attackers = last["winner"] in attackers["seats"]
    assert (last["side"] == "attackers") == won_by_attackers
    expected = kitty_multiplier(hand.rules, hand.last_lead_largest) if won_by_attackers else 0
    assert last["multiplier"] == expected
    assert attackers["kitty_bonus"] == result["kitty"]["points"] * expected
    assert result["levels"]["before"] == list(hand.levels)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_random_playouts(preset: str) -> None:
    rng = random.Random(f"shengji-{preset}")
    played = 0
    table = 0
    while played < HANDS_PER_PRESET:
        options = VARIANTS[table % len(VARIANTS)]
        rules = GAME.rules(preset, options)
        carry: dict[str, Any] = {}
        for number in range(HANDS_PER_TABLE):
            hand = GAME.deal(table_id=f"table-{table}", number=number, rules=rules, players=4,
                             dealer=0, seat_players=[None] * 4, carry=carry, deck=None,
                             seed=rng.randbytes(32))
            play_out(hand, rng, played < VIEW_CHECKED_HANDS, played % TRANSCRIPT_EVERY == 0)
            record = hand.record()
            carry = dict(record.carry)
            played += 1
            if carry["game_over"]:
                break
        table += 1
