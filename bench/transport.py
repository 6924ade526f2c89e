"""`bench transport`: the hardening review's transport attacks against a running referee.

A probe client (the platform key, its own connection) reads a table every 50 ms before,
during and after an attack from another loopback address; the server's resident memory is
read from its PID. Three attacks (`tests.support.h2attack`):

- `streams`: one HTTP/2 connection opens `--streams` GetTable streams, each announcing a
  1,000,000-byte message and sending 10 bytes, and keeps answering SETTINGS and PING for
  `--hold` seconds;
- `idle`: `--connections` connections complete the HTTP/2 preface and stay idle for `--hold`
  seconds (start the server under `prlimit --nofile=1024` to reproduce the descriptor limit);
- `reflection`: `--connections` connections each open `--per-connection` server reflection
  calls (a request stream), each announcing a 1,000,000-byte message and sending 10 bytes,
  and answer SETTINGS and PING for `--hold` seconds (the hardening review's: 60 x 512). The
  server must serve reflection (a loopback bind, or `--reflection`).

Reports the server's RSS (before, peak, after the attack) and the probe's median latency
per phase with the during/before ratio, as JSON. Latencies on a shared machine are noisy:
compare medians of repeated runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import threading
import time
from dataclasses import dataclass, field

import grpc
import psutil

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.support.h2attack import (
    IdleConnections,
    StallConnection,
    StallReport,
    keep_alive,
    stall_per_connection,
    stall_streams,
)

MIB = 1 << 20
MS = 1000.0
PROBE_PAUSE_SECONDS = 0.05
PROBE_TIMEOUT_SECONDS = 30.0
PHASES = ("before", "during", "after")
REFLECTION = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"


@dataclass
class _Probe:
    client: RefereeClient
    table_id: str
    phase: str = "before"
    latencies: dict[str, list[float]] = field(
        default_factory=lambda: {phase: [] for phase in PHASES})
    failures: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PHASES, 0))
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        while not self.stop.is_set():
            started = time.perf_counter()
            phase = self.phase
            try:
                self.client.get_table(self.table_id)
                self.latencies[phase].append(time.perf_counter() - started)
            except grpc.RpcError:
                self.failures[phase] += 1
            self.stop.wait(PROBE_PAUSE_SECONDS)

    def medians_ms(self) -> dict[str, float | None]:
        return {phase: round(statistics.median(values) * MS, 3) if values else None
                for phase, values in self.latencies.items()}


def run_transport(server: str, pid: int, attack: str, *, streams: int, connections: int,
                  hold: float, source: str, settle: float,
                  platform_key: str = DEV_PLATFORM_KEY,
                  per_connection: int = 512) -> dict[str, object]:
    """Run one attack against `server` (process `pid`) under a probe; the figures."""
    process = psutil.Process(pid)
    client = RefereeClient(server, platform_key=platform_key, timeout=PROBE_TIMEOUT_SECONDS)
    probe = _Probe(client, client.create_table("classic", 4).table.table_id)
    thread = threading.Thread(target=probe.run, name="probe", daemon=True)
    thread.start()
    time.sleep(settle)
    rss_before = process.memory_info().rss
    peak = rss_before
    probe.phase = "during"
    host, _, port = server.rpartition(":")
    details: dict[str, object] = {}
    if attack in ("streams", "reflection"):
        held: list[StallConnection] = []
        if attack == "streams":
            report = stall_streams(host, int(port), streams=streams, max_connections=1,
                                   source=source, keep=held)
        else:
            report = stall_per_connection(host, int(port), connections=connections,
                                          streams=per_connection, method=REFLECTION,
                                          source=source, keep=held)
        peak = max(peak, process.memory_info().rss)
        ended = time.monotonic() + hold
        while time.monotonic() < ended:
            keep_alive(held, report, 1.0)
            peak = max(peak, process.memory_info().rss)
        for connection in held:
            connection.close()
        details = {attack: _report(report)}
    else:
        idle = IdleConnections(host, int(port), connections, source=source)
        ended = time.monotonic() + hold
        most_fds = 0
        while time.monotonic() < ended:
            peak = max(peak, process.memory_info().rss)
            most_fds = max(most_fds, process.num_fds())
            time.sleep(1.0)
        details = {"idle": {"opened": len(idle.sockets), "failed": idle.failed,
                            "still_open": idle.still_open(), "server_fds_most": most_fds}}
        idle.close()
    probe.phase = "after"
    time.sleep(settle)
    rss_after = process.memory_info().rss
    probe.stop.set()
    thread.join()
    client.close()
    medians = probe.medians_ms()
    before, during = medians["before"], medians["during"]
    return {
        "attack": attack, **details,
        "rss_mib": {"before": round(rss_before / MIB, 1), "peak": round(peak / MIB, 1),
                    "after": round(rss_after / MIB, 1),
                    "growth": round((peak - rss_before) / MIB, 1)},
        "probe_median_ms": medians,
        "probe_ratio_during_before": round(during / before, 2) if before and during else None,
        "probe_calls": {phase: len(values) for phase, values in probe.latencies.items()},
        "probe_failures": probe.failures,
    }


def _report(report: StallReport) -> dict[str, object]:
    return {"opened": report.opened, "refused": report.refused, "answered": report.answered,
            "statuses": report.statuses, "connections": report.connections}


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench transport`."""
    parser = sub.add_parser("transport", help="stalled streams or idle connections under a"
                            " probe: server RSS and probe latency", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="HOST:PORT of the referee")
    parser.add_argument("--pid", type=int, required=True, help="the referee's process id")
    parser.add_argument("--attack", choices=("streams", "idle", "reflection"),
                        default="streams")
    parser.add_argument("--streams", type=int, default=20_000)
    parser.add_argument("--connections", type=int, default=1_100)
    parser.add_argument("--per-connection", type=int, default=512,
                        help="reflection calls each connection opens (--attack reflection)")
    parser.add_argument("--hold", type=float, default=20.0,
                        help="seconds the attack is held after it is set up")
    parser.add_argument("--source", default="127.0.0.2",
                        help="the attacker's local address (another peer than the probe)")
    parser.add_argument("--settle", type=float, default=5.0,
                        help="seconds of probing before and after the attack")
    parser.add_argument("--platform-key", default=DEV_PLATFORM_KEY)
    parser.set_defaults(handler=_run_cli)


def _run_cli(args: argparse.Namespace) -> int:
    print(json.dumps(run_transport(
        args.server, args.pid, args.attack, streams=args.streams,
        connections=args.connections, hold=args.hold, source=args.source,
        settle=args.settle, platform_key=args.platform_key,
        per_connection=args.per_connection)))
    return 0


__all__ = ["add_parser", "run_transport"]
