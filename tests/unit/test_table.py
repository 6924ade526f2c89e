"""The table aggregate: seats, dealing in turn, the match score and the end of the match."""

from __future__ import annotations

import random
from dataclasses import asdict
from decimal import Decimal
from typing import Any

import pytest

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.fiftyk import GAME
from fiftyk_referee.domain.fiftyk.hand import Hand, first_leader, hand_id_for
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.table import Table
from tests.support.checks import replay
from tests.support.scenarios import CLASSIC_HANDS, CLASSIC_SCRIPT, CLASSIC_TEAM_SCORES
from tests.support.scripted import build_deck, run


def seated(preset: str = "classic", players: int = 4, *, allow_preset_deck: bool = True,
           **options: Any) -> Table:
    table = Table.open(GAME, Ruleset.from_spec(preset, options), players,
                       allow_preset_deck=allow_preset_deck)
    for seat in range(players):
        table.join(seat, f"player-{seat}")
    return table


def reason_of(call: Any, *args: Any, **kwargs: Any) -> Reason:
    """The reason code of the RuleError that `call(*args, **kwargs)` raises."""
    with pytest.raises(RuleError) as error:
        call(*args, **kwargs)
    assert error.value.message
    return error.value.reason


def classic_hand(table: Table) -> Hand:
    """Deal CLASSIC_HANDS at the table (whoever deals) and play CLASSIC_SCRIPT."""
    deck = build_deck(table.rules, CLASSIC_HANDS, dealer=table.next_dealer)
    hand = table.start_hand(deck=deck)
    run(hand, CLASSIC_SCRIPT)
    assert hand.is_over
    return hand


def test_players_take_free_seats_once() -> None:
    table = Table.open(GAME, Ruleset.from_spec("classic"), 4)
    table.join(0, "ann")
    assert reason_of(table.join, 0, "bob") == Reason.SEAT_TAKEN
    assert reason_of(table.join, 1, "ann") == Reason.PLAYER_ALREADY_SEATED
    assert reason_of(table.join, 4, "bob") == Reason.INVALID_SEAT
    assert reason_of(table.join, True, "bob") == Reason.INVALID_SEAT
    assert reason_of(table.join, 1, "") == Reason.INVALID_SEAT
    assert reason_of(table.join, 1, "x" * 129) == Reason.INVALID_SEAT
    assert reason_of(table.leave, 1) == Reason.SEAT_EMPTY
    table.leave(0)
    table.join(1, "ann")
    assert table.seats == [None, "ann", None, None]
    assert table.seat_of("ann") == 1 and table.seat_of("bob") is None


def test_a_table_deals_only_when_full_and_one_hand_at_a_time() -> None:
    table = Table.open(GAME, Ruleset.from_spec("qq3"), 3)
    table.join(0, "a")
    table.join(1, "b")
    assert reason_of(table.start_hand) == Reason.TABLE_NOT_FULL
    table.join(2, "c")
    hand = table.start_hand()
    assert table.current_hand == str(hand.id)
    assert reason_of(table.start_hand) == Reason.HAND_IN_PROGRESS
    assert reason_of(table.leave, 0) == Reason.HAND_IN_PROGRESS
    assert reason_of(table.record_hand, hand) == Reason.HAND_IN_PROGRESS


def test_the_seat_count_must_fit_the_ruleset() -> None:
    assert reason_of(Table.open, GAME, Ruleset.from_spec("classic"), 3) == Reason.INVALID_RULESET
    assert reason_of(Table.open, GAME, Ruleset.from_spec("qq3"), 4) == Reason.INVALID_RULESET
    assert reason_of(Table.open, GAME, Ruleset.from_spec("five_card"), 5) == Reason.INVALID_RULESET
    assert Table.open(GAME, Ruleset.from_spec("six_card_two_packs"), 6).players == 6


def test_preset_decks_need_a_table_that_allows_them() -> None:
    table = seated(allow_preset_deck=False)
    deck = build_deck(table.rules, CLASSIC_HANDS)
    assert reason_of(table.start_hand, deck=deck) == Reason.PRESET_DECK_NOT_ALLOWED
    assert table.current_hand is None
    assert table.start_hand(seed=bytes(32)).seed == bytes(32).hex()


def test_a_hand_of_another_table_cannot_be_recorded() -> None:
    table, other = seated(), seated()
    classic_hand(table)
    foreign = classic_hand(other)
    assert reason_of(table.record_hand, foreign) == Reason.NO_HAND_IN_PROGRESS


def test_the_dealer_moves_one_seat_each_hand() -> None:
    table = seated("five_card", 3)
    rng = random.Random(5)
    for number, dealer in enumerate([2, 0, 1, 2], start=1):
        hand = table.start_hand(seed=rng.randbytes(32))
        assert (hand.number, hand.dealer) == (number, dealer)
        assert hand.id == hand_id_for(str(table.id), number)
        first_card = hand.deck[0]
        assert first_card in [str(c) for c in hand.hands[(dealer + 1) % 3]]
        hand.resign((dealer + 1) % 3)
        hand.resign((dealer + 2) % 3)
        table.record_hand(hand)
    assert table.hands_played == 4 and table.next_dealer == 0


def test_the_previous_first_out_leads_the_next_hand() -> None:
    table = seated(first_lead="previous_first_out")
    first = classic_hand(table)  # dealer 3; seat 0 holds the first ♥3 dealt and leads
    assert first.first_leader == 0 and first.out[0] == 0
    table.record_hand(first)
    assert table.carry == {"first_out": 0}
    # Dealer 0 now: seat 1 is dealt first and holds a ♥3, so holder:3H would pick seat 1.
    deck = build_deck(table.rules, CLASSIC_HANDS, dealer=0)
    assert first_leader(Ruleset.from_spec("classic"), deck, 4, 0, None) == 1
    second = table.start_hand(deck=deck)
    assert second.turn == 0


def test_the_match_ends_after_its_number_of_hands_with_cumulative_scores() -> None:
    table = seated(first_lead="previous_first_out", hands=2)
    table.record_hand(classic_hand(table))
    assert table.scores == {"team:0": Decimal(270), "team:1": Decimal(-70)}
    assert table.view().match_over is False
    table.record_hand(classic_hand(table))
    # Two hands of 270 / -70 (CLASSIC_TEAM_SCORES).
    assert table.scores == {"team:0": Decimal(2 * CLASSIC_TEAM_SCORES[0]),
                            "team:1": Decimal(2 * CLASSIC_TEAM_SCORES[1])}
    assert (table.match_over, table.match_end_reason) == (True, "2 hands played")
    assert reason_of(table.start_hand) == Reason.MATCH_OVER
    assert reason_of(table.join, 0, "late") == Reason.MATCH_OVER
    view = table.view()
    assert [(side.side, side.seats, side.score) for side in view.scores] == [
        ("team:0", (0, 2), Decimal(540)), ("team:1", (1, 3), Decimal(-140))]
    assert view.match_over is True and view.hands_played == 2


def test_the_match_ends_when_a_side_reaches_the_target_score() -> None:
    table = seated(target_score=271)
    table.record_hand(classic_hand(table))
    assert table.view().match_over is False  # 270 is short of 271
    table = seated(target_score=270)
    table.record_hand(classic_hand(table))
    assert table.match_over and table.match_end_reason == "a side reached 270"


def test_seat_games_keep_a_score_per_seat() -> None:
    table = seated("qq3", 3)
    assert set(table.scores) == {"seat:0", "seat:1", "seat:2"}
    rng = random.Random(9)
    expected = dict.fromkeys(table.scores, Decimal(0))
    for _ in range(3):
        hand = table.start_hand(seed=rng.randbytes(32))
        while not hand.is_over:
            seat = hand.turn
            assert seat is not None
            plays = hand.legal_plays(seat)
            if hand.top is not None and not plays:
                hand.pass_turn(seat)
            else:
                hand.play(seat, list(plays[0].cards))
        table.record_hand(hand)
        assert hand.result is not None
        for seat_result in hand.result["seats"]:
            expected[f"seat:{seat_result['seat']}"] += Decimal(str(seat_result["score"]))
    assert table.scores == expected


def test_a_table_is_rebuilt_from_its_events() -> None:
    table = seated(hands=1)
    table.record_hand(classic_hand(table))
    table.leave(2)
    events = list(table.collect_events())
    names = [type(e).__name__ for e in events]
    assert names[:5] == ["Opened", "SeatTaken", "SeatTaken", "SeatTaken", "SeatTaken"]
    assert names[-4:] == ["HandStarted", "HandRecorded", "MatchEnded", "SeatLeft"]
    rebuilt: Any = None
    for event in events:
        rebuilt = event.mutate(rebuilt)
    assert isinstance(rebuilt, Table)
    assert rebuilt.view() == table.view()


def test_the_table_view_shows_no_cards() -> None:
    table = seated()
    hand = table.start_hand(deck=build_deck(table.rules, CLASSIC_HANDS))
    view = table.view()
    assert view.current_hand == str(hand.id)
    cards = {str(c) for h in hand.hands for c in h}
    assert not cards & set(map(str, _leaves(asdict(view))))
    assert replay(list(hand.collect_events())).deck == hand.deck


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]
