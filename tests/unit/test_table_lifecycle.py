"""The table's lifecycle: closing, aborting (voiding a hand), replacing a seat, reissuing its
token — for every hosted game, each an event that rebuilds the same table."""

from __future__ import annotations

from typing import Any

import pytest

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import Game
from fiftyk_referee.domain.games import game_named
from fiftyk_referee.domain.table import CLOSED, FINISHED, PLAYING, WAITING, Table
from fiftyk_referee.domain.table_events import TABLE_EVENTS

GAMES = {"fiftyk": ("classic", 4), "shengji": ("tractor", 4), "doudizhu": ("classic", 3)}


def seated(game_name: str) -> Table:
    game: Game = game_named(game_name)
    preset, players = GAMES[game_name]
    table = Table.open(game, game.rules(preset, {}), players)
    for seat in range(players):
        table.join(seat, f"player-{seat}")
    return table


def reason_of(call: Any, *args: Any) -> Reason:
    with pytest.raises(RuleError) as error:
        call(*args)
    return error.value.reason


def rebuilt(table: Table) -> Table:
    """The table replayed from its events (collected: call once per test)."""
    result: Any = None
    for stored in table.collect_events():
        result = stored.mutate(result)
    assert isinstance(result, Table)
    return result


@pytest.fixture(params=sorted(GAMES))
def table(request: pytest.FixtureRequest) -> Table:
    return seated(request.param)


def test_a_closed_table_deals_no_more_and_seats_nobody(table: Table) -> None:
    assert table.view().state == WAITING
    table.close("tournament over")
    assert table.view().state == CLOSED and table.close_reason == "tournament over"
    assert reason_of(table.start_hand) == Reason.TABLE_CLOSED
    assert reason_of(table.close, "again") == Reason.TABLE_CLOSED
    assert reason_of(table.replace_seat, 0, "newcomer") == Reason.TABLE_CLOSED
    table.leave(0)
    assert reason_of(table.join, 0, "newcomer") == Reason.TABLE_CLOSED
    assert rebuilt(table).view() == table.view()


def test_closing_lets_the_hand_in_progress_finish_and_count(table: Table) -> None:
    hand = table.start_hand()
    table.close("last hand")
    assert table.view().state == CLOSED and table.current_hand == str(hand.id)
    assert table.voided_hands == []


def test_aborting_voids_the_hand_in_progress_and_closes(table: Table) -> None:
    hand = table.start_hand()
    assert table.view().state == PLAYING
    scores = dict(table.scores)
    assert table.abort("server maintenance") == str(hand.id)
    view = table.view()
    assert view.state == CLOSED and view.current_hand is None
    assert view.voided_hands == (str(hand.id),) and view.hand_ids == (str(hand.id),)
    assert table.scores == scores and table.hands_played == 0
    # A voided hand can no longer be recorded: its score never reaches the match.
    assert reason_of(table.record_hand, hand) == Reason.NO_HAND_IN_PROGRESS
    events = list(table.collect_events())
    assert [TABLE_EVENTS.name_of(e) for e in events][-2:] == ["table.hand_voided",
                                                              "table.closed"]
    replayed: Any = None
    for stored in events:
        replayed = stored.mutate(replayed)
    assert replayed.view() == view


def test_aborting_between_hands_only_closes(table: Table) -> None:
    assert table.abort("no players") is None
    assert table.view().state == CLOSED and table.voided_hands == []


def test_a_reason_is_a_line_of_text(table: Table) -> None:
    assert reason_of(table.close, "x" * 513) == Reason.INVALID_REASON
    assert reason_of(table.abort, "x" * 513) == Reason.INVALID_REASON


def test_a_seat_is_replaced_between_hands_only(table: Table) -> None:
    table.replace_seat(2, "bot-2")
    assert table.seats[2] == "bot-2" and table.token_generation(2) == 1
    assert reason_of(table.replace_seat, 2, "player-0") == Reason.PLAYER_ALREADY_SEATED
    assert reason_of(table.replace_seat, 7, "x") == Reason.INVALID_SEAT
    assert reason_of(table.replace_seat, 1, "") == Reason.INVALID_SEAT
    table.start_hand()
    assert reason_of(table.replace_seat, 1, "bot-1") == Reason.HAND_IN_PROGRESS
    replayed = rebuilt(table)
    assert replayed.view() == table.view()
    assert replayed.token_generations == table.token_generations


def test_an_empty_seat_is_joined_not_replaced(table: Table) -> None:
    table.leave(1)
    assert reason_of(table.replace_seat, 1, "bot-1") == Reason.SEAT_EMPTY
    assert reason_of(table.reissue_token, 1) == Reason.SEAT_EMPTY


def test_a_token_is_reissued_also_mid_hand(table: Table) -> None:
    table.start_hand()
    last = table.players - 1
    assert table.reissue_token(last) == 1
    assert table.reissue_token(last) == 2
    expected = [0] * last + [2]
    assert [table.token_generation(s) for s in range(table.players)] == expected
    assert rebuilt(table).token_generations == expected


def test_a_finished_match_can_still_be_closed() -> None:
    table = seated("fiftyk")
    table._match_ended(reason="test")  # the match's end itself is pinned in test_table.py
    assert table.view().state == FINISHED
    table.close("archived")
    assert table.view().state == CLOSED


def test_a_snapshot_from_before_the_lifecycle_upcasts() -> None:
    state: dict[str, Any] = {"players": 4}
    Table.upcast_v3_v4(state)
    assert state == {"players": 4, "closed": False, "close_reason": None,
                     "voided_hands": [], "token_generations": [0, 0, 0, 0]}
