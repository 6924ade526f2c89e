"""What every RPC of the referee shares: the call's plumbing, one `Edge` for all groups.

`RefereeService` is served by a few groups of RPCs, one module each, as a client sees them
(`play.py`, `tables.py`, `watch.py`, `audit.py`, `webhooks.py`; `servicer.py` composes them
into the one service the proto defines). Each group holds the `Edge`, the one object they
share: the application, the configuration, the worker pool, the feed hub, the metrics, the
lobby and the webhook store, and what every handler does with them — who the caller is,
which seat it acts for, running a use case on a worker before the caller's deadline.

`rpc` wraps a unary handler: the size and deadline checks, the request contract
(`requests.py`), and every rule or service error turned into a rich status in one place
(`service.grpc.errors.abort`). Use cases are synchronous (the event store's drivers are), so
they run on the bounded worker pool; the event loop only converts messages and streams.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Coroutine, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

import grpc

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import GameView
from fiftyk_referee.domain.observer import AUDITOR, SPECTATOR, SeatViewer, Viewer
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.feed import FeedHub
from fiftyk_referee.service.core.runner import Outcome
from fiftyk_referee.service.core.store import store_budget
from fiftyk_referee.service.core.workers import Workers
from fiftyk_referee.service.errors import (
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    ServiceError,
    ServiceReason,
    Unavailable,
)
from fiftyk_referee.service.grpc import auth
from fiftyk_referee.service.grpc.callers import CALLER
from fiftyk_referee.service.grpc.convert import table_to_proto
from fiftyk_referee.service.grpc.errors import abort
from fiftyk_referee.service.grpc.games import edge_for
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.paging import check_answer_size, response_budget
from fiftyk_referee.service.grpc.requests import check_request
from fiftyk_referee.service.ops.config import Config
from fiftyk_referee.service.ops.metrics import Metrics
from fiftyk_referee.service.platform.lobby import Lobby
from fiftyk_referee.service.platform.webhook_store import WebhookStore

Context = grpc.aio.ServicerContext[Any, Any]
T = TypeVar("T")
R = TypeVar("R")
G = TypeVar("G", bound="Rpcs")
# The request field a malformed-input rule error came from, per method (BadRequest details).
_TRANSCRIPT_FIELD: dict[str, str] = {reason: "transcript_json" for reason in (
    Reason.INVALID_TRANSCRIPT, Reason.INVALID_RULESET, Reason.INVALID_DEAL, Reason.UNKNOWN_CARD)}
REQUEST_FIELDS: dict[str, dict[str, str]] = {
    "CreateTable": {Reason.INVALID_RULESET: "ruleset"},
    "StartHand": {Reason.INVALID_DEAL: "deck"},
    "Play": {Reason.UNKNOWN_CARD: "cards"},
    "Act": {Reason.UNKNOWN_CARD: "cards", Reason.INVALID_ACTION: "kind"},
    "Adjudicate": _TRANSCRIPT_FIELD,
    "CloseTable": {Reason.INVALID_REASON: "reason"},
    "AbortTable": {Reason.INVALID_REASON: "reason"},
    "ReplaceSeat": {Reason.INVALID_SEAT: "seat"},
    "ReissueSeatToken": {Reason.INVALID_SEAT: "seat"},
}


class DeadlinePassed(Exception):
    """The caller's deadline passed while its call waited for a worker: nothing was done."""


# When the current call's client gives up (monotonic clock), for work queued on its behalf.
_DEADLINE: ContextVar[float | None] = ContextVar("deadline", default=None)


def deadline_of(context: Context) -> None:
    """Note when the current call's client gives up, for the work queued on its behalf."""
    remaining = context.time_remaining()
    _DEADLINE.set(None if remaining is None else time.monotonic() + remaining)


def request_id_of(request: Any) -> str | None:
    """A command's request id, None when the request names none."""
    return str(request.request_id) or None


def hand_to_proto(view: GameView) -> pb.HandView:
    """Any game's hand view as HandView, by its game's converter."""
    return edge_for(view.game).hand_to_proto(view)


def only_spectator(principal: auth.Principal) -> bool:
    """Whether the caller watches only by a spectator token (no seat, no key)."""
    return (principal.spectator is not None and principal.seat is None
            and not principal.audit and not principal.platform)


class Edge:
    """What the groups of RPCs share: the application and the call's plumbing."""

    def __init__(self, app: Referee, config: Config, executor: Workers, hub: FeedHub,
                 metrics: Metrics | None = None, lobby: Lobby | None = None,
                 webhooks: WebhookStore | None = None) -> None:
        self.app = app
        self.lobby = lobby
        self.webhooks = webhooks
        self.config = config
        self._executor = executor
        self.hub = hub
        self.metrics = metrics
        self._draining = False
        self.budget = response_budget(config.max_message_bytes)

    def drain(self) -> None:
        """The server is shutting down: refuse new calls, end the watch streams now (each
        waiting one wakes and ends UNAVAILABLE with SHUTTING_DOWN)."""
        self._draining = True
        self.hub.release()

    def check_running(self) -> None:
        if self._draining:
            raise Unavailable(ServiceReason.SHUTTING_DOWN,
                              "the server is shutting down; retry on another replica or later,"
                              " with the same request_id")

    def check_size(self, request: Any) -> None:
        size = request.ByteSize()
        if size > self.config.max_message_bytes:
            raise ResourceExhausted(
                ServiceReason.MESSAGE_TOO_LARGE,
                f"the request has {size} bytes; the limit is {self.config.max_message_bytes}")

    async def call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a use case on the worker pool, unless the caller's deadline passed meanwhile
        (a client that gave up must not find its command applied later). Its waits for the
        store share one budget from now (`store_budget`): the time spent queued for a
        worker and every recorder call's wait count against the same store timeout."""
        deadline = _DEADLINE.get()
        store_until = time.monotonic() + self.config.db_timeout_seconds

        def run() -> T:
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlinePassed
            with store_budget(store_until):
                return function(*args, **kwargs)

        return await self._executor.run(run)

    async def command(self, function: Callable[..., Outcome], *args: Any,
                      **kwargs: Any) -> Outcome:
        outcome = await self.call(function, *args, **kwargs)
        if not outcome.replayed:
            self.hub.poke()
        return outcome

    def principal(self, context: Context) -> auth.Principal:
        """Who the call is: as the outermost interceptor verified it (`CALLER`), else
        verified here. A call whose credential did not verify there (counted as anonymous)
        is verified again here, which refuses it with its reason."""
        caller = CALLER.get()
        if caller is not None and caller.authenticated:
            return caller.principal
        return auth.authenticate(context.invocation_metadata(), self.config)

    async def acting_seat(self, principal: auth.Principal, table_id: str,
                          named: int | None = None) -> int:
        """The seat a token acts for (it may name only its own), held by its player now
        with the seat's current token generation."""
        seat = auth.require_seat(principal, table_id, named)
        claim = principal.seat
        if claim is None:  # pragma: no cover - require_seat refused the call
            raise PermissionDenied(ServiceReason.SEAT_TOKEN_REQUIRED, "no seat token")
        await self.call(self.app.check_seat_token, table_id, seat, claim.player_id,
                        claim.generation)
        return seat

    async def table_access(self, principal: auth.Principal, table_id: str) -> None:
        """Any credential for the table; a seat token only while it is its seat's current
        (a spectator token has no generation to check)."""
        auth.require_table_access(principal, table_id)
        if principal.seat is not None:
            await self.acting_seat(principal, table_id)

    async def viewer(self, principal: auth.Principal, table_id: str,
                     named: int | None) -> Viewer:
        """Whose eyes the caller sees the table's hands with: its seat, the auditor's (or,
        for the audit role naming one, a seat's), or a spectator's. Only the audit role may
        name a seat it does not hold."""
        if principal.audit:
            return AUDITOR if named is None else SeatViewer(named)
        if principal.seat is not None and principal.seat.table_id == table_id:
            return SeatViewer(await self.acting_seat(principal, table_id, named))
        auth.require_table_access(principal, table_id)
        if named is not None:
            raise PermissionDenied(ServiceReason.AUDIT_REQUIRED,
                                   "only the audit role may view a seat it does not hold")
        return SPECTATOR

    def outcome_table(self, outcome: Outcome) -> pb.TableView:
        """The table a table command returned, as TableView."""
        if outcome.table is None:  # pragma: no cover - table commands return their table
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, "no such table")
        return table_to_proto(outcome.table.view())


class Rpcs:
    """A group of RefereeService's RPCs over the shared `Edge`."""

    def __init__(self, edge: Edge) -> None:
        self.edge = edge


def rpc(method: Callable[[G, Any, Context], Coroutine[Any, Any, R]],
        fields: Mapping[str, str] | None = None
        ) -> Callable[[G, Any, Context], Coroutine[Any, Any, R]]:
    """Map rule and service errors of a unary RPC to rich statuses; check size and deadline
    (`fields`: the request field each malformed-input reason came from, else the method's
    `REQUEST_FIELDS`)."""

    if fields is None:
        fields = REQUEST_FIELDS.get(method.__name__, {})

    @functools.wraps(method)
    async def wrapper(self: G, request: Any, context: Context) -> R:
        deadline_of(context)
        try:
            self.edge.check_running()
            self.edge.check_size(request)
            check_request(method.__name__, request)
            answer = await method(self, request, context)
            check_answer_size(answer, self.edge.config.max_message_bytes)
            return answer
        except (RuleError, ServiceError) as error:
            await abort(context, error, field=fields.get(error.reason))
        except DeadlinePassed:
            # The client has given up: gRPC answers DEADLINE_EXCEEDED itself (a status sent
            # from here could no longer be delivered), so end the call as cancelled.
            raise asyncio.CancelledError from None

    return wrapper


__all__ = ["Context", "DeadlinePassed", "Edge", "Rpcs", "hand_to_proto", "only_spectator",
           "request_id_of", "rpc"]
