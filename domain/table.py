"""The table aggregate: seats, a ruleset, a series of hands and the cumulative score."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from eventsourcing.domain import Aggregate, event

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.fiftyk.hand import Hand, hand_id_for, ruleset_of
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.fiftyk.scoring import teams_of

MAX_PLAYER_ID_LENGTH = 128


def side_names(ruleset: Ruleset, players: int) -> list[str]:
    """Score sides: `team:0`, `team:1` in team games, else `seat:N` per seat."""
    teams = teams_of(ruleset, players)
    if teams:
        return [f"team:{i}" for i in range(len(teams))]
    return [f"seat:{s}" for s in range(players)]


class Table(Aggregate):
    """A table: who sits where, which rules, which hand is on, and the match score."""

    @classmethod
    def open(cls, ruleset: Ruleset, players: int, *, allow_preset_deck: bool = False,
             name: str = "") -> Table:
        """Open a table, validating the seat count against the ruleset."""
        ruleset.check_players(players)
        return cls(ruleset=ruleset.to_json(), players=players,
                   allow_preset_deck=allow_preset_deck, name=name)

    @event("Opened")
    def __init__(self, ruleset: dict[str, Any], players: int, allow_preset_deck: bool,
                 name: str) -> None:
        self.ruleset_spec = ruleset
        self.rules = ruleset_of(ruleset)
        self.players = players
        self.allow_preset_deck = allow_preset_deck
        self.name = name
        self.seats: list[str | None] = [None] * players
        self.scores: dict[str, Decimal] = {s: Decimal(0) for s in side_names(self.rules, players)}
        self.hands_played = 0
        self.current_hand: str | None = None
        self.hand_ids: list[str] = []
        self.next_dealer = players - 1  # so seat 0 receives the first card of the first hand
        self.previous_first_out: int | None = None
        self.match_over = False
        self.match_end_reason: str | None = None

    def clone(self) -> Table:
        """An independent copy for the next command: shares only what no event mutates."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.seats = list(self.seats)
        twin.scores = dict(self.scores)
        twin.hand_ids = list(self.hand_ids)
        twin.__dict__["_pending_events"] = list(self.__dict__.get("_pending_events", ()))
        return twin

    # -- queries ----------------------------------------------------------------------------

    @property
    def is_full(self) -> bool:
        """Every seat is taken."""
        return all(p is not None for p in self.seats)

    def seat_of(self, player_id: str) -> int | None:
        """The seat a player holds, if any."""
        return self.seats.index(player_id) if player_id in self.seats else None

    def view(self) -> dict[str, Any]:
        """Public state of the table (no cards)."""
        return {
            "table_id": str(self.id),
            "version": self.version,
            "name": self.name,
            "ruleset": self.ruleset_spec,
            "fingerprint": self.rules.fingerprint,
            "players": self.players,
            "seats": list(self.seats),
            "scores": {k: str(v) for k, v in self.scores.items()},
            "hands_played": self.hands_played,
            "current_hand": self.current_hand,
            "hand_ids": list(self.hand_ids),
            "next_dealer": self.next_dealer,
            "match_over": self.match_over,
            "match_end_reason": self.match_end_reason,
            "allow_preset_deck": self.allow_preset_deck,
        }

    # -- commands ---------------------------------------------------------------------------

    def _check_seat(self, seat: int) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.players:
            raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{self.players - 1}")

    def join(self, seat: int, player_id: str) -> None:
        """Take a free seat."""
        self._check_seat(seat)
        if not isinstance(player_id, str) or not 0 < len(player_id) <= MAX_PLAYER_ID_LENGTH:
            raise RuleError(Reason.INVALID_SEAT,
                            f"a player id is a non-empty string of at most"
                            f" {MAX_PLAYER_ID_LENGTH} characters")
        if self.match_over:
            raise RuleError(Reason.MATCH_OVER, "the match at this table is over")
        if self.seats[seat] is not None:
            raise RuleError(Reason.SEAT_TAKEN, f"seat {seat} is taken")
        if player_id in self.seats:
            raise RuleError(Reason.PLAYER_ALREADY_SEATED,
                            f"player {player_id!r} already sits at seat {self.seat_of(player_id)}")
        self._joined(seat=seat, player_id=player_id)

    def leave(self, seat: int) -> None:
        """Leave a seat between hands."""
        self._check_seat(seat)
        if self.seats[seat] is None:
            raise RuleError(Reason.SEAT_EMPTY, f"seat {seat} is empty")
        if self.current_hand is not None:
            raise RuleError(Reason.HAND_IN_PROGRESS, "seats cannot change during a hand")
        self._left(seat=seat)

    def start_hand(self, *, deck: list[str] | None = None, seed: bytes | None = None) -> Hand:
        """Deal the next hand (a preset deck only when the table allows it)."""
        if self.match_over:
            raise RuleError(Reason.MATCH_OVER, "the match at this table is over")
        if self.current_hand is not None:
            raise RuleError(Reason.HAND_IN_PROGRESS, "a hand is already being played")
        if not self.is_full:
            raise RuleError(Reason.TABLE_NOT_FULL,
                            f"all {self.players} seats must be taken to deal")
        if deck is not None and not self.allow_preset_deck:
            raise RuleError(Reason.PRESET_DECK_NOT_ALLOWED,
                            "this table was not created to allow preset decks")
        number = self.hands_played + 1
        hand = Hand.deal_new(
            table_id=str(self.id), number=number, ruleset=self.rules, players=self.players,
            dealer=self.next_dealer, deck=deck, seed=seed,
            previous_first_out=self.previous_first_out, seat_players=self.seats,
        )
        self._hand_started(hand_id=str(hand.id), number=number, dealer=self.next_dealer)
        return hand

    def record_hand(self, hand: Hand) -> None:
        """Add a finished hand's scores to the match (save table and hand together)."""
        if self.current_hand != str(hand.id):
            raise RuleError(Reason.NO_HAND_IN_PROGRESS,
                            "that hand is not this table's current hand")
        if not hand.is_over or hand.result is None:
            raise RuleError(Reason.HAND_IN_PROGRESS, "the hand is not over yet")
        totals = dict(hand.result["side_totals"])
        first_out = hand.out[0] if hand.out else None
        self._hand_recorded(hand_id=str(hand.id), totals=totals, first_out=first_out)
        reason = self._match_end_reason()
        if reason is not None:
            self._match_ended(reason=reason)

    def _match_end_reason(self) -> str | None:
        r = self.rules
        if r.hands is not None and self.hands_played >= r.hands:
            return f"{r.hands} hands played"
        if r.target_score is not None and any(v >= r.target_score for v in self.scores.values()):
            return f"a side reached {r.target_score}"
        return None

    # -- events -----------------------------------------------------------------------------

    @event("SeatTaken")
    def _joined(self, seat: int, player_id: str) -> None:
        self.seats[seat] = player_id

    @event("SeatLeft")
    def _left(self, seat: int) -> None:
        self.seats[seat] = None

    @event("HandStarted")
    def _hand_started(self, hand_id: str, number: int, dealer: int) -> None:
        self.current_hand = hand_id
        self.hand_ids.append(hand_id)
        self.next_dealer = (dealer + 1) % self.players

    @event("HandRecorded")
    def _hand_recorded(self, hand_id: str, totals: dict[str, str], first_out: int | None) -> None:
        del hand_id  # kept in the event for readers
        for side, value in totals.items():
            self.scores[side] += Decimal(value)
        self.hands_played += 1
        self.current_hand = None
        self.previous_first_out = first_out

    @event("MatchEnded")
    def _match_ended(self, reason: str) -> None:
        self.match_over = True
        self.match_end_reason = reason


__all__ = ["Table", "hand_id_for", "side_names"]
