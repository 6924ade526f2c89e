"""`fiftyk serve`: run the referee (embedded SQLite by default, PostgreSQL by URL)."""

from __future__ import annotations

import argparse
import asyncio
import sys

from fiftyk_referee.service.ops.config import Config, ConfigError, add_arguments

# The server extra's packages are imported when the command runs (see `cli.main`).
NEEDS_SERVER_EXTRA = True


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `serve`."""
    parser = sub.add_parser(
        "serve", help="run the referee gRPC server",
        description="Run the referee. With no --database-url it stores events in SQLite in the"
        " data directory. The first line of output names the gRPC and metrics ports.",
    )
    add_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Load the configuration and serve until interrupted."""
    # Imported here so that `fiftyk --help` and the client commands work without the server
    # extra; `cli.main` turns a missing server package into a one-line install hint.
    from fiftyk_referee.service.core.store import DatabaseUnreachable
    from fiftyk_referee.service.ops.supervisor import supervise
    from fiftyk_referee.service.ops.tls import TlsError
    from fiftyk_referee.service.server import ListenError, serve

    try:
        config = Config.load(args=args)
    except ConfigError as error:
        print(f"fiftyk serve: {error}", file=sys.stderr)
        return 2
    if config.processes > 1:
        return supervise(config)
    try:
        asyncio.run(serve(config))
    except (DatabaseUnreachable, ListenError, TlsError) as error:
        print(f"fiftyk serve: {error}", file=sys.stderr)
        return 1
    return 0
