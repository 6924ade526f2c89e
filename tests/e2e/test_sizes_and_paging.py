"""Every documented size is enforced at the door (INVALID_REQUEST with the field), list
answers are paged by bytes as well as by count (a page stops before the message size limit
and says there is more), an answer gRPC would not send is refused MESSAGE_TOO_LARGE with its
ErrorInfo, and an over-long table name stored by an older version is shown cut instead of
breaking the listings."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.paging import CUT_MARK, MAX_TABLE_NAME_LENGTH
from tests.e2e.every_game import GAMES as HOSTED
from tests.e2e.harness import LiveServer, server_config
from tests.support.webhook_receiver import WebhookReceiver

GAMES = [(game.name, game.preset, game.players) for game in HOSTED.values()]
SMALLEST_MESSAGE = 4096  # the smallest message size limit the configuration takes
LEGACY_NAME_LENGTH = 900_000
LEGACY_TABLES = 3  # together over gRPC's own 2 MiB limit on a sent message
TABLES = 40
WAIT_SECONDS = 60.0


@pytest.fixture
def small(tmp_path: Path) -> Any:
    live = LiveServer(server_config(tmp_path, max_message_bytes=SMALLEST_MESSAGE,
                                    webhooks="backoff=0.01,max_backoff=0.02,attempts=1,"
                                             "poll=0.1,timeout=2,lease=5"))
    yield live
    live.stop()


@pytest.fixture
def live(tmp_path: Path) -> Any:
    server = LiveServer(server_config(tmp_path))
    yield server
    server.stop()


@pytest.mark.parametrize(("game", "preset", "players"), GAMES)
def test_a_table_name_over_128_characters_is_refused_invalid_request(
        live: LiveServer, game: str, preset: str, players: int) -> None:
    platform = live.platform()
    name = "n" * MAX_TABLE_NAME_LENGTH
    assert platform.create_table(preset, players, game=game, name=name).table.name == name
    with pytest.raises(grpc.RpcError) as refused:
        platform.create_table(preset, players, game=game, name=name + "n")
    details = error_details(refused.value)
    assert (details.code, details.reason) == (grpc.StatusCode.INVALID_ARGUMENT,
                                              "INVALID_REQUEST")
    assert [v.field for v in details.field_violations] == ["name"]
    assert "128" in details.message


def test_a_listing_filtered_by_a_player_id_over_128_characters_is_refused(
        live: LiveServer) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        live.platform().list_tables(player_id="p" * 129)
    details = error_details(refused.value)
    assert (details.code, details.reason) == (grpc.StatusCode.INVALID_ARGUMENT,
                                              "INVALID_REQUEST")
    assert [v.field for v in details.field_violations] == ["player_id"]


@pytest.mark.parametrize(("game", "preset", "players"), GAMES)
def test_over_long_names_stored_by_an_older_version_are_shown_cut(
        live: LiveServer, game: str, preset: str, players: int) -> None:
    """Older versions stored any name: the use case still takes one (the door is the gRPC
    edge), so the store holds what they left."""
    legacy = "L" * LEGACY_NAME_LENGTH
    shown = legacy[:MAX_TABLE_NAME_LENGTH] + CUT_MARK
    ids = [live.run(_in_executor(live, lambda: live.running.app.create_table(
        preset, None, players, name=legacy, game=game))).table_id for _ in range(LEGACY_TABLES)]
    platform = live.platform()
    listed = platform.list_tables(game=game, page_size=50)
    assert {t.table_id for t in listed.tables} == set(map(str, ids))
    assert {t.name for t in listed.tables} == {shown}
    assert platform.get_table(str(ids[0])).name == shown
    opened = [e for e in platform.read_events(0, 500).events if e.name == "table.opened"]
    assert [e.table_opened.name for e in opened] == [shown] * LEGACY_TABLES


async def _in_executor(live: LiveServer, function: Any) -> Any:
    import asyncio
    return await asyncio.get_running_loop().run_in_executor(live.running.executor, function)


def _names(count: int) -> list[str]:
    return [f"{index:03d}".ljust(MAX_TABLE_NAME_LENGTH, "x") for index in range(count)]


@pytest.mark.parametrize(("game", "preset", "players"), GAMES)
def test_list_tables_pages_by_bytes_under_the_message_size_limit(
        small: LiveServer, game: str, preset: str, players: int) -> None:
    platform = small.platform()
    created = {platform.create_table(preset, players, game=game, name=name).table.table_id
               for name in _names(TABLES)}
    seen: list[str] = []
    token, pages = "", 0
    while True:
        page = platform.list_tables(page_size=50, page_token=token)
        assert page.ByteSize() <= SMALLEST_MESSAGE
        seen.extend(t.table_id for t in page.tables)
        pages += 1
        if not page.next_page_token:
            break
        token = page.next_page_token
    assert sorted(seen) == sorted(created)  # each once
    assert pages > 1


@pytest.mark.parametrize(("game", "preset", "players"), GAMES)
def test_read_events_pages_by_bytes(
        small: LiveServer, game: str, preset: str, players: int) -> None:
    platform = small.platform()
    for name in _names(TABLES):
        platform.create_table(preset, players, game=game, name=name)
    head = platform.feed_head()
    positions: list[int] = []
    after, pages = 0, 0
    while True:
        page = platform.read_events(after, 500)
        assert page.ByteSize() <= SMALLEST_MESSAGE
        positions.extend(e.position for e in page.events)
        pages += 1
        if not page.has_more:
            break
        assert page.last_position == page.events[-1].position
        after = page.last_position
    assert positions == list(range(1, head + 1))
    assert pages > 1


@pytest.mark.parametrize("game", sorted(HOSTED))
def test_hand_history_pages_by_bytes(small: LiveServer, game: str) -> None:
    hosted = HOSTED[game]
    hand_id = hosted.play_hand(hosted.open_table(small), random.Random(7)).hand_id
    audit = small.audit()
    versions: list[int] = []
    after, pages = 0, 0
    while True:
        page = audit.hand_history(hand_id, after_version=after, limit=500)
        assert page.ByteSize() <= SMALLEST_MESSAGE
        versions.extend(e.aggregate_version for e in page.events)
        pages += 1
        if not page.has_more:
            break
        after = page.events[-1].aggregate_version
    assert versions == list(range(1, len(versions) + 1))
    assert pages > 1


def test_dead_letters_page_by_bytes_and_the_client_reads_every_page(
        small: LiveServer) -> None:
    with WebhookReceiver() as failing:
        failing.failing = True
        platform = small.platform()
        webhook = platform.register_webhook(failing.url, ["table.opened"]).webhook.webhook_id
        for name in _names(TABLES):
            platform.create_table("classic", 4, name=name)
        deadline = time.monotonic() + WAIT_SECONDS
        while len(letters := platform.webhook_dead_letters(webhook)) < TABLES:
            assert time.monotonic() < deadline, len(letters)
            time.sleep(0.05)
        first = platform.stub.ListWebhookDeadLetters(
            pb.ListWebhookDeadLettersRequest(webhook_id=webhook), **platform._kw())
    assert first.has_more and 0 < len(first.dead_letters) < TABLES
    assert first.ByteSize() <= SMALLEST_MESSAGE
    assert first.last_position == first.dead_letters[-1].position
    positions = [letter.position for letter in letters]
    assert positions == sorted(set(positions)) and len(positions) == TABLES
