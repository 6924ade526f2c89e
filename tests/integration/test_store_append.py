"""The PostgreSQL recorder's append on a real server: what it stores reads back byte for byte,
its guards still refuse a stream that moved on, and its arrays go out typed in advance.

psycopg inspects a plain list on every call (the types of its elements) to choose the array
type, then writes it as text; the recorder's arrays carry their PostgreSQL type instead
(`service.core.store.ArrayParameter`, set up on every connection the pool opens) and are written
in binary, which is most of what an append cost the server's CPU in psycopg.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import OneCallPostgresRecorder, persistence_env
from fiftyk_referee.service.ops.config import parse_database_url

pytestmark = pytest.mark.postgres
ROOT = Path(__file__).resolve().parents[2]

# States and topics that text arrays must quote and escape: quotes, backslashes, braces,
# commas, spaces, NUL and every other byte, an empty state, non-ASCII text.
AWKWARD_STATES = [bytes(range(256)), b'{"a": "\\"}, NULL', b"", b"\x00\\x00", b"null"]
AWKWARD_TOPICS = ['mod:Event "quoted", {braced}', "mod:NULL", "模块:事件 \\ back", "", "x"]


@pytest.fixture
def recorder(fresh_postgres_db: str) -> Iterator[OneCallPostgresRecorder]:
    """The application's own recorder on a fresh database."""
    app = Referee(persistence_env(parse_database_url(fresh_postgres_db, Path()), pool_size=2))
    try:
        assert isinstance(app.recorder, OneCallPostgresRecorder)
        yield app.recorder
    finally:
        app.close()


def _events(stream: uuid.UUID, first: int = 1) -> list[StoredEvent]:
    return [StoredEvent(originator_id=stream, originator_version=first + i, topic=topic,
                        state=state)
            for i, (topic, state) in enumerate(zip(AWKWARD_TOPICS, AWKWARD_STATES,
                                                   strict=True))]


def test_appended_events_read_back_byte_for_byte(recorder: OneCallPostgresRecorder) -> None:
    stream, other = uuid.uuid4(), uuid.uuid4()
    positions = recorder.insert_events([*_events(stream), *_events(other, first=7)])
    assert positions is not None and len(positions) == 2 * len(AWKWARD_STATES)
    assert list(positions) == sorted(positions)
    for originator, first in ((stream, 1), (other, 7)):
        assert recorder.select_events(originator) == _events(originator, first)
    notifications = recorder.select_notifications(start=None, limit=100)
    assert [n.id for n in notifications] == list(positions)
    assert [n.state for n in notifications] == AWKWARD_STATES * 2


def test_a_guarded_append_is_refused_when_its_guard_moved_on(
    recorder: OneCallPostgresRecorder,
) -> None:
    table, hand = uuid.uuid4(), uuid.uuid4()
    recorder.insert_events(_events(table)[:2])  # the table at version 2
    recorder.insert_events(_events(hand)[:1], guards={table: 2})
    recorder.insert_events(_events(table, first=3)[:1])  # the table moves on to version 3
    with pytest.raises(IntegrityError):
        recorder.insert_events(_events(hand, first=2)[:1], guards={table: 2})
    recorder.insert_events(_events(hand, first=2)[:1], guards={table: 3})
    assert [e.originator_version for e in recorder.select_events(hand)] == [1, 2]
    with pytest.raises(IntegrityError):  # a version stored twice is still a conflict
        recorder.insert_events(_events(hand, first=2)[:1])


# A fresh process, as a server starts: its pool opens connections while the application is
# built, before any append; each of them must send the arrays typed.
FRESH_PROCESS_APPENDS = """
import sys, uuid
from pathlib import Path
from eventsourcing.persistence import StoredEvent
from psycopg.types.array import BaseListDumper
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.ops.config import parse_database_url
from fiftyk_referee.service.core.store import persistence_env

inspected = []
find = BaseListDumper._find_list_element

def counting(self, *args):
    inspected.append(1)
    return find(self, *args)

BaseListDumper._find_list_element = counting
app = Referee(persistence_env(parse_database_url(sys.argv[1], Path()), pool_size=2))
try:
    table = uuid.uuid4()
    app.recorder.insert_events([StoredEvent(table, 1, "t", b"{x}")])
    for _ in range(6):
        app.recorder.insert_events([StoredEvent(uuid.uuid4(), 1, "h", b"a, b")],
                                   guards={table: 1})
finally:
    app.close()
print(len(inspected))
"""


def test_the_append_does_not_inspect_its_arrays_to_type_them(fresh_postgres_db: str) -> None:
    done = subprocess.run([sys.executable, "-c", FRESH_PROCESS_APPENDS, fresh_postgres_db],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0"]  # lists psycopg inspected to choose their type
