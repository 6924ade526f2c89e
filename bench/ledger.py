"""`scripts/bench ledger`: what `VerifyHand` and evidence cost as the ledger grows, and what
an idle table costs in memory.

- `per call`: one store (SQLite) whose ledger of finished hands grows to each size asked
  for; at each size the same real hand (a classic hand played to the end through the
  application) is checked with `VerifyHand` and exported as evidence, `--repeat` times
  each, by a process that already read the ledger. Medians of wall and CPU time, and the
  work: feed rows read from the store per call (the ledger's records). A cost that does not
  grow with the ledger reads the same rows at every size.
- `first call`: a new application on the same store (a restart, or another replica) reads
  the ledger once; its first `VerifyHand` pays for that.

The ledger grows cheaply: the played table's stream, its `HandRecorded` records included,
is copied under fresh table ids (new hand ids, re-chained), so each copy adds as many leaves
as the template recorded hands, without copying the hands' own events (they are not
needed to check the played hand; the integrity audit would name them missing).

- `--idle-tables N`: memory per idle table. N tables (four seats, a hand dealt, then idle)
  created through the application on SQLite under `tracemalloc`: the traced growth per
  table and the allocation sites that dominate it (the server's caches live in the
  application: the aggregate cache, the chain's remembered heads, the ledger).
- `--server-idle-tables N`: the same tables created through the gRPC API of a `fiftyk
  serve` child process on SQLite (as the suite's memory figure, which uses PostgreSQL): its
  VmRSS growth per table, and at each quarter of the way.

To compare with another checkout's code, run this file from that checkout's directory
(`cd OTHER && ../wt/.venv/bin/python -m bench.ledger ...` after copying it there): it uses
only what the application offered before the ledger's per-call cost was fixed.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

from eventsourcing.persistence import StoredEvent

from bench import machine
from bench.arguments import positive
from bench.growth import MemoryGrowth, copy_table, idle_table_memory, open_table, play_hand
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY, parse_database_url

DEFAULT_SIZES = (100, 1_000, 10_000)
DEFAULT_REPEAT = 15
TEMPLATE_HANDS = 10  # leaves each copy of the template table adds
INSERT_BATCH_EVENTS = 5_000
TOP_SITES = 8
MS = 1_000
KIB = 1_024


class FeedReads:
    """Counts the feed rows an application's recorder hands out (the ledger reads the feed)."""

    def __init__(self, app: Referee) -> None:
        self.rows = 0
        recorder = app.recorder
        select: Callable[..., Any] = recorder.select_notifications

        def counted(*args: Any, **kwargs: Any) -> Any:
            found = select(*args, **kwargs)
            self.rows += len(found)
            return found

        setattr(recorder, "select_notifications", counted)  # noqa: B010 - an instance's method


@dataclass(frozen=True)
class Call:
    """Medians of one call: wall and CPU milliseconds, feed rows read."""

    wall_ms: float
    cpu_ms: float
    feed_rows: float


def _measure(function: Callable[[], Any], reads: FeedReads, repeat: int) -> Call:
    walls, cpus, rows = [], [], []
    for _ in range(repeat):
        before = reads.rows
        wall, cpu = time.perf_counter(), time.process_time()
        function()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
        rows.append(reads.rows - before)
    return Call(statistics.median(walls) * MS, statistics.median(cpus) * MS,
                statistics.median(rows))


@dataclass(frozen=True)
class AtSize:
    """The per-call costs at one ledger size."""

    size: int
    verify_hand: Call
    evidence: Call
    first_verify_hand: Call  # a new application's first call: it reads the ledger once


def _env(directory: Path) -> dict[str, str]:
    return persistence_env(parse_database_url("", directory), cache_size=100)


def _ledger_size(app: Referee) -> int:
    return app.ledger.refresh()


def per_call(sizes: Sequence[int], repeat: int, seed: int = 11) -> list[AtSize]:
    """VerifyHand and evidence export of one played hand as the ledger grows to each size."""
    results = []
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        app = Referee(_env(directory))
        try:
            reads = FeedReads(app)
            rng = random.Random(seed)
            table_id = open_table(app, "ledger")
            hands = {}
            for _ in range(TEMPLATE_HANDS):
                hand = play_hand(app, table_id, rng)
                hands[hand.id] = hand.number
            checked = str(next(iter(hands)))
            template = [(table_id, list(app.recorder.select_events(table_id)))]
            if not app.verify_hand(checked).ok:
                raise RuntimeError("the benchmark's hand does not verify")
            for size in sorted(sizes):
                _grow(app, template, hands, size)
                held = _ledger_size(app)
                app.verify_hand(checked)  # warm: this process has read the ledger
                verify = _measure(lambda: app.verify_hand(checked), reads, repeat)
                evidence = _measure(lambda: app.export_evidence(checked), reads, repeat)
                first = _first_call(directory, checked)
                results.append(AtSize(held, verify, evidence, first))
        finally:
            app.close()
    return results


def _grow(app: Referee, template: list[tuple[UUID, list[StoredEvent]]],
          hands: dict[UUID, int], size: int) -> None:
    held = _ledger_size(app)
    batch: list[StoredEvent] = []
    while held < size:
        batch += copy_table(template, uuid4(), hands)
        held += len(hands)
        if len(batch) >= INSERT_BATCH_EVENTS:
            app.recorder.insert_events(batch)
            batch = []
    if batch:
        app.recorder.insert_events(batch)


def _first_call(directory: Path, hand_id: str) -> Call:
    fresh = Referee(_env(directory))
    try:
        return _measure(lambda: fresh.verify_hand(hand_id), FeedReads(fresh), 1)
    finally:
        fresh.close()


# -- memory per idle table ----------------------------------------------------------------


@dataclass(frozen=True)
class IdleMemory:
    """Traced memory growth over `tables` idle tables, and where it was allocated."""

    tables: int
    traced_kib: float
    per_table_kib: float
    sites: list[tuple[str, float, int]]  # (file:line, KiB, blocks), largest first
    seconds: float


def idle_memory(tables: int, seed: int = 5) -> IdleMemory:
    """Create `tables` idle tables (four seats, a hand dealt) through the application."""
    with tempfile.TemporaryDirectory() as name:
        app = Referee(persistence_env(parse_database_url("", Path(name))))
        try:
            rng = random.Random(seed)
            for _ in range(20):  # warm-up: first-call allocations are not per table
                _dealt_table(app, rng)
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
            started = time.perf_counter()
            for _ in range(tables):
                _dealt_table(app, rng)
            seconds = time.perf_counter() - started
            after = tracemalloc.take_snapshot()
            tracemalloc.stop()
        finally:
            app.close()
    growth = after.compare_to(before, "lineno")
    traced = sum(stat.size_diff for stat in growth) / KIB
    sites = [(f"{stat.traceback[0].filename.rsplit('/', 2)[-1]}:{stat.traceback[0].lineno}",
              stat.size_diff / KIB, stat.count_diff) for stat in growth[:TOP_SITES]]
    return IdleMemory(tables, traced, traced / tables, sites, seconds)


def server_idle_memory(tables: int) -> MemoryGrowth:
    """A `fiftyk serve` on SQLite: its VmRSS growth over `tables` idle tables."""
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        server = machine.ServerProcess(["--database-url", f"sqlite:///{directory}/idle.db"],
                                       directory / "server.log")
        with server as serving:
            return idle_table_memory(serving.target, server.rss_kib, tables,
                                     DEV_PLATFORM_KEY)


def _dealt_table(app: Referee, rng: random.Random) -> None:
    table_id = open_table(app, f"idle-{rng.randrange(1 << 30)}")
    app.start_hand(table_id)


# -- the command --------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench ledger`."""
    parser = sub.add_parser(
        "ledger", help="VerifyHand and evidence per call as the ledger grows; idle tables",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _arguments(parser)
    parser.set_defaults(handler=run)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", type=positive, nargs="+", default=list(DEFAULT_SIZES),
                        metavar="N", help="ledger sizes, in finished hands (default"
                        f" {' '.join(map(str, DEFAULT_SIZES))})")
    parser.add_argument("--repeat", type=positive, default=DEFAULT_REPEAT, metavar="N",
                        help=f"calls to time at each size (default {DEFAULT_REPEAT})")
    parser.add_argument("--idle-tables", type=int, default=0, metavar="N",
                        help="also measure memory over N idle tables (default 0: not)")
    parser.add_argument("--server-idle-tables", type=int, default=0, metavar="N",
                        help="also measure a server's VmRSS over N idle tables (default 0)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    """Run `scripts/bench ledger` and print a table (or JSON)."""
    sizes = per_call(args.sizes, args.repeat)
    memory = idle_memory(args.idle_tables) if args.idle_tables > 0 else None
    served = server_idle_memory(args.server_idle_tables) if args.server_idle_tables > 0 \
        else None
    if args.json:
        print(json.dumps({"sizes": [asdict(s) for s in sizes],
                          "memory": asdict(memory) if memory else None,
                          "server_memory": asdict(served) if served else None}))
        return 0
    rows = [("ledger size", "VerifyHand wall / CPU ms, feed rows",
             "evidence wall / CPU ms, feed rows", "first VerifyHand of a new process")]
    for s in sizes:
        rows.append((f"{s.size:,}", _call(s.verify_hand), _call(s.evidence),
                     _call(s.first_verify_hand)))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))
    if memory is not None:
        print(f"\nidle tables: {memory.tables:,} in {memory.seconds:.0f} s; traced growth"
              f" {memory.traced_kib / KIB:.1f} MiB, {memory.per_table_kib:.1f} KiB per table")
        for site, kib, blocks in memory.sites:
            print(f"  {site:<40} {kib / KIB:8.2f} MiB  {blocks:+,} blocks")
    if served is not None:
        print(f"\nserver VmRSS over {served.tables:,} idle tables ({served.seconds:.0f} s):"
              f" {served.rss_before_kib / KIB:.1f} -> {served.rss_after_kib / KIB:.1f} MiB,"
              f" {served.per_table_kib:.1f} KiB per table; at "
              + ", ".join(f"{n:,}: {kib / KIB:.1f} MiB" for n, kib in served.checkpoints))
    return 0


def _call(call: Call) -> str:
    return f"{call.wall_ms:.2f} / {call.cpu_ms:.2f}, {call.feed_rows:.0f}"


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m bench.ledger ...`: the same as `bench ledger`, runnable from a checkout
    whose lab does not list it (to measure that checkout's code)."""
    parser = argparse.ArgumentParser(prog="bench.ledger", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    _arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["AtSize", "Call", "FeedReads", "IdleMemory", "add_parser", "idle_memory", "main",
           "per_call", "run"]
