"""The domain's aggregate base: declared events, replay, and the stored form of the library's.

`domain/aggregate.py` promises the declarations and the stored events of the `eventsourcing`
library's aggregates without importing it. Each test here pins one part of that promise; the
last ones compare an aggregate declared on each base, event by event, through the library's
own mapper.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

import pytest
from eventsourcing import domain as library
from eventsourcing.application import Application
from eventsourcing.persistence import DatetimeAsISO, JSONTranscoder, Mapper, UUIDAsHex

from fiftyk_referee.domain.aggregate import (
    Aggregate,
    AggregateEvent,
    EventSequenceError,
    event,
    topic_of,
)
from fiftyk_referee.service.core.aggregates import AggregateSnapshot

NAMESPACE = uuid5(NAMESPACE_URL, "https://fiftyk-referee/test-aggregate")


class Counter(Aggregate):
    """A tally: created with a name, counted up, optionally reset."""

    @staticmethod
    def create_id(name: str) -> UUID:
        """Counters are identified by name."""
        return uuid5(NAMESPACE, name)

    @event("Opened")
    def __init__(self, name: str, start: int = 0) -> None:
        self.name = name
        self.total = start
        self.notes: list[str] = []

    @event("Counted")
    def count(self, by: int, note: str = "") -> None:
        self.total += by
        if note:
            self.notes.append(note)

    class Reset(AggregateEvent):
        """Back to zero."""

        why: str
        by_whom: str | None = None

        def apply(self, aggregate: Any) -> None:
            aggregate.total = 0


class LibraryCounter(library.Aggregate):
    """The same tally on the library's base."""

    @staticmethod
    def create_id(name: str) -> UUID:
        """Counters are identified by name."""
        return uuid5(NAMESPACE, name)

    @library.event("Opened")
    def __init__(self, name: str, start: int = 0) -> None:
        self.name = name
        self.total = start
        self.notes: list[str] = []

    @library.event("Counted")
    def count(self, by: int, note: str = "") -> None:
        self.total += by
        if note:
            self.notes.append(note)

    class Reset(library.Aggregate.Event):
        """Back to zero."""

        why: str
        by_whom: str | None = None

        def apply(self, aggregate: Any) -> None:
            aggregate.total = 0


def _mapper() -> Mapper[UUID]:
    transcoder = JSONTranscoder()
    transcoder.register(UUIDAsHex())
    transcoder.register(DatetimeAsISO())
    return Mapper(transcoder=transcoder)


def _played(cls: Any) -> Any:
    counter = cls(name="c", start=2)
    counter.count(3)
    counter.count(by=4, note="four")
    counter.trigger_event(cls.Reset, why="new round")
    counter.count(1, "one")
    return counter


def test_declared_events_are_nested_classes_with_the_aggregate_in_their_topic() -> None:
    assert topic_of(Counter.Opened) == f"{__name__}:Counter.Opened"  # type: ignore[attr-defined]
    assert topic_of(Counter.Counted) == f"{__name__}:Counter.Counted"  # type: ignore[attr-defined]
    assert topic_of(Counter.Reset) == f"{__name__}:Counter.Reset"


def test_commands_record_events_that_replay_to_the_same_state() -> None:
    counter = _played(Counter)
    assert (counter.total, counter.notes, counter.version) == (1, ["four", "one"], 5)
    assert counter.id == uuid5(NAMESPACE, "c")
    events = counter.collect_events()
    assert [type(e).__name__ for e in events] == [
        "Opened", "Counted", "Counted", "Reset", "Counted"]
    assert counter.collect_events() == []
    rebuilt: Any = None
    for recorded in events:
        rebuilt = recorded.mutate(rebuilt)
    assert rebuilt == counter
    assert rebuilt.modified_on == events[-1].timestamp
    assert rebuilt.created_on == events[0].timestamp


def test_an_event_out_of_sequence_or_of_another_aggregate_is_refused() -> None:
    events = _played(Counter).collect_events()
    other = Counter(name="other")
    with pytest.raises(EventSequenceError):
        events[1].mutate(other)
    rebuilt = events[0].mutate(None)
    with pytest.raises(EventSequenceError):
        events[2].mutate(rebuilt)
    with pytest.raises(EventSequenceError):
        events[0].mutate(rebuilt)


def test_bad_arguments_are_refused_before_anything_is_recorded() -> None:
    counter = Counter(name="c")
    with pytest.raises(TypeError):
        counter.count()
    with pytest.raises(TypeError):
        counter.count(1, by=2)
    with pytest.raises(TypeError):
        counter.count(1, colour="red")
    with pytest.raises(TypeError):
        counter.trigger_event(Counter.Reset)
    assert counter.version == 1 and len(counter.pending_events) == 1


def test_events_are_frozen() -> None:
    recorded = _played(Counter).collect_events()[1]
    with pytest.raises(AttributeError):
        recorded.by = 9


def test_an_event_stored_before_a_parameter_existed_takes_the_default() -> None:
    opened, counted = _played(Counter).collect_events()[:2]
    older_opened = dict(vars(opened))
    del older_opened["start"]
    older_counted = dict(vars(counted))
    del older_counted["note"]
    rebuilt: Any = None
    for state, cls in [(older_opened, Counter.Opened),  # type: ignore[attr-defined]
                       (older_counted, Counter.Counted)]:  # type: ignore[attr-defined]
        loaded = object.__new__(cls)
        loaded.__dict__.update(state)
        rebuilt = loaded.mutate(rebuilt)
    assert (rebuilt.total, rebuilt.notes) == (3, [])


def test_stored_events_have_the_library_aggregates_shape_and_values() -> None:
    ours = _played(Counter).collect_events()
    theirs = _played(LibraryCounter).collect_events()
    mapper = _mapper()
    for mine, library_event in zip(ours, theirs, strict=True):
        stored, expected = mapper.to_stored_event(mine), mapper.to_stored_event(library_event)
        assert stored.topic.replace("Counter", "LibraryCounter") == expected.topic
        assert (stored.originator_id, stored.originator_version) == (
            expected.originator_id, expected.originator_version)
        state, wanted = json.loads(stored.state), json.loads(expected.state)
        assert list(state) == list(wanted)  # the same fields in the same order
        for drop in (state, wanted):
            drop.pop("timestamp")
        if "originator_topic" in state:
            assert state.pop("originator_topic") == topic_of(Counter)
            wanted.pop("originator_topic")
        assert state == wanted


class Tallies(Application[UUID]):
    """An application of the library holding counters, snapshots taken by ours."""

    snapshot_class = AggregateSnapshot


def test_the_library_stores_loads_and_snapshots_our_aggregates() -> None:
    app = Tallies(env={"IS_SNAPSHOTTING_ENABLED": "y"})
    counter = _played(Counter)
    app.save(counter)
    loaded = app.repository.get(counter.id)
    assert loaded == counter
    app.take_snapshot(counter.id)
    assert app.snapshots is not None
    snapshot = next(iter(app.snapshots.get(counter.id)))
    assert not {"_id", "_version", "_pending_events"} & set(snapshot.state)
    counter.count(5)
    app.save(counter)
    assert app.repository.get(counter.id) == counter
    assert app.repository.get(counter.id).total == 6
