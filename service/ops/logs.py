"""Structured JSON logs: one object per line with the table, hand, seat and request ids.

Ids come from context variables (bound per RPC by the request-context interceptor and by the
application with `bind`) or from a call's `extra`, which wins. A hidden hand's cards may only
be logged at DEBUG (e.g. as the `cards` field of `extra`); above DEBUG the formatter masks
every card token (`3S`, `10H`, `BJ`, `Card(...)`) in the message, the exception text and
string `extra` values, and drops the card fields (`CARD_FIELDS`) altogether.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TextIO

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_id", default=None
)
table_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("table_id", default=None)
hand_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("hand_id", default=None)
seat_var: contextvars.ContextVar[int | None] = contextvars.ContextVar("seat", default=None)

CONTEXT_VARS: dict[str, contextvars.ContextVar[Any]] = {
    "table_id": table_id_var,
    "hand_id": hand_id_var,
    "request_id": request_id_var,
    "seat": seat_var,
}
CARD_FIELDS = frozenset({"cards", "hand_cards", "hidden_cards"})
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
REDACTED = "[card]"

# Card notation of docs/rules.md#cards (rank then suit, jokers SJ/BJ) and the Card repr.
_CARD_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:(?:10|[2-9TJQKA])[SHCD♠♥♣♦♤♡♧♢]|[SB]J)(?![A-Za-z0-9])"
    r"|Card\(rank=\d+, suit='[SHCD]?'\)"
)
# Attributes every LogRecord has; anything else on a record came from `extra`.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", "taskName",
}
_HANDLER_MARK = "_fiftyk_json_handler"
# The HTTP client logs each webhook POST, URL included, at INFO: a line per event per
# endpoint, and a URL may carry the platform's token. Deliveries are told by the webhook
# metrics and dead letters instead; these loggers speak at DEBUG only.
QUIET_BELOW_DEBUG = ("httpx", "httpcore")


def redact_cards(text: str) -> str:
    """Replace every card token in `text` with a placeholder."""
    return _CARD_TOKEN.sub(REDACTED, text)


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact_cards(value)
    if isinstance(value, list | tuple):
        return [_redact_value(item) for item in value]
    return value


class JsonFormatter(logging.Formatter):
    """Format a record as one JSON object: ts, level, logger, message, ids and extras."""

    def format(self, record: logging.LogRecord) -> str:
        """Render the record; mask cards unless it is a DEBUG record."""
        hide_cards = record.levelno > logging.DEBUG
        message = record.getMessage()
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact_cards(message) if hide_cards else message,
        }
        for field, var in CONTEXT_VARS.items():
            value = var.get()
            if value is not None:
                entry[field] = value
        for field, value in vars(record).items():
            if field in _RECORD_ATTRIBUTES:
                continue
            if field in CONTEXT_VARS:
                entry[field] = value
            elif field in CARD_FIELDS:
                if not hide_cards:
                    entry[field] = value
            else:
                entry[field] = _redact_value(value) if hide_cards else value
        if record.exc_info:
            text = self.formatException(record.exc_info)
            entry["exc"] = redact_cards(text) if hide_cards else text
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure_logging(level: str, stream: TextIO | None = None) -> logging.Handler:
    """Send all logs as JSON lines to `stream` (stderr) at `level`; replaces an earlier call's."""
    name = level.strip().upper()
    if name not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; allowed: {', '.join(LEVELS)}")
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _HANDLER_MARK, False)]:
        root.removeHandler(old)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter())
    setattr(handler, _HANDLER_MARK, True)
    root.addHandler(handler)
    root.setLevel(name)
    for quiet in QUIET_BELOW_DEBUG:
        logging.getLogger(quiet).setLevel(logging.DEBUG if name == "DEBUG" else logging.WARNING)
    return handler


@contextmanager
def bind(
    *,
    table_id: str | None = None,
    hand_id: str | None = None,
    seat: int | None = None,
    request_id: str | None = None,
) -> Iterator[None]:
    """Attach ids to every log record written inside the block."""
    values = {"table_id": table_id, "hand_id": hand_id, "seat": seat, "request_id": request_id}
    tokens = [
        (CONTEXT_VARS[field], CONTEXT_VARS[field].set(value))
        for field, value in values.items()
        if value is not None
    ]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)
