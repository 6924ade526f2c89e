"""Event-sourced aggregates in plain Python: the domain's own base, with no store behind it.

An aggregate decides in its command methods and records what it decided as events; each
event's `apply` only mutates. Replaying the events rebuilds the aggregate. The declarations
are those of the `eventsourcing` library's aggregates, and so is what an event holds, so the
library stores and loads these aggregates unchanged (the service wires it: `service/core/store.py`,
`service/core/aggregates.py`) while the games stay free of it (a client install has no library):

- `@event("Name")` on `__init__` declares the created event `Cls.Name`; calling the class
  records it. On another method it declares `Cls.Name`: calling the method records the
  event, whose `apply` runs the method's body with the event's values.
- A nested `class Name(AggregateEvent)` with fields and an `apply` method is an event
  recorded with `trigger_event(Cls.Name, **values)`.
- An event class's topic (`module:Aggregate.Name`) is what a store records; events hold
  `originator_id`, `originator_version`, `timestamp` (and, created events, the aggregate's
  topic as `originator_topic`) before their own fields, in this order.
- The aggregate keeps `_id`, `_version`, `_created_on`, `_modified_on` and
  `_pending_events` in its `__dict__`, the names snapshots of the library use.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar, TypeVar, cast, dataclass_transform
from uuid import UUID, uuid4

INITIAL_VERSION = 1
EVENT_NAME = "__event_name__"  # set by @event on the function it declares an event for
# What every event holds before its own fields (and a created event's aggregate topic).
EVENT_HEADER = ("originator_id", "originator_version", "timestamp")
CREATED_HEADER = (*EVENT_HEADER, "originator_topic")

FunctionT = TypeVar("FunctionT", bound=Callable[..., Any])
AggregateT = TypeVar("AggregateT", bound="Aggregate")


class EventSequenceError(ValueError):
    """An event applied to an aggregate it does not belong to, or out of its order."""


def topic_of(cls: type) -> str:
    """A class's topic: `module:QualifiedName`, as stores record it."""
    return f"{cls.__module__}:{cls.__qualname__}"


def event(name: str) -> Callable[[FunctionT], FunctionT]:
    """Declare the method's event, named `name` (see the module's docstring)."""

    def declare(function: FunctionT) -> FunctionT:
        setattr(function, EVENT_NAME, name)
        return function

    return declare


def _binder(function: Callable[..., Any]) -> Callable[..., dict[str, Any]]:
    """A function binding a method's arguments (after `self`) to its parameter names, in
    order, defaults filled: what `inspect.Signature.bind` does, at a fraction of its cost."""
    parameters = list(inspect.signature(function).parameters.values())[1:]
    if any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in parameters):
        raise TypeError(f"{function.__qualname__}: an event's method takes named values only")
    names = tuple(p.name for p in parameters)
    known = frozenset(names)
    positional = len([p for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD])
    defaults = {p.name: p.default for p in parameters if p.default is not p.empty}

    def bind(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if len(args) > positional or not kwargs.keys() <= known or any(
                name in kwargs for name in names[:len(args)]):
            raise TypeError(f"{function.__qualname__}() got arguments {args!r}, {kwargs!r}")
        given = dict(zip(names, args, strict=False)) | kwargs
        try:
            return {name: given[name] if name in given else defaults[name] for name in names}
        except KeyError as missing:
            raise TypeError(f"{function.__qualname__}() missing {missing}") from None

    return bind


def _fields(cls: type[AggregateEvent]) -> tuple[tuple[str, ...], dict[str, Any]]:
    """An event class's stored field names (header first) and the defaults of its own."""
    header = cls._header
    own = [f for f in dataclasses.fields(cls) if f.name not in header]
    defaults = {f.name: f.default for f in own if f.default is not dataclasses.MISSING}
    return (*header, *(f.name for f in own)), defaults


@dataclass_transform(frozen_default=True)
@dataclasses.dataclass(frozen=True)
class AggregateEvent:
    """Something an aggregate decided; a frozen dataclass of its values."""

    originator_id: UUID
    originator_version: int
    timestamp: datetime

    _header: ClassVar[tuple[str, ...]] = EVENT_HEADER
    # Filled for each event class: its stored fields in order, its defaults, its aggregate.
    _field_names: ClassVar[tuple[str, ...]] = EVENT_HEADER
    _field_set: ClassVar[frozenset[str]] = frozenset(EVENT_HEADER)
    _defaults: ClassVar[dict[str, Any]] = {}
    _aggregate: ClassVar[type[Aggregate] | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclasses.dataclass(frozen=True)(cls)
        cls._field_names, cls._defaults = _fields(cls)
        cls._field_set = frozenset(cls._field_names)

    @classmethod
    def _make(cls, values: dict[str, Any]) -> Any:
        """An event of this class from its stored field values (checked, defaults filled)."""
        defaults = cls._defaults
        try:
            # Frozen: the values go straight into __dict__, in field order (the stored order).
            ordered = {name: values[name] if name in values else defaults[name]
                       for name in cls._field_names}
        except KeyError as missing:
            raise TypeError(f"{cls.__qualname__}: no value for {missing}") from None
        if not values.keys() <= cls._field_set:
            unknown = sorted(values.keys() - cls._field_set)
            raise TypeError(f"{cls.__qualname__}: unknown fields {unknown}")
        made = object.__new__(cls)
        made.__dict__.update(ordered)
        return made

    def mutate(self, aggregate: Any) -> Any:
        """Apply this event to `aggregate`, the next in its sequence; return it."""
        originator_id = self.originator_id  # the aggregate's own id object when it recorded it
        if aggregate is None or (originator_id is not aggregate.id
                                 and originator_id != aggregate.id):
            raise EventSequenceError(
                f"{type(self).__qualname__} of {self.originator_id} applied to"
                f" {getattr(aggregate, 'id', None)}")
        if self.originator_version != aggregate.version + 1:
            raise EventSequenceError(
                f"{type(self).__qualname__} version {self.originator_version} applied to"
                f" version {aggregate.version}")
        self.apply(aggregate)
        aggregate._version = self.originator_version
        aggregate._modified_on = self.timestamp
        return aggregate

    def apply(self, aggregate: Any) -> None:
        """Mutate the aggregate (events declared by a method run that method's body)."""


class CreatedEvent(AggregateEvent):
    """The event that creates an aggregate: its `__init__` values."""

    originator_topic: str

    _header: ClassVar[tuple[str, ...]] = CREATED_HEADER

    def mutate(self, aggregate: Any) -> Any:
        """Construct the aggregate this event creates."""
        if aggregate is not None:
            raise EventSequenceError(
                f"{type(self).__qualname__} applied to an existing aggregate {aggregate.id}")
        cls = type(self)._aggregate
        if cls is None:  # pragma: no cover - every created event class belongs to one
            raise TypeError(f"{type(self).__qualname__} creates no aggregate")
        made = object.__new__(cls)
        made.__dict__.update(_id=self.originator_id, _version=self.originator_version,
                             _created_on=self.timestamp, _modified_on=self.timestamp,
                             _pending_events=[])
        values = vars(self)
        # An event stored before a parameter existed lacks it: `__init__`'s default applies.
        cls._init_body(made, **{name: values[name] for name in cls._init_params
                                if name in values})
        self.apply(made)
        return made


class _AggregateType(type):
    """Calling an aggregate class records its created event (and returns the aggregate)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cast("type[Aggregate]", cls)._create(*args, **kwargs)


class Aggregate(metaclass=_AggregateType):
    """An event-sourced aggregate (see the module's docstring)."""

    # Filled for each aggregate class from its `@event` `__init__`.
    _created_event: ClassVar[type[CreatedEvent] | None] = None
    _init_body: ClassVar[Callable[..., None]]
    _init_params: ClassVar[tuple[str, ...]] = ()
    _bind_init: ClassVar[Callable[[tuple[Any, ...], dict[str, Any]], dict[str, Any]]]
    _id_params: ClassVar[tuple[str, ...]] = ()

    _id: UUID
    _version: int
    _created_on: datetime
    _modified_on: datetime
    _pending_events: list[AggregateEvent]

    @staticmethod
    def create_id(*_: Any, **__: Any) -> UUID:
        """A new aggregate's id (a random one unless the aggregate says otherwise)."""
        return uuid4()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for attribute, value in list(vars(cls).items()):
            name = getattr(value, EVENT_NAME, None)
            if name is None:
                continue
            if attribute == "__init__":
                cls._declare_created(name, value)
            else:
                setattr(cls, attribute, cls._declare_method_event(name, value))
        for value in vars(cls).values():
            if isinstance(value, type) and issubclass(value, AggregateEvent):
                value._aggregate = cls

    @classmethod
    def _event_class(cls, name: str, base: type[AggregateEvent],
                     function: Callable[..., Any]) -> type[AggregateEvent]:
        """A nested event class `cls.name` whose fields are `function`'s parameters."""
        parameters = list(inspect.signature(function).parameters.values())[1:]
        namespace: dict[str, Any] = {
            "__module__": cls.__module__,
            "__qualname__": f"{cls.__qualname__}.{name}",
            "__annotations__": {p.name: p.annotation for p in parameters},
            "__doc__": function.__doc__,
        }
        made = type(name, (base,), namespace)
        setattr(cls, name, made)
        return made

    @classmethod
    def _declare_created(cls, name: str, init: Callable[..., None]) -> None:
        cls._created_event = cls._event_class(name, CreatedEvent, init)  # type: ignore[assignment]
        cls._init_body = init
        cls._bind_init = _binder(init)
        cls._init_params = tuple(inspect.signature(init).parameters)[1:]
        cls._id_params = tuple(inspect.signature(cls.create_id).parameters)

    @classmethod
    def _declare_method_event(cls, name: str, body: Callable[..., None]
                              ) -> Callable[..., None]:
        """The event class for an `@event` method, and the method that records it."""
        made = cls._event_class(name, AggregateEvent, body)
        parameters = tuple(inspect.signature(body).parameters)[1:]
        bind = _binder(body)

        def apply(event: AggregateEvent, aggregate: Any) -> None:
            values = vars(event)
            # A parameter added since the event was stored takes the method's default.
            body(aggregate, **{parameter: values[parameter] for parameter in parameters
                               if parameter in values})

        setattr(made, "apply", apply)  # noqa: B010  # a method of the class made above

        def record(self: Aggregate, *args: Any, **kwargs: Any) -> None:
            self.trigger_event(made, **bind(args, kwargs))

        record.__name__ = body.__name__
        record.__qualname__ = body.__qualname__
        record.__doc__ = body.__doc__
        return record

    @classmethod
    def _create(cls: type[AggregateT], *args: Any, **kwargs: Any) -> AggregateT:
        """Record the created event for these `__init__` values; the new aggregate."""
        created = cls._created_event
        if created is None:
            raise TypeError(f"{cls.__qualname__} declares no created event (@event __init__)")
        values = cls._bind_init(args, kwargs)
        originator_id = cls.create_id(**{k: v for k, v in values.items() if k in cls._id_params})
        event_ = created._make({
            "originator_id": originator_id, "originator_version": INITIAL_VERSION,
            "timestamp": datetime.now(tz=UTC), "originator_topic": topic_of(cls), **values})
        aggregate: AggregateT = event_.mutate(None)
        aggregate._pending_events.append(event_)
        return aggregate

    @property
    def id(self) -> UUID:
        """The aggregate's id."""
        return self._id

    @property
    def version(self) -> int:
        """The version of its last event."""
        return self._version

    @property
    def created_on(self) -> datetime:
        """When its created event was recorded."""
        return self._created_on

    @property
    def modified_on(self) -> datetime:
        """When its last event was recorded."""
        return self._modified_on

    @property
    def pending_events(self) -> list[AggregateEvent]:
        """Events recorded and not yet collected (saved)."""
        return self._pending_events

    def trigger_event(self, event_class: type[AggregateEvent], **values: Any) -> None:
        """Record an event of `event_class` with `values` and apply it."""
        recorded = event_class._make({"originator_id": self._id,
                                      "originator_version": self._version + 1,
                                      "timestamp": datetime.now(tz=UTC), **values})
        recorded.mutate(self)
        self._pending_events.append(recorded)

    def collect_events(self) -> Sequence[AggregateEvent]:
        """The pending events, in order; none are pending afterwards."""
        collected = list(self._pending_events)
        self._pending_events.clear()
        return collected

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        shown = ", ".join(f"{k.lstrip('_')}={v!r}" for k, v in vars(self).items()
                          if k != "_pending_events")
        return f"{type(self).__name__}({shown})"


__all__ = [
    "INITIAL_VERSION", "Aggregate", "AggregateEvent", "CreatedEvent", "EventSequenceError",
    "event", "topic_of",
]
