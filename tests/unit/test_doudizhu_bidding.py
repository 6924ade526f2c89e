"""斗地主's bidding: points bids once around, and calling then robbing the landlord."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fiftyk_referee.domain.doudizhu.bidding import (
    BID,
    CALL,
    PASS,
    ROB_KIND,
    Auction,
    Outcome,
    Stage,
    new_auction,
)
from fiftyk_referee.domain.doudizhu.reasons import DoudizhuReason
from fiftyk_referee.domain.doudizhu.rulesets import POINTS, ROB
from fiftyk_referee.domain.errors import AnyReason, Reason, RuleError


def said(auction: Auction, *words: tuple[int, str, str | None]) -> Auction:
    """The auction after these words (seat, kind, value), each judged first."""
    for seat, kind, value in words:
        auction = auction.with_entry(auction.judge(seat, kind, value))
    return auction


def refusal(auction: Auction, seat: int, kind: str, value: str | None = None) -> AnyReason:
    with pytest.raises(RuleError) as refused:
        auction.judge(seat, kind, value)
    return refused.value.reason


# -- points --------------------------------------------------------------------------------


def test_points_bidding_goes_once_around_from_the_first_bidder_and_the_highest_bid_wins() -> None:
    auction = said(new_auction(POINTS, 1), (1, BID, "1"), (2, PASS, None))
    assert auction.to_act == 0 and auction.highest == 1 and auction.holder == 1
    assert auction.open_bids(0) == (2, 3) and auction.open_kinds(0) == (BID, PASS)
    auction = said(auction, (0, BID, "2"))
    assert auction.stage == Stage.DECIDED and auction.to_act is None
    assert auction.outcome() == Outcome(landlord=0, bid=2, robs=0)


def test_a_bid_of_three_ends_the_bidding_at_once() -> None:
    auction = said(new_auction(POINTS, 2), (2, BID, "3"))
    assert auction.is_over and auction.outcome() == Outcome(2, 3, 0)
    assert refusal(auction, 0, BID, "3") == DoudizhuReason.NOT_BIDDING


def test_a_pass_after_the_only_bid_leaves_the_landlord_to_the_bidder() -> None:
    auction = said(new_auction(POINTS, 0), (0, PASS, None), (1, PASS, None), (2, BID, "1"))
    assert auction.outcome() == Outcome(2, 1, 0)


def test_everybody_passing_points_is_a_redeal() -> None:
    auction = said(new_auction(POINTS, 0), (0, PASS, None), (1, PASS, None), (2, PASS, None))
    assert auction.stage == Stage.REDEAL and auction.outcome() == Outcome(None, 0, 0)
    assert auction.outcome() is not None and auction.to_act is None


def test_a_points_bid_must_be_above_the_highest_and_one_to_three() -> None:
    auction = said(new_auction(POINTS, 0), (0, BID, "2"))
    assert refusal(auction, 1, BID, "2") == DoudizhuReason.BID_TOO_LOW
    assert refusal(auction, 1, BID, "1") == DoudizhuReason.BID_TOO_LOW
    for bad in ("4", "0", "-1", "two", "", None, "2.5"):
        assert refusal(auction, 1, BID, bad) == DoudizhuReason.INVALID_BID, bad


def test_points_rooms_neither_call_nor_rob_and_only_the_seat_to_speak_speaks() -> None:
    auction = new_auction(POINTS, 0)
    assert refusal(auction, 0, CALL) == DoudizhuReason.WRONG_BIDDING
    assert refusal(auction, 0, ROB_KIND) == DoudizhuReason.WRONG_BIDDING
    assert refusal(auction, 1, BID, "1") == Reason.NOT_YOUR_TURN
    assert refusal(auction, 0, PASS, "1") == Reason.INVALID_ACTION
    assert auction.open_kinds(1) == () and auction.open_bids(1) == ()


# -- call and rob --------------------------------------------------------------------------


def test_a_call_nobody_robs_makes_the_caller_landlord_at_one() -> None:
    auction = said(new_auction(ROB, 0), (0, CALL, None))
    assert auction.stage == Stage.ROBBING and auction.to_act == 1
    assert auction.open_kinds(1) == (ROB_KIND, PASS)
    auction = said(auction, (1, PASS, None), (2, PASS, None))
    assert auction.outcome() == Outcome(0, 1, 0) and auction.outcome().factor == 1  # type: ignore[union-attr]


def test_each_rob_doubles_and_the_caller_may_rob_back_once() -> None:
    auction = said(new_auction(ROB, 0), (0, CALL, None), (1, ROB_KIND, None),
                   (2, ROB_KIND, None))
    assert auction.to_act == 0 and auction.holder == 2 and auction.robs == 2
    back = said(auction, (0, ROB_KIND, None))
    outcome = back.outcome()
    assert outcome == Outcome(0, 1, 3) and outcome is not None and outcome.factor == 8
    left = said(auction, (0, PASS, None))
    assert left.outcome() == Outcome(2, 1, 2)


def test_the_caller_has_no_rob_back_when_nobody_robbed() -> None:
    auction = said(new_auction(ROB, 1), (1, PASS, None), (2, CALL, None), (0, PASS, None))
    assert auction.to_act == 1  # the seat that passed the call may still rob
    auction = said(auction, (1, PASS, None))
    assert auction.outcome() == Outcome(2, 1, 0)


def test_a_single_rob_gives_the_robber_the_landlord_unless_robbed_back() -> None:
    auction = said(new_auction(ROB, 0), (0, CALL, None), (1, PASS, None), (2, ROB_KIND, None))
    assert auction.to_act == 0
    assert said(auction, (0, PASS, None)).outcome() == Outcome(2, 1, 1)


def test_everybody_passing_the_call_is_a_redeal() -> None:
    auction = said(new_auction(ROB, 2), (2, PASS, None), (0, PASS, None), (1, PASS, None))
    assert auction.stage == Stage.REDEAL and auction.outcome() == Outcome(None, 0, 0)


def test_a_rob_room_refuses_points_a_second_call_and_an_early_rob() -> None:
    auction = new_auction(ROB, 0)
    assert refusal(auction, 0, BID, "1") == DoudizhuReason.WRONG_BIDDING
    assert refusal(auction, 0, ROB_KIND) == DoudizhuReason.CANNOT_ROB
    assert refusal(auction, 0, CALL, "1") == Reason.INVALID_ACTION
    called = said(auction, (0, CALL, None))
    assert refusal(called, 1, CALL) == DoudizhuReason.ALREADY_CALLED
    assert refusal(called, 2, ROB_KIND) == Reason.NOT_YOUR_TURN
    done = said(called, (1, PASS, None), (2, PASS, None))
    assert refusal(done, 0, ROB_KIND) == DoudizhuReason.NOT_BIDDING


# -- properties ------------------------------------------------------------------------------


@given(style=st.sampled_from((POINTS, ROB)), first=st.integers(0, 2),
       choices=st.lists(st.integers(0, 99), max_size=12))
def test_any_auction_ends_within_its_bounds_with_the_last_caller_or_highest_bidder(
        style: str, first: int, choices: list[int]) -> None:
    auction = new_auction(style, first)
    for choice in choices:
        seat = auction.to_act
        if seat is None:
            break
        assert all(auction.open_kinds(other) == () for other in range(3) if other != seat)
        kinds = auction.open_kinds(seat)
        kind = kinds[choice % len(kinds)]
        values = auction.open_bids(seat)
        value = str(values[choice % len(values)]) if kind == BID else None
        auction = auction.with_entry(auction.judge(seat, kind, value))
    entries = auction.entries
    assert len(entries) <= (3 if style == POINTS else 6)
    outcome = auction.outcome()
    assert (outcome is None) == (auction.to_act is not None)
    if outcome is None:
        return
    if outcome.landlord is None:
        assert [e.kind for e in entries] == [PASS] * 3
        return
    taking = [e for e in entries if e.kind != PASS]
    if style == POINTS:
        assert outcome.bid == max(e.value or 0 for e in taking) and outcome.robs == 0
        assert outcome.landlord == taking[-1].seat
    else:
        assert outcome.bid == 1 and outcome.robs == sum(e.kind == ROB_KIND for e in entries)
        assert outcome.landlord == taking[-1].seat
        assert outcome.factor == 1 << outcome.robs <= 8
