"""The one place that maps domain and service errors to gRPC statuses, and back on the client.

Every error leaves the server as a `google.rpc.Status` carrying exactly one `ErrorInfo`
(reason = the stable code, domain = `fiftyk.referee.v1`; a game's own code also names the
game in its metadata, key `game`), for malformed fields one
`BadRequest` with field violations, and for `RATE_LIMITED` and `STORE_UNAVAILABLE` one
`RetryInfo` with the delay. Its texts are bounded (`MAX_MESSAGE_CHARS`, `MAX_DETAIL_CHARS`,
`MAX_DETAILS`) so the trailers stay small whatever the request held; a field violation
derived from a rule error names the field and the reason code, not the message a second time.
The table (README.md, "gRPC status codes"):

- `INVALID_ARGUMENT`: a `RuleError` whose reason means malformed input
  (`MALFORMED_INPUT_REASONS`: `UNKNOWN_CARD`, `INVALID_RULESET`, `INVALID_DEAL`,
  `INVALID_SEAT`, `INVALID_TRANSCRIPT`, `INVALID_ACTION`, `CARD_NOT_IN_DECK`,
  `INVALID_REASON`, `INVALID_ENTROPY`, `ENTROPY_MISMATCH`, `INVALID_SEAT_KEY`,
  `ENTROPY_SIGNATURE_INVALID`) and
  `InvalidArgument`.
- `FAILED_PRECONDITION`: a `RuleError` with any other reason (`NOT_YOUR_TURN`,
  `DOES_NOT_BEAT`, `MUST_LEAD`, `HAND_OVER`, `CARDS_NOT_IN_HAND`, `SEAT_TAKEN`, ...).
- `NOT_FOUND` `NotFound`, `ALREADY_EXISTS` `AlreadyExists`, `ABORTED` `Conflict`,
  `UNAUTHENTICATED` `Unauthenticated`, `PERMISSION_DENIED` `PermissionDenied`,
  `RESOURCE_EXHAUSTED` `ResourceExhausted`, `DEADLINE_EXCEEDED` `DeadlineExceeded`,
  `UNAVAILABLE` `Unavailable`, `DATA_LOSS` `DataLoss`
  (reasons in `service.errors.ServiceReason`).

`INVALID_COMBINATION` is a rule violation (the cards are well written but form nothing the
ruleset allows), so it is `FAILED_PRECONDITION` like `DOES_NOT_BEAT`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any, NamedTuple, NoReturn, cast

import grpc
import grpc.aio
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from fiftyk_referee.domain.errors import GameReason, Reason, RuleError, UnknownCard
from fiftyk_referee.service.errors import (
    AlreadyExists,
    Conflict,
    DataLoss,
    DeadlineExceeded,
    FieldViolation,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    RateLimited,
    ResourceExhausted,
    ServiceError,
    StoreUnavailable,
    Unauthenticated,
    Unavailable,
)

ERROR_DOMAIN = "fiftyk.referee.v1"
# The ErrorInfo.metadata key naming the game whose own reason code refused the call.
GAME_KEY = "game"
NANOS_PER_SECOND = 1_000_000_000
# A refusal's status travels in the trailers, which clients drop past a few kilobytes (then
# the caller sees RESOURCE_EXHAUSTED without a reason): its texts are cut to these sizes.
# Echoed request values are cut much shorter where they are quoted (`domain.errors.shown`).
MAX_MESSAGE_CHARS = 1024
MAX_DETAIL_CHARS = 128
MAX_DETAILS = 16  # metadata entries and field violations

# Rule-error reasons that mean "the request is malformed" rather than "the rules refuse it".
MALFORMED_INPUT_REASONS: frozenset[Reason] = frozenset({
    Reason.UNKNOWN_CARD,
    Reason.INVALID_RULESET,
    Reason.INVALID_DEAL,
    Reason.INVALID_SEAT,
    Reason.INVALID_TRANSCRIPT,
    Reason.INVALID_ACTION,
    Reason.CARD_NOT_IN_DECK,
    Reason.INVALID_REASON,
    Reason.INVALID_ENTROPY,
    Reason.ENTROPY_MISMATCH,
    Reason.INVALID_SEAT_KEY,
    Reason.ENTROPY_SIGNATURE_INVALID,
})

# Service error class -> status code. Order matters only for subclasses of one another.
SERVICE_ERROR_CODES: tuple[tuple[type[ServiceError], grpc.StatusCode], ...] = (
    (InvalidArgument, grpc.StatusCode.INVALID_ARGUMENT),
    (NotFound, grpc.StatusCode.NOT_FOUND),
    (AlreadyExists, grpc.StatusCode.ALREADY_EXISTS),
    (Conflict, grpc.StatusCode.ABORTED),
    (Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (PermissionDenied, grpc.StatusCode.PERMISSION_DENIED),
    (ResourceExhausted, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (DeadlineExceeded, grpc.StatusCode.DEADLINE_EXCEEDED),
    (Unavailable, grpc.StatusCode.UNAVAILABLE),
    (DataLoss, grpc.StatusCode.DATA_LOSS),
)

MappedError = RuleError | ServiceError


def status_code_for(error: MappedError) -> grpc.StatusCode:
    """The gRPC status code an error travels with."""
    if isinstance(error, RuleError):
        if error.reason in MALFORMED_INPUT_REASONS:
            return grpc.StatusCode.INVALID_ARGUMENT
        return grpc.StatusCode.FAILED_PRECONDITION
    for cls, code in SERVICE_ERROR_CODES:
        if isinstance(error, cls):
            return code
    # A bare ServiceError names no kind; it is a server-side mistake, not the caller's.
    return grpc.StatusCode.INTERNAL


def _cut(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters with a note of how long it was."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _metadata_of(error: MappedError) -> dict[str, str]:
    if isinstance(error, UnknownCard):
        metadata = {"card": error.token}
    elif isinstance(error, ServiceError):
        metadata = dict(error.metadata)
    else:
        metadata = {}
    if isinstance(error, RuleError) and isinstance(error.reason, GameReason):
        # A game's own reason: the game names it (its codes are listed by its bundle).
        metadata = {GAME_KEY: error.reason.game, **metadata}
    return {_cut(key, MAX_DETAIL_CHARS): _cut(value, MAX_DETAIL_CHARS)
            for key, value in list(metadata.items())[:MAX_DETAILS]}


def _violations_of(error: MappedError, field: str | None) -> list[FieldViolation]:
    if isinstance(error, InvalidArgument) and error.field_violations:
        return [FieldViolation(_cut(v.field, MAX_DETAIL_CHARS),
                               _cut(v.description, MAX_DETAIL_CHARS))
                for v in error.field_violations[:MAX_DETAILS]]
    if field is not None and status_code_for(error) == grpc.StatusCode.INVALID_ARGUMENT:
        # The message says what is wrong (once); the violation names the field to fix.
        return [FieldViolation(_cut(field, MAX_DETAIL_CHARS), str(error.reason))]
    return []


def _packed(message: Any) -> any_pb2.Any:
    packed = any_pb2.Any()
    packed.Pack(message)
    return packed


def rich_status(error: MappedError, *, field: str | None = None) -> status_pb2.Status:
    """Build the google.rpc.Status for an error: one ErrorInfo, plus BadRequest if given.

    `field` names the request field a malformed-input rule error came from (e.g. `cards`),
    so the caller learns which field to fix.
    """
    code = status_code_for(error)
    info = error_details_pb2.ErrorInfo(
        reason=str(error.reason), domain=ERROR_DOMAIN, metadata=_metadata_of(error)
    )
    details = [_packed(info)]
    violations = _violations_of(error, field)
    if violations:
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(
                    field=v.field, description=v.description
                )
                for v in violations
            ]
        )
        details.append(_packed(bad_request))
    if isinstance(error, RateLimited | StoreUnavailable):
        delay = duration_pb2.Duration()
        delay.FromNanoseconds(max(1, round(error.retry_after_seconds * NANOS_PER_SECOND)))
        details.append(_packed(error_details_pb2.RetryInfo(retry_delay=delay)))
    return status_pb2.Status(code=code.value[0], message=_cut(error.message, MAX_MESSAGE_CHARS),
                             details=details)


def grpc_status(error: MappedError, *, field: str | None = None) -> grpc.Status:
    """The error as a `grpc.Status` (code, details, trailing metadata with the rich status)."""
    return rpc_status.to_status(rich_status(error, field=field))


# The reason code the current call was refused with, for its log line (each RPC runs in a
# task of its own, so this is per call).
refusal_reason_var: ContextVar[str | None] = ContextVar("refusal_reason", default=None)


async def abort(
    context: grpc.aio.ServicerContext[Any, Any],
    error: MappedError,
    *,
    field: str | None = None,
) -> NoReturn:
    """End the RPC with the error's status; never returns (raises grpc's abort exception)."""
    refusal_reason_var.set(str(error.reason))
    status = grpc_status(error, field=field)
    await context.abort(status.code, status.details, status.trailing_metadata)


# -- client side ---------------------------------------------------------------------------


class ErrorReason(NamedTuple):
    """What a client needs to react to a failed call: the status code, reason and message."""

    code: grpc.StatusCode
    reason: str | None
    message: str


class ErrorDetails(NamedTuple):
    """Everything the server put in a failed call's rich status."""

    code: grpc.StatusCode
    reason: str | None
    message: str
    domain: str | None
    metadata: Mapping[str, str]
    field_violations: Sequence[FieldViolation]
    retry_after_seconds: float | None = None


def error_details(error: grpc.RpcError) -> ErrorDetails:
    """Decode a failed call's rich status (sync or aio error); reason is None when absent.

    Errors produced by gRPC itself (deadline exceeded, oversize message, unreachable server)
    carry no rich status, so only the code and message are known.
    """
    code = error.code()
    message = error.details() or ""
    # Both grpc.Call errors and grpc.aio.AioRpcError expose code(), details() and an
    # iterable of (key, value) trailing metadata, which is all from_call reads.
    status = rpc_status.from_call(cast(grpc.Call, error))
    if not isinstance(status, status_pb2.Status):
        return ErrorDetails(code, None, message, None, {}, ())
    reason: str | None = None
    domain: str | None = None
    metadata: dict[str, str] = {}
    violations: list[FieldViolation] = []
    retry_after: float | None = None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        bad_request = error_details_pb2.BadRequest()
        retry = error_details_pb2.RetryInfo()
        if detail.Unpack(info):
            reason, domain, metadata = info.reason, info.domain, dict(info.metadata)
        elif detail.Unpack(bad_request):
            violations.extend(
                FieldViolation(v.field, v.description) for v in bad_request.field_violations
            )
        elif detail.Unpack(retry):
            retry_after = retry.retry_delay.ToNanoseconds() / NANOS_PER_SECOND
    return ErrorDetails(code, reason, status.message, domain, metadata, tuple(violations),
                        retry_after)


def error_reason(error: grpc.RpcError) -> ErrorReason:
    """Decode a failed call into (status code, reason code or None, message)."""
    details = error_details(error)
    return ErrorReason(details.code, details.reason, details.message)


__all__ = [
    "ERROR_DOMAIN",
    "GAME_KEY",
    "MALFORMED_INPUT_REASONS",
    "ErrorDetails",
    "ErrorReason",
    "MappedError",
    "abort",
    "error_details",
    "error_reason",
    "grpc_status",
    "refusal_reason_var",
    "rich_status",
    "status_code_for",
]
