"""Active tables: the tables with a hand being played, as the global feed shows them.

A table is active while it has a hand in progress — between the table's
`table.hand_started` and its `table.hand_recorded` (written in the same transaction as the
hand's last event, whatever the game) — that had an event within the last
`ACTIVE_WINDOW_SECONDS`. A hand nobody has touched for that long (players gone, no turn
clock) no longer counts. The tracker follows the feed hub, which every server process runs
over the whole shared store, so every replica reports the same, global count (dashboards
take the `max` over replicas, not the sum). A process counts hands that were already in
progress when it started from their next event on.

Cost: O(1) per feed event, memory bounded by the hands active within the window (a table
plays one hand at a time, so hands in progress and tables with a hand in progress are the
same count).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from fiftyk_referee.domain.observer import SPECTATOR
from fiftyk_referee.domain.table_events import TABLE_EVENTS, HandRecorded, HandStarted
from fiftyk_referee.service.core.public_events import FeedEvent

ACTIVE_WINDOW_SECONDS = 15 * 60.0


class ActiveTables:
    """Counts tables with a hand in progress and recent activity; fed batches of events."""

    def __init__(self, window_seconds: float = ACTIVE_WINDOW_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if window_seconds <= 0:
            raise ValueError("the activity window must be positive")
        self._window = window_seconds
        self._clock = clock
        self._last_seen: OrderedDict[str, float] = OrderedDict()  # hand id -> last event
        self._lock = threading.Lock()

    def observe(self, events: Iterable[FeedEvent]) -> None:
        """Take a batch of feed events (a `FeedHub` listener)."""
        with self._lock:
            now = self._clock()
            for event in events:
                hand_id = self._hand_in_progress(event)
                if hand_id is None:
                    continue
                if event.name == HandRecorded.NAME:
                    self._last_seen.pop(hand_id, None)
                else:
                    self._last_seen[hand_id] = now
                    self._last_seen.move_to_end(hand_id)
            self._expire(now)

    def count(self) -> int:
        """The number of active tables now."""
        with self._lock:
            self._expire(self._clock())
            return len(self._last_seen)

    @staticmethod
    def _hand_in_progress(event: FeedEvent) -> str | None:
        """The hand an event is about, if it starts, continues or ends a hand."""
        if event.name in (HandStarted.NAME, HandRecorded.NAME):
            public = event.public(SPECTATOR)
            return public.hand_id if isinstance(public, HandStarted | HandRecorded) else None
        if TABLE_EVENTS.kind_named(event.name) is None:  # not a table's: a hand's own event
            return event.aggregate_id
        return None

    def _expire(self, now: float) -> None:
        cutoff = now - self._window
        while self._last_seen:
            hand_id, seen = next(iter(self._last_seen.items()))
            if seen >= cutoff:
                return
            del self._last_seen[hand_id]


__all__ = ["ACTIVE_WINDOW_SECONDS", "ActiveTables"]
