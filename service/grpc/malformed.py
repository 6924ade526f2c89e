"""Requests whose bytes are not the method's message: `INVALID_ARGUMENT`, not `UNKNOWN`.

gRPC decodes a request before any handler runs; when the bytes do not parse it ends the
call `UNKNOWN` and logs a traceback — a hostile client could fill the log with one byte
per call, uncounted by the metrics. This interceptor gives every method a decoder that
never raises: undecodable bytes become a `MalformedRequest`, and the handler refuses it
with `INVALID_ARGUMENT` / `INVALID_REQUEST` through the one error mapping, counted and
logged (at INFO, without a traceback) like any refusal. It must be the innermost
interceptor, so that the metrics and the logs see the refusal.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from fiftyk_referee.service.errors import FieldViolation, InvalidArgument, ServiceReason
from fiftyk_referee.service.grpc.errors import abort

MAX_GUARDED_HANDLERS = 1024  # methods are registered once; a handler made per call is not kept

if TYPE_CHECKING:  # the grpc classes are generic only in their type stubs
    Handler: TypeAlias = grpc.RpcMethodHandler[Any, Any]
    Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]
    Continuation: TypeAlias = Callable[[grpc.HandlerCallDetails], Awaitable[Handler | None]]


@dataclass(frozen=True)
class MalformedRequest:
    """The bytes of a request that did not decode as the method's message."""

    size: int
    problem: str

    def ByteSize(self) -> int:
        """The request's size in bytes, like a message's."""
        return self.size


def safe_decoder(decode: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """`decode`, turning undecodable bytes into a `MalformedRequest` instead of raising."""
    if decode is None:
        return None

    def decoded(data: bytes) -> Any:
        try:
            return decode(data)
        except (DecodeError, ValueError, RecursionError) as error:
            return MalformedRequest(len(data), str(error) or type(error).__name__)

    return decoded


def _refusal(request: MalformedRequest) -> InvalidArgument:
    return InvalidArgument(
        ServiceReason.INVALID_REQUEST,
        f"the request's {request.size} bytes are not a valid message of this method"
        f" ({request.problem})",
        field_violations=[FieldViolation("request", "not a valid protobuf message")])


def _guard(handler: Handler) -> Handler:
    """The same handler, refusing malformed requests before its behaviour runs."""
    if handler.request_streaming:
        return handler  # no method of this service streams requests
    decode = safe_decoder(handler.request_deserializer)
    if handler.unary_unary is not None:
        inner: Any = handler.unary_unary  # an aio behaviour (the stubs type sync ones)
        if not inspect.iscoroutinefunction(inner):
            return handler

        async def unary(request: Any, context: Context) -> Any:
            if isinstance(request, MalformedRequest):
                await abort(context, _refusal(request))
            return await inner(request, context)

        return grpc.unary_unary_rpc_method_handler(
            unary, request_deserializer=decode,
            response_serializer=handler.response_serializer)
    if handler.unary_stream is not None:
        stream: Any = handler.unary_stream  # an aio behaviour
        if not inspect.isasyncgenfunction(stream):
            return handler

        async def streamed(request: Any, context: Context) -> AsyncIterator[Any]:
            if isinstance(request, MalformedRequest):
                await abort(context, _refusal(request))
            async for message in stream(request, context):
                yield message

        return grpc.unary_stream_rpc_method_handler(
            streamed, request_deserializer=decode,
            response_serializer=handler.response_serializer)
    return handler


class MalformedRequestInterceptor(grpc.aio.ServerInterceptor):
    """Refuses undecodable requests with INVALID_ARGUMENT (the innermost interceptor)."""

    def __init__(self) -> None:
        self._guarded: dict[int, tuple[Handler, Handler]] = {}

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> Handler | None:
        """The method's handler with a decoder that never raises (built once per method)."""
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        known = self._guarded.get(id(handler))
        if known is not None and known[0] is handler:
            return known[1]
        guarded = _guard(handler)
        if len(self._guarded) < MAX_GUARDED_HANDLERS:
            self._guarded[id(handler)] = (handler, guarded)  # keeps `handler` alive
        return guarded


__all__ = ["MalformedRequest", "MalformedRequestInterceptor", "safe_decoder"]
