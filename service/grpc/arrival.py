"""Request arrival: a call's request message must arrive in time, and one address may have
only so many calls waiting for theirs.

gRPC starts a unary call when its headers arrive and then waits, with no limit of its own,
for the request message: a peer that announces a large message and sends a few bytes holds
the stream, its buffers and a task for as long as it keeps the connection — before any
credential is checked, so rate limits never see it. This interceptor, the outermost one,
hands gRPC a request-streaming handler for every unary-request method, so its behaviour
runs as soon as the call starts: it reads the one request message within
`TransportLimits.request` seconds, else ends the call `DEADLINE_EXCEEDED` /
`REQUEST_TIMEOUT`, and refuses a call at once (`RESOURCE_EXHAUSTED` / `LIMIT_EXCEEDED`,
scope `peer`) when its address already has `TransportLimits.pending` calls waiting. Then the
method's own behaviour (and every inner interceptor) runs with the request as before. The
wire format does not tell a unary call from a streaming one: clients see no difference.

Methods that stream requests (server reflection) keep their handler: a stalled one of those
is bounded by the streams a connection may open and the connection's age.
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
from fiftyk_referee.service.grpc.errors import abort
from fiftyk_referee.service.limits import TransportLimits
from fiftyk_referee.service.ops.metrics import Metrics

if TYPE_CHECKING:  # the grpc classes are generic only in their type stubs
    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]
    Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]
    Continuation: TypeAlias = Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]]

MAX_CONVERTED_HANDLERS = 1024  # methods are registered once; a handler made per call is not kept
REQUEST_TIMEOUT = "request_timeout"
PENDING_PER_PEER = "pending_per_peer"
_log = logging.getLogger(__name__)


def peer_address(peer: str) -> str:
    """The address of `ipv4:1.2.3.4:5678` / `ipv6:[::1]:5678` without the port."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rsplit(":", 1)[0]
    return peer


class _Waiting:
    """Calls waiting for their request message, per peer address (event loop only)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._by_address: dict[str, int] = {}

    def enter(self, address: str) -> bool:
        """Count one more waiting call; False (nothing counted) when the address is full."""
        count = self._by_address.get(address, 0)
        if count >= self.limit:
            return False
        self._by_address[address] = count + 1
        return True

    def leave(self, address: str) -> None:
        """The call's message came, or the call ended."""
        left = self._by_address[address] - 1
        if left:
            self._by_address[address] = left
        else:
            del self._by_address[address]  # as small as the calls waiting now


class RequestArrivalInterceptor(grpc.aio.ServerInterceptor):
    """Bounds the wait for each call's request message (the outermost interceptor)."""

    def __init__(self, limits: TransportLimits, metrics: Metrics) -> None:
        self._seconds = limits.request
        self._waiting = _Waiting(limits.pending)
        self._metrics = metrics
        self._converted: dict[int, tuple[Handler, Handler]] = {}

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler | None:
        """The method's handler, reading its request under the limits (built once)."""
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

    async def _request(self, context: Context) -> Any:
        """The call's one request message, read within the limits (or the call is ended)."""
        address = peer_address(context.peer())
        if not self._waiting.enter(address):
            self._metrics.arrival_refused(PENDING_PER_PEER)
            _log.debug("call refused: too many calls from %s wait for their request", address)
            await abort(context, ResourceExhausted(
                ServiceReason.LIMIT_EXCEEDED,
                f"{self._waiting.limit} calls from this address are still sending their"
                " request; finish those first",
                metadata={"scope": "peer", "limit": str(self._waiting.limit)}))
        try:
            async with asyncio.timeout(self._seconds):
                request = await context.read()
        except TimeoutError:
            self._metrics.arrival_refused(REQUEST_TIMEOUT)
            _log.debug("call ended: its request did not arrive in %g s", self._seconds)
            await abort(context, DeadlineExceeded(
                ServiceReason.REQUEST_TIMEOUT,
                f"the request message did not arrive within {self._seconds:g} s",
                metadata={"limit_seconds": f"{self._seconds:g}"}))
        finally:
            self._waiting.leave(address)
        if request is grpc.aio.EOF:
            await abort(context, InvalidArgument(
                ServiceReason.INVALID_REQUEST, "the call ended without a request message"))
        return request

    def _convert(self, handler: Handler) -> Handler:
        if handler.request_streaming:
            return handler
        if handler.unary_unary is not None and inspect.iscoroutinefunction(
                handler.unary_unary):
            unary: Any = handler.unary_unary  # an aio behaviour (its stub type is sync)

            async def call(_requests: Any, context: Context) -> Any:
                return await unary(await self._request(context), context)

            return grpc.stream_unary_rpc_method_handler(
                call, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer)
        if handler.unary_stream is not None and inspect.isasyncgenfunction(
                handler.unary_stream):
            stream: Any = handler.unary_stream

            async def streamed(_requests: Any, context: Context) -> AsyncIterator[Any]:
                request = await self._request(context)
                async for response in stream(request, context):
                    yield response

            return grpc.stream_stream_rpc_method_handler(
                streamed, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer)
        return handler  # a synchronous behaviour runs on gRPC's thread pool: left as it is


__all__ = ["RequestArrivalInterceptor", "peer_address"]
