"""Shengji's playing phase: tricks, failed throws, and the hand's result.

A lead is one suit group (a throw of several components stands or fails on the other seats'
cards: a failed throw plays its forced component); a follow obeys the lead (`tricks.py`).
The best play so far wins the trick and leads the next; when the hands are empty the hand
is scored (`scoring.py`) and ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import PLAY, Constraint, LegalActions, LegalPlay
from fiftyk_referee.domain.shengji.cards import POINTS
from fiftyk_referee.domain.shengji.hand_state import (
    BURYING,
    DECLARING,
    PLAYING,
    HandState,
    rank_name,
)
from fiftyk_referee.domain.shengji.play import Lead, lead_examples, lead_of, play_key
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import PLAYERS
from fiftyk_referee.domain.shengji.scoring import HandFacts, score_hand, team_of
from fiftyk_referee.domain.shengji.tricks import KEY_COMPONENT


class Playing(HandState):
    """The playing phase of a hand: leads, follows, tricks, the result."""

    def play(self, seat: int, cards: Sequence[Card], *, timeout: bool = False) -> None:
        """Lead or follow; a failed throw plays its forced component."""
        lead, leads = self._checked_play(seat, cards)
        order = self.order
        if leads:  # a throw stands or fails on the other seats' cards
            others = [self.hands[(seat + k) % PLAYERS] for k in range(1, PLAYERS)]
            forced = self.tricks.forced(lead, others, order)
            if forced is not None:
                self._throw_failed(seat=seat, attempted=[str(c) for c in cards],
                                   forced=[str(c) for c in forced.cards],
                                   action=len(self.actions))
                lead = lead_of(forced.kind, [forced], lead.group)
                cards = list(forced.cards)
            key = play_key(cards, lead, order)
            winning = True
        else:
            key = play_key(cards, lead, order)
            if self.tricks.throw_evaluation == KEY_COMPONENT:
                winning = key is not None and key > self.best_key
            else:
                plays = [played for _, played in self.trick] + [list(cards)]
                winning = self.tricks.winner(plays, lead, order) == len(self.trick)
                key = self.tricks.key(cards, lead, order) if winning else None
        self._played(seat=seat, cards=[str(c) for c in cards], key=key if winning else None,
                     timeout=timeout)
        if len(self.trick) == PLAYERS:
            winner = self.best_seat if self.best_seat is not None else seat
            points = sum(POINTS[c] for _, played in self.trick for c in played)
            over = not self.hands[winner]
            self._trick_won(seat=winner, points=points, leader=None if over else winner)
            if over:
                self._finish()

    def _checked_play(self, seat: int, cards: Sequence[Card]) -> tuple[Lead, bool]:
        """The lead the play answers (read from its cards when it leads) and whether it
        leads, or the play's refusal: judged on the seat's own cards and the trick so far,
        never on another seat's cards."""
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        self._check_seat(seat)
        if self.phase == DECLARING:
            raise RuleError(ShengjiReason.DECLARATIONS_OPEN,
                            "the declaration windows are still open: declare, or declare"
                            " nothing; play starts once the dealer has buried")
        if self.phase == BURYING and seat == self.dealer:
            raise RuleError(ShengjiReason.MUST_BURY, f"bury {self.rules.kitty_size} cards first")
        if self.phase != PLAYING or seat != self.turn:
            raise RuleError(Reason.NOT_YOUR_TURN, f"it is not seat {seat}'s turn to play")
        hand = self.hands[seat]
        missing = self._missing(hand, cards)
        if missing:
            raise RuleError(Reason.CARDS_NOT_IN_HAND,
                            f"seat {seat} does not hold {' '.join(map(str, missing))}")
        if self.lead is None:
            return self.tricks.read(cards, self.order), True
        problem = self.tricks.follow_error(hand, cards, self.lead, self.order)
        if problem is not None:
            raise RuleError(*problem)
        return self.lead, False

    def _finish(self) -> None:
        dealer_team = team_of(self.dealer)
        attack_points = sum(p for s, p in enumerate(self.collected) if team_of(s) != dealer_team)
        winner = self.last_winner if self.last_winner is not None else self.dealer
        facts = HandFacts(
            dealer=self.dealer, levels=self.levels, trick_points=attack_points,
            kitty_points=sum(POINTS[c] for c in self.kitty), last_winner=winner,
            last_lead_largest=self.last_lead_largest, failed_throws=tuple(self.failed_seats),
            room_points=self.room_points)
        standing = self.declaration
        result: dict[str, Any] = {
            "dealer": self.dealer,
            "trump": {"rank": rank_name(self.rank),
                      "suit": standing.suit if standing else None,
                      "declared_by": standing.seat if standing else None,
                      "cards": list(standing.cards) if standing else None},
            "kitty": {"dealt": [str(c) for c in self.kitty_dealt],
                      "buried": [str(c) for c in self.kitty],
                      "points": facts.kitty_points},
            "throws_failed": [dict(t) for t in self.throws_failed],
            "collected": list(self.collected),
            **score_hand(self.rules, facts),
        }
        self._ended(result=result, seed=self.seed)

    def _play_actions(self, seat: int) -> LegalActions:
        """While playing: a lead's examples, or a follow's (`play.py`: bounded answers)."""
        if seat != self.turn:
            return LegalActions(seat=seat)
        hand = self.hands[seat]
        if self.lead is None:
            leads = lead_examples(hand, self.order)
            return LegalActions(
                seat=seat, plays=tuple(LegalPlay(tuple(map(str, c)), k) for c, k in leads),
                truncated=True, kinds=frozenset({PLAY}),
                constraints=(self.tricks.lead_constraint(),),
                requirements=(Constraint("one_group"),))
        plays, truncated = self.tricks.examples(hand, self.lead, self.order)
        return LegalActions(
            seat=seat, plays=tuple(LegalPlay(tuple(map(str, p)), "follow") for p in plays),
            truncated=truncated, kinds=frozenset({PLAY}),
            constraints=self.tricks.constraints(hand, self.lead, self.order),
            requirements=self.tricks.requirements(hand, self.lead, self.order))


__all__ = ["Playing"]
