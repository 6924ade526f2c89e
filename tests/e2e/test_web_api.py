"""The web port's HTTP API without a browser: the bounds of `POST /api/replay` (its rate per
address, its size, its nesting, its own threads and how many may wait), live streams that
end when their client goes away, the icon, and a gRPC client knocking at the wrong port."""

from __future__ import annotations

import json
import logging
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2_grpc as pb_grpc
from fiftyk_referee.service.web.gateway import MAX_JSON_DEPTH, WebTable
from tests.e2e.harness import LiveServer, server_config
from tests.e2e.live import wait_until

WAIT_SECONDS = 60.0
ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "docs" / "examples" / "transcript-qq3.json").read_bytes()
SPECTATORS_WATCHING = "fiftyk_spectators_watching"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A referee with its web port (rate limits off, as for every test of something else)."""
    live = LiveServer(server_config(tmp_path_factory.mktemp("web-api"), web_port=0))
    try:
        yield live
    finally:
        live.stop()


def web_url(live: LiveServer, path: str) -> str:
    """An address on the server's web port."""
    return f"http://127.0.0.1:{live.running.web_port}{path}"


def web_table(live: LiveServer) -> WebTable:
    """The server's web port."""
    assert live.running.web is not None
    return live.running.web


def post(url: str, body: bytes) -> tuple[int, dict[str, str], bytes]:
    """POST a body; the status, headers and body of the answer, whatever the status."""
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def get(url: str) -> tuple[int, dict[str, str], bytes]:
    """GET; the status, headers and body of the answer, whatever the status."""
    try:
        with urllib.request.urlopen(url, timeout=WAIT_SECONDS) as answer:
            return answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


# -- replays: a rate per address, a size, a depth ---------------------------------------------


def test_replays_from_one_address_beyond_its_rate_answer_429_with_retry_after(
        tmp_path: Path) -> None:
    # Three replays at once for an anonymous address, one more every 1,000 s: the fourth is
    # refused whatever the machine's speed.
    live = LiveServer(server_config(tmp_path, web_port=0,
                                    rate_limits="anonymous.adjudicate=0.001/3"))
    try:
        url = web_url(live, "/api/replay")
        assert [post(url, EXAMPLE)[0] for _ in range(3)] == [200, 200, 200]
        status, headers, body = post(url, EXAMPLE)
        assert status == 429
        assert int(headers["Retry-After"]) >= 1
        answer = json.loads(body)
        assert answer["reason"] == "RATE_LIMITED" and "address" in answer["error"]
        # The gRPC service is not held back by the web port's limit.
        assert live.platform().create_table("classic", 4).table.table_id
    finally:
        live.stop()


def test_a_transcript_over_the_size_limit_answers_413(server: LiveServer) -> None:
    too_big = b" " * (server.config.max_message_bytes + 1)
    status, _, body = post(web_url(server, "/api/replay"), too_big)
    assert status == 413
    assert json.loads(body)["reason"] == "MESSAGE_TOO_LARGE"


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_deeply_nested_json_answers_400_with_a_clear_message_and_no_traceback(
        server: LiveServer, depth: int) -> None:
    for nested in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        status, _, body = post(web_url(server, "/api/replay"), nested.encode())
        assert status == 400, body[:300]
        answer = json.loads(body)
        assert answer["reason"] == "INVALID_REQUEST"
        assert f"nests deeper than {MAX_JSON_DEPTH} levels" in answer["error"]
        assert "Traceback" not in body.decode() and "RecursionError" not in body.decode()


def test_no_web_endpoint_answers_500_to_a_nested_or_broken_body(server: LiveServer) -> None:
    nested = b"[" * 100_000 + b"]" * 100_000
    for path in ("/api/replay", "/api/hands/h-1", "/api/tables/t-1/watch", "/", "/app.js"):
        for body in (nested, b"\xff\xfe{", b'{"format": "fiftyk-transcript/1"'):
            status, _, text = post(web_url(server, path), body)
            assert 400 <= status < 500, (path, status, text[:300])
            assert b"Traceback" not in text


# -- replays: threads of their own, and a bound on how many wait -----------------------------


def hold_replay_threads(web: WebTable) -> threading.Event:
    """Occupy every replay thread until the returned event is set."""
    release = threading.Event()
    started = threading.Semaphore(0)

    def hold() -> None:
        started.release()
        release.wait(WAIT_SECONDS * 2)

    for _ in range(web.replays.workers):
        web.replays.executor.submit(hold)
    for _ in range(web.replays.workers):
        assert started.acquire(timeout=WAIT_SECONDS)
    return release


def post_in_background(url: str, body: bytes) -> tuple[threading.Thread, list[int]]:
    """POST from a thread; its status lands in the returned list."""
    statuses: list[int] = []
    thread = threading.Thread(target=lambda: statuses.append(post(url, body)[0]), daemon=True)
    thread.start()
    return thread, statuses


def test_a_grpc_call_completes_while_every_replay_thread_is_busy(server: LiveServer) -> None:
    web = web_table(server)
    release = hold_replay_threads(web)
    try:
        thread, statuses = post_in_background(web_url(server, "/api/replay"), EXAMPLE)
        wait_until(lambda: web.replays.in_flight() == 1, "the replay waits", WAIT_SECONDS)
        platform = server.platform()
        table = platform.create_table("classic", 4).table  # served by the gRPC workers
        assert platform.get_table(table.table_id).table_id == table.table_id
        assert not statuses  # the replay still waits for a replay thread
    finally:
        release.set()
    thread.join(WAIT_SECONDS)
    assert statuses == [200]


def test_replays_beyond_the_bound_on_waiting_ones_answer_503_with_retry_after(
        server: LiveServer) -> None:
    web = web_table(server)
    url = web_url(server, "/api/replay")
    release = hold_replay_threads(web)
    waiting = []
    try:
        for _ in range(web.replays.limit):
            waiting.append(post_in_background(url, EXAMPLE))
        wait_until(lambda: web.replays.in_flight() == web.replays.limit,
                   "every replay slot is taken", WAIT_SECONDS)
        status, headers, body = post(url, EXAMPLE)
        assert status == 503
        assert int(headers["Retry-After"]) >= 1
        assert json.loads(body)["reason"] == "LIMIT_EXCEEDED"
    finally:
        release.set()
    for thread, statuses in waiting:
        thread.join(WAIT_SECONDS)
        assert statuses == [200]
    wait_until(lambda: web.replays.in_flight() == 0, "the slots are free again", WAIT_SECONDS)


# -- live streams end with their client ---------------------------------------------------------


class SseClient:
    """A raw server-sent-events client on one socket (closing it is all a leaving browser does)."""

    def __init__(self, port: int, path: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_SECONDS)
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Accept: text/event-stream\r\n\r\n".encode())
        self.received = b""
        self._read_until(b"\r\n\r\n")
        self.status = int(self.received.split(b" ", 2)[1])

    def _read_until(self, marker: bytes) -> None:
        while marker not in self.received:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError(f"the stream ended before {marker!r}: {self.received!r}")
            self.received += chunk

    def first_event(self) -> None:
        """Wait for the stream's first event."""
        self._read_until(b"event: event")

    def read_to_end(self) -> None:
        """Read until the server closes the stream."""
        while chunk := self.sock.recv(65536):
            self.received += chunk

    def close(self) -> None:
        """Go away without a word, as a closed browser tab does."""
        self.sock.close()


def spectators_watching(live: LiveServer) -> float:
    """The `fiftyk_spectators_watching` gauge now."""
    return live.running.metrics.registry.get_sample_value(SPECTATORS_WATCHING) or 0.0


# A preset and seat count of each game.
QUIET_TABLES = {"fiftyk": ("classic", 4), "shengji": ("tractor", 4), "doudizhu": ("classic", 3)}


def quiet_table(live: LiveServer, game: str) -> tuple[str, str]:
    """A table nobody plays at, and a spectator token for it."""
    platform = live.platform()
    preset, players = QUIET_TABLES[game]
    table = platform.create_table(preset, players, game=game).table
    return table.table_id, platform.issue_spectator_token(table.table_id).spectator_token


@pytest.mark.parametrize("game", sorted(QUIET_TABLES))
def test_streams_dropped_by_their_clients_free_their_places_at_once(
        server: LiveServer, game: str) -> None:
    table_id, token = quiet_table(server, game)
    path = f"/api/tables/{table_id}/watch?token={token}"
    port = server.running.web_port
    assert port is not None
    before = spectators_watching(server)
    limit = server.config.watches.seat  # a spectator token's streams at once
    for _ in range(limit + 2):
        stream = SseClient(port, path)
        assert stream.status == 200, stream.received
        stream.first_event()
        wait_until(lambda: spectators_watching(server) == before + 1, "the stream is counted",
                   WAIT_SECONDS)
        stream.close()
        wait_until(lambda: spectators_watching(server) == before,
                   "the stream left is no longer counted", WAIT_SECONDS)
    # As many as the limit at once still open: nothing is held by the streams that left.
    streams = [SseClient(port, path) for _ in range(limit)]
    try:
        for stream in streams:
            assert stream.status == 200, stream.received
            stream.first_event()
    finally:
        for stream in streams:
            stream.close()
    wait_until(lambda: spectators_watching(server) == before, "every stream is freed", WAIT_SECONDS)


# -- the icon, and a gRPC client at the web port ----------------------------------------------


def test_the_web_port_serves_an_icon(server: LiveServer) -> None:
    status, headers, body = get(web_url(server, "/favicon.ico"))
    assert status == 200
    assert headers["Content-Type"].startswith("image/svg+xml")
    assert body.startswith(b"<svg")


def test_a_grpc_client_at_the_web_port_is_refused_with_one_warning_and_no_traceback(
        server: LiveServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with grpc.insecure_channel(f"127.0.0.1:{server.running.web_port}") as channel:
        stub = pb_grpc.RefereeServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetTable(pb.GetTableRequest(table_id="t"), timeout=WAIT_SECONDS)
    assert refused.value.code() != grpc.StatusCode.OK

    def warned() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "not HTTP/1" in r.getMessage()]

    wait_until(lambda: bool(warned()), "the web port says what it got", WAIT_SECONDS)
    web_records = [r for r in caplog.records if r.name.startswith(("aiohttp", "fiftyk_referee"))]
    assert not [r for r in web_records if r.levelno >= logging.ERROR], \
        [r.getMessage() for r in web_records]
    assert all(r.exc_info is None and r.levelno == logging.WARNING for r in warned())
    assert "\n" not in warned()[0].getMessage()


# -- a shutdown tells the web viewers why their streams end ----------------------------------

@pytest.mark.parametrize("game", sorted(QUIET_TABLES))
def test_a_shutdown_ends_every_web_stream_with_an_error_event_saying_why(
        tmp_path: Path, game: str) -> None:
    live = LiveServer(server_config(tmp_path, web_port=0))
    streams: list[SseClient] = []
    try:
        table_id, token = quiet_table(live, game)
        port = live.running.web_port
        assert port is not None
        streams = [SseClient(port, f"/api/tables/{table_id}/watch?token={token}")
                   for _ in range(2)]
        for stream in streams:
            assert stream.status == 200, stream.received
            stream.first_event()
    finally:
        live.stop()
    for stream in streams:
        stream.read_to_end()
        stream.close()
        assert b"event: error" in stream.received, stream.received
        assert b'"reason":"SHUTTING_DOWN"' in stream.received, stream.received
