"""`private_copy` gives commands an independent copy: acting on it never changes the original.

The cache hands commands such copies; a container shared by mistake (an attribute declared
`NEVER_MUTATED` that an event does mutate) would change the cached original here.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from fiftyk_referee.domain.doudizhu import GAME as DOUDIZHU
from fiftyk_referee.domain.doudizhu.hand import BID, DoudizhuHand
from fiftyk_referee.domain.fiftyk import GAME
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.domain.game import PASS, Action
from fiftyk_referee.domain.shengji import GAME as SHENGJI
from fiftyk_referee.domain.shengji.hand import BURY, BURYING, DECLARE, DECLARING, ShengjiHand
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


def _shengji_hand(seed: int) -> ShengjiHand:
    hand = SHENGJI.deal(table_id="copies", number=1, rules=SHENGJI.rules("tractor"),
                        players=4, dealer=0, seat_players=[None] * 4, carry={}, deck=None,
                        seed=random.Random(seed).randbytes(32))
    assert isinstance(hand, ShengjiHand)
    return hand


def _shengji_step(hand: ShengjiHand, rng: random.Random) -> None:
    seat = hand.to_act
    assert seat is not None
    answer = hand.legal_actions(seat)
    if hand.phase == DECLARING:
        hand.act(seat, Action(DECLARE, ()))
    elif hand.phase == BURYING:
        hand.act(seat, Action(BURY, answer.plays[0].cards))
    else:
        hand.act(seat, Action.play(rng.choice(answer.plays).cards))


def test_acting_on_a_private_copy_leaves_a_shengji_hand_untouched() -> None:
    rng = random.Random(3)
    hand = _shengji_hand(3)
    while not hand.is_over:
        before = _state(hand)
        _shengji_step(private_copy(hand), rng)
        assert _state(hand) == before
        _shengji_step(hand, rng)


def _doudizhu_hand(seed: int) -> DoudizhuHand:
    hand = DOUDIZHU.deal(table_id="copies", number=1, rules=DOUDIZHU.rules("classic"),
                         players=3, dealer=0, seat_players=[None] * 3, carry={}, deck=None,
                         seed=random.Random(seed).randbytes(32))
    assert isinstance(hand, DoudizhuHand)
    return hand


def _doudizhu_step(hand: DoudizhuHand, rng: random.Random) -> None:
    """The seat to act bids 3 when it may bid (so the hand is played, never redealt), else
    plays a listed play or passes."""
    seat = hand.to_act
    assert seat is not None
    legal = hand.legal_actions(seat)
    if BID in legal.kinds:
        hand.act(seat, Action(BID, (), "3"))
    elif legal.plays and (not legal.may_pass or rng.random() >= PASS_PROBABILITY):
        hand.act(seat, Action.play(rng.choice(legal.plays).cards))
    else:
        hand.act(seat, Action(PASS, ()))


def test_acting_on_a_private_copy_leaves_a_doudizhu_hand_untouched() -> None:
    rng = random.Random(9)
    hand = _doudizhu_hand(9)
    while not hand.is_over:
        before = _state(hand)
        _doudizhu_step(private_copy(hand), rng)
        assert _state(hand) == before
        _doudizhu_step(hand, rng)
    assert hand.action_log[0][1] == BID and len(hand.action_log) > 3  # played, not redealt


def _fiftyk_logged(rng: random.Random) -> Any:
    table = Table.open(GAME, Ruleset.preset_named("classic"), 4)
    for seat in range(4):
        table.join(seat, f"p{seat}")
    hand = table.start_hand(seed=rng.randbytes(32))
    for _ in range(40):
        _act(hand, rng)
    return hand


def _shengji_logged(rng: random.Random) -> Any:
    hand = _shengji_hand(5)
    for _ in range(150):  # the paced deal's declarations, the bury and some tricks
        _shengji_step(hand, rng)
    return hand


def _doudizhu_logged(rng: random.Random) -> Any:
    hand = _doudizhu_hand(5)
    for _ in range(40):  # the bid and some plays (a hand has at least 20 plays)
        _doudizhu_step(hand, rng)
    return hand


# A hand of each game with at least 40 actions in its log.
LOGGED = {"fiftyk": _fiftyk_logged, "shengji": _shengji_logged, "doudizhu": _doudizhu_logged}


@pytest.mark.parametrize("game", sorted(LOGGED))
def test_a_private_copy_shares_the_entries_of_the_hands_action_log(game: str) -> None:
    # The log grows by an entry per action: its entries are immutable, so a command's copy
    # of the hand copies the list (a pointer per entry), never the entries themselves.
    hand = LOGGED[game](random.Random(5))
    log: list[Any] = hand.action_log
    copied: list[Any] = private_copy(hand).action_log
    assert len(log) >= 40
    assert copied == log and copied is not log
    assert all(entry is original for entry, original in zip(copied, log, strict=True))
