"""A dry run (`GameHand.check`) refuses what `act` refuses, accepts what it accepts, changes
nothing, and judges only on what the acting seat may see — for every kind of action of every
built-in game, at every moment of whole hands."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator

import pytest

from fiftyk_referee.domain.doudizhu.bidding import BID, CALL, ROB_KIND
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import Action, Game, GameHand
from fiftyk_referee.domain.games import hosted
from fiftyk_referee.domain.shengji.hand import BURY, DECLARE, ShengjiHand
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from tests.unit.shengji.helpers import bury_lowest, close_windows, deck_for

# (game, preset, players): small hands, so every moment of a whole hand is cheap to try.
TABLES = [("fiftyk", "five_card", 2), ("fiftyk", "classic", 4),
          ("shengji", "shengji_one_pack", 4), ("doudizhu", "classic", 3),
          ("doudizhu", "rob", 3)]
MAX_STEPS = 1_000


def dealt(game: Game, preset: str, players: int, seed: int) -> GameHand:
    """A hand of `game` dealt from a seed."""
    return game.deal(table_id="t", number=1, rules=game.rules(preset), players=players,
                     dealer=0, seat_players=[f"p{s}" for s in range(players)], carry={},
                     deck=None, seed=seed.to_bytes(32, "big"))


def candidates(game: Game, hand: GameHand, seat: int) -> Iterator[Action]:
    """Actions of every kind the game has for `seat`: legal ones and refused ones."""
    legal = hand.legal_actions(seat, limit=3)
    own = list(vars(hand)["hands"][seat])
    texts = [str(card) for card in own]
    for spec in game.action_kinds:
        if spec.takes_value:  # a value in range, one out of range, one not a number
            for value in ("1", "3", "9", "x"):
                yield Action(spec.kind, (), value)
        if not spec.takes_cards:
            yield Action(spec.kind)
            yield Action(spec.kind, tuple(texts[:1]))  # names cards it may not
            continue
        for play in legal.plays:
            yield Action(spec.kind, play.cards)
        yield Action(spec.kind, ())
        yield Action(spec.kind, tuple(texts[:1]))
        yield Action(spec.kind, tuple(texts[:2]))
        yield Action(spec.kind, tuple(texts[-3:]))
        yield Action(spec.kind, ("ZZ",))
    yield Action("Play", tuple(texts[:1]))  # not a kind of any game


def outcome(run: object) -> Reason | None:
    """The refusal's reason, or None when accepted."""
    try:
        run()  # type: ignore[operator]
    except RuleError as error:
        return error.reason
    return None


def assert_check_matches_act(game: Game, hand: GameHand) -> None:
    """At this moment, for every seat and candidate: check answers as act, and changes
    nothing."""
    before = copy.deepcopy(vars(hand))
    for seat in range(hand.players):
        for action in candidates(game, hand, seat):
            checked = outcome(lambda: hand.check(seat, action))  # noqa: B023
            # A refused act changes nothing, so only an accepted one needs a copy of its own.
            trial = copy.deepcopy(hand) if checked is None else hand
            acted = outcome(lambda: trial.act(seat, action))  # noqa: B023
            assert checked == acted, (seat, action, checked, acted)
    assert vars(hand) == before  # nothing changed, nothing pending


def next_action(hand: GameHand, rng: random.Random) -> tuple[int, Action]:
    """A legal action of the seat the hand waits for."""
    seat = hand.to_act
    assert seat is not None
    legal = hand.legal_actions(seat, limit=20)
    if DECLARE in legal.kinds:
        return seat, Action(DECLARE)
    if BURY in legal.kinds:
        return seat, Action(BURY, legal.plays[0].cards)
    if BID in legal.kinds or CALL in legal.kinds:  # 斗地主: bid or call, else pass
        if rng.random() < 0.5:
            return seat, (Action(BID, (), "3") if BID in legal.kinds else Action(CALL))
        return seat, Action("pass")
    if ROB_KIND in legal.kinds:
        return seat, Action(ROB_KIND if rng.random() < 0.5 else "pass")
    if legal.may_pass and (not legal.plays or rng.random() < 0.3):
        return seat, Action("pass")
    return seat, Action("play", rng.choice(legal.plays).cards)


@pytest.mark.parametrize(("name", "preset", "players"), TABLES)
def test_a_dry_run_answers_as_the_action_would_and_changes_nothing(
        name: str, preset: str, players: int) -> None:
    game = hosted()[name]
    rng = random.Random(24)
    hand = dealt(game, preset, players, seed=24)
    steps = 0
    while not hand.is_over:
        assert_check_matches_act(game, hand)
        seat, action = next_action(hand, rng)
        hand.act(seat, action)
        steps += 1
        assert steps < MAX_STEPS
    assert_check_matches_act(game, hand)  # every kind: HAND_OVER


def test_a_dry_run_of_a_hand_ending_resign_records_nothing() -> None:
    hand = dealt(hosted()["fiftyk"], "five_card", 2, seed=3)
    waiting = 1 - (hand.to_act or 0)  # the seat not on turn may resign
    hand.check(waiting, Action("resign"))
    assert not hand.is_over and hand.result is None  # type: ignore[attr-defined]
    trial = copy.deepcopy(hand)
    trial.act(waiting, Action("resign"))
    assert trial.is_over  # the real resign would have ended the hand


def throw_hand(opponent_holds_kings: bool) -> ShengjiHand:
    """Seat 0 (dealer) about to lead `AC QC QC`, holding the other AC; seat 1 holds `KC KC`
    or not. The leader's cards and the kitty are the same in both deals."""
    rules = ShengjiRules.from_spec("tractor")
    leader = "AC AC QC QC 3S 4S 6S 7S 8S 9S JS 3H 4H 6H 7H 8H 9H JH 3D 4D 6D 7D 8D 9D JD"
    others = {1: "KC KC"} if opponent_holds_kings else {1: "2S 2S", 2: "KC", 3: "KC"}
    deck = deck_for(rules, {0: leader, **others}, kitty="5S 5S 5H 5H 5D 5D 5C 5C", dealer=0,
                    seed=11)
    hand = ShengjiHand.deal_new(table_id="t", number=1, rules=rules, dealer=0, levels=None,
                                deck=deck)
    close_windows(hand)
    bury_lowest(hand)
    return hand


def test_a_dry_run_throw_is_judged_on_its_form_alone() -> None:
    standing, failing = throw_hand(False), throw_hand(True)
    assert sorted(map(str, standing.hands[0])) == sorted(map(str, failing.hands[0]))
    throw = Action("play", ("AC", "QC", "QC"))
    # The real throws differ: one stands, one fails on seat 1's KC KC.
    real_standing, real_failing = copy.deepcopy(standing), copy.deepcopy(failing)
    real_standing.act(0, throw)
    real_failing.act(0, throw)
    assert not real_standing.throws_failed and real_failing.throws_failed
    # Their dry runs do not: both well formed, nothing evaluated, nothing changed.
    for hand in (standing, failing):
        before = copy.deepcopy(vars(hand))
        hand.check(0, throw)
        assert vars(hand) == before
    # A malformed lead (two suit groups) is refused in both alike.
    mixed = Action("play", ("AC", "JS"))
    assert outcome(lambda: standing.check(0, mixed)) == Reason.INVALID_COMBINATION
    assert outcome(lambda: failing.check(0, mixed)) == Reason.INVALID_COMBINATION


def test_a_shengji_play_while_the_windows_are_open_names_the_phase() -> None:
    hand = dealt(hosted()["shengji"], "tractor", 4, seed=5)
    seat = hand.to_act
    assert seat is not None
    card = str(vars(hand)["hands"][seat][0])
    for run in (hand.check, hand.act):
        with pytest.raises(RuleError) as refused:
            run(seat, Action("play", (card,)))
        assert refused.value.reason == ShengjiReason.DECLARATIONS_OPEN
        assert "declaration" in refused.value.message
