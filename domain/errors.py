"""Typed rule errors carrying stable reason codes (docs/transcript.md#reason-codes)."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, ClassVar


class Reason(StrEnum):
    """The core's stable reason codes, shared by results, gRPC error details and metrics.

    A game's own codes are its `GameReason` (`domain/<game>/reasons.py`), listed by its bundle
    and documented on its page; the gRPC edge names the game in `ErrorInfo.metadata["game"]`.
    """

    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    CARDS_NOT_IN_HAND = "CARDS_NOT_IN_HAND"
    INVALID_COMBINATION = "INVALID_COMBINATION"
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
    # Seats' own keys (docs/fairness.md#seat-keys).
    INVALID_SEAT_KEY = "INVALID_SEAT_KEY"
    ENTROPY_SIGNATURE_REQUIRED = "ENTROPY_SIGNATURE_REQUIRED"
    ENTROPY_SIGNATURE_INVALID = "ENTROPY_SIGNATURE_INVALID"


class GameReason(StrEnum):
    """A game's own reason codes: subclass it with the game's name,
    `class MyGameReason(GameReason, game="mygame")` (`domain/<game>/reasons.py`). The codes
    are stable upper snake case strings like the core's, and must not reuse one of the
    core's."""

    game: ClassVar[str]

    def __init_subclass__(cls, *, game: str = "", **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not game:
            raise TypeError(f"{cls.__name__} names no game: class {cls.__name__}(GameReason,"
                            ' game="...")')
        cls.game = game


# Any reason a refusal carries: the core's or a game's.
AnyReason = Reason | GameReason

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

    def __init__(self, reason: AnyReason, message: str) -> None:
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
