"""The games at the gRPC edge: each installed game's converters, found by its name.

The edge reaches games only through here: a game's views, results and public events become
fiftyk.referee.v1 messages through the `EdgeGame` its bundle names (`GameBundle.edge`, in
the game's own package `service/games/<game>/`). What only a game has travels as a message
of the game's own proto package, packed in a google.protobuf.Any (`HandView.game_view`,
`HandScore.game_outcome`, `Event.game_event`); 五十K and Shengji also fill the fields 0.2
clients read, with the same values (`legacy_copy`). A game whose bundle has no converters is
still served: its views, results and events are JSON values of its dataclasses, a Struct in
the Any (and in `game_state`, `game_result`, `game_payload`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from google.protobuf.descriptor import FileDescriptor
from google.protobuf.message import Message

from fiftyk_referee.domain.events import PublicEvent
from fiftyk_referee.domain.game import GameResult, GameView
from fiftyk_referee.service.core.bundles import GameBundle, bundle_named, installed
from fiftyk_referee.service.grpc.convert import struct_of
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

# Public payload class -> (the field of Event's `payload` oneof 0.2 clients read, or None for
# a game that has none; the builder of the game's own message, which `game_event` carries).
Payloads = dict[type[PublicEvent], tuple[str | None, Callable[[Any], Message]]]
ViewT = TypeVar("ViewT")
OwnViewT = TypeVar("OwnViewT", bound=Message)
ResultT = TypeVar("ResultT")


def legacy_copy(data: bytes, legacy: Message) -> None:
    """Fill a 0.2 field (`legacy`, a sub-message: set even when `data` is empty) with the
    bytes of a game's own message of the same fields, numbers and types (an Any's `value`:
    the message is serialized once for both)."""
    legacy.SetInParent()
    legacy.MergeFromString(data)


@runtime_checkable
class EdgeGame(Protocol):
    """A game's converters at the gRPC edge."""

    @property
    def name(self) -> str:
        """The game's name (the domain registry's key)."""

    @property
    def payloads(self) -> Payloads:
        """Its public event payloads' builders."""

    def hand_to_proto(self, view: GameView) -> pb.HandView:
        """One of its hand views as HandView, its own view message in `game_view`."""

    def fill_score(self, result: GameResult, score: pb.HandScore) -> None:
        """Set its result on a HandScore: `game_outcome` (and a 0.2 field where it has one)."""


@dataclass(frozen=True)
class TypedEdge(Generic[ViewT, OwnViewT, ResultT]):
    """A game's converters from its own view and result dataclasses (checked by type) to its
    own proto messages: the view's message goes in `HandView.game_view` (`view_to_proto`
    fills the rest of the HandView, given that message) and, copied, in its 0.2 field of
    HandView (`view_field`, None when it has none); the result's in `HandScore.game_outcome`
    and, copied, in its 0.2 field of the `outcome` oneof (`result_field`)."""

    name: str
    payloads: Payloads
    view_type: type[ViewT]
    view_message: Callable[[ViewT], OwnViewT]
    view_to_proto: Callable[[ViewT, OwnViewT], pb.HandView]
    view_field: str | None
    result_type: type[ResultT]
    result_field: str | None
    result_message: Callable[[ResultT], Message]

    def hand_to_proto(self, view: GameView) -> pb.HandView:
        """One of its hand views as HandView."""
        if not isinstance(view, self.view_type):
            raise TypeError(f"not a {self.name} view: {type(view).__name__}")
        own = self.view_message(view)
        message = self.view_to_proto(view, own)
        message.game_view.Pack(own)
        if self.view_field is not None:
            legacy_copy(message.game_view.value, getattr(message, self.view_field))
        return message

    def fill_score(self, result: GameResult, score: pb.HandScore) -> None:
        """Its result as `game_outcome`, and as its 0.2 field of HandScore's `outcome`."""
        if not isinstance(result, self.result_type):
            raise TypeError(f"not a {self.name} result: {type(result).__name__}")
        own = self.result_message(result)
        score.game_outcome.Pack(own)
        if self.result_field is not None:
            legacy_copy(score.game_outcome.value, getattr(score, self.result_field))


class GenericEdge:
    """The converters of a game with no messages of its own: JSON values."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.payloads: Payloads = {}

    def hand_to_proto(self, view: GameView) -> pb.HandView:
        """The common HandView fields, and the whole view as a Struct: in `game_view` and
        `game_state`."""
        message = pb.HandView(
            hand_id=view.hand_id, table_id=view.table_id, hand_number=view.number,
            version=view.version,
            status=pb.HAND_STATUS_COMPLETED if view.is_over else pb.HAND_STATUS_IN_PROGRESS)
        if view.to_act is not None:
            message.turn_seat = view.to_act
        message.game_state.CopyFrom(struct_of(view))
        message.game_view.Pack(message.game_state)
        return message

    def fill_score(self, result: GameResult, score: pb.HandScore) -> None:
        """The result as a Struct: in `game_outcome` and `game_result`."""
        score.game_result.CopyFrom(struct_of(result))
        score.game_outcome.Pack(score.game_result)


# The converters loaded so far, by bundle (a bundle's edge loads on first use).
_loaded: dict[int, tuple[GameBundle, EdgeGame]] = {}


def _edge_of(bundle: GameBundle) -> EdgeGame | None:
    if bundle.edge is None:
        return None
    held = _loaded.get(id(bundle))
    if held is None or held[0] is not bundle:
        edge = bundle.edge()
        if not isinstance(edge, EdgeGame) or edge.name != bundle.name:
            raise TypeError(f"the bundle {bundle.name!r} has no converters for its game:"
                            f" {type(edge).__name__}")
        held = _loaded[id(bundle)] = (bundle, edge)
    return held[1]


def edge_for(game: str) -> EdgeGame:
    """The converters of the game called `game` (JSON values for a game without any)."""
    bundle = bundle_named(game)
    edge = _edge_of(bundle) if bundle is not None else None
    return edge or GenericEdge(game)


def all_payloads() -> Payloads:
    """Every installed game's payload builders."""
    merged: Payloads = {}
    for bundle in installed().values():
        edge = _edge_of(bundle)
        if edge is not None:
            merged.update(edge.payloads)
    return merged


def game_protos() -> list[FileDescriptor]:
    """Every installed game's own proto file, by game name (`GameBundle.proto`; no converter
    is loaded): loading them puts their messages in the default descriptor pool, from which
    server reflection answers and protobuf's JSON printer reads an Any."""
    found = []
    for _, bundle in sorted(installed().items()):
        if bundle.proto is not None:
            proto = bundle.proto()
            if not isinstance(proto, FileDescriptor):
                raise TypeError(f"the bundle {bundle.name!r} names no proto file:"
                                f" {type(proto).__name__}")
            found.append(proto)
    return found


__all__ = ["EdgeGame", "GenericEdge", "Payloads", "TypedEdge", "all_payloads", "edge_for",
           "game_protos", "legacy_copy"]
