"""Random legal playouts of whole 斗地主 hands, every preset (OpenSpiel style).

Each step takes the legal-actions answer of the seat to act and does one of its actions at
random — a bid, call or rob, a pass, one of the listed plays — or, now and then, a random
set of the seat's cards, which the dry run and the real action must refuse (or accept)
alike, or lets the seat's clock run out. After every step every card is somewhere exactly
once (a hand, the 底牌, the plays made); in the first hands of each preset every view is
checked for privacy after every step. After every hand: its scores add up to 0, its
events, stored as JSON and read back, rebuild it, and its transcript re-rules to its result.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from eventsourcing.persistence import (
    DatetimeAsISO,
    DecimalAsStr,
    JSONTranscoder,
    Mapper,
    UUIDAsHex,
)

from fiftyk_referee.domain.cards import format_cards, make_deck, parse_card
from fiftyk_referee.domain.doudizhu.game import GAME
from fiftyk_referee.domain.doudizhu.hand import BIDDING, PLAYING, DoudizhuHand
from fiftyk_referee.domain.doudizhu.rulesets import PRESETS
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.observer import AUDITOR, SPECTATOR, SeatViewer
from fiftyk_referee.service.core.cache import private_copy
from tests.support.depth import playout_hands

HANDS_PER_PRESET = playout_hands(60)
PRIVACY_HANDS = 3  # hands per preset whose every step checks every view
MAX_STEPS = 500
PACK = Counter(make_deck(1, jokers=True))


def _mapper() -> Mapper[Any]:
    transcoder = JSONTranscoder()
    for transcoding in (UUIDAsHex(), DatetimeAsISO(), DecimalAsStr()):
        transcoder.register(transcoding)
    return Mapper(transcoder=transcoder)


MAPPER = _mapper()


def assert_cards_conserved(hand: DoudizhuHand) -> None:
    """Every card of the pack is in exactly one place: a hand, the 底牌 or a play made."""
    played = Counter(parse_card(c) for entry in hand.actions for c in entry.get("play", ()))
    held = Counter(c for cards in hand.hands for c in cards)
    kitty = Counter(hand.kitty) if hand.phase == BIDDING or hand.landlord is None else Counter()
    assert held + played + kitty == PACK


def assert_views_private(hand: DoudizhuHand) -> None:
    """A seat sees its own cards only; the 底牌 hidden until the landlord took them."""
    audit = hand.view(AUDITOR)
    assert audit.kitty == tuple(format_cards(hand.kitty)) and audit.deck == hand.deck
    shown = hand.landlord is not None or hand.is_over
    for viewer in (SeatViewer(0), SeatViewer(1), SeatViewer(2), SPECTATOR):
        view = hand.view(viewer)
        assert all(seat.cards is None for seat in view.seats) and view.deck is None
        assert (view.kitty is not None) == shown
        own = viewer.seat if isinstance(viewer, SeatViewer) else None
        expected = tuple(format_cards(hand.hands[own])) if own is not None else ()
        assert view.own_cards == expected
        assert [s.card_count for s in view.seats] == [len(h) for h in hand.hands]


def assert_replay_rebuilds(hand: DoudizhuHand, events: Sequence[Any]) -> None:
    """Replaying the events, stored as JSON and read back, rebuilds the hand exactly."""
    rebuilt: Any = None
    for event in events:
        stored: Any = MAPPER.to_domain_event(MAPPER.to_stored_event(event))
        rebuilt = stored.mutate(rebuilt)
    assert isinstance(rebuilt, DoudizhuHand)
    state = {k: v for k, v in vars(hand).items() if not k.startswith("_")}
    assert {k: v for k, v in vars(rebuilt).items() if not k.startswith("_")} == state
    assert rebuilt.version == hand.version


def random_selection(hand: DoudizhuHand, seat: int, rng: random.Random) -> Action:
    own = [str(c) for c in hand.hands[seat]]
    return Action.play(rng.sample(own, rng.randint(1, min(len(own), 6))))


def outcome(run: Any) -> str | None:
    try:
        run()
    except RuleError as error:
        return str(error.reason)
    return None


def step(hand: DoudizhuHand, rng: random.Random) -> None:
    seat = hand.to_act
    assert seat is not None
    if rng.random() < 0.03:
        deadline = hand.turn_deadline()
        assert deadline is not None
        done = hand.time_out(seat, deadline + timedelta(seconds=1))
        assert done.kind in ("pass", "play")
        return
    legal = hand.legal_actions(seat, limit=40)
    assert all(list(p.cards) == format_cards(map(parse_card, p.cards)) for p in legal.plays)
    if hand.phase == BIDDING:
        assert legal.may_pass and legal.kinds and not legal.plays
        kind = rng.choice(sorted(legal.kinds))
        value = None
        if kind == "bid":
            value = str(rng.choice([r.count for r in legal.requirements]))
        action = Action(kind, (), value)
    elif rng.random() < 0.1:
        action = random_selection(hand, seat, rng)
        checked = outcome(lambda: hand.check(seat, action))
        acted = outcome(lambda: hand.act(seat, action))
        assert checked == acted, (action, checked, acted)
        return
    elif legal.may_pass and (not legal.plays or rng.random() < 0.25):
        action = Action("pass")
    else:
        assert legal.plays, "a seat that leads always has a play"
        action = Action("play", rng.choice(legal.plays).cards)
    hand.check(seat, action)
    hand.act(seat, action)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_random_hands_play_to_the_end_keeping_every_card_and_a_zero_sum(preset: str) -> None:
    rules = GAME.rules(preset, {"turn_timeout": 30})
    outcomes: Counter[str] = Counter()
    for number in range(HANDS_PER_PRESET):
        rng = random.Random(f"{preset}/{number}")
        hand = GAME.deal(table_id="playouts", number=number + 1, rules=rules, players=3,
                         dealer=number % 3, seat_players=["a", "b", "c"], carry={},
                         deck=None, seed=rng.randbytes(32))
        steps = 0
        while not hand.is_over:
            step(hand, rng)
            assert_cards_conserved(hand)
            if number < PRIVACY_HANDS:
                assert_views_private(hand)
            steps += 1
            assert steps < MAX_STEPS
        result = hand.result
        assert result is not None and sum(result["scores"]) == 0
        assert sum(hand.record().totals.values()) == 0
        outcomes["redeal" if result["redeal"] else str(result["winner"])] += 1
        if not result["redeal"]:
            assert hand.phase != PLAYING
            assert result["winning_seat"] is not None
            assert not hand.hands[result["winning_seat"]]
        assert GAME.adjudicate(GAME.export_transcript(hand)) == GAME.ruling(hand)
        assert_replay_rebuilds(hand, hand.collect_events())
    assert outcomes["landlord"] and outcomes["farmers"]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_service_s_private_copies_of_a_hand_leave_the_original_unchanged(preset: str
                                                                              ) -> None:
    rules = GAME.rules(preset, {"turn_timeout": 30})
    for number in range(3):
        rng = random.Random(f"copies/{preset}/{number}")
        hand = GAME.deal(table_id="copies", number=1, rules=rules, players=3, dealer=0,
                         seat_players=["a", "b", "c"], carry={}, deck=None,
                         seed=rng.randbytes(32))
        while not hand.is_over:
            before = copy.deepcopy({k: v for k, v in vars(hand).items()
                                    if k != "_pending_events"})
            mine = private_copy(hand)
            step(mine, rng)
            assert {k: v for k, v in vars(hand).items() if k != "_pending_events"} == before
            hand = mine


def candidates(hand: DoudizhuHand, seat: int) -> list[Action]:
    """Actions of every kind for `seat`: legal ones and refused ones."""
    own = [str(card) for card in hand.hands[seat]]
    legal = hand.legal_actions(seat, limit=3)
    actions = [Action(kind) for kind in ("pass", "call", "rob", "resign", "bid", "Play")]
    actions += [Action("bid", (), value) for value in ("1", "2", "3", "4", "x")]
    actions += [Action("pass", tuple(own[:1])), Action("call", (), "1"),
                Action("play", (), "1"), Action("play", ()), Action("play", ("ZZ",))]
    actions += [Action("play", play.cards) for play in legal.plays]
    actions += [Action("play", tuple(own[:n])) for n in (1, 2, 4)]
    return actions


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_dry_run_answers_as_the_action_would_at_every_moment_and_changes_nothing(
        preset: str) -> None:
    rules = GAME.rules(preset, {"turn_timeout": 30})
    for number in range(2):
        rng = random.Random(f"dry/{preset}/{number}")
        hand = GAME.deal(table_id="dry", number=1, rules=rules, players=3, dealer=number,
                         seat_players=["a", "b", "c"], carry={}, deck=None,
                         seed=rng.randbytes(32))
        while True:
            before = copy.deepcopy(vars(hand))
            for seat in (0, 1, 2, 3, -1):
                for action in candidates(hand, seat % 3):
                    checked = outcome(lambda: hand.check(seat, action))  # noqa: B023
                    trial = copy.deepcopy(hand) if checked is None else hand
                    acted = outcome(lambda: trial.act(seat, action))  # noqa: B023
                    assert checked == acted, (seat, action, checked, acted)
            assert vars(hand) == before
            if hand.is_over:
                break
            step(hand, rng)
