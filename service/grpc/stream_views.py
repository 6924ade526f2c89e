"""The aggregates one watch stream shows views of, brought up to date by the stream's own
events instead of being rebuilt from the store for every event.

A `WatchTable` stream with `include_views` attaches, to every event, the caller's view of
the event's table or hand as it stood right after that event. Rebuilding the aggregate
from the store per event costs a read and a replay of the whole hand each time (quadratic
in the hand's length, per stream). Instead each stream keeps its own private copy of every
aggregate it has shown and applies the next event to it; only the first event of an
aggregate met mid-history (a resumed stream) loads it from the store, once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fiftyk_referee.service.core.public_events import FeedEvent

# Loads an aggregate as it stood right after a version: (aggregate id, version) -> aggregate.
Loader = Callable[[str, int], Awaitable[Any]]


class StreamAggregates:
    """The tables and hands one stream has shown, each at the version last shown."""

    def __init__(self, load_table: Loader, load_hand: Loader) -> None:
        self._load_table = load_table
        self._load_hand = load_hand
        self._known: dict[str, Any] = {}

    async def at(self, event: FeedEvent, *, is_table_event: bool) -> Any:
        """The event's aggregate right after the event (this stream's own copy)."""
        key = event.aggregate_id
        known = self._known.get(key)
        wanted = event.aggregate_version
        if known is not None and known.version == wanted - 1:
            known = event.stored.mutate(known)
        elif known is None or known.version != wanted:
            load = self._load_table if is_table_event else self._load_hand
            known = await load(key, wanted)
        self._known[key] = known
        return known

    def forget(self, aggregate_id: str) -> None:
        """Drop an aggregate the stream will not show again (a finished hand)."""
        self._known.pop(aggregate_id, None)


__all__ = ["StreamAggregates"]
