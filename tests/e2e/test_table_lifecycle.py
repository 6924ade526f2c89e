"""The table's lifecycle through the real API, for every hosted game: the feed head, the table's
version in hand answers, closing, aborting, replacing a seat and reissuing its token."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import grpc
import pytest

from fiftyk_referee.service.games.shengji import client as shengji_calls
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e import test_doudizhu, test_shengji
from tests.e2e.harness import LiveServer, Seated, play_out, seat_bots

Code = grpc.StatusCode


def _fiftyk_step(table: Seated, hand_id: str, rng: random.Random) -> pb.HandView | None:
    view = table.platform.hand_view(table.table_id, hand_id)
    client = table.seats[view.turn_seat]
    legal = client.legal_plays(table.table_id, hand_id)
    if legal.plays:
        return client.play(table.table_id, hand_id, rng.choice(legal.plays).cards).hand
    return client.pass_turn(table.table_id, hand_id).hand


def _fiftyk_play_out(table: Seated, hand: pb.HandView, rng: random.Random) -> pb.HandView:
    return play_out(table, hand, rng)[0]


def _doudizhu_step(table: Seated, hand_id: str, rng: random.Random) -> pb.HandView | None:
    return test_doudizhu.step(table, table.platform.hand_view(table.table_id, hand_id), rng)


Command = Callable[[RefereeClient, str, str], object]


@dataclass(frozen=True)
class GameUnderTest:
    """How a test seats, steps and finishes a hand of one game."""

    name: str
    seat: Callable[[LiveServer], Seated]
    step: Callable[[Seated, str, random.Random], pb.HandView | None]
    finish: Callable[[Seated, pb.HandView, random.Random], pb.HandView]
    # A command a seat may send in a hand under way (client, table id, hand id), and which
    # seat sends it as the hand stands.
    command: Command
    commanding_seat: Callable[[pb.HandView], int]


GAMES = [
    GameUnderTest("fiftyk", lambda server: seat_bots(server, "classic", 4, prefix="lc"),
                  _fiftyk_step, _fiftyk_play_out,
                  lambda client, table_id, hand_id: client.pass_turn(table_id, hand_id),
                  lambda view: view.turn_seat),
    GameUnderTest("shengji", test_shengji.shengji_table, test_shengji.step,
                  test_shengji.play_out, shengji_calls.declare, lambda view: 0),
    GameUnderTest("doudizhu", test_doudizhu.doudizhu_table, _doudizhu_step,
                  test_doudizhu.play_out,
                  lambda client, table_id, hand_id: client.act(table_id, hand_id, "pass"),
                  lambda view: view.turn_seat),
]


@pytest.fixture(params=GAMES, ids=[g.name for g in GAMES])
def game(request: pytest.FixtureRequest) -> GameUnderTest:
    chosen: GameUnderTest = request.param
    return chosen


def refusal(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as refused:
        call()
    code, reason, _ = error_reason(refused.value)
    return code, reason


def started(table: Seated, game: GameUnderTest, rng: random.Random) -> pb.HandView:
    """Deal and take a first action, so the hand is under way."""
    hand = table.platform.start_hand(table.table_id).hand
    view = game.step(table, hand.hand_id, rng)
    assert view is not None
    return view


def test_the_feed_head_is_the_last_position_without_reading_events(
        server: LiveServer) -> None:
    platform = server.platform()
    platform.create_table("classic", 4)
    head = platform.feed_head()
    assert head >= platform.read_events(max(0, head - 1)).last_position
    assert platform.read_events(head).events == []
    assert server.audit().feed_head() >= head
    seated = seat_bots(server, "classic", 4, prefix="head")
    assert refusal(lambda: seated.seats[0].feed_head()) == (Code.PERMISSION_DENIED,
                                                            "PLATFORM_REQUIRED")


def _first_command(table: Seated, hand_id: str
                   ) -> pb.PlayResponse | pb.DeclareResponse | pb.ActResponse:
    """The first command of a fresh hand, answered in full (not only the view)."""
    for client in table.seats:
        legal = client.legal_plays(table.table_id, hand_id)
        if pb.ACTION_KIND_DECLARE in legal.actions:
            return shengji_calls.declare(client, table.table_id, hand_id)
        if legal.plays:
            return client.play(table.table_id, hand_id, legal.plays[0].cards)
        if "pass" in legal.kinds:  # a bid passed (斗地主)
            return client.act(table.table_id, hand_id, "pass")
    raise AssertionError("nobody could act in a fresh hand")


def test_every_hand_command_answers_with_the_tables_version(
        server: LiveServer, game: GameUnderTest) -> None:
    rng = random.Random(19)
    table = game.seat(server)
    hand = table.platform.start_hand(table.table_id).hand
    version = table.platform.get_table(table.table_id).version
    answer = _first_command(table, hand.hand_id)
    assert answer.table_version == version and answer.version > 1
    last = game.finish(table, answer.hand, rng)
    assert last.status == pb.HAND_STATUS_COMPLETED
    assert table.platform.get_table(table.table_id).version > version


def test_a_reissued_token_resumes_the_seat_mid_hand_and_the_old_one_dies(
        server: LiveServer, game: GameUnderTest) -> None:
    rng = random.Random(7)
    table = game.seat(server)
    view = started(table, game, rng)
    old = table.seats[1]
    answer = table.platform.reissue_seat_token(table.table_id, 1, request_id="lost-phone")
    assert answer.seat == 1 and answer.seat_token != table.tokens[1]
    for call in (lambda: old.get_table(table.table_id),
                 lambda: old.hand_view(table.table_id),
                 lambda: old.legal_plays(table.table_id, view.hand_id),
                 lambda: old.scores(table.table_id)):
        assert refusal(call) == (Code.UNAUTHENTICATED, "TOKEN_REVOKED")
    assert refusal(lambda: game.command(old, table.table_id, view.hand_id)) == (
        Code.UNAUTHENTICATED, "TOKEN_REVOKED")
    # A retry of the same reissue is the same reissue: its token works too.
    again = table.platform.reissue_seat_token(table.table_id, 1, request_id="lost-phone")
    assert again.replayed and again.version == answer.version
    fresh = server.client(token=again.seat_token)
    mine = fresh.hand_view(table.table_id)
    assert mine.viewer_seat == 1 and mine.own_cards
    table.seats[1] = fresh
    assert game.finish(table, mine, rng).status == pb.HAND_STATUS_COMPLETED
    names = [e.name for e in table.platform.read_events(topics=["table.seat_token_reissued"])
             .events if e.aggregate_id == table.table_id]
    assert names == ["table.seat_token_reissued"]


def test_a_seat_is_replaced_between_hands_and_the_new_player_plays(
        server: LiveServer, game: GameUnderTest) -> None:
    rng = random.Random(11)
    table = game.seat(server)
    view = started(table, game, rng)
    assert refusal(lambda: table.platform.replace_seat(table.table_id, 2, "bot-2")) == (
        Code.FAILED_PRECONDITION, "HAND_IN_PROGRESS")
    game.finish(table, view, rng)
    old = table.seats[2]
    replaced = table.platform.replace_seat(table.table_id, 2, f"bot-{table.table_id[:8]}")
    assert replaced.table.seats[2].player_id == f"bot-{table.table_id[:8]}"
    assert refusal(lambda: old.get_table(table.table_id)) == (Code.UNAUTHENTICATED,
                                                              "TOKEN_REVOKED")
    table.seats[2] = server.client(token=replaced.seat_token)
    next_hand = table.platform.start_hand(table.table_id).hand
    assert game.finish(table, next_hand, rng).status == pb.HAND_STATUS_COMPLETED
    event = next(e for e in table.platform.read_events(topics=["table.seat_replaced"]).events
             if e.aggregate_id == table.table_id)
    assert event.table_seat_replaced.previous_player_id != event.table_seat_replaced.player_id


def test_a_closed_table_finishes_its_hand_and_deals_no_more(
        server: LiveServer, game: GameUnderTest) -> None:
    rng = random.Random(3)
    table = game.seat(server)
    view = started(table, game, rng)
    closed = table.platform.close_table(table.table_id, "tournament over")
    assert closed.table.state == pb.TABLE_STATE_CLOSED
    assert closed.table.close_reason == "tournament over"
    game.finish(table, view, rng)
    after = table.platform.get_table(table.table_id)
    assert after.hands_played == 1 and after.state == pb.TABLE_STATE_CLOSED
    assert refusal(lambda: table.platform.start_hand(table.table_id)) == (
        Code.FAILED_PRECONDITION, "TABLE_CLOSED")
    assert refusal(lambda: table.platform.close_table(table.table_id)) == (
        Code.FAILED_PRECONDITION, "TABLE_CLOSED")
    assert refusal(lambda: table.seats[0].close_table(table.table_id)) == (
        Code.PERMISSION_DENIED, "PLATFORM_REQUIRED")


def test_an_aborted_tables_hand_is_void_but_its_transcript_remains(
        server: LiveServer, game: GameUnderTest) -> None:
    rng = random.Random(5)
    table = game.seat(server)
    view = started(table, game, rng)
    before = table.platform.scores(table.table_id)
    head = table.platform.feed_head()
    aborted = table.platform.abort_table(table.table_id, "cheating suspected",
                                         request_id="abort-1")
    assert aborted.voided_hand_id == view.hand_id
    assert list(aborted.table.voided_hand_ids) == [view.hand_id]
    assert aborted.table.state == pb.TABLE_STATE_CLOSED
    assert not aborted.table.HasField("current_hand_id")
    again = table.platform.abort_table(table.table_id, "cheating suspected",
                                       request_id="abort-1")
    assert again.replayed and again.voided_hand_id == view.hand_id
    client = table.seats[game.commanding_seat(view)]
    assert refusal(lambda: game.command(client, table.table_id, view.hand_id)) == (
        Code.FAILED_PRECONDITION, "HAND_VOIDED")
    assert table.platform.scores(table.table_id).totals == before.totals
    # The voided hand's transcript is still exported, and re-rules as the hand stood.
    ruling = server.audit().adjudicate(server.audit().export_transcript(view.hand_id))
    assert ruling["status"] == "in_progress"
    feed = [e for e in table.platform.read_events(head).events
            if e.aggregate_id == table.table_id]
    assert [e.name for e in feed] == ["table.hand_voided", "table.closed"]
    assert feed[0].table_hand_voided.reason == "cheating suspected"


def test_lifecycle_refusals_name_the_field(server: LiveServer) -> None:
    table = seat_bots(server, "classic", 4, prefix="bad")
    platform: RefereeClient = table.platform
    assert refusal(lambda: platform.close_table(table.table_id, "x" * 513)) == (
        Code.INVALID_ARGUMENT, "INVALID_REASON")
    assert refusal(lambda: platform.replace_seat(table.table_id, 9, "p")) == (
        Code.INVALID_ARGUMENT, "INVALID_SEAT")
    assert refusal(lambda: platform.replace_seat(table.table_id, 0, "")) == (
        Code.INVALID_ARGUMENT, "MISSING_FIELD")
    assert refusal(lambda: platform.reissue_seat_token("not-a-uuid", 0)) == (
        Code.INVALID_ARGUMENT, "INVALID_ID")
    platform.leave_table(table.table_id, 3)
    assert refusal(lambda: platform.reissue_seat_token(table.table_id, 3)) == (
        Code.FAILED_PRECONDITION, "SEAT_EMPTY")


def test_a_watch_stream_of_a_reissued_token_ends(server: LiveServer) -> None:
    table = seat_bots(server, "classic", 4, prefix="watch")
    stream = table.seats[2].watch(table.table_id, timeout=60)
    names = []
    with pytest.raises(grpc.RpcError) as ended:
        for message in stream:
            names.append(message.event.name)
            if message.event.name == "table.seat_taken" and len(names) == 5:
                table.platform.reissue_seat_token(table.table_id, 2)
    assert error_reason(ended.value)[:2] == (Code.UNAUTHENTICATED, "TOKEN_REVOKED")
    assert names[-1] == "table.seat_token_reissued"
