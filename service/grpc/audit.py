"""Audit: a hand's history, evidence and verification, rulings, and the global feed.

What the audit role (and, for the feed and rulings, the platform) reads: `GetHandHistory`
and `GetHandAt` with every card, `ExportTranscript` (the signed evidence), `VerifyHand`,
`Adjudicate` (a signed ruling on any transcript), `ReadEvents` and `GetFeedHead`; and what
anyone may read or a witness give: `GetCheckpoint` (the ledger's latest signed checkpoint)
and `AddCosignature` (a witness's cosignature of one, docs/fairness.md#witnesses).
"""

from __future__ import annotations

import json

from fiftyk_referee.domain.games import adjudicate
from fiftyk_referee.domain.observer import AUDITOR, SPECTATOR, Viewer
from fiftyk_referee.service.core.public_events import FeedPage
from fiftyk_referee.service.errors import FieldViolation, InvalidArgument, ServiceReason
from fiftyk_referee.service.grpc import auth
from fiftyk_referee.service.grpc.calls import Context, Rpcs, hand_to_proto, rpc
from fiftyk_referee.service.grpc.events import event_to_proto
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.paging import fitting
from fiftyk_referee.service.grpc.requests import missing


class AuditRpcs(Rpcs):
    """Audit: history, evidence, verification, rulings, the feed."""

    @rpc
    async def GetHandHistory(self, request: pb.GetHandHistoryRequest, context: Context
                             ) -> pb.GetHandHistoryResponse:
        auth.require_audit(self.edge.principal(context))
        page = await self.edge.call(self.edge.app.hand_history, request.hand_id,
                                    after_version=request.after_version, limit=request.limit)
        events = [event_to_proto(e, e.public(AUDITOR)) for e in page.events]
        kept = fitting(events, self.edge.budget)
        return pb.GetHandHistoryResponse(events=events[:kept],
                                         has_more=page.has_more or kept < len(events))

    @rpc
    async def GetHandAt(self, request: pb.GetHandAtRequest, context: Context
                        ) -> pb.GetHandAtResponse:
        auth.require_audit(self.edge.principal(context))
        if not request.version:
            raise missing("version")
        hand = await self.edge.call(self.edge.app.hand_at, request.hand_id, request.version)
        return pb.GetHandAtResponse(hand=hand_to_proto(hand.view(AUDITOR)))

    @rpc
    async def ExportTranscript(self, request: pb.ExportTranscriptRequest, context: Context
                               ) -> pb.ExportTranscriptResponse:
        auth.require_audit(self.edge.principal(context))
        since = request.since_size if request.HasField("since_size") else None
        evidence = await self.edge.call(self.edge.app.export_evidence, request.hand_id,
                                        since_size=since)
        return pb.ExportTranscriptResponse(
            transcript_json=json.dumps(evidence["transcript"]),
            evidence_json=json.dumps(evidence, ensure_ascii=False))

    @rpc
    async def VerifyHand(self, request: pb.VerifyHandRequest, context: Context
                         ) -> pb.VerifyHandResponse:
        auth.require_audit(self.edge.principal(context))
        report = await self.edge.call(self.edge.app.verify_hand, request.hand_id)
        return pb.VerifyHandResponse(ok=report.ok, checks=[
            pb.VerifyCheck(check=line.check, status=line.status, detail=line.detail)
            for line in report.lines])

    @rpc
    async def Adjudicate(self, request: pb.AdjudicateRequest, context: Context
                         ) -> pb.AdjudicateResponse:
        principal = self.edge.principal(context)
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
        result = await self.edge.call(adjudicate, data)
        ruling = self.edge.app.signed_ruling(request.transcript_json, result)
        return pb.AdjudicateResponse(result_json=json.dumps(result, ensure_ascii=False),
                                     signed_ruling_json=json.dumps(ruling, ensure_ascii=False))

    @rpc
    async def ReadEvents(self, request: pb.ReadEventsRequest, context: Context
                         ) -> pb.ReadEventsResponse:
        principal = self.edge.principal(context)
        # The platform reads what a spectator sees; the audit role reads every card.
        if principal.audit:
            viewer: Viewer = AUDITOR
        else:
            auth.require_platform(principal)
            viewer = SPECTATOR

        def read() -> tuple[list[pb.Event], FeedPage]:
            page = self.edge.app.read_events(request.after_position, request.limit,
                                             list(request.topics))
            return [event_to_proto(e, e.public(viewer)) for e in page.events], page

        events, page = await self.edge.call(read)
        kept = fitting(events, self.edge.budget)
        if kept < len(events):  # the rest is the next page's
            return pb.ReadEventsResponse(events=events[:kept],
                                         last_position=events[kept - 1].position,
                                         has_more=True)
        return pb.ReadEventsResponse(events=events, last_position=page.last_position,
                                     has_more=page.has_more)

    @rpc
    async def GetFeedHead(self, request: pb.GetFeedHeadRequest, context: Context
                          ) -> pb.GetFeedHeadResponse:
        principal = self.edge.principal(context)
        if not principal.audit:
            auth.require_platform(principal)
        return pb.GetFeedHeadResponse(position=await self.edge.call(self.edge.app.head_position))

    @rpc
    async def GetCheckpoint(self, request: pb.GetCheckpointRequest, context: Context
                            ) -> pb.GetCheckpointResponse:
        # Any credential, or none (one presented must hold): a count and a hash.
        self.edge.principal(context)
        since = request.since_size if request.HasField("since_size") else None
        checkpoint, proof = await self.edge.call(self.edge.app.published_checkpoint, since)
        response = pb.GetCheckpointResponse(
            checkpoint_json=json.dumps(checkpoint, ensure_ascii=False))
        if proof is not None and since is not None:
            response.consistency.CopyFrom(pb.ConsistencyProof(
                from_size=since, to_size=int(checkpoint["size"]), hashes=proof))
        return response

    @rpc
    async def AddCosignature(self, request: pb.AddCosignatureRequest, context: Context
                             ) -> pb.AddCosignatureResponse:
        # Any credential, or none: the witness's key, one the operator listed, is checked.
        self.edge.principal(context)
        witness, stored = await self.edge.call(self.edge.app.add_cosignature,
                                               request.cosignature_json)
        return pb.AddCosignatureResponse(witness=witness, stored=stored)


__all__ = ["AuditRpcs"]
