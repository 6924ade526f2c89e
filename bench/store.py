"""`scripts/bench store`: the event store under load, next to what the server itself can do.

Runs against a PostgreSQL database named by `--database-url` (it creates its own tables and
leaves its events behind; use a scratch database). In one run, on the same server:

1. accepted commands/s through the application with 1, 4 and 16 tables playing at once
   (one thread per table, each playing random legal moves; the client's own move choice is
   timed and reported separately),
2. `pgbench` with the same client counts: a single-row INSERT, and the same INSERT after
   `LOCK TABLE ... IN EXCLUSIVE MODE` — what the library's recorder does per append to keep
   the global feed gapless,
3. rebuilding hands from their events (events/s), split into reading and replaying,
4. the aggregate cache (4 tables without it) and table snapshots (loading a long table
   stream with and without its snapshot).

Targets (issue 4): ≥ 1,000 commands/s at 16 tables, rebuild ≥ 30,000 events/s.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import re
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg

from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.cache import replay
from fiftyk_referee.service.core.runner import Outcome
from fiftyk_referee.service.core.shards import ShardedReferee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.ops.config import parse_database_url
from fiftyk_referee.service.ops.metrics import Metrics

PRESET = "classic"
PLAYERS = 4
DEFAULT_SECONDS = 10.0
DEFAULT_TABLES = (1, 4, 16)
CACHE_OFF_TABLES = 4
PASS_PROBABILITY = 0.4
SNAPSHOT_STREAM_EVENTS = 1_000
COMMAND_TARGET = 1_000.0
REBUILD_TARGET = 30_000.0
BENCH_TABLE = "fiftyk_bench_rows"
PERCENTILE_95 = 0.95
SETUP_TIMEOUT_SECONDS = 300.0  # processes start, open their pools and seat their tables
START_SLACK_SECONDS = 0.05  # from the processes' rendezvous to the window's common start
MS = 1_000.0
TPS = re.compile(r"^tps = ([0-9.]+)", re.MULTILINE)


def fiftyk_hand(outcome: Outcome) -> Hand | None:
    """The 五十K hand a command's outcome carries (the lab plays 五十K only)."""
    hand = outcome.hand
    if hand is None:
        return None
    if not isinstance(hand, Hand):
        raise TypeError(f"not a 五十K hand: {type(hand).__name__}")
    return hand


@dataclass
class Throughput:
    """Accepted commands per second with some tables playing at once."""

    tables: int
    processes: int
    cache: bool
    seconds: float
    commands: int
    per_second: float
    p50_ms: float
    p95_ms: float
    client_share: float  # fraction of the threads' time spent choosing moves
    conflicts: int
    hands_completed: int
    hand_ids: list[str] = field(default_factory=list, repr=False)
    shards: int = 1  # databases the tables were spread over (service/core/shards.py)
    cpu_seconds: float = 0.0  # CPU of the playing processes within the window


@dataclass
class PgbenchRun:
    """One pgbench run: transactions per second."""

    clients: int
    script: str
    tps: float


@dataclass
class Rebuild:
    """Rebuilding hands from stored events."""

    hands: int
    events: int
    seconds: float
    events_per_second: float
    read_seconds: float
    replay_seconds: float


@dataclass
class SnapshotEffect:
    """Loading one long table stream, with and without its latest snapshot."""

    events: int
    with_snapshot_ms: float
    without_snapshot_ms: float


@dataclass
class Report:
    """Everything one run measured."""

    database: str
    seconds: float
    throughput: list[Throughput]
    pgbench: list[PgbenchRun]
    rebuild: Rebuild | None
    snapshots: SnapshotEffect | None


# -- application throughput -------------------------------------------------------------------


class TablePlayer(threading.Thread):
    """One table's loop: deal, then random legal moves, from `start_at` until `stop_at`."""

    def __init__(self, app: Referee | ShardedReferee, seed: int,
                 window: tuple[float, float]) -> None:
        super().__init__(daemon=True)
        self.app = app
        self.rng = random.Random(seed)
        self.start_at, self.stop_at = window
        self.latencies: list[float] = []
        self.choosing = 0.0
        self.busy = 0.0
        self.hand_ids: list[str] = []
        self.error: BaseException | None = None
        self.table_id = app.create_table(PRESET, {}, PLAYERS).table_id
        for seat in range(PLAYERS):
            app.join_table(self.table_id, f"bench-{seed}-{seat}", seat)

    def run(self) -> None:
        """Play until the window closes; record each command's latency."""
        try:
            time.sleep(max(0.0, self.start_at - time.time()))
            began = time.perf_counter()
            hand: Hand | None = None
            # The first command is always sent: a window a loaded machine let pass before the
            # loop began still yields one measured command, never an empty sample.
            while hand is None or time.time() < self.stop_at:
                if hand is None or hand.is_over:
                    outcome = self._timed(lambda: self.app.start_hand(self.table_id))
                    self.hand_ids.append(str(outcome.hand_id))
                else:
                    outcome = self._move(hand)
                hand = fiftyk_hand(outcome)
            self.busy = time.perf_counter() - began
        except BaseException as error:  # reported by the runner, never swallowed
            self.error = error

    def _move(self, hand: Hand) -> Outcome:
        chose = time.perf_counter()
        seat = hand.turn
        if seat is None:
            raise RuntimeError("a hand in progress has nobody to play")
        cards: list[str] | None = None
        if hand.top is None:
            cards = [str(self.rng.choice(hand.hands[seat]))]
        elif self.rng.random() >= PASS_PROBABILITY:
            plays = hand.legal_plays(seat)
            cards = self.rng.choice(plays).card_strings() if plays else None
        self.choosing += time.perf_counter() - chose
        hand_id = hand.id
        if cards is None:
            return self._timed(lambda: self.app.pass_turn(self.table_id, hand_id, seat))
        played = cards
        return self._timed(lambda: self.app.play(self.table_id, hand_id, seat, played))

    def _timed(self, command: Any) -> Outcome:
        started = time.perf_counter()
        outcome: Outcome = command()
        self.latencies.append(time.perf_counter() - started)
        return outcome


@dataclass
class _Share:
    """What one process measured for its tables."""

    latencies: list[float]
    choosing: float
    busy: float
    conflicts: int
    completed: int
    hand_ids: list[str]
    cpu_seconds: float = 0.0


def store_env(database_url: str, tables: int, *, cache: bool,
              create: bool = True) -> dict[str, str]:
    """The store settings for a run: one connection per table thread, a little overflow."""
    database = parse_database_url(database_url, Path("."))
    return persistence_env(database, pool_size=tables + 1, max_overflow=tables,
                           lock_timeout_ms=10_000, cache_size=1_000 if cache else 0,
                           create_schema=create)


def open_store(database_urls: Sequence[str], tables: int, *, cache: bool,
               metrics: Metrics | None = None, create: bool = True
               ) -> Referee | ShardedReferee:
    """The application on one database, or the shard router over several (in order);
    `create`: create the schema where it is missing."""
    envs = [store_env(url, tables, cache=cache, create=create) for url in database_urls]
    if len(envs) == 1:
        return Referee(envs[0], metrics=metrics)
    return ShardedReferee(envs, metrics=metrics)


def _cpu_in_window(window: tuple[float, float], out: list[float]) -> None:
    """This process's CPU time between the window's wall-clock start and end."""
    time.sleep(max(0.0, window[0] - time.time()))
    started = time.process_time()
    time.sleep(max(0.0, window[1] - time.time()))
    out.append(time.process_time() - started)


def play_tables(database_url: str | Sequence[str], tables: int, seconds: float, cache: bool,
                seed: int, ready: Any = None) -> _Share:
    """One process's part of a run: `tables` threads on one application instance (over
    several databases when given several: the shard router). The window opens once every
    process has its tables ready (`ready`: a barrier shared by the processes, if several)."""
    metrics = Metrics()
    urls = [database_url] if isinstance(database_url, str) else list(database_url)
    # Several processes: the caller created the schema (creating it at once collides).
    app = open_store(urls, tables, cache=cache, metrics=metrics, create=ready is None)
    try:
        players = [TablePlayer(app, seed * 1_000 + i, (0.0, 0.0)) for i in range(tables)]
        if ready is not None:
            ready.wait(SETUP_TIMEOUT_SECONDS)
        opens = time.time() + START_SLACK_SECONDS
        window = (opens, opens + seconds)
        for player in players:
            player.start_at, player.stop_at = window
        cpu: list[float] = []
        meter = threading.Thread(target=_cpu_in_window, args=(window, cpu), daemon=True)
        meter.start()
        for player in players:
            player.start()
        for player in players:
            player.join()
        meter.join()
        errors = [p.error for p in players if p.error is not None]
        if errors:
            raise errors[0]
        registry = metrics.registry
        conflicts = registry.get_sample_value("fiftyk_event_store_conflicts_total")
        completed = registry.get_sample_value("fiftyk_hands_completed_total",
                                              {"preset": PRESET})
        return _Share(latencies=[x for p in players for x in p.latencies],
                      choosing=sum(p.choosing for p in players),
                      busy=sum(p.busy for p in players), conflicts=int(conflicts or 0),
                      completed=int(completed or 0),
                      hand_ids=[h for p in players for h in p.hand_ids],
                      cpu_seconds=sum(cpu))
    finally:
        app.close()


def throughput(database_url: str | Sequence[str], tables: int, seconds: float, *,
               cache: bool = True, seed: int = 1, processes: int = 1) -> Throughput:
    """Accepted commands/s with `tables` tables playing concurrently for `seconds`.

    With several processes the tables are split between them (like server replicas sharing
    the database), each process running its tables on threads over one application. With
    several database URLs the tables are spread over them as shards (service/core/shards.py).
    """
    shards = 1 if isinstance(database_url, str) else len(database_url)
    workers = max(1, min(processes, tables))
    counts = [tables // workers + (1 if i < tables % workers else 0) for i in range(workers)]
    if workers == 1:
        shares = [play_tables(database_url, tables, seconds, cache, seed)]
    else:
        # The schema first, from here: processes creating it at once on a new database
        # collide on PostgreSQL's catalog ("tuple concurrently updated").
        open_store([database_url] if isinstance(database_url, str) else database_url, 1,
                   cache=cache).close()
        context = multiprocessing.get_context("spawn")
        with context.Manager() as manager, context.Pool(workers) as pool:
            ready = manager.Barrier(workers)
            shares = pool.starmap(play_tables, [
                (database_url, count, seconds, cache, seed * 100 + i, ready)
                for i, count in enumerate(counts)
            ])
    latencies = sorted(x for share in shares for x in share.latencies)
    busy = sum(share.busy for share in shares) or 1.0
    return Throughput(
        tables=tables, processes=workers, cache=cache, seconds=seconds,
        commands=len(latencies), per_second=len(latencies) / seconds,
        p50_ms=statistics.median(latencies) * MS if latencies else 0.0,
        p95_ms=latencies[int(len(latencies) * PERCENTILE_95)] * MS if latencies else 0.0,
        client_share=sum(share.choosing for share in shares) / busy,
        conflicts=sum(share.conflicts for share in shares),
        hands_completed=sum(share.completed for share in shares),
        hand_ids=[h for share in shares for h in share.hand_ids],
        shards=shards,
        cpu_seconds=sum(share.cpu_seconds for share in shares),
    )


# -- pgbench ----------------------------------------------------------------------------------


def find_pgbench(explicit: str | None) -> str | None:
    """pgbench from the flag, PATH, or `pg_config --bindir`."""
    if explicit:
        return explicit
    found = shutil.which("pgbench")
    if found:
        return found
    pg_config = shutil.which("pg_config")
    if pg_config:
        bindir = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True,
                                check=True).stdout.strip()
        candidate = Path(bindir) / "pgbench"
        if candidate.is_file():
            return str(candidate)
    return None


def pgbench_runs(pgbench: str, database_url: str, clients: Sequence[int],
                 seconds: float) -> list[PgbenchRun]:
    """Single-row inserts, plain and behind the recorder's table lock, per client count."""
    scripts = {
        "insert": f"INSERT INTO {BENCH_TABLE} (v) VALUES (1);\n",
        "lock+insert": (f"BEGIN;\nLOCK TABLE {BENCH_TABLE} IN EXCLUSIVE MODE;\n"
                        f"INSERT INTO {BENCH_TABLE} (v) VALUES (1);\nCOMMIT;\n"),
    }
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {BENCH_TABLE}")
        conn.execute(f"CREATE TABLE {BENCH_TABLE} (id bigserial PRIMARY KEY, v int)")
    database = parse_database_url(database_url, Path("."))
    env = {**os.environ, "PGPASSWORD": database.password}
    connection = ["-h", database.host, "-p", str(database.port), "-U", database.user]
    runs: list[PgbenchRun] = []
    try:
        with tempfile.TemporaryDirectory(prefix="fiftyk-pgbench-") as scratch:
            for name, text in scripts.items():
                script = Path(scratch) / f"{name.replace('+', '_')}.sql"
                script.write_text(text)
                for count in clients:
                    argv = [pgbench, "-n", "-c", str(count), "-j", str(min(count, 4)),
                            "-T", str(max(1, round(seconds))), "-f", str(script),
                            *connection, database.dbname]
                    done = subprocess.run(argv, capture_output=True, text=True, env=env,
                                          check=False)
                    match = TPS.search(done.stdout)
                    if done.returncode != 0 or match is None:
                        raise RuntimeError(f"pgbench failed: {done.stdout}\n{done.stderr}")
                    runs.append(PgbenchRun(clients=count, script=name,
                                           tps=float(match.group(1))))
    finally:
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(f"DROP TABLE IF EXISTS {BENCH_TABLE}")
    return runs


# -- rebuild and snapshots -------------------------------------------------------------------


def rebuild(database_url: str, hand_ids: Sequence[str]) -> Rebuild:
    """Replay every given hand from its events: read (select + decode) and replay separately."""
    app = Referee(store_env(database_url, 1, cache=False))
    try:
        events = 0
        reading = replaying = 0.0
        for hand_id in hand_ids:
            started = time.perf_counter()
            stored = list(app.events.get(UUID(hand_id)))
            middle = time.perf_counter()
            hand = replay(None, stored)
            reading += middle - started
            replaying += time.perf_counter() - middle
            if not isinstance(hand, Hand):
                raise RuntimeError(f"hand {hand_id} did not replay to a hand")
            events += len(stored)
        total = reading + replaying
        return Rebuild(hands=len(hand_ids), events=events, seconds=total,
                       events_per_second=events / total if total else 0.0,
                       read_seconds=reading, replay_seconds=replaying)
    finally:
        app.close()


def snapshot_effect(database_url: str, events: int = SNAPSHOT_STREAM_EVENTS) -> SnapshotEffect:
    """Load a long table stream from a cold process with its snapshot, and without any."""
    app = Referee(store_env(database_url, 1, cache=False))
    try:
        table_id = app.create_table(PRESET, {}, PLAYERS).table_id
        for turn in range((events - 1) // 2):
            app.join_table(table_id, f"guest-{turn}", 0)
            app.leave_table(table_id, 0)
        started = time.perf_counter()
        loaded = app.get_table(table_id)
        with_snapshot = time.perf_counter() - started
        started = time.perf_counter()
        rebuilt = app.rebuild_table(table_id)
        without = time.perf_counter() - started
        if loaded.view() != rebuilt.view():
            raise RuntimeError("the snapshot and the full replay disagree")
        return SnapshotEffect(events=loaded.version, with_snapshot_ms=with_snapshot * MS,
                              without_snapshot_ms=without * MS)
    finally:
        app.close()


# -- the command ------------------------------------------------------------------------------


def benchmark(database_url: str, seconds: float, tables: Sequence[int],
              pgbench: str | None, processes: Sequence[int] = (1,)) -> Report:
    """Every measurement of one run."""
    runs = [throughput(database_url, n, seconds, seed=n * 10 + p, processes=p)
            for p in processes for n in tables]
    runs.append(throughput(database_url, CACHE_OFF_TABLES, seconds, cache=False, seed=99))
    bench_runs = pgbench_runs(pgbench, database_url, tables, seconds) if pgbench else []
    hand_ids = [h for run in runs for h in run.hand_ids]
    return Report(
        database=_redacted(database_url), seconds=seconds, throughput=runs,
        pgbench=bench_runs, rebuild=rebuild(database_url, hand_ids) if hand_ids else None,
        snapshots=snapshot_effect(database_url),
    )


def _redacted(database_url: str) -> str:
    return re.sub(r"://([^:@/]+):[^@/]*@", r"://\1:***@", database_url)


def render(report: Report) -> str:
    """A readable table of the report."""
    lines = [f"scripts/bench store — {report.database}, {report.seconds:g} s per run", ""]
    lines.append(f"{'tables':>6} {'procs':>5} {'cache':>5} {'commands/s':>11} {'p50 ms':>7}"
                 f" {'p95 ms':>7} {'client':>6} {'conflicts':>9} {'hands':>5}")
    for run in report.throughput:
        lines.append(f"{run.tables:>6} {run.processes:>5} {'on' if run.cache else 'off':>5} "
                     f"{run.per_second:>11.0f} {run.p50_ms:>7.2f} {run.p95_ms:>7.2f} "
                     f"{run.client_share:>6.0%} {run.conflicts:>9} {run.hands_completed:>5}")
    if report.pgbench:
        lines += ["", f"{'clients':>7} {'pgbench script':<14} {'tps':>9}"]
        for bench in report.pgbench:
            lines.append(f"{bench.clients:>7} {bench.script:<14} {bench.tps:>9.0f}")
    with_cache: dict[int, float] = {}
    for run in report.throughput:
        if run.cache:
            with_cache[run.tables] = max(with_cache.get(run.tables, 0.0), run.per_second)
    best = with_cache.get(max(with_cache)) if with_cache else None
    if best is not None:
        verdict = "meets" if best >= COMMAND_TARGET else "misses"
        lines.append(f"\n{max(with_cache)} tables: {best:.0f} commands/s ({verdict} the"
                     f" {COMMAND_TARGET:.0f}/s target)")
    if report.rebuild is not None:
        r = report.rebuild
        verdict = "meets" if r.events_per_second >= REBUILD_TARGET else "misses"
        lines.append(f"rebuild: {r.events} events of {r.hands} hands, "
                     f"{r.events_per_second:.0f} events/s ({verdict} {REBUILD_TARGET:.0f}/s);"
                     f" read {r.read_seconds:.2f} s, replay {r.replay_seconds:.2f} s")
    if report.snapshots is not None:
        s = report.snapshots
        lines.append(f"table of {s.events} events: {s.with_snapshot_ms:.1f} ms with its snapshot,"
                     f" {s.without_snapshot_ms:.1f} ms replaying every event")
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench store`."""
    parser = sub.add_parser("store", help="event store throughput next to pgbench",
                            description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True,
                        help="a scratch PostgreSQL database: postgresql://user@host:port/db")
    parser.add_argument("--seconds", type=float, default=DEFAULT_SECONDS,
                        help=f"length of each run (default {DEFAULT_SECONDS:g})")
    parser.add_argument("--tables", default=",".join(map(str, DEFAULT_TABLES)),
                        help="comma-separated table counts (default 1,4,16)")
    parser.add_argument("--processes", default="1",
                        help="comma-separated process counts to split the tables over,"
                        " like server replicas (default 1)")
    parser.add_argument("--pgbench", help="pgbench executable (default: PATH, pg_config)")
    parser.add_argument("--no-pgbench", action="store_true", help="skip the pgbench runs")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write JSON to FILE")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run `scripts/bench store`."""
    tables = [int(t) for t in str(args.tables).split(",") if t.strip()]
    pgbench = None if args.no_pgbench else find_pgbench(args.pgbench)
    if pgbench is None and not args.no_pgbench:
        print("pgbench not found: pass --pgbench PATH or --no-pgbench")
        return 2
    processes = [int(p) for p in str(args.processes).split(",") if p.strip()]
    report = benchmark(args.database_url, args.seconds, tables, pgbench, processes)
    print(render(report))
    if args.json is not None:
        data = asdict(report)
        for entry in data["throughput"]:
            entry.pop("hand_ids")
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 0


__all__ = ["add_parser", "benchmark", "rebuild", "render", "run", "snapshot_effect",
           "throughput"]
