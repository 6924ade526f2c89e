"""The ledger: an append-only Merkle log of finished hands, with signed checkpoints.

Leaves. A hand joins the log when its table records it: the table's `HandRecorded` event
carries the hand's chain head (`hand_head`, written by the chained event store). The log's
leaves are those events in the order of the global feed (positions are handed out in commit
order, gapless), each leaf's data being::

    "fiftyk-leaf/1\\n" HAND_ID "\\n" HAND_HEAD

hashed as an RFC 6962 leaf (`domain/merkle.py`). Hands recorded before the chain existed
carry no head and are not in the log. Every process rebuilds the same log from the feed, so
replicas agree on it without coordinating.

Checkpoints. A checkpoint is `{"format": "fiftyk-checkpoint/1", "size": N, "root": HEX,
"time": ISO}` signed by the referee (`service/trust/signing.py`): a promise that the first N
leaves hash to that root. A later checkpoint must extend every earlier one (a consistency
proof shows it): a log that was rolled back or rewritten cannot.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from eventsourcing.persistence import ApplicationRecorder, Mapper, Notification
from eventsourcing.utils import get_topic

from fiftyk_referee.domain.aggregate import Aggregate, event
from fiftyk_referee.domain.merkle import MerkleLog, leaf_hash
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.trust.signing import Signer

LEAF_FORMAT = "fiftyk-leaf/1"
CHECKPOINT_FORMAT = "fiftyk-checkpoint/1"
PAGE_SIZE = 1_000


def leaf_data(hand_id: str, hand_head: str) -> bytes:
    """A finished hand's leaf data."""
    return f"{LEAF_FORMAT}\n{hand_id}\n{hand_head}".encode()


@dataclass(frozen=True)
class Recorded:
    """One leaf's source: a table's record of a finished hand and the head it chained in."""

    table_id: str
    hand_id: str
    hand_head: str
    table_version: int  # the record's version in the table's stream


@dataclass(frozen=True)
class Inclusion:
    """Where a hand sits in the log, and the proof against the log's current root."""

    index: int
    leaf_hash: str
    size: int
    root: str
    proof: list[str]


class HandLog:
    """The log of finished hands, read incrementally from the store's feed."""

    def __init__(self, recorder: ApplicationRecorder, mapper: Mapper[UUID], signer: Signer,
                 now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._recorder = recorder
        self._mapper = mapper
        self._signer = signer
        self._now = now
        self._topic = get_topic(Table.HandRecorded)
        self._lock = threading.Lock()
        self._log = MerkleLog()
        self._records: list[Recorded] = []
        self._index: dict[str, int] = {}
        self._position = 0
        self._last: tuple[int, str, int] | None = None  # the last record read: position, id
        # The latest checkpoint signed here, with the log and size it is of.
        self._published: tuple[MerkleLog, int, dict[str, Any]] | None = None

    def _reset(self) -> None:
        self._log, self._records, self._index, self._position = MerkleLog(), [], {}, 0
        self._last = None

    def _tail_vanished(self) -> bool:
        """Whether the last record read is gone from the store (the log was rolled back;
        SQLite may even have handed its position to another event since)."""
        if self._last is None:
            return False
        found = self._recorder.select_notifications(
            start=self._last[0], limit=1, topics=[self._topic])
        return not found or _key(found[0]) != self._last

    def refresh(self) -> int:
        """Read the hands recorded since the last refresh; the log's size.

        A log whose last record has disappeared from the store is read again from the
        start, so what it serves is what the store holds (the audit compares that with the
        checkpoints signed before).
        """
        with self._lock:
            if self._tail_vanished():
                self._reset()
            while True:
                page = self._recorder.select_notifications(
                    start=self._position or None, limit=PAGE_SIZE, topics=[self._topic],
                    inclusive_of_start=False)
                for notification in page:
                    event: Any = self._mapper.to_domain_event(notification)
                    head = getattr(event, "hand_head", None)
                    if head and event.hand_id not in self._index:
                        self._index[event.hand_id] = len(self._log)
                        self._log.append(leaf_hash(leaf_data(event.hand_id, head)))
                        self._records.append(Recorded(str(event.originator_id),
                                                      event.hand_id, head,
                                                      event.originator_version))
                    self._position = notification.id
                    self._last = _key(notification)
                if len(page) < PAGE_SIZE:
                    return len(self._log)

    @property
    def size(self) -> int:
        """Leaves read so far."""
        return len(self._log)

    def records(self) -> list[Recorded]:
        """A copy of the leaves' sources read so far."""
        with self._lock:
            return list(self._records)

    def recorded(self, hand_id: str) -> Recorded | None:
        """The source of the hand's leaf, as read (None: not in the log read so far)."""
        with self._lock:
            index = self._index.get(hand_id)
            return None if index is None else self._records[index]

    @property
    def log(self) -> MerkleLog:
        """The Merkle log of the leaves read so far (append-only: safe to read up to a size
        taken from `view`, while another thread appends)."""
        return self._log

    def view(self) -> tuple[MerkleLog, int]:
        """The log and its size as one snapshot: every node of a tree of that size is there,
        however many leaves a concurrent refresh appends (or a reset starts over with)."""
        with self._lock:
            return self._log, len(self._log)

    def inclusion(self, hand_id: str) -> Inclusion | None:
        """The hand's place and inclusion proof (None: not in the log)."""
        self.refresh()
        with self._lock:
            index = self._index.get(hand_id)
            log, size = self._log, len(self._log)
        if index is None:
            return None
        return Inclusion(index=index, leaf_hash=log.leaf(index).hex(), size=size,
                         root=log.root(size).hex(),
                         proof=[p.hex() for p in log.inclusion_proof(index, size)])

    def checkpoint(self, size: int | None = None, log: MerkleLog | None = None
                   ) -> dict[str, Any]:
        """A signed checkpoint of the first `size` leaves (all read so far by default)."""
        log = self._log if log is None else log
        size = len(log) if size is None else size
        return self._signer.sign({
            "format": CHECKPOINT_FORMAT, "size": size, "root": log.root(size).hex(),
            "time": self._now().isoformat(),
        })

    def published(self, *, fresh: bool = True) -> dict[str, Any]:
        """The latest checkpoint, as published (GetCheckpoint, WatchTable, GetScores): of
        every leaf in the store now, signed once per size (the log is append-only, so a
        size asked again is answered with the checkpoint signed then). `fresh=False`: the
        last one signed here, without reading the store, when there is one."""
        with self._lock:
            cached = self._published
        if not fresh and cached is not None and cached[0] is self._log:
            return cached[2]
        self.refresh()
        with self._lock:
            log, size = self._log, len(self._log)
            cached = self._published
        if cached is not None and cached[0] is log and cached[1] == size:
            return cached[2]
        made = self.checkpoint(size, log)
        with self._lock:
            self._published = (log, size, made)
        return made

    def index_of(self, hand_id: str) -> int | None:
        """The hand's leaf index in the log read so far (None: not in it)."""
        with self._lock:
            return self._index.get(hand_id)

    def consistency(self, old_size: int, size: int | None = None) -> list[str]:
        """The proof that the first `old_size` leaves are a prefix of the first `size`."""
        return [p.hex() for p in self._log.consistency_proof(old_size, size)]


def _key(notification: Notification) -> tuple[int, str, int]:
    return (notification.id, str(UUID(str(notification.originator_id))),
            notification.originator_version)


class LedgerCheckpoints(Aggregate):
    """The checkpoints the referee signed, stored (and chained) like every other stream."""

    @staticmethod
    def create_id() -> UUID:
        """One stream for the whole store."""
        return CHECKPOINTS_ID

    @event("Opened")
    def __init__(self) -> None:
        self.latest: dict[str, Any] | None = None

    @event("Signed")
    def record(self, checkpoint: dict[str, Any]) -> None:
        """Keep a new signed checkpoint (it extends the previous one: the audit checked)."""
        self.latest = dict(checkpoint)


CHECKPOINTS_ID = uuid5(NAMESPACE_URL, "https://fiftyk-referee/ledger-checkpoints")

__all__ = ["CHECKPOINTS_ID", "CHECKPOINT_FORMAT", "LEAF_FORMAT", "HandLog", "Inclusion",
           "LedgerCheckpoints", "Recorded", "leaf_data"]
