"""Tables and seats: what a platform does with its tables, and what anyone may read of one.

A table is created, joined and left, closed or aborted, a seat replaced or its token
reissued; `GetTable` and `GetScores` read one table, `ListTables` the lobby. A command that
gives a seat its player answers with the seat's token.
"""

from __future__ import annotations

import json

from google.protobuf import timestamp_pb2

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.service.core.runner import Outcome
from fiftyk_referee.service.errors import (
    FieldViolation,
    InvalidArgument,
    NotFound,
    ServiceReason,
    Unavailable,
)
from fiftyk_referee.service.grpc import auth
from fiftyk_referee.service.grpc.calls import Context, Rpcs, request_id_of, rpc
from fiftyk_referee.service.grpc.convert import (
    entropy_direct_from_proto,
    entropy_window_from_proto,
    options_from_proto,
    spectators_from_proto,
    table_to_proto,
)
from fiftyk_referee.service.grpc.convert_platform import STATE_NAMES, summary_to_proto
from fiftyk_referee.service.grpc.games import edge_for
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.paging import fitting
from fiftyk_referee.service.grpc.requests import missing
from fiftyk_referee.service.platform.lobby import (
    TablePage,
    TableQuery,
    decode_page_token,
    encode_page_token,
    states_of,
)
from fiftyk_referee.service.platform.process_store import STORE_ERRORS, unavailable


class TableRpcs(Rpcs):
    """Tables and seats: create, join, leave, close, abort, replace, reissue; read, list."""

    async def _seat_token(self, outcome: Outcome, player_id: str
                          ) -> tuple[str, timestamp_pb2.Timestamp]:
        """A seat token for the outcome's seat, of the seat's token generation then."""
        if outcome.table is None or outcome.seat is None:  # pragma: no cover
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, "no such table")
        token = auth.issue_seat_token(
            self.edge.config.token_secret, outcome.table_id, outcome.seat, player_id,
            ttl_seconds=self.edge.config.token_ttl_seconds,
            generation=outcome.table.token_generation(outcome.seat))
        claim = auth.verify_seat_token(self.edge.config.token_secret, token)
        expires = timestamp_pb2.Timestamp()
        expires.FromDatetime(claim.expires)
        return token, expires

    @rpc
    async def CreateTable(self, request: pb.CreateTableRequest, context: Context
                          ) -> pb.CreateTableResponse:
        auth.require_platform(self.edge.principal(context))
        if not request.HasField("ruleset") or not request.ruleset.preset:
            raise missing("ruleset.preset")
        spectators = (spectators_from_proto(request.spectators, request.players)
                      if request.HasField("spectators") else None)
        outcome = await self.edge.command(
            self.edge.app.create_table, request.ruleset.preset,
            options_from_proto(request.ruleset.options), request.players,
            allow_preset_deck=request.allow_preset_deck, name=request.name,
            request_id=request_id_of(request), game=request.ruleset.game,
            spectators=spectators, entropy_window=entropy_window_from_proto(request),
            entropy_direct=entropy_direct_from_proto(request))
        table = outcome.table
        if table is None:  # pragma: no cover - create_table always returns its table
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, "the table was not created")
        return pb.CreateTableResponse(table=table_to_proto(table.view()),
                                      version=outcome.version, replayed=outcome.replayed)

    @rpc
    async def JoinTable(self, request: pb.JoinTableRequest, context: Context
                        ) -> pb.JoinTableResponse:
        auth.require_platform(self.edge.principal(context))
        if not request.player_id:
            raise missing("player_id")
        seat = request.seat if request.HasField("seat") else None
        outcome = await self.edge.command(self.edge.app.join_table, request.table_id,
                                          request.player_id, seat,
                                          request_id=request_id_of(request),
                                          public_key=request.seat_public_key or None)
        if outcome.table is None or outcome.seat is None:  # pragma: no cover
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, "no such table")
        token, expires = await self._seat_token(outcome, request.player_id)
        return pb.JoinTableResponse(
            table=table_to_proto(outcome.table.view()), seat=outcome.seat,
            seat_token=token, seat_token_expires_at=expires, version=outcome.version,
            replayed=outcome.replayed)

    @rpc
    async def LeaveTable(self, request: pb.LeaveTableRequest, context: Context
                         ) -> pb.LeaveTableResponse:
        principal = self.edge.principal(context)
        if principal.platform:
            if not request.HasField("seat"):
                raise missing("seat")
            seat = request.seat
        else:
            seat = await self.edge.acting_seat(principal, request.table_id,
                                               request.seat if request.HasField("seat") else None)
        outcome = await self.edge.command(self.edge.app.leave_table, request.table_id, seat,
                                          request_id=request_id_of(request))
        if outcome.table is None:  # pragma: no cover
            raise NotFound(ServiceReason.TABLE_NOT_FOUND, "no such table")
        return pb.LeaveTableResponse(table=table_to_proto(outcome.table.view()),
                                     version=outcome.version, replayed=outcome.replayed)

    @rpc
    async def CloseTable(self, request: pb.CloseTableRequest, context: Context
                         ) -> pb.CloseTableResponse:
        auth.require_platform(self.edge.principal(context))
        outcome = await self.edge.command(self.edge.app.close_table, request.table_id,
                                          request.reason, request_id=request_id_of(request))
        return pb.CloseTableResponse(table=self.edge.outcome_table(outcome),
                                     version=outcome.version, replayed=outcome.replayed)

    @rpc
    async def AbortTable(self, request: pb.AbortTableRequest, context: Context
                         ) -> pb.AbortTableResponse:
        auth.require_platform(self.edge.principal(context))
        outcome = await self.edge.command(self.edge.app.abort_table, request.table_id,
                                          request.reason, request_id=request_id_of(request))
        response = pb.AbortTableResponse(table=self.edge.outcome_table(outcome),
                                         version=outcome.version, replayed=outcome.replayed)
        if outcome.detail:
            response.voided_hand_id = outcome.detail
        return response

    @rpc
    async def ReplaceSeat(self, request: pb.ReplaceSeatRequest, context: Context
                          ) -> pb.ReplaceSeatResponse:
        auth.require_platform(self.edge.principal(context))
        outcome = await self.edge.command(self.edge.app.replace_seat, request.table_id,
                                          request.seat, request.player_id,
                                          request_id=request_id_of(request))
        token, expires = await self._seat_token(outcome, request.player_id)
        return pb.ReplaceSeatResponse(
            table=self.edge.outcome_table(outcome), seat=request.seat, seat_token=token,
            seat_token_expires_at=expires, version=outcome.version,
            replayed=outcome.replayed)

    @rpc
    async def ReissueSeatToken(self, request: pb.ReissueSeatTokenRequest, context: Context
                               ) -> pb.ReissueSeatTokenResponse:
        auth.require_platform(self.edge.principal(context))
        outcome = await self.edge.command(self.edge.app.reissue_seat_token, request.table_id,
                                          request.seat, request_id=request_id_of(request))
        table = outcome.table
        player = table.seats[request.seat] if table is not None else None
        if player is None:  # pragma: no cover - a reissue needs a taken seat
            raise RuleError(Reason.SEAT_EMPTY, f"seat {request.seat} is empty")
        token, expires = await self._seat_token(outcome, player)
        return pb.ReissueSeatTokenResponse(
            table=self.edge.outcome_table(outcome), seat=request.seat, seat_token=token,
            seat_token_expires_at=expires, version=outcome.version,
            replayed=outcome.replayed)

    @rpc
    async def GetTable(self, request: pb.GetTableRequest, context: Context
                       ) -> pb.GetTableResponse:
        await self.edge.table_access(self.edge.principal(context), request.table_id)
        table = await self.edge.call(self.edge.app.get_table, request.table_id)
        return pb.GetTableResponse(table=table_to_proto(table.view()))

    @rpc
    async def GetScores(self, request: pb.GetScoresRequest, context: Context
                        ) -> pb.GetScoresResponse:
        await self.edge.table_access(self.edge.principal(context), request.table_id)
        sheet = await self.edge.call(self.edge.app.scores, request.table_id)
        table = await self.edge.call(self.edge.app.get_table, request.table_id)
        table_message = table_to_proto(table.view())
        hands = []
        ledger = await self.edge.call(self.edge.app.hands_checkpoint,
                                      [row.hand_id for row in sheet.hands])
        for row in sheet.hands:
            score = pb.HandScore(hand_id=row.hand_id, hand_number=row.number)
            edge_for(row.game).fill_score(row.result, score)
            if ledger is not None and row.hand_id in ledger[1]:
                score.ledger_index = ledger[1][row.hand_id]
            hands.append(score)
        return pb.GetScoresResponse(
            hands=hands, totals=list(table_message.scores), match_over=sheet.match_over,
            version=sheet.version,
            checkpoint_json=json.dumps(ledger[0], ensure_ascii=False) if ledger else "")

    @rpc
    async def ListTables(self, request: pb.ListTablesRequest, context: Context
                         ) -> pb.ListTablesResponse:
        auth.require_platform(self.edge.principal(context))
        lobby = self.edge.lobby
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

        page = await self.edge.call(listing)
        tables = [summary_to_proto(table) for table in page.tables]
        kept = fitting(tables, self.edge.budget)
        next_before = page.tables[kept - 1].last_position if kept < len(tables) else (
            page.next_before)
        return pb.ListTablesResponse(
            tables=tables[:kept],
            next_page_token=encode_page_token(next_before) if next_before is not None else "",
            as_of_position=page.as_of_position)


__all__ = ["TableRpcs"]
