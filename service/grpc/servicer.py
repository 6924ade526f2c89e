"""The RefereeService servicer: authenticate, convert at the edge, call one use case.

Use cases are synchronous (the event store's drivers are), so they run on a bounded thread
pool; the event loop only converts messages and streams. Every rule or service error is
turned into a rich status in one place (`service.grpc.errors.abort`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple, TypeVar
from uuid import UUID

import grpc
from google.protobuf import timestamp_pb2

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.events import PublicEvent
from fiftyk_referee.domain.game import MAX_KIND_LENGTH, PASS, PLAY, RESIGN, Action, GameView
from fiftyk_referee.domain.games import DEFAULT_GAME, adjudicate
from fiftyk_referee.domain.observer import AUDITOR, SPECTATOR, SeatViewer, Viewer, seat_of
from fiftyk_referee.domain.table import Table, TableView
from fiftyk_referee.domain.table_events import (
    HandRecorded,
    HandStarted,
    SeatLeft,
    SeatReplaced,
    SeatTokenReissued,
)
from fiftyk_referee.service.core.application import FeedEvent, FeedPage, Outcome, Referee, parse_id
from fiftyk_referee.service.core.commands import Act
from fiftyk_referee.service.core.feed import FeedHub
from fiftyk_referee.service.core.store import store_budget
from fiftyk_referee.service.core.workers import Workers
from fiftyk_referee.service.errors import (
    FieldViolation,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    ServiceError,
    ServiceReason,
    Unauthenticated,
    Unavailable,
)
from fiftyk_referee.service.grpc import auth
from fiftyk_referee.service.grpc.callers import CALLER
from fiftyk_referee.service.grpc.convert import (
    action_kinds_to_proto,
    entropy_direct_from_proto,
    entropy_window_from_proto,
    legal_play_to_proto,
    options_from_proto,
    spectators_from_proto,
    spectators_to_proto,
    table_to_proto,
)
from fiftyk_referee.service.grpc.convert_platform import (
    STATE_NAMES,
    dead_letter_to_proto,
    summary_to_proto,
    webhook_to_proto,
)
from fiftyk_referee.service.grpc.errors import abort
from fiftyk_referee.service.grpc.events import event_to_proto
from fiftyk_referee.service.grpc.games import edge_for
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2_grpc as pb_grpc
from fiftyk_referee.service.grpc.paging import check_answer_size, fitting, response_budget
from fiftyk_referee.service.grpc.requests import check_request, missing, one_of
from fiftyk_referee.service.grpc.stream_views import StreamAggregates
from fiftyk_referee.service.ops.config import Config
from fiftyk_referee.service.ops.metrics import Metrics
from fiftyk_referee.service.platform.lobby import (
    Lobby,
    TablePage,
    TableQuery,
    decode_page_token,
    encode_page_token,
    states_of,
)
from fiftyk_referee.service.platform.process_store import STORE_ERRORS, unavailable
from fiftyk_referee.service.platform.spectating import Held, SpectatorDelay
from fiftyk_referee.service.platform.webhooks import DeadLetter, Endpoint, WebhookStore

Context = grpc.aio.ServicerContext[Any, Any]
# The kinds the Declare and Bury aliases name (Shengji's): the edge's alias table, the game
# validates them like any other kind.
DECLARE, BURY = "declare", "bury"
T = TypeVar("T")
R = TypeVar("R")
DEFAULT_LEGAL_PLAYS = 200
WATCH_IDLE_SECONDS = 1.0
DEAD_LETTER_PAGE = 1_000  # dead letters read per ListWebhookDeadLetters page, at most
EXPIRY_SLACK_SECONDS = 0.01  # a stream wakes this long after its token's expiry at the least
# A watch message the client has not taken in this long ends its stream: gRPC's flow
# control keeps a stalled stream's buffer small, but the stream would hold its watch slot
# (and its feed position) for as long as the client lets it sit.
WATCH_SEND_TIMEOUT_SECONDS = 30.0
WATCHDOG_PERIOD_SECONDS = 0.25
# The request field a malformed-input rule error came from, per method (BadRequest details).
_TRANSCRIPT_FIELD: dict[str, str] = {reason: "transcript_json" for reason in (
    Reason.INVALID_TRANSCRIPT, Reason.INVALID_RULESET, Reason.INVALID_DEAL, Reason.UNKNOWN_CARD)}
REQUEST_FIELDS: dict[str, dict[str, str]] = {
    "CreateTable": {Reason.INVALID_RULESET: "ruleset"},
    "StartHand": {Reason.INVALID_DEAL: "deck"},
    "Play": {Reason.UNKNOWN_CARD: "cards"},
    "Act": {Reason.UNKNOWN_CARD: "cards", Reason.INVALID_ACTION: "kind"},
    "Declare": {Reason.UNKNOWN_CARD: "cards"},
    "Bury": {Reason.UNKNOWN_CARD: "cards"},
    "Adjudicate": _TRANSCRIPT_FIELD,
    "CloseTable": {Reason.INVALID_REASON: "reason"},
    "AbortTable": {Reason.INVALID_REASON: "reason"},
    "ReplaceSeat": {Reason.INVALID_SEAT: "seat"},
    "ReissueSeatToken": {Reason.INVALID_SEAT: "seat"},
}


def _rpc(method: Callable[[RefereeServicer, Any, Context], Coroutine[Any, Any, R]]
         ) -> Callable[[RefereeServicer, Any, Context], Coroutine[Any, Any, R]]:
    """Map rule and service errors of a unary RPC to rich statuses; check size and deadline."""

    fields = REQUEST_FIELDS.get(method.__name__, {})

    @functools.wraps(method)
    async def wrapper(self: RefereeServicer, request: Any, context: Context) -> R:
        _deadline_of(context)
        try:
            self._check_running()
            self._check_size(request)
            check_request(method.__name__, request)
            answer = await method(self, request, context)
            check_answer_size(answer, self._config.max_message_bytes)
            return answer
        except (RuleError, ServiceError) as error:
            await abort(context, error, field=fields.get(error.reason))
        except DeadlinePassed:
            # The client has given up: gRPC answers DEADLINE_EXCEEDED itself (a status sent
            # from here could no longer be delivered), so end the call as cancelled.
            raise asyncio.CancelledError from None

    return wrapper


class DeadlinePassed(Exception):
    """The caller's deadline passed while its call waited for a worker: nothing was done."""


# When the current call's client gives up (monotonic clock), for work queued on its behalf.
_DEADLINE: ContextVar[float | None] = ContextVar("deadline", default=None)


def _token_expiry(principal: auth.Principal, table_id: str) -> tuple[datetime, str] | None:
    """When the token a stream of `table_id` was let in by expires, and what it is; None when
    a key let it in (keys do not expire)."""
    if principal.audit or principal.platform:
        return None
    if principal.seat is not None and principal.seat.table_id == table_id:
        return principal.seat.expires, "seat token"
    if principal.spectator is not None:
        return principal.spectator.expires, "spectator token"
    return None  # pragma: no cover - require_table_access let nothing else in


def _check_not_expired(expires: datetime, what: str) -> None:
    """End a stream whose token expired (UNAUTHENTICATED, TOKEN_EXPIRED)."""
    if datetime.now(UTC) >= expires:
        raise Unauthenticated(ServiceReason.TOKEN_EXPIRED,
                              f"the {what} expired at {expires.isoformat()}, and the stream"
                              " with it: reconnect with a new token and the last position"
                              " received")


def _only_spectator(principal: auth.Principal) -> bool:
    """Whether the caller watches only by a spectator token (no seat, no key)."""
    return (principal.spectator is not None and principal.seat is None
            and not principal.audit and not principal.platform)


class _SpectatorCount:
    """Open spectator streams per table (this process), against each table's limit."""

    def __init__(self) -> None:
        self._open: dict[str, int] = {}

    def enter(self, table_id: str, limit: int) -> None:
        """Hold a place (ResourceExhausted LIMIT_EXCEEDED when the table is full)."""
        count = self._open.get(table_id, 0)
        if limit and count >= limit:
            raise ResourceExhausted(
                ServiceReason.LIMIT_EXCEEDED,
                f"this table admits {limit} spectators at once; try again later",
                metadata={"scope": "spectators", "limit": str(limit)})
        self._open[table_id] = count + 1

    def leave(self, table_id: str) -> None:
        """Give a place back."""
        count = self._open.get(table_id, 0) - 1
        if count > 0:
            self._open[table_id] = count
        else:
            self._open.pop(table_id, None)


def _deadline_of(context: Context) -> None:
    remaining = context.time_remaining()
    _DEADLINE.set(None if remaining is None else time.monotonic() + remaining)


def _request_id(request: Any) -> str | None:
    return str(request.request_id) or None


@dataclass
class _Sending:
    """When the stream's pending message was handed to gRPC (None: nothing pending)."""

    started: float | None = None


class ActAnswer(NamedTuple):
    """What a hand action answers: the seat's view after it, the versions, a replay."""

    hand: pb.HandView
    version: int
    replayed: bool
    table_version: int


def hand_to_proto(view: GameView) -> pb.HandView:
    """Any game's hand view as HandView, by its game's converter."""
    return edge_for(view.game).hand_to_proto(view)


class RefereeServicer(pb_grpc.RefereeServiceServicer):
    """fiftyk.referee.v1.RefereeService over the `Referee` application."""

    def __init__(self, app: Referee, config: Config, executor: Workers, hub: FeedHub,
                 metrics: Metrics | None = None, lobby: Lobby | None = None,
                 webhooks: WebhookStore | None = None) -> None:
        self._app = app
        self._lobby = lobby
        self._webhooks = webhooks
        self._config = config
        self._executor = executor
        self._hub = hub
        self._metrics = metrics
        self._draining = False
        self._spectators = _SpectatorCount()
        self.watch_send_timeout = WATCH_SEND_TIMEOUT_SECONDS
        self._budget = response_budget(config.max_message_bytes)

    # -- plumbing ---------------------------------------------------------------------------

    def drain(self) -> None:
        """The server is shutting down: refuse new calls, end the watch streams now (each
        waiting one wakes and ends UNAVAILABLE with SHUTTING_DOWN)."""
        self._draining = True
        self._hub.release()

    def _check_running(self) -> None:
        if self._draining:
            raise Unavailable(ServiceReason.SHUTTING_DOWN,
                              "the server is shutting down; retry on another replica or later,"
                              " with the same request_id")

    def _check_size(self, request: Any) -> None:
        size = request.ByteSize()
        if size > self._config.max_message_bytes:
            raise ResourceExhausted(
                ServiceReason.MESSAGE_TOO_LARGE,
                f"the request has {size} bytes; the limit is {self._config.max_message_bytes}")

    async def _call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run a use case on the worker pool, unless the caller's deadline passed meanwhile
        (a client that gave up must not find its command applied later). Its waits for the
        store share one budget from now (`store_budget`): the time spent queued for a
        worker and every recorder call's wait count against the same store timeout."""
        deadline = _DEADLINE.get()
        store_until = time.monotonic() + self._config.db_timeout_seconds

        def run() -> T:
            if deadline is not None and time.monotonic() >= deadline:
                raise DeadlinePassed
            with store_budget(store_until):
                return function(*args, **kwargs)

        return await self._executor.run(run)

    async def _command(self, function: Callable[..., Outcome], *args: Any,
                       **kwargs: Any) -> Outcome:
        outcome = await self._call(function, *args, **kwargs)
        if not outcome.replayed:
            self._hub.poke()
        return outcome

    def _principal(self, context: Context) -> auth.Principal:
        """Who the call is: as the outermost interceptor verified it (`CALLER`), else
        verified here. A call whose credential did not verify there (counted as anonymous)
        is verified again here, which refuses it with its reason."""
        caller = CALLER.get()
        if caller is not None and caller.authenticated:
            return caller.principal
        return auth.authenticate(context.invocation_metadata(), self._config)

    @staticmethod
    def _table_message(view: TableView) -> pb.TableView:
        return table_to_proto(view)

    async def _acting_seat(self, principal: auth.Principal, table_id: str,
                           named: int | None = None) -> int:
        """The seat a token acts for (it may name only its own), held by its player now
        with the seat's current token generation."""
        seat = auth.require_seat(principal, table_id, named)
        claim = principal.seat
        if claim is None:  # pragma: no cover - require_seat refused the call
            raise PermissionDenied(ServiceReason.SEAT_TOKEN_REQUIRED, "no seat token")
        await self._call(self._app.check_seat_token, table_id, seat, claim.player_id,
                         claim.generation)
        return seat

    async def _table_access(self, principal: auth.Principal, table_id: str) -> None:
        """Any credential for the table; a seat token only while it is its seat's current
        (a spectator token has no generation to check)."""
        auth.require_table_access(principal, table_id)
        if principal.seat is not None:
            await self._acting_seat(principal, table_id)

    async def _seat_token(self, outcome: Outcome, player_id: str
                          ) -> tuple[str, timestamp_pb2.Timestamp]:
        """A seat token for the outcome's seat, of the seat's token generation then."""
        if outcome.table is None or outcome.seat is None:  # pragma: no cover
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, "no such table")
        token = auth.issue_seat_token(
            self._config.token_secret, outcome.table_id, outcome.seat, player_id,
            ttl_seconds=self._config.token_ttl_seconds,
            generation=outcome.table.token_generation(outcome.seat))
        claim = auth.verify_seat_token(self._config.token_secret, token)
        expires = timestamp_pb2.Timestamp()
        expires.FromDatetime(claim.expires)
        return token, expires

    # -- commands ---------------------------------------------------------------------------

    @_rpc
    async def CreateTable(self, request: pb.CreateTableRequest, context: Context
                          ) -> pb.CreateTableResponse:
        auth.require_platform(self._principal(context))
        if not request.HasField("ruleset") or not request.ruleset.preset:
            raise missing("ruleset.preset")
        spectators = (spectators_from_proto(request.spectators, request.players)
                      if request.HasField("spectators") else None)
        outcome = await self._command(
            self._app.create_table, request.ruleset.preset,
            options_from_proto(request.ruleset.options), request.players,
            allow_preset_deck=request.allow_preset_deck, name=request.name,
            request_id=_request_id(request), game=request.ruleset.game or DEFAULT_GAME,
            spectators=spectators, entropy_window=entropy_window_from_proto(request),
            entropy_direct=entropy_direct_from_proto(request))
        table = outcome.table
        if table is None:  # pragma: no cover - create_table always returns its table
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, "the table was not created")
        return pb.CreateTableResponse(table=self._table_message(table.view()),
                                      version=outcome.version, replayed=outcome.replayed)

    @_rpc
    async def JoinTable(self, request: pb.JoinTableRequest, context: Context
                        ) -> pb.JoinTableResponse:
        auth.require_platform(self._principal(context))
        if not request.player_id:
            raise missing("player_id")
        seat = request.seat if request.HasField("seat") else None
        outcome = await self._command(self._app.join_table, request.table_id,
                                      request.player_id, seat,
                                      request_id=_request_id(request))
        if outcome.table is None or outcome.seat is None:  # pragma: no cover
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, "no such table")
        token, expires = await self._seat_token(outcome, request.player_id)
        return pb.JoinTableResponse(
            table=self._table_message(outcome.table.view()), seat=outcome.seat,
            seat_token=token, seat_token_expires_at=expires, version=outcome.version,
            replayed=outcome.replayed)

    @_rpc
    async def IssueSpectatorToken(self, request: pb.IssueSpectatorTokenRequest,
                                  context: Context) -> pb.IssueSpectatorTokenResponse:
        auth.require_platform(self._principal(context))
        longest = self._config.token_ttl_seconds
        if request.ttl_seconds > longest:
            raise InvalidArgument(
                ServiceReason.INVALID_REQUEST, f"ttl_seconds must be at most {longest}",
                field_violations=[FieldViolation("ttl_seconds", f"at most {longest}")])
        table = await self._call(self._app.get_table, request.table_id)
        token = auth.issue_spectator_token(self._config.token_secret, str(table.id),
                                           ttl_seconds=request.ttl_seconds or longest)
        claim = auth.verify_spectator_token(self._config.token_secret, token)
        expires = timestamp_pb2.Timestamp()
        expires.FromDatetime(claim.expires)
        if self._metrics is not None:
            self._metrics.spectator_token_issued()
        return pb.IssueSpectatorTokenResponse(
            spectator_token=token, expires_at=expires,
            spectators=spectators_to_proto(table.spectators))

    @_rpc
    async def LeaveTable(self, request: pb.LeaveTableRequest, context: Context
                         ) -> pb.LeaveTableResponse:
        principal = self._principal(context)
        if principal.platform:
            if not request.HasField("seat"):
                raise missing("seat")
            seat = request.seat
        else:
            seat = await self._acting_seat(principal, request.table_id,
                                           request.seat if request.HasField("seat") else None)
        outcome = await self._command(self._app.leave_table, request.table_id, seat,
                                      request_id=_request_id(request))
        if outcome.table is None:  # pragma: no cover
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, "no such table")
        return pb.LeaveTableResponse(table=self._table_message(outcome.table.view()),
                                     version=outcome.version, replayed=outcome.replayed)

    @_rpc
    async def StartHand(self, request: pb.StartHandRequest, context: Context
                        ) -> pb.StartHandResponse:
        principal = self._principal(context)
        auth.require_deck_dealer(principal, bool(request.deck))
        seat: int | None = None
        if not principal.platform:
            seat = await self._acting_seat(principal, request.table_id)
        outcome = await self._command(self._app.start_hand, request.table_id,
                                      deck=list(request.deck) or None,
                                      request_id=_request_id(request))
        response = pb.StartHandResponse(table=self._outcome_table(outcome),
                                        version=outcome.version, replayed=outcome.replayed)
        if outcome.hand is not None:  # else it opened a seat-entropy draw
            view = outcome.hand.view(SeatViewer(seat) if seat is not None else SPECTATOR)
            response.hand.CopyFrom(hand_to_proto(view))
        return response

    @_rpc
    async def ContributeEntropy(self, request: pb.ContributeEntropyRequest, context: Context
                                ) -> pb.ContributeEntropyResponse:
        principal = self._principal(context)
        seat = auth.require_seat(principal, request.table_id)
        claim = principal.seat
        if claim is None:  # pragma: no cover - require_seat refused the call
            raise PermissionDenied(ServiceReason.SEAT_TOKEN_REQUIRED, "no seat token")
        one_of(request, "entropy", "commitment")
        outcome = await self._command(
            self._app.contribute_entropy, request.table_id, seat, request.entropy,
            commitment=request.commitment or None,
            request_id=_request_id(request), player_id=claim.player_id,
            token_generation=claim.generation)
        receipt = self._app.entropy_receipt(outcome)
        response = pb.ContributeEntropyResponse(
            table=self._outcome_table(outcome), version=outcome.current_table_version,
            replayed=outcome.replayed,
            receipt_json=json.dumps(receipt, ensure_ascii=False) if receipt else "")
        if outcome.hand is not None:  # this contribution dealt the hand
            response.hand.CopyFrom(hand_to_proto(outcome.hand.view(SeatViewer(seat))))
        return response

    async def _act(self, request: Any, context: Context, kind: str, *,
                   names_cards: bool, value: str | None = None,
                   validate_only: bool = False) -> ActAnswer:
        """Every hand action's one path: the seat's token, one `Act` command, its view."""
        principal = self._principal(context)
        # The hand knows who was seated at its deal, so the application checks the holder
        # while it loads the hand, and the token's generation against the table it reads.
        seat = auth.require_seat(principal, request.table_id)
        claim = principal.seat
        player = claim.player_id if claim is not None else None
        command = Act(
            table_id=request.table_id, hand_id=request.hand_id or None, seat=seat,
            action=Action(kind, tuple(request.cards) if names_cards else (), value),
            player_id=player,
            expected_version=(request.expected_version
                              if request.HasField("expected_version") else None),
            names_cards=names_cards,
            token_generation=claim.generation if claim is not None else None,
            request_id=_request_id(request))
        # A dry run's outcome is the hand as it stands: its view shows nothing new.
        run = self._app.check if validate_only else self._app.execute

        def act_and_view() -> ActAnswer:
            # The view is built on the worker too: the event loop is the busiest thread.
            outcome = run(command)
            if outcome.hand is None:  # pragma: no cover - hand commands return their hand
                raise NotFound(ServiceReason.HAND_NOT_FOUND, "no such hand")
            return ActAnswer(hand_to_proto(outcome.hand.view(SeatViewer(seat))),
                             outcome.version, outcome.replayed,
                             outcome.current_table_version)

        answer = await self._call(act_and_view)
        if not answer.replayed and not validate_only:
            self._hub.poke()
        return answer

    @_rpc
    async def Act(self, request: pb.ActRequest, context: Context) -> pb.ActResponse:
        kind = request.kind
        if not kind:
            raise missing("kind")
        if len(kind) > MAX_KIND_LENGTH or not kind.replace("_", "").isalpha():
            raise RuleError(Reason.INVALID_ACTION,
                            f"an action's kind is a short word such as \"play\", not"
                            f" {kind[:MAX_KIND_LENGTH]!r}")
        answer = await self._act(request, context, kind, names_cards=True,
                                 value=request.value if request.HasField("value") else None,
                                 validate_only=request.validate_only)
        return pb.ActResponse(hand=answer.hand, version=answer.version,
                              replayed=answer.replayed, table_version=answer.table_version,
                              validated=request.validate_only)

    @_rpc
    async def Play(self, request: pb.PlayRequest, context: Context) -> pb.PlayResponse:
        if not request.cards:
            raise missing("cards")
        answer = await self._act(request, context, PLAY, names_cards=True)
        return pb.PlayResponse(hand=answer.hand, version=answer.version,
                               replayed=answer.replayed,
                               table_version=answer.table_version)

    @_rpc
    async def Pass(self, request: pb.PassRequest, context: Context) -> pb.PassResponse:
        answer = await self._act(request, context, PASS, names_cards=False)
        return pb.PassResponse(hand=answer.hand, version=answer.version,
                               replayed=answer.replayed,
                               table_version=answer.table_version)

    @_rpc
    async def Resign(self, request: pb.ResignRequest, context: Context) -> pb.ResignResponse:
        answer = await self._act(request, context, RESIGN, names_cards=False)
        return pb.ResignResponse(hand=answer.hand, version=answer.version,
                                 replayed=answer.replayed,
                                 table_version=answer.table_version)

    @_rpc
    async def Declare(self, request: pb.DeclareRequest, context: Context) -> pb.DeclareResponse:
        window = str(request.window) if request.HasField("window") else None
        answer = await self._act(request, context, DECLARE, names_cards=True, value=window)
        return pb.DeclareResponse(hand=answer.hand, version=answer.version,
                                  replayed=answer.replayed,
                                  table_version=answer.table_version)

    @_rpc
    async def Bury(self, request: pb.BuryRequest, context: Context) -> pb.BuryResponse:
        answer = await self._act(request, context, BURY, names_cards=True)
        return pb.BuryResponse(hand=answer.hand, version=answer.version,
                               replayed=answer.replayed,
                               table_version=answer.table_version)

    # -- the table's lifecycle --------------------------------------------------------------

    @_rpc
    async def CloseTable(self, request: pb.CloseTableRequest, context: Context
                         ) -> pb.CloseTableResponse:
        auth.require_platform(self._principal(context))
        outcome = await self._command(self._app.close_table, request.table_id, request.reason,
                                      request_id=_request_id(request))
        return pb.CloseTableResponse(table=self._outcome_table(outcome),
                                     version=outcome.version, replayed=outcome.replayed)

    @_rpc
    async def AbortTable(self, request: pb.AbortTableRequest, context: Context
                         ) -> pb.AbortTableResponse:
        auth.require_platform(self._principal(context))
        outcome = await self._command(self._app.abort_table, request.table_id, request.reason,
                                      request_id=_request_id(request))
        response = pb.AbortTableResponse(table=self._outcome_table(outcome),
                                         version=outcome.version, replayed=outcome.replayed)
        if outcome.detail:
            response.voided_hand_id = outcome.detail
        return response

    @_rpc
    async def ReplaceSeat(self, request: pb.ReplaceSeatRequest, context: Context
                          ) -> pb.ReplaceSeatResponse:
        auth.require_platform(self._principal(context))
        outcome = await self._command(self._app.replace_seat, request.table_id, request.seat,
                                      request.player_id, request_id=_request_id(request))
        token, expires = await self._seat_token(outcome, request.player_id)
        return pb.ReplaceSeatResponse(
            table=self._outcome_table(outcome), seat=request.seat, seat_token=token,
            seat_token_expires_at=expires, version=outcome.version,
            replayed=outcome.replayed)

    @_rpc
    async def ReissueSeatToken(self, request: pb.ReissueSeatTokenRequest, context: Context
                               ) -> pb.ReissueSeatTokenResponse:
        auth.require_platform(self._principal(context))
        outcome = await self._command(self._app.reissue_seat_token, request.table_id,
                                      request.seat, request_id=_request_id(request))
        table = outcome.table
        player = table.seats[request.seat] if table is not None else None
        if player is None:  # pragma: no cover - a reissue needs a taken seat
            raise RuleError(Reason.SEAT_EMPTY, f"seat {request.seat} is empty")
        token, expires = await self._seat_token(outcome, player)
        return pb.ReissueSeatTokenResponse(
            table=self._outcome_table(outcome), seat=request.seat, seat_token=token,
            seat_token_expires_at=expires, version=outcome.version,
            replayed=outcome.replayed)

    def _outcome_table(self, outcome: Outcome) -> pb.TableView:
        if outcome.table is None:  # pragma: no cover - table commands return their table
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, "no such table")
        return self._table_message(outcome.table.view())

    # -- queries ----------------------------------------------------------------------------

    @_rpc
    async def GetTable(self, request: pb.GetTableRequest, context: Context
                       ) -> pb.GetTableResponse:
        await self._table_access(self._principal(context), request.table_id)
        table = await self._call(self._app.get_table, request.table_id)
        return pb.GetTableResponse(table=self._table_message(table.view()))

    async def _viewer(self, principal: auth.Principal, table_id: str,
                      named: int | None) -> Viewer:
        """Whose eyes the caller sees the table's hands with: its seat, the auditor's (or,
        for the audit role naming one, a seat's), or a spectator's. Only the audit role may
        name a seat it does not hold."""
        if principal.audit:
            return AUDITOR if named is None else SeatViewer(named)
        if principal.seat is not None and principal.seat.table_id == table_id:
            return SeatViewer(await self._acting_seat(principal, table_id, named))
        auth.require_table_access(principal, table_id)
        if named is not None:
            raise PermissionDenied(ServiceReason.AUDIT_REQUIRED,
                                   "only the audit role may view a seat it does not hold")
        return SPECTATOR

    async def _view_for(self, table_id: str, hand_id: str | None, viewer: Viewer) -> Any:
        """The named hand (else the table's current, else last) as `viewer` sees it."""
        if viewer is SPECTATOR and not hand_id:
            table = await self._call(self._app.get_table, table_id)
            if not table.hand_ids:
                raise NotFound(ServiceReason.HAND_NOT_FOUND, "no hand has been dealt here")
        return await self._call(self._app.hand_view, table_id, hand_id, viewer)

    @_rpc
    async def GetHandView(self, request: pb.GetHandViewRequest, context: Context
                          ) -> pb.GetHandViewResponse:
        named = request.seat if request.HasField("seat") else None
        principal = self._principal(context)
        viewer = await self._viewer(principal, request.table_id, named)
        if _only_spectator(principal):
            table = await self._call(self._app.get_table, request.table_id)
            if table.spectators.delayed:
                # The hand as it stands now would show what the delay holds back.
                raise PermissionDenied(
                    ServiceReason.SPECTATOR_DELAYED,
                    "this table delays its spectators: follow it with WatchTable")
        message = hand_to_proto(await self._view_for(request.table_id, request.hand_id or None,
                                                     viewer))
        seat = seat_of(viewer)
        if request.include_legal_plays and seat is not None:
            legal, _ = await self._call(self._app.legal_actions, request.table_id,
                                        request.hand_id or None, seat,
                                        request.max_legal_plays or DEFAULT_LEGAL_PLAYS)
            message.legal_plays.extend(legal_play_to_proto(p) for p in legal.plays)
            message.legal_plays_truncated = legal.truncated
        return pb.GetHandViewResponse(hand=message)

    @_rpc
    async def ListLegalPlays(self, request: pb.ListLegalPlaysRequest, context: Context
                             ) -> pb.ListLegalPlaysResponse:
        seat = await self._acting_seat(self._principal(context), request.table_id)
        legal, version = await self._call(self._app.legal_actions, request.table_id,
                                          request.hand_id or None, seat,
                                          request.max_plays or DEFAULT_LEGAL_PLAYS)
        return pb.ListLegalPlaysResponse(
            plays=[legal_play_to_proto(p) for p in legal.plays],
            may_pass=legal.may_pass, truncated=legal.truncated, version=version,
            constraints=legal.constraints, actions=action_kinds_to_proto(legal.kinds),
            kinds=sorted(legal.kinds),
            requirements=[pb.Requirement(kind=r.kind, count=r.count, group=r.group,
                                         width=r.width, length=r.length, cards=r.cards)
                          for r in legal.requirements])

    @_rpc
    async def GetScores(self, request: pb.GetScoresRequest, context: Context
                        ) -> pb.GetScoresResponse:
        await self._table_access(self._principal(context), request.table_id)
        sheet = await self._call(self._app.scores, request.table_id)
        table = await self._call(self._app.get_table, request.table_id)
        table_message = self._table_message(table.view())
        hands = []
        for row in sheet.hands:
            score = pb.HandScore(hand_id=row.hand_id, hand_number=row.number)
            edge_for(row.game).fill_score(row.result, score)
            hands.append(score)
        return pb.GetScoresResponse(hands=hands, totals=list(table_message.scores),
                                    match_over=sheet.match_over, version=sheet.version)

    @_rpc
    async def GetHandHistory(self, request: pb.GetHandHistoryRequest, context: Context
                             ) -> pb.GetHandHistoryResponse:
        auth.require_audit(self._principal(context))
        page = await self._call(self._app.hand_history, request.hand_id,
                                after_version=request.after_version, limit=request.limit)
        events = [event_to_proto(e, e.public(AUDITOR)) for e in page.events]
        kept = fitting(events, self._budget)
        return pb.GetHandHistoryResponse(events=events[:kept],
                                         has_more=page.has_more or kept < len(events))

    @_rpc
    async def GetHandAt(self, request: pb.GetHandAtRequest, context: Context
                        ) -> pb.GetHandAtResponse:
        auth.require_audit(self._principal(context))
        if not request.version:
            raise missing("version")
        hand = await self._call(self._app.hand_at, request.hand_id, request.version)
        return pb.GetHandAtResponse(hand=hand_to_proto(hand.view(AUDITOR)))

    @_rpc
    async def ExportTranscript(self, request: pb.ExportTranscriptRequest, context: Context
                               ) -> pb.ExportTranscriptResponse:
        auth.require_audit(self._principal(context))
        since = request.since_size if request.HasField("since_size") else None
        evidence = await self._call(self._app.export_evidence, request.hand_id,
                                    since_size=since)
        return pb.ExportTranscriptResponse(
            transcript_json=json.dumps(evidence["transcript"]),
            evidence_json=json.dumps(evidence, ensure_ascii=False))

    @_rpc
    async def VerifyHand(self, request: pb.VerifyHandRequest, context: Context
                         ) -> pb.VerifyHandResponse:
        auth.require_audit(self._principal(context))
        report = await self._call(self._app.verify_hand, request.hand_id)
        return pb.VerifyHandResponse(ok=report.ok, checks=[
            pb.VerifyCheck(check=line.check, status=line.status, detail=line.detail)
            for line in report.lines])

    @_rpc
    async def Adjudicate(self, request: pb.AdjudicateRequest, context: Context
                         ) -> pb.AdjudicateResponse:
        principal = self._principal(context)
        if principal.is_anonymous:
            auth.require_platform(principal)  # raises MISSING_CREDENTIALS
        try:
            data = json.loads(request.transcript_json)
        except ValueError as error:  # JSONDecodeError, or an integer over 4,300 digits
            raise InvalidArgument(ServiceReason.INVALID_REQUEST,
                                  f"transcript_json is not JSON: {error}",
                                  field_violations=[FieldViolation("transcript_json",
                                                                   "not JSON")]) from error
        except RecursionError:
            # A transcript is a few levels deep; thousands of nested brackets are an attack.
            raise InvalidArgument(ServiceReason.INVALID_REQUEST,
                                  "transcript_json is nested too deeply to be a transcript",
                                  field_violations=[FieldViolation("transcript_json",
                                                                   "nested too deeply")]
                                  ) from None
        result = await self._call(adjudicate, data)
        ruling = self._app.signed_ruling(request.transcript_json, result)
        return pb.AdjudicateResponse(result_json=json.dumps(result, ensure_ascii=False),
                                     signed_ruling_json=json.dumps(ruling, ensure_ascii=False))

    @_rpc
    async def ReadEvents(self, request: pb.ReadEventsRequest, context: Context
                         ) -> pb.ReadEventsResponse:
        principal = self._principal(context)
        # The platform reads what a spectator sees; the audit role reads every card.
        if principal.audit:
            viewer: Viewer = AUDITOR
        else:
            auth.require_platform(principal)
            viewer = SPECTATOR

        def read() -> tuple[list[pb.Event], FeedPage]:
            page = self._app.read_events(request.after_position, request.limit,
                                         list(request.topics))
            return [event_to_proto(e, e.public(viewer)) for e in page.events], page

        events, page = await self._call(read)
        kept = fitting(events, self._budget)
        if kept < len(events):  # the rest is the next page's
            return pb.ReadEventsResponse(events=events[:kept],
                                         last_position=events[kept - 1].position,
                                         has_more=True)
        return pb.ReadEventsResponse(events=events, last_position=page.last_position,
                                     has_more=page.has_more)

    @_rpc
    async def ListTables(self, request: pb.ListTablesRequest, context: Context
                         ) -> pb.ListTablesResponse:
        auth.require_platform(self._principal(context))
        lobby = self._lobby
        if lobby is None:  # pragma: no cover - the composition root always builds one
            raise Unavailable(ServiceReason.STORE_UNAVAILABLE, "this server keeps no lobby")
        states = []
        for index, state in enumerate(request.states):
            if state not in STATE_NAMES:
                raise InvalidArgument(
                    ServiceReason.INVALID_REQUEST, f"states[{index}] is not a table state",
                    field_violations=[FieldViolation(f"states[{index}]",
                                                     "not a table state")])
            states.append(STATE_NAMES[state])
        query = TableQuery(game=request.game, preset=request.preset,
                           states=states_of(states), player_id=request.player_id,
                           page_size=request.page_size,
                           before_position=decode_page_token(request.page_token))

        def listing() -> TablePage:
            try:
                return lobby.list_tables(query)
            except STORE_ERRORS as error:
                raise unavailable(error) from error

        page = await self._call(listing)
        tables = [summary_to_proto(table) for table in page.tables]
        kept = fitting(tables, self._budget)
        next_before = page.tables[kept - 1].last_position if kept < len(tables) else (
            page.next_before)
        return pb.ListTablesResponse(
            tables=tables[:kept],
            next_page_token=encode_page_token(next_before) if next_before is not None else "",
            as_of_position=page.as_of_position)

    # -- webhooks ---------------------------------------------------------------------------

    def _webhook_store(self, context: Context) -> WebhookStore:
        auth.require_platform(self._principal(context))
        if self._webhooks is None:  # pragma: no cover - the composition root always builds one
            raise Unavailable(ServiceReason.STORE_UNAVAILABLE, "this server keeps no webhooks")
        return self._webhooks

    async def _store_call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A call on the process tables, a store that does not answer made UNAVAILABLE."""

        def run() -> T:
            try:
                return function(*args, **kwargs)
            except STORE_ERRORS as error:
                raise unavailable(error) from error

        return await self._call(run)

    @_rpc
    async def RegisterWebhook(self, request: pb.RegisterWebhookRequest, context: Context
                              ) -> pb.RegisterWebhookResponse:
        store = self._webhook_store(context)
        endpoint, replayed = await self._store_call(
            store.register, request.url, list(request.events), request.description,
            request_id=_request_id(request))
        return pb.RegisterWebhookResponse(webhook=webhook_to_proto(endpoint, 0),
                                          secret=endpoint.secret, replayed=replayed)

    @_rpc
    async def ListWebhooks(self, request: pb.ListWebhooksRequest, context: Context
                           ) -> pb.ListWebhooksResponse:
        store = self._webhook_store(context)

        def listing() -> tuple[int, list[Endpoint], dict[str, int]]:
            return self._app.head_position(), store.endpoints(), store.dead_letter_counts()

        head, endpoints, dead = await self._store_call(listing)
        return pb.ListWebhooksResponse(
            webhooks=[webhook_to_proto(e, dead.get(e.endpoint_id, 0)) for e in endpoints],
            head_position=head)

    @_rpc
    async def DeleteWebhook(self, request: pb.DeleteWebhookRequest, context: Context
                            ) -> pb.DeleteWebhookResponse:
        store = self._webhook_store(context)
        await self._store_call(store.delete, str(parse_id(request.webhook_id, "webhook id")))
        return pb.DeleteWebhookResponse()

    @_rpc
    async def ListWebhookDeadLetters(self, request: pb.ListWebhookDeadLettersRequest,
                                     context: Context) -> pb.ListWebhookDeadLettersResponse:
        store = self._webhook_store(context)
        webhook_id = str(parse_id(request.webhook_id, "webhook id"))

        def letters() -> list[DeadLetter]:
            store.endpoint(webhook_id)  # NOT_FOUND for an unknown endpoint
            return store.dead_letters(webhook_id, after_position=request.after_position,
                                      limit=DEAD_LETTER_PAGE + 1)

        found = await self._store_call(letters)
        page = [dead_letter_to_proto(d) for d in found[:DEAD_LETTER_PAGE]]
        kept = fitting(page, self._budget)
        return pb.ListWebhookDeadLettersResponse(
            dead_letters=page[:kept], has_more=kept < len(found),
            last_position=page[kept - 1].position if kept else request.after_position)

    @_rpc
    async def RedeliverWebhookEvents(self, request: pb.RedeliverWebhookEventsRequest,
                                     context: Context) -> pb.RedeliverWebhookEventsResponse:
        store = self._webhook_store(context)
        count = await self._store_call(store.redeliver,
                                       str(parse_id(request.webhook_id, "webhook id")),
                                       list(request.event_ids))
        return pb.RedeliverWebhookEventsResponse(redelivering=count)

    @_rpc
    async def GetFeedHead(self, request: pb.GetFeedHeadRequest, context: Context
                          ) -> pb.GetFeedHeadResponse:
        principal = self._principal(context)
        if not principal.audit:
            auth.require_platform(principal)
        return pb.GetFeedHeadResponse(position=await self._call(self._app.head_position))

    # -- streaming --------------------------------------------------------------------------

    async def WatchTable(self, request: pb.WatchTableRequest, context: Context
                         ) -> AsyncIterator[pb.WatchTableResponse]:
        """Stream the table's events after a feed position, redacted for the caller."""
        try:
            self._check_running()
            self._check_size(request)
            check_request("WatchTable", request)
            # The caller's right to its seat is checked against the table as of now; events
            # after this position are live, and the seat leaving among them ends the stream.
            live_from = await self._call(self._app.head_position)
            named = request.seat if request.HasField("seat") else None
            principal = self._principal(context)
            viewer = await self._viewer(principal, request.table_id, named)
            table = await self._call(self._app.get_table, request.table_id)
            # A player watches as long as it holds its seat (the audit role always may).
            held_seat = None if principal.audit else seat_of(viewer)
            watched_seat = seat_of(viewer)
            if watched_seat is not None and not 0 <= watched_seat < table.players:
                raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{table.players - 1}")
        except (RuleError, ServiceError) as error:
            await abort(context, error)
        table_id = str(table.id)
        ids = {table_id, *table.hand_ids}
        spectator = _only_spectator(principal)
        if spectator:
            try:
                self._spectators.enter(table_id, table.spectators.max_spectators)
            except ResourceExhausted as error:
                if self._metrics is not None:
                    self._metrics.watch_limited("spectators")
                await abort(context, error)
        delay = (SpectatorDelay(table.spectators, table_id)
                 if spectator and table.spectators.delayed else None)
        if self._metrics is not None:
            self._metrics.watch_opened()
            if spectator:
                self._metrics.spectator_opened()
        sending = _Sending()
        watchdog = asyncio.create_task(self._cut_off_stalled(context, sending),
                                       name="watch-watchdog")
        expiry = _token_expiry(principal, table_id)
        try:
            position = request.after_position
            views = self._stream_views() if request.include_views else None
            while True:
                self._check_running()
                if expiry is not None:
                    _check_not_expired(*expiry)
                events = await self._hub.after(position)
                if not events:
                    idle = WATCH_IDLE_SECONDS
                    if expiry is not None:  # wake when the token expires, to end the stream
                        left = (expiry[0] - datetime.now(UTC)).total_seconds()
                        idle = max(EXPIRY_SLACK_SECONDS, min(idle, left))
                    if delay is not None:
                        due = delay.seconds_to_next(datetime.now(UTC))
                        idle = idle if due is None else min(idle, due)
                    await self._hub.wait_beyond(position, idle)
                    if delay is not None:
                        for held in delay.due(datetime.now(UTC)):
                            message = await self._watch_message(held.event, held.public,
                                                                viewer, table_id, views)
                            sending.started = time.monotonic()
                            yield message
                            sending.started = None
                    continue
                for event in events:
                    position = event.position
                    if event.aggregate_id not in ids:
                        continue
                    public = event.public(viewer)
                    if isinstance(public, HandStarted):
                        ids.add(public.hand_id)
                    ready = [Held(event, public)]
                    if delay is not None:
                        ready = delay.admit(event, public, datetime.now(UTC))
                        # Held events wait in order: when any waits, this newest one does.
                        if self._metrics is not None and delay.holding:
                            self._metrics.spectator_event_delayed()
                    for held in ready:
                        message = await self._watch_message(held.event, held.public, viewer,
                                                            table_id, views)
                        sending.started = time.monotonic()
                        yield message
                        sending.started = None
                        if views is not None and isinstance(held.public, HandRecorded):
                            views.forget(held.public.hand_id)
                    if (held_seat is not None and isinstance(public, SeatLeft)
                            and public.seat == held_seat and event.position > live_from):
                        raise PermissionDenied(
                            ServiceReason.WRONG_SEAT,
                            f"seat {held_seat} was left: the seat token's player no longer"
                            " holds it, so its cards are no longer this stream's to see")
                    if (held_seat is not None
                            and isinstance(public, SeatReplaced | SeatTokenReissued)
                            and public.seat == held_seat and event.position > live_from):
                        raise Unauthenticated(
                            ServiceReason.TOKEN_REVOKED,
                            f"seat {held_seat}'s token was replaced by a newer one; this"
                            " stream's token no longer works")
        except (RuleError, ServiceError) as error:
            await abort(context, error)
        finally:
            watchdog.cancel()
            if spectator:
                self._spectators.leave(table_id)
            if self._metrics is not None:
                self._metrics.watch_closed()
                if spectator:
                    self._metrics.spectator_closed()

    async def _cut_off_stalled(self, context: Context, sending: _Sending) -> None:
        """End the stream LIMIT_EXCEEDED when the client leaves a message untaken too long."""
        while True:
            await asyncio.sleep(WATCHDOG_PERIOD_SECONDS)
            started = sending.started
            if started is not None and time.monotonic() - started > self.watch_send_timeout:
                error = ResourceExhausted(
                    ServiceReason.LIMIT_EXCEEDED,
                    f"the stream was not read for {self.watch_send_timeout:g} s; reconnect"
                    " with the last position received to resume")
                with contextlib.suppress(Exception):  # abort ends the call by raising
                    await abort(context, error)
                return

    async def _watch_message(self, event: FeedEvent, public: PublicEvent, viewer: Viewer,
                             table_id: str, views: StreamAggregates | None
                             ) -> pb.WatchTableResponse:
        message = pb.WatchTableResponse(event=event_to_proto(event, public))
        is_table_event = event.aggregate_id == table_id
        if not is_table_event:
            message.hand_id = event.aggregate_id
        if views is not None:
            # The caller's view of the event's aggregate as it stood right after the event.
            aggregate = await views.at(event, is_table_event=is_table_event)
            if is_table_event:
                message.table.CopyFrom(self._table_message(aggregate.view()))
            else:
                message.hand.CopyFrom(hand_to_proto(aggregate.view(viewer)))
        check_answer_size(message, self._config.max_message_bytes)  # ends the stream richly
        return message

    def _stream_views(self) -> StreamAggregates:
        """A stream's own aggregates, loaded (on the workers) only when first met."""

        async def table_at(table_id: str, version: int) -> Table:
            return await self._call(self._table_at, table_id, version)

        async def hand_at(hand_id: str, version: int) -> Any:
            return await self._call(self._app.hand_at, hand_id, version)

        return StreamAggregates(table_at, hand_at)

    def _table_at(self, table_id: str, version: int) -> Table:
        """A table as it stood right after event `version` (from its events and snapshots)."""
        table: object = self._app.repository.get(UUID(table_id), version=version)
        if not isinstance(table, Table):  # pragma: no cover - the feed named a table event
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, f"no table {table_id}")
        return table



__all__ = ["RefereeServicer"]
