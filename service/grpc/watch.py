"""Watching a table: the `WatchTable` stream and the spectators it serves.

A stream sends the table's events after a feed position, each as the caller may see it (a
seat its own cards, the audit role every card, a spectator none and, where the table asks,
late: `service/platform/spectating.py`), optionally with the aggregate's view after each.
It ends when the caller's token expires or is replaced, its seat is left, the server drains,
or the client leaves a message untaken too long. `IssueSpectatorToken` lets a spectator in;
each table admits at most its `max_spectators` spectator streams at once (per process).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from google.protobuf import timestamp_pb2

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.events import PublicEvent
from fiftyk_referee.domain.observer import Viewer, seat_of
from fiftyk_referee.domain.table import Table
from fiftyk_referee.domain.table_events import (
    HandRecorded,
    HandStarted,
    SeatLeft,
    SeatReplaced,
    SeatTokenReissued,
)
from fiftyk_referee.service.core.public_events import FeedEvent
from fiftyk_referee.service.errors import (
    FieldViolation,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    ServiceError,
    ServiceReason,
    Unauthenticated,
)
from fiftyk_referee.service.grpc import auth
from fiftyk_referee.service.grpc.calls import (
    Context,
    Edge,
    Rpcs,
    hand_to_proto,
    only_spectator,
    rpc,
)
from fiftyk_referee.service.grpc.convert import spectators_to_proto, table_to_proto
from fiftyk_referee.service.grpc.errors import abort
from fiftyk_referee.service.grpc.events import event_to_proto
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.paging import check_answer_size
from fiftyk_referee.service.grpc.requests import check_request
from fiftyk_referee.service.grpc.stream_views import StreamAggregates
from fiftyk_referee.service.platform.spectating import Held, SpectatorDelay

WATCH_IDLE_SECONDS = 1.0
EXPIRY_SLACK_SECONDS = 0.01  # a stream wakes this long after its token's expiry at the least
# A watch message the client has not taken in this long ends its stream: gRPC's flow
# control keeps a stalled stream's buffer small, but the stream would hold its watch slot
# (and its feed position) for as long as the client lets it sit.
WATCH_SEND_TIMEOUT_SECONDS = 30.0
WATCHDOG_PERIOD_SECONDS = 0.25


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


@dataclass
class _Sending:
    """When the stream's pending message was handed to gRPC (None: nothing pending)."""

    started: float | None = None


class WatchRpcs(Rpcs):
    """Watching: WatchTable and IssueSpectatorToken."""

    def __init__(self, edge: Edge) -> None:
        super().__init__(edge)
        self._spectators = _SpectatorCount()
        self.watch_send_timeout = WATCH_SEND_TIMEOUT_SECONDS

    @rpc
    async def IssueSpectatorToken(self, request: pb.IssueSpectatorTokenRequest,
                                  context: Context) -> pb.IssueSpectatorTokenResponse:
        auth.require_platform(self.edge.principal(context))
        longest = self.edge.config.token_ttl_seconds
        if request.ttl_seconds > longest:
            raise InvalidArgument(
                ServiceReason.INVALID_REQUEST, f"ttl_seconds must be at most {longest}",
                field_violations=[FieldViolation("ttl_seconds", f"at most {longest}")])
        table = await self.edge.call(self.edge.app.get_table, request.table_id)
        token = auth.issue_spectator_token(self.edge.config.token_secret, str(table.id),
                                           ttl_seconds=request.ttl_seconds or longest)
        claim = auth.verify_spectator_token(self.edge.config.token_secret, token)
        expires = timestamp_pb2.Timestamp()
        expires.FromDatetime(claim.expires)
        if self.edge.metrics is not None:
            self.edge.metrics.spectator_token_issued()
        return pb.IssueSpectatorTokenResponse(
            spectator_token=token, expires_at=expires,
            spectators=spectators_to_proto(table.spectators))

    async def WatchTable(self, request: pb.WatchTableRequest, context: Context
                         ) -> AsyncIterator[pb.WatchTableResponse]:
        """Stream the table's events after a feed position, redacted for the caller."""
        try:
            self.edge.check_running()
            self.edge.check_size(request)
            check_request("WatchTable", request)
            # The caller's right to its seat is checked against the table as of now; events
            # after this position are live, and the seat leaving among them ends the stream.
            live_from = await self.edge.call(self.edge.app.head_position)
            named = request.seat if request.HasField("seat") else None
            principal = self.edge.principal(context)
            viewer = await self.edge.viewer(principal, request.table_id, named)
            table = await self.edge.call(self.edge.app.get_table, request.table_id)
            # A player watches as long as it holds its seat (the audit role always may).
            held_seat = None if principal.audit else seat_of(viewer)
            watched_seat = seat_of(viewer)
            if watched_seat is not None and not 0 <= watched_seat < table.players:
                raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{table.players - 1}")
        except (RuleError, ServiceError) as error:
            await abort(context, error)
        table_id = str(table.id)
        ids = {table_id, *table.hand_ids}
        spectator = only_spectator(principal)
        if spectator:
            try:
                self._spectators.enter(table_id, table.spectators.max_spectators)
            except ResourceExhausted as error:
                if self.edge.metrics is not None:
                    self.edge.metrics.watch_limited("spectators")
                await abort(context, error)
        delay = (SpectatorDelay(table.spectators, table_id)
                 if spectator and table.spectators.delayed else None)
        if self.edge.metrics is not None:
            self.edge.metrics.watch_opened()
            if spectator:
                self.edge.metrics.spectator_opened()
        sending = _Sending()
        watchdog = asyncio.create_task(self._cut_off_stalled(context, sending),
                                       name="watch-watchdog")
        expiry = _token_expiry(principal, table_id)
        try:
            position = request.after_position
            views = self._stream_views() if request.include_views else None
            while True:
                self.edge.check_running()
                if expiry is not None:
                    _check_not_expired(*expiry)
                events = await self.edge.hub.after(position)
                if not events:
                    idle = WATCH_IDLE_SECONDS
                    if expiry is not None:  # wake when the token expires, to end the stream
                        left = (expiry[0] - datetime.now(UTC)).total_seconds()
                        idle = max(EXPIRY_SLACK_SECONDS, min(idle, left))
                    if delay is not None:
                        due = delay.seconds_to_next(datetime.now(UTC))
                        idle = idle if due is None else min(idle, due)
                    await self.edge.hub.wait_beyond(position, idle)
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
                        if self.edge.metrics is not None and delay.holding:
                            self.edge.metrics.spectator_event_delayed()
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
            if self.edge.metrics is not None:
                self.edge.metrics.watch_closed()
                if spectator:
                    self.edge.metrics.spectator_closed()

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
        if isinstance(public, HandRecorded):
            # The hand's leaf and the latest checkpoint that includes it, for the seats to keep.
            ledger = await self.edge.call(self.edge.app.hands_checkpoint, [public.hand_id],
                                          fresh=False)
            if ledger is not None:
                message.checkpoint_json = json.dumps(ledger[0], ensure_ascii=False)
                message.ledger_index = ledger[1][public.hand_id]
        is_table_event = event.aggregate_id == table_id
        if not is_table_event:
            message.hand_id = event.aggregate_id
        if views is not None:
            # The caller's view of the event's aggregate as it stood right after the event.
            aggregate = await views.at(event, is_table_event=is_table_event)
            if is_table_event:
                message.table.CopyFrom(table_to_proto(aggregate.view()))
            else:
                message.hand.CopyFrom(hand_to_proto(aggregate.view(viewer)))
        check_answer_size(message, self.edge.config.max_message_bytes)  # ends the stream richly
        return message

    def _stream_views(self) -> StreamAggregates:
        """A stream's own aggregates, loaded (on the workers) only when first met."""

        async def table_at(table_id: str, version: int) -> Table:
            return await self.edge.call(self._table_at, table_id, version)

        async def hand_at(hand_id: str, version: int) -> Any:
            return await self.edge.call(self.edge.app.hand_at, hand_id, version)

        return StreamAggregates(table_at, hand_at)

    def _table_at(self, table_id: str, version: int) -> Table:
        """A table as it stood right after event `version` (from its events and snapshots)."""
        table: object = self.edge.app.repository.get(UUID(table_id), version=version)
        if not isinstance(table, Table):  # pragma: no cover - the feed named a table event
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, f"no table {table_id}")
        return table


__all__ = ["WatchRpcs"]
