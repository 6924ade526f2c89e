"""`scripts/bench webhooks`: what a webhook endpoint costs the referee's commands, and what it
receives.

Each run starts `fiftyk serve` as a child process (SQLite in a fresh directory, or a fresh
database on PostgreSQL: a throwaway server unless `--postgres-url` names one), puts the
e2e load on it (`bench e2e`'s closed-loop bots, from `--processes` worker processes) and,
beside the load, plays a **probe table** at a steady pace from this process (one command
every `--probe-interval` seconds, its own connection), timing each of its `Play` calls in the
measured window. The webhook endpoint is a loopback HTTP server in a process of its own,
registered for every event before the load starts. The modes:

- `none`: no endpoint — the baseline;
- `slow`: the endpoint answers each POST only after `--receiver-delay` seconds;
- `hang`: the endpoint never answers: each POST ends at the referee's timeout
  (`--timeout`) and is tried again;
- `fast`: the endpoint answers at once: the delivery lag (from an event's `created_at` to
  its arrival, for the events written in the window) at p50/p99, and the deliveries the
  endpoint received per second in the window, next to the feed positions written per second;
- `backlog`: the endpoint answers 503 during the load and 200 after it: how fast one endpoint
  catches up (`catch_up_per_second`), the most one endpoint receives.

Runs are interleaved (every mode once per repeat, on each backend in turn) so that all modes
see the same machine load. Reported per backend and mode: the median over repeats of the
probe's Play p50/p99 and of the load's throughput, the ratio of each mode's median probe
p99 to the baseline's (`p99_ratio`), the median of the per-repeat ratios
(`paired_p99_ratio`), and the p99 of every repeat's Plays together with its ratio
(`probe_play_p99_pooled_ms`, `pooled_p99_ratio`: one run has few Plays when commands are
slow, and its p99 is nearly its maximum). Latencies on a shared machine are noisy: use
several repeats and long runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.context import SpawnProcess
from pathlib import Path
from typing import Any

import grpc

from bench import e2e, machine
from bench.arguments import positive
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.support.pgserver import ThrowawayPostgres, create_database, drop_database

MODES = ("none", "slow", "hang", "fast", "backlog")
BASELINE = "none"
BACKENDS = ("sqlite", "postgresql")
DEFAULT_MODES = MODES
DEFAULT_TABLES = 8  # `bench e2e`'s load
DEFAULT_PROCESSES = 2
DEFAULT_SECONDS = 10.0
DEFAULT_WARMUP_SECONDS = 2.0
DEFAULT_REPEATS = 3
DEFAULT_RECEIVER_DELAY = 2.0
DEFAULT_TIMEOUT = 5.0
DEFAULT_PROBE_INTERVAL = 0.02
PRESET = "classic"
# Retries come quickly so that `backlog` catches up as soon as the endpoint is back.
DELIVERY_SETTINGS = "poll=0.2,backoff=0.05,max_backoff=0.2,attempts=1000,lease=30"
QUIET_SECONDS = 1.0  # an endpoint that received nothing for this long has caught up
DRAIN_SECONDS = 120.0  # the longest a drain waits
RECEIVER_START_SECONDS = 30.0
PERCENT_P50, PERCENT_P99 = 50, 99
MS = 1000.0
PAYLOAD_TIME_KEY = "created_at"


# -- the endpoint ------------------------------------------------------------------------------


def _serve_endpoint(mode: str, delay: float, failing: Any, stop: Any, received: Any,
                    port_out: Any, results_out: Any) -> None:
    """The endpoint's process: answer POSTs as `mode` says until `stop`, then report."""
    records: list[tuple[float, float]] = []  # (event created, arrived), wall-clock seconds
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection for many deliveries

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if mode == "hang":
                stop.wait()  # never answers: the referee's timeout ends the attempt
                return
            if delay:
                time.sleep(delay)
            if failing.is_set():
                self._answer(503)
                return
            created = datetime.fromisoformat(json.loads(body)[PAYLOAD_TIME_KEY]).timestamp()
            with lock:
                records.append((created, time.time()))
                received.value = len(records)
            self._answer(200)

        def _answer(self, status: int) -> None:
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port_out.put(server.server_address[1])
    stop.wait()
    server.shutdown()
    with lock:
        results_out.put(list(records))


class Endpoint:
    """The loopback webhook endpoint in a process of its own (a context manager)."""

    def __init__(self, mode: str, delay: float) -> None:
        context = multiprocessing.get_context("spawn")
        self.failing = context.Event()
        self._stop = context.Event()
        self.received = context.Value("q", 0)
        self._port: Any = context.Queue()
        self._results: Any = context.Queue()
        self._process: SpawnProcess = context.Process(
            target=_serve_endpoint, daemon=True,
            args=(mode, delay, self.failing, self._stop, self.received, self._port,
                  self._results))
        self.records: list[tuple[float, float]] = []

    def __enter__(self) -> str:
        self._process.start()
        return f"http://127.0.0.1:{self._port.get(timeout=RECEIVER_START_SECONDS)}/bench"

    def count(self) -> int:
        """Deliveries taken (answered 200) so far."""
        return int(self.received.value)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.records = self._results.get(timeout=RECEIVER_START_SECONDS)
        self._process.join(RECEIVER_START_SECONDS)


# -- the probe table ---------------------------------------------------------------------------


@dataclass
class ProbeTable:
    """A table played at a steady pace beside the load; its Play latencies in the window."""

    target: str
    interval: float
    seed: int
    plays_ms: list[float] = field(default_factory=list)
    failures: int = 0
    measuring: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        (table,) = e2e.setup_tables(self.target, 1, PRESET, DEV_PLATFORM_KEY)
        self.client = RefereeClient(self.target)
        self.bot = e2e.TableBot(self.client, table["table_id"], table["tokens"],
                                Ruleset.from_json(table["ruleset"]), self.seed)
        self.bot.deal(e2e.LoopStats())
        self.thread = threading.Thread(target=self._run, name="probe", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.is_set():
            began = time.perf_counter()
            try:
                self._step()
            except grpc.RpcError:
                if self.measuring:
                    self.failures += 1
                if not self.bot.resync():
                    self.bot.deal(e2e.LoopStats())
            self.done.wait(max(0.0, self.interval - (time.perf_counter() - began)))

    def _step(self) -> None:
        seat = self.bot.turn
        if seat is None:
            self.bot.deal(e2e.LoopStats())
            return
        kind, command = self.bot.next_command(seat)
        started = time.perf_counter()
        response = command()
        elapsed = time.perf_counter() - started
        if self.measuring and kind == "Play":
            self.plays_ms.append(elapsed * MS)
        self.bot.adopt(response.hand)

    def close(self) -> None:
        """Stop playing."""
        self.done.set()
        self.thread.join()
        self.client.close()


@dataclass
class MeasuredWindow:
    """Opens and closes the probe's window with the load's; notes the feed's head and time."""

    probe: ProbeTable
    platform: RefereeClient
    opened: tuple[float, int] = (0.0, 0)
    closed: tuple[float, int] = (0.0, 0)

    def start(self) -> None:
        """The window opens."""
        self.probe.measuring = True
        self.opened = (time.time(), self.platform.feed_head())

    def stop(self) -> None:
        """The window closes."""
        self.probe.measuring = False
        self.closed = (time.time(), self.platform.feed_head())


# -- runs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunSettings:
    """The sizes of every run."""

    tables: int
    processes: int
    seconds: float
    warmup: float
    receiver_delay: float
    timeout: float
    probe_interval: float
    niceness: int | None = None  # the delivery process's (FIFTYK_WEBHOOKS niceness)


def percentile(values: Sequence[float], percent: int) -> float:
    """The `percent`th percentile (nearest rank); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(percent / 100 * len(ordered)) - 1))]


def _wait_until_quiet(endpoint: Endpoint, *, until_first: bool) -> None:
    """Wait until the endpoint has received nothing for QUIET_SECONDS (and, with
    `until_first`, has received something)."""
    deadline = time.monotonic() + DRAIN_SECONDS
    count = -1
    while time.monotonic() < deadline:
        now = endpoint.count()
        if now == count and (now or not until_first):
            return
        count = now
        time.sleep(QUIET_SECONDS)


def _deliveries(records: list[tuple[float, float]], window: MeasuredWindow,
                mode: str, up: float) -> dict[str, Any]:
    """What the endpoint received, as figures."""
    (opened, head_opened), (closed, head_closed) = window.opened, window.closed
    seconds = closed - opened
    figures: dict[str, Any] = {"deliveries": len(records)}
    if mode == "fast":
        lags = [arrived - created for created, arrived in records
                if opened <= created <= closed]
        arrived_in_window = sum(1 for _, arrived in records if opened <= arrived <= closed)
        figures.update({
            "lag_p50_ms": round(percentile(lags, PERCENT_P50) * MS, 1),
            "lag_p99_ms": round(percentile(lags, PERCENT_P99) * MS, 1),
            "deliveries_per_second": round(arrived_in_window / seconds, 1),
            "feed_positions_per_second": round((head_closed - head_opened) / seconds, 1),
        })
    elif mode == "backlog":
        after = [arrived for _, arrived in records if arrived >= up]
        figures["catch_up_per_second"] = (round(len(after) / (after[-1] - up), 1)
                                          if after and after[-1] > up else 0.0)
    return figures


def run_once(target: str, mode: str, settings: RunSettings, seed: int) -> dict[str, Any]:
    """One run of one mode against a started referee: the figures."""
    delay = settings.receiver_delay if mode == "slow" else 0.0
    endpoint = Endpoint(mode, delay) if mode != BASELINE else None
    with contextlib.ExitStack() as stack:
        platform = RefereeClient(target, platform_key=DEV_PLATFORM_KEY)
        stack.callback(platform.close)
        if endpoint is not None:
            platform.register_webhook(stack.enter_context(endpoint))
            if mode == "backlog":
                endpoint.failing.set()
        probe = ProbeTable(target, settings.probe_interval, seed)
        window = MeasuredWindow(probe, platform)
        try:
            load = e2e.run_e2e(target, tables=settings.tables, seconds=settings.seconds,
                               processes=settings.processes, preset=PRESET,
                               platform_key=DEV_PLATFORM_KEY, seed=seed,
                               warmup=settings.warmup, probe=window)
        finally:
            probe.close()
        up = time.time()
        if endpoint is not None:
            endpoint.failing.clear()
            if mode in ("fast", "backlog"):
                _wait_until_quiet(endpoint, until_first=mode == "backlog")
    figures: dict[str, Any] = {
        "mode": mode,
        "probe_plays": len(probe.plays_ms),
        "probe_failures": probe.failures,
        "probe_play_p50_ms": round(percentile(probe.plays_ms, PERCENT_P50), 2),
        "probe_play_p99_ms": round(percentile(probe.plays_ms, PERCENT_P99), 2),
        "probe_plays_ms": [round(value, 3) for value in probe.plays_ms],
        "load_commands_per_second": load["commands_per_second"],
        "load_p99_ms": load["p99_ms"],
        "load_errors": load["errors"],
    }
    if endpoint is not None:
        figures.update(_deliveries(endpoint.records, window, mode, up))
    return figures


class Backends:
    """Where each run's referee keeps its events: a fresh SQLite directory or PostgreSQL
    database per run."""

    def __init__(self, scratch: Path, postgres_url: str | None) -> None:
        self.scratch = scratch
        self.admin_url = postgres_url
        self._postgres: ThrowawayPostgres | None = None

    def arguments(self, backend: str, name: str) -> tuple[list[str], str | None]:
        """`fiftyk serve` arguments for a new store, and the database to drop after."""
        if backend == "sqlite":
            return ["--data-dir", str(self.scratch / name)], None
        if self.admin_url is None:
            self._postgres = ThrowawayPostgres()
            self._postgres.start()
            self.admin_url = self._postgres.url("postgres")
        database = f"bench_webhooks_{name.replace('-', '_')}"
        create_database(self.admin_url, database)
        return ["--database-url", self.admin_url.rsplit("/", 1)[0] + f"/{database}"], database

    def drop(self, database: str | None) -> None:
        """Drop a run's database (kept on an external server otherwise)."""
        if database is not None and self.admin_url is not None:
            drop_database(self.admin_url, database)

    def close(self) -> None:
        """Stop the throwaway PostgreSQL server, if one was started."""
        if self._postgres is not None:
            self._postgres.stop()


@contextmanager
def _referee(backends: Backends, backend: str, settings: RunSettings,
             logs: Path) -> Iterator[str]:
    name = f"{backend}-{uuid.uuid4().hex[:8]}"
    arguments, database = backends.arguments(backend, name)
    delivery = f"{DELIVERY_SETTINGS},timeout={settings.timeout:g}"
    if settings.niceness is not None:
        delivery += f",niceness={settings.niceness}"
    try:
        with machine.ServerProcess([*arguments, "--webhooks", delivery],
                                   logs / f"server-{name}.log") as serving:
            yield serving.target
    finally:
        backends.drop(database)


def measure(backends_used: Sequence[str], modes: Sequence[str], repeats: int,
            settings: RunSettings, *, postgres_url: str | None = None,
            logs: Path | None = None) -> dict[str, Any]:
    """Every mode on every backend, `repeats` times, interleaved: runs and summaries."""
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {
        backend: {mode: [] for mode in modes} for backend in backends_used}
    with tempfile.TemporaryDirectory(prefix="fiftyk-bench-webhooks-") as scratch:
        backends = Backends(Path(scratch), postgres_url)
        try:
            for repeat in range(repeats):
                for backend in backends_used:
                    for index, mode in enumerate(modes):
                        with _referee(backends, backend, settings,
                                      logs or Path(scratch) / "logs") as target:
                            runs[backend][mode].append(
                                run_once(target, mode, settings, 1 + 100 * repeat + index))
        finally:
            backends.close()
    return {"settings": vars(settings), "repeats": repeats, "runs": runs,
            "summary": {backend: summarise(by_mode) for backend, by_mode in runs.items()}}


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [run[key] for run in runs if key in run]
    return round(statistics.median(values), 2) if values else None


def _pooled_p99(runs: list[dict[str, Any]]) -> float:
    """The p99 of every probe Play of every repeat (one run has few: each takes a while)."""
    return round(percentile([v for run in runs for v in run["probe_plays_ms"]], PERCENT_P99), 2)


SUMMARISED = ("probe_play_p50_ms", "probe_play_p99_ms", "load_commands_per_second",
              "load_p99_ms", "lag_p50_ms", "lag_p99_ms", "deliveries_per_second",
              "feed_positions_per_second", "catch_up_per_second")


def summarise(by_mode: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Medians over repeats per mode, and each mode's probe p99 against the baseline's."""
    summary: dict[str, dict[str, Any]] = {}
    baseline = by_mode.get(BASELINE, [])
    base_p99 = _median(baseline, "probe_play_p99_ms")
    base_pooled = _pooled_p99(baseline)
    for mode, runs in by_mode.items():
        row = {key: value for key in SUMMARISED if (value := _median(runs, key)) is not None}
        row["probe_play_p99_pooled_ms"] = pooled = _pooled_p99(runs)
        if mode != BASELINE and base_pooled:
            row["pooled_p99_ratio"] = round(pooled / base_pooled, 2)
        p99 = row.get("probe_play_p99_ms")
        if mode != BASELINE and base_p99 and p99 is not None:
            row["p99_ratio"] = round(p99 / base_p99, 2)
            paired = [run["probe_play_p99_ms"] / base["probe_play_p99_ms"]
                      for run, base in zip(runs, baseline, strict=False)
                      if base["probe_play_p99_ms"]]
            if paired:
                row["paired_p99_ratio"] = round(statistics.median(paired), 2)
        summary[mode] = row
    return summary


def render(report: dict[str, Any]) -> str:
    """The summaries as a readable table."""
    columns = ("probe_play_p50_ms", "probe_play_p99_ms", "p99_ratio", "paired_p99_ratio",
               "probe_play_p99_pooled_ms", "pooled_p99_ratio",
               "load_commands_per_second", "lag_p50_ms", "lag_p99_ms",
               "deliveries_per_second", "feed_positions_per_second", "catch_up_per_second")
    lines = []
    for backend, rows in report["summary"].items():
        lines.append(f"{backend} (medians of {report['repeats']} runs per mode)")
        for mode, row in rows.items():
            cells = ", ".join(f"{key}={row[key]:g}" for key in columns if key in row)
            lines.append(f"  {mode:>8}: {cells}")
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench webhooks`."""
    parser = sub.add_parser("webhooks", help="a probe table's Play latency with a slow or"
                            " hung webhook endpoint against none; an endpoint's delivery lag"
                            " and rate", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help=f"comma-separated, of {', '.join(BACKENDS)} (default: both)")
    parser.add_argument("--modes", default=",".join(DEFAULT_MODES),
                        help=f"comma-separated, of {', '.join(MODES)} (default: all)")
    parser.add_argument("--repeats", type=positive, default=DEFAULT_REPEATS)
    parser.add_argument("--tables", type=positive, default=DEFAULT_TABLES, metavar="N",
                        help=f"load tables (default {DEFAULT_TABLES})")
    parser.add_argument("--processes", type=positive, default=DEFAULT_PROCESSES,
                        help=f"load processes (default {DEFAULT_PROCESSES})")
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS,
                        help=f"measured seconds per run (default {DEFAULT_SECONDS:g})")
    parser.add_argument("--warmup", type=float, default=DEFAULT_WARMUP_SECONDS,
                        help=f"seconds of load before the window (default"
                             f" {DEFAULT_WARMUP_SECONDS:g})")
    parser.add_argument("--receiver-delay", type=float, default=DEFAULT_RECEIVER_DELAY,
                        metavar="SECONDS", help="`slow`: the endpoint answers after this long"
                        f" (default {DEFAULT_RECEIVER_DELAY:g})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help="the referee's timeout per POST (FIFTYK_WEBHOOKS timeout;"
                             f" default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--probe-interval", type=float, default=DEFAULT_PROBE_INTERVAL,
                        metavar="SECONDS", help="the probe table's pace (default"
                        f" {DEFAULT_PROBE_INTERVAL:g})")
    parser.add_argument("--niceness", type=int, choices=range(20), metavar="0-19",
                        help="the referee's delivery process's niceness (FIFTYK_WEBHOOKS"
                             " niceness; default: the referee's default)")
    parser.add_argument("--postgres-url", help="a server where the benchmark may create"
                        " databases (default: a throwaway one)")
    parser.add_argument("--logs", type=Path, metavar="DIR", help="keep the servers' logs")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write the runs and summaries as JSON to FILE")
    parser.set_defaults(handler=run)


def _choices(text: str, allowed: Sequence[str], what: str) -> list[str]:
    chosen = [item.strip() for item in text.split(",") if item.strip()]
    unknown = sorted(set(chosen) - set(allowed))
    if unknown or not chosen:
        raise SystemExit(f"bench webhooks: {what} must be among {', '.join(allowed)}")
    return chosen


def run(args: argparse.Namespace) -> int:
    """Run `scripts/bench webhooks`."""
    settings = RunSettings(tables=args.tables, processes=args.processes, seconds=args.seconds,
                           warmup=args.warmup, receiver_delay=args.receiver_delay,
                           timeout=args.timeout, probe_interval=args.probe_interval,
                           niceness=args.niceness)
    report = measure(_choices(args.backends, BACKENDS, "--backends"),
                     _choices(args.modes, MODES, "--modes"), args.repeats, settings,
                     postgres_url=args.postgres_url, logs=args.logs)
    print(render(report))
    if args.json is not None:
        args.json.write_text(json.dumps({"benchmark": "webhooks", **report}, indent=2) + "\n")
    return 0
