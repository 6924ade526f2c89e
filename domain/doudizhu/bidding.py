"""Bidding for the landlord (叫分 / 叫地主 and 抢地主): the phase before the play.

The auction is a frozen record of what each seat said, in order (`Auction.entries`); every
question about it (whose turn, what is open to a seat, how it ended) is answered from those
entries alone, so the hand aggregate keeps nothing else about bidding.

Two ways to bid (the ruleset's `bidding`):

- `points` (叫分): from the first bidder (the seat after the dealer), each seat speaks once,
  in turn: it bids 1, 2 or 3 points, more than the highest bid so far, or passes. A bid of
  3 ends the bidding at once. The highest bidder is the landlord and its bid the hand's
  first multiplier. If all three pass, nobody is landlord: the hand is a redeal.
- `rob` (叫地主 / 抢地主): from the first bidder, each seat in turn may call (叫地主) or
  pass until one calls; if all three pass, the hand is a redeal. After a call, each of the
  two other seats, in turn after the caller, may rob (抢地主) once or pass; then, if anybody
  robbed, the caller may rob back once. The last seat to call or rob is the landlord, and
  every rob doubles the hand (the bid counts as 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from fiftyk_referee.domain.doudizhu.reasons import DoudizhuReason
from fiftyk_referee.domain.doudizhu.rulesets import MAX_BID, PLAYERS, POINTS, ROB
from fiftyk_referee.domain.errors import Reason, RuleError, shown

BID, CALL, ROB_KIND, PASS = "bid", "call", "rob", "pass"
BID_KINDS = (BID, CALL, ROB_KIND, PASS)
BID_VALUES = tuple(range(1, MAX_BID + 1))


class Stage(StrEnum):
    """Where an auction stands."""

    CALLING = "calling"  # points bids, or 叫地主 until somebody calls
    ROBBING = "robbing"  # 抢地主 after a call
    DECIDED = "decided"  # a landlord
    REDEAL = "redeal"  # everybody passed


@dataclass(frozen=True, slots=True)
class BidEntry:
    """One thing a seat said: a points bid (`value` 1-3), a call, a rob or a pass."""

    seat: int
    kind: str
    value: int | None = None
    by_referee: bool = False  # said for the seat by its turn clock


@dataclass(frozen=True, slots=True)
class Outcome:
    """How an auction ended: the landlord, its points bid (1 when calling and robbing) and
    how many robs doubled it; `landlord` None for a redeal."""

    landlord: int | None
    bid: int
    robs: int

    @property
    def factor(self) -> int:
        """What the bidding multiplies the hand by: the bid, doubled once per rob."""
        return self.bid << self.robs


@dataclass(frozen=True, slots=True)
class _State:
    stage: Stage
    to_act: int | None
    highest: int  # the highest points bid so far (0: none)
    holder: int | None  # the seat holding the highest bid, or the last caller or robber
    caller: int | None
    robs: int
    robbing_order: tuple[int, ...]  # who still speaks in the robbing stage, in order


@dataclass(frozen=True, slots=True)
class Auction:
    """The bidding of one hand: the way it is bid, who speaks first, what was said."""

    style: str  # POINTS or ROB
    first: int  # the first bidder
    entries: tuple[BidEntry, ...] = ()

    # -- answers ----------------------------------------------------------------------------

    def _state(self) -> _State:
        if self.style == POINTS:
            return self._points_state()
        return self._rob_state()

    def _points_state(self) -> _State:
        highest, holder = 0, None
        for entry in self.entries:
            if entry.kind == BID and entry.value is not None:
                highest, holder = entry.value, entry.seat
        spoken = len(self.entries)
        if highest == MAX_BID or spoken == PLAYERS:
            stage = Stage.DECIDED if holder is not None else Stage.REDEAL
            return _State(stage, None, highest, holder, None, 0, ())
        return _State(Stage.CALLING, (self.first + spoken) % PLAYERS, highest, holder, None,
                      0, ())

    def _rob_state(self) -> _State:
        caller: int | None = None
        holder: int | None = None
        robs = 0
        order: tuple[int, ...] = ()
        calls_heard = 0
        for entry in self.entries:
            if caller is None:
                calls_heard += 1
                if entry.kind == CALL:
                    caller = holder = entry.seat
                    order = ((caller + 1) % PLAYERS, (caller + 2) % PLAYERS)
                continue
            order = order[1:]
            if entry.kind == ROB_KIND:
                robs += 1
                holder = entry.seat
                if entry.seat != caller and caller not in order:
                    order = (*order, caller)  # a rob gives the caller its rob-back
        if caller is None:
            if calls_heard == PLAYERS:
                return _State(Stage.REDEAL, None, 0, None, None, 0, ())
            return _State(Stage.CALLING, (self.first + calls_heard) % PLAYERS, 0, None, None,
                          0, ())
        if not order:
            return _State(Stage.DECIDED, None, 1, holder, caller, robs, ())
        return _State(Stage.ROBBING, order[0], 1, holder, caller, robs, order)

    @property
    def stage(self) -> Stage:
        """Where the auction stands."""
        return self._state().stage

    @property
    def is_over(self) -> bool:
        """Whether the auction has ended (a landlord, or a redeal)."""
        return self.stage in (Stage.DECIDED, Stage.REDEAL)

    @property
    def to_act(self) -> int | None:
        """The seat whose word the auction waits for (None once it is over)."""
        return self._state().to_act

    @property
    def highest(self) -> int:
        """The highest points bid so far (0: none; 1 once somebody called in a rob room)."""
        return self._state().highest

    @property
    def holder(self) -> int | None:
        """The seat that would be landlord if the auction ended now."""
        return self._state().holder

    @property
    def robs(self) -> int:
        """How many robs so far."""
        return self._state().robs

    def outcome(self) -> Outcome | None:
        """How the auction ended (None while it goes on)."""
        state = self._state()
        if state.stage == Stage.REDEAL:
            return Outcome(None, 0, 0)
        if state.stage == Stage.DECIDED:
            return Outcome(state.holder, state.highest, state.robs)
        return None

    def open_kinds(self, seat: int) -> tuple[str, ...]:
        """The kinds of word open to `seat` now (empty when it is not its turn)."""
        state = self._state()
        if state.to_act != seat:
            return ()
        if self.style == POINTS:
            return (BID, PASS)
        return (CALL, PASS) if state.stage == Stage.CALLING else (ROB_KIND, PASS)

    def open_bids(self, seat: int) -> tuple[int, ...]:
        """The points `seat` may bid now (empty unless it is its turn in a points room)."""
        if BID not in self.open_kinds(seat):
            return ()
        highest = self.highest
        return tuple(v for v in BID_VALUES if v > highest)

    # -- judging ----------------------------------------------------------------------------

    def judge(self, seat: int, kind: str, value: str | None, *, by_referee: bool = False
              ) -> BidEntry:
        """The entry `seat` saying `kind` (with `value`, a points bid) would add, or its
        refusal."""
        state = self._state()
        if state.stage in (Stage.DECIDED, Stage.REDEAL):
            raise RuleError(DoudizhuReason.NOT_BIDDING, "the bidding is over")
        if seat != state.to_act:
            raise RuleError(Reason.NOT_YOUR_TURN,
                            f"it is seat {state.to_act}'s turn to bid, not {seat}'s")
        if kind == PASS:
            _no_value(kind, value)
            return BidEntry(seat, PASS, None, by_referee)
        if self.style == POINTS:
            if kind != BID:
                raise RuleError(DoudizhuReason.WRONG_BIDDING,
                                f"this room bids points (1-{MAX_BID}): {kind} is not a bid here")
            points = _points(value)
            if points <= state.highest:
                raise RuleError(DoudizhuReason.BID_TOO_LOW,
                                f"a bid must be more than {state.highest} point(s)")
            return BidEntry(seat, BID, points, by_referee)
        if kind == BID:
            raise RuleError(DoudizhuReason.WRONG_BIDDING,
                            "this room calls and robs the landlord: call, rob or pass")
        _no_value(kind, value)
        if kind == CALL:
            if state.stage != Stage.CALLING:
                raise RuleError(DoudizhuReason.ALREADY_CALLED,
                                f"seat {state.caller} has called: rob or pass")
            return BidEntry(seat, CALL, None, by_referee)
        if kind == ROB_KIND:
            if state.stage != Stage.ROBBING:
                raise RuleError(DoudizhuReason.CANNOT_ROB,
                                "nobody has called the landlord yet: call or pass")
            return BidEntry(seat, ROB_KIND, None, by_referee)
        raise RuleError(Reason.INVALID_ACTION, f"{shown(kind)} is not a bid")

    def with_entry(self, entry: BidEntry) -> Auction:
        """The auction with one more entry (already judged)."""
        return Auction(self.style, self.first, (*self.entries, entry))


def _no_value(kind: str, value: str | None) -> None:
    if value is not None:
        raise RuleError(Reason.INVALID_ACTION, f"a {kind} takes no value")


def _points(value: str | None) -> int:
    text = (value or "").strip()
    if text not in {str(v) for v in BID_VALUES}:
        raise RuleError(DoudizhuReason.INVALID_BID,
                        f"a bid is 1, 2 or 3 points, not {shown(value)}")
    return int(text)


def new_auction(style: str, first: int) -> Auction:
    """An auction nobody has spoken in yet."""
    if style not in (POINTS, ROB):
        raise ValueError(f"unknown bidding {style!r}")
    return Auction(style, first)


__all__ = ["BID", "BID_KINDS", "BID_VALUES", "CALL", "PASS", "ROB_KIND", "Auction", "BidEntry",
           "Outcome", "Stage", "new_auction"]
