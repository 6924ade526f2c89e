"""The aggregate cache behind the store: fast reads, and private copies commands may mutate.

The library's repository keeps recently used aggregates (`AGGREGATE_CACHE_MAXSIZE`) and
fast-forwards them with the events stored since (`AGGREGATE_CACHE_FASTFORWARD`), so
processes sharing one database never decide on stale state. This module adds what the
referee needs on top:

- **Private copies.** A command mutates the aggregate it decides on; if the command is then
  refused or loses a race, nothing of that may reach the cache. `private_copy` copies every
  attribute, container by container, and shares only values that cannot change: immutable
  types, and the attributes an aggregate class declares in `NEVER_MUTATED` (set when the
  aggregate is created, never touched again). Forgetting to declare one only costs a copy;
  nothing has to list the fields events mutate, so a new field cannot be forgotten.
- **Serialised reads.** The repository fast-forwards a cached aggregate under its lock but
  copies it after releasing the lock, so a copy could be torn by a concurrent fast-forward:
  reads of one id are serialised here (striped locks).
- **Optimistic decisions.** A command's first attempt may decide on the cached aggregate
  without asking the store for newer events (within one process the cache is current:
  saved aggregates are put back). A decision on stale state cannot be saved — its events
  collide with the stored versions — and a refusal is judged again on fresh state.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import is_dataclass
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Any, TypeVar, cast
from uuid import UUID

from eventsourcing.application import Repository

from fiftyk_referee.domain.aggregate import Aggregate
from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.service.errors import ServiceError

LOCK_STRIPES = 64
PENDING_EVENTS = "_pending_events"  # an aggregate's events not yet saved (domain/aggregate.py)
AggregateT = TypeVar("AggregateT", bound=Aggregate)
T = TypeVar("T")

# Values no aggregate mutates in place. Tuples count as immutable: aggregates keep only
# immutable values inside tuples (the cache property test checks the copies stay apart).
IMMUTABLE_TYPES: frozenset[type] = frozenset({
    str, int, float, bool, bytes, type(None), Decimal, UUID, datetime, Card, tuple,
})
# The immutable types, and those found immutable since (enums, frozen dataclasses).
_immutable: set[type] = set(IMMUTABLE_TYPES)


def copy_value(value: Any) -> Any:
    """A copy of `value` sharing only immutable parts (containers are copied, recursively)."""
    kind = type(value)
    if kind in _immutable:
        return value
    if kind is list:
        # Most lists hold only immutable values: check their types at C speed, copy flat.
        if _immutable.issuperset(map(type, value)):
            return list(value)
        return [copy_value(item) for item in value]
    if kind is dict:
        if _immutable.issuperset(map(type, value.values())):
            return dict(value)
        return {key: copy_value(item) for key, item in value.items()}
    if kind is set:
        return set(value)  # sets hold hashable, hence immutable, values
    if issubclass(kind, Enum) or (is_dataclass(value)
                                  and value.__dataclass_params__.frozen):  # type: ignore[union-attr]
        _immutable.add(kind)  # enums and frozen dataclasses (combinations, rules) never change
        return value
    raise TypeError(f"aggregates may not hold a {kind.__name__}: the cache cannot copy it")


def private_copy(aggregate: AggregateT) -> AggregateT:
    """A copy of an aggregate that a command may mutate without touching the original."""
    shared: frozenset[str] = getattr(type(aggregate), "NEVER_MUTATED", frozenset())
    duplicate = object.__new__(type(aggregate))
    duplicate.__dict__.update({
        name: value if name in shared else copy_value(value)
        for name, value in vars(aggregate).items() if name != PENDING_EVENTS
    })
    # Events are immutable once triggered: the list is the copy's own, its events shared.
    duplicate.__dict__[PENDING_EVENTS] = list(vars(aggregate).get(PENDING_EVENTS, ()))
    return duplicate


def replay(aggregate: Any, domain_events: Iterable[Any]) -> Any:
    """Apply stored events to an aggregate (None before its first event).

    The library's `project_aggregate` does the same after an `isinstance` check against a
    runtime-checkable Protocol per event, which on Python 3.11 costs more than applying a
    typical hand event; every event read back from this application's store is an
    aggregate event or snapshot with a `mutate` method.
    """
    for domain_event in domain_events:
        aggregate = domain_event.mutate(aggregate)
    return aggregate


class AggregateCache:
    """Reads through the repository's cache: private copies, serialised per id."""

    def __init__(self, repository: Repository[UUID]) -> None:
        self._repository = repository
        self._stripes = [threading.Lock() for _ in range(LOCK_STRIPES)]
        self._local = threading.local()

    @property
    def enabled(self) -> bool:
        """Whether the repository caches aggregates at all."""
        return self._repository.cache is not None

    def _stripe(self, aggregate_id: UUID) -> threading.Lock:
        return self._stripes[aggregate_id.int % len(self._stripes)]

    def get(self, aggregate_id: UUID, version: int | None = None) -> Aggregate:
        """An aggregate the caller may mutate (`AggregateNotFoundError` if there is none).

        A past `version` is rebuilt from the store; the current state comes from the cache,
        fast-forwarded — unless this thread decides optimistically (`decide`), when a
        cached aggregate is used as it is.
        """
        cache = self._repository.cache
        if version is not None or cache is None:
            fresh: Aggregate = self._repository.get(aggregate_id, version=version,
                                                    projector_func=replay)
            return fresh
        with self._stripe(aggregate_id):
            if getattr(self._local, "optimistic", False):
                try:
                    hit = cache.get(aggregate_id)
                except KeyError:
                    pass
                else:
                    return private_copy(cast(Aggregate, hit))
            cached: Aggregate = self._repository.get(aggregate_id, deepcopy_from_cache=False,
                                                     projector_func=replay)
            return private_copy(cached)

    def remember(self, aggregates: Iterable[Aggregate | None]) -> None:
        """Put just-saved aggregates in the cache (the library leaves that to fast-forward).

        The saved objects themselves go in: the command that saved them is done with them.
        """
        cache = self._repository.cache
        if cache is None:
            return
        for aggregate in aggregates:
            if aggregate is None:
                continue
            with self._stripe(aggregate.id):
                try:
                    known = cache.get(aggregate.id)
                except KeyError:
                    cache.put(aggregate.id, aggregate)
                    continue
                if known.version < aggregate.version:
                    cache.put(aggregate.id, aggregate)

    @contextmanager
    def fresh(self) -> Iterator[None]:
        """Within this block, reads on this thread fast-forward even in an optimistic
        decision (state another process may have changed and the decision must not miss)."""
        optimistic = getattr(self._local, "optimistic", False)
        self._local.optimistic = False
        try:
            yield
        finally:
            self._local.optimistic = optimistic

    def decide(self, decide: Callable[[], T], *, optimistic: bool) -> T:
        """Run `decide` on cached state without reading the store first, when `optimistic`.

        A refusal proves nothing about fresh state, so a refused optimistic decision is
        judged again on fast-forwarded state before the refusal is reported.
        """
        if optimistic and self.enabled:
            self._local.optimistic = True
            try:
                return decide()
            except (RuleError, ServiceError):
                pass
            finally:
                self._local.optimistic = False
        return decide()


__all__ = ["AggregateCache", "copy_value", "private_copy", "replay"]
