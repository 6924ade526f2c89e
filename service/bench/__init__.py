"""`fiftyk bench ...`: benchmarks you run and report (not timed tests)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from service.bench import e2e as e2e
from service.bench import hand as hand
from service.bench import rules as rules
from service.bench import store as store
from service.bench import suite as suite

BenchRegistrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]
# Each entry adds one benchmark under `fiftyk bench`; extend by listing its `add_parser`.
BENCHMARKS: list[BenchRegistrar] = [rules.add_parser, store.add_parser, e2e.add_parser,
                                    hand.add_parser, suite.add_parser]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench` with every benchmark of BENCHMARKS."""
    parser = sub.add_parser("bench", help="run a benchmark and print its medians",
                            description="Benchmarks: medians over repeats, a readable table,"
                            " optionally JSON.")
    benches = parser.add_subparsers(dest="bench", metavar="BENCHMARK", required=True)
    for register in BENCHMARKS:
        register(benches)
