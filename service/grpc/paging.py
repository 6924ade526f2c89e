"""Answers that list items stay within the message size limit: paged by bytes.

A list answer (`ListTables`, `ReadEvents`, `GetHandHistory`, `ListWebhookDeadLetters`) takes
items in order while the answer stays within `response_budget` — the configured message
size less a margin for the answer's other fields — and says it has more (`has_more`,
`next_page_token`), so a caller pages on as it would after a full page. Every item is far
smaller than the budget (each stored string is bounded, and an over-long table name of an
older version is shown cut, `shown_name`), so a page always holds at least one.

gRPC's own limit on a sent message (`TRANSPORT_LIMIT_FACTOR` times the configured size)
would end an answer over it `RESOURCE_EXHAUSTED` without any detail: `check_answer_size`
refuses such an answer first, with `MESSAGE_TOO_LARGE` and its `ErrorInfo`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from google.protobuf.message import Message

from fiftyk_referee.service.errors import ResourceExhausted, ServiceReason

# gRPC's own limit sits above ours, so an oversize request under it gets our rich status.
TRANSPORT_LIMIT_FACTOR = 2
MIN_HEADROOM_BYTES = 1024  # the answer's fields besides its list
HEADROOM_SHARE = 8  # and at least an eighth of the limit
ITEM_OVERHEAD_BYTES = 6  # a repeated message's tag and length prefix, at most
MAX_TABLE_NAME_LENGTH = 128
CUT_MARK = "…"

M = TypeVar("M", bound=Message)


def response_budget(max_message_bytes: int) -> int:
    """The bytes a list answer's items may take."""
    return max_message_bytes - max(MIN_HEADROOM_BYTES, max_message_bytes // HEADROOM_SHARE)


def fitting(items: Sequence[M], budget: int) -> int:
    """How many of `items`, from the first, fit in `budget` bytes (at least one)."""
    used = 0
    for count, item in enumerate(items):
        used += item.ByteSize() + ITEM_OVERHEAD_BYTES
        if used > budget and count > 0:
            return count
    return len(items)


def shown_name(name: str) -> str:
    """A table's name as answers show it: a name stored longer than the limit (an older
    version did not enforce it) is cut to the limit and marked with a trailing `…`."""
    if len(name) <= MAX_TABLE_NAME_LENGTH:
        return name
    return name[:MAX_TABLE_NAME_LENGTH] + CUT_MARK


def check_answer_size(answer: object, max_message_bytes: int) -> None:
    """Refuse an answer gRPC would not send (MESSAGE_TOO_LARGE, with its ErrorInfo)."""
    if not isinstance(answer, Message):
        return
    size = answer.ByteSize()
    limit = max_message_bytes * TRANSPORT_LIMIT_FACTOR
    if size > limit:
        raise ResourceExhausted(ServiceReason.MESSAGE_TOO_LARGE,
                                f"the answer would have {size} bytes; the limit is {limit}")


__all__ = ["MAX_TABLE_NAME_LENGTH", "TRANSPORT_LIMIT_FACTOR", "check_answer_size",
           "fitting", "response_budget", "shown_name"]
