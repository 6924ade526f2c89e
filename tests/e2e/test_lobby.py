"""ListTables through the real API: a lobby of every game, filtered, paged, most recently
active first, and current with every command acknowledged before the call."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e import test_doudizhu, test_shengji
from tests.e2e.harness import LiveServer, server_config

FOLLOW_SECONDS = 60  # a generous bound: the lobby follows within a poll or two


@pytest.fixture(scope="module")
def lobby_server(tmp_path_factory: pytest.TempPathFactory) -> LiveServer:
    """A referee of its own: the listing must hold exactly this module's tables."""
    live = LiveServer(server_config(tmp_path_factory.mktemp("lobby")))
    yield live  # type: ignore[misc]  # a generator fixture
    live.stop()


def ids(response: pb.ListTablesResponse) -> list[str]:
    return [t.table_id for t in response.tables]


def test_a_lobby_lists_filters_and_pages_tables_of_every_game(
        lobby_server: LiveServer) -> None:
    platform = lobby_server.platform()
    doudizhu = test_doudizhu.doudizhu_table(lobby_server, prefix="lobby").table_id
    waiting = platform.create_table("classic", 4, name="open seats").table.table_id
    platform.join_table(waiting, "ann", 0)
    shengji = test_shengji.shengji_table(lobby_server)
    hand = shengji.platform.start_hand(shengji.table_id).hand
    closed = platform.create_table("qq3", 3).table.table_id
    platform.close_table(closed, "no players")

    everything = platform.list_tables()
    # Most recent activity first: the close, then the Shengji deal, then ann sitting down,
    # then the 斗地主 table's seats.
    assert ids(everything) == [closed, shengji.table_id, waiting, doudizhu]
    assert everything.as_of_position == platform.feed_head()
    by_id = {t.table_id: t for t in everything.tables}
    assert by_id[waiting].state == pb.TABLE_STATE_WAITING
    assert by_id[waiting].seats[0].player_id == "ann" and by_id[waiting].name == "open seats"
    assert by_id[shengji.table_id].state == pb.TABLE_STATE_PLAYING
    assert by_id[shengji.table_id].current_hand_id == hand.hand_id
    assert by_id[shengji.table_id].game == "shengji"
    assert by_id[closed].state == pb.TABLE_STATE_CLOSED and by_id[closed].preset == "qq3"
    assert by_id[doudizhu].game == "doudizhu" and len(by_id[doudizhu].seats) == 3

    assert ids(platform.list_tables(game="shengji")) == [shengji.table_id]
    assert ids(platform.list_tables(game="doudizhu")) == [doudizhu]
    assert ids(platform.list_tables(preset="classic")) == [waiting, doudizhu]
    assert ids(platform.list_tables(game="fiftyk", preset="classic")) == [waiting]
    assert ids(platform.list_tables(player_id="ann")) == [waiting]
    assert ids(platform.list_tables(states=[pb.TABLE_STATE_PLAYING,
                                            pb.TABLE_STATE_CLOSED])) == [closed,
                                                                         shengji.table_id]

    # A hand's events are its table's activity: the waiting table's neighbour moves up.
    test_shengji.step(shengji, hand.hand_id, random.Random(1))
    first = platform.list_tables(page_size=2)
    assert ids(first) == [shengji.table_id, closed] and first.next_page_token
    second = platform.list_tables(page_size=2, page_token=first.next_page_token)
    assert ids(second) == [waiting, doudizhu] and not second.next_page_token


def test_listing_is_for_the_platform_and_refuses_bad_tokens(lobby_server: LiveServer) -> None:
    platform = lobby_server.platform()
    with pytest.raises(grpc.RpcError) as refused:
        platform.list_tables(page_token="not a token")
    assert error_reason(refused.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT,
                                               "INVALID_REQUEST")
    with pytest.raises(grpc.RpcError) as refused:
        platform.list_tables(states=[99])
    assert error_reason(refused.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT,
                                               "INVALID_REQUEST")
    with pytest.raises(grpc.RpcError) as refused:
        lobby_server.audit().list_tables()
    assert error_reason(refused.value)[:2] == (grpc.StatusCode.PERMISSION_DENIED,
                                               "PLATFORM_REQUIRED")


def test_the_lobby_follows_the_feed_hub_without_reading_events_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub reads and decodes each new event once; the lobby is handed the hub's batches
    and reads nothing from the store itself while they cover the feed."""
    live = LiveServer(server_config(tmp_path))
    try:
        app, follower = live.running.app, live.running.lobby
        assert follower is not None
        readers: list[str] = []
        real = app.recorder.select_notifications

        def counted(*args: Any, **kwargs: Any) -> Any:
            readers.append(threading.current_thread().name)
            return real(*args, **kwargs)

        monkeypatch.setattr(app.recorder, "select_notifications", counted)
        platform = live.platform()
        fiftyk = platform.create_table("classic", 4).table.table_id
        for seat in range(4):
            platform.join_table(fiftyk, f"hub-f-{seat}", seat)
        shengji = test_shengji.shengji_table(live)
        platform.start_hand(shengji.table_id)
        deadline = time.monotonic() + FOLLOW_SECONDS
        while follower.lobby.position() < app.head_position():
            assert time.monotonic() < deadline, "the lobby did not follow the feed"
            time.sleep(0.02)
        assert readers, "the hub reads the feed"
        assert "lobby" not in readers
        listed = {t.table_id: t for t in platform.list_tables().tables}
        assert set(listed) == {fiftyk, shengji.table_id}
        assert listed[shengji.table_id].state == pb.TABLE_STATE_PLAYING
    finally:
        live.stop()
