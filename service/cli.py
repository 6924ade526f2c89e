"""The `fiftyk` command line."""

from __future__ import annotations

import argparse
import sys
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
SERVER_EXTRA = f"{DISTRIBUTION}[server]"
# Top-level modules that only the `server` extra installs (a base install is the client side).
SERVER_EXTRA_MODULES = frozenset({
    "eventsourcing", "psycopg", "psycopg_pool", "prometheus_client", "grpc_health",
    "grpc_reflection",
})
EXIT_MISSING_EXTRA = 2

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
    try:
        return handler(args)
    except ModuleNotFoundError as error:
        missing = (error.name or "").partition(".")[0]
        if missing not in SERVER_EXTRA_MODULES:
            raise
        print(f"fiftyk {args.command}: needs the server extra ({missing} is not installed):"
              f" pip install '{SERVER_EXTRA}'", file=sys.stderr)
        return EXIT_MISSING_EXTRA


if __name__ == "__main__":
    raise SystemExit(main())
