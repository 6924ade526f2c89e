"""The RefereeService servicer: the groups of RPCs a client sees, composed into one service.

The proto defines one service, `fiftyk.referee.v1.RefereeService`; its RPCs are written in
groups, one module each, as a client meets them:

- `play.py`: dealing and acting in a hand (`StartHand`, `ContributeEntropy`, `Act` and its
  aliases), a seat's view of it (`GetHandView`, `ListLegalPlays`);
- `tables.py`: tables and seats (create, join, leave, close, abort, replace a seat,
  reissue its token) and reading them (`GetTable`, `GetScores`, `ListTables`);
- `watch.py`: the `WatchTable` stream and the spectators it serves (`IssueSpectatorToken`);
- `audit.py`: a hand's history, evidence and verification, rulings, the global feed;
- `webhooks.py`: the platform's webhook endpoints and their dead letters.

What they share (the application, the worker pool, who the caller is, the error mapping) is
`calls.Edge`. `RefereeServicer` is the groups composed over one `Edge`; every RPC of the
proto is served by exactly one group, checked when this module is imported: an RPC no group
serves, or two do, fails the server's start, not a client's first call. The one exception
is a hand action RPC no group serves (0.2's game-specific actions): the installed game that
claims it (`GameBundle.legacy_rpcs`) has it answered as `Act`; no game, UNIMPLEMENTED.
"""

from __future__ import annotations

import types
from collections.abc import Iterable

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.bundles import legacy_rpcs
from fiftyk_referee.service.core.feed import FeedHub
from fiftyk_referee.service.core.workers import Workers
from fiftyk_referee.service.grpc.audit import AuditRpcs
from fiftyk_referee.service.grpc.calls import Edge, Rpcs
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2_grpc as pb_grpc
from fiftyk_referee.service.grpc.play import PlayRpcs, legacy_handler
from fiftyk_referee.service.grpc.tables import TableRpcs
from fiftyk_referee.service.grpc.watch import WatchRpcs
from fiftyk_referee.service.grpc.webhooks import WebhookRpcs
from fiftyk_referee.service.ops.config import Config
from fiftyk_referee.service.ops.metrics import Metrics
from fiftyk_referee.service.platform.lobby import Lobby
from fiftyk_referee.service.platform.webhook_store import WebhookStore

SERVICE = pb.DESCRIPTOR.services_by_name["RefereeService"]
# The groups, in the order a client meets them; each a mixin over the shared `Edge`.
GROUPS: tuple[type[Rpcs], ...] = (PlayRpcs, TableRpcs, WatchRpcs, AuditRpcs, WebhookRpcs)


def serving(groups: Iterable[type[Rpcs]]) -> dict[str, type[Rpcs]]:
    """Each RPC of RefereeService -> the one group that defines its handler.

    Raises TypeError naming the RPCs no group serves, or that more than one does. A hand
    action RPC no group serves (`game_action_rpcs`) is left to the installed games.
    """
    groups = list(groups)
    served: dict[str, type[Rpcs]] = {}
    problems = []
    for method in SERVICE.methods:
        by = [group for group in groups if method.name in vars(group)]
        if len(by) == 1:
            served[method.name] = by[0]
        elif by or not _names_a_hand_action(method.name):
            names = ", ".join(group.__name__ for group in by) or "no group"
            problems.append(f"{method.name} (served by {names})")
    if problems:
        raise TypeError("every RPC of RefereeService is served by exactly one group: "
                        + "; ".join(problems))
    return served


def _names_a_hand_action(name: str) -> bool:
    """Whether the RPC's request names a hand action: a table, a hand and cards."""
    fields = SERVICE.methods_by_name[name].input_type.fields_by_name
    return {"table_id", "hand_id", "cards"} <= set(fields)


def game_action_rpcs(groups: Iterable[type[Rpcs]]) -> frozenset[str]:
    """The hand action RPCs no group serves: a game's 0.2 RPCs (`GameBundle.legacy_rpcs`),
    answered as `Act` when a game that claims them is installed, else UNIMPLEMENTED."""
    served = serving(groups)
    return frozenset(m.name for m in SERVICE.methods if m.name not in served)


class RefereeServicer(PlayRpcs, TableRpcs, WatchRpcs, AuditRpcs, WebhookRpcs,
                      pb_grpc.RefereeServiceServicer):
    """fiftyk.referee.v1.RefereeService over the `Referee` application: the groups, composed.

    The generated base class answers UNIMPLEMENTED for any RPC the groups leave out; `serving`
    (checked below, when this module is imported) makes sure there is none.
    """

    def __init__(self, app: Referee, config: Config, executor: Workers, hub: FeedHub,
                 metrics: Metrics | None = None, lobby: Lobby | None = None,
                 webhooks: WebhookStore | None = None) -> None:
        super().__init__(Edge(app, config, executor, hub, metrics, lobby, webhooks))
        # The installed games' 0.2 RPCs for their own actions: handlers of this servicer.
        open_rpcs = game_action_rpcs(GROUPS)
        for route in legacy_rpcs().values():
            if route.rpc not in open_rpcs:
                raise ValueError(f"a game claims {route.rpc}, which is not a hand action RPC"
                                 " left to the games")
            setattr(self, route.rpc, types.MethodType(legacy_handler(route), self))

    def drain(self) -> None:
        """The server is shutting down: refuse new calls, end the watch streams now (each
        waiting one wakes and ends UNAVAILABLE with SHUTTING_DOWN)."""
        self.edge.drain()


serving(GROUPS)

__all__ = ["GROUPS", "RefereeServicer", "game_action_rpcs", "serving"]
