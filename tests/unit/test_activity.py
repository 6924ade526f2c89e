"""Active tables: hands in progress with recent activity, tracked from feed events."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from fiftyk_referee.service.activity import ActiveTables
from fiftyk_referee.service.application import FeedEvent

WINDOW = 60.0
TABLE_TOPIC = "fiftyk_referee.domain.table:Table"
HAND_TOPIC = "fiftyk_referee.domain.fiftyk.hand:Hand"


class Clock:
    """A settable clock for the tracker."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def table_event(name: str, table_id: str, **payload: Any) -> FeedEvent:
    return FeedEvent(0, table_id, 1, f"{TABLE_TOPIC}.{name}", name, datetime.now(UTC), payload)


def hand_event(name: str, hand_id: str) -> FeedEvent:
    return FeedEvent(0, hand_id, 1, f"{HAND_TOPIC}.{name}", name, datetime.now(UTC), {})


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def tracker(clock: Clock) -> ActiveTables:
    return ActiveTables(WINDOW, clock)


def test_a_table_is_active_from_hand_started_until_the_hand_ends(tracker: ActiveTables) -> None:
    tracker.observe([table_event("Opened", "t1"), table_event("SeatTaken", "t1")])
    assert tracker.count() == 0
    tracker.observe([table_event("HandStarted", "t1", hand_id="h1"), hand_event("Dealt", "h1")])
    tracker.observe([table_event("HandStarted", "t2", hand_id="h2")])
    assert tracker.count() == 2
    tracker.observe([hand_event("CardsPlayed", "h1"), hand_event("HandEnded", "h1"),
                     table_event("HandRecorded", "t1", hand_id="h1")])
    assert tracker.count() == 1


def test_the_table_event_alone_also_ends_a_hand(tracker: ActiveTables) -> None:
    tracker.observe([table_event("HandStarted", "t1", hand_id="h1")])
    tracker.observe([table_event("HandRecorded", "t1", hand_id="h1")])
    assert tracker.count() == 0


def test_a_hand_started_before_the_process_counts_from_its_next_event(
    tracker: ActiveTables,
) -> None:
    tracker.observe([hand_event("Passed", "h-old")])
    assert tracker.count() == 1


def test_a_hand_without_events_for_a_whole_window_stops_counting(
    tracker: ActiveTables, clock: Clock,
) -> None:
    tracker.observe([table_event("HandStarted", "t1", hand_id="h1")])
    clock.now += WINDOW / 2
    tracker.observe([table_event("HandStarted", "t2", hand_id="h2")])
    clock.now += WINDOW / 2 + 1
    assert tracker.count() == 1
    tracker.observe([hand_event("CardsPlayed", "h2")])
    clock.now += WINDOW - 1
    assert tracker.count() == 1
    clock.now += 2
    assert tracker.count() == 0


def test_the_window_must_be_positive(clock: Clock) -> None:
    with pytest.raises(ValueError):
        ActiveTables(0, clock)
