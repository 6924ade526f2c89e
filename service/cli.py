"""The `fiftyk` command line."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version

from fiftyk_referee.service import (
    adjudicate_cli,
    demo_cli,
    health_cli,
    migrate_cli,
    replay_cli,
    rules_cli,
    serve_cli,
)

DISTRIBUTION = "fiftyk-referee"

# Each entry adds one subcommand to the parser and sets `handler` (args -> exit code) on it.
# Extend by writing `_add_<name>_parser(sub)` and listing it here.
SubcommandRegistrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]
SUBCOMMANDS: list[SubcommandRegistrar] = [adjudicate_cli.add_parser, health_cli.add_parser,
                                          rules_cli.add_parser,
                                          serve_cli.add_parser, demo_cli.add_parser,
                                          replay_cli.add_parser, migrate_cli.add_parser]


def _distribution_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every registered subcommand."""
    parser = argparse.ArgumentParser(prog="fiftyk", description="五十K referee service")
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {_distribution_version()}"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in SUBCOMMANDS:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run the chosen subcommand; return the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return handler(args)


if __name__ == "__main__":
    raise SystemExit(main())
