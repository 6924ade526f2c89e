"""The composition root: the one place that wires the referee together.

`create_server(config)` builds the application on the configured event store, the gRPC
server with its interceptors, health and (where `Config.reflection_enabled`) reflection
services, the feed hub, the turn clock and the metrics endpoint. Nothing opens a
connection at import time.

Metrics wiring: the interceptors count every RPC; the application counts commands, hands,
tricks, bombs, appends, conflicts, retries, idempotent replays and rebuilds (`hand_at`,
`rebuild_table`); the feed hub feeds the active-tables tracker (`service.platform.activity`),
read at each scrape; watch streams open and close the watch gauge in the servicer.

Health: the service names `""` and `fiftyk.referee.v1.RefereeService` are readiness — on a
PostgreSQL store a background probe (`StoreHealth`) turns them NOT_SERVING while no
connection of the commands' pool can write (database down, or only a standby reachable) and
SERVING again by itself after; `liveness` stays SERVING while the process
runs (restarting a replica does not bring a database back).

Its length (about 530 lines) is the one place that wires everything: split, it would no
longer be one root.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import shutil
import signal
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.feed import FeedHub, cancel
from fiftyk_referee.service.core.store import (
    OneCallPostgresRecorder,
    StoreAvailability,
    persistence_env,
    wait_for_database,
)
from fiftyk_referee.service.core.turn_clock import TurnClock
from fiftyk_referee.service.core.workers import Workers
from fiftyk_referee.service.errors import ServiceError
from fiftyk_referee.service.grpc.arrival import RequestArrivalInterceptor
from fiftyk_referee.service.grpc.callers import ClientAddresses
from fiftyk_referee.service.grpc.games import game_protos
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2, referee_pb2_grpc
from fiftyk_referee.service.grpc.interceptors import (
    MetricsInterceptor,
    PlatformCertificateInterceptor,
    RateLimitInterceptor,
    RequestContextInterceptor,
)
from fiftyk_referee.service.grpc.malformed import MalformedRequestInterceptor
from fiftyk_referee.service.grpc.paging import TRANSPORT_LIMIT_FACTOR
from fiftyk_referee.service.grpc.servicer import RefereeServicer
from fiftyk_referee.service.ops.config import Config, host_port
from fiftyk_referee.service.ops.limits import RateLimiter, TransportLimits, WatchLimiter
from fiftyk_referee.service.ops.logs import configure_logging
from fiftyk_referee.service.ops.metrics import Metrics
from fiftyk_referee.service.ops.tls import CertificateReloader
from fiftyk_referee.service.platform.activity import ActiveTables
from fiftyk_referee.service.platform.lobby import Lobby, LobbyFollower
from fiftyk_referee.service.platform.webhook_store import WebhookStore
from fiftyk_referee.service.trust.signing import Signer
from fiftyk_referee.service.web.gateway import WebTable
from fiftyk_referee.service.webhooks.process import DeliveryProcess, DeliverySpec

SERVICE_NAME = referee_pb2.DESCRIPTOR.services_by_name["RefereeService"].full_name
HEALTH_SERVICE_NAME = health_pb2.DESCRIPTOR.services_by_name["Health"].full_name
LIVENESS_SERVICE = "liveness"
READINESS_SERVICES = ("", SERVICE_NAME)
# A probe stuck longer than the store timeout (plus this) counts as a failed one.
PROBE_GRACE_SECONDS = 1.0
# The bound of each shutdown step (the drain of the gRPC calls: the grace period more). A
# healthy step takes milliseconds; a stuck one costs this, then the shutdown goes on.
SHUTDOWN_STEP_SECONDS = 5.0
EXIT_LEFT_BEHIND = 1  # `fiftyk serve` exited, but a shutdown step had to be left behind
TLS_RELOAD_CHECK_SECONDS = 2.0
WEB_SOCKET_NAME = "grpc.sock"
# File descriptors kept back from client connections: the database pool (counted apart),
# the metrics port and its scrapes, the SQLite file and its journal, logs, gRPC's own pipes.
RESERVED_FILE_DESCRIPTORS = 128
MIN_CONNECTIONS = 16
MILLISECONDS = 1000
# The delivery process's connections: its workers (one per endpoint it serves) take turns.
DELIVERY_POOL_SIZE = 4
log = logging.getLogger(__name__)


class ListenError(OSError):
    """A port the configuration names cannot be opened; the message is one line."""


class StoreHealth:
    """Probes the event store in the background and reports it: readiness NOT_SERVING and
    `fiftyk_event_store_up` 0 while no pooled connection can write, SERVING and 1 after;
    counts recoveries and changes of the writable server (a failover followed)."""

    def __init__(self, availability: StoreAvailability, health: health.aio.HealthServicer,
                 metrics: Metrics, interval_seconds: float, *,
                 executor: ThreadPoolExecutor | None = None) -> None:
        self._availability = availability
        self._health = health
        self._metrics = metrics
        self._interval = interval_seconds
        # A thread of its own: a probe never waits behind commands blocked on the store.
        self._executor = executor or ThreadPoolExecutor(max_workers=1,
                                                        thread_name_prefix="store-probe")
        self._task: asyncio.Task[None] | None = None
        self._serving = True  # as create_server set readiness before starting the probe
        self._server = ""  # the writable server the last good probe reached

    async def start(self) -> None:
        """Start probing."""
        self._task = asyncio.create_task(self._run(), name="store-health")

    async def stop(self) -> None:
        """Stop probing (before the graceful shutdown turns every service NOT_SERVING)."""
        await cancel(self._task)
        self._task = None
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._availability.close()

    async def _probe(self) -> bool:
        loop = asyncio.get_running_loop()
        probe = loop.run_in_executor(self._executor, self._availability.probe)
        # Not `wait_for`: on Python 3.11 it returns the answer when a cancellation (`stop`)
        # arrives with it, and the probing went on for ever. `wait` lets the cancellation
        # through, and leaves the probe running when the time is up.
        answered, _ = await asyncio.wait(
            {probe}, timeout=self._availability.timeout_seconds + PROBE_GRACE_SECONDS)
        if not answered:
            # A network that drops packets can hold a probe for minutes: the store is down
            # meanwhile, and the next probe starts only after this one returns.
            self._availability.mark_down()
            await self._report(up=False)
        return await probe

    async def _report(self, *, up: bool) -> None:
        """Publish the store's state: the gauge always, readiness and counters on a change."""
        self._metrics.set_store_up(up)
        if up:
            server = self._availability.server
            if self._server and server != self._server:
                log.warning("event store followed to %s (was %s)", server, self._server)
                self._metrics.store_failed_over()
            self._server = server
        if up == self._serving:
            return
        self._serving = up
        if up:
            self._metrics.store_recovered()
        status = (health_pb2.HealthCheckResponse.SERVING if up
                  else health_pb2.HealthCheckResponse.NOT_SERVING)
        for name in READINESS_SERVICES:
            await self._health.set(name, status)

    async def _run(self) -> None:
        while True:
            await self._report(up=await self._probe())
            await asyncio.sleep(self._interval)


def store_availability(app: Referee) -> StoreAvailability | None:
    """The PostgreSQL store's availability (None for SQLite: a local file has no outage)."""
    recorder = app.recorder
    return recorder.availability if isinstance(recorder, OneCallPostgresRecorder) else None


@dataclass
class RunningServer:
    """A started referee: its ports and the parts that `stop` shuts down in order."""

    server: grpc.aio.Server
    port: int
    metrics_port: int | None
    app: Referee
    metrics: Metrics
    health: health.aio.HealthServicer
    hub: FeedHub
    clock: TurnClock
    executor: Workers
    store_health: StoreHealth | None = None
    certificates: asyncio.Task[None] | None = None
    servicer: RefereeServicer | None = None
    web: WebTable | None = None
    web_port: int | None = None
    web_socket_dir: str | None = None
    integrity: asyncio.Task[None] | None = None
    lobby: LobbyFollower | None = None
    webhooks: DeliveryProcess | None = None
    # The full names of the gRPC services the server offers (what it registered).
    services: tuple[str, ...] = ()

    async def stop(self, grace: float) -> list[str]:
        """Graceful shutdown: NOT_SERVING, drain in-flight calls, then release everything.

        Every step has a bound (`SHUTDOWN_STEP_SECONDS`; the drain of the calls in flight
        the grace period more, the webhooks the attempt timeout more):
        one that overruns or fails is logged and left behind, and the next step starts.
        Returns the steps left behind (a thread of theirs may still be running)."""
        steps = ShutdownSteps()
        await steps.run("TLS reloading", cancel(self.certificates))
        await steps.run("integrity audit", cancel(self.integrity))
        if self.store_health is not None:
            await steps.run("store probe", self.store_health.stop())
        await steps.run("health", self.health.enter_graceful_shutdown())
        if self.servicer is not None:
            # Calls that reach a handler now, and the open watch streams, end UNAVAILABLE
            # with SHUTTING_DOWN: clients learn to go to another replica, not to give up.
            self.servicer.drain()
        await steps.run("turn clock", self.clock.stop())
        if self.web is not None:
            await steps.run("web table", self.web.stop())
        await steps.run("gRPC calls", self.server.stop(grace), more=grace)
        if self.web_socket_dir is not None:
            shutil.rmtree(self.web_socket_dir, ignore_errors=True)
        await steps.run("feed hub", self.hub.stop())
        # Blocking calls, each on a thread of its own: a lobby thread, the webhook delivery
        # process or a command may be waiting for the database or an endpoint.
        if self.lobby is not None:
            await steps.run_blocking("lobby", self.lobby.stop)
        if self.webhooks is not None:  # an attempt in flight may take its whole timeout
            await steps.run_blocking("webhooks", self.webhooks.stop,
                                     more=self.webhooks.settings.timeout)
        await steps.run_blocking("metrics endpoint", self.metrics.stop_http_server)
        await steps.run_blocking("worker threads", lambda: self.executor.shutdown(wait=True))
        await steps.run_blocking("event store", self.app.close)
        return steps.left_behind


class ShutdownSteps:
    """The steps of a shutdown, each within its bound: one that overruns is logged (which,
    after how long) and left behind, as is one that fails, and the shutdown goes on."""

    def __init__(self) -> None:
        self.left_behind: list[str] = []

    async def run(self, name: str, step: Awaitable[None], *, more: float = 0.0) -> None:
        """Await `step` for at most `SHUTDOWN_STEP_SECONDS` (plus `more`)."""
        bound = SHUTDOWN_STEP_SECONDS + more
        task = asyncio.ensure_future(step)
        done, _ = await asyncio.wait({task}, timeout=bound)
        if not done:
            task.cancel()
            self.left_behind.append(name)
            log.error("shutdown: %s did not finish in %.1f s; going on without it", name,
                      bound, extra={"step": name, "bound_seconds": bound})
        elif not task.cancelled() and task.exception() is not None:
            self.left_behind.append(name)
            log.error("shutdown: %s failed; going on", name, exc_info=task.exception(),
                      extra={"step": name})

    async def run_blocking(self, name: str, call: Callable[[], None], *,
                           more: float = 0.0) -> None:
        """Run a blocking `call` on a daemon thread of its own, as a step: it holds up
        neither the event loop nor, should it never return, the process's exit."""
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()

        def settle(error: BaseException | None) -> None:
            if finished.done():  # left behind: nobody waits for it any more
                return
            if error is None:
                finished.set_result(None)
            else:
                finished.set_exception(error)

        def work() -> None:
            error: BaseException | None = None
            try:
                call()
            except BaseException as caught:  # handed to the step, which logs it
                error = caught
            with contextlib.suppress(RuntimeError):  # the event loop closed meanwhile
                loop.call_soon_threadsafe(settle, error)

        threading.Thread(target=work, name=f"shutdown {name}", daemon=True).start()
        await self.run(name, finished, more=more)


def connection_limit(limits: TransportLimits, pool_size: int) -> int:
    """Connections the server accepts at once: as configured, else what the process's
    file-descriptor limit leaves after the reserve and the database pool."""
    if limits.connections:
        return limits.connections
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(MIN_CONNECTIONS, soft - RESERVED_FILE_DESCRIPTORS - pool_size)


def transport_options(limits: TransportLimits, pool_size: int) -> list[tuple[str, int]]:
    """gRPC's channel arguments for the transport limits (see `service.ops.limits`)."""

    def ms(seconds: float) -> int:
        return max(1, round(seconds * MILLISECONDS))

    return [
        ("grpc.max_concurrent_streams", limits.streams),
        ("grpc.max_allowed_incoming_connections", connection_limit(limits, pool_size)),
        ("grpc.max_connection_idle_ms", ms(limits.idle)),
        ("grpc.max_connection_age_ms", ms(limits.age)),
        ("grpc.max_connection_age_grace_ms", ms(limits.age_grace)),
        ("grpc.keepalive_time_ms", ms(limits.keepalive)),
        ("grpc.keepalive_timeout_ms", ms(limits.keepalive_timeout)),
        # Clients may keep a quiet connection alive with pings no more often than this
        # (also between calls), and a peer that pings faster is struck, then cut off.
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", ms(limits.ping_interval)),
        ("grpc.http2.max_ping_strikes", limits.ping_strikes),
        # Handshakes (TLS, the HTTP/2 preface) that have not finished in this time are cut.
        ("grpc.server_handshake_timeout_ms", ms(limits.request)),
    ]


def _persistence(config: Config, *, create_schema: bool | None = None,
                 pool_size: int | None = None) -> dict[str, str]:
    return persistence_env(config.database,
                           pool_size=config.pool_size if pool_size is None else pool_size,
                           lock_timeout_ms=config.lock_timeout_ms,
                           create_schema=(config.create_schema if create_schema is None
                                          else create_schema),
                           timeout_seconds=config.db_timeout_seconds,
                           # The pool retries a lost connection at least as often as the
                           # probe asks: ready means the commands' pool can write.
                           reconnect_seconds=config.db_probe_seconds)


async def create_server(config: Config, *, metrics_port: int | None = None) -> RunningServer:
    """Build and start everything for `config`; returns once the server accepts calls.

    Raises `store.DatabaseUnreachable` when PostgreSQL does not answer within
    `config.db_startup_wait_seconds`.
    """
    tls = CertificateReloader(config.tls) if config.tls is not None else None  # TlsError
    metrics = Metrics()
    executor = Workers(config.workers, name="referee")
    loop = asyncio.get_running_loop()
    try:
        await loop.run_in_executor(executor, lambda: wait_for_database(
            config.database, wait_seconds=config.db_startup_wait_seconds,
            timeout_seconds=config.db_timeout_seconds))
    except BaseException:
        executor.shutdown(wait=False)
        raise
    app = await loop.run_in_executor(
        executor, lambda: Referee(_persistence(config), metrics=metrics,
                                  signer=Signer.from_text(config.signing_key),
                                  witnesses=config.witness_keys))
    hub = FeedHub(app, executor)
    active_tables = ActiveTables()
    hub.add_listener(active_tables.observe)
    metrics.count_active_tables_with(active_tables.count)
    await hub.start()
    lobby = await loop.run_in_executor(
        executor, lambda: Lobby(app, create=config.create_schema))
    # The lobby follows the feed from the hub's batches (the hub reads and decodes each
    # event once for both); it is handed every batch after the hub's head now.
    lobby_follower = LobbyFollower(lobby, hub.head)
    hub.add_listener(lobby_follower.offer)
    hooks = config.webhook_settings
    webhooks = await loop.run_in_executor(
        executor, lambda: WebhookStore(app, create=config.create_schema, private=hooks.private,
                                       loopback=hooks.loopback is not False))
    # Deliveries run in a process of their own (service.webhooks.process), which follows the
    # event store itself: none of their work waits for, or holds, this process's GIL.
    deliveries = DeliveryProcess(DeliverySpec(
        persistence=_persistence(config, create_schema=False, pool_size=DELIVERY_POOL_SIZE),
        settings=hooks, holder=DeliveryProcess.new_holder(), log_level=config.log_level),
        metrics=metrics)
    # The stubs mark the games' legacy RPCs abstract; the servicer binds those of the
    # installed games (`GameBundle.legacy_rpcs`) when it is made.
    servicer = RefereeServicer(  # type: ignore[abstract]
        app, config, executor, hub, metrics, lobby, webhooks)
    limit = config.max_message_bytes * TRANSPORT_LIMIT_FACTOR
    # Who a call is counted as (service.grpc.callers): its verified credential, else its
    # client address — behind a trusted proxy, the one the proxy forwarded.
    addresses = ClientAddresses(config.trusted_proxy_networks)
    certificate_names = frozenset(config.tls_platform_names)
    # Outermost, for every method: a call whose request message does not arrive in time, or
    # one more of a caller with too many such calls, is ended before anything else spends
    # on it.
    interceptors: list[grpc.aio.ServerInterceptor] = [
        RequestArrivalInterceptor(config.transport, metrics, config, addresses,
                                  certificate_names),
        RequestContextInterceptor(), MetricsInterceptor(metrics)]
    if config.tls_platform_names:
        interceptors.append(PlatformCertificateInterceptor(config.tls_platform_names))
    # A platform by certificate is limited as the platform.
    interceptors.append(RateLimitInterceptor(config, RateLimiter(config.rates,
                                                                  peer_rate=config.peer_rate),
                                             WatchLimiter(config.watches), metrics,
                                             SERVICE_NAME, addresses, certificate_names))
    # Innermost: undecodable requests are refused before any handler (see its module).
    interceptors.append(MalformedRequestInterceptor())
    server = grpc.aio.server(
        interceptors=interceptors,
        options=[("grpc.max_receive_message_length", limit),
                 ("grpc.max_send_message_length", limit),
                 # Only the processes of `fiftyk serve --processes N` share a port; a
                 # second server started by mistake on a taken port must fail instead.
                 ("grpc.so_reuseport", 1 if config.reuse_port else 0),
                 *transport_options(config.transport, config.pool_size)],
    )
    referee_pb2_grpc.add_RefereeServiceServicer_to_server(servicer, server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    services: tuple[str, ...] = (SERVICE_NAME, HEALTH_SERVICE_NAME)
    if config.reflection_enabled:  # by default on a loopback bind only (FIFTYK_REFLECTION)
        services = (*services, reflection.SERVICE_NAME)
        # Reflection answers from the default descriptor pool, which holds each game's own
        # proto file (the messages of the Any payloads) once its edge is loaded: now, so a
        # tool can decode them before the first hand.
        log.debug("reflection serves %s", ", ".join(f.name for f in game_protos()))
        reflection.enable_server_reflection(services, server)
    address = host_port(config.host, config.port)
    try:
        port = (server.add_secure_port(address, tls.grpc_credentials()) if tls is not None
                else server.add_insecure_port(address))
    except RuntimeError:  # grpc's "Failed to bind": the address is not this machine's, or taken
        port = 0
    if port == 0:
        raise ListenError(f"cannot listen on {address}: the address is not one of this"
                          " machine's, or the port is taken")
    # The web table reaches the gRPC service through a Unix socket in a private folder, so
    # every web call is authenticated, limited and counted like any gRPC call.
    web_socket_dir = tempfile.mkdtemp(prefix="fiftyk-web-") if config.web_port >= 0 else None
    if web_socket_dir is not None:
        server.add_insecure_port(f"unix:{web_socket_dir}/{WEB_SOCKET_NAME}")
    clock = TurnClock(app, executor, hub, sweep_seconds=config.turn_sweep_seconds,
                      on_change=hub.poke)
    await clock.start()
    wanted_metrics_port = config.metrics_port if metrics_port is None else metrics_port
    bound_metrics = None
    if wanted_metrics_port >= 0:
        try:
            bound_metrics = metrics.start_http_server(wanted_metrics_port, config.host,
                                                      tls=config.tls)
        except OSError as error:
            await server.stop(None)
            raise ListenError(f"cannot serve metrics on"
                              f" {host_port(config.host, wanted_metrics_port)}:"
                              f" {error.strerror or error}") from None
    await server.start()
    web, web_port = None, None
    if web_socket_dir is not None:
        web = WebTable(f"unix:{web_socket_dir}/{WEB_SOCKET_NAME}",
                       max_body_bytes=config.max_message_bytes,
                       replay_rate=config.rates["anonymous"]["adjudicate"])
        try:
            web_port = await web.start(config.host, config.web_port,
                                       tls.ssl_context() if tls is not None else None)
        except OSError as error:
            await server.stop(None)
            metrics.stop_http_server()
            shutil.rmtree(web_socket_dir, ignore_errors=True)
            raise ListenError(f"cannot serve the web table on"
                              f" {host_port(config.host, config.web_port)}:"
                              f" {error.strerror or error}") from None
    for name in (*READINESS_SERVICES, LIVENESS_SERVICE):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    availability = store_availability(app)
    store_health = None
    if availability is not None:
        store_health = StoreHealth(availability, health_servicer, metrics,
                                   config.db_probe_seconds)
        await store_health.start()
    certificates = None
    if tls is not None:
        certificates = asyncio.create_task(_follow_certificates(tls, metrics),
                                           name="tls-reload")
    integrity = None
    if config.integrity_check_seconds > 0:
        integrity = asyncio.create_task(
            _audit_periodically(app, executor, config.integrity_check_seconds),
            name="integrity-audit")
    lobby_follower.start()
    deliveries.start()
    return RunningServer(server, port, bound_metrics, app, metrics, health_servicer, hub,
                         clock, executor, store_health, certificates, servicer, web, web_port,
                         web_socket_dir, integrity, lobby_follower, deliveries, services)


async def _audit_periodically(app: Referee, executor: Workers,
                              interval: float) -> None:
    """Run the integrity audit (service/trust/integrity.py) every `interval` seconds."""
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(interval)
        try:
            await loop.run_in_executor(executor, app.audit.run)
        except ServiceError as error:  # the store is down: the next run tries again
            log.warning("integrity audit skipped: %s", error.message)


async def _follow_certificates(tls: CertificateReloader, metrics: Metrics) -> None:
    """Give the metrics endpoint a renewed certificate (gRPC asks for it per connection)."""
    served = tls.version
    while True:
        await asyncio.sleep(TLS_RELOAD_CHECK_SECONDS)
        tls.refresh()
        if tls.version != served:
            served = tls.version
            metrics.replace_tls_context(tls.ssl_context())


async def serve(config: Config, *, announce: bool = True) -> None:
    """Run until SIGINT/SIGTERM, then shut down gracefully; exit the process at once if a
    shutdown step had to be left behind."""
    configure_logging(config.log_level)
    running = await create_server(config)
    if announce:
        web = ""
        if running.web_port is not None:
            scheme = "https" if config.tls is not None else "http"
            web = f" web={scheme}://{host_port(config.host, running.web_port)}/"
        print(f"fiftyk serving grpc={host_port(config.host, running.port)}"
              f" metrics={running.metrics_port}{web}", flush=True)
    log.info("referee started", extra={"settings": config.summary()})
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down", extra={"grace_seconds": config.shutdown_grace_seconds})
    left_behind = await running.stop(config.shutdown_grace_seconds)
    if left_behind:
        # A step left behind may hold a thread (a call to a database that stopped answering)
        # that the interpreter would wait for at exit, for ever: the process leaves now.
        log.error("exiting without waiting for: %s", ", ".join(left_behind),
                  extra={"left_behind": left_behind})
        logging.shutdown()
        sys.stdout.flush()
        os._exit(EXIT_LEFT_BEHIND)
