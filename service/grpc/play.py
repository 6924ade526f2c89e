"""Play: dealing a hand and acting in it, and a seat's view of it.

`StartHand` deals (or opens a seat-entropy draw), `ContributeEntropy` adds a seat's share of
the deal, `Act` is every hand action's one path (`Play`, `Pass`, `Resign` are its aliases,
and so are the installed games' 0.2 RPCs, `GameBundle.legacy_rpcs`: each names one kind),
`GetHandView` and `ListLegalPlays` show a seat its hand and what it may do. Every action
becomes one `Act` command of the use cases.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any, NamedTuple

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import MAX_KIND_LENGTH, PASS, PLAY, RESIGN, Action
from fiftyk_referee.domain.observer import SPECTATOR, SeatViewer, Viewer, seat_of
from fiftyk_referee.service.core.bundles import LegacyRpc
from fiftyk_referee.service.core.commands import Act
from fiftyk_referee.service.errors import NotFound, PermissionDenied, ServiceReason
from fiftyk_referee.service.grpc import auth
from fiftyk_referee.service.grpc.calls import (
    Context,
    Rpcs,
    hand_to_proto,
    only_spectator,
    request_id_of,
    rpc,
)
from fiftyk_referee.service.grpc.convert import action_kinds_to_proto, legal_play_to_proto
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.requests import missing, one_of

DEFAULT_LEGAL_PLAYS = 200


class ActAnswer(NamedTuple):
    """What a hand action answers: the seat's view after it, the versions, a replay."""

    hand: pb.HandView
    version: int
    replayed: bool
    table_version: int


class PlayRpcs(Rpcs):
    """Play: StartHand, ContributeEntropy, Act and its aliases, GetHandView, ListLegalPlays."""

    @rpc
    async def StartHand(self, request: pb.StartHandRequest, context: Context
                        ) -> pb.StartHandResponse:
        principal = self.edge.principal(context)
        auth.require_deck_dealer(principal, bool(request.deck))
        seat: int | None = None
        if not principal.platform:
            seat = await self.edge.acting_seat(principal, request.table_id)
        outcome = await self.edge.command(self.edge.app.start_hand, request.table_id,
                                          deck=list(request.deck) or None,
                                          request_id=request_id_of(request))
        response = pb.StartHandResponse(table=self.edge.outcome_table(outcome),
                                        version=outcome.version, replayed=outcome.replayed)
        if outcome.hand is not None:  # else it opened a seat-entropy draw
            view = outcome.hand.view(SeatViewer(seat) if seat is not None else SPECTATOR)
            response.hand.CopyFrom(hand_to_proto(view))
        return response

    @rpc
    async def ContributeEntropy(self, request: pb.ContributeEntropyRequest, context: Context
                                ) -> pb.ContributeEntropyResponse:
        principal = self.edge.principal(context)
        seat = auth.require_seat(principal, request.table_id)
        claim = principal.seat
        if claim is None:  # pragma: no cover - require_seat refused the call
            raise PermissionDenied(ServiceReason.SEAT_TOKEN_REQUIRED, "no seat token")
        one_of(request, "entropy", "commitment")
        outcome = await self.edge.command(
            self.edge.app.contribute_entropy, request.table_id, seat, request.entropy,
            commitment=request.commitment or None, signature=request.signature or None,
            request_id=request_id_of(request), player_id=claim.player_id,
            token_generation=claim.generation)
        receipt = self.edge.app.entropy_receipt(outcome)
        response = pb.ContributeEntropyResponse(
            table=self.edge.outcome_table(outcome), version=outcome.current_table_version,
            replayed=outcome.replayed,
            receipt_json=json.dumps(receipt, ensure_ascii=False) if receipt else "")
        if outcome.hand is not None:  # this contribution dealt the hand
            response.hand.CopyFrom(hand_to_proto(outcome.hand.view(SeatViewer(seat))))
        return response

    async def _act(self, request: Any, context: Context, kind: str, *,
                   names_cards: bool, value: str | None = None,
                   validate_only: bool = False) -> ActAnswer:
        """Every hand action's one path: the seat's token, one `Act` command, its view."""
        principal = self.edge.principal(context)
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
            request_id=request_id_of(request))
        # A dry run's outcome is the hand as it stands: its view shows nothing new.
        run = self.edge.app.check if validate_only else self.edge.app.execute

        def act_and_view() -> ActAnswer:
            # The view is built on the worker too: the event loop is the busiest thread.
            outcome = run(command)
            if outcome.hand is None:  # pragma: no cover - hand commands return their hand
                raise NotFound(ServiceReason.HAND_NOT_FOUND, "no such hand")
            return ActAnswer(hand_to_proto(outcome.hand.view(SeatViewer(seat))),
                             outcome.version, outcome.replayed,
                             outcome.current_table_version)

        answer = await self.edge.call(act_and_view)
        if not answer.replayed and not validate_only:
            self.edge.hub.poke()
        return answer

    @rpc
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

    @rpc
    async def Play(self, request: pb.PlayRequest, context: Context) -> pb.PlayResponse:
        if not request.cards:
            raise missing("cards")
        answer = await self._act(request, context, PLAY, names_cards=True)
        return pb.PlayResponse(hand=answer.hand, version=answer.version,
                               replayed=answer.replayed,
                               table_version=answer.table_version)

    @rpc
    async def Pass(self, request: pb.PassRequest, context: Context) -> pb.PassResponse:
        answer = await self._act(request, context, PASS, names_cards=False)
        return pb.PassResponse(hand=answer.hand, version=answer.version,
                               replayed=answer.replayed,
                               table_version=answer.table_version)

    @rpc
    async def Resign(self, request: pb.ResignRequest, context: Context) -> pb.ResignResponse:
        answer = await self._act(request, context, RESIGN, names_cards=False)
        return pb.ResignResponse(hand=answer.hand, version=answer.version,
                                 replayed=answer.replayed,
                                 table_version=answer.table_version)

    async def _view_for(self, table_id: str, hand_id: str | None, viewer: Viewer) -> Any:
        """The named hand (else the table's current, else last) as `viewer` sees it."""
        if viewer is SPECTATOR and not hand_id:
            table = await self.edge.call(self.edge.app.get_table, table_id)
            if not table.hand_ids:
                raise NotFound(ServiceReason.HAND_NOT_FOUND, "no hand has been dealt here")
        return await self.edge.call(self.edge.app.hand_view, table_id, hand_id, viewer)

    @rpc
    async def GetHandView(self, request: pb.GetHandViewRequest, context: Context
                          ) -> pb.GetHandViewResponse:
        named = request.seat if request.HasField("seat") else None
        principal = self.edge.principal(context)
        viewer = await self.edge.viewer(principal, request.table_id, named)
        if only_spectator(principal):
            table = await self.edge.call(self.edge.app.get_table, request.table_id)
            if table.spectators.delayed:
                # The hand as it stands now would show what the delay holds back.
                raise PermissionDenied(
                    ServiceReason.SPECTATOR_DELAYED,
                    "this table delays its spectators: follow it with WatchTable")
        message = hand_to_proto(await self._view_for(request.table_id, request.hand_id or None,
                                                     viewer))
        seat = seat_of(viewer)
        if request.include_legal_plays and seat is not None:
            legal, _ = await self.edge.call(self.edge.app.legal_actions, request.table_id,
                                            request.hand_id or None, seat,
                                            request.max_legal_plays or DEFAULT_LEGAL_PLAYS)
            message.legal_plays.extend(legal_play_to_proto(p) for p in legal.plays)
            message.legal_plays_truncated = legal.truncated
        return pb.GetHandViewResponse(hand=message)

    @rpc
    async def ListLegalPlays(self, request: pb.ListLegalPlaysRequest, context: Context
                             ) -> pb.ListLegalPlaysResponse:
        seat = await self.edge.acting_seat(self.edge.principal(context), request.table_id)
        legal, version = await self.edge.call(self.edge.app.legal_actions, request.table_id,
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




# A game's legacy RPC names cards like Play.
_LEGACY_FIELDS: dict[str, str] = {Reason.UNKNOWN_CARD: "cards"}


def legacy_handler(route: LegacyRpc
                   ) -> Callable[[PlayRpcs, Any, Context], Coroutine[Any, Any, Any]]:
    """The handler of a game's legacy RPC: `Act` with the action kind it stands for (the
    request's cards, and its `value_field` as the value), answered in its own response."""
    method = pb.DESCRIPTOR.services_by_name["RefereeService"].methods_by_name[route.rpc]
    response_type = getattr(pb, method.output_type.name)

    async def handler(self: PlayRpcs, request: Any, context: Context) -> Any:
        required = ("table_id", "hand_id", *(("cards",) if route.cards_required else ()))
        for name in required:
            if not getattr(request, name):
                raise missing(name)
        value = None
        if route.value_field and request.HasField(route.value_field):
            value = str(getattr(request, route.value_field))
        answer = await self._act(request, context, route.kind, names_cards=True, value=value)
        return response_type(hand=answer.hand, version=answer.version,
                             replayed=answer.replayed, table_version=answer.table_version)

    handler.__name__ = handler.__qualname__ = route.rpc
    return rpc(handler, _LEGACY_FIELDS)


__all__ = ["PlayRpcs", "legacy_handler"]
