"""Server interceptors for the cross-cutting concerns of every RPC: metrics and request logs.

Both wrap the method handler's behaviour and observe each call through a `_CallObserver`,
created when the call starts: `received`/`sent` per message and exactly one `finished` with
the final status code — also when the handler aborts, raises, or the client cancels. Only
`async` behaviours (a grpc.aio servicer's) are wrapped; messages a handler moves with
`context.write` or `context.read` instead of returning, yielding or iterating are not counted.

Its length (about 500 lines) is the interceptor chain, one class per concern, in the
order the server installs them.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, cast

import grpc
import grpc.aio
from google.protobuf.message import Message

from fiftyk_referee.service.core.bundles import legacy_rpcs
from fiftyk_referee.service.errors import (
    RateLimited,
    ResourceExhausted,
    ServiceError,
    ServiceReason,
)
from fiftyk_referee.service.grpc.auth import CERTIFIED_PLATFORM, AuthSettings
from fiftyk_referee.service.grpc.callers import (
    CALLER,
    Caller,
    ClientAddresses,
    certified_platform,
    identify,
)
from fiftyk_referee.service.grpc.errors import abort, refusal_reason_var
from fiftyk_referee.service.ops.limits import RateLimiter, WatchLimiter, method_class
from fiftyk_referee.service.ops.logs import hand_id_var, request_id_var, table_id_var
from fiftyk_referee.service.ops.metrics import Metrics, RpcLabels, grpc_code_label

REQUEST_ID_HEADER = "x-request-id"
# Client-chosen ids are logged verbatim, so accept only short, plain ones.
_VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
# Generated request ids: a random per-process prefix and a counter (no syscall per call).
_REQUEST_ID_PREFIX = uuid.uuid4().hex[:12]
_request_numbers = itertools.count(1)


def new_request_id() -> str:
    """A request id unique across processes, for calls that bring none."""
    return f"{_REQUEST_ID_PREFIX}-{next(_request_numbers):x}"


SERVER_ERROR_CODES = frozenset({
    grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.DATA_LOSS,
    grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.UNAVAILABLE,
})
MILLISECONDS = 1000.0

_log = logging.getLogger("fiftyk.rpc")

if TYPE_CHECKING:  # the grpc classes are generic only in their type stubs
    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]
    Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]
    Continuation: TypeAlias = Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]]



class _CallObserver(Protocol):
    """What an interceptor wants to know about one call."""

    def received(self, message: Any) -> None:
        """One request message arrived."""

    def sent(self, message: Any) -> None:
        """One response message left."""

    def finished(self, code: grpc.StatusCode) -> None:
        """The call ended with `code`; called exactly once."""


if TYPE_CHECKING:
    ObserverFactory: TypeAlias = Callable[[Context], _CallObserver]


def _grpc_type(handler: Handler) -> str:
    if handler.request_streaming:
        return "bidi_stream" if handler.response_streaming else "client_stream"
    return "server_stream" if handler.response_streaming else "unary"


class _Once:
    """Forwards to an observer and guarantees a single `finished`, whoever reports it first."""

    def __init__(self, observer: _CallObserver, context: Context):
        self.observer = observer
        self.done = False
        # A client cancelling while gRPC itself awaits a send never reaches the wrapper.
        context.add_done_callback(cast(Any, self._on_done))

    def _on_done(self, _context: object) -> None:
        self.finish(grpc.StatusCode.CANCELLED)

    def finish(self, code: grpc.StatusCode) -> None:
        if not self.done:
            self.done = True
            self.observer.finished(code)


def _final_code(context: Context, error: BaseException | None) -> grpc.StatusCode:
    if isinstance(error, asyncio.CancelledError | GeneratorExit):
        return grpc.StatusCode.CANCELLED
    if error is None or isinstance(error, grpc.aio.AbortError):
        set_code: grpc.StatusCode | None = context.code()  # None until a handler sets one
        if set_code is not None:
            return set_code
        return grpc.StatusCode.OK if error is None else grpc.StatusCode.UNKNOWN
    return grpc.StatusCode.UNKNOWN  # what grpc.aio answers for an unexpected exception


async def _counted(requests: AsyncIterator[Any], call: _Once) -> AsyncIterator[Any]:
    async for request in requests:
        call.observer.received(request)
        yield request


def _coroutine_behaviour(
    inner: Any, observe: ObserverFactory, request_streaming: bool, returns_message: bool
) -> Any:
    """Observe an `async def` behaviour (a unary response, or messages sent with write)."""

    async def behaviour(request: Any, context: Context) -> Any:
        call = _Once(observe(context), context)
        if request_streaming:
            request = _counted(request, call)
        else:
            call.observer.received(request)
        try:
            response = await inner(request, context)
        except BaseException as error:
            call.finish(_final_code(context, error))
            raise
        if returns_message:
            call.observer.sent(response)
        call.finish(_final_code(context, None))
        return response

    return behaviour


def _generator_behaviour(inner: Any, observe: ObserverFactory, request_streaming: bool) -> Any:
    """Observe an async-generator behaviour: a response stream of yielded messages."""

    async def behaviour(request: Any, context: Context) -> AsyncIterator[Any]:
        call = _Once(observe(context), context)
        if request_streaming:
            request = _counted(request, call)
        else:
            call.observer.received(request)
        try:
            async for response in inner(request, context):
                yield response
                call.observer.sent(response)
        except BaseException as error:  # GeneratorExit too: the client went away mid-stream
            call.finish(_final_code(context, error))
            raise
        call.finish(_final_code(context, None))

    return behaviour


_HANDLER_FACTORIES = (
    ("unary_unary", grpc.unary_unary_rpc_method_handler),
    ("unary_stream", grpc.unary_stream_rpc_method_handler),
    ("stream_unary", grpc.stream_unary_rpc_method_handler),
    ("stream_stream", grpc.stream_stream_rpc_method_handler),
)


def _wrap(handler: Handler, observe: ObserverFactory) -> Handler:
    """Return a handler that runs `handler`'s behaviour under an observer per call."""
    for attribute, make in _HANDLER_FACTORIES:
        inner = getattr(handler, attribute)
        if inner is None:
            continue
        if inspect.isasyncgenfunction(inner):
            behaviour = _generator_behaviour(inner, observe, handler.request_streaming)
        elif inspect.iscoroutinefunction(inner):
            behaviour = _coroutine_behaviour(
                inner, observe, handler.request_streaming, not handler.response_streaming
            )
        else:  # synchronous behaviours run on grpc's thread pool, as they are: leave them
            return handler
        return make(
            behaviour,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    return handler


MAX_WRAPPED_HANDLERS = 1024


class _WrappedHandlers:
    """Wrapped handlers by the handler they wrap: a method's handler is built once, at
    registration, so its wrapper is too (wrapping per call cost about 0.1 ms each)."""

    def __init__(self) -> None:
        self._by_handler: dict[int, tuple[Handler, Handler]] = {}

    def get(self, handler: Handler, wrap: Callable[[], Handler]) -> Handler:
        """The wrapper of `handler`, made by `wrap` the first time."""
        known = self._by_handler.get(id(handler))
        if known is not None and known[0] is handler:
            return known[1]
        wrapped = wrap()
        if len(self._by_handler) < MAX_WRAPPED_HANDLERS:  # a handler made per call: no cache
            self._by_handler[id(handler)] = (handler, wrapped)  # keeps `handler` alive
        return wrapped


class _MetricsObserver:
    """Records one call in the go-grpc-prometheus metrics."""

    def __init__(self, metrics: Metrics, rpc: RpcLabels) -> None:
        self.metrics = metrics
        self.rpc = rpc
        self.start = time.perf_counter()
        metrics.grpc_started(rpc)

    def received(self, message: Any) -> None:
        self.metrics.grpc_received(self.rpc)

    def sent(self, message: Any) -> None:
        self.metrics.grpc_sent(self.rpc)

    def finished(self, code: grpc.StatusCode) -> None:
        self.metrics.grpc_handled(self.rpc, code, time.perf_counter() - self.start)


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Counts started, handled (by status code) and timed RPCs and their messages."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._wrapped = _WrappedHandlers()

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler | None:
        """Instrument the handler of a known method; unknown methods pass through unseen."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return None  # only registered methods become labels: their number is bounded

        def wrap() -> Handler:
            rpc = RpcLabels.from_path(handler_call_details.method, _grpc_type(handler))
            return _wrap(handler, lambda _context: _MetricsObserver(self.metrics, rpc))

        return self._wrapped.get(handler, wrap)


def _header_request_id(metadata: Any) -> str | None:
    for key, value in metadata or ():
        if key == REQUEST_ID_HEADER and _is_plain(value):
            return str(value)
    return None


def _is_plain(value: object) -> bool:
    return isinstance(value, str) and _VALID_REQUEST_ID.fullmatch(value) is not None


def _field(message: Any, name: str) -> str | None:
    """A plain string field of a protobuf message, if it has one that is set."""
    if not isinstance(message, Message) or name not in message.DESCRIPTOR.fields_by_name:
        return None
    value = getattr(message, name)
    return value if _is_plain(value) else None


def _submessage(message: Any, name: str) -> Any:
    """A set message field of a protobuf message (None if absent)."""
    if not isinstance(message, Message) or name not in message.DESCRIPTOR.fields_by_name:
        return None
    field = message.DESCRIPTOR.fields_by_name[name]
    if field.message_type is None or not message.HasField(name):
        return None
    return getattr(message, name)


class _LogObserver:
    """Binds the call's ids to its logs and writes one log line when the call ends.

    The request id is the `x-request-id` header, else the command's own `request_id` (its
    idempotency key, so a retried command logs under the same id), else a fresh one. The
    table and hand ids come from the request's `table_id`/`hand_id` fields and, for ids the
    server assigns (a new table, a dealt hand), from the response's `table`/`hand`.
    """

    def __init__(self, method: str, context: Context, *, streaming: bool = False) -> None:
        self.method = method
        self.streaming = streaming
        self.start = time.perf_counter()
        self.header_id = _header_request_id(context.invocation_metadata())
        self.request_id = self.header_id or new_request_id()
        self.ids: dict[str, str] = {}
        # Each RPC runs in its own asyncio task (its own context), so the bindings end with it.
        request_id_var.set(self.request_id)

    def received(self, message: Any) -> None:
        if self.header_id is None and (command_id := _field(message, "request_id")):
            self.request_id = command_id
            request_id_var.set(command_id)
        for name, var in (("table_id", table_id_var), ("hand_id", hand_id_var)):
            if name not in self.ids and (value := _field(message, name)):
                self.ids[name] = value
                var.set(value)

    def sent(self, message: Any) -> None:
        if self.streaming:
            return  # a stream's messages are about many things; its request names the call's
        found = {
            "table_id": _field(message, "table_id")
            or _field(_submessage(message, "table"), "table_id")
            or _field(_submessage(message, "hand"), "table_id"),
            "hand_id": _field(message, "hand_id")
            or _field(_submessage(message, "hand"), "hand_id"),
        }
        for name, value in found.items():
            if value and name not in self.ids:
                self.ids[name] = value

    def finished(self, code: grpc.StatusCode) -> None:
        # Accepted calls are logged at DEBUG: every accepted command is already recorded in
        # the event store, and an INFO line per call costs a sixth of the event loop's time
        # under load. Refusals are logged at INFO, server faults at ERROR. Calls refused
        # RATE_LIMITED are at DEBUG: a flood would otherwise write a line per refused call
        # (fiftyk_rate_limited_total counts them).
        # The reason code a refusal carried (never cards or secrets: codes are fixed words).
        # Unknown when `finished` runs in a done callback, outside the call's context.
        reason = refusal_reason_var.get() if code != grpc.StatusCode.OK else None
        if code in SERVER_ERROR_CODES:
            level = logging.ERROR
        elif code == grpc.StatusCode.OK or reason == ServiceReason.RATE_LIMITED:
            level = logging.DEBUG
        else:
            level = logging.INFO
        if not _log.isEnabledFor(level):
            return
        elapsed_ms = (time.perf_counter() - self.start) * MILLISECONDS
        # Explicit extras: `finished` may run in a done callback, outside the call's context.
        _log.log(
            level, "%s %s%s", self.method, grpc_code_label(code),
            f" {reason}" if reason else "",
            extra={"request_id": self.request_id, **self.ids, "grpc_method": self.method,
                   "grpc_code": grpc_code_label(code), "duration_ms": round(elapsed_ms, 3),
                   **({"reason": reason} if reason else {})},
        )


class RequestContextInterceptor(grpc.aio.ServerInterceptor):
    """Binds the request, table and hand ids to the call's logs; logs each call's outcome."""

    def __init__(self) -> None:
        self._wrapped = _WrappedHandlers()

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler | None:
        """Wrap the handler so the ids are bound while it runs."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        streaming = bool(handler.response_streaming)
        return self._wrapped.get(handler, lambda: _wrap(
            handler, lambda context: _LogObserver(method, context, streaming=streaming)))


class _CertificateObserver:
    """Grants the platform role to a call whose verified client certificate names one."""

    def __init__(self, names: frozenset[str], context: Context) -> None:
        # Each RPC runs in its own asyncio task (its own context): the grant ends with it.
        CERTIFIED_PLATFORM.set(certified_platform(context, names))

    def received(self, message: Any) -> None:
        """Nothing to learn from the messages."""

    def sent(self, message: Any) -> None:
        """Nothing to learn from the messages."""

    def finished(self, code: grpc.StatusCode) -> None:
        """Nothing to record."""


class PlatformCertificateInterceptor(grpc.aio.ServerInterceptor):
    """Platform by client certificate: a caller whose verified TLS client certificate carries
    one of `names` (common name or subject alternative name) holds the platform role."""

    def __init__(self, names: tuple[str, ...] | frozenset[str]) -> None:
        self.names = frozenset(names)
        self._wrapped = _WrappedHandlers()

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler | None:
        """Wrap the handler so the grant is bound while it runs."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        return self._wrapped.get(handler, lambda: _wrap(
            handler, lambda context: _CertificateObserver(self.names, context)))


class RateLimitInterceptor(grpc.aio.ServerInterceptor):
    """Per-credential limits ahead of the servicer: call rates (token buckets per role and
    RPC class: RESOURCE_EXHAUSTED, RATE_LIMITED, with RetryInfo) and open WatchTable streams
    (per credential, table and server: RESOURCE_EXHAUSTED, LIMIT_EXCEEDED)."""

    def __init__(self, settings: AuthSettings, rates: RateLimiter, watches: WatchLimiter,
                 metrics: Metrics, service: str, addresses: ClientAddresses | None = None,
                 certificate_names: frozenset[str] = frozenset()) -> None:
        self._settings = settings
        self._addresses = addresses or ClientAddresses()
        self._certificate_names = certificate_names
        self._rates = rates
        self._watches = watches
        self._metrics = metrics
        self._service = service
        self._wrapped = _WrappedHandlers()

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler | None:
        """Limit the referee's methods; health and reflection pass unlimited."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        service, _, method = handler_call_details.method.strip("/").rpartition("/")
        rpc_class = method_class(method, legacy_rpcs) if service == self._service else None
        if rpc_class is None:
            return handler
        return self._wrapped.get(handler, lambda: self._limit(handler, rpc_class))

    def _admit(self, context: Context, rpc_class: str) -> Caller:
        """Take the call's token; RateLimited when its bucket is empty."""
        # Who the call is, as the outermost interceptor found it (service.grpc.callers): a
        # bad credential counts as none, here by its address (the servicer refuses it).
        caller = CALLER.get() or identify(context, self._settings, self._addresses,
                                          self._certificate_names)
        try:
            self._rates.check(caller.role, rpc_class, caller.credential, caller.address)
        except RateLimited as refused:
            # Counted under the limit that refused: the credential's, or the peer's total.
            self._metrics.rate_limited(refused.metadata["role"], refused.metadata["rpc_class"])
            raise
        return caller

    def _limit(self, handler: Handler, rpc_class: str) -> Handler:
        if handler.unary_unary is not None and inspect.iscoroutinefunction(
                handler.unary_unary):
            inner: Any = handler.unary_unary  # an aio behaviour (its stub type is sync)

            async def unary(request: Any, context: Context) -> Any:
                try:
                    self._admit(context, rpc_class)
                except ServiceError as error:
                    await abort(context, error)
                return await inner(request, context)

            return grpc.unary_unary_rpc_method_handler(
                unary, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer)
        if handler.unary_stream is not None and inspect.isasyncgenfunction(
                handler.unary_stream):
            stream: Any = handler.unary_stream

            async def watched(request: Any, context: Context) -> AsyncIterator[Any]:
                try:
                    caller = self._admit(context, rpc_class)
                    # The table's own seats keep their reserved slots: everyone else
                    # (keys, spectators) shares the rest.
                    ticket = self._watches.acquire(
                        caller.credential, caller.role in ("audit", "platform"),
                        str(getattr(request, "table_id", "")), seat=caller.role == "player")
                except ResourceExhausted as error:
                    if error.metadata.get("scope"):
                        self._metrics.watch_limited(error.metadata["scope"])
                    await abort(context, error)
                try:
                    async for response in stream(request, context):
                        yield response
                finally:
                    self._watches.release(ticket)

            return grpc.unary_stream_rpc_method_handler(
                watched, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer)
        return handler  # no other shapes in the referee's service
