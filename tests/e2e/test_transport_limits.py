"""Nothing below authentication pins the server's memory or file descriptors.

The reproductions of the hardening review, against a `fiftyk serve` process (so its memory
and descriptors are its own), from a second loopback address (127.0.0.2: another peer than
the probe client on 127.0.0.1), with raw HTTP/2 frames (`tests.support.h2attack`):

- one connection opens 20,000 `GetTable` streams, each announcing a 1,000,000-byte message
  and sending 10 bytes, and answers the server's SETTINGS and PING;
- 1,100 connections complete the HTTP/2 preface and stay idle, against a server limited to
  1,024 open file descriptors.

Throughout, a probe client (the platform key, its own connection) reads a table; every call
must succeed. The server's resident memory may grow by less than 64 MiB. No assertion is
timed: waits poll for a state with a generous deadline, and latencies are only reported
(`bench/transport.py` measures them).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import psutil
import pytest

from fiftyk_referee.service.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.e2e.harness import LiveServer, server_config
from tests.e2e.live import ServeProcess, start_serve, wait_until
from tests.support.h2attack import IdleConnections, StallConnection, keep_alive, stall_streams

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
