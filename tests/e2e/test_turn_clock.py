"""Turn timeouts: the referee decides for a seat whose clock ran out, also after a restart."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from fiftyk_referee.domain.cards import parse_cards
from fiftyk_referee.domain.fiftyk.combinations import classify
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e.harness import LiveServer, seat_bots, server_config

TURN_TIMEOUT = 1
SWEEP_SECONDS = 0.05
WAIT_SECONDS = 10
POLL_SECONDS = 0.02
T = TypeVar("T")
RULES = Ruleset.from_spec("classic")


def _wait_for(find: Callable[[], T | None]) -> T:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        found = find()
        if found is not None:
            return found
        time.sleep(POLL_SECONDS)
    raise AssertionError(f"nothing turned up within {WAIT_SECONDS} s")


def _stamp(event: pb.Event) -> datetime:
    return event.timestamp.ToDatetime(tzinfo=UTC)


def _referee_event(audit: RefereeClient, hand_id: str, after_version: int
                   ) -> pb.Event | None:
    """The first action the referee took for a seat after `after_version`, if any."""
    for event in audit.hand_history(hand_id, after_version=after_version).events:
        if (event.fiftyk_cards_played.by_referee
                or event.fiftyk_passed.reason == pb.FIFTYK_PASS_REASON_TIMEOUT):
            return event
    return None


def test_an_expired_turn_is_decided_by_the_referee_also_after_a_restart(
        tmp_path: Path) -> None:
    config = server_config(tmp_path, turn_sweep_seconds=SWEEP_SECONDS)
    first = LiveServer(config)
    try:
        seated = seat_bots(first, "classic", 4, options={"turn_timeout": TURN_TIMEOUT})
        dealt = seated.platform.start_hand(seated.table_id).hand
        leader = dealt.turn_seat
        audit = first.audit()
        deal_event = audit.hand_history(dealt.hand_id).events[0]
        view = audit.hand_view(seated.table_id, dealt.hand_id)
        assert view.turn_deadline.ToDatetime(tzinfo=UTC) == (
            _stamp(deal_event) + timedelta(seconds=TURN_TIMEOUT))

        # The leader lets its clock run out: the referee leads its lowest single.
        lead = _wait_for(lambda: _referee_event(audit, dealt.hand_id, 1))
        played = lead.fiftyk_cards_played
        assert lead.name == "fiftyk.cards_played" and played.seat == leader
        lowest = min(classify(parse_cards([c]), RULES).rank for c in view.seats[leader].cards)
        assert classify(parse_cards(list(played.cards)), RULES).rank == lowest
        assert _stamp(lead) - _stamp(deal_event) >= timedelta(seconds=TURN_TIMEOUT)
        # The next seat follows: on timeout the referee passes for it.
        follow = _wait_for(lambda: _referee_event(audit, dealt.hand_id, lead.aggregate_version))
        assert follow.name == "fiftyk.passed"
        assert follow.fiftyk_passed == pb.FiftykPassed(seat=(leader + 1) % 4,
                                                       reason=pb.FIFTYK_PASS_REASON_TIMEOUT)
    finally:
        first.stop()
    stopped_at = datetime.now(UTC)

    # However long the stop took, the last stored action's turn ends after it (had the first
    # server still been running at that deadline, it would have decided it): wait it out.
    time.sleep(TURN_TIMEOUT)  # the turn expires while no server runs
    second = LiveServer(config)
    try:
        audit = second.audit()
        last = audit.hand_history(dealt.hand_id).events[-1]
        assert last.aggregate_version >= follow.aggregate_version
        after_restart = _wait_for(lambda: _referee_event(audit, dealt.hand_id,
                                                         last.aggregate_version))
        assert _stamp(after_restart) > stopped_at  # decided by the restarted server
        assert after_restart.aggregate_version == last.aggregate_version + 1
        trick = audit.hand_view(seated.table_id, dealt.hand_id).trick
        assert all(action.by_referee for action in trick)
    finally:
        second.stop()


def test_a_shengji_hand_runs_on_the_turn_clock_also_after_a_restart(tmp_path: Path) -> None:
    """Nobody acts: the clock closes the declaration windows, buries and plays, across a
    restart of the server (the clock finds the hand again from the tables' events)."""
    config = server_config(tmp_path, turn_sweep_seconds=SWEEP_SECONDS)
    first = LiveServer(config)
    try:
        platform = first.platform()
        table = platform.create_table("tractor", 4, options={"turn_timeout": TURN_TIMEOUT},
                                      game="shengji").table
        for seat in range(4):
            platform.join_table(table.table_id, f"idle-{seat}", seat)
        dealt = platform.start_hand(table.table_id).hand
        audit = first.audit()
        moved = _wait_for(lambda: audit.hand_view(table.table_id, dealt.hand_id).version
                          if audit.hand_view(table.table_id, dealt.hand_id).version
                          > dealt.version else None)
    finally:
        first.stop()
    second = LiveServer(config)
    try:
        audit = second.audit()
        later = _wait_for(lambda: audit.hand_view(table.table_id, dealt.hand_id).version
                          if audit.hand_view(table.table_id, dealt.hand_id).version
                          > moved + 1 else None)
        assert later > moved + 1  # the restarted server's clock went on acting
    finally:
        second.stop()
