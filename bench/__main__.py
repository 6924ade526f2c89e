"""`python -m bench BENCHMARK ...` (or `./scripts/bench`): run one benchmark of the lab."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from bench import (
    compare,
    doudizhu_check,
    doudizhu_speed,
    e2e,
    fairness,
    hand,
    ledger,
    rules,
    shengji,
    store,
    suite,
    transport,
    web,
    webhooks,
)

BenchRegistrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]
# Each entry adds one benchmark; extend by listing its `add_parser`.
BENCHMARKS: list[BenchRegistrar] = [rules.add_parser, store.add_parser, e2e.add_parser,
                                    hand.add_parser, suite.add_parser, shengji.add_parser,
                                    transport.add_parser, web.add_parser, fairness.add_parser,
                                    webhooks.add_parser, ledger.add_parser, compare.add_parser,
                                    doudizhu_check.add_parser, doudizhu_speed.add_parser]


def build_parser() -> argparse.ArgumentParser:
    """The lab's parser: one subcommand per benchmark of BENCHMARKS."""
    parser = argparse.ArgumentParser(
        prog="scripts/bench", description="fiftyk-referee benchmarks: medians over repeats,"
        " a readable table, optionally JSON.")
    benches = parser.add_subparsers(dest="bench", metavar="BENCHMARK", required=True)
    for register in BENCHMARKS:
        register(benches)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run the chosen benchmark; return the exit code."""
    args = build_parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
