"""The games at the gRPC edge: each hosted game's converters, found by its name.

The edge reaches games only through here: a game's views, results and public events become
fiftyk.referee.v1 messages through its `EdgeGame` (五十K and Shengji in this package). A game
registered without one (`register_edge` not called) is still served: its views carry the
common HandView fields plus `game_state`, its results `HandScore.game_result` and its events
`Event.game_payload`, each as JSON values of its dataclasses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from fiftyk_referee.domain.events import PublicEvent
from fiftyk_referee.domain.game import GameResult, GameView
from fiftyk_referee.service.grpc.convert import struct_of
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

# Public payload class -> (its field of Event's `payload` oneof, its message builder).
Payloads = dict[type[PublicEvent], tuple[str, Callable[[Any], Any]]]
ViewT = TypeVar("ViewT")
ResultT = TypeVar("ResultT")


class EdgeGame(Protocol):
    """A game's converters at the gRPC edge."""

    @property
    def name(self) -> str:
        """The game's name (the domain registry's key)."""

    @property
    def payloads(self) -> Payloads:
        """Its public event payloads' builders."""

    def hand_to_proto(self, view: GameView) -> pb.HandView:
        """One of its hand views as HandView."""

    def fill_score(self, result: GameResult, score: pb.HandScore) -> None:
        """Set its result on a HandScore (its field of the `game_result` oneof)."""


@dataclass(frozen=True)
class TypedEdge(Generic[ViewT, ResultT]):
    """A game's converters from its own view and result dataclasses (checked by type):
    the view as HandView, the result into its field of HandScore's `outcome` oneof."""

    name: str
    payloads: Payloads
    view_type: type[ViewT]
    view_to_proto: Callable[[ViewT], pb.HandView]
    result_type: type[ResultT]
    result_field: str
    result_to_proto: Callable[[ResultT], Any]

    def hand_to_proto(self, view: GameView) -> pb.HandView:
        """One of its hand views as HandView."""
        if not isinstance(view, self.view_type):
            raise TypeError(f"not a {self.name} view: {type(view).__name__}")
        return self.view_to_proto(view)

    def fill_score(self, result: GameResult, score: pb.HandScore) -> None:
        """Its result as its field of HandScore's `outcome`."""
        if not isinstance(result, self.result_type):
            raise TypeError(f"not a {self.name} result: {type(result).__name__}")
        getattr(score, self.result_field).CopyFrom(self.result_to_proto(result))


class GenericEdge:
    """The converters of a game with no messages of its own: JSON values."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.payloads: Payloads = {}

    def hand_to_proto(self, view: GameView) -> pb.HandView:
        """The common HandView fields, and the whole view as `game_state`."""
        message = pb.HandView(
            hand_id=view.hand_id, table_id=view.table_id, hand_number=view.number,
            version=view.version,
            status=pb.HAND_STATUS_COMPLETED if view.is_over else pb.HAND_STATUS_IN_PROGRESS)
        if view.to_act is not None:
            message.turn_seat = view.to_act
        message.game_state.CopyFrom(struct_of(view))
        return message

    def fill_score(self, result: GameResult, score: pb.HandScore) -> None:
        """The result as `game_result`."""
        score.game_result.CopyFrom(struct_of(result))


EDGES: dict[str, EdgeGame] = {}


def register_edge(edge: EdgeGame) -> None:
    """Give a game its converters (a name already taken by other converters is refused)."""
    held = EDGES.get(edge.name)
    if held is not None and held is not edge:
        raise ValueError(f"the game {edge.name!r} already has converters")
    EDGES[edge.name] = edge


def edge_for(game: str) -> EdgeGame:
    """The converters of the game called `game` (JSON values for a game without any)."""
    _load_built_in()
    return EDGES.get(game) or GenericEdge(game)


def all_payloads() -> Payloads:
    """Every registered game's payload builders."""
    _load_built_in()
    merged: Payloads = {}
    for edge in EDGES.values():
        merged.update(edge.payloads)
    return merged


def _load_built_in() -> None:
    # The built-in games' converters import this module (for `EdgeGame`), so they are
    # loaded on first use rather than at import.
    if _BUILT_IN_LOADED:
        return
    from fiftyk_referee.service.games.fiftyk import edge as fiftyk
    from fiftyk_referee.service.games.shengji import edge as shengji

    for edge in (fiftyk.EDGE, shengji.EDGE):
        register_edge(edge)
    _BUILT_IN_LOADED.append(True)


_BUILT_IN_LOADED: list[bool] = []

__all__ = ["EDGES", "EdgeGame", "GenericEdge", "Payloads", "TypedEdge", "all_payloads", "edge_for",
           "register_edge"]
