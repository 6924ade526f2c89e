"""The public events the referee publishes, as the core reads them from the store.

`PUBLIC_EVENTS` joins the table's catalog and every hosted game's (`domain/games.py`,
`Game.events`): it names a stored event publicly, builds its payload for a viewer, and
turns public names into the stored topics a feed query filters on (today's topics and
those of older versions, so a store written by 0.1.0 reads the same). Stored events that
are not public (command receipts) never leave the store through the feed.

`FeedEvent` is one stored event with its public name, before any viewer is applied: the
feed hub keeps these in memory and each watcher builds its own view of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fiftyk_referee.domain.errors import shown
from fiftyk_referee.domain.events import EventCatalog, EventKind, PublicEvent
from fiftyk_referee.domain.games import generation, hosted
from fiftyk_referee.domain.observer import Viewer
from fiftyk_referee.domain.table_events import TABLE_EVENTS
from fiftyk_referee.service.core.topics import stored_topics
from fiftyk_referee.service.errors import FieldViolation, InvalidArgument, ServiceReason

NAMES_FIELD = "topics"  # the request field that carries a feed filter's public names


class PublicEvents:
    """Every published event of the table and the games, by stored class and by name."""

    def __init__(self, catalogs: Iterable[EventCatalog]) -> None:
        self._catalogs = tuple(catalogs)
        self._by_class: dict[type, EventKind] = {}
        self._by_name: dict[str, EventKind] = {}
        for catalog in self._catalogs:
            for kind in catalog:
                if kind.name in self._by_name:
                    raise ValueError(f"event {kind.name!r} is published twice")
                self._by_class[kind.stored] = kind
                self._by_name[kind.name] = kind
        self._all_topics = [t for kind in self._by_name.values()
                            for t in stored_topics(kind.stored)]

    @property
    def names(self) -> list[str]:
        """Every public event name, catalog by catalog."""
        return list(self._by_name)

    def kind_of(self, stored: object) -> EventKind | None:
        """The public event kind of a stored event (None: not published)."""
        return self._by_class.get(type(stored))

    def name_of(self, stored: object) -> str | None:
        """The public name of a stored event (None: not published)."""
        kind = self._by_class.get(type(stored))
        return kind.name if kind is not None else None

    def public_event(self, stored: object, viewer: Viewer) -> PublicEvent:
        """A published stored event as `viewer` may see it."""
        kind = self._by_class.get(type(stored))
        if kind is None:
            raise ValueError(f"{type(stored).__qualname__} is not a published event")
        return kind.build(stored, viewer)

    def topics(self, names: Sequence[str] = ()) -> list[str]:
        """The stored topics of these public names (all published events when empty).

        An unknown name is refused (`INVALID_REQUEST` on the `topics` field) rather than
        silently matching nothing: a client still sending 0.1.0's class paths learns why.
        """
        if not names:
            return list(self._all_topics)
        unknown = [(i, n) for i, n in enumerate(names) if n not in self._by_name]
        if unknown:
            raise InvalidArgument(
                ServiceReason.INVALID_REQUEST,
                f"unknown event name {shown(unknown[0][1])}; the names are listed in"
                " docs/events.md",
                field_violations=[FieldViolation(f"{NAMES_FIELD}[{i}]", "unknown event name")
                                  for i, _ in unknown])
        return [t for name in dict.fromkeys(names)
                for t in stored_topics(self._by_name[name].stored)]


class RegisteredEvents(PublicEvents):
    """The table's events and those of every game hosted now: rebuilt when the hosted games
    change (`service.bundles.install`, as a test does)."""

    def __init__(self) -> None:
        self._generation = generation()
        super().__init__([TABLE_EVENTS, *(game.events for game in hosted().values())])

    def _current(self) -> None:
        if self._generation != generation():
            self.__init__()  # type: ignore[misc]  # re-read the registry in place

    @property
    def names(self) -> list[str]:
        """Every public event name, catalog by catalog."""
        self._current()
        return super().names

    def kind_of(self, stored: object) -> EventKind | None:
        """The public event kind of a stored event (None: not published)."""
        self._current()
        return super().kind_of(stored)

    def name_of(self, stored: object) -> str | None:
        """The public name of a stored event (None: not published)."""
        self._current()
        return super().name_of(stored)

    def public_event(self, stored: object, viewer: Viewer) -> PublicEvent:
        """A published stored event as `viewer` may see it."""
        self._current()
        return super().public_event(stored, viewer)

    def topics(self, names: Sequence[str] = ()) -> list[str]:
        """The stored topics of these public names (all published events when empty)."""
        self._current()
        return super().topics(names)


PUBLIC_EVENTS: PublicEvents = RegisteredEvents()


@dataclass(frozen=True, slots=True)
class FeedEvent:
    """One published stored event: where it is, what it is called, and the event itself.

    `position` is its place in the global feed (0 when read from one hand's history, which
    pages by version). `stored` is the domain event, `kind` its public event kind;
    `public(viewer)` is what a viewer sees.
    """

    position: int
    aggregate_id: str
    aggregate_version: int
    timestamp: datetime
    stored: Any
    kind: EventKind

    @property
    def name(self) -> str:
        """The public name."""
        return self.kind.name

    def public(self, viewer: Viewer) -> PublicEvent:
        """The event as `viewer` may see it."""
        return self.kind.build(self.stored, viewer)


@dataclass(frozen=True, slots=True)
class FeedPage:
    """A page of the global feed."""

    events: list[FeedEvent]
    last_position: int
    has_more: bool


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """A page of one hand's events."""

    events: list[FeedEvent]
    has_more: bool


def feed_event(stored: Any, position: int = 0,
               events: PublicEvents = PUBLIC_EVENTS) -> FeedEvent | None:
    """A stored domain event as a FeedEvent (None when `events` does not publish it)."""
    kind = events.kind_of(stored)
    if kind is None:
        return None
    stamp = getattr(stored, "timestamp", None)
    if not isinstance(stamp, datetime):  # pragma: no cover - every stored event has one
        raise TypeError(f"stored event {type(stored).__qualname__} has no timestamp")
    return FeedEvent(position=position, aggregate_id=str(stored.originator_id),
                     aggregate_version=int(stored.originator_version), timestamp=stamp,
                     stored=stored, kind=kind)


__all__ = [
    "PUBLIC_EVENTS", "FeedEvent", "FeedPage", "HistoryPage", "PublicEvents", "feed_event",
]
