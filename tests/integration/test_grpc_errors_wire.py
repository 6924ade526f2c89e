"""Domain and service errors travel through real gRPC servers and decode back on clients."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from concurrent import futures
from typing import Any

import grpc
import grpc.aio
import pytest

from fiftyk_referee.domain.errors import (
    InvalidCombination,
    InvalidRuleset,
    Reason,
    RuleError,
    UnknownCard,
)
from fiftyk_referee.domain.fiftyk.reasons import FiftykReason
from fiftyk_referee.service.errors import (
    AlreadyExists,
    Conflict,
    FieldViolation,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    ServiceReason,
    Unauthenticated,
    Unavailable,
)
from fiftyk_referee.service.grpc.errors import (
    ERROR_DOMAIN,
    ErrorDetails,
    MappedError,
    abort,
    error_details,
    error_reason,
    grpc_status,
)

SERVICE = "fiftyk.test.Errors"
RAISE = f"/{SERVICE}/Raise"
SMALL_LIMIT = 1024
Code = grpc.StatusCode


class Case:
    """One error raised by the test server, and the status the client must see."""

    def __init__(self, error: MappedError, code: grpc.StatusCode, *, field: str | None = None,
                 violations: tuple[FieldViolation, ...] = (),
                 metadata: dict[str, str] | None = None) -> None:
        self.error = error
        self.code = code
        self.field = field
        self.violations = violations
        self.metadata = metadata or {}


CASES: dict[str, Case] = {
    "not_your_turn": Case(RuleError(Reason.NOT_YOUR_TURN, "it is seat 2's turn, not 1's"),
                          Code.FAILED_PRECONDITION),
    # A game's own reason names the game.
    "does_not_beat": Case(RuleError(FiftykReason.DOES_NOT_BEAT, "4S does not beat 5H"),
                          Code.FAILED_PRECONDITION, metadata={"game": "fiftyk"}),
    "invalid_combination": Case(InvalidCombination("3S 4H form no combination"),
                                Code.FAILED_PRECONDITION),
    "seat_taken": Case(RuleError(Reason.SEAT_TAKEN, "seat 0 is taken"), Code.FAILED_PRECONDITION),
    "unknown_card": Case(UnknownCard("1X"), Code.INVALID_ARGUMENT, field="cards[0]",
                         violations=(FieldViolation("cards[0]", "UNKNOWN_CARD"),),
                         metadata={"card": "1X"}),
    "invalid_ruleset": Case(InvalidRuleset("unknown preset 'nope'"), Code.INVALID_ARGUMENT),
    "invalid_transcript": Case(RuleError(Reason.INVALID_TRANSCRIPT, "not a transcript"),
                               Code.INVALID_ARGUMENT),
    "missing_field": Case(
        InvalidArgument(ServiceReason.MISSING_FIELD, "table_id is required",
                        field_violations=[FieldViolation("table_id", "required")]),
        Code.INVALID_ARGUMENT, violations=(FieldViolation("table_id", "required"),)),
    "not_found": Case(NotFound(ServiceReason.TABLE_NOT_FOUND, "no table t-1",
                               metadata={"table_id": "t-1"}),
                      Code.NOT_FOUND, metadata={"table_id": "t-1"}),
    "already_exists": Case(AlreadyExists(ServiceReason.REQUEST_ID_REUSED, "request id reused"),
                           Code.ALREADY_EXISTS),
    "conflict": Case(Conflict(ServiceReason.CONCURRENT_UPDATE, "the hand moved on"), Code.ABORTED),
    "unauthenticated": Case(Unauthenticated(ServiceReason.TOKEN_EXPIRED, "token expired"),
                            Code.UNAUTHENTICATED),
    "permission_denied": Case(PermissionDenied(ServiceReason.WRONG_SEAT, "not your seat"),
                              Code.PERMISSION_DENIED),
    "resource_exhausted": Case(ResourceExhausted(ServiceReason.MESSAGE_TOO_LARGE, "too big"),
                               Code.RESOURCE_EXHAUSTED),
    "unavailable": Case(Unavailable(ServiceReason.SHUTTING_DOWN, "draining"), Code.UNAVAILABLE),
    "non_ascii_message": Case(RuleError(FiftykReason.MUST_LEAD, "五十K: ♥3 的持有者必须先出"),
                              Code.FAILED_PRECONDITION, metadata={"game": "fiftyk"}),
}


def _identity(data: bytes) -> bytes:
    return data


# -- a real grpc.aio server on port 0 ------------------------------------------------------


async def _aio_raise(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
    case = CASES[request.decode()]
    await abort(context, case.error, field=case.field)


async def _call_every_case() -> tuple[dict[str, ErrorDetails], ErrorDetails]:
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", SMALL_LIMIT)])
    handler = grpc.method_handlers_generic_handler(SERVICE, {
        "Raise": grpc.unary_unary_rpc_method_handler(
            _aio_raise, request_deserializer=_identity, response_serializer=_identity),
    })
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = channel.unary_unary(
                RAISE, request_serializer=_identity, response_deserializer=_identity)
            decoded: dict[str, ErrorDetails] = {}
            for name in CASES:
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await call(name.encode(), timeout=10)
                decoded[name] = error_details(raised.value)
            with pytest.raises(grpc.aio.AioRpcError) as oversize:
                await call(b"x" * (SMALL_LIMIT * 2), timeout=10)
            return decoded, error_details(oversize.value)
    finally:
        await server.stop(grace=None)


@pytest.fixture(scope="module")
def aio_results() -> tuple[dict[str, ErrorDetails], ErrorDetails]:
    return asyncio.run(_call_every_case())


@pytest.mark.parametrize("name", list(CASES))
def test_each_error_reaches_an_aio_client_with_its_code_reason_and_message(
    name: str, aio_results: tuple[dict[str, ErrorDetails], ErrorDetails]
) -> None:
    case = CASES[name]
    got = aio_results[0][name]
    assert got.code == case.code
    assert got.reason == str(case.error.reason)
    assert got.domain == ERROR_DOMAIN
    assert got.message == case.error.message
    assert dict(got.metadata) == case.metadata
    assert tuple(got.field_violations) == case.violations


def test_an_error_raised_by_grpc_itself_decodes_without_a_reason(
    aio_results: tuple[dict[str, ErrorDetails], ErrorDetails],
) -> None:
    oversize = aio_results[1]
    assert oversize.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert oversize.reason is None
    assert oversize.field_violations == ()


# -- a real synchronous server, decoded by the synchronous client --------------------------


def _sync_raise(request: bytes, context: grpc.ServicerContext) -> bytes:
    case = CASES[request.decode()]
    context.abort_with_status(grpc_status(case.error, field=case.field))
    raise AssertionError("abort_with_status returned")  # pragma: no cover


@pytest.fixture(scope="module")
def sync_call() -> Iterator[Callable[[bytes], Any]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    handler = grpc.method_handlers_generic_handler(SERVICE, {
        "Raise": grpc.unary_unary_rpc_method_handler(
            _sync_raise, request_deserializer=_identity, response_serializer=_identity),
    })
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield channel.unary_unary(RAISE, request_serializer=_identity,
                                  response_deserializer=_identity)
    finally:
        channel.close()
        server.stop(grace=None)


@pytest.mark.parametrize("name", ["unknown_card", "conflict", "non_ascii_message"])
def test_error_reason_decodes_a_synchronous_call_too(
    name: str, sync_call: Callable[[bytes], Any]
) -> None:
    case = CASES[name]
    with pytest.raises(grpc.RpcError) as raised:
        sync_call(name.encode(), timeout=10)
    assert error_reason(raised.value) == (case.code, str(case.error.reason), case.error.message)

