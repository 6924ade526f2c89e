"""What every game's transcripts share: the format names, a result's status words, the
error of a file that is not a readable transcript (docs/transcript.md), and the checks every
game's reader makes of a file's values."""

from __future__ import annotations

from typing import Any

from fiftyk_referee.domain.cards import parse_card
from fiftyk_referee.domain.errors import Reason, RuleError

TRANSCRIPT_FORMAT = "fiftyk-transcript/1"
RESULT_FORMAT = "fiftyk-result/1"
COMPLETED, IN_PROGRESS, REJECTED = "completed", "in_progress", "rejected"


class InvalidTranscript(RuleError):
    """A file that is not a readable transcript (malformed file, ruleset or deal)."""

    def __init__(self, message: str) -> None:
        super().__init__(Reason.INVALID_TRANSCRIPT, message)


def require(condition: bool, message: str) -> None:
    """Refuse the file as unreadable, saying why, unless `condition` holds."""
    if not condition:
        raise InvalidTranscript(message)


def is_int(value: Any) -> bool:
    """Whether a JSON value is an integer (`true` and `false` are not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def card_list(value: Any, what: str) -> list[str]:
    """A JSON list of card strings, each in its canonical notation (`what` names it in the
    error)."""
    require(isinstance(value, list) and all(isinstance(c, str) for c in value),
            f"{what} must be a list of card strings")
    try:
        return [str(parse_card(c)) for c in value]
    except RuleError as error:
        raise InvalidTranscript(f"{what}: {error.message}") from error


__all__ = ["COMPLETED", "IN_PROGRESS", "REJECTED", "RESULT_FORMAT", "TRANSCRIPT_FORMAT",
           "InvalidTranscript", "card_list", "is_int", "require"]
