"""Shengji's burying phase: the dealer, holding the kitty, buries as many cards face down.

Exactly `kitty_size` cards, and no point cards (5, 10, K) unless the ruleset allows them;
the buried cards score for the last trick's winner at the end. At the turn clock the
dealer's lowest allowed cards are buried. Burying opens the playing phase, the dealer
leading.
"""

from __future__ import annotations

from collections.abc import Sequence

from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import Constraint, LegalActions, LegalPlay
from fiftyk_referee.domain.shengji.cards import POINTS
from fiftyk_referee.domain.shengji.hand_state import BURY, BURYING, HandState
from fiftyk_referee.domain.shengji.reasons import ShengjiReason


def check_bury(cards: Sequence[Card], kitty_size: int, bury_points: bool) -> None:
    """Refuse a bury of the wrong size (`WRONG_BURY_COUNT`) or with forbidden points."""
    if len(cards) != kitty_size:
        raise RuleError(ShengjiReason.WRONG_BURY_COUNT, f"bury exactly {kitty_size} cards")
    if not bury_points and any(POINTS[c] for c in cards):
        raise RuleError(ShengjiReason.BURY_POINTS_FORBIDDEN, "no 5, 10 or K may be buried")


class Burying(HandState):
    """The burying phase of a hand: the dealer's bury."""

    def bury(self, seat: int, cards: Sequence[Card], *, timeout: bool = False) -> None:
        """The dealer buries exactly `kitty_size` cards face down."""
        self._check_bury(seat, cards)
        self._buried(seat=seat, cards=[str(c) for c in cards], timeout=timeout)

    def _check_bury(self, seat: int, cards: Sequence[Card]) -> None:
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        self._check_seat(seat)
        if self.phase != BURYING or seat != self.dealer:
            raise RuleError(Reason.NOT_YOUR_TURN, "no bury is due from this seat")
        missing = self._missing(self.hands[seat], cards)
        if missing:
            raise RuleError(Reason.CARDS_NOT_IN_HAND,
                            f"seat {seat} does not hold {' '.join(map(str, missing))}")
        check_bury(cards, self.rules.kitty_size, self.rules.bury_points)

    def lowest_bury(self) -> list[Card]:
        """The dealer's lowest cards it may bury (non-point cards first without bury_points)."""
        order = self.order
        hand = sorted(self.hands[self.dealer], key=order.sort_key)
        if not self.rules.bury_points:
            hand.sort(key=lambda c: POINTS[c] > 0)  # stable: lowest non-point cards first
        return hand[:self.rules.kitty_size]

    def _bury_actions(self, seat: int) -> LegalActions:
        """While burying: the dealer's bury (its lowest allowed cards as the example)."""
        if seat != self.dealer:
            return LegalActions(seat=seat)
        words = [f"bury exactly {self.rules.kitty_size} cards"]
        needs = [Constraint("count", count=self.rules.kitty_size)]
        if not self.rules.bury_points:
            words.append("no 5, 10 or K")
            needs.append(Constraint("no_points"))
        example = LegalPlay(tuple(map(str, self.lowest_bury())), "bury")
        return LegalActions(seat=seat, plays=(example,), truncated=True,
                            kinds=frozenset({BURY}), constraints=tuple(words),
                            requirements=tuple(needs))


__all__ = ["Burying", "check_bury"]
