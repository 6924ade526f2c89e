"""The referee's web port: the web table's page and its small HTTP API.

The page (`static/`) and three calls, served by aiohttp on a port of its own:

- `POST /api/replay` — a transcript (either game) replayed by the same code `Adjudicate`
  uses; answers its replay document (every card: the caller brought the whole deal) and
  ruling. Nothing is stored; no credential is needed, as for `Adjudicate`, and it is limited
  like an anonymous `Adjudicate`: per client address (the `anonymous.adjudicate` rate), in
  size (the gRPC message limit), in nesting (`MAX_JSON_DEPTH`) and in how many run at once
  (`REPLAY_WORKERS` threads of its own, at most `REPLAY_IN_FLIGHT` running or waiting), so
  replays never take the threads that serve gRPC.
- `GET /api/hands/{hand_id}` — a stored hand's replay document; the audit key travels in the
  `X-Fiftyk-Audit-Key` header.
- `GET /api/tables/{table_id}/watch` — a table followed live as server-sent events, with the
  credential in `Authorization: Bearer <token>` or `?token=` (a spectator token sees no
  hidden card); a reconnecting `EventSource` resumes after its `Last-Event-ID`. A comment
  line every `HEARTBEAT_SECONDS` keeps a quiet stream alive, and a client that goes away
  ends its gRPC stream at once (the transport's close cancels the handler).

The gateway holds no authority of its own: the last two calls go to the referee's own gRPC
service over a private Unix socket with the caller's credential, so authentication,
spectator rules and delays, rate and watch limits and metrics are those of the gRPC API.
Errors answer `{"error": message, "reason": CODE}` with the HTTP status of the gRPC code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import mimetypes
import ssl
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import grpc
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from fiftyk_referee.domain.aggregate import Aggregate
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.games import game_of_transcript
from fiftyk_referee.domain.observer import AUDITOR
from fiftyk_referee.service.core.public_events import feed_event
from fiftyk_referee.service.errors import RateLimited
from fiftyk_referee.service.grpc.auth import AUDIT_KEY_HEADER, AUTHORIZATION_HEADER
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.grpc.events import event_to_proto
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2_grpc as pb_grpc
from fiftyk_referee.service.ops.limits import Rate, RateLimiter
from fiftyk_referee.service.web.document import event_json, hand_document, replay_document
from fiftyk_referee.service.web.page import inline_page, static_files, with_hashes

log = logging.getLogger(__name__)

# gRPC status -> HTTP status of the same meaning.
HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400, grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400, grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403, grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409, grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429, grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}
BAD_GATEWAY = 502
GATEWAY_CALL_SECONDS = 30.0
# Headers of every answer: the page loads nothing from elsewhere and is never framed.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self';"
                               " img-src 'self' data:; connect-src 'self';"
                               " frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
TOKEN_PARAMETER = "token"  # EventSource sends no headers: the token may come as ?token=
LAST_EVENT_ID = "Last-Event-ID"  # sent by a reconnecting EventSource: resume after it
SSE_HEADERS = {"Content-Type": "text/event-stream", "Cache-Control": "no-store",
               "X-Accel-Buffering": "no"}
# A quiet stream gets a comment line this often: proxies keep it open, and a client that
# left without closing its connection is found out by the write.
HEARTBEAT_SECONDS = 15.0
HEARTBEAT = b": heartbeat\n\n"
# At shutdown, how long the live streams have to tell their viewers why they end.
STREAM_END_SECONDS = 2.0
# Transcript replays run on threads of their own (never the ones serving gRPC), at most
# REPLAY_IN_FLIGHT running or waiting at once; more answer 503 with Retry-After.
REPLAY_WORKERS = 2
REPLAY_IN_FLIGHT = 8
REPLAY_BUSY_RETRY_SECONDS = 1
# A transcript is a few levels deep; deeper JSON is refused before the replay reads it.
MAX_JSON_DEPTH = 32
# Stored hands are read through the gRPC service: threads of their own too.
HAND_WORKERS = 2
# The page's icon: a card.
FAVICON = "favicon.svg"
# The rate of anonymous `Adjudicate` calls: what a web replay of one address is held to.
REPLAY_ROLE, REPLAY_CLASS = "anonymous", "adjudicate"


def _error(status: int, message: str, reason: str | None, *,
           retry_after: float | None = None) -> web.Response:
    headers = {"Cache-Control": "no-store"}
    if retry_after is not None:
        headers["Retry-After"] = str(max(1, math.ceil(retry_after)))
    return web.json_response({"error": message, "reason": reason}, status=status,
                             headers=headers)


def json_depth(value: Any) -> int:
    """How deeply `value` nests lists and objects (0 for a scalar), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in node)
    return deepest


def parse_json_body(body: bytes) -> Any:
    """A request body as JSON, at most MAX_JSON_DEPTH deep; ValueError saying why not."""
    try:
        data = json.loads(body)
    except RecursionError:
        raise ValueError(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as error:
        raise ValueError(f"the body is not JSON: {error}") from None
    if json_depth(data) > MAX_JSON_DEPTH:
        raise ValueError(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels")
    return data


def _rpc_error(error: grpc.RpcError) -> web.Response:
    details = error_details(error)
    return _error(HTTP_STATUS.get(details.code, BAD_GATEWAY), details.message, details.reason)


def transcript_document(data: Any) -> dict[str, Any]:
    """A transcript replayed into its replay document (RuleError when it is unreadable)."""
    game = game_of_transcript(data)
    hand, result = game.replay(data)
    if not isinstance(hand, Aggregate):  # pragma: no cover - every game's hand is an aggregate
        raise TypeError(f"{type(hand).__name__} is not an event-sourced hand")
    events: list[pb.Event] = []
    for stored in hand.collect_events():
        feed = feed_event(stored)
        if feed is not None:
            events.append(event_to_proto(feed, feed.public(AUDITOR)))
    return replay_document(events, transcript=data, result=result)


def _sse(kind: str, data: Any, event_id: int | None = None) -> bytes:
    lines = [f"event: {kind}"]
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines.append(f"data: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}")
    return ("\n".join(lines) + "\n\n").encode("utf-8")


class NotHttpFilter(logging.Filter):
    """Requests that are not HTTP/1.1 (a gRPC client at the web port sends HTTP/2's preface):
    one warning line saying so, instead of aiohttp's error with a traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, HttpProcessingError):
            record.levelno, record.levelname = logging.WARNING, "WARNING"
            record.msg = ("the web port refused a request that is not HTTP/1.1 from %s (%s);"
                          " gRPC clients belong on the gRPC port")
            record.args = (record.args[0] if isinstance(record.args, tuple) and record.args
                           else "a client", " ".join(str(error.message).split()))
            record.exc_info, record.exc_text = None, None
        return True


# aiohttp's server logs through this logger (see WebTable.start).
SERVER_LOG = logging.getLogger(f"{__name__}.server")
SERVER_LOG.addFilter(NotHttpFilter())


class ReplayBusy(Exception):
    """Every replay slot is taken (running or waiting)."""


class Replays:
    """The replays' own threads, and how many may run or wait at once."""

    def __init__(self, workers: int, in_flight: int) -> None:
        self.workers = workers
        self.limit = in_flight
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="web-replay")
        self._count = 0
        self._lock = threading.Lock()

    @property
    def executor(self) -> ThreadPoolExecutor:
        """The threads replays run on."""
        return self._executor

    def in_flight(self) -> int:
        """Replays running or waiting for a thread now."""
        return self._count

    def submit(self, work: Callable[[], Any]) -> Future[Any]:
        """Run `work` on a replay thread; ReplayBusy when `limit` are running or waiting.

        The slot is held until the work is done (or dropped before it started), not until
        its caller stops waiting: a client that leaves does not free a thread still busy."""
        with self._lock:
            if self._count >= self.limit:
                raise ReplayBusy
            self._count += 1
        try:
            future = self._executor.submit(work)
        except BaseException:
            self._release(None)
            raise
        future.add_done_callback(self._release)
        return future

    def _release(self, _: Future[Any] | None) -> None:
        with self._lock:
            self._count -= 1

    def shutdown(self) -> None:
        """Drop waiting replays; running ones finish on their own."""
        self._executor.shutdown(wait=False, cancel_futures=True)


class WebTable:
    """The web port: static page, transcript replays, stored hands and live tables."""

    def __init__(self, grpc_target: str, *, max_body_bytes: int,
                 replay_rate: Rate | None = None, replay_workers: int = REPLAY_WORKERS,
                 replay_in_flight: int = REPLAY_IN_FLIGHT) -> None:
        self._target = grpc_target
        self._max_body = max_body_bytes
        self.replays = Replays(replay_workers, replay_in_flight)
        self._replay_limiter = RateLimiter({REPLAY_ROLE: {REPLAY_CLASS: replay_rate}})
        self._hands = ThreadPoolExecutor(max_workers=HAND_WORKERS, thread_name_prefix="web-hand")
        self._files = static_files()
        self._page = inline_page()
        self._sync_channel: grpc.Channel | None = None
        self._aio_channel: grpc.aio.Channel | None = None
        self._runner: web.AppRunner | None = None
        self._streams: set[asyncio.Task[Any]] = set()
        self._no_streams = asyncio.Event()  # set while no stream is open
        self._no_streams.set()
        self.app = web.Application(client_max_size=max_body_bytes,
                                   middlewares=[self._headers])
        self.app.router.add_get("/", self._index)
        self.app.router.add_get("/favicon.ico", self._favicon)
        self.app.router.add_post("/api/replay", self._replay)
        self.app.router.add_get("/api/hands/{hand_id}", self._hand)
        self.app.router.add_get("/api/tables/{table_id}/watch", self._watch)
        self.app.router.add_get("/{path:[A-Za-z0-9_./-]+}", self._static)

    @web.middleware
    async def _headers(self, request: web.Request,
                       handler: Callable[[web.Request], Any]) -> web.StreamResponse:
        try:
            response: web.StreamResponse = await handler(request)
        except web.HTTPException:
            raise
        except Exception:  # a defect: the caller gets a plain answer, the log the details
            log.exception("the web port failed to answer %s %s", request.method, request.path)
            response = _error(500, "the web table failed to answer this request", None)
        if not response.prepared:
            for name, value in SECURITY_HEADERS.items():
                response.headers.setdefault(name, value)
        return response

    async def start(self, host: str, port: int, ssl_context: ssl.SSLContext | None) -> int:
        """Listen on host:port (0 picks a port); returns the port."""
        self._sync_channel = grpc.insecure_channel(self._target)
        self._aio_channel = grpc.aio.insecure_channel(self._target)
        # handler_cancellation: a client that closes its connection cancels its handler, so
        # a live stream it left ends (and frees its watch slot) at once.
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False,
                                     handler_cancellation=True, logger=SERVER_LOG)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, ssl_context=ssl_context)
        await site.start()
        server = site._server  # aiohttp names the bound socket only through its server
        sockets = getattr(server, "sockets", None) or []
        return int(sockets[0].getsockname()[1]) if sockets else port

    async def stop(self, grace: float = STREAM_END_SECONDS) -> None:
        """Close the streams and the port. The service has ended their gRPC streams
        UNAVAILABLE/SHUTTING_DOWN by now: each stream gets `grace` seconds to write that to its
        viewer as an `error` event (so a page says why and goes elsewhere), then is cut."""
        if self._streams:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._no_streams.wait(), grace)
        for task in list(self._streams):
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._aio_channel is not None:
            await self._aio_channel.close()
        if self._sync_channel is not None:
            self._sync_channel.close()
        self.replays.shutdown()
        self._hands.shutdown(wait=False, cancel_futures=True)

    # -- the page ---------------------------------------------------------------------------

    async def _index(self, request: web.Request) -> web.Response:
        # The page in one answer; its inline scripts and style are allowed by their hashes.
        policy = with_hashes(SECURITY_HEADERS["Content-Security-Policy"],
                             self._page.script_sources, self._page.style_sources)
        return web.Response(text=self._page.html, content_type="text/html", charset="utf-8",
                            headers={"Cache-Control": "no-cache",
                                     "Content-Security-Policy": policy})

    async def _static(self, request: web.Request) -> web.Response:
        return self._file(request.match_info["path"])

    async def _favicon(self, request: web.Request) -> web.Response:
        return self._file(FAVICON)

    def _file(self, name: str) -> web.Response:
        body = self._files.get(name)
        if body is None:
            return _error(404, f"no such file {name!r}", None)
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return web.Response(body=body, content_type=kind, charset="utf-8",
                            headers={"Cache-Control": "no-cache"})

    # -- the API ----------------------------------------------------------------------------

    async def _replay(self, request: web.Request) -> web.Response:
        address = request.remote or "unknown"
        try:
            self._replay_limiter.check(REPLAY_ROLE, REPLAY_CLASS, f"web:{address}")
        except RateLimited as limited:
            wait = limited.retry_after_seconds
            return _error(429, f"too many transcript replays from this address (the rate of an"
                          f" anonymous Adjudicate); retry in {wait:.3f} s",
                          str(limited.reason), retry_after=wait)
        try:
            data = parse_json_body(await request.read())
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"a transcript is at most {self._max_body} bytes",
                          "MESSAGE_TOO_LARGE")
        except ValueError as error:  # UnicodeDecodeError too
            return _error(400, str(error), "INVALID_REQUEST")
        try:
            running = self.replays.submit(lambda: transcript_document(data))
        except ReplayBusy:
            return _error(503, f"{self.replays.limit} transcript replays are running or"
                          " waiting; retry shortly", "LIMIT_EXCEEDED",
                          retry_after=REPLAY_BUSY_RETRY_SECONDS)
        try:
            document = await asyncio.wrap_future(running)
        except RuleError as error:
            return _error(400, error.message, error.reason.value)
        except RecursionError:
            return _error(400, "the transcript nests too deeply to be read", "INVALID_TRANSCRIPT")
        return web.json_response(document, headers={"Cache-Control": "no-store"})

    async def _hand(self, request: web.Request) -> web.Response:
        key = request.headers.get(AUDIT_KEY_HEADER)
        if not key:
            return _error(401, f"a stored hand needs the audit key ({AUDIT_KEY_HEADER})",
                          "MISSING_CREDENTIALS")
        if self._sync_channel is None:  # pragma: no cover - routes run only once started
            raise RuntimeError("the web table is not started")
        client = RefereeClient(self._sync_channel, audit_key=key, timeout=GATEWAY_CALL_SECONDS)
        hand_id = request.match_info["hand_id"]
        loop = asyncio.get_running_loop()
        try:
            document = await loop.run_in_executor(self._hands, hand_document, client, hand_id)
        except grpc.RpcError as error:
            return _rpc_error(error)
        return web.json_response(document, headers={"Cache-Control": "no-store"})

    async def _watch(self, request: web.Request) -> web.StreamResponse:
        credential = request.headers.get(AUTHORIZATION_HEADER)
        if not credential and request.query.get(TOKEN_PARAMETER):
            credential = f"Bearer {request.query[TOKEN_PARAMETER]}"
        if not credential:
            return _error(401, "watching a table needs `Authorization: Bearer <token>` or"
                          f" ?{TOKEN_PARAMETER}=<token>", "MISSING_CREDENTIALS")
        try:
            after = int(request.headers.get(LAST_EVENT_ID, "0") or 0)
        except ValueError:
            return _error(400, f"{LAST_EVENT_ID} must be a feed position", "INVALID_REQUEST")
        if self._aio_channel is None:  # pragma: no cover - routes run only once started
            raise RuntimeError("the web table is not started")
        stub = pb_grpc.RefereeServiceStub(self._aio_channel)
        call = stub.WatchTable(pb.WatchTableRequest(table_id=request.match_info["table_id"],
                                                    after_position=max(after, 0)),
                               metadata=((AUTHORIZATION_HEADER, credential),))
        task = asyncio.current_task()
        if task is not None:
            self._streams.add(task)
            self._no_streams.clear()
        try:
            return await self._stream(request, call)
        finally:
            call.cancel()
            if task is not None:
                self._streams.discard(task)
                if not self._streams:
                    self._no_streams.set()

    async def _stream(self, request: web.Request, call: Any) -> web.StreamResponse:
        # The first message (or the refusal) comes before the answer's status is chosen.
        try:
            first = await call.read()
        except grpc.RpcError as error:
            return _rpc_error(error)
        response = web.StreamResponse(headers={**SSE_HEADERS, **SECURITY_HEADERS})
        await response.prepare(request)
        message = first
        try:
            while message is not grpc.aio.EOF:
                event = message.event
                await response.write(_sse("event", event_json(event), event.position))
                message = await self._next(call, response)
        except grpc.RpcError as error:
            details = error_details(error)
            await response.write(_sse("error", {"error": details.message,
                                                "reason": details.reason}))
        except (ConnectionResetError, asyncio.CancelledError):
            log.debug("a web watcher left")
            raise
        return response

    @staticmethod
    async def _next(call: Any, response: web.StreamResponse) -> Any:
        """The stream's next message, with a heartbeat written while none comes."""
        reading = asyncio.ensure_future(call.read())
        try:
            while True:
                done, _ = await asyncio.wait((reading,), timeout=HEARTBEAT_SECONDS)
                if done:
                    return reading.result()
                await response.write(HEARTBEAT)
        finally:
            if not reading.done():
                reading.cancel()


__all__ = ["HTTP_STATUS", "ReplayBusy", "Replays", "WebTable", "json_depth",
           "parse_json_body", "transcript_document"]
