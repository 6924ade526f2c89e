"""The documented contract of request fields, checked before any use case runs.

- Required fields (per method, `REQUIRED_FIELDS`): empty is `MISSING_FIELD` — an empty
  `table_id` is a missing table, not a malformed id, and a hand command without `hand_id`
  could land on a hand its sender never saw.
- `request_id`: at most `MAX_REQUEST_ID_LENGTH` characters (`INVALID_REQUEST`).
- Every unsigned 64-bit field (positions, versions, limits): at most `MAX_POSITION`, the
  largest position a store can hold (`INVALID_REQUEST`; larger values overflow SQLite's
  and PostgreSQL's signed 64-bit integers).
- Strings: no NUL characters (PostgreSQL text cannot hold them) — `INVALID_REQUEST`.
- Lengths (per method, `MAX_LENGTHS`): the documented sizes the use cases do not check
  themselves — a table's `name`, a listing's `player_id` — `INVALID_REQUEST`. (The use
  cases refuse a player id to seat over 128 characters `INVALID_SEAT`, a reason over 512
  `INVALID_REASON`, entropy outside 16..64 bytes `INVALID_ENTROPY`, a webhook URL over
  2,048 and a description over 256 characters `INVALID_REQUEST`.)
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from fiftyk_referee.domain.table import MAX_PLAYER_ID_LENGTH
from fiftyk_referee.service.errors import FieldViolation, InvalidArgument, ServiceReason
from fiftyk_referee.service.grpc.paging import MAX_TABLE_NAME_LENGTH
from fiftyk_referee.service.trust.witness import MAX_COSIGNATURE_CHARS

MAX_REQUEST_ID_LENGTH = 128
MAX_POSITION = 2**63 - 1
MAX_LENGTHS: dict[str, dict[str, int]] = {
    "CreateTable": {"name": MAX_TABLE_NAME_LENGTH},
    "ListTables": {"player_id": MAX_PLAYER_ID_LENGTH},
    "AddCosignature": {"cosignature_json": MAX_COSIGNATURE_CHARS},
}
_HAND_COMMAND = ("table_id", "hand_id")
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "JoinTable": ("table_id", "player_id"),
    "IssueSpectatorToken": ("table_id",),
    "LeaveTable": ("table_id",),
    "StartHand": ("table_id",),
    "Play": (*_HAND_COMMAND, "cards"),
    "Pass": _HAND_COMMAND,
    "Resign": _HAND_COMMAND,
    "Act": (*_HAND_COMMAND, "kind"),
    "ContributeEntropy": ("table_id",),  # and one of entropy, commitment: `one_of`
    "GetTable": ("table_id",),
    "GetHandView": ("table_id",),
    "ListLegalPlays": ("table_id",),
    "GetScores": ("table_id",),
    "WatchTable": ("table_id",),
    "GetHandHistory": ("hand_id",),
    "GetHandAt": ("hand_id", "version"),
    "ExportTranscript": ("hand_id",),
    "VerifyHand": ("hand_id",),
    "Adjudicate": ("transcript_json",),
    "CloseTable": ("table_id",),
    "AbortTable": ("table_id",),
    "ReplaceSeat": ("table_id", "player_id"),
    "ReissueSeatToken": ("table_id",),
    "RegisterWebhook": ("url",),
    "DeleteWebhook": ("webhook_id",),
    "ListWebhookDeadLetters": ("webhook_id",),
    "RedeliverWebhookEvents": ("webhook_id",),
    "AddCosignature": ("cosignature_json",),
}


def missing(field: str) -> InvalidArgument:
    """The refusal of a required field left empty."""
    return InvalidArgument(ServiceReason.MISSING_FIELD, f"{field} is required",
                           field_violations=[FieldViolation(field, "required")])


def one_of(request: Message, first: str, second: str) -> None:
    """Refuse a request that sets neither or both of two fields (`MISSING_FIELD`,
    `INVALID_REQUEST`)."""
    given = [name for name in (first, second) if getattr(request, name)]
    if not given:
        raise InvalidArgument(ServiceReason.MISSING_FIELD, f"{first} or {second} is required",
                              field_violations=[FieldViolation(first, "required"),
                                                FieldViolation(second, "required")])
    if len(given) > 1:
        raise _invalid(second, f"goes without {first}: send one of them")


def _invalid(field: str, problem: str) -> InvalidArgument:
    return InvalidArgument(ServiceReason.INVALID_REQUEST, f"{field} {problem}",
                           field_violations=[FieldViolation(field, problem)])


def _check_values(message: Message, prefix: str = "") -> None:
    for field, value in message.ListFields():
        name = f"{prefix}{field.name}"
        repeated = field.is_repeated
        values = list(value) if repeated and field.message_type is None else [value]
        if field.type == FieldDescriptor.TYPE_UINT64:
            if any(v > MAX_POSITION for v in values):
                raise _invalid(name, f"must be at most {MAX_POSITION}")
        elif field.type == FieldDescriptor.TYPE_STRING:
            if any("\x00" in v for v in values):
                raise _invalid(name, "must not contain NUL characters")
        elif field.type == FieldDescriptor.TYPE_MESSAGE and not repeated:
            entry = field.message_type is not None and field.message_type.GetOptions().map_entry
            if not entry:  # option maps are checked by the ruleset
                _check_values(value, f"{name}.")


def check_request(method: str, request: Any) -> None:
    """Refuse a request that breaks the documented field contract (see the module)."""
    if not isinstance(request, Message):
        return
    fields = request.DESCRIPTOR.fields_by_name
    command: Any = request  # a generated message: its fields are attributes
    if "request_id" in fields and len(command.request_id) > MAX_REQUEST_ID_LENGTH:
        raise _invalid("request_id", f"must be at most {MAX_REQUEST_ID_LENGTH} characters")
    for name in REQUIRED_FIELDS.get(method, ()):
        if name in fields and not getattr(request, name):
            raise missing(name)
    for name, longest in MAX_LENGTHS.get(method, {}).items():
        if len(getattr(request, name)) > longest:
            raise _invalid(name, f"must be at most {longest} characters")
    _check_values(request)


__all__ = ["MAX_LENGTHS", "MAX_POSITION", "MAX_REQUEST_ID_LENGTH",
           "REQUIRED_FIELDS", "check_request", "missing"]
