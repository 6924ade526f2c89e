"""JSON transcodings for the domain values the library's JSON transcoder does not know.

Stored events and snapshots stay readable JSON. Values that plain JSON would silently change
are written as tagged objects `{"_type_": NAME, "_data_": ...}` (the library's own convention,
see `eventsourcing.persistence.JSONTranscoder`) and read back as the same Python value:

- `card`: a `Card` NamedTuple, `[rank, suit]`,
- each game's own values, by the codecs it declares (`Game.value_codecs`, e.g. a game's
  combinations and rulesets as plain JSON),
- `tuple`, `set`, `frozenset`: their items as a list,
- `dict_pairs`: a dict with keys that are not strings (e.g. `{seat: count}`), as `[[k, v], ...]`.

JSON turns tuples (and NamedTuples) into lists and int keys into strings before any
`default` hook runs, so `DomainTranscoder` first walks the value and tags them itself. Event
payloads are plain values (lists, strings, ints, str-keyed dicts), so events are stored
exactly as the plain JSON transcoder would store them; the tags appear in snapshots, whose
state is an aggregate's `__dict__`. `Decimal`, `UUID` and `datetime` keep the library's
transcodings (`decimal_str`, `uuid_hex`, `datetime_iso`).
"""

from __future__ import annotations

from typing import Any

from eventsourcing.persistence import (
    DatetimeAsISO,
    DecimalAsStr,
    JSONTranscoder,
    Transcoding,
    UUIDAsHex,
)

from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.game import ValueCodec
from fiftyk_referee.domain.games import hosted

TYPE_KEY, DATA_KEY = "_type_", "_data_"


class CardAsList(Transcoding):
    """A `Card` as `[rank, suit]`."""

    type = Card
    name = "card"

    def encode(self, obj: Card) -> list[Any]:
        """Rank and suit."""
        return [obj.rank, obj.suit]

    def decode(self, data: list[Any]) -> Card:
        """The card again."""
        rank, suit = data
        return Card(int(rank), str(suit))


class CodecTranscoding(Transcoding):
    """A game's `ValueCodec` (registered through the games' registry) as a transcoding."""

    def __init__(self, codec: ValueCodec) -> None:
        self.codec = codec

    @property
    def type(self) -> type:  # type: ignore[override]
        """The game's value type."""
        return self.codec.type

    @property
    def name(self) -> str:  # type: ignore[override]
        """The tag it is stored under."""
        return self.codec.name

    def encode(self, obj: Any) -> Any:
        """Plain values (the walk tags what is inside)."""
        return self.codec.encode(obj)

    def decode(self, data: Any) -> Any:
        """The game's value again."""
        return self.codec.decode(data)


class TupleAsList(Transcoding):
    """A plain tuple as a list."""

    type = tuple
    name = "tuple"

    def encode(self, obj: tuple[Any, ...]) -> list[Any]:
        """Its items."""
        return list(obj)

    def decode(self, data: list[Any]) -> tuple[Any, ...]:
        """The tuple again."""
        return tuple(data)


def _ordered(items: Any) -> list[Any]:
    """Items in a stable order when they are comparable, so equal sets store equal JSON."""
    values = list(items)
    try:
        return sorted(values)
    except TypeError:
        return values


class SetAsList(Transcoding):
    """A set as a (sorted, when possible) list."""

    type = set
    name = "set"

    def encode(self, obj: set[Any]) -> list[Any]:
        """Its items."""
        return _ordered(obj)

    def decode(self, data: list[Any]) -> set[Any]:
        """The set again."""
        return set(data)


class FrozenSetAsList(Transcoding):
    """A frozenset as a (sorted, when possible) list."""

    type = frozenset
    name = "frozenset"

    def encode(self, obj: frozenset[Any]) -> list[Any]:
        """Its items."""
        return _ordered(obj)

    def decode(self, data: list[Any]) -> frozenset[Any]:
        """The frozenset again."""
        return frozenset(data)


class DictAsPairs(Transcoding):
    """A dict whose keys are not all strings, as `[[key, value], ...]`."""

    type = dict
    name = "dict_pairs"

    def encode(self, obj: dict[Any, Any]) -> list[list[Any]]:
        """Its items."""
        return [[key, value] for key, value in obj.items()]

    def decode(self, data: list[list[Any]]) -> dict[Any, Any]:
        """The dict again."""
        return {key: value for key, value in data}


DOMAIN_TRANSCODINGS: tuple[type[Transcoding], ...] = (
    CardAsList, TupleAsList, SetAsList, FrozenSetAsList, DictAsPairs,
)
LIBRARY_TRANSCODINGS: tuple[type[Transcoding], ...] = (UUIDAsHex, DecimalAsStr, DatetimeAsISO)


class DomainTranscoder(JSONTranscoder):
    """The library's JSON transcoder, plus a walk that tags what JSON would change."""

    def __init__(self) -> None:
        super().__init__()
        for transcoding in (*LIBRARY_TRANSCODINGS, *DOMAIN_TRANSCODINGS):
            self.register(transcoding())
        for game in hosted().values():
            for codec in game.value_codecs:
                self.register(CodecTranscoding(codec))
        self._dict_pairs = self.names[DictAsPairs.name]
        self._tuple = self.names[TupleAsList.name]

    def encode(self, obj: Any) -> bytes:
        """Encode after tagging tuples, sets, domain values and non-string dict keys."""
        return super().encode(self.tag(obj))

    def tag(self, obj: Any) -> Any:
        """The value with everything JSON cannot represent faithfully turned into tags."""
        kind = type(obj)
        if kind is str or kind is int or kind is bool or kind is float or obj is None:
            return obj
        if kind is list:
            return [self.tag(item) for item in obj]
        if kind is dict:
            if all(type(key) is str for key in obj):
                return {key: self.tag(value) for key, value in obj.items()}
            return self._tagged(self._dict_pairs, obj)
        transcoding = self.types.get(kind)
        if transcoding is not None and transcoding.type is not dict:
            return self._tagged(transcoding, obj)
        if isinstance(obj, tuple):  # a NamedTuple without a transcoding of its own
            return self._tagged(self._tuple, obj)
        return obj  # Decimal, UUID, datetime: the encoder's `default` hook handles them

    def _tagged(self, transcoding: Transcoding, obj: Any) -> dict[str, Any]:
        return {TYPE_KEY: transcoding.name, DATA_KEY: self.tag(transcoding.encode(obj))}


__all__ = [
    "DOMAIN_TRANSCODINGS",
    "CardAsList",
    "CodecTranscoding",
    "DictAsPairs",
    "DomainTranscoder",
    "FrozenSetAsList",
    "SetAsList",
    "TupleAsList",
]
