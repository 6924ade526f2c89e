"""五十K's own reason codes (docs/rules.md#reason-codes): the refusals no other game shares.

The codes every game shares (`NOT_YOUR_TURN`, `CARDS_NOT_IN_HAND`, ...) are the core's
(`domain/errors.py`).
"""

from __future__ import annotations

from fiftyk_referee.domain.errors import GameReason


class FiftykReason(GameReason, game="fiftyk"):
    """Stable reason codes of 五十K's refusals."""

    DOES_NOT_BEAT = "DOES_NOT_BEAT"  # a valid combination that does not beat the trick's top
    MUST_LEAD = "MUST_LEAD"  # a pass by the seat that must lead
    PLAYER_OUT = "PLAYER_OUT"  # the seat has gone out or resigned


__all__ = ["FiftykReason"]
