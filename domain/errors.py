"""Typed rule errors carrying stable reason codes (docs/transcript.md#reason-codes)."""

from __future__ import annotations

import json
from enum import StrEnum


class Reason(StrEnum):
    """Stable reason codes shared by results, gRPC error details and metrics."""

    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    CARDS_NOT_IN_HAND = "CARDS_NOT_IN_HAND"
    INVALID_COMBINATION = "INVALID_COMBINATION"
    DOES_NOT_BEAT = "DOES_NOT_BEAT"
    MUST_LEAD = "MUST_LEAD"
    HAND_OVER = "HAND_OVER"
    UNKNOWN_CARD = "UNKNOWN_CARD"
    # More specific codes added by this project.
    INVALID_RULESET = "INVALID_RULESET"
    INVALID_DEAL = "INVALID_DEAL"
    INVALID_SEAT = "INVALID_SEAT"
    SEAT_TAKEN = "SEAT_TAKEN"
    SEAT_EMPTY = "SEAT_EMPTY"
    PLAYER_ALREADY_SEATED = "PLAYER_ALREADY_SEATED"
    TABLE_NOT_FULL = "TABLE_NOT_FULL"
    HAND_IN_PROGRESS = "HAND_IN_PROGRESS"
    NO_HAND_IN_PROGRESS = "NO_HAND_IN_PROGRESS"
    MATCH_OVER = "MATCH_OVER"
    PRESET_DECK_NOT_ALLOWED = "PRESET_DECK_NOT_ALLOWED"
    NO_TIMEOUT_CONFIGURED = "NO_TIMEOUT_CONFIGURED"
    TURN_NOT_EXPIRED = "TURN_NOT_EXPIRED"
    PLAYER_OUT = "PLAYER_OUT"
    INVALID_TRANSCRIPT = "INVALID_TRANSCRIPT"
    INVALID_ACTION = "INVALID_ACTION"
    CARD_NOT_IN_DECK = "CARD_NOT_IN_DECK"
    # The table lifecycle (docs/integrating.md, "Running a lobby").
    TABLE_CLOSED = "TABLE_CLOSED"
    HAND_VOIDED = "HAND_VOIDED"
    INVALID_REASON = "INVALID_REASON"
    # Seat entropy (docs/fairness.md#seat-entropy).
    NO_DRAW_OPEN = "NO_DRAW_OPEN"
    ENTROPY_ALREADY_SENT = "ENTROPY_ALREADY_SENT"
    ENTROPY_WINDOW_CLOSED = "ENTROPY_WINDOW_CLOSED"
    INVALID_ENTROPY = "INVALID_ENTROPY"
    # Commit, then reveal (docs/fairness.md#commit-then-reveal).
    ENTROPY_COMMIT_FIRST = "ENTROPY_COMMIT_FIRST"
    ENTROPY_REVEAL_NOT_OPEN = "ENTROPY_REVEAL_NOT_OPEN"
    ENTROPY_MISMATCH = "ENTROPY_MISMATCH"
    # Shengji (docs/shengji.md#reason-codes).
    NOT_DECLARATION_PHASE = "NOT_DECLARATION_PHASE"
    # A play while the declaration windows are still open (live tables: a transcript
    # closes them at its first action that is not a declaration).
    DECLARATIONS_OPEN = "DECLARATIONS_OPEN"
    MUST_BURY = "MUST_BURY"
    PASS_NOT_ALLOWED = "PASS_NOT_ALLOWED"
    INVALID_DECLARATION = "INVALID_DECLARATION"
    WRONG_BURY_COUNT = "WRONG_BURY_COUNT"
    WRONG_CARD_COUNT = "WRONG_CARD_COUNT"
    DECLARATION_TOO_WEAK = "DECLARATION_TOO_WEAK"
    BURY_POINTS_FORBIDDEN = "BURY_POINTS_FORBIDDEN"
    MUST_FOLLOW_SUIT = "MUST_FOLLOW_SUIT"
    MUST_FOLLOW_TRACTOR = "MUST_FOLLOW_TRACTOR"
    MUST_FOLLOW_TRIPLE = "MUST_FOLLOW_TRIPLE"
    MUST_FOLLOW_PAIR = "MUST_FOLLOW_PAIR"
    # A declaration naming a window (its round) other than the one open now.
    WRONG_WINDOW = "WRONG_WINDOW"


# A refusal quotes what it was sent, but never more than this: an echoed value travels in
# the response's trailers, which clients drop past a few kilobytes.
ECHO_CHARS = 64
# Python refuses to write an integer with more digits than this as text (ValueError).
_MAX_INT_DIGITS = 4000
_DIGITS_PER_BIT = 0.30103


def shown(value: object, *, as_json: bool = False) -> str:
    """`value` as a refusal quotes it — `repr`, or JSON with `as_json` — cut to ECHO_CHARS."""
    if isinstance(value, int) and value.bit_length() * _DIGITS_PER_BIT > _MAX_INT_DIGITS:
        return f"<an integer of about {round(value.bit_length() * _DIGITS_PER_BIT)} digits>"
    text = json.dumps(value, default=str, ensure_ascii=False) if as_json else repr(value)
    if len(text) <= ECHO_CHARS:
        return text
    return f"{text[:ECHO_CHARS]}… ({len(text)} characters)"


class RuleError(Exception):
    """A command or input that the rules refuse; carries a reason code and a player-facing text."""

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message

    def __repr__(self) -> str:
        return f"RuleError({self.reason.value}, {self.message!r})"


class InvalidRuleset(RuleError):
    """A ruleset (preset + options) that cannot be used."""

    def __init__(self, message: str) -> None:
        super().__init__(Reason.INVALID_RULESET, message)


class UnknownCard(RuleError):
    """A card token not written in the notation of docs/rules.md#cards."""

    def __init__(self, token: str) -> None:
        super().__init__(
            Reason.UNKNOWN_CARD,
            f"unknown card {shown(token)}: write rank then suit, e.g. 3S 10H QC AD 2S,"
            " jokers SJ BJ",
        )
        self.token = token


class InvalidCombination(RuleError):
    """Cards that form no combination of the ruleset."""

    def __init__(self, message: str) -> None:
        super().__init__(Reason.INVALID_COMBINATION, message)
