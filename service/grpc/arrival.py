"""Request arrival: every request message must arrive in time, and one caller may have only
so many calls waiting for theirs.

gRPC starts a call when its headers arrive and then waits, with no limit of its own, for
the request messages: a peer that announces a large message and sends a few bytes holds
the stream, its buffers and a task for as long as it keeps the connection — before any
credential is checked, so rate limits never see it. This interceptor, the outermost one,
hands gRPC a request-streaming handler for every method, whatever its shape (unary, server
streaming like `WatchTable` and health `Watch`, or request streaming like server
reflection), so its behaviour runs as soon as the call starts and reads every request
message itself: each within `TransportLimits.request` seconds of the wait for it starting,
else the call ends `DEADLINE_EXCEEDED` / `REQUEST_TIMEOUT`. While a call waits for a message
it counts against its caller's `TransportLimits.pending`; a call that would pass it is
refused at once (`RESOURCE_EXHAUSTED` / `LIMIT_EXCEEDED`). Then the method's own behaviour
(and every inner interceptor) runs with the requests as before. The wire format does not
tell a unary call from a streaming one: clients see no difference.

The caller is who `service.grpc.callers` says: a call with a valid credential (seat or
spectator token, audit or platform key, platform certificate) waits under that
credential's budget (`scope` `credential`), any other under its client address's (`scope`
`peer`; behind a trusted proxy, the forwarded client address), so an anonymous flood from
an address never holds back the authenticated callers that share it.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import grpc
import grpc.aio

from fiftyk_referee.service.errors import (
    DeadlineExceeded,
    InvalidArgument,
    ResourceExhausted,
    ServiceReason,
)
from fiftyk_referee.service.grpc.auth import AuthSettings
from fiftyk_referee.service.grpc.callers import (
    CALLER,
    Caller,
    ClientAddresses,
    identify,
    peer_address,
)
from fiftyk_referee.service.grpc.errors import abort
from fiftyk_referee.service.ops.limits import TransportLimits
from fiftyk_referee.service.ops.metrics import Metrics

if TYPE_CHECKING:  # the grpc classes are generic only in their type stubs
    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]
    Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]
    Continuation: TypeAlias = Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]]

MAX_CONVERTED_HANDLERS = 1024  # methods are registered once; a handler made per call is not kept
REQUEST_TIMEOUT = "request_timeout"
PENDING_PER_PEER = "pending_per_peer"
PENDING_PER_CREDENTIAL = "pending_per_credential"
_log = logging.getLogger(__name__)


class _Waiting:
    """Calls waiting for a request message, per caller (event loop only)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._by_caller: dict[str, int] = {}
        self.total = 0  # read by the metrics, on any thread (an int is read whole)

    def enter(self, caller: str) -> bool:
        """Count one more waiting call; False (nothing counted) when the caller is full."""
        count = self._by_caller.get(caller, 0)
        if count >= self.limit:
            return False
        self._by_caller[caller] = count + 1
        self.total += 1
        return True

    def leave(self, caller: str) -> None:
        """The call's message came, or the call ended."""
        left = self._by_caller[caller] - 1
        if left:
            self._by_caller[caller] = left
        else:
            del self._by_caller[caller]  # as small as the calls waiting now
        self.total -= 1


class RequestArrivalInterceptor(grpc.aio.ServerInterceptor):
    """Bounds the wait for each request message of every call (the outermost interceptor)."""

    def __init__(self, limits: TransportLimits, metrics: Metrics, settings: AuthSettings,
                 addresses: ClientAddresses | None = None,
                 certificate_names: frozenset[str] = frozenset()) -> None:
        self._seconds = limits.request
        self._waiting = _Waiting(limits.pending)
        self._metrics = metrics
        self._settings = settings
        self._addresses = addresses or ClientAddresses()
        self._certificate_names = certificate_names
        self._converted: dict[int, tuple[Handler, Handler]] = {}
        metrics.count_waiting_requests_with(lambda: self._waiting.total)

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler | None:
        """The method's handler, reading its requests under the limits (built once)."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        known = self._converted.get(id(handler))
        if known is not None and known[0] is handler:
            return known[1]
        converted = self._convert(handler)
        if len(self._converted) < MAX_CONVERTED_HANDLERS:
            self._converted[id(handler)] = (handler, converted)  # keeps `handler` alive
        return converted

    def _caller(self, context: Context) -> Caller:
        """Who the call counts as; also left for the inner interceptors (`CALLER`)."""
        caller = identify(context, self._settings, self._addresses, self._certificate_names)
        CALLER.set(caller)
        return caller

    async def _refuse(self, context: Context, caller: Caller) -> None:
        limit = self._waiting.limit
        if caller.authenticated:
            self._metrics.arrival_refused(PENDING_PER_CREDENTIAL)
            _log.debug("call refused: too many calls of one %s credential wait for their"
                       " request", caller.role)
            await abort(context, ResourceExhausted(
                ServiceReason.LIMIT_EXCEEDED,
                f"{limit} calls with this credential are still sending their request;"
                " finish those first",
                metadata={"scope": "credential", "limit": str(limit)}))
        self._metrics.arrival_refused(PENDING_PER_PEER)
        _log.debug("call refused: too many calls from %s wait for their request",
                   caller.address)
        await abort(context, ResourceExhausted(
            ServiceReason.LIMIT_EXCEEDED,
            f"{limit} calls from this address are still sending their request; finish"
            " those first",
            metadata={"scope": "peer", "limit": str(limit)}))

    async def _read(self, context: Context, caller: Caller) -> Any:
        """The call's next request message (or EOF), read within the limits (or the call
        is ended)."""
        if not self._waiting.enter(caller.credential):
            await self._refuse(context, caller)
        try:
            async with asyncio.timeout(self._seconds):
                return await context.read()
        except TimeoutError:
            self._metrics.arrival_refused(REQUEST_TIMEOUT)
            _log.debug("call ended: a request message did not arrive in %g s", self._seconds)
            await abort(context, DeadlineExceeded(
                ServiceReason.REQUEST_TIMEOUT,
                f"the request message did not arrive within {self._seconds:g} s",
                metadata={"limit_seconds": f"{self._seconds:g}"}))
        finally:
            self._waiting.leave(caller.credential)

    async def _request(self, context: Context) -> Any:
        """A unary-request call's one request message."""
        request = await self._read(context, self._caller(context))
        if request is grpc.aio.EOF:
            await abort(context, InvalidArgument(
                ServiceReason.INVALID_REQUEST, "the call ended without a request message"))
        return request

    async def _requests(self, context: Context, caller: Caller) -> AsyncIterator[Any]:
        """A request-streaming call's messages, each read within the limits."""
        while (request := await self._read(context, caller)) is not grpc.aio.EOF:
            yield request

    def _convert(self, handler: Handler) -> Handler:
        """A request-streaming handler of the same behaviour that reads the requests itself."""
        behaviour: Any = (handler.unary_unary or handler.unary_stream or handler.stream_unary
                          or handler.stream_stream)  # an aio behaviour (its stub type is sync)
        make = (grpc.stream_stream_rpc_method_handler if handler.response_streaming
                else grpc.stream_unary_rpc_method_handler)
        converted: Any
        if handler.request_streaming:
            async def given(context: Context) -> Any:
                return self._requests(context, self._caller(context))
        else:
            given = self._request  # the hot path (every unary call): no frame in between
        if inspect.isasyncgenfunction(behaviour):  # a response stream of yielded messages
            async def streamed(_requests: Any, context: Context) -> AsyncIterator[Any]:
                async for response in behaviour(await given(context), context):
                    yield response

            converted = streamed
        elif inspect.iscoroutinefunction(behaviour):  # one response, or written ones
            async def called(_requests: Any, context: Context) -> Any:
                return await behaviour(await given(context), context)

            converted = called
        else:  # synchronous: the generated stub of a method its servicer leaves out
            converted = self._synchronous(behaviour, handler)
        return make(converted, request_deserializer=handler.request_deserializer,
                    response_serializer=handler.response_serializer)

    def _synchronous(self, behaviour: Any, handler: Handler) -> Any:
        """A synchronous behaviour (health's `List`, which the asyncio servicer leaves to
        the generated stub that answers UNIMPLEMENTED) runs on the event loop once its
        request came; none streams requests in this server, and one that did is refused."""
        if handler.request_streaming:
            async def refused(_requests: Any, context: Context) -> None:
                await context.abort(grpc.StatusCode.UNIMPLEMENTED,
                                    "this method is not implemented")

            return refused

        async def called(_requests: Any, context: Context) -> Any:
            request = await self._request(context)
            if handler.response_streaming:
                for response in behaviour(request, context):
                    await context.write(response)
                return None
            return behaviour(request, context)

        return called


__all__ = ["RequestArrivalInterceptor", "peer_address"]
