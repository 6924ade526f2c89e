"""The webhook dispatcher: a worker per endpoint over the global feed, in feed order.

Each endpoint is a process over the global feed with a position of its own: its worker reads
the public events after the position (the platform's view, the same as `ReadEvents` — no
cards), POSTs them one by one (`transport.py`, signed by `signing.py`), and records how far
it got at most every `ADVANCE_SECONDS` (and when it stops), so delivery is **at least once**
and **in feed order** (hence in order per table): a referee killed between a POST and the
position's update sends those events again, with the same event ids.

Delivery. A 2xx answer delivers the event. Anything else (another status, a timeout, a
refused connection) is retried after an exponential backoff with full jitter
(`backoff · 2^attempt`, capped, times a random fraction), holding back the endpoint's later
events; after `max_attempts` the event goes to the endpoint's dead letters and the worker
moves on. `RedeliverWebhookEvents` marks dead letters for another try; the worker sends
those before new events.

Replicas. A worker runs only while it holds its endpoint's lease (renewed once a third of it
has passed, taken over when it runs out): on PostgreSQL the replicas share the endpoints and
each endpoint is served by one of them at a time; on SQLite one referee serves them all.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import threading
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

from google.protobuf.json_format import MessageToDict

from fiftyk_referee.domain.observer import SPECTATOR
from fiftyk_referee.domain.table_events import TABLE_EVENTS, HandStarted
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.public_events import PUBLIC_EVENTS, FeedEvent, feed_event
from fiftyk_referee.service.errors import NotFound, ServiceError
from fiftyk_referee.service.grpc.events import event_to_proto
from fiftyk_referee.service.ops.webhook_settings import WebhookSettings
from fiftyk_referee.service.platform.process_store import STORE_ERRORS
from fiftyk_referee.service.platform.webhook_store import Endpoint, WebhookStore, event_id
from fiftyk_referee.service.webhooks.signing import (
    EVENT_ID_HEADER,
    EVENT_NAME_HEADER,
    SIGNATURE_HEADER,
    signature_header,
)
from fiftyk_referee.service.webhooks.transport import Attempt, Sender

ADVANCE_SECONDS = 0.5  # how often a busy endpoint's position is written
RENEW_FRACTION = 1 / 3  # a lease is renewed once this part of it has passed
log = logging.getLogger(__name__)
# What a worker survives by starting over later: the store not answering.
RETRIED_FAILURES: tuple[type[Exception], ...] = (*STORE_ERRORS, ServiceError)


class WebhookMetrics(Protocol):
    """What the dispatcher reports (`service.ops.metrics.Metrics` provides it)."""

    def serve_webhook(self, endpoint: str) -> None:
        """This replica serves the endpoint: its series exist from now on, at zero."""

    def webhook_delivered(self, endpoint: str, lag_seconds: float) -> None:
        """Count a delivery and observe how long after the event it arrived."""

    def webhook_failed(self, endpoint: str) -> None:
        """Count a failed attempt."""

    def webhook_retried(self, endpoint: str) -> None:
        """Count an attempt after a failed one."""

    def webhook_dead_lettered(self, endpoint: str) -> None:
        """Count an event moved to the dead letters."""

    def set_webhook_lag(self, endpoint: str, events: int, seconds: float) -> None:
        """Set how far behind the feed the endpoint is."""

    def forget_webhook(self, endpoint: str) -> None:
        """This replica no longer serves the endpoint: drop its gauges."""


def payload(event: FeedEvent, table_id: str) -> dict[str, Any]:
    """The JSON body of one delivery: an envelope and the event as `ReadEvents` shows it."""
    message = event_to_proto(event, event.public(SPECTATOR))
    return {
        "id": event_id(event),
        "name": event.name,
        "position": event.position,
        "table_id": table_id,
        "created_at": event.timestamp.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "event": MessageToDict(message, preserving_proto_field_name=True),
    }


class Stopped(Exception):
    """The worker must stop: the server stops, the lease or the endpoint is gone."""


class EndpointWorker:
    """Delivers one endpoint's events while it holds the endpoint's lease."""

    def __init__(self, dispatcher: WebhookDispatcher, endpoint: Endpoint) -> None:
        self.dispatcher = dispatcher
        self.endpoint = endpoint
        self.settings = dispatcher.settings
        self.store = dispatcher.store
        self.app = dispatcher.app
        self._rng = random.Random()
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"webhook-{endpoint.endpoint_id[:8]}")
        self._topics = PUBLIC_EVENTS.topics(endpoint.events)
        self._tables: dict[str, str] = {}  # hand id -> table id, as hands start
        self.wake = threading.Event()
        self._renewed = -float("inf")  # monotonic time of the last renewal
        self._recorded = endpoint.position  # the position last written
        self._position = endpoint.position  # the position delivered up to
        self._written = time.monotonic()  # when it was

    def _run(self) -> None:
        holder = self.dispatcher.holder
        client = Sender(self.endpoint.url, self.settings.timeout,
                        private=self.settings.private,
                        loopback=self.settings.loopback is not False)
        if self.dispatcher.metrics is not None:
            self.dispatcher.metrics.serve_webhook(self.endpoint.endpoint_id)
        try:
            self._recorded = self._position = self.store.endpoint(
                self.endpoint.endpoint_id).position
            while not self.dispatcher.stopping.is_set():
                self._renew()
                self._redeliver(client)
                self._step(client)
        except Stopped:
            pass
        except NotFound:  # deleted meanwhile
            pass
        except RETRIED_FAILURES as error:
            log.warning("webhook %s: the store did not answer (%s); another round retries",
                        self.endpoint.endpoint_id, error)
        finally:
            client.close()
            if self.dispatcher.metrics is not None:
                self.dispatcher.metrics.forget_webhook(self.endpoint.endpoint_id)
            if self.dispatcher.stopping.is_set():
                # The last position (else its events are sent again after a restart), then
                # the lease (else it runs out by itself).
                with contextlib.suppress(Stopped, *STORE_ERRORS):
                    if self._position != self._recorded:
                        self._advance(self._position)
                with contextlib.suppress(*STORE_ERRORS):
                    self.store.release(self.endpoint.endpoint_id, holder)
            self.dispatcher.worker_done(self.endpoint.endpoint_id)

    def _renew(self) -> None:
        """Renew the lease once a third of it has passed (a write each time)."""
        now = time.monotonic()
        if now - self._renewed < self.settings.lease * RENEW_FRACTION:
            return
        if not self.store.take_lease(self.endpoint.endpoint_id, self.dispatcher.holder,
                                     self.settings.lease):
            raise Stopped
        self._renewed = now

    def _step(self, client: Sender) -> None:
        """Deliver the next page of events after the endpoint's position."""
        position = self._position
        head = self.app.head_position()
        notifications = self.app.recorder.select_notifications(
            start=position, limit=self.settings.batch, stop=head, topics=self._topics,
            inclusive_of_start=False)
        events = [e for n in notifications
                  if (e := feed_event(self.app.mapper.to_domain_event(n), n.id)) is not None]
        for index, event in enumerate(events):
            self._report_lag(head, position, events[index:])
            self._renew()  # a page of slow answers may take longer than the lease
            self._deliver_or_dead_letter(client, event)
            position = self._position = event.position
            self._advance_now_and_then(position)
        caught_up = len(notifications) < self.settings.batch
        if caught_up:
            position = self._position = head  # nothing else for this endpoint up to the head
        self._advance_now_and_then(position)
        self._report_lag(head, position, [])
        if caught_up:
            self.wake.wait(self.settings.poll)
            self.wake.clear()

    def _advance_now_and_then(self, position: int) -> None:
        """Write the position if it moved and ADVANCE_SECONDS passed since the last write (a
        write per event, or per look at the feed, would bound an endpoint to the store's
        commit rate and hold up the commands' appends): a crash sends at most that much
        again, with the same ids."""
        if position != self._recorded and time.monotonic() - self._written >= ADVANCE_SECONDS:
            self._advance(position)

    def _advance(self, position: int) -> None:
        if not self.store.advance(self.endpoint.endpoint_id, self.dispatcher.holder, position):
            raise Stopped
        self._recorded, self._written = position, time.monotonic()

    def _report_lag(self, head: int, position: int, pending: Sequence[FeedEvent]) -> None:
        """Report the lag: feed positions to the head, and the age of the oldest pending."""
        metrics = self.dispatcher.metrics
        if metrics is None:
            return
        seconds = ((datetime.now(UTC) - pending[0].timestamp).total_seconds()
                   if pending else 0.0)
        metrics.set_webhook_lag(self.endpoint.endpoint_id, max(0, head - position), seconds)

    def _table_of(self, event: FeedEvent) -> str:
        public = event.public(SPECTATOR)
        if isinstance(public, HandStarted):
            self._tables[public.hand_id] = event.aggregate_id
        if TABLE_EVENTS.kind_named(event.name) is not None:
            return event.aggregate_id
        table_id = self._tables.get(event.aggregate_id)
        if table_id is None:
            table_id = self.app.get_hand(event.aggregate_id).table_id
            self._tables[event.aggregate_id] = table_id
        return table_id

    def _body(self, event: FeedEvent) -> bytes:
        """The delivery's body: the same bytes for every attempt, from any replica (keys
        sorted: protobuf's maps iterate in no fixed order)."""
        return json.dumps(payload(event, self._table_of(event)), separators=(",", ":"),
                          ensure_ascii=False, sort_keys=True).encode()

    def _deliver_or_dead_letter(self, client: Sender, event: FeedEvent) -> None:
        body = self._body(event)
        attempts, failure = self._attempts(client, event, body, self.settings.attempts)
        if failure.error:
            self._dead_letter(event, attempts, failure)

    def _dead_letter(self, event: FeedEvent, attempts: int, failure: Attempt) -> None:
        """Keep the event as a dead letter (its generic error) and log what went wrong."""
        self.store.dead_letter(self.endpoint.endpoint_id, event, attempts, failure.error)
        if self.dispatcher.metrics is not None:
            self.dispatcher.metrics.webhook_dead_lettered(self.endpoint.endpoint_id)
        log.warning("webhook %s: event %s dead-lettered after %d attempts: %s",
                    self.endpoint.endpoint_id, event_id(event), attempts, failure.detail)

    def _attempts(self, client: Sender, event: FeedEvent, body: bytes,
                  limit: int) -> tuple[int, Attempt]:
        """POST until taken or `limit` attempts; (attempts, the last attempt)."""
        metrics = self.dispatcher.metrics
        failure = Attempt()
        for attempt in range(1, limit + 1):
            if self.dispatcher.stopping.is_set():
                raise Stopped
            if attempt > 1 and metrics is not None:
                metrics.webhook_retried(self.endpoint.endpoint_id)
            failure = self._post(client, event, body)
            if not failure.error:
                if metrics is not None:
                    lag = (datetime.now(UTC) - event.timestamp).total_seconds()
                    metrics.webhook_delivered(self.endpoint.endpoint_id, lag)
                return attempt, failure
            if metrics is not None:
                metrics.webhook_failed(self.endpoint.endpoint_id)
            log.info("webhook %s: attempt %d of event %s failed: %s",
                     self.endpoint.endpoint_id, attempt, event_id(event), failure.detail)
            if attempt < limit:
                pause = self.settings.pause(attempt, self._rng)
                if self.dispatcher.stopping.wait(pause):
                    raise Stopped
                self._renew()
        return limit, failure

    def _post(self, client: Sender, event: FeedEvent, body: bytes) -> Attempt:
        """One attempt (see `Attempt`)."""
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature_header(self.endpoint.secret, self.endpoint.key_id,
                                               int(time.time()), body),
            EVENT_ID_HEADER: event_id(event),
            EVENT_NAME_HEADER: event.name,
        }
        return client.post(body, headers)

    def _redeliver(self, client: Sender) -> None:
        """Send the dead letters marked for redelivery (one attempt cycle each)."""
        for letter in self.store.dead_letters(self.endpoint.endpoint_id, redeliver_only=True):
            notifications = self.app.recorder.select_notifications(
                start=letter.position, limit=1, inclusive_of_start=True)
            stored = [e for n in notifications[:1] if n.id == letter.position
                      if (e := feed_event(self.app.mapper.to_domain_event(n), n.id))]
            if not stored:  # pragma: no cover - a stored event never disappears
                self.store.delivered_again(self.endpoint.endpoint_id, letter.position)
                continue
            event = stored[0]
            body = self._body(event)
            attempts, failure = self._attempts(client, event, body, self.settings.attempts)
            if failure.error:  # a dead letter again (counted once, when it first was)
                self.store.dead_letter(self.endpoint.endpoint_id, event, attempts,
                                       failure.error)
                log.warning("webhook %s: event %s failed its redelivery: %s",
                            self.endpoint.endpoint_id, event_id(event), failure.detail)
            else:
                self.store.delivered_again(self.endpoint.endpoint_id, letter.position)


class WebhookDispatcher:
    """Runs a worker for every endpoint whose lease this process holds."""

    def __init__(self, app: Referee, store: WebhookStore, settings: WebhookSettings, *,
                 metrics: WebhookMetrics | None = None, holder: str | None = None) -> None:
        self.app = app
        self.store = store
        self.settings = settings
        self.metrics = metrics
        # Who holds the leases: one name per server, so that a delivery process restarted by
        # its server takes its endpoints back at once instead of waiting for the leases.
        self.holder = holder or str(uuid.uuid4())
        self.stopping = threading.Event()
        self._workers: dict[str, EndpointWorker] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def poke(self, events: object = None) -> None:
        """New events are in the feed (a feed hub listener): wake the workers."""
        del events
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            worker.wake.set()

    def start(self) -> None:
        """Look for endpoints to serve until `stop`."""
        self._thread = threading.Thread(target=self._supervise, name="webhooks", daemon=True)
        self._thread.start()

    def _supervise(self) -> None:
        while not self.stopping.is_set():
            try:
                self._claim_endpoints()
            except RETRIED_FAILURES as error:
                log.warning("webhooks: the store did not answer (%s); retrying", error)
            self.stopping.wait(self.settings.poll)

    def _claim_endpoints(self) -> None:
        for endpoint in self.store.endpoints():
            with self._lock:
                if endpoint.endpoint_id in self._workers:
                    continue
            if not self.store.take_lease(endpoint.endpoint_id, self.holder,
                                         self.settings.lease):
                continue
            worker = EndpointWorker(self, endpoint)
            with self._lock:
                self._workers[endpoint.endpoint_id] = worker
            worker.thread.start()

    def worker_done(self, endpoint_id: str) -> None:
        """A worker ended (lease lost, endpoint deleted, stopping)."""
        with self._lock:
            self._workers.pop(endpoint_id, None)

    def serving(self) -> list[str]:
        """The endpoints this process delivers to now."""
        with self._lock:
            return sorted(self._workers)

    def stop(self) -> None:
        """Stop every worker (an attempt in flight finishes or times out) and give the
        leases back."""
        self.stopping.set()
        self.poke()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            worker.thread.join()
