"""The rules oracle (docs/oracle.md): single rule questions, answered as JSON, one line each.

`answer(question)` answers one parsed question, `answer_line(line)` one line of text, and
`run(stdin, stdout)` a whole stream (what `fiftyk rules ask` runs). Each game answers its
own questions (`Game.answer`, in its package's `oracle.py`), found by the question's
`game` among the installed games; this module reads lines, checks a question's
outer shape, dispatches it and writes the ruling.

A question the engine cannot answer gets `{"error": CODE, "message": TEXT}`:
`INVALID_RULESET` (unknown game, preset, option or option value), `UNKNOWN_CARD`,
`CARD_NOT_IN_DECK`, `INVALID_COMBINATION` (a lead, top play or card group the question
takes as standing spans two suit groups or forms nothing), and `INVALID_REQUEST` for the
rest (not JSON, an empty line, an unknown kind, a missing, unknown or mistyped field).
docs/oracle.md#decisions lists the decisions taken where the question format leaves a choice.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, BinaryIO

from fiftyk_referee.domain.errors import Reason, RuleError, shown
from fiftyk_referee.domain.games import game_named, hosted
from fiftyk_referee.domain.oracle import (
    INVALID_REQUEST,
    JSON,
    BadQuestion,
    error_answer,
    malformed,
)

EXIT_OK, EXIT_UNREADABLE = 0, 1
MAX_LINE_BYTES = 1 << 20  # a question longer than this is refused unread (bounds memory)
QUESTION_FIELDS = ("game", "kind", "preset", "options", "input")


def answer(question: Any) -> JSON:
    """The answer to one parsed question: the ruling, or `{"error", "message"}`."""
    try:
        if not isinstance(question, Mapping):
            raise malformed("a question is a JSON object")
        unknown = sorted(set(question) - set(QUESTION_FIELDS))
        if unknown:
            raise malformed(f"unknown field(s) {', '.join(unknown)};"
                             f" a question has {', '.join(QUESTION_FIELDS)}")
        game = question.get("game")
        if game is not None and (not isinstance(game, str) or game not in hosted()):
            raise BadQuestion(Reason.INVALID_RULESET.value,
                              f"unknown game {shown(game)}; allowed: {', '.join(sorted(hosted()))}")
        return game_named(game or "").answer(question)
    except BadQuestion as bad:
        return error_answer(bad.code, bad.message)
    except RuleError as refused:
        return error_answer(refused.reason.value, refused.message)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def answer_line(line: bytes) -> JSON:
    """The answer to one line of standard input (UTF-8 JSON text)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return error_answer(INVALID_REQUEST, "the line is not UTF-8 text")
    if not text.strip():
        return error_answer(INVALID_REQUEST, "an empty line is not a question")
    try:
        question = json.loads(text, parse_constant=_reject_constant)
    except ValueError as error:  # JSONDecodeError, NaN/Infinity, an over-long integer
        return error_answer(INVALID_REQUEST, f"not JSON: {error}")
    except RecursionError:
        return error_answer(INVALID_REQUEST, "not JSON this oracle reads: nested too deeply")
    return answer(question)


def encode(value: JSON) -> bytes:
    """One answer as a line of UTF-8 JSON."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8") + b"\n"


class UnreadableInput(Exception):
    """Standard input could not be read (the one case the oracle stops with a failure)."""


def _read_line(stdin: BinaryIO) -> tuple[bytes, bool]:
    """(line, fits): one line of at most MAX_LINE_BYTES; an over-long one is skipped whole."""
    try:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
            return line, True
        rest = line
        while rest and not rest.endswith(b"\n"):
            rest = stdin.readline(MAX_LINE_BYTES)
        return line, False
    except OSError as error:
        raise UnreadableInput(str(error)) from error


def run(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer every line of `stdin` on `stdout`, in order, each answer flushed as written."""
    while True:
        line, fits = _read_line(stdin)
        if not line:
            return EXIT_OK
        if fits:
            result = answer_line(line)
        else:
            result = error_answer(INVALID_REQUEST,
                                  f"a question is at most {MAX_LINE_BYTES} bytes long")
        stdout.write(encode(result))
        stdout.flush()  # a client may wait for each answer before asking the next question


__all__ = [
    "EXIT_OK", "EXIT_UNREADABLE", "MAX_LINE_BYTES", "BadQuestion", "UnreadableInput", "answer",
    "answer_line", "encode", "error_answer", "run",
]
