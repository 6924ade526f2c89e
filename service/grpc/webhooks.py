"""Webhooks: the platform's endpoints, registered, listed, deleted; dead letters redelivered.

The deliveries themselves run in their own process (`service/webhooks/process.py`);
these RPCs read and change the endpoints' tables in the store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from fiftyk_referee.service.core.queries import parse_id
from fiftyk_referee.service.errors import ServiceReason, Unavailable
from fiftyk_referee.service.grpc import auth
from fiftyk_referee.service.grpc.calls import Context, Rpcs, request_id_of, rpc
from fiftyk_referee.service.grpc.convert_platform import dead_letter_to_proto, webhook_to_proto
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.paging import fitting
from fiftyk_referee.service.platform.process_store import STORE_ERRORS, unavailable
from fiftyk_referee.service.platform.webhook_store import DeadLetter, Endpoint, WebhookStore

T = TypeVar("T")
DEAD_LETTER_PAGE = 1_000  # dead letters read per ListWebhookDeadLetters page, at most


class WebhookRpcs(Rpcs):
    """Webhooks: register, list, delete; dead letters listed and redelivered."""

    def _webhook_store(self, context: Context) -> WebhookStore:
        auth.require_platform(self.edge.principal(context))
        if self.edge.webhooks is None:  # pragma: no cover - the composition root always builds one
            raise Unavailable(ServiceReason.STORE_UNAVAILABLE, "this server keeps no webhooks")
        return self.edge.webhooks

    async def _store_call(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """A call on the process tables, a store that does not answer made UNAVAILABLE."""

        def run() -> T:
            try:
                return function(*args, **kwargs)
            except STORE_ERRORS as error:
                raise unavailable(error) from error

        return await self.edge.call(run)

    @rpc
    async def RegisterWebhook(self, request: pb.RegisterWebhookRequest, context: Context
                              ) -> pb.RegisterWebhookResponse:
        store = self._webhook_store(context)
        endpoint, replayed = await self._store_call(
            store.register, request.url, list(request.events), request.description,
            request_id=request_id_of(request))
        return pb.RegisterWebhookResponse(webhook=webhook_to_proto(endpoint, 0),
                                          secret=endpoint.secret, replayed=replayed)

    @rpc
    async def ListWebhooks(self, request: pb.ListWebhooksRequest, context: Context
                           ) -> pb.ListWebhooksResponse:
        store = self._webhook_store(context)

        def listing() -> tuple[int, list[Endpoint], dict[str, int]]:
            return self.edge.app.head_position(), store.endpoints(), store.dead_letter_counts()

        head, endpoints, dead = await self._store_call(listing)
        return pb.ListWebhooksResponse(
            webhooks=[webhook_to_proto(e, dead.get(e.endpoint_id, 0)) for e in endpoints],
            head_position=head)

    @rpc
    async def DeleteWebhook(self, request: pb.DeleteWebhookRequest, context: Context
                            ) -> pb.DeleteWebhookResponse:
        store = self._webhook_store(context)
        await self._store_call(store.delete, str(parse_id(request.webhook_id, "webhook id")))
        return pb.DeleteWebhookResponse()

    @rpc
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
        kept = fitting(page, self.edge.budget)
        return pb.ListWebhookDeadLettersResponse(
            dead_letters=page[:kept], has_more=kept < len(found),
            last_position=page[kept - 1].position if kept else request.after_position)

    @rpc
    async def RedeliverWebhookEvents(self, request: pb.RedeliverWebhookEventsRequest,
                                     context: Context) -> pb.RedeliverWebhookEventsResponse:
        store = self._webhook_store(context)
        count = await self._store_call(store.redeliver,
                                       str(parse_id(request.webhook_id, "webhook id")),
                                       list(request.event_ids))
        return pb.RedeliverWebhookEventsResponse(redelivering=count)


__all__ = ["WebhookRpcs"]
