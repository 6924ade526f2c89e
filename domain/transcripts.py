"""What every game's transcripts share: the format names, a result's status words, and
the error of a file that is not a readable transcript (docs/transcript.md)."""

from __future__ import annotations

from fiftyk_referee.domain.errors import Reason, RuleError

TRANSCRIPT_FORMAT = "fiftyk-transcript/1"
RESULT_FORMAT = "fiftyk-result/1"
COMPLETED, IN_PROGRESS, REJECTED = "completed", "in_progress", "rejected"


class InvalidTranscript(RuleError):
    """A file that is not a readable transcript (malformed file, ruleset or deal)."""

    def __init__(self, message: str) -> None:
        super().__init__(Reason.INVALID_TRANSCRIPT, message)


__all__ = ["COMPLETED", "IN_PROGRESS", "REJECTED", "RESULT_FORMAT", "TRANSCRIPT_FORMAT",
           "InvalidTranscript"]
