"""The pure rule functions the oracle asks (`judge_declarations`, `check_bury`,
`trick_winner`, `kitty_bonus`, `room_points_moved`) agree with the live hand aggregate."""

from __future__ import annotations

import random
from typing import Any

import pytest

from fiftyk_referee.domain.cards import Card, parse_cards
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK
from fiftyk_referee.domain.shengji.hand import (
    DECLARE,
    DECLARING,
    ShengjiHand,
    check_bury,
    judge_declarations,
)
from fiftyk_referee.domain.shengji.play import trick_winner
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import PRESETS, ShengjiRules
from fiftyk_referee.domain.shengji.scoring import kitty_bonus, room_points_moved
from tests.unit.shengji.helpers import NOTHING, bury_lowest, close_windows, new_hand

# Round -> the (seat, cards) declarations tried after that round, in order.
SCRIPT: dict[int, list[tuple[int, str]]] = {
    1: [(2, "2H"), (3, "2D")],  # 3's single 2 does not overcall 2's
    2: [(1, "2S 2S"), (2, "3H")],  # 1 overcalls with a pair; 3H is no form at level 2
    3: [(0, "SJ")],  # a lone joker is no form
}


def declare_live(options: dict[str, Any]) -> tuple[list[Reason | None], ShengjiHand]:
    """Play SCRIPT into a first hand; each declaration's fate, and the hand."""
    hand = new_hand("tractor", {"declare_pacing": "rounds", **options},
                    hands={2: "2H 3H", 3: "2D", 1: "2S 2S", 0: "SJ"}, dealer=None)
    wanted = {round: list(tries) for round, tries in SCRIPT.items()}
    fates: list[Reason | None] = []
    while hand.phase == DECLARING:
        for seat, text in wanted.pop(hand.round, []):
            try:
                hand.act(seat, Action(DECLARE, tuple(text.split())))
                fates.append(None)
            except RuleError as refused:
                fates.append(refused.reason)
        waiting = hand.to_act
        assert waiting is not None
        hand.act(waiting, NOTHING)
    return fates, hand


@pytest.mark.parametrize("who_deals", ["first_declarer", "final_declarer"])
def test_judge_declarations_agrees_with_a_live_first_hand(who_deals: str) -> None:
    fates, hand = declare_live({"first_hand_dealer": who_deals})
    flat = [(seat, parse_cards(text)) for tries in SCRIPT.values() for seat, text in tries]
    outcome = judge_declarations(hand.rules, LEVEL_RANK["2"], None, flat)
    assert [None if r is None else r.reason for r in outcome.results] == fates
    assert fates == [None, ShengjiReason.DECLARATION_TOO_WEAK, None,
                     ShengjiReason.INVALID_DECLARATION,
                     ShengjiReason.INVALID_DECLARATION]
    assert outcome.dealer == hand.dealer == (2 if who_deals == "first_declarer" else 1)
    assert outcome.standing is not None and hand.declaration is not None
    assert (outcome.standing.seat, outcome.standing.suit) == (1, "S") == \
        (hand.declaration.seat, hand.order.suit)


def test_judge_declarations_keeps_a_given_dealer_and_defaults_to_seat_zero() -> None:
    rules = ShengjiRules.from_spec("tractor")
    assert judge_declarations(rules, LEVEL_RANK["7"], 3, [(1, parse_cards("7C"))]).dealer == 3
    nobody = judge_declarations(rules, LEVEL_RANK["7"], None, [])
    assert (nobody.dealer, nobody.standing, nobody.results) == (0, None, ())


@pytest.mark.parametrize(("preset", "text", "reason"), [
    ("tractor", "3C 4C 5C 6C 7C 8C 9C JC", None),
    ("tractor", "3C 4C 5C 6C 7C 8C 9C", ShengjiReason.WRONG_BURY_COUNT),
    ("shengji_one_pack", "3C 4C 6C 7C 8C 9C", None),
    ("shengji_one_pack", "3C 4C 6C 7C 8C KC", ShengjiReason.BURY_POINTS_FORBIDDEN),
    ("shengji_one_pack", "3C 4C 6C 7C 8C", ShengjiReason.WRONG_BURY_COUNT),
])
def test_check_bury(preset: str, text: str, reason: Reason | None) -> None:
    rules = ShengjiRules.from_spec(preset)
    if reason is None:
        check_bury(parse_cards(text), rules.kitty_size, rules.bury_points)
        return
    with pytest.raises(RuleError) as refused:
        check_bury(parse_cards(text), rules.kitty_size, rules.bury_points)
    assert refused.value.reason == reason


def test_kitty_bonus_scores_only_for_the_attackers() -> None:
    rules = ShengjiRules.from_spec("tractor")
    assert kitty_bonus(rules, 25, 4, attackers_won_last=True) == (16, 400)
    assert kitty_bonus(rules, 25, 4, attackers_won_last=False) == (None, 0)


def test_room_points_moved_by_the_winning_side() -> None:
    rules = ShengjiRules.from_spec("tractor_qq")
    assert room_points_moved(rules, [90] * 4, 1, 0) == \
        {"multiplier": 2, "base": 4, "delta": [-8, 8, -8, 8]}


def _lead_of(hand: ShengjiHand, seat: int, rng: random.Random) -> list[Card]:
    """A random lead: one of the seat's suit groups, sometimes a throw that may fail."""
    groups: dict[str, list[Card]] = {}
    for card in hand.hands[seat]:
        groups.setdefault(hand.order.group(card), []).append(card)
    cards = rng.choice(list(groups.values()))
    return rng.sample(cards, rng.randint(1, min(len(cards), 5)))


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_trick_winner_agrees_with_every_trick_of_live_hands(preset: str) -> None:
    rng = random.Random(f"trick-winner-{preset}")
    checked = 0
    for number in range(3):
        hand = new_hand(preset, {"declare_pacing": "final"}, dealer=number % 4, seed=number)
        close_windows(hand)
        bury_lowest(hand)
        while not hand.is_over:
            seat = hand.to_act
            assert seat is not None
            if hand.lead is None:
                cards = [str(c) for c in _lead_of(hand, seat, rng)]
            else:
                cards = list(rng.choice(hand.legal_actions(seat).plays).cards)
            before = [(s, list(p)) for s, p in hand.trick]
            hand.act(seat, Action.play(cards))
            if hand.trick:
                continue
            # The trick just ended: its plays are the ones before plus this one.
            plays = [p for _, p in before] + [parse_cards(cards)]
            leader = before[0][0]
            index = trick_winner(plays, hand.order)
            assert (leader + index) % 4 == hand.last_winner
            checked += 1
    assert checked >= 3 * ShengjiRules.from_spec(preset).hand_size // 2
