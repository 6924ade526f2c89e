"""Service-level errors: what the application and the edge raise besides the domain's rule errors.

Each carries a stable reason code (upper snake case, like the `domain.errors.Reason` codes;
all are listed in docs/integrating.md#errors) and a human-readable message. The gRPC layer
maps the class to a status code in one place (`service.grpc.errors`); nothing here imports
gRPC, so the application stays free of transport concerns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum


class ServiceReason(StrEnum):
    """Reason codes of the service layer (the domain's own codes live in `domain.errors`)."""

    # NOT_FOUND
    TABLE_NOT_FOUND = "TABLE_NOT_FOUND"
    HAND_NOT_FOUND = "HAND_NOT_FOUND"
    VERSION_NOT_FOUND = "VERSION_NOT_FOUND"
    WEBHOOK_NOT_FOUND = "WEBHOOK_NOT_FOUND"
    # ALREADY_EXISTS
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"
    # ABORTED
    CONCURRENT_UPDATE = "CONCURRENT_UPDATE"
    # A hand command naming a hand version other than the hand's (it changed since).
    STALE_VERSION = "STALE_VERSION"
    # INVALID_ARGUMENT (malformed requests the domain never sees)
    MISSING_FIELD = "MISSING_FIELD"
    INVALID_ID = "INVALID_ID"
    INVALID_REQUEST = "INVALID_REQUEST"
    # A witness's cosignature whose form, signature or tree does not check (AddCosignature).
    INVALID_COSIGNATURE = "INVALID_COSIGNATURE"
    # UNAUTHENTICATED
    MISSING_CREDENTIALS = "MISSING_CREDENTIALS"
    INVALID_TOKEN = "INVALID_TOKEN"
    TOKEN_EXPIRED = "TOKEN_EXPIRED"
    TOKEN_REVOKED = "TOKEN_REVOKED"
    INVALID_AUDIT_KEY = "INVALID_AUDIT_KEY"
    INVALID_PLATFORM_KEY = "INVALID_PLATFORM_KEY"
    # PERMISSION_DENIED
    WRONG_TABLE = "WRONG_TABLE"
    WRONG_SEAT = "WRONG_SEAT"
    SEAT_TOKEN_REQUIRED = "SEAT_TOKEN_REQUIRED"
    AUDIT_REQUIRED = "AUDIT_REQUIRED"
    PLATFORM_REQUIRED = "PLATFORM_REQUIRED"
    SPECTATOR_DELAYED = "SPECTATOR_DELAYED"
    # A cosignature by a key the operator did not list as a witness (AddCosignature).
    UNKNOWN_WITNESS = "UNKNOWN_WITNESS"
    # DEADLINE_EXCEEDED
    REQUEST_TIMEOUT = "REQUEST_TIMEOUT"
    # RESOURCE_EXHAUSTED
    MESSAGE_TOO_LARGE = "MESSAGE_TOO_LARGE"
    LIMIT_EXCEEDED = "LIMIT_EXCEEDED"
    RATE_LIMITED = "RATE_LIMITED"
    # UNAVAILABLE
    SHUTTING_DOWN = "SHUTTING_DOWN"
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    # DATA_LOSS
    EVENTS_TAMPERED = "EVENTS_TAMPERED"


@dataclass(frozen=True)
class FieldViolation:
    """One malformed request field: its path (e.g. `cards[2]`) and what is wrong with it."""

    field: str
    description: str


class ServiceError(Exception):
    """Base of the service errors: a reason code, a message and optional machine metadata."""

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.reason = str(reason)
        self.message = message
        self.metadata: dict[str, str] = dict(metadata or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason}, {self.message!r})"


class InvalidArgument(ServiceError):
    """A malformed request (missing field, unparsable id); may name the offending fields."""

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        field_violations: Sequence[FieldViolation] = (),
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(reason, message, metadata=metadata)
        self.field_violations = tuple(field_violations)


class NotFound(ServiceError):
    """The table, hand or version a request names does not exist."""


class AlreadyExists(ServiceError):
    """The request would create something that exists (e.g. a request id reused differently)."""


class Conflict(ServiceError):
    """A concurrent command changed the aggregate first; the caller may re-read and retry."""


class Unauthenticated(ServiceError):
    """No valid credential: missing, malformed, forged or expired."""


class PermissionDenied(ServiceError):
    """A valid credential that does not allow this request (another seat, table or role)."""


class ResourceExhausted(ServiceError):
    """A request beyond a size or count limit."""


class RateLimited(ResourceExhausted):
    """The credential's rate for this kind of call is used up; retry after the delay."""

    def __init__(self, message: str, *, retry_after_seconds: float,
                 metadata: Mapping[str, str] | None = None) -> None:
        super().__init__(ServiceReason.RATE_LIMITED, message, metadata=metadata)
        self.retry_after_seconds = retry_after_seconds


class DeadlineExceeded(ServiceError):
    """The server stopped waiting for something the caller had to send (its request)."""


class Unavailable(ServiceError):
    """The service cannot take the request now (e.g. shutting down); retrying later may work."""


class DataLoss(ServiceError):
    """Stored events that no longer replay: they were edited, dropped or reordered."""


class StoreUnavailable(Unavailable):
    """The event store cannot take the call now (database down, unreachable, or failing
    over to a standby): retry after the delay, with the same request id."""

    def __init__(self, message: str, *, retry_after_seconds: float) -> None:
        super().__init__(ServiceReason.STORE_UNAVAILABLE, message)
        self.retry_after_seconds = retry_after_seconds


__all__ = [
    "AlreadyExists",
    "Conflict",
    "DeadlineExceeded",
    "FieldViolation",
    "InvalidArgument",
    "NotFound",
    "PermissionDenied",
    "RateLimited",
    "ResourceExhausted",
    "ServiceError",
    "ServiceReason",
    "StoreUnavailable",
    "Unauthenticated",
    "Unavailable",
]
