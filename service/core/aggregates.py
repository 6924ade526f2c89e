"""The domain's aggregates in the `eventsourcing` library: what the store needs beyond them.

The domain's aggregates (`domain/aggregate.py`) are plain Python and do not know the library;
their events already have what the library's mapper and repository use (topics, the
originator's id and version, `mutate`). Snapshots are the one piece the library shapes
around its own aggregate class: this snapshot class takes them from any of ours the same way
(the library's bookkeeping attributes left out), so stored snapshots look as they always did.
"""

from __future__ import annotations

from typing import Any, Self

from eventsourcing.domain import Snapshot
from eventsourcing.utils import get_topic

from fiftyk_referee.domain.aggregate import Aggregate

# Rebuilt from the snapshot's own fields when it is loaded, so not kept in its state.
NOT_SNAPSHOTTED = ("_id", "_version", "_pending_events")


class AggregateSnapshot(Snapshot):
    """A snapshot of one of the domain's aggregates (state as the library's snapshots hold)."""

    @classmethod
    def take(cls, aggregate: Any) -> Self:
        """The aggregate's state now, with its class version for upcasting when loaded."""
        if not isinstance(aggregate, Aggregate):
            return super().take(aggregate)
        state = {name: value for name, value in vars(aggregate).items()
                 if name not in NOT_SNAPSHOTTED}
        class_version = getattr(type(aggregate), "class_version", 1)
        if class_version > 1:
            state["class_version"] = class_version
        return cls(originator_id=aggregate.id, originator_version=aggregate.version,
                   timestamp=cls.create_timestamp(), topic=get_topic(type(aggregate)),
                   state=state)


__all__ = ["NOT_SNAPSHOTTED", "AggregateSnapshot"]
