"""Active tables: hands in progress with recent activity, tracked from feed events."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from uuid import UUID, uuid4

import pytest
from eventsourcing.utils import get_topic

from fiftyk_referee.domain.events import stored_event
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.public_events import FeedEvent, feed_event
from fiftyk_referee.service.platform.activity import ActiveTables

WINDOW = 60.0
TABLE_FIELDS: dict[str, dict[str, Any]] = {
    "Opened": {"ruleset": {"preset": "classic", "options": {}}, "players": 4,
               "allow_preset_deck": False, "name": "", "game": "fiftyk", "spectators": None,
               "entropy_window": None, "commit_reveal": False,
               "originator_topic": get_topic(Table)},
    "SeatTaken": {"seat": 0, "player_id": "p0", "public_key": None},
    "HandStarted": {"number": 1, "dealer": 3, "contributions": None, "withheld": None},
    "HandRecorded": {"totals": {"team:0": "10", "team:1": "-10"}, "carry": {}},
}
HAND_FIELDS: dict[str, dict[str, Any]] = {
    "Dealt": {"table_id": "t", "number": 1, "ruleset": {"preset": "classic", "options": {}},
              "players": 4, "dealer": 3, "deck": [], "first_leader": 0, "commitment": "",
              "seed": None, "seat_players": None, "contributions": None, "draw": None,
              "originator_topic": get_topic(Hand)},
    "Passed": {"seat": 1, "why": "player"},
    "CardsPlayed": {"seat": 0, "cards": ["3S"], "type": "single", "rank": 0, "rung": 0,
                    "points": 0, "timeout": False},
    "HandEnded": {"result": {}, "seed": None},
}
_IDS: dict[str, UUID] = {}


def _id(name: str) -> UUID:
    return _IDS.setdefault(name, uuid4())


class Clock:
    """A settable clock for the tracker."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _feed(aggregate: type, event: str, aggregate_id: str, fields: dict[str, Any]) -> FeedEvent:
    stored = stored_event(aggregate, event)(originator_id=_id(aggregate_id), originator_version=1,
                                            timestamp=datetime.now(UTC), **fields)
    found = feed_event(stored)
    assert found is not None
    return found


def table_event(name: str, table_id: str, hand_id: str = "") -> FeedEvent:
    fields = dict(TABLE_FIELDS[name])
    if hand_id:
        fields["hand_id"] = str(_id(hand_id))
    return _feed(Table, name, table_id, fields)


def hand_event(name: str, hand_id: str) -> FeedEvent:
    return _feed(Hand, name, hand_id, HAND_FIELDS[name])


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
