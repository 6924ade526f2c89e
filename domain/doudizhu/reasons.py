"""斗地主's own reason codes: the refusals no other game shares.

The codes every game shares (`NOT_YOUR_TURN`, `CARDS_NOT_IN_HAND`, `INVALID_COMBINATION`,
`INVALID_ACTION`, ...) are the core's (`domain/errors.py`).
"""

from __future__ import annotations

from fiftyk_referee.domain.errors import GameReason


class DoudizhuReason(GameReason, game="doudizhu"):
    """Stable reason codes of 斗地主's refusals."""

    # Bidding.
    NOT_BIDDING = "NOT_BIDDING"  # a bid, call or rob once the landlord is known
    BIDDING_OPEN = "BIDDING_OPEN"  # a play while the landlord is still being bid for
    INVALID_BID = "INVALID_BID"  # a bid that is not 1, 2 or 3 points
    BID_TOO_LOW = "BID_TOO_LOW"  # a bid not above the highest bid so far
    WRONG_BIDDING = "WRONG_BIDDING"  # a point bid in a 叫地主 room, or a call/rob in a points room
    ALREADY_CALLED = "ALREADY_CALLED"  # 叫地主 once somebody has called
    CANNOT_ROB = "CANNOT_ROB"  # 抢地主 before anybody called (out of turn: NOT_YOUR_TURN)
    # Play.
    DOES_NOT_BEAT = "DOES_NOT_BEAT"  # a combination that does not beat the table's last play
    MUST_LEAD = "MUST_LEAD"  # a pass by the seat that leads


__all__ = ["DoudizhuReason"]
