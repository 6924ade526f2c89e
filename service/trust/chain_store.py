"""The chained event store: every stored event is sealed with its stream's hash chain.

The chain itself (what is hashed, where the link sits in the stored JSON) is
`domain/chain.py`; this module puts it under the `eventsourcing` library's event store, so
the use cases, the runner and the games never see it:

- `ChainedEventStore.put` seals each event before the recorder appends it: it needs the
  hash of the stream's previous event, which it takes from the events of the same append,
  else from a bounded in-process memory of stream heads (filled by every append and every
  read that reaches a stream's last event, keyed by version so a stale entry is never used),
  else from one read of that event. The memory is updated only after the append commits, so
  an append lost to a concurrent one (`IntegrityError`) never leaves a wrong head behind.
- Links between streams: an event class may name another stream whose head it records
  (`links`, e.g. a table's `HandRecorded` names the hand whose head it chains into the
  table's stream). Those streams are sealed first, and the head is written into the
  event's field before it is encoded, so the table's chain commits to the whole hand.
- `ChainedMapper.to_domain_event` takes the link off before the library decodes an event,
  so events stored before the chain existed and sealed ones load the same way.

Snapshots are not chained: they are derived state, rebuilt from the chained events.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from uuid import UUID

from eventsourcing.domain import DomainEventProtocol
from eventsourcing.persistence import (
    AggregateRecorder,
    EventStore,
    Mapper,
    Notification,
    Recording,
    StoredEvent,
)

from fiftyk_referee.domain.chain import GENESIS, ChainedEvent, anchor_of, event_hash, seal, unseal

DEFAULT_HEADS_REMEMBERED = 10_000

# An event class -> (the field naming the linked stream, the field receiving its head).
Links = Mapping[type[Any], tuple[str, str]]


def stored_link(stored: StoredEvent) -> str:
    """The hash a stored event passes to its successor (its own, or its anchor if unchained)."""
    link, state = unseal(stored.state)
    if link is not None:
        return link.hash
    event = ChainedEvent(stored.originator_version, stored.topic, state, None)
    return anchor_of(str(UUID(str(stored.originator_id))), event)


def chained_event(stored: StoredEvent) -> ChainedEvent:
    """A stored event as the chain check reads it."""
    link, state = unseal(stored.state)
    return ChainedEvent(stored.originator_version, stored.topic, state, link)


class ChainedMapper(Mapper[UUID]):
    """The library's mapper, taking a stored event's chain link off before decoding it."""

    def to_domain_event(self, stored_event: StoredEvent) -> DomainEventProtocol[UUID]:
        """Decode a stored event, sealed or not."""
        link, state = unseal(stored_event.state)
        if link is not None:
            stored_event = StoredEvent(
                originator_id=stored_event.originator_id,
                originator_version=stored_event.originator_version,
                topic=stored_event.topic, state=state)
        return super().to_domain_event(stored_event)


class ChainedEventStore(EventStore[UUID]):
    """The library's event store, sealing every appended event into its stream's chain."""

    def __init__(self, mapper: Mapper[UUID], recorder: AggregateRecorder, *,
                 links: Links | None = None,
                 heads_remembered: int = DEFAULT_HEADS_REMEMBERED) -> None:
        super().__init__(mapper, recorder)
        self._links = dict(links or {})
        self._heads: OrderedDict[UUID, tuple[int, str]] = OrderedDict()
        self._heads_remembered = heads_remembered
        self._lock = threading.Lock()

    # -- the heads memory ---------------------------------------------------------------------

    def _remember(self, stream: UUID, version: int, head: str) -> None:
        with self._lock:
            known = self._heads.get(stream)
            if known is not None and known[0] > version:
                return
            self._heads[stream] = (version, head)
            self._heads.move_to_end(stream)
            while len(self._heads) > self._heads_remembered:
                self._heads.popitem(last=False)

    def head_at(self, stream: UUID, version: int) -> str:
        """The hash event `version` of a stream passes on (GENESIS for version 0)."""
        if version == 0:
            return GENESIS
        with self._lock:
            known = self._heads.get(stream)
        if known is not None and known[0] == version:
            return known[1]
        found = self.recorder.select_events(stream, gt=version - 1, lte=version)
        if not found:
            raise LookupError(f"stream {stream} has no event {version} to chain onto")
        return stored_link(found[0])

    def last_head(self, stream: UUID) -> tuple[int, str] | None:
        """(version, hash) of a stream's last stored event; None for an empty stream."""
        found = self.recorder.select_events(stream, desc=True, limit=1)
        if not found:
            return None
        return found[0].originator_version, stored_link(found[0])

    # -- appending ----------------------------------------------------------------------------

    def put(self, domain_events: Sequence[DomainEventProtocol[UUID]],
            **kwargs: Any) -> list[Recording[UUID]]:
        """Seal and store the events; remember the new heads once the append committed."""
        events = list(domain_events)
        sealed, heads = self._seal(events)
        notification_ids = self.recorder.insert_events(sealed, **kwargs)
        for stream, (version, head) in heads.items():
            self._remember(stream, version, head)
        if not notification_ids:
            return []
        return [
            Recording(event, Notification(
                originator_id=stored.originator_id,
                originator_version=stored.originator_version,
                topic=stored.topic, state=stored.state, id=position))
            for event, stored, position in zip(events, sealed, notification_ids, strict=True)
        ]

    def _seal(self, events: list[DomainEventProtocol[UUID]]
              ) -> tuple[list[StoredEvent], dict[UUID, tuple[int, str]]]:
        by_stream: dict[UUID, list[int]] = {}
        for index, event in enumerate(events):
            by_stream.setdefault(event.originator_id, []).append(index)
        linking = {event.originator_id for event in events if type(event) in self._links}
        # Streams that record another stream's head are sealed after every other stream.
        order = [s for s in by_stream if s not in linking] + [s for s in by_stream
                                                               if s in linking]
        sealed: list[StoredEvent | None] = [None] * len(events)
        heads: dict[UUID, tuple[int, str]] = {}
        for stream in order:
            for index in by_stream[stream]:
                event = events[index]
                self._fill_link(event, heads)
                stored = self.mapper.to_stored_event(event)
                version = stored.originator_version
                known = heads.get(stream)
                prev = known[1] if known is not None and known[0] == version - 1 else (
                    self.head_at(stream, version - 1))
                own = event_hash(prev, str(stream), version, stored.topic, stored.state)
                sealed[index] = StoredEvent(originator_id=stored.originator_id,
                                            originator_version=version, topic=stored.topic,
                                            state=seal(prev, own, stored.state))
                heads[stream] = (version, own)
        return [s for s in sealed if s is not None], heads

    def _fill_link(self, event: DomainEventProtocol[UUID],
                   heads: Mapping[UUID, tuple[int, str]]) -> None:
        """Write the linked stream's head into an event that records one."""
        fields = self._links.get(type(event))
        if fields is None:
            return
        source, target = fields
        linked = UUID(str(getattr(event, source)))
        head = heads.get(linked) or self.last_head(linked)
        # Domain events are frozen; this one is not stored yet, and only its record changes.
        object.__setattr__(event, target, head[1] if head is not None else None)

    # -- reading ------------------------------------------------------------------------------

    def get(self, originator_id: UUID, *, gt: int | None = None, lte: int | None = None,
            desc: bool = False, limit: int | None = None
            ) -> Iterator[DomainEventProtocol[UUID]]:
        """A stream's events, remembering the hash of the latest one read (the next append
        after a load chains onto it without another read)."""
        stored = self.recorder.select_events(originator_id, gt=gt, lte=lte, desc=desc,
                                             limit=limit)
        if stored:
            last = stored[0] if desc else stored[-1]
            self._remember(originator_id, last.originator_version, stored_link(last))
        return map(self.mapper.to_domain_event, stored)

    def stored(self, stream: UUID) -> list[StoredEvent]:
        """A stream's stored events, sealed as they are stored (evidence and audits)."""
        return list(self.recorder.select_events(stream))


__all__ = ["ChainedEventStore", "ChainedMapper", "Links", "chained_event", "stored_link"]
