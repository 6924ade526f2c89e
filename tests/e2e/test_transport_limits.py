"""Nothing below authentication pins the server's memory or file descriptors.

The reproductions of the hardening review, against a `fiftyk serve` process (so its memory
and descriptors are its own), from a second loopback address (127.0.0.2: another peer than
the probe client on 127.0.0.1), with raw HTTP/2 frames (`tests.support.h2attack`):

- one connection opens 20,000 `GetTable` streams, each announcing a 1,000,000-byte message
  and sending 10 bytes, and answers the server's SETTINGS and PING;
- 1,100 connections complete the HTTP/2 preface and stay idle, against a server limited to
  1,024 open file descriptors.

- 8 connections each open 512 half-sent server reflection calls (a request stream).

Throughout, a probe client (the platform key, its own connection) reads a table; every call
must succeed. The server's resident memory may grow by less than 64 MiB. No assertion is
timed: waits poll for a state with a generous deadline, and latencies are only reported
(`bench/transport.py` measures them).

Every method the server offers — enumerated from the services it registered, so a new one
is covered without editing this file — has its half-sent call ended after the request bound
and counted against the caller's pending calls. Callers share the pending budget only
with themselves: a verified credential has its own, an anonymous call counts under its
client address, which a trusted proxy's `x-forwarded-for` names (nobody else's).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import psutil
import pytest
from google.protobuf import descriptor_pool
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from fiftyk_referee.service.grpc.auth import PLATFORM_KEY_HEADER
from fiftyk_referee.service.grpc.callers import FORWARDED_FOR_HEADER
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from fiftyk_referee.service.server import RunningServer
from tests.e2e.harness import LiveServer, server_config
from tests.e2e.live import ServeProcess, start_serve, wait_until
from tests.support.h2attack import (
    IdleConnections,
    StallConnection,
    StallReport,
    keep_alive,
    stall_per_connection,
    stall_streams,
)

MIB = 1 << 20
RSS_GROWTH_LIMIT = 64 * MIB
ATTACKER = "127.0.0.2"  # another peer than the probe (Linux routes all of 127/8 to lo)
PROBE_DEADLINE_SECONDS = 30.0  # a loaded machine is slow, but a bounded server answers
PROBE_PAUSE_SECONDS = 0.05
STALLED_STREAMS = 20_000
ANNOUNCED_BYTES = 1_000_000
SENT_BYTES = 10
IDLE_CONNECTIONS = 1_100
FILE_LIMIT = 1_024
SETTLE_SECONDS = 120.0  # the longest a wait for the server to act may take here
REFLECTION = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
GET_TABLE = "/fiftyk.referee.v1.RefereeService/GetTable"
REFLECTION_CONNECTIONS = 8
REFLECTION_STREAMS = 512  # per connection: the server's streams limit
NEVER = "600"  # seconds: a request bound no wait in these tests comes near
DEADLINE_EXCEEDED = str(grpc.StatusCode.DEADLINE_EXCEEDED.value[0])
RESOURCE_EXHAUSTED = str(grpc.StatusCode.RESOURCE_EXHAUSTED.value[0])
CANCELLED = str(grpc.StatusCode.CANCELLED.value[0])


@dataclass
class Probe:
    """Reads a table over its own connection until stopped; every call must succeed."""

    client: RefereeClient
    table_id: str
    calls: int = 0
    failures: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.client.get_table(self.table_id)
                self.calls += 1
            except grpc.RpcError as error:
                details = error_details(error)
                self.failures.append(f"{details.code.name} {details.reason} {details.message}")
            self._stop.wait(PROBE_PAUSE_SECONDS)

    @contextmanager
    def running(self) -> Iterator[Probe]:
        """Probe in a thread while the block runs."""
        self._thread = threading.Thread(target=self._run, name="probe", daemon=True)
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join(PROBE_DEADLINE_SECONDS + 5)


@contextmanager
def serving(tmp_path: Path, *args: str, file_limit: int | None = None
            ) -> Iterator[tuple[ServeProcess, psutil.Process, Probe]]:
    """A `fiftyk serve` on SQLite, its psutil handle, and a probe with a table to read."""
    served = start_serve(["--port", "0", "--metrics-port", "0", "--data-dir", str(tmp_path),
                          "--rate-limits", "off", *args], {}, tmp_path / "stderr.log",
                         file_limit=file_limit)
    try:
        client = RefereeClient(served.target, platform_key=DEV_PLATFORM_KEY,
                               timeout=PROBE_DEADLINE_SECONDS)
        try:
            table_id = client.create_table("classic", 4).table.table_id
            yield served, psutil.Process(served.process.pid), Probe(client, table_id)
        finally:
            client.close()
    finally:
        served.stop()


def test_twenty_thousand_stalled_streams_on_one_connection_pin_nothing(tmp_path: Path) -> None:
    # A short request bound, so that the streams the server admitted end during the test.
    with serving(tmp_path, "--transport-limits", "request=2") as (served, server, probe):
        baseline = server.memory_info().rss
        peak = baseline
        held: list[StallConnection] = []  # the attacker's connections
        with probe.running():
            report = stall_streams("127.0.0.1", served.grpc_port, streams=STALLED_STREAMS,
                                   announced=ANNOUNCED_BYTES, sent=SENT_BYTES,
                                   max_connections=1, source=ATTACKER, keep=held)
            peak = max(peak, server.memory_info().rss)

            def all_ended() -> bool:
                nonlocal peak
                keep_alive(held, report, 0.5)  # answer SETTINGS and PING: a live peer
                peak = max(peak, server.memory_info().rss)
                return report.ended >= report.opened

            wait_until(all_ended, "the server to end every stalled stream",
                       timeout=SETTLE_SECONDS)
            for connection in held:
                connection.close()
            calls_during_attack = probe.calls
        assert report.opened == STALLED_STREAMS and report.connections == 1
        # Past the per-connection limit streams are refused at once; the few admitted end
        # DEADLINE_EXCEEDED (their message never came) or LIMIT_EXCEEDED (the address has
        # too many calls waiting).
        assert set(report.statuses) <= {"4", "8"}, report.statuses
        assert peak - baseline < RSS_GROWTH_LIMIT, (baseline, peak)
        assert probe.failures == [] and calls_during_attack > 0


def test_idle_connections_past_the_descriptor_limit_leave_the_server_serving(
    tmp_path: Path,
) -> None:
    with serving(tmp_path, "--transport-limits", "idle=3",
                 file_limit=FILE_LIMIT) as (served, server, probe):
        assert server.rlimit(psutil.RLIMIT_NOFILE) == (FILE_LIMIT, FILE_LIMIT)
        baseline = server.memory_info().rss
        with probe.running():
            idle = IdleConnections("127.0.0.1", served.grpc_port, IDLE_CONNECTIONS,
                                   source=ATTACKER)
            most_fds, growth = 0, 0

            def all_closed() -> bool:
                nonlocal most_fds, growth
                most_fds = max(most_fds, server.num_fds())
                growth = max(growth, server.memory_info().rss - baseline)
                return idle.still_open() == 0

            try:
                # The server closes the connections it accepted once they have been idle
                # for `idle` seconds, and those it had no descriptors for at once.
                wait_until(all_closed, "the server to close every idle connection",
                           timeout=SETTLE_SECONDS)
            finally:
                idle.close()
            # Its descriptors are free again: a new client connects and is served.
            fresh = RefereeClient(served.target, platform_key=DEV_PLATFORM_KEY,
                                  timeout=PROBE_DEADLINE_SECONDS)
            try:
                assert fresh.get_table(probe.table_id).table_id == probe.table_id
            finally:
                fresh.close()
        # It never accepted more connections than its descriptors allow.
        assert most_fds < FILE_LIMIT
        assert growth < RSS_GROWTH_LIMIT
        assert probe.failures == [] and probe.calls > 0


@pytest.mark.parametrize("limit", ["request=0", "streams=0", "pending=-1", "idle=soon",
                                   "colour=blue"])
def test_a_nonsense_transport_limit_is_refused_at_start(tmp_path: Path, limit: str) -> None:
    with pytest.raises(RuntimeError, match="FIFTYK_TRANSPORT_LIMITS"):
        start_serve(["--port", "0", "--metrics-port", "0", "--data-dir", str(tmp_path),
                     "--transport-limits", limit], {}, tmp_path / "stderr.log")


def test_a_request_that_does_not_arrive_in_time_ends_deadline_exceeded_and_is_counted(
    tmp_path: Path,
) -> None:
    live = LiveServer(server_config(tmp_path, transport_limits="request=1,pending=2"))
    held: list[StallConnection] = []
    try:
        report = stall_streams("127.0.0.1", live.running.port, streams=3, keep=held)
        wait_until(lambda: keep_alive(held, report, 0.2) or report.ended >= 3,
                   "the three stalled streams to end", timeout=SETTLE_SECONDS)
        # Two waited for their message until the bound; the third found its address full.
        assert report.statuses == {"4": 2, "8": 1}
        exposition = live.running.metrics.render().decode()
        assert 'fiftyk_request_arrival_refused_total{limit="request_timeout"} 2.0' \
            in exposition
        assert 'fiftyk_request_arrival_refused_total{limit="pending_per_peer"} 1.0' \
            in exposition
        # Calls whose message comes are served as before, also while one is refused.
        assert live.platform().create_table("classic", 4).table.table_id
    finally:
        for connection in held:
            connection.close()
        live.stop()


# -- every method, streaming ones included ----------------------------------------------------


def offered_methods(running: RunningServer) -> list[str]:
    """The path of every method of every service the server registered."""
    pool = descriptor_pool.Default()
    return [f"/{name}/{method.name}" for name in running.services
            for method in pool.FindServiceByName(name).methods]


def reflected_services(target: str) -> set[str]:
    """The services the server names through reflection."""
    with grpc.insecure_channel(target) as channel:
        answers = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]),
            timeout=PROBE_DEADLINE_SECONDS)
        return {service.name for answer in answers
                for service in answer.list_services_response.service}


def waiting(live: LiveServer) -> int:
    """Calls the server counts as waiting for a request message now."""
    found = re.search(r"^fiftyk_request_arrival_waiting (\S+)$",
                      live.running.metrics.render().decode(), re.MULTILINE)
    assert found is not None
    return int(float(found.group(1)))


def test_every_method_the_server_offers_is_enumerated_streaming_ones_included(
    tmp_path: Path,
) -> None:
    live = LiveServer(server_config(tmp_path))
    try:
        methods = offered_methods(live.running)
        # What reflection lists is what the server registered: nothing escapes the list.
        assert reflected_services(live.target) == set(live.running.services)
        assert {REFLECTION, "/grpc.health.v1.Health/Watch", "/grpc.health.v1.Health/Check",
                "/fiftyk.referee.v1.RefereeService/WatchTable", GET_TABLE} <= set(methods)
    finally:
        live.stop()


def test_a_half_sent_call_of_every_method_ends_after_the_request_bound(tmp_path: Path) -> None:
    live = LiveServer(server_config(tmp_path, transport_limits="request=1,pending=1000"))
    methods = offered_methods(live.running)
    connection = StallConnection("127.0.0.1", live.running.port, ATTACKER)
    try:
        connection.flush()
        for method in methods:
            assert connection.open_stalled_stream(method, ANNOUNCED_BYTES, SENT_BYTES)
        connection.flush()
        _answered(connection, len(methods), "every half-sent call to end")
        ended = {connection.methods[stream]: status
                 for stream, status in connection.statuses.items()}
        assert ended == dict.fromkeys(methods, DEADLINE_EXCEEDED)
        assert waiting(live) == 0
    finally:
        connection.close()
        live.stop()


def _answered(connection: StallConnection, count: int, what: str) -> None:
    """Wait until the server has ended `count` of the connection's streams with a status."""
    report = StallReport()
    wait_until(lambda: keep_alive([connection], report, 0.05)
               or len(connection.statuses) >= count, what, timeout=SETTLE_SECONDS)


def _counts_as_pending(live: LiveServer, method: str) -> None:
    """A half-sent call of `method` takes the address's one pending call (pending=1)."""
    connection = StallConnection("127.0.0.1", live.running.port, ATTACKER)
    try:
        connection.flush()
        assert connection.open_stalled_stream(method, ANNOUNCED_BYTES, SENT_BYTES)
        connection.flush()
        wait_until(lambda: waiting(live) == 1, f"{method} to count as waiting",
                   timeout=SETTLE_SECONDS)
        # The address's one pending call is taken: the next is refused at once.
        assert connection.open_stalled_stream(GET_TABLE, ANNOUNCED_BYTES, SENT_BYTES)
        connection.flush()
        _answered(connection, 1, f"the call after {method} to be refused")
        assert [(connection.methods[stream], status) for stream, status
                in connection.statuses.items()] == [(GET_TABLE, RESOURCE_EXHAUSTED)]
    finally:
        connection.close()
    wait_until(lambda: waiting(live) == 0, f"{method}'s call to end with its connection",
               timeout=SETTLE_SECONDS)


def test_a_half_sent_call_of_every_method_counts_against_the_pending_limit(
    tmp_path: Path,
) -> None:
    live = LiveServer(server_config(tmp_path, transport_limits=f"request={NEVER},pending=1"))
    try:
        for method in offered_methods(live.running):
            _counts_as_pending(live, method)
    finally:
        live.stop()


def test_half_sent_reflection_calls_on_many_connections_pin_no_memory(tmp_path: Path) -> None:
    # The hardening review's reflection attack (60 connections x 512 calls) at a smaller
    # scale; `bench transport --attack reflection` runs it at full scale.
    with serving(tmp_path, "--transport-limits", "request=2") as (served, server, probe):
        baseline = server.memory_info().rss
        peak = baseline
        held: list[StallConnection] = []
        try:
            with probe.running():
                report = stall_per_connection(
                    "127.0.0.1", served.grpc_port, connections=REFLECTION_CONNECTIONS,
                    streams=REFLECTION_STREAMS, method=REFLECTION, announced=ANNOUNCED_BYTES,
                    sent=SENT_BYTES, source=ATTACKER, keep=held)

                def all_ended() -> bool:
                    nonlocal peak
                    keep_alive(held, report, 0.5)
                    peak = max(peak, server.memory_info().rss)
                    return report.ended >= report.opened

                wait_until(all_ended, "the server to end every reflection call",
                           timeout=SETTLE_SECONDS)
        finally:
            for connection in held:
                connection.close()
        assert report.opened == REFLECTION_CONNECTIONS * REFLECTION_STREAMS
        # Refused at once past the address's pending calls, ended at the request bound, or
        # cancelled by gRPC itself before they reached a handler (it sheds calls that arrive
        # faster than it hands them out: GetTable's too).
        assert set(report.statuses) <= {DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, CANCELLED}, \
            report.statuses
        assert peak - baseline < RSS_GROWTH_LIMIT, (baseline, peak)
        assert probe.failures == [] and probe.calls > 0


def test_reflection_turned_off_is_not_served_and_not_enumerated(tmp_path: Path) -> None:
    # Off loopback it is off by default (tests/unit/test_config.py); here the operator's
    # `--no-reflection` on loopback.
    live = LiveServer(server_config(tmp_path, reflection=False))
    try:
        assert REFLECTION not in offered_methods(live.running)
        with pytest.raises(grpc.RpcError) as refused:
            reflected_services(live.target)
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        live.stop()


# -- one caller cannot take another's pending calls -------------------------------------------


def _stall(connection: StallConnection, live: LiveServer, *headers: tuple[str, str],
           waiting_after: int, refused: bool = False) -> None:
    """One half-sent GetTable with `headers`: counted as waiting (the server then counts
    `waiting_after` calls), or `refused` at once."""
    answered = len(connection.statuses)
    assert connection.open_stalled_stream(GET_TABLE, ANNOUNCED_BYTES, SENT_BYTES, headers)
    connection.flush()
    report = StallReport()

    def taken() -> bool:
        keep_alive([connection], report, 0.05)
        if len(connection.statuses) > answered:
            return True
        return waiting(live) > waiting_after if refused else waiting(live) == waiting_after

    wait_until(taken, "the server to take the call", timeout=SETTLE_SECONDS)
    assert waiting(live) == waiting_after
    ended = list(connection.statuses.values())[answered:]
    assert ended == ([RESOURCE_EXHAUSTED] if refused else []), ended


def _refused_scope(call: Callable[[], object]) -> tuple[str | None, str | None]:
    with pytest.raises(grpc.RpcError) as refused:
        call()
    details = error_details(refused.value)
    return details.reason, details.metadata.get("scope")


def test_an_anonymous_flood_cannot_starve_authenticated_callers_on_the_same_address(
    tmp_path: Path,
) -> None:
    live = LiveServer(server_config(tmp_path, transport_limits=f"request={NEVER},pending=2"))
    platform = live.platform()
    tables = [platform.create_table("classic", 4).table.table_id,
              platform.create_table("tractor", 4, game="shengji").table.table_id]
    seats = [live.client(token=platform.join_table(table_id, "p0", 0).seat_token)
             for table_id in tables]
    watchers = [live.client(token=platform.issue_spectator_token(table_id).spectator_token)
                for table_id in tables]
    token = platform.join_table(tables[0], "p1", 1).seat_token
    forged = live.client(token=token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"))
    anonymous = live.client()
    # The flood: anonymous half-sent calls from the clients' own address, 127.0.0.1.
    flood = StallConnection("127.0.0.1", live.running.port, "127.0.0.1")
    try:
        flood.flush()
        for counted in (1, 2):
            _stall(flood, live, waiting_after=counted)
        _stall(flood, live, waiting_after=2, refused=True)
        # Each valid credential has pending calls of its own: served as if nobody flooded.
        for seat, watcher, table_id in zip(seats, watchers, tables, strict=True):
            assert platform.get_table(table_id).table_id == table_id
            assert seat.get_table(table_id).table_id == table_id
            assert watcher.get_table(table_id).table_id == table_id
        # A forged token is no credential: it counts under the address, which is full.
        assert _refused_scope(lambda: forged.get_table(tables[0])) == ("LIMIT_EXCEEDED", "peer")
        assert _refused_scope(lambda: anonymous.get_table(tables[0])) == (
            "LIMIT_EXCEEDED", "peer")
        assert waiting(live) == 2  # the flood held the address's calls all along
        # A credential's own budget is as large as an address's, and no larger.
        held = StallConnection("127.0.0.1", live.running.port, "127.0.0.1")
        try:
            held.flush()
            key = (PLATFORM_KEY_HEADER, DEV_PLATFORM_KEY)
            for counted in (3, 4):
                _stall(held, live, key, waiting_after=counted)
            assert _refused_scope(lambda: platform.get_table(tables[0])) == (
                "LIMIT_EXCEEDED", "credential")
        finally:
            held.close()
    finally:
        flood.close()
        live.stop()


def test_a_forwarded_client_address_counts_only_from_a_trusted_proxy(tmp_path: Path) -> None:
    proxy, stranger = "127.0.0.3", ATTACKER
    live = LiveServer(server_config(tmp_path, transport_limits=f"request={NEVER},pending=1",
                                    trusted_proxies=(proxy,)))
    connections = [StallConnection("127.0.0.1", live.running.port, source)
                   for source in (stranger, proxy)]
    untrusted, trusted = connections
    try:
        for connection in connections:
            connection.flush()
        # From anyone else the header is ignored: both calls count under the peer's address.
        _stall(untrusted, live, (FORWARDED_FOR_HEADER, "10.0.0.1"), waiting_after=1)
        _stall(untrusted, live, (FORWARDED_FOR_HEADER, "10.0.0.2"), waiting_after=1,
               refused=True)
        # From the trusted proxy each forwarded client has its own pending calls ...
        _stall(trusted, live, (FORWARDED_FOR_HEADER, "10.0.0.1"), waiting_after=2)
        _stall(trusted, live, (FORWARDED_FOR_HEADER, "198.51.100.7, 10.0.0.2"),
               waiting_after=3)
        # ... and one client's calls still count together, whatever a client wrote to the
        # left of what the proxy appended.
        _stall(trusted, live, (FORWARDED_FOR_HEADER, "10.0.0.2, 10.0.0.1"), waiting_after=3,
               refused=True)
    finally:
        for connection in connections:
            connection.close()
        live.stop()
