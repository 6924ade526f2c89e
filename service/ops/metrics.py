"""Prometheus metrics of one referee process: gRPC traffic, game activity and the event store.

Every `Metrics` owns its own `CollectorRegistry`, so several servers can live in one process
(as they do in the tests) without their numbers mixing. Each registry also holds the client
library's default collectors: `process_*` (resident memory, CPU seconds, open and maximum
file descriptors, start time), `python_info` and `python_gc_*`.

Scraping several replicas: each server process serves its own `/metrics` endpoint on its
metrics port (`FIFTYK_METRICS_PORT`) and Prometheus scrapes every replica separately: in
docker compose by listing each replica as a target (`deploy/prometheus/prometheus.yml`), on
Kubernetes through the `prometheus.io/scrape|port|path` pod annotations and pod service
discovery (`deploy/k8s/deployment.yaml`). Counters are per process; dashboards and alerts
`sum` them across the `instance` label.

The gRPC metric names and labels are those of go-grpc-prometheus, so existing dashboards
work; `grpc_code` takes the Go spelling of the status code (`OK`, `FailedPrecondition`, ...).
Domain and store metrics carry the `fiftyk_` prefix. No label takes an unbounded value:
values that come from outside the metrics module are checked against fixed sets and anything
unexpected is counted under `other` / `OTHER`.

Its length (about 600 lines) is mostly the declarations of the one `Metrics` class, each
metric with its help text and bounded labels.
"""

from __future__ import annotations

import contextlib
import re
import ssl
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol
from wsgiref.simple_server import WSGIServer

import grpc
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
    start_http_server,
)

from fiftyk_referee.domain.errors import Reason
from fiftyk_referee.domain.game import Game, Observation, ObservationSpec
from fiftyk_referee.domain.games import game_of, hosted, hosted_reasons
from fiftyk_referee.service.errors import ServiceReason
from fiftyk_referee.service.ops.limits import PEER, PEER_CLASS, ROLES, RPC_CLASSES
from fiftyk_referee.service.ops.tls import TlsFiles

# From 0.5 ms (an in-memory query) up to 10 s (a slow PostgreSQL append under contention).
LATENCY_BUCKETS: tuple[float, ...] = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)
# Rebuilding a table or hand from its events ranges from a few events to a long match.
REBUILD_BUCKETS: tuple[float, ...] = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)
# A delivery arrives within milliseconds when the endpoint keeps up, minutes after an outage.
WEBHOOK_LAG_BUCKETS: tuple[float, ...] = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0,
)

OTHER = "other"
WATCH_SCOPES = frozenset({"credential", "table", "server", "spectators"})
# Calls ended before their request message arrived (service.grpc.arrival).
ARRIVAL_LIMITS = frozenset({"request_timeout", "pending_per_peer", "pending_per_credential"})
OTHER_REASON = "OTHER"
ACCEPTED = "accepted"

GRPC_TYPES = frozenset({"unary", "client_stream", "server_stream", "bidi_stream"})
# The commands on tables; a hand command's kind is one of its game's action kinds.
TABLE_COMMAND_KINDS = frozenset({"create_table", "join_table", "leave_table", "start_hand",
                                 "timeout", "close_table", "abort_table", "replace_seat",
                                 "reissue_seat_token"})
OUTCOMES = frozenset({
    ACCEPTED, OTHER_REASON, *(reason.value for reason in Reason),
    *(reason.value for reason in ServiceReason),
})
# go-grpc-prometheus writes codes as Go's codes.Code.String() does.
_GO_CODE_NAMES = {
    grpc.StatusCode.OK: "OK",
    grpc.StatusCode.CANCELLED: "Canceled",
    grpc.StatusCode.UNKNOWN: "Unknown",
    grpc.StatusCode.INVALID_ARGUMENT: "InvalidArgument",
    grpc.StatusCode.DEADLINE_EXCEEDED: "DeadlineExceeded",
    grpc.StatusCode.NOT_FOUND: "NotFound",
    grpc.StatusCode.ALREADY_EXISTS: "AlreadyExists",
    grpc.StatusCode.PERMISSION_DENIED: "PermissionDenied",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "ResourceExhausted",
    grpc.StatusCode.FAILED_PRECONDITION: "FailedPrecondition",
    grpc.StatusCode.ABORTED: "Aborted",
    grpc.StatusCode.OUT_OF_RANGE: "OutOfRange",
    grpc.StatusCode.UNIMPLEMENTED: "Unimplemented",
    grpc.StatusCode.INTERNAL: "Internal",
    grpc.StatusCode.UNAVAILABLE: "Unavailable",
    grpc.StatusCode.DATA_LOSS: "DataLoss",
    grpc.StatusCode.UNAUTHENTICATED: "Unauthenticated",
}
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def grpc_code_label(code: grpc.StatusCode) -> str:
    """Return the `grpc_code` label value of a status code (Go spelling, e.g. `NotFound`)."""
    return _GO_CODE_NAMES[code]


class GameMetrics(Protocol):
    """The game counters a hand command feeds."""

    def hand_completed(self, game: str, preset: str) -> None:
        """Count a hand played to the end."""

    def observe(self, game: str, preset: str, observation: Observation) -> None:
        """Count one of a game's observations."""


def game_event_metrics(metrics: GameMetrics, hand: Any) -> Callable[[], None]:
    """What to count once a hand command's events are saved: what its game observes in
    them (tricks, bombs, ...), and a hand's end.

    Read from the events the command recorded (taken now, before the save collects them).
    """
    game = game_of(hand)
    preset = hand.rules.preset
    observations = game.observe(hand, list(hand.pending_events))
    over = hand.is_over

    def report() -> None:
        for observation in observations:
            metrics.observe(game.name, preset, observation)
        if over:
            metrics.hand_completed(game.name, preset)

    return report


def _game_counter_specs(games: Iterable[Game]) -> dict[str, ObservationSpec]:
    """The counters the games' events feed, by name (games that share a counter must
    describe it alike)."""
    specs: dict[str, ObservationSpec] = {}
    for game in games:
        for spec in game.observations:
            held = specs.get(spec.name)
            if held is not None and (held.label, held.help) != (spec.label, spec.help):
                raise ValueError(f"games describe the counter {spec.name!r} differently")
            if held is not None:
                spec = ObservationSpec(spec.name, spec.help, spec.label,
                                       held.values | spec.values)
            specs[spec.name] = spec
    return specs


def _bounded(value: str, allowed: frozenset[str], fallback: str) -> str:
    return value if value in allowed else fallback


@dataclass(frozen=True)
class RpcLabels:
    """The go-grpc-prometheus labels that identify one RPC method."""

    grpc_type: str
    grpc_service: str
    grpc_method: str

    @classmethod
    def from_path(cls, path: str, grpc_type: str) -> RpcLabels:
        """Split a `/package.Service/Method` path into labels."""
        service, _, method = path.lstrip("/").rpartition("/")
        return cls(_bounded(grpc_type, GRPC_TYPES, OTHER), service, method)


class Metrics:
    """The metrics of one server process, in a registry of its own."""

    def __init__(self) -> None:
        # No `_created` series: one per counter and histogram child, doubling the series
        # count for a timestamp nothing here queries. (A process-wide switch of the client.)
        disable_created_metrics()  # type: ignore[no-untyped-call]  # untyped in the client
        self.registry = CollectorRegistry(auto_describe=True)
        # The client library's default collectors, which operators expect beside the gRPC
        # series: process_* (memory, CPU, open file descriptors), python_info, python_gc_*.
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None
        rpc = ("grpc_type", "grpc_service", "grpc_method")
        registry = self.registry
        self._grpc_started = Counter(
            "grpc_server_started_total", "RPCs started on the server.", rpc, registry=registry
        )
        self._grpc_handled = Counter(
            "grpc_server_handled_total", "RPCs completed on the server, regardless of success.",
            (*rpc, "grpc_code"), registry=registry,
        )
        self._grpc_seconds = Histogram(
            "grpc_server_handling_seconds",
            "Time from the start of an RPC until the server finished handling it.",
            rpc, buckets=LATENCY_BUCKETS, registry=registry,
        )
        self._grpc_received = Counter(
            "grpc_server_msg_received_total", "Messages received by the server.", rpc,
            registry=registry,
        )
        self._grpc_sent = Counter(
            "grpc_server_msg_sent_total", "Messages sent by the server.", rpc, registry=registry
        )
        self._commands = Counter(
            "fiftyk_commands_total",
            "Game commands by kind and outcome (`accepted` or the rejection reason code).",
            ("command", "outcome"), registry=registry,
        )
        self._hands_started = Counter(
            "fiftyk_hands_started_total", "Hands dealt, by game and preset.",
            ("game", "preset"), registry=registry,
        )
        self._hands_completed = Counter(
            "fiftyk_hands_completed_total",
            "Hands played to the end and scored, by game and preset.",
            ("game", "preset"), registry=registry,
        )
        self._games = {game.name: frozenset(game.presets) for game in hosted().values()}
        self._outcomes = OUTCOMES | hosted_reasons()  # and each hosted game's own codes
        self._command_kinds = TABLE_COMMAND_KINDS | {
            spec.kind for game in hosted().values() for spec in game.action_kinds}
        self._counter_specs = _game_counter_specs(hosted().values())
        self._game_counters = {
            name: Counter(f"fiftyk_{name}_total", spec.help,
                          ("game", "preset", *((spec.label,) if spec.label else ())),
                          registry=registry)
            for name, spec in self._counter_specs.items()}
        self._append_seconds = Histogram(
            "fiftyk_event_store_append_seconds", "Time to append a command's events to the store.",
            buckets=LATENCY_BUCKETS, registry=registry,
        )
        self._conflicts = Counter(
            "fiftyk_event_store_conflicts_total",
            "Appends refused because another writer stored the same version first.",
            registry=registry,
        )
        self._retries = Counter(
            "fiftyk_command_retries_total", "Commands retried after a conflict.",
            registry=registry,
        )
        self._idempotent_replays = Counter(
            "fiftyk_idempotent_replays_total",
            "Commands answered from a stored result because their request id was seen before.",
            registry=registry,
        )
        self._rebuild_seconds = Histogram(
            "fiftyk_rebuild_seconds", "Time to rebuild an aggregate from events.",
            buckets=REBUILD_BUCKETS, registry=registry,
        )
        self._active_tables = Gauge(
            "fiftyk_active_tables",
            "Tables with a hand in progress and an event in the activity window (global: every"
            " replica follows the whole feed).",
            registry=registry,
        )
        self._watch_streams = Gauge(
            "fiftyk_watch_streams_open", "Open WatchTable streams.", registry=registry
        )
        self._spectators = Gauge(
            "fiftyk_spectators_watching",
            "Open WatchTable streams of spectator tokens (this replica).", registry=registry
        )
        self._spectator_tokens = Counter(
            "fiftyk_spectator_tokens_issued_total", "Spectator tokens issued.",
            registry=registry,
        )
        self._spectator_delayed = Counter(
            "fiftyk_spectator_events_delayed_total",
            "Events a spectator stream held back for the table's spectator delay.",
            registry=registry,
        )
        self._store_up = Gauge(
            "fiftyk_event_store_up",
            "1 while the event store answers the health probe, 0 while it does not (the"
            " replica then reports NOT_SERVING and fails calls UNAVAILABLE).",
            registry=registry,
        )
        self._store_up.set(1)
        self._store_recoveries = Counter(
            "fiftyk_event_store_recoveries_total",
            "Times the event store took writes again after the health probe had found it"
            " unwritable (an outage or a failover ended).",
            registry=registry,
        )
        self._store_failovers = Counter(
            "fiftyk_event_store_failovers_total",
            "Times the writable event store server changed (host:port): the replica followed"
            " a failover or switchover of the database to another node.",
            registry=registry,
        )
        self._integrity_problems = Gauge(
            "fiftyk_integrity_problems",
            "Problems the last integrity audit found in the store: events edited, dropped or"
            " reordered, a hand replaced, the ledger rolled back (docs/fairness.md). Any"
            " value above 0 means the stored history can no longer be trusted.",
            registry=registry,
        )
        self._ledger_hands = Gauge(
            "fiftyk_ledger_hands", "Finished hands in the ledger at the last integrity audit.",
            registry=registry,
        )
        self._integrity_runs = Counter(
            "fiftyk_integrity_audits_total",
            "Integrity audits run, by result (clean, problems).", ("result",),
            registry=registry,
        )
        self._rate_limited = Counter(
            "fiftyk_rate_limited_total",
            "Calls refused RATE_LIMITED, by the caller's role and the RPC class (role peer,"
            " class total: all calls from one address together).",
            ("role", "rpc_class"), registry=registry,
        )
        self._watch_limited = Counter(
            "fiftyk_watch_limited_total",
            "WatchTable streams refused LIMIT_EXCEEDED, by the limit reached (credential,"
            " table, server, a table's spectators).", ("scope",), registry=registry,
        )
        self._arrival_refused = Counter(
            "fiftyk_request_arrival_refused_total",
            "Calls ended before their request message arrived: it took longer than the"
            " transport limit (request_timeout), or the caller already had too many calls"
            " waiting for theirs: its credential (pending_per_credential), or its address"
            " when it showed no valid credential (pending_per_peer).", ("limit",),
            registry=registry,
        )
        for limit in ARRIVAL_LIMITS:
            self._arrival_refused.labels(limit)
        self._arrival_waiting = Gauge(
            "fiftyk_request_arrival_waiting",
            "Calls waiting for a request message now, over every caller.", registry=registry,
        )
        self._webhook_deliveries = Counter(
            "fiftyk_webhook_deliveries_total",
            "Webhook events an endpoint took (a 2xx answer), by endpoint id.", ("endpoint",),
            registry=registry,
        )
        self._webhook_failures = Counter(
            "fiftyk_webhook_failures_total",
            "Webhook POSTs that failed (not 2xx, a timeout, no connection), by endpoint id.",
            ("endpoint",), registry=registry,
        )
        self._webhook_retries = Counter(
            "fiftyk_webhook_retries_total",
            "Webhook POSTs that retried an event after a failure, by endpoint id.",
            ("endpoint",), registry=registry,
        )
        self._webhook_dead_letters = Counter(
            "fiftyk_webhook_dead_letters_total",
            "Webhook events moved to an endpoint's dead letters after every attempt failed.",
            ("endpoint",), registry=registry,
        )
        self._webhook_delivery_lag = Histogram(
            "fiftyk_webhook_delivery_lag_seconds",
            "Time from an event's recording to its delivery to an endpoint.",
            buckets=WEBHOOK_LAG_BUCKETS, registry=registry,
        )
        self._webhook_lag_events = Gauge(
            "fiftyk_webhook_lag_events",
            "Feed positions between the feed's head and an endpoint's position (0: caught"
            " up); only the replica serving the endpoint reports it.", ("endpoint",),
            registry=registry,
        )
        self._webhook_process_restarts = Counter(
            "fiftyk_webhook_process_restarts_total",
            "Times the webhook delivery process died (or could not start) and was started"
            " again by the server.", registry=registry,
        )
        self._webhook_lag_seconds = Gauge(
            "fiftyk_webhook_lag_seconds",
            "Age of the oldest event an endpoint has not taken yet (0: caught up).",
            ("endpoint",), registry=registry,
        )
        for role in ROLES:
            for rpc_class in RPC_CLASSES:
                self._rate_limited.labels(role, rpc_class)
        self._rate_limited.labels(PEER, PEER_CLASS)
        for scope in WATCH_SCOPES:
            self._watch_limited.labels(scope)
        # The fixed label values start at 0: every family shows from the first scrape and the
        # first increment counts in rate() (a series that appears at 1 loses it).
        for game, presets in self._games.items():
            for preset in sorted(presets):
                for counter in (self._hands_started, self._hands_completed):
                    counter.labels(game, preset)
                for spec in self._counter_specs.values():
                    counter = self._game_counters[spec.name]
                    if not spec.label:
                        counter.labels(game, preset)
                    for value in sorted(spec.values - {OTHER}):
                        counter.labels(game, preset, value)

    # gRPC, called by service.grpc.interceptors.MetricsInterceptor.

    def grpc_started(self, rpc: RpcLabels) -> None:
        """Count an RPC that started."""
        self._grpc_started.labels(rpc.grpc_type, rpc.grpc_service, rpc.grpc_method).inc()

    def grpc_received(self, rpc: RpcLabels) -> None:
        """Count one message received from the client."""
        self._grpc_received.labels(rpc.grpc_type, rpc.grpc_service, rpc.grpc_method).inc()

    def grpc_sent(self, rpc: RpcLabels) -> None:
        """Count one message sent to the client."""
        self._grpc_sent.labels(rpc.grpc_type, rpc.grpc_service, rpc.grpc_method).inc()

    def grpc_handled(self, rpc: RpcLabels, code: grpc.StatusCode, seconds: float) -> None:
        """Count a finished RPC with its final status code and observe its duration."""
        labels = (rpc.grpc_type, rpc.grpc_service, rpc.grpc_method)
        self._grpc_handled.labels(*labels, grpc_code_label(code)).inc()
        self._grpc_seconds.labels(*labels).observe(seconds)

    # Game activity, called by the application.

    def command(self, kind: str, outcome: str) -> None:
        """Count a command (`play`, `CreateTable`, ...): `accepted` or its reason code."""
        snake = _CAMEL_BOUNDARY.sub("_", kind).lower()
        self._commands.labels(
            _bounded(snake, self._command_kinds, OTHER),
            _bounded(outcome, self._outcomes, OTHER_REASON),
        ).inc()

    def hand_started(self, game: str, preset: str) -> None:
        """Count a hand dealt under a game's preset."""
        self._hands_started.labels(*self._game_labels(game, preset)).inc()

    def hand_completed(self, game: str, preset: str) -> None:
        """Count a hand played to the end under a game's preset."""
        self._hands_completed.labels(*self._game_labels(game, preset)).inc()

    def observe(self, game: str, preset: str, observation: Observation) -> None:
        """Count one of a game's observations (an undeclared one is ignored)."""
        spec = self._counter_specs.get(observation.name)
        if spec is None:
            return
        labels = self._game_labels(game, preset)
        if spec.label:
            labels = (*labels, _bounded(observation.label, spec.values, OTHER))
        self._game_counters[spec.name].labels(*labels).inc()

    def _game_labels(self, game: str, preset: str) -> tuple[str, ...]:
        """Bounded `game` and `preset` label values (unknown ones become `other`)."""
        presets = self._games.get(game)
        if presets is None:
            return OTHER, OTHER
        return game, preset if preset in presets else OTHER

    # Event store.

    def observe_append(self, seconds: float) -> None:
        """Observe the duration of one event-store append."""
        self._append_seconds.observe(seconds)

    def conflict(self) -> None:
        """Count an append refused by optimistic concurrency control."""
        self._conflicts.inc()

    def retry(self) -> None:
        """Count a command retried after a conflict."""
        self._retries.inc()

    def idempotent_replay(self) -> None:
        """Count a command answered from the result stored for its request id."""
        self._idempotent_replays.inc()

    def observe_rebuild(self, seconds: float) -> None:
        """Observe the duration of rebuilding state from stored events."""
        self._rebuild_seconds.observe(seconds)

    # Gauges.

    def count_active_tables_with(self, count: Callable[[], int]) -> None:
        """Read the active tables from `count` at every scrape (it may run on any thread)."""
        self._active_tables.set_function(lambda: float(count()))

    def count_waiting_requests_with(self, count: Callable[[], int]) -> None:
        """Read the calls waiting for a request message from `count` at every scrape."""
        self._arrival_waiting.set_function(lambda: float(count()))

    def watch_opened(self) -> None:
        """Count a WatchTable stream that opened."""
        self._watch_streams.inc()

    def watch_closed(self) -> None:
        """Count a WatchTable stream that closed."""
        self._watch_streams.dec()

    def spectator_opened(self) -> None:
        """Count a spectator's WatchTable stream that opened."""
        self._spectators.inc()

    def spectator_closed(self) -> None:
        """Count a spectator's WatchTable stream that closed."""
        self._spectators.dec()

    def spectator_token_issued(self) -> None:
        """Count a spectator token issued."""
        self._spectator_tokens.inc()

    def spectator_event_delayed(self) -> None:
        """Count an event a spectator stream held back."""
        self._spectator_delayed.inc()

    def rate_limited(self, role: str, rpc_class: str) -> None:
        """Count a call refused by its credential's rate limit."""
        self._rate_limited.labels(_bounded(role, frozenset({*ROLES, PEER}), OTHER),
                                  _bounded(rpc_class, frozenset({*RPC_CLASSES, PEER_CLASS}),
                                           OTHER)).inc()

    def watch_limited(self, scope: str) -> None:
        """Count a WatchTable stream refused by a limit on open streams."""
        self._watch_limited.labels(_bounded(scope, WATCH_SCOPES, OTHER)).inc()

    def arrival_refused(self, limit: str) -> None:
        """Count a call ended before its request message arrived."""
        self._arrival_refused.labels(_bounded(limit, ARRIVAL_LIMITS, OTHER)).inc()

    def integrity_checked(self, problems: int, hands: int) -> None:
        """Record one integrity audit: the problems found and the hands in the ledger."""
        self._integrity_problems.set(problems)
        self._ledger_hands.set(hands)
        self._integrity_runs.labels("problems" if problems else "clean").inc()

    # Webhooks, called by service.webhooks.dispatcher (endpoint ids are bounded: at most
    # MAX_ENDPOINTS).

    def serve_webhook(self, endpoint: str) -> None:
        """This replica serves the endpoint: its series exist from now on, at zero."""
        for counter in (self._webhook_deliveries, self._webhook_failures,
                        self._webhook_retries, self._webhook_dead_letters):
            counter.labels(endpoint)
        self.set_webhook_lag(endpoint, 0, 0.0)

    def webhook_delivered(self, endpoint: str, lag_seconds: float) -> None:
        """Count a delivery and observe how long after the event it arrived."""
        self._webhook_deliveries.labels(endpoint).inc()
        self._webhook_delivery_lag.observe(max(0.0, lag_seconds))

    def webhook_failed(self, endpoint: str) -> None:
        """Count a failed attempt."""
        self._webhook_failures.labels(endpoint).inc()

    def webhook_retried(self, endpoint: str) -> None:
        """Count an attempt after a failed one."""
        self._webhook_retries.labels(endpoint).inc()

    def webhook_dead_lettered(self, endpoint: str) -> None:
        """Count an event moved to the dead letters."""
        self._webhook_dead_letters.labels(endpoint).inc()

    def set_webhook_lag(self, endpoint: str, events: int, seconds: float) -> None:
        """Set how far behind the feed the endpoint is."""
        self._webhook_lag_events.labels(endpoint).set(events)
        self._webhook_lag_seconds.labels(endpoint).set(seconds)

    def webhook_process_restarted(self) -> None:
        """Count a restart of the webhook delivery process (service.webhooks.process)."""
        self._webhook_process_restarts.inc()

    def forget_webhook(self, endpoint: str) -> None:
        """This replica no longer serves the endpoint: drop its gauges."""
        for gauge in (self._webhook_lag_events, self._webhook_lag_seconds):
            with contextlib.suppress(KeyError):
                gauge.remove(endpoint)

    def set_store_up(self, up: bool) -> None:
        """Record whether the event store answered the last health probe."""
        self._store_up.set(1 if up else 0)

    def store_recovered(self) -> None:
        """Count the event store taking writes again after a failed probe."""
        self._store_recoveries.inc()

    def store_failed_over(self) -> None:
        """Count a change of the writable event store server."""
        self._store_failovers.inc()

    # Exposition.

    def render(self) -> bytes:
        """Return the Prometheus text exposition of every metric."""
        return generate_latest(self.registry)

    def start_http_server(self, port: int, addr: str = "0.0.0.0", *,
                          tls: TlsFiles | None = None) -> int:
        """Serve `/metrics` on a background thread (over TLS with `tls`, requiring a client
        certificate when it names a client CA); port 0 picks a free port. Return the port."""
        if self._server is not None:
            raise RuntimeError("the metrics HTTP server is already running")
        if tls is None:
            self._server, self._thread = start_http_server(port, addr, registry=self.registry)
        else:
            self._server, self._thread = start_http_server(
                port, addr, registry=self.registry, certfile=str(tls.cert),
                keyfile=str(tls.key),
                client_cafile=str(tls.client_ca) if tls.client_ca else None,
                client_auth_required=tls.client_ca is not None,
                tls_min_version=ssl.TLSVersion.TLSv1_2)
        return int(self._server.server_port)

    def replace_tls_context(self, context: ssl.SSLContext) -> None:
        """Serve new `/metrics` connections with `context` (a renewed certificate)."""
        if self._server is not None and isinstance(self._server.socket, ssl.SSLSocket):
            # The listening socket wraps each accepted connection with its `_context`. The
            # public setter also updates the socket's SSL object, which a listening socket
            # does not have (AttributeError); loading the new chain into the context in use
            # instead would race the serving thread's handshakes.
            setattr(self._server.socket, "_context", context)  # noqa: B010

    def stop_http_server(self) -> None:
        """Stop the `/metrics` endpoint if it runs."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = self._thread = None
