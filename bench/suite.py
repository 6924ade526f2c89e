"""`scripts/bench suite`: every benchmark in one run, written to DIR/report.md and report.json.

Sections (issue 7): 1. the rules engine (with RLCard's Dou Dizhu as the baseline of random
playouts), 2. the event store on PostgreSQL (with `pgbench` single-row inserts at the same
client counts), 3. end to end through gRPC on SQLite and PostgreSQL (with a trivial echo
service on the same server stack as the ceiling) and memory per idle table, 4. how costs
grow (store size, hand length).

Every figure is the median over repeats; a baseline runs in the same invocation, and the
ratio is given next to it. PostgreSQL is a throwaway server started for the run
(`service.pgserver`, durability off: fsync, synchronous_commit and full_page_writes are off,
like the tests) unless `--postgres-url` names a server where the suite may create
databases. Servers run as `fiftyk serve` child processes on port 0; load comes from separate
processes. `--quick` shrinks everything (for the smoke test), so its figures mean little.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import statistics
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import e2e, growth, hand, machine, rules, shengji, store
from bench.arguments import positive, positive_float
from fiftyk_referee.service.core.store import DEFAULT_CACHE_SIZE
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.support.pgserver import ThrowawayPostgres, create_database, drop_database

SECTIONS = ("rules", "store", "e2e", "growth", "scaling")
# `scaling` starts up to 8 server processes and a second PostgreSQL server: asked for by name.
DEFAULT_SECTIONS = ("rules", "store", "e2e", "growth")
TITLES = {"rules": "1. Rules engine", "store": "2. Event store (PostgreSQL)",
          "e2e": "3. End to end (gRPC)", "growth": "4. How cost grows",
          "scaling": "5. The road past one database"}
NEEDS_POSTGRES = frozenset({"store", "e2e", "growth", "scaling"})
E2E_TARGET_PER_SECOND = 1_000.0
E2E_TARGET_P99_MS = 50.0
ECHO_RATIO_TARGET = 0.5
GROWTH_TOLERANCE = 0.20
ILLEGAL_RATE = 0.01
RLCARD_INSTALL = ("RLCard is not installed, so random playouts have no baseline: install it"
                  " into the venv by hand with `.venv/bin/pip install rlcard` (it is not a"
                  " dependency of the referee) and run the suite again.")
MET, MISSED = "MET", "MISSED"
MAX_SAMPLES_SHOWN = 7  # per-repeat values shown next to a median in the Markdown report
ISSUE_7 = "issue 7"


@dataclass(frozen=True)
class Settings:
    """Sizes of one run (full, or shrunk by --quick)."""

    quick: bool
    repeats: int
    seconds: float  # measured seconds of each e2e and echo run
    warmup: float
    tables: int  # e2e tables
    processes: int  # load-generating processes
    store_seconds: float
    store_tables: tuple[int, ...]
    cache_off_tables: int
    snapshot_events: int
    rules_repeat: int
    hand_repeat: int
    memory_tables: int
    small_events: int
    big_events: int
    latency_repeats: int
    latency_seconds: float
    illegal_rate: float = ILLEGAL_RATE
    writer_processes: tuple[int, ...] = (1, 2, 4, 8)  # `fiftyk serve --processes N` runs
    shengji_playouts: int = 10  # random Shengji hands (their answers timed, their steps/s)
    shard_tables: int = 16  # tables of each shard comparison run

    @classmethod
    def choose(cls, *, quick: bool, seconds: float | None, repeats: int | None,
               tables: int | None) -> Settings:
        """The full sizes, or the quick ones; explicit flags win."""
        if quick:
            return cls(quick=True, repeats=repeats or 1, seconds=seconds or 0.5, warmup=0.2,
                       tables=tables or 4, processes=1, store_seconds=seconds or 0.5,
                       store_tables=(1,), cache_off_tables=1, snapshot_events=60,
                       rules_repeat=2, hand_repeat=2, memory_tables=100, small_events=1_000,
                       big_events=10_000, latency_repeats=1, latency_seconds=0.3,
                       writer_processes=(1, 2), shard_tables=2, shengji_playouts=2)
        chosen = seconds or 10.0
        runs = repeats or 3
        return cls(quick=False, repeats=runs, seconds=chosen, warmup=2.0,
                   tables=tables or 32, processes=2, store_seconds=min(chosen, 5.0),
                   store_tables=(1, 4, 16), cache_off_tables=4,
                   snapshot_events=store.SNAPSHOT_STREAM_EVENTS, rules_repeat=30,
                   hand_repeat=50, memory_tables=1_000, small_events=1_000,
                   big_events=100_000, latency_repeats=3 * runs, latency_seconds=0.25)


@dataclass
class Figure:
    """One figure of the report: a median over repeats, maybe a baseline and a target."""

    key: str
    name: str
    value: float | None
    unit: str
    repeats: int
    samples: list[float] = field(default_factory=list)
    baseline_name: str | None = None
    baseline: float | None = None
    baseline_unit: str | None = None  # when it differs from the figure's unit
    ratio: float | None = None
    target: str | None = None
    met: bool | None = None
    source: str | None = None  # the issue the target comes from
    note: str = ""

    @property
    def verdict(self) -> str:
        """MET, MISSED, or empty when the figure has no target."""
        return "" if self.met is None else (MET if self.met else MISSED)


@dataclass
class Section:
    """One numbered section of the report."""

    key: str
    title: str
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0

    def add(self, figure: Figure) -> Figure:
        """Append a figure and return it."""
        self.figures.append(figure)
        return figure


def median(values: Sequence[float]) -> float | None:
    """The median, or None when there are no values."""
    return statistics.median(values) if values else None


def plural(count: int, word: str, words: str | None = None) -> str:
    """`1 table`, `4 tables`."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def ratio(value: float | None, baseline: float | None) -> float | None:
    """value / baseline, when both exist and the baseline is not zero."""
    if value is None or not baseline:
        return None
    return value / baseline


def measured(key: str, name: str, samples: Sequence[float], unit: str, **extra: Any) -> Figure:
    """A figure from per-repeat samples (the value is their median)."""
    values = [float(x) for x in samples]
    return Figure(key=key, name=name, value=median(values), unit=unit, repeats=len(values),
                  samples=values, **extra)


def compared(figure: Figure, baseline_name: str, baseline: float | None,
             unit: str | None = None) -> Figure:
    """Attach a baseline measured in the same run, and the ratio to it."""
    figure.baseline_name = baseline_name
    figure.baseline = baseline
    figure.baseline_unit = unit
    figure.ratio = ratio(figure.value, baseline)
    return figure


def targeted(figure: Figure, target: str, met: bool | None, source: str) -> Figure:
    """Attach a target and whether the median meets it."""
    figure.target = target
    figure.met = met if figure.value is not None else False
    figure.source = source
    return figure


@dataclass
class Context:
    """What the sections share: settings, output directory, databases."""

    settings: Settings
    out: Path
    scratch: Path
    admin_url: str | None = None
    postmaster: int | None = None
    databases: list[str] = field(default_factory=list)
    e2e_postgres_url: str | None = None

    def database(self, purpose: str) -> str:
        """A new empty database on the PostgreSQL server; returns its URL."""
        if self.admin_url is None:
            raise RuntimeError("no PostgreSQL server for this run")
        name = f"bench_{purpose}_{uuid.uuid4().hex[:8]}"
        create_database(self.admin_url, name)
        self.databases.append(name)
        return self.admin_url.rsplit("/", 1)[0] + f"/{name}"

    def postgres_cpu(self) -> float:
        """CPU seconds of the throwaway PostgreSQL server and its backends (0 if external)."""
        return machine.tree_cpu_seconds(self.postmaster) if self.postmaster else 0.0


def _slug(prefix: str, name: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in name.lower()).split()
    return f"{prefix}.{'_'.join(words)}"


# -- 1. rules engine --------------------------------------------------------------------------


def section_rules(ctx: Context) -> Section:
    """Classify/beats and legal plays; whole hands and playouts against RLCard."""
    section = Section("rules", TITLES["rules"])
    repeat = ctx.settings.rules_repeat
    for result in rules.benchmark(repeat):
        figure = Figure(key=_slug("rules", result.name), name=result.name,
                        value=result.median_us, unit="µs", repeats=repeat,
                        note=(f"p95 {result.p95_us:.1f} µs over {result.samples} timings"
                              + ("" if result.plays is None
                                 else f"; {plural(round(result.plays), 'play')}")))
        if result.target_us is not None:
            targeted(figure, f"≤ {result.target_us:g} µs", result.met, result.issue)
        section.add(figure)
    section.notes.append(f"rules: {rules.DEALS * rules.SEATS} seeded 27-card classic hands,"
                         f" {repeat} repeats each; legal plays timed per call.")
    rows, notes = hand.benchmark(ctx.settings.hand_repeat)
    baseline = next((r for r in rows if "RLCard" in r.name), None)
    for row in rows:
        if row is baseline:
            continue
        figure = Figure(key=_slug("hand", row.name), name=row.name, value=row.median, unit=row.unit,
                        repeats=row.samples, note=row.note)
        if row.unit == "steps/s" and baseline is not None:
            compared(figure, baseline.name, baseline.median)
        if row.met is not None:
            targeted(figure, row.target, row.met, row.issue)
        section.add(figure)
    if baseline is not None:
        section.add(Figure(key="hand.rlcard_steps_per_second", name=baseline.name,
                           value=baseline.median, unit=baseline.unit, repeats=baseline.samples,
                           note=baseline.note))
    else:
        section.notes.append(RLCARD_INSTALL)
    section.notes += [n for n in notes if n not in section.notes]
    section.notes.append("hand: medians of process CPU time, our hands and RLCard games"
                         " interleaved so both see the same machine load.")
    section.details = {"rows": [asdict(r) for r in rows]}
    _shengji_rules(ctx, section)
    return section


def _shengji_rules(ctx: Context, section: Section) -> None:
    """Shengji's follow check, legal actions and playouts (`bench shengji`), in this section."""
    repeat = ctx.settings.rules_repeat
    playouts = ctx.settings.shengji_playouts
    results, steps_per_second = shengji.benchmark(repeat, playouts)
    for result in results:
        # A target on the 95th percentile is shown on it: the figure is the p95.
        p95 = result.target_on == "p95"
        figure = Figure(key=_slug("shengji", result.name + (" p95" if p95 else "")),
                        name=f"Shengji {result.name}" + (" (p95)" if p95 else ""),
                        value=result.p95_us if p95 else result.median_us, unit="µs",
                        repeats=repeat,
                        note=(f"median {result.median_us:.1f} µs" if p95
                              else f"p95 {result.p95_us:.1f} µs")
                        + f" over {result.samples} timings")
        if result.target_us is not None:
            targeted(figure, f"≤ {result.target_us:g} µs", result.met, "issue 25")
        section.add(figure)
    section.add(Figure(key="shengji.random_playout_steps_per_second",
                       name="Shengji random playout steps/s", value=steps_per_second,
                       unit="steps/s", repeats=playouts,
                       note="legal actions asked every step, declaration windows included"))
    section.notes.append(
        f"Shengji: preset `{shengji.PRESET}`, {shengji.DEALS * shengji.SEATS} seeded"
        f" {shengji.HAND_SIZE}-card hands, {repeat} passes per lead; the hand's own answer"
        f" at every turn of {plural(playouts, 'random hand')} (its targets bound the p95).")


# -- 2. event store ---------------------------------------------------------------------------


def section_store(ctx: Context) -> Section:
    """Application commands/s next to pgbench; rebuilds, snapshots, the aggregate cache."""
    section = Section("store", TITLES["store"])
    s = ctx.settings
    url = ctx.database("store")
    pgbench = store.find_pgbench(None)
    if pgbench is None:
        section.notes.append("pgbench not found (PATH or pg_config --bindir): no baseline.")
    reports: list[store.Report] = []
    for repeat in range(s.repeats):
        runs = [store.throughput(url, n, s.store_seconds, seed=100 * repeat + n)
                for n in s.store_tables]
        runs.append(store.throughput(url, s.cache_off_tables, s.store_seconds, cache=False,
                                     seed=100 * repeat + 99))
        bench = (store.pgbench_runs(pgbench, url, s.store_tables, s.store_seconds)
                 if pgbench else [])
        hand_ids = [h for run in runs for h in run.hand_ids]
        reports.append(store.Report(
            database="(scratch)", seconds=s.store_seconds, throughput=runs, pgbench=bench,
            rebuild=store.rebuild(url, hand_ids) if hand_ids else None,
            snapshots=store.snapshot_effect(url, s.snapshot_events)))
    for n in s.store_tables:
        cached = [r for rep in reports for r in rep.throughput if r.tables == n and r.cache]
        plain = [b.tps for rep in reports for b in rep.pgbench
                 if b.clients == n and b.script == "insert"]
        locked = [b.tps for rep in reports for b in rep.pgbench
                  if b.clients == n and b.script == "lock+insert"]
        figure = measured(f"store.commands_per_second.{n}", f"commands/s, {plural(n, 'table')}",
                          [r.per_second for r in cached], "cmd/s")
        compared(figure, f"pgbench INSERT, {plural(n, 'client')}", median(plain), "tx/s")
        lock_ratio = ratio(figure.value, median(locked))
        figure.note = (f"p50 {median([r.p50_ms for r in cached]) or 0:.2f} ms,"
                       f" p95 {median([r.p95_ms for r in cached]) or 0:.2f} ms;"
                       f" client move choice {median([r.client_share for r in cached]) or 0:.0%}"
                       f" of thread time; conflicts {sum(r.conflicts for r in cached)}"
                       + (f"; {lock_ratio:.2f}× pgbench LOCK+INSERT" if lock_ratio else ""))
        if n == max(s.store_tables):
            targeted(figure, f"≥ {store.COMMAND_TARGET:,.0f} cmd/s",
                     (figure.value or 0) >= store.COMMAND_TARGET, "issue 4")
        section.add(figure)
        if plain:
            section.add(measured(f"store.pgbench_insert.{n}",
                                 f"pgbench INSERT, {plural(n, 'client')}", plain, "tx/s"))
        if locked:
            section.add(measured(f"store.pgbench_lock_insert.{n}",
                                 f"pgbench LOCK TABLE + INSERT, {plural(n, 'client')}", locked,
                                 "tx/s"))
    n = s.cache_off_tables
    off = [r.per_second for rep in reports for r in rep.throughput if not r.cache]
    on = [r.per_second for rep in reports for r in rep.throughput if r.cache and r.tables == n]
    cache_figure = measured("store.cache_off",
                            f"commands/s, {plural(n, 'table')}, aggregate cache off", off, "cmd/s")
    if on:
        compared(cache_figure, f"cache on, {plural(n, 'table')}", median(on))
    section.add(cache_figure)
    rebuilds = [rep.rebuild for rep in reports if rep.rebuild is not None]
    if rebuilds:
        figure = measured("store.rebuild_events_per_second", "rebuild hands from PostgreSQL",
                          [r.events_per_second for r in rebuilds], "events/s")
        read = median([r.read_seconds / r.seconds for r in rebuilds if r.seconds]) or 0.0
        figure.note = (f"{median([r.events for r in rebuilds]):.0f} events of"
                       f" {median([r.hands for r in rebuilds]):.0f} hands per repeat;"
                       f" reading {read:.0%} of the time, replaying the rest")
        section.add(targeted(figure, f"≥ {store.REBUILD_TARGET:,.0f} events/s",
                             (figure.value or 0) >= store.REBUILD_TARGET, "issue 4"))
    snapshots = [rep.snapshots for rep in reports if rep.snapshots is not None]
    if snapshots:
        events = snapshots[0].events
        figure = measured("store.snapshot_load_ms",
                          f"load a {events}-event table stream with its snapshot",
                          [x.with_snapshot_ms for x in snapshots], "ms")
        compared(figure, "replaying every event",
                 median([x.without_snapshot_ms for x in snapshots]))
        section.add(figure)
    section.notes.append(
        f"{plural(s.repeats, 'repeat')} of {s.store_seconds:g} s per run; one thread per table"
        " on one in-process application (the client's move choice is timed apart); pgbench runs"
        " single-row INSERTs with the same client counts on the same server in each repeat.")
    section.details = {"reports": [_store_json(rep) for rep in reports]}
    return section


def _store_json(report: store.Report) -> dict[str, Any]:
    data = asdict(report)
    for entry in data["throughput"]:
        entry.pop("hand_ids")
    return data


# -- 3. end to end ----------------------------------------------------------------------------


@dataclass
class CpuProbe:
    """CPU seconds used by some processes while the measured window is open."""

    meters: dict[str, Callable[[], float]]
    used: dict[str, float] = field(default_factory=dict)

    def start(self) -> None:
        """Take the first reading."""
        self._first = {name: read() for name, read in self.meters.items()}

    def stop(self) -> None:
        """Take the second reading."""
        self.used = {name: read() - self._first[name] for name, read in self.meters.items()}


@dataclass
class Probes:
    """Several window probes as one."""

    probes: list[e2e.WindowProbe]

    def start(self) -> None:
        """Start every probe."""
        for probe in self.probes:
            probe.start()

    def stop(self) -> None:
        """Stop every probe."""
        for probe in self.probes:
            probe.stop()


@contextmanager
def _server(ctx: Context, name: str, arguments: list[str], *,
            start_timeout: float = machine.START_TIMEOUT_SECONDS
            ) -> Iterator[tuple[machine.ServerProcess, machine.Serving]]:
    process = machine.ServerProcess(arguments, ctx.out / "logs" / f"server-{name}.log",
                                    start_timeout=start_timeout)
    with process as serving:
        yield process, serving


def _run_once(ctx: Context, kind: str, target: str, meters: dict[str, Callable[[], float]],
              seed: int, game: str = e2e.DEFAULT_GAME) -> dict[str, Any]:
    s = ctx.settings
    cpu = CpuProbe(meters)
    probes: list[e2e.WindowProbe] = [cpu]
    if kind == "echo":
        result = e2e.run_echo_load(target, loops=s.tables, seconds=s.seconds,
                                   processes=s.processes, warmup=s.warmup,
                                   probe=Probes(probes))
    else:
        result = e2e.run_e2e(target, tables=s.tables, seconds=s.seconds,
                             processes=s.processes, preset=e2e.DEFAULT_PRESETS[game],
                             platform_key=DEV_PLATFORM_KEY, seed=seed, warmup=s.warmup,
                             illegal_rate=s.illegal_rate, probe=Probes(probes), game=game)
    commands = result["commands"] or 1
    result["cpu_seconds"] = {k: round(v, 3) for k, v in cpu.used.items()}
    result["cpu_seconds"]["load clients"] = result["client_cpu_seconds"]
    result["cpu_ms_per_command"] = {k: round(v * 1000 / commands, 3)
                                    for k, v in result["cpu_seconds"].items()}
    return result


SCALED = "postgresql_processes"
SCALED_PROCESSES = 2
SHENGJI = "postgresql_shengji"  # Shengji tables on the same server as the 五十K runs
SHENGJI_COST_TARGET = 1.2  # issue 25: Shengji's server CPU per command ≤ 1.2× 五十K's
DOUDIZHU = "postgresql_doudizhu"  # 斗地主 tables on the same server as the 五十K runs


def section_e2e(ctx: Context) -> Section:
    """gRPC closed loops on SQLite and PostgreSQL against the echo ceiling; memory per table."""
    s = ctx.settings
    section = Section("e2e", TITLES["e2e"])
    runs: dict[str, list[dict[str, Any]]] = {"echo": [], "sqlite": [], "postgresql": [],
                                              SHENGJI: [], DOUDIZHU: [], SCALED: []}
    pg_url = ctx.database("e2e")
    ctx.e2e_postgres_url = pg_url
    scaled_url = ctx.database("e2e_processes")
    sqlite_dir = ctx.scratch / "e2e-sqlite"
    echo_server = e2e.EchoServerProcess()
    with (_server(ctx, "sqlite", ["--data-dir", str(sqlite_dir)]) as (lite, lite_at),
          _server(ctx, "postgresql", ["--database-url", pg_url]) as (pg, pg_at),
          _server(ctx, SCALED, ["--database-url", scaled_url, "--processes",
                                str(SCALED_PROCESSES)]) as (multi, multi_at),
          echo_server as echo_target):
        echo_pid = echo_server.pid
        for repeat in range(s.repeats):
            # Interleaved, so the three see the same machine load.
            runs["echo"].append(_run_once(
                ctx, "echo", echo_target,
                {"server": lambda: machine.process_cpu_seconds(echo_pid)}, 0))
            runs["sqlite"].append(_run_once(
                ctx, "sqlite", lite_at.target, {"server": lite.cpu_seconds}, 1 + 10 * repeat))
            runs["postgresql"].append(_run_once(
                ctx, "postgresql", pg_at.target,
                {"server": pg.cpu_seconds, "postgres": ctx.postgres_cpu}, 2 + 10 * repeat))
            runs[SHENGJI].append(_run_once(
                ctx, SHENGJI, pg_at.target,
                {"server": pg.cpu_seconds, "postgres": ctx.postgres_cpu}, 4 + 10 * repeat,
                game="shengji"))
            runs[DOUDIZHU].append(_run_once(
                ctx, DOUDIZHU, pg_at.target,
                {"server": pg.cpu_seconds, "postgres": ctx.postgres_cpu}, 5 + 10 * repeat,
                game="doudizhu"))
            runs[SCALED].append(_run_once(
                ctx, SCALED, multi_at.target,
                {"server": multi.cpu_seconds, "postgres": ctx.postgres_cpu}, 3 + 10 * repeat))
        server_argv = {"sqlite": lite.argv, "postgresql": pg.argv, SCALED: multi.argv}
    echo = _e2e_figures(section, "echo", "echo service (the ceiling)", runs["echo"], None)
    rates = {}
    for kind, label in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL"),
                        (SHENGJI, "PostgreSQL, Shengji tables"),
                        (DOUDIZHU, "PostgreSQL, 斗地主 tables"),
                        (SCALED, f"PostgreSQL, {SCALED_PROCESSES} server processes")):
        rates[kind] = _e2e_figures(section, kind, f"referee on {label}", runs[kind], echo)
    _game_cost(section, "shengji", "Shengji", runs["postgresql"], runs[SHENGJI],
               rates["postgresql"], rates[SHENGJI], target=SHENGJI_COST_TARGET)
    _game_cost(section, "doudizhu", "斗地主", runs["postgresql"], runs[DOUDIZHU],
               rates["postgresql"], rates[DOUDIZHU])
    section.notes.append(
        f"{plural(s.repeats, 'repeat')}, interleaved echo → SQLite → PostgreSQL → PostgreSQL"
        " with Shengji tables (`tractor`, the same server) → PostgreSQL with 斗地主 tables"
        " (`classic`, the same server) → PostgreSQL"
        f" with `fiftyk serve --processes {SCALED_PROCESSES}` (one process per core, one port,"
        " the same database: the scale-out; issue 7's targets are judged on one process);"
        " each run:"
        f" {plural(s.tables, 'table')} (one closed-loop bot each; echo: {s.tables} loops) from"
        f" {plural(s.processes, 'load process', 'load processes')}, {s.warmup:g} s warm-up"
        f" not measured, then {s.seconds:g} s measured."
        f" Commands are Play/Pass/StartHand (五十K `classic`), Declare/Bury/Play/StartHand"
        f" (Shengji), Act/StartHand (斗地主: the first seat bids 3, then plays at random);"
        f" bots also play out of turn on purpose with"
        f" probability {s.illegal_rate:g} per command (rule rejections, counted apart).")
    section.notes.append("Servers: " + "; ".join(
        f"`{shlex.join(argv[argv.index('serve') + 7:])}` with defaults otherwise"
        for argv in server_argv.values())
        + ". CPU per command = CPU seconds of the process(es) in the window / accepted"
        " commands. In a closed loop the mean latency is about tables ÷ throughput (Little's"
        f" law): {s.tables} tables at {E2E_TARGET_PER_SECOND:,.0f} cmd/s wait"
        f" {s.tables / E2E_TARGET_PER_SECOND * 1000:.0f} ms on average.")
    _memory(ctx, section)
    section.details = {"runs": runs, "servers": {k: v for k, v in server_argv.items()}}
    return section


def _e2e_figures(section: Section, kind: str, label: str, runs: list[dict[str, Any]],
                 echo: Figure | None) -> Figure:
    unit = "calls/s" if kind == "echo" else "cmd/s"
    rate = measured(f"e2e.{kind}.commands_per_second",
                    f"{label}: {'calls' if kind == 'echo' else 'accepted commands'}/s",
                    [r["commands_per_second"] for r in runs], unit)
    rejected = sum(r["rejected"] for r in runs)
    errors = sum(r["errors"] for r in runs)
    cpu = {k: median([r["cpu_ms_per_command"][k] for r in runs]) for k in
           runs[0]["cpu_ms_per_command"]} if runs else {}
    cores = {k: median([r["cpu_seconds"][k] / r["seconds"] for r in runs])
             for k in (runs[0]["cpu_seconds"] if runs else {})}
    rate.note = (f"{sum(r['commands'] for r in runs)} measured in all; CPU ms per command: "
                 + ", ".join(f"{k} {v:.3f}" for k, v in cpu.items() if v is not None)
                 + "; cores busy: "
                 + ", ".join(f"{k} {v:.2f}" for k, v in cores.items() if v is not None))
    if kind != "echo":
        rate.note += f"; hands started {sum(r['hands_started'] for r in runs)}"
    if echo is not None:
        compared(rate, echo.name, echo.value, echo.unit)
    p50 = measured(f"e2e.{kind}.p50_ms", f"{label}: p50 latency",
                   [r["p50_ms"] for r in runs], "ms")
    p99 = measured(f"e2e.{kind}.p99_ms", f"{label}: p99 latency",
                   [r["p99_ms"] for r in runs], "ms")
    error_figure = Figure(key=f"e2e.{kind}.errors", name=f"{label}: errors",
                          value=float(errors), unit="calls", repeats=len(runs),
                          samples=[float(r["errors"]) for r in runs],
                          note=_codes(runs, "errors_by_code"))
    if kind == "postgresql":
        targeted(rate, f"≥ {E2E_TARGET_PER_SECOND:,.0f} cmd/s",
                 (rate.value or 0) >= E2E_TARGET_PER_SECOND, ISSUE_7)
        targeted(p99, f"≤ {E2E_TARGET_P99_MS:g} ms",
                 rate.value is not None and (p99.value or 0) <= E2E_TARGET_P99_MS, ISSUE_7)
        targeted(error_figure, "0 besides rule rejections", errors == 0 and bool(runs), ISSUE_7)
        if echo is not None:
            ratio_figure = Figure(key="e2e.postgresql.echo_ratio",
                                  name="referee on PostgreSQL ÷ echo ceiling", value=rate.ratio,
                                  unit="×", repeats=len(runs),
                                  note="accepted commands/s ÷ echo calls/s, medians")
            targeted(ratio_figure, f"≥ {ECHO_RATIO_TARGET:g}×",
                     (rate.ratio or 0) >= ECHO_RATIO_TARGET, ISSUE_7)
    for figure in (rate, p50, p99, error_figure):
        section.add(figure)
    if kind == "postgresql" and echo is not None:
        section.add(ratio_figure)
    if kind != "echo":
        section.add(Figure(key=f"e2e.{kind}.rejected", name=f"{label}: rule rejections",
                           value=float(rejected), unit="calls", repeats=len(runs),
                           note="caused on purpose (out-of-turn plays); "
                           + _codes(runs, "rejected_by_reason")))
    return rate


def _game_cost(section: Section, game: str, label: str, fiftyk_runs: list[dict[str, Any]],
               game_runs: list[dict[str, Any]], fiftyk_rate: Figure, game_rate: Figure, *,
               target: float | None = None) -> None:
    """A game's server CPU per command and commands/s against 五十K's, same server, same
    run (`target`: the most its cost may be, × 五十K's, where an issue sets one)."""
    # Each run's ratio (both games' tables on one server at once), and their median: the
    # figure is the median of its own samples, like every other figure of the suite.
    samples = [round(g["cpu_ms_per_command"]["server"] / f["cpu_ms_per_command"]["server"], 3)
               for g, f in zip(game_runs, fiftyk_runs, strict=True)
               if f["cpu_ms_per_command"]["server"]]
    cost = Figure(key=f"e2e.{game}_cost_ratio",
                  name=f"{label} ÷ 五十K tables: server CPU per command",
                  value=median(samples) if samples else None,
                  unit="× cost",
                  repeats=len(game_runs),
                  samples=samples,
                  note=f"median over the runs of {label}'s ÷ 五十K's server CPU ms per accepted"
                       " command, both on one server")
    if target is None:
        section.add(cost)
    else:
        section.add(targeted(cost, f"≤ {target:g}×",
                             (cost.value or 0) <= target and cost.value is not None,
                             "issue 25"))
    section.add(Figure(key=f"e2e.{game}_rate_ratio",
                       name=f"{label} ÷ 五十K tables: accepted commands/s",
                       value=ratio(game_rate.value, fiftyk_rate.value), unit="×",
                       repeats=len(game_runs), note="medians, one server"))


def _codes(runs: list[dict[str, Any]], key: str) -> str:
    total: dict[str, int] = {}
    for run in runs:
        for code, count in run[key].items():
            total[code] = total.get(code, 0) + count
    return ", ".join(f"{code} {count}" for code, count in sorted(total.items())) or "none"


def _memory(ctx: Context, section: Section) -> None:
    tables = ctx.settings.memory_tables
    url = ctx.database("memory")
    with _server(ctx, "memory", ["--database-url", url]) as (process, serving):
        grown = growth.idle_table_memory(serving.target, process.rss_kib, tables,
                                         DEV_PLATFORM_KEY)
    figure = Figure(key="e2e.memory_per_idle_table_kib",
                    name=f"server RSS growth per idle table ({tables} tables)",
                    value=grown.per_table_kib, unit="KiB", repeats=1,
                    note=(f"VmRSS {grown.rss_before_kib / 1024:.1f} → "
                          f"{grown.rss_after_kib / 1024:.1f} MiB; at "
                          + ", ".join(f"{n}: {kib / 1024:.1f}" for n, kib in grown.checkpoints)
                          + f" MiB; the server's aggregate cache keeps up to"
                          f" {DEFAULT_CACHE_SIZE} aggregates (a table and its hand are two)"))
    section.add(figure)
    section.notes.append(
        f"Memory: a fresh `fiftyk serve` on PostgreSQL; {growth.MEMORY_WARMUP_TABLES} warm-up"
        f" tables, then VmRSS from /proc before and after creating {tables} tables through"
        " the API (4 players seated, a hand dealt, then idle). One run.")
    section.details["memory"] = asdict(grown)


# -- 4. how cost grows ------------------------------------------------------------------------


def section_growth(ctx: Context) -> Section:
    """Latency vs store size, rebuild vs hand length."""
    s = ctx.settings
    section = Section("growth", TITLES["growth"])
    big_app = growth.application(ctx.database("big"))
    try:
        big = growth.fill_store(big_app, s.big_events, seed=2)
        samples = growth.latency_by_store_size(
            lambda: growth.application(ctx.database("small")), big_app, s.small_events,
            s.latency_repeats, s.latency_seconds)
        figures = {}
        for name, events in (("small", s.small_events), ("big", s.big_events)):
            mine = [x for x in samples if x.store == name]
            figures[name] = measured(
                f"growth.latency_{name}_store_ms", f"command latency, store of ~{events:,} events",
                [x.median_ms for x in mine], "ms",
                note=(f"p95 {median([x.p95_ms for x in mine]) or 0:.2f} ms;"
                      f" {median([x.commands for x in mine]) or 0:.0f} commands per sample;"
                      f" {min(x.events_before for x in mine):,}–"
                      f"{max(x.events_after for x in mine):,} events stored while measured"))
        base, grown = figures["small"], figures["big"]
        compared(grown, base.name, base.value)
        within = grown.ratio is not None and abs(grown.ratio - 1) <= GROWTH_TOLERANCE
        targeted(grown, f"within ±{GROWTH_TOLERANCE:.0%} of the small store", within, ISSUE_7)
        section.add(base)
        section.add(grown)
        section.notes.append(
            f"Latency: one fresh table per sample playing {s.latency_seconds:g} s of commands"
            f" through the in-process application on PostgreSQL (move choice not timed);"
            f" {s.latency_repeats} samples per store, alternating. Each small sample has a"
            f" fresh database filled to ~{s.small_events:,} events by hands played through"
            f" the application. The large store: {big.template_hands} hands played, then"
            f" {big.copies} copies of that table (fresh ids) appended in bulk through the"
            f" recorder, {big.events:,} events in {big.seconds:.1f} s.")
        long_hand = growth.play_long_hand(big_app)
        points = growth.rebuild_by_length(big_app, long_hand, max(3, s.latency_repeats))
        for point in points:
            section.add(Figure(key=f"growth.rebuild_v{point.version}_ms",
                               name=f"replay a hand to version {point.version}",
                               value=point.median_ms, unit="ms", repeats=point.samples,
                               note=f"{point.us_per_event:.1f} µs/event"))
        fixed, per_event = growth.linear_fit([p.version for p in points],
                                             [p.median_ms for p in points])
        section.notes.append(
            f"Rebuild: `hand_at` (read from PostgreSQL without the cache + replay) of one hand"
            f" of {long_hand.version} events (a single and three passes per trick), in the"
            f" large store. Least-squares fit: {fixed:.2f} ms + {per_event * 1000:.1f} µs per"
            " event.")
    finally:
        big_app.close()
    section.details = {"big": asdict(big), "latency": [asdict(x) for x in samples]}
    return section


# -- running and reporting --------------------------------------------------------------------

# -- 5. the road past one database -----------------------------------------------------------

SHARD_LOAD_PROCESSES = 2  # processes playing the shard comparison's tables (one per core)
SHARD_TARGET = 1.7  # issue 25: two databases against one


def section_scaling(ctx: Context) -> Section:
    """Writer processes on one database next to pgbench; two databases (shards) against one."""
    s = ctx.settings
    section = Section("scaling", TITLES["scaling"])
    url = ctx.database("scaling")
    runs: dict[int, list[dict[str, Any]]] = {n: [] for n in s.writer_processes}
    argv: dict[int, list[str]] = {}
    pgbench = store.find_pgbench(None)
    bench_runs: list[store.PgbenchRun] = []
    for repeat in range(s.repeats):
        # Interleaved, one server at a time: idle servers would poll the database meanwhile.
        for n in s.writer_processes:
            with _server(ctx, f"writers-{n}", ["--database-url", url, "--processes", str(n)],
                         start_timeout=machine.START_TIMEOUT_SECONDS * n) as (process, serving):
                argv[n] = process.argv
                runs[n].append(_run_once(
                    ctx, f"writers-{n}", serving.target,
                    {"server": process.cpu_seconds, "postgres": ctx.postgres_cpu},
                    500 + 10 * repeat + n))
        if pgbench:
            bench_runs += store.pgbench_runs(pgbench, url, s.writer_processes, s.store_seconds)
    one = None
    for n in s.writer_processes:
        figure = _e2e_figures(section, f"writers_{n}",
                              f"{plural(n, 'server process', 'server processes')}", runs[n],
                              None)
        locked = [b.tps for b in bench_runs if b.clients == n and b.script == "lock+insert"]
        if one is None:
            one = figure
            if locked:
                compared(figure, f"pgbench LOCK TABLE + INSERT, {plural(n, 'client')}",
                         median(locked), "tx/s")
        else:
            compared(figure, one.name, one.value)
            if locked:
                figure.note += (f"; {ratio(figure.value, median(locked)) or 0:.2f}× pgbench"
                                f" LOCK TABLE + INSERT with {plural(n, 'client')}")
    for n in s.writer_processes:
        for script, label in (("insert", "INSERT"), ("lock+insert", "LOCK TABLE + INSERT")):
            samples = [b.tps for b in bench_runs if b.clients == n and b.script == script]
            if samples:
                section.add(measured(f"scaling.pgbench_{script.replace('+', '_')}.{n}",
                                     f"pgbench {label}, {plural(n, 'client')}", samples,
                                     "tx/s"))
    if not pgbench:
        section.notes.append("pgbench not found (PATH or pg_config --bindir): no baseline.")
    section.notes.append(
        f"Writers: {plural(s.repeats, 'repeat')}; in each, `fiftyk serve --processes N` for N"
        f" in {', '.join(map(str, s.writer_processes))} on the same database, started one at a"
        f" time, each loaded by {plural(s.tables, 'table')} (one closed-loop bot each) from"
        f" {plural(s.processes, 'load process', 'load processes')}, {s.warmup:g} s warm-up,"
        f" {s.seconds:g} s measured. `cores busy` is CPU seconds ÷ measured seconds: with"
        f" {machine.machine_facts()['cpus_usable']} usable cores, whoever nears that number is"
        " what saturates. pgbench runs the same client counts on the same server: a"
        " single-row INSERT, and one behind the recorder's `LOCK TABLE ... IN EXCLUSIVE MODE`"
        " (what every append of the library takes to keep the feed gapless).")
    section.details["writers"] = {str(n): r for n, r in runs.items()}
    section.details["servers"] = {str(n): a for n, a in argv.items()}
    section.details["pgbench"] = [asdict(b) for b in bench_runs]
    try:
        _shards(ctx, section)
    except Exception:  # the writers' figures stand; the report shows the failure
        section.error = traceback.format_exc()
        print(section.error, file=sys.stderr)
    return section


def _shards(ctx: Context, section: Section) -> None:
    """The shard router's aggregate write rate: one database, two on one server, two on two
    servers (a second throwaway server started here)."""
    s = ctx.settings
    tables = s.shard_tables
    one = ctx.database("shard_one")
    same = [ctx.database("shard_same_a"), ctx.database("shard_same_b")]
    other = ThrowawayPostgres()
    other.start()
    try:
        second_pid = machine.postmaster_pid(other.datadir)
        create_database(other.url("postgres"), "bench_shard_two")
        two = [ctx.database("shard_two_a"), other.url("bench_shard_two")]
        meters: dict[str, Callable[[], float]] = {"postgres": ctx.postgres_cpu}
        if second_pid is not None:
            meters["second postgres"] = lambda: machine.tree_cpu_seconds(second_pid)
        layouts: dict[str, str | list[str]] = {"one": one, "same_server": same,
                                                "two_servers": two}
        results: dict[str, list[dict[str, Any]]] = {key: [] for key in layouts}
        for repeat in range(s.repeats):
            for key, urls in layouts.items():  # interleaved
                cpu = CpuProbe(meters)
                cpu.start()
                started = time.perf_counter()
                run = store.throughput(urls, tables, s.store_seconds,
                                       seed=700 + 10 * repeat, processes=SHARD_LOAD_PROCESSES)
                elapsed = time.perf_counter() - started
                cpu.stop()
                results[key].append({
                    "per_second": run.per_second, "p95_ms": run.p95_ms,
                    "conflicts": run.conflicts, "commands": run.commands,
                    "cores_busy": {"referee": run.cpu_seconds / run.seconds,
                                   **{k: v / elapsed for k, v in cpu.used.items()}}})
    finally:
        other.stop()
    labels = {"one": "1 database", "same_server": "2 databases on one server",
              "two_servers": "2 databases on 2 servers"}
    base: Figure | None = None
    for key, label in labels.items():
        done = results[key]
        figure = measured(f"scaling.shards.{key}", f"shard router, {label}: commands/s",
                          [r["per_second"] for r in done], "cmd/s")
        busy = {k: median([r["cores_busy"].get(k, 0.0) for r in done])
                for k in done[0]["cores_busy"]} if done else {}
        figure.note = (f"p95 {median([r['p95_ms'] for r in done]) or 0:.1f} ms; conflicts"
                       f" {sum(r['conflicts'] for r in done)}; cores busy: "
                       + ", ".join(f"{k} {v:.2f}" for k, v in busy.items() if v is not None))
        if base is None:
            base = figure
        else:
            compared(figure, base.name, base.value)
            targeted(figure, f"≥ {SHARD_TARGET:g}× one database",
                     (figure.ratio or 0) >= SHARD_TARGET, "issue 25")
        section.add(figure)
    section.notes.append(
        f"Shards: {plural(s.repeats, 'repeat')}, interleaved one → two on one server → two on"
        f" two servers; each run {plural(tables, 'table')} played in the application"
        f" (`service/core/shards.py`, no gRPC) from {SHARD_LOAD_PROCESSES} processes, threads per"
        f" table, {s.store_seconds:g} s measured (`bench store`'s loop). The referee's cores"
        " are the playing processes' CPU in the window; PostgreSQL's are over the whole run.")
    section.details["shards"] = results


RUNNERS: dict[str, Callable[[Context], Section]] = {
    "rules": section_rules, "store": section_store, "e2e": section_e2e,
    "growth": section_growth, "scaling": section_scaling,
}


def run_suite(out: Path, settings: Settings, *, only: Sequence[str] = DEFAULT_SECTIONS,
              postgres_url: str | None = None, argv: Sequence[str] = ()) -> dict[str, Any]:
    """Run the chosen sections, write report.md and report.json to `out`, return the data."""
    out.mkdir(parents=True, exist_ok=True)
    started_at = dt.datetime.now(dt.UTC)
    started = time.perf_counter()
    load_before = machine.load_average()
    facts = machine.machine_facts()
    sections: list[Section] = []
    with tempfile.TemporaryDirectory(prefix="fiftyk-suite-") as scratch:
        ctx = Context(settings=settings, out=out, scratch=Path(scratch))
        server: ThrowawayPostgres | None = None
        try:
            if NEEDS_POSTGRES & set(only):
                if postgres_url is None:
                    server = ThrowawayPostgres()
                    server.start()
                    ctx.admin_url = server.url("postgres")
                    ctx.postmaster = machine.postmaster_pid(server.datadir)
                else:
                    ctx.admin_url = postgres_url
                facts["postgresql"] = machine.postgres_facts(ctx.admin_url)
                facts["postgresql"]["server"] = ("throwaway (service.pgserver)"
                                                 if server else "external (--postgres-url)")
            for key in SECTIONS:
                if key in only:
                    sections.append(_run_section(ctx, key))
        finally:
            if server is not None:
                server.stop()
            elif ctx.admin_url is not None:
                for name in ctx.databases:
                    drop_database(ctx.admin_url, name)
    facts["load_average_before"] = load_before
    facts["load_average_after"] = machine.load_average()
    data = {
        "suite": "scripts/bench suite",
        "command": shlex.join(["scripts/bench", "suite", *argv]),
        "started_at": started_at.isoformat(timespec="seconds"),
        "finished_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "duration_seconds": round(time.perf_counter() - started, 1),
        "settings": asdict(settings),
        "machine": facts,
        "targets": [_target_json(f) for sec in sections for f in sec.figures
                    if f.source == ISSUE_7],
        "sections": [{**asdict(sec), "figures": [{**asdict(f), "verdict": f.verdict}
                                                 for f in sec.figures]}
                     for sec in sections],
    }
    (out / "report.json").write_text(json.dumps(data, indent=2, default=str) + "\n")
    (out / "report.md").write_text(render(data))
    return data


def _run_section(ctx: Context, key: str) -> Section:
    started = time.perf_counter()
    print(f"scripts/bench suite: {TITLES[key]} ...", file=sys.stderr, flush=True)
    try:
        section = RUNNERS[key](ctx)
    except Exception:  # reported in the section, and by the exit status: the rest still runs
        section = Section(key, TITLES[key], error=traceback.format_exc())
        print(section.error, file=sys.stderr)
    section.seconds = round(time.perf_counter() - started, 1)
    return section


def _target_json(figure: Figure) -> dict[str, Any]:
    return {"key": figure.key, "name": figure.name, "target": figure.target,
            "value": figure.value, "unit": figure.unit, "verdict": figure.verdict}


def fmt(value: float | None, unit: str = "") -> str:
    """A number with sensible precision (thousands separated from 1,000)."""
    if value is None:
        return "–"
    magnitude = abs(value)
    if float(value).is_integer() or magnitude >= 1_000:
        text = f"{value:,.0f}"
    elif magnitude >= 100:
        text = f"{value:.0f}"
    elif magnitude >= 10:
        text = f"{value:.1f}"
    elif magnitude >= 1:
        text = f"{value:.2f}"
    else:
        text = f"{value:.3f}"
    return f"{text} {unit}".strip()


def render(data: dict[str, Any]) -> str:
    """The report as Markdown."""
    m = data["machine"]
    settings = data["settings"]
    pg = m.get("postgresql")
    packages = ", ".join(f"{k} {v}" for k, v in m["packages"].items() if v)
    missing = ", ".join(k for k, v in m["packages"].items() if not v)
    quick = " — QUICK MODE: the figures mean little" if settings["quick"] else ""
    lines = [
        "# fiftyk benchmark report", "",
        f"`{data['command']}` — {data['started_at']} to {data['finished_at']}"
        f" ({data['duration_seconds']:.0f} s){quick}",
        "",
        "Every figure is the median over the stated number of repeats; baselines ran in the"
        " same invocation. The machine is shared: read medians, not single runs.", "",
        "## Machine", "",
        "| | |", "|---|---|",
        f"| CPU | {m['cpu_model']} × {m['cpu_count']} ({m['cpus_usable']} usable) |",
        f"| Memory | {m['memory_mib']:,} MiB |" if m.get("memory_mib") else "| Memory | ? |",
        f"| Kernel | {m['kernel']} |",
        f"| Python | {m['python']} |",
    ]
    if pg:
        lines.append(f"| PostgreSQL | {pg['version'].split(' on ')[0]}, {pg['server']};"
                     f" fsync={pg['fsync']}, synchronous_commit={pg['synchronous_commit']},"
                     f" full_page_writes={pg['full_page_writes']},"
                     f" shared_buffers={pg['shared_buffers']} |")
    lines += [
        f"| Packages | {packages}{f' (not installed: {missing})' if missing else ''} |",
        f"| Load average (1/5/15 min) | before {_load(m['load_average_before'])},"
        f" after {_load(m['load_average_after'])} |",
        f"| Revision | {m.get('git') or '?'} |",
        "",
    ]
    if pg and pg["fsync"] == "off":
        lines += ["PostgreSQL ran with durability off (fsync, synchronous_commit,"
                  " full_page_writes), like the test server: commits cost less than on a"
                  " durable production server, for the referee and pgbench alike.", ""]
    lines += ["## Targets (issue 7)", "", "| Target | Figure | Median | Verdict |",
              "|---|---|---|---|"]
    for target in data["targets"]:
        lines.append(f"| {target['target']} | {target['name']} |"
                     f" {fmt(target['value'], target['unit'])} | **{target['verdict']}** |")
    if not data["targets"]:
        lines.append("| – | (the sections with these targets did not run) | | |")
    lines.append("")
    for section in data["sections"]:
        lines += [f"## {section['title']}", "", f"_{section['seconds']:.0f} s_", ""]
        if section["error"]:
            lines += ["**This section failed:**", "", "```", section["error"].rstrip(), "```",
                      ""]
        if section["figures"]:
            lines += ["| Figure | Median | Repeats | Baseline (same run) | Ratio | Target |"
                      " Verdict | Notes |", "|---|---|---|---|---|---|---|---|"]
            for f in section["figures"]:
                unit = f["baseline_unit"] or f["unit"]
                baseline = (f"{f['baseline_name']}: {fmt(f['baseline'], unit)}"
                            if f["baseline_name"] else "")
                ratio_text = f"{f['ratio']:.2f}×" if f["ratio"] is not None else ""
                target = f"{f['target']} ({f['source']})" if f["target"] else ""
                verdict = f"**{f['verdict']}**" if f["verdict"] else ""
                note = f["note"]
                if 1 < len(f["samples"]) <= MAX_SAMPLES_SHOWN:
                    runs = " / ".join(fmt(x) for x in f["samples"])
                    note = f"runs {runs}" + (f"; {note}" if note else "")
                lines.append(f"| {f['name']} | {fmt(f['value'], f['unit'])} | {f['repeats']} |"
                             f" {baseline} | {ratio_text} | {target} | {verdict} | {note} |")
            lines.append("")
        lines += [f"- {note}" for note in section["notes"]]
        lines.append("")
    return "\n".join(lines)


def _load(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


# -- command line -----------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench suite`."""
    parser = sub.add_parser("suite", help="every benchmark in one run, to a report directory",
                            description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="where report.md, report.json and the server logs go")
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes for a smoke test (figures mean little)")
    parser.add_argument("--seconds", type=positive_float, metavar="S",
                        help="measured seconds of each e2e/echo run (default 10; store runs"
                        " use at most 5)")
    parser.add_argument("--repeats", type=positive, metavar="N",
                        help="repeats of every load run (default 3)")
    parser.add_argument("--tables", type=positive, metavar="T",
                        help="e2e tables (default 32)")
    parser.add_argument("--only", default=",".join(DEFAULT_SECTIONS),
                        help="comma-separated sections to run (default:"
                        f" {','.join(DEFAULT_SECTIONS)}; also: scaling, which starts up to 8"
                        " server processes and a second PostgreSQL server)")
    parser.add_argument("--postgres-url", metavar="URL",
                        help="an existing PostgreSQL server where the suite may create (and"
                        " drop) databases, instead of a throwaway one")
    parser.set_defaults(handler=run)


def _argv(args: argparse.Namespace) -> list[str]:
    argv = ["--out", str(args.out)] + (["--quick"] if args.quick else [])
    for flag in ("seconds", "repeats", "tables", "postgres_url"):
        value = getattr(args, flag)
        if value is not None:
            argv += [f"--{flag.replace('_', '-')}", str(value)]
    if args.only != ",".join(DEFAULT_SECTIONS):
        argv += ["--only", args.only]
    return argv


def run(args: argparse.Namespace) -> int:
    """Run `scripts/bench suite`; exit 1 when a section failed (the report says which)."""
    only = [part.strip() for part in str(args.only).split(",") if part.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        print(f"scripts/bench suite: unknown section(s) {', '.join(unknown)};"
              f" choose from {', '.join(SECTIONS)}", file=sys.stderr)
        return 2
    settings = Settings.choose(quick=args.quick, seconds=args.seconds, repeats=args.repeats,
                               tables=args.tables)
    data = run_suite(args.out, settings, only=only, postgres_url=args.postgres_url,
                     argv=_argv(args))
    print(f"wrote {args.out / 'report.md'} and {args.out / 'report.json'}")
    for target in data["targets"]:
        print(f"{target['verdict']:<7} {target['name']}: {fmt(target['value'], target['unit'])}"
              f" (target {target['target']})")
    return 1 if any(section["error"] for section in data["sections"]) else 0


__all__ = ["Figure", "Section", "Settings", "add_parser", "render", "run", "run_suite"]
