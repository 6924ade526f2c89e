"""Domain and service errors map to gRPC status codes and one rich status, as documented."""

from __future__ import annotations

import re
from pathlib import Path

import grpc
import grpc.aio
import pytest
from google.rpc import error_details_pb2, status_pb2

from fiftyk_referee.domain.errors import (
    Reason,
    RuleError,
    UnknownCard,
)
from fiftyk_referee.domain.fiftyk.reasons import FiftykReason
from fiftyk_referee.service.errors import (
    AlreadyExists,
    Conflict,
    DataLoss,
    DeadlineExceeded,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    ServiceError,
    ServiceReason,
    StoreUnavailable,
    Unauthenticated,
    Unavailable,
)
from fiftyk_referee.service.grpc.errors import (
    MALFORMED_INPUT_REASONS,
    grpc_status,
    rich_status,
    status_code_for,
)

ERROR_TABLE_PAGE = Path(__file__).resolve().parents[2] / "docs" / "integrating.md"
Code = grpc.StatusCode


@pytest.mark.parametrize("reason", list(Reason))
def test_every_reason_code_maps_to_invalid_argument_or_failed_precondition(
    reason: Reason,
) -> None:
    expected = (Code.INVALID_ARGUMENT if reason in MALFORMED_INPUT_REASONS
                else Code.FAILED_PRECONDITION)
    assert status_code_for(RuleError(reason, "x")) == expected


def test_rule_violations_are_failed_precondition_and_bad_input_is_invalid_argument() -> None:
    for reason in (Reason.NOT_YOUR_TURN, FiftykReason.DOES_NOT_BEAT, FiftykReason.MUST_LEAD,
                   Reason.HAND_OVER, Reason.CARDS_NOT_IN_HAND, Reason.INVALID_COMBINATION,
                   Reason.SEAT_TAKEN):
        assert status_code_for(RuleError(reason, "x")) == Code.FAILED_PRECONDITION
    for reason in (Reason.UNKNOWN_CARD, Reason.INVALID_RULESET, Reason.INVALID_TRANSCRIPT):
        assert status_code_for(RuleError(reason, "x")) == Code.INVALID_ARGUMENT


def test_a_bare_service_error_is_an_internal_error_not_blamed_on_the_caller() -> None:
    assert status_code_for(ServiceError("OOPS", "x")) == Code.INTERNAL


def test_the_rich_status_holds_exactly_one_error_info() -> None:
    status = rich_status(UnknownCard("ZZ"), field="cards[3]")
    infos = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    bad = [d for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)]
    assert len(infos) == 1
    assert len(bad) == 1
    assert status.code == Code.INVALID_ARGUMENT.value[0]


def test_a_field_hint_adds_no_bad_request_to_a_rule_violation() -> None:
    status = rich_status(RuleError(FiftykReason.DOES_NOT_BEAT, "no"), field="cards")
    assert len(status.details) == 1


def test_a_store_outage_is_unavailable_with_the_delay_to_retry_after() -> None:
    status = rich_status(StoreUnavailable("the event store is unavailable",
                                          retry_after_seconds=1.5))
    assert status.code == Code.UNAVAILABLE.value[0]
    [retry] = [d for d in status.details if d.Is(error_details_pb2.RetryInfo.DESCRIPTOR)]
    info = error_details_pb2.RetryInfo()
    retry.Unpack(info)
    assert info.retry_delay.ToNanoseconds() == 1_500_000_000


def test_grpc_status_carries_the_rich_status_in_the_trailing_metadata() -> None:
    error = Conflict(ServiceReason.CONCURRENT_UPDATE, "raced")
    status = grpc_status(error)
    assert status.code == Code.ABORTED
    assert status.details == "raced"
    [(key, value)] = status.trailing_metadata
    assert key == "grpc-status-details-bin"
    assert status_pb2.Status.FromString(value) == rich_status(error)


def _errors_section() -> str:
    text = ERROR_TABLE_PAGE.read_text(encoding="utf-8")
    match = re.search(r"^## Errors\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match is not None, "docs/integrating.md lacks a '## Errors' section"
    return match.group(1)


def test_the_docs_error_table_documents_every_reason_with_its_status_code() -> None:
    section = _errors_section()
    rows = re.findall(r"^\| `([A-Z_]+)` \| `([A-Z_]+)` \|", section, re.M)
    documented = dict(rows)
    for reason in Reason:
        assert documented.get(reason.value) == status_code_for(RuleError(reason, "x")).name
    service_errors: dict[str, ServiceError] = {
        r.value: cls(r.value, "x") for cls, reasons in (
            (NotFound, ("TABLE_NOT_FOUND", "HAND_NOT_FOUND", "VERSION_NOT_FOUND",
                         "WEBHOOK_NOT_FOUND")),
            (AlreadyExists, ("REQUEST_ID_REUSED",)),
            (Conflict, ("CONCURRENT_UPDATE", "STALE_VERSION")),
            (InvalidArgument, ("MISSING_FIELD", "INVALID_ID", "INVALID_REQUEST",
                               "INVALID_COSIGNATURE")),
            (Unauthenticated, ("MISSING_CREDENTIALS", "INVALID_TOKEN", "TOKEN_EXPIRED",
                               "TOKEN_REVOKED", "INVALID_AUDIT_KEY", "INVALID_PLATFORM_KEY")),
            (PermissionDenied, ("WRONG_TABLE", "WRONG_SEAT", "SEAT_TOKEN_REQUIRED",
                                "AUDIT_REQUIRED", "PLATFORM_REQUIRED", "SPECTATOR_DELAYED",
                                "UNKNOWN_WITNESS")),
            (ResourceExhausted, ("MESSAGE_TOO_LARGE", "LIMIT_EXCEEDED", "RATE_LIMITED")),
            (DeadlineExceeded, ("REQUEST_TIMEOUT",)),
            (Unavailable, ("SHUTTING_DOWN", "STORE_UNAVAILABLE")),
            (DataLoss, ("EVENTS_TAMPERED",)),
        ) for r in map(ServiceReason, reasons)
    }
    assert set(service_errors) == {r.value for r in ServiceReason}
    for reason, error in service_errors.items():
        assert documented.get(reason) == status_code_for(error).name
