"""Shengji's own reason codes (docs/shengji.md#reason-codes): the refusals no other game
shares.

The codes every game shares (`NOT_YOUR_TURN`, `CARDS_NOT_IN_HAND`, `INVALID_COMBINATION`,
...) are the core's (`domain/errors.py`).
"""

from __future__ import annotations

from fiftyk_referee.domain.errors import GameReason


class ShengjiReason(GameReason, game="shengji"):
    """Stable reason codes of Shengji's refusals."""

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


__all__ = ["ShengjiReason"]
