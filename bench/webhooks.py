"""`scripts/bench webhooks`: what a webhook endpoint costs the referee, and what it receives.

A referee runs in this process (SQLite in a temporary directory, no rate limits); bot threads
play 五十K tables through gRPC for `--seconds` (each bot asks for its legal plays and plays
or passes, closed loop), and every `Play`/`Pass` call is timed. A loopback HTTP endpoint is
registered as a webhook for every event; `--receiver-delay` makes it answer each POST only
after that many seconds (a slow platform). Reported: the commands' p50/p99 latency, the
deliveries the endpoint received per second, and the delivery lag (from an event's
`created_at` to its arrival) at p50/p99. `--no-webhook` runs the same load without an
endpoint: the baseline the latency is compared with. `--backlog` keeps the endpoint down
(503) during the load and up after it: the report then adds how fast one endpoint catches up
(`catch_up_events_per_second`), the most one endpoint receives.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import tempfile
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc

from bench.arguments import positive
from fiftyk_referee.service.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY, Config, host_port
from fiftyk_referee.service.server import RunningServer, create_server

DEFAULT_TABLES = 4
DEFAULT_SECONDS = 20.0
DEFAULT_WARMUP_SECONDS = 2.0
DRAIN_SECONDS = 60.0  # how long deliveries may still arrive after the load stops
PERCENT_P50, PERCENT_P99 = 50, 99
PLAYERS = 4
FAST_DELIVERIES = "poll=0.2,backoff=0.05,max_backoff=0.2,attempts=1000"


class Receiver:
    """A loopback endpoint recording when each event arrived and when it was recorded."""

    def __init__(self, delay: float) -> None:
        self.lags: list[float] = []
        self.arrivals: list[float] = []
        self.failing = False
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: one connection for many deliveries

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if delay:
                    time.sleep(delay)
                if receiver.failing:
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                created = datetime.fromisoformat(json.loads(body)["created_at"])
                with receiver._lock:
                    receiver.lags.append((datetime.now(UTC) - created).total_seconds())
                    receiver.arrivals.append(time.monotonic())
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/bench"


def percentile(values: list[float], percent: int) -> float:
    """The `percent`th percentile (nearest rank); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(percent / 100 * len(ordered)) - 1))]


def bot(target: str, stop: threading.Event, measure_from: float,
        latencies: list[float], seed: int) -> None:
    """Play one table until `stop`, timing every Play and Pass after `measure_from`."""
    rng = random.Random(seed)
    platform = RefereeClient(target, platform_key=DEV_PLATFORM_KEY)
    table = platform.create_table("classic", PLAYERS).table.table_id
    seats = [RefereeClient(target, token=platform.join_table(table, f"b{seed}-{s}", s)
                           .seat_token) for s in range(PLAYERS)]
    try:
        while not stop.is_set():
            hand = platform.start_hand(table).hand
            while hand.status != pb.HAND_STATUS_COMPLETED and not stop.is_set():
                seat = seats[hand.turn_seat]
                legal = seat.legal_plays(table, hand.hand_id)
                started = time.monotonic()
                if legal.may_pass and (not legal.plays or rng.random() < 0.3):
                    hand = seat.pass_turn(table, hand.hand_id).hand
                else:
                    hand = seat.play(table, hand.hand_id, rng.choice(legal.plays).cards).hand
                if started >= measure_from:
                    latencies.append(time.monotonic() - started)
    except grpc.RpcError:
        if not stop.is_set():
            raise
    finally:
        for client in (platform, *seats):
            client.close()


def measure(tables: int, seconds: float, receiver_delay: float | None,
            backlog: bool = False) -> dict[str, Any]:
    """Run the load once; the numbers of the report."""
    with tempfile.TemporaryDirectory(prefix="fiftyk-bench-webhooks-") as data:
        config = Config(host="127.0.0.1", port=0, data_dir=Path(data), rate_limits="off",
                        webhooks=FAST_DELIVERIES).validate()
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, daemon=True).start()
        running: RunningServer = asyncio.run_coroutine_threadsafe(
            create_server(config, metrics_port=-1), loop).result()
        target = host_port("127.0.0.1", running.port)
        receiver = Receiver(receiver_delay or 0.0) if receiver_delay is not None else None
        try:
            if receiver is not None:
                RefereeClient(target, platform_key=DEV_PLATFORM_KEY).register_webhook(
                    receiver.url)
                receiver.failing = backlog
            stop = threading.Event()
            latencies: list[float] = []
            measure_from = time.monotonic() + DEFAULT_WARMUP_SECONDS
            bots = [threading.Thread(target=bot, args=(target, stop, measure_from,
                                                       latencies, seed))
                    for seed in range(tables)]
            for thread in bots:
                thread.start()
            time.sleep(DEFAULT_WARMUP_SECONDS + seconds)
            stop.set()
            for thread in bots:
                thread.join()
            up = time.monotonic()
            if receiver is not None:
                receiver.failing = False
            report: dict[str, Any] = {
                "tables": tables, "seconds": seconds, "receiver_delay": receiver_delay,
                "commands": len(latencies),
                "command_p50_ms": percentile(latencies, PERCENT_P50) * 1000,
                "command_p99_ms": percentile(latencies, PERCENT_P99) * 1000,
            }
            if receiver is not None:
                report.update(_deliveries(receiver))
                if backlog and receiver.arrivals:
                    report["catch_up_events_per_second"] = (
                        len(receiver.arrivals) / max(receiver.arrivals[-1] - up, 1e-9))
            return report
        finally:
            asyncio.run_coroutine_threadsafe(running.stop(0.5), loop).result()
            loop.call_soon_threadsafe(loop.stop)
            if receiver is not None:
                receiver.server.shutdown()


def _deliveries(receiver: Receiver) -> dict[str, Any]:
    """Wait until the endpoint has gone quiet, then summarise what it received."""
    deadline = time.monotonic() + DRAIN_SECONDS
    count = -1
    while time.monotonic() < deadline and count != len(receiver.lags):
        count = len(receiver.lags)
        time.sleep(1.0)
    arrivals = receiver.arrivals
    span = (arrivals[-1] - arrivals[0]) if len(arrivals) > 1 else 0.0
    return {
        "deliveries": len(receiver.lags),
        "deliveries_per_second": len(arrivals) / span if span else 0.0,
        "lag_p50_ms": percentile(receiver.lags, PERCENT_P50) * 1000,
        "lag_p99_ms": percentile(receiver.lags, PERCENT_P99) * 1000,
        "lag_median_ms": statistics.median(receiver.lags) * 1000 if receiver.lags else 0.0,
    }


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench webhooks`."""
    parser = sub.add_parser("webhooks", help="command latency with a webhook endpoint, and"
                            " the endpoint's delivery lag and rate", description=__doc__)
    parser.add_argument("--tables", type=positive, default=DEFAULT_TABLES, metavar="N",
                        help=f"tables played at once (default {DEFAULT_TABLES})")
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS,
                        help=f"measured seconds (default {DEFAULT_SECONDS:g})")
    parser.add_argument("--receiver-delay", type=float, default=0.0, metavar="SECONDS",
                        help="the endpoint answers each POST after this long (default 0)")
    parser.add_argument("--no-webhook", action="store_true",
                        help="no endpoint at all: the baseline")
    parser.add_argument("--backlog", action="store_true",
                        help="the endpoint is down during the load, up after it: measures"
                             " how fast it catches up")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write the report as JSON to FILE")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run `scripts/bench webhooks`."""
    report = measure(args.tables, args.seconds,
                     None if args.no_webhook else args.receiver_delay, args.backlog)
    for name, value in report.items():
        print(f"{name:>26}: {value:.3g}" if isinstance(value, float) else
              f"{name:>26}: {value}")
    if args.json is not None:
        args.json.write_text(json.dumps({"benchmark": "webhooks", **report}, indent=2) + "\n")
    return 0
