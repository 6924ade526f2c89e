"""The `fiftyk` command line."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "fiftyk-referee"
SERVER_EXTRA = f"{DISTRIBUTION}[server]"
# Top-level modules that only the `server` extra installs (a base install is the client side).
SERVER_EXTRA_MODULES = frozenset({
    "eventsourcing", "psycopg", "psycopg_pool", "prometheus_client", "grpc_health",
    "grpc_reflection",
})
EXIT_MISSING_EXTRA = 2
# The reader of standard output went away (`fiftyk replay ... | head -1`): stop quietly with
# the status a shell reports for a command ended by SIGPIPE (128 + 13), as `cat` or `grep` do.
EXIT_OUTPUT_CLOSED = 141

# Each module's `add_parser(sub)` adds one subcommand and sets `handler` (args -> exit code)
# on it. Extend by writing such a module and listing it here. They are imported when the
# parser is built; a module that needs the server extra says so (NEEDS_SERVER_EXTRA = True)
# and imports it only when run, so `fiftyk --help` and the client commands start fast. Without
# the extra such a command is left out, and the help names it.
SUBCOMMAND_MODULES = ("adjudicate", "health", "rules", "serve", "demo", "replay", "migrate",
                      "verify", "witness")
SubcommandRegistrar = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


def _missing_server_module(error: ModuleNotFoundError) -> str | None:
    missing = (error.name or "").partition(".")[0]
    return missing if missing in SERVER_EXTRA_MODULES else None


def _missing_server_extra() -> str | None:
    """The first package of the server extra this installation lacks (None: it has them)."""
    return next((name for name in sorted(SERVER_EXTRA_MODULES)
                 if importlib.util.find_spec(name) is None), None)


def _build() -> tuple[argparse.ArgumentParser, dict[str, str]]:
    """The parser, and the commands left out for a missing server package (-> that package)."""
    registrars: list[SubcommandRegistrar] = []
    left_out: dict[str, str] = {}
    for name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(f"fiftyk_referee.service.cli.{name}")
        except ModuleNotFoundError as error:
            missing = _missing_server_module(error)
            if missing is None:
                raise
            left_out[name] = missing
            continue
        missing_extra = _missing_server_extra() if getattr(
            module, "NEEDS_SERVER_EXTRA", False) else None
        if missing_extra is not None:
            left_out[name] = missing_extra
            continue
        registrars.append(module.add_parser)
    epilog = (f"Not installed: {', '.join(left_out)} (pip install '{SERVER_EXTRA}')"
              if left_out else None)
    parser = argparse.ArgumentParser(prog="fiftyk", description=_description(), epilog=epilog)
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {_distribution_version()}"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for register in registrars:
        register(sub)
    return parser, left_out


def _description() -> str:
    """What `fiftyk --help` says it is: a referee of every game the command line knows."""
    from fiftyk_referee.service.cli.games import cli_games
    from fiftyk_referee.service.cli.server_address import DEFAULT_SERVER, SERVER_ENVIRONMENT

    named = [f"{game.title} ({name})" for name, game in cli_games().items()]
    games = " and ".join([", ".join(named[:-1]), named[-1]] if len(named) > 1 else named)
    return (f"The referee service for card games: {games}. Run it, play and replay hands"
            " against it, ask its rules engine, check its signed evidence. The client"
            f" commands call the server named by --server, else ${SERVER_ENVIRONMENT}, else"
            f" {DEFAULT_SERVER}.")


def _distribution_version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every subcommand this installation can run."""
    return _build()[0]


def _needs_server_extra(command: str, missing: str) -> int:
    print(f"fiftyk {command}: needs the server extra ({missing} is not installed):"
          f" pip install '{SERVER_EXTRA}'", file=sys.stderr)
    return EXIT_MISSING_EXTRA


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments and run the chosen subcommand; return the process exit code.

    A reader that closes standard output early ends the command quietly (EXIT_OUTPUT_CLOSED),
    whatever the command was writing, instead of with a BrokenPipeError traceback.
    """
    try:
        try:
            return _main(argv)
        finally:  # what is still buffered goes out now, while a closed pipe can be caught
            if sys.stdout is not None:
                sys.stdout.flush()
    except BrokenPipeError:
        return _output_closed()


def _output_closed() -> int:
    """Point standard output at /dev/null, so the interpreter's last flush cannot fail too."""
    stdout = sys.__stdout__
    if stdout is not None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stdout.fileno())
        except (OSError, ValueError):  # no file descriptor under it
            pass
        finally:
            os.close(devnull)
    return EXIT_OUTPUT_CLOSED


def _main(argv: Sequence[str] | None) -> int:
    parser, left_out = _build()
    words = list(sys.argv[1:] if argv is None else argv)
    if words and words[0] in left_out:
        return _needs_server_extra(words[0], left_out[words[0]])
    args = parser.parse_args(words)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return handler(args)
    except ModuleNotFoundError as error:
        missing = _missing_server_module(error)
        if missing is None:
            raise
        return _needs_server_extra(args.command, missing)


if __name__ == "__main__":
    raise SystemExit(main())
