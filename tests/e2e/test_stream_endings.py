"""How a WatchTable stream ends when nothing is wrong with its client: the server shuts down
(UNAVAILABLE, SHUTTING_DOWN — never UNKNOWN, whatever the stream was waiting for and however
short the grace), or the token it was opened with expires (UNAUTHENTICATED, TOKEN_EXPIRED),
for every kind of watcher of every game."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from fiftyk_referee.service.grpc.auth import issue_seat_token
from fiftyk_referee.service.grpc.errors import error_reason
from tests.e2e import test_doudizhu, test_shengji
from tests.e2e.harness import LiveServer, Seated, seat_bots, server_config
from tests.e2e.live import StreamEnding

# Shorter than the stream's own idle wait (1 s): the server's grace runs out while the
# streams wait for events, so only the shutdown itself can end them well.
SHORT_GRACE = 0.05
WAIT_SECONDS = 60.0
SHORT_TTL_SECONDS = 2

GAMES: dict[str, Callable[[LiveServer], Seated]] = {
    "fiftyk": lambda live: seat_bots(live, "classic", 4),
    "shengji": test_shengji.shengji_table,
    "doudizhu": test_doudizhu.doudizhu_table,
}


def _ended_with(ending: StreamEnding) -> tuple[grpc.StatusCode, str]:
    code, reason, _message = error_reason(ending.error(WAIT_SECONDS))
    return code, reason


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_shutdown_ends_every_waiting_watch_stream_unavailable_shutting_down(
        tmp_path: Path, game: str) -> None:
    live = LiveServer(server_config(tmp_path))
    seated = GAMES[game](live)
    spectator = seated.platform.issue_spectator_token(seated.table_id).spectator_token
    head = seated.platform.feed_head()
    streams = [
        seated.seats[0].watch(seated.table_id, after_position=head),
        seated.seats[1].watch(seated.table_id, include_views=True),
        live.client(token=spectator).watch(seated.table_id),
        live.audit().watch(seated.table_id, after_position=head, seat=2),
        seated.platform.watch(seated.table_id),
    ]
    # Each stream is open (its handler runs) once it sent something: the ones that start at
    # the head have nothing to send, so the table moves once more for them.
    followers = []
    for stream in (streams[1], streams[2], streams[4]):
        assert next(stream).event.name == "table.opened"
    seated.platform.start_hand(seated.table_id)
    assert next(streams[0]).event.name
    assert next(streams[3]).event.name
    for stream in streams:
        followers.append(StreamEnding(stream))
    live.stop(SHORT_GRACE)
    endings = [_ended_with(follower) for follower in followers]
    assert endings == [(grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN")] * len(streams)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_spectator_stream_ends_token_expired_when_its_token_expires(
        tmp_path: Path, game: str) -> None:
    live = LiveServer(server_config(tmp_path))
    try:
        seated = GAMES[game](live)
        token = seated.platform.issue_spectator_token(
            seated.table_id, ttl_seconds=SHORT_TTL_SECONDS).spectator_token
        stream = live.client(token=token).watch(seated.table_id)
        assert next(stream).event.name == "table.opened"
        follower = StreamEnding(stream)  # a quiet table: nothing else would end it
        assert _ended_with(follower) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED")
    finally:
        live.stop()


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_seat_stream_ends_token_expired_when_its_seat_token_expires(
        tmp_path: Path, game: str) -> None:
    live = LiveServer(server_config(tmp_path))
    try:
        seated = GAMES[game](live)
        # The server issues seat tokens for at least a minute; one signed with its secret
        # for a shorter time is as good (the seat's first token generation).
        player = seated.platform.get_table(seated.table_id).seats[0].player_id
        token = issue_seat_token(live.config.token_secret, seated.table_id, 0, player,
                                 ttl_seconds=SHORT_TTL_SECONDS)
        stream = live.client(token=token).watch(seated.table_id)
        assert next(stream).event.name == "table.opened"
        follower = StreamEnding(stream)
        assert _ended_with(follower) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_EXPIRED")
    finally:
        live.stop()
