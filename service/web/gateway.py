"""The referee's web port: the web table's page and its small HTTP API.

The page (`static/`) and three calls, served by aiohttp on a port of its own:

- `POST /api/replay` — a transcript (either game) replayed by the same code `Adjudicate`
  uses; answers its replay document (every card: the caller brought the whole deal) and
  ruling. Nothing is stored; no credential is needed, as for `Adjudicate`.
- `GET /api/hands/{hand_id}` — a stored hand's replay document; the audit key travels in the
  `X-Fiftyk-Audit-Key` header.
- `GET /api/tables/{table_id}/watch` — a table followed live as server-sent events, with the
  credential in `Authorization: Bearer <token>` or `?token=` (a spectator token sees no
  hidden card); a reconnecting `EventSource` resumes after its `Last-Event-ID`.

The gateway holds no authority of its own: the last two calls go to the referee's own gRPC
service over a private Unix socket with the caller's credential, so authentication,
spectator rules and delays, rate and watch limits and metrics are those of the gRPC API.
Errors answer `{"error": message, "reason": CODE}` with the HTTP status of the gRPC code.
"""

from __future__ import annotations

import asyncio
import json
import logging
import mimetypes
import ssl
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

import grpc
from aiohttp import web

from fiftyk_referee.domain.aggregate import Aggregate
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.games import game_of_transcript
from fiftyk_referee.domain.observer import AUDITOR
from fiftyk_referee.service.client import RefereeClient
from fiftyk_referee.service.grpc.auth import AUDIT_KEY_HEADER, AUTHORIZATION_HEADER
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.grpc.events import event_to_proto
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2_grpc as pb_grpc
from fiftyk_referee.service.public_events import feed_event
from fiftyk_referee.service.web.document import event_json, hand_document, replay_document
from fiftyk_referee.service.web.page import inline_page, static_files

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


def _error(status: int, message: str, reason: str | None) -> web.Response:
    return web.json_response({"error": message, "reason": reason}, status=status,
                             headers={"Cache-Control": "no-store"})


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


class WebTable:
    """The web port: static page, transcript replays, stored hands and live tables."""

    def __init__(self, grpc_target: str, executor: Executor, *, max_body_bytes: int) -> None:
        self._target = grpc_target
        self._max_body = max_body_bytes
        self._executor = executor
        self._files = static_files()
        self._page = inline_page()
        self._sync_channel: grpc.Channel | None = None
        self._aio_channel: grpc.aio.Channel | None = None
        self._runner: web.AppRunner | None = None
        self._streams: set[asyncio.Task[Any]] = set()
        self.app = web.Application(client_max_size=max_body_bytes,
                                   middlewares=[self._headers])
        self.app.router.add_get("/", self._index)
        self.app.router.add_post("/api/replay", self._replay)
        self.app.router.add_get("/api/hands/{hand_id}", self._hand)
        self.app.router.add_get("/api/tables/{table_id}/watch", self._watch)
        self.app.router.add_get("/{path:[A-Za-z0-9_./-]+}", self._static)

    @web.middleware
    async def _headers(self, request: web.Request,
                       handler: Callable[[web.Request], Any]) -> web.StreamResponse:
        response: web.StreamResponse = await handler(request)
        if not response.prepared:
            for name, value in SECURITY_HEADERS.items():
                response.headers.setdefault(name, value)
        return response

    async def start(self, host: str, port: int, ssl_context: ssl.SSLContext | None) -> int:
        """Listen on host:port (0 picks a port); returns the port."""
        self._sync_channel = grpc.insecure_channel(self._target)
        self._aio_channel = grpc.aio.insecure_channel(self._target)
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, ssl_context=ssl_context)
        await site.start()
        server = site._server  # aiohttp names the bound socket only through its server
        sockets = getattr(server, "sockets", None) or []
        return int(sockets[0].getsockname()[1]) if sockets else port

    async def stop(self) -> None:
        """Close the streams and the port."""
        for task in list(self._streams):
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
        if self._aio_channel is not None:
            await self._aio_channel.close()
        if self._sync_channel is not None:
            self._sync_channel.close()

    # -- the page ---------------------------------------------------------------------------

    async def _index(self, request: web.Request) -> web.Response:
        # The page in one answer; its inline scripts and style are allowed by their hashes.
        policy = SECURITY_HEADERS["Content-Security-Policy"].replace(
            "script-src 'self'", f"script-src 'self' {' '.join(self._page.script_sources)}"
        ).replace("style-src 'self'", f"style-src 'self' {' '.join(self._page.style_sources)}")
        return web.Response(text=self._page.html, content_type="text/html", charset="utf-8",
                            headers={"Cache-Control": "no-cache",
                                     "Content-Security-Policy": policy})

    async def _static(self, request: web.Request) -> web.Response:
        return self._file(request.match_info["path"])

    def _file(self, name: str) -> web.Response:
        body = self._files.get(name)
        if body is None:
            return _error(404, f"no such file {name!r}", None)
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        return web.Response(body=body, content_type=kind, charset="utf-8",
                            headers={"Cache-Control": "no-cache"})

    # -- the API ----------------------------------------------------------------------------

    async def _replay(self, request: web.Request) -> web.Response:
        try:
            data = await request.json(loads=json.loads)
        except web.HTTPRequestEntityTooLarge:
            return _error(413, f"a transcript is at most {self._max_body} bytes",
                          "MESSAGE_TOO_LARGE")
        except (ValueError, UnicodeDecodeError) as error:
            return _error(400, f"the body is not JSON: {error}", "INVALID_REQUEST")
        loop = asyncio.get_running_loop()
        try:
            document = await loop.run_in_executor(self._executor, transcript_document, data)
        except RuleError as error:
            return _error(400, error.message, error.reason.value)
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
            document = await loop.run_in_executor(self._executor, hand_document, client, hand_id)
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
        try:
            return await self._stream(request, call)
        finally:
            call.cancel()
            if task is not None:
                self._streams.discard(task)

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
                message = await call.read()
        except grpc.RpcError as error:
            details = error_details(error)
            await response.write(_sse("error", {"error": details.message,
                                                "reason": details.reason}))
        except (ConnectionResetError, asyncio.CancelledError):
            log.debug("a web watcher left")
            raise
        return response


__all__ = ["HTTP_STATUS", "WebTable", "transcript_document"]
