"""Public events: the stable names and typed payloads of what the referee's feed tells.

The event store keeps each event under its Python class (a topic such as
`fiftyk_referee.domain.fiftyk.hand:Hand.CardsPlayed`); that is storage, not contract. What
third parties read is a *public event*: a stable name (`table.seat_taken`,
`fiftyk.cards_played`) and a frozen payload built for one viewer (`domain/observer.py`), so
a seat's copy of an event never holds another seat's cards.

Each aggregate kind declares its events once, as an `EventCatalog` of `EventKind`s: the
stored class, the public payload class (whose `NAME` is the public name) and the function
that builds the payload for a viewer. Table events are `table.*` (`domain/table_events.py`);
a game's hand events are namespaced by the game (`fiftyk.*` in `domain/fiftyk/events.py`).
Names never change once published; a stored class that is renamed keeps its public name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from fiftyk_referee.domain.observer import Viewer


@dataclass(frozen=True, slots=True)
class PublicEvent:
    """Base of every public event payload; `NAME` is the event's stable public name."""

    NAME: ClassVar[str] = ""


Build = Callable[[Any, Viewer], PublicEvent]


@dataclass(frozen=True, slots=True)
class EventKind:
    """One stored event class, the public event it is published as, and how to build it."""

    stored: type
    public: type[PublicEvent]
    build: Build

    @property
    def name(self) -> str:
        """The public name."""
        return self.public.NAME


def stored_event(aggregate: type, name: str) -> type:
    """An aggregate's stored event class by its class name (`@event("Dealt")` makes
    `Hand.Dealt` at runtime, where type checkers cannot see it)."""
    cls = getattr(aggregate, name, None)
    if not isinstance(cls, type):
        raise TypeError(f"{aggregate.__qualname__} has no event class {name!r}")
    return cls


class EventCatalog:
    """The public events of one kind of aggregate (a table, or one game's hands)."""

    def __init__(self, namespace: str, kinds: Iterable[EventKind]) -> None:
        self.namespace = namespace
        self._by_class: dict[type, EventKind] = {}
        self._by_name: dict[str, EventKind] = {}
        for kind in kinds:
            if not kind.name.startswith(f"{namespace}."):
                raise ValueError(f"event {kind.name!r} is outside namespace {namespace!r}")
            if kind.name in self._by_name or kind.stored in self._by_class:
                raise ValueError(f"event {kind.name!r} is declared twice")
            self._by_class[kind.stored] = kind
            self._by_name[kind.name] = kind

    def __iter__(self) -> Iterator[EventKind]:
        return iter(self._by_name.values())

    def name_of(self, stored: object) -> str | None:
        """The public name of a stored event (None when it is not one of this catalog's)."""
        kind = self._by_class.get(type(stored))
        return kind.name if kind is not None else None

    def kind_named(self, name: str) -> EventKind | None:
        """The event kind published under `name`, if this catalog has it."""
        return self._by_name.get(name)

    def public_event(self, stored: object, viewer: Viewer) -> PublicEvent | None:
        """The public event a stored event is, as `viewer` may see it (None: not ours)."""
        kind = self._by_class.get(type(stored))
        return kind.build(stored, viewer) if kind is not None else None


__all__ = ["Build", "EventCatalog", "EventKind", "PublicEvent", "stored_event"]
