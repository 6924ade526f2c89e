"""`fiftyk rules`: ask the rules engine, for integrators.

`ask` is the rules oracle of docs/oracle.md (`service/cli/oracle.py`): JSON questions of any
installed game on standard input (or in a file named on the command line), one answer line
each on standard output; exit 0 unless the questions cannot be read. An installed game may
add commands of its own (`GameBundle.rules_commands`, e.g. `classify` and `beats`).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import BinaryIO

from fiftyk_referee.service.cli import oracle
from fiftyk_referee.service.core.bundles import installed


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `rules`: `ask`, and the installed games' own commands."""
    parser = sub.add_parser(
        "rules", help="ask the rules engine: the JSON oracle (ask), and the games' own"
                      " commands",
        description="Ask the rules engine. ask reads JSON questions line by line"
        " (docs/oracle.md) from standard input or a file; the installed games add commands"
        " of their own (each with its --help).",
    )
    commands = parser.add_subparsers(dest="rules_command", metavar="COMMAND", required=True)

    ask_parser = commands.add_parser(
        "ask", help="the rules oracle: JSON questions of any installed game on standard input"
                    " (or in FILE), answers on stdout",
        description="Read one JSON question per line from standard input, or from FILE when"
        " one is named (docs/oracle.md: {\"game\", \"kind\", \"preset\", \"options\","
        " \"input\"}) and write one JSON answer per line, in order; a question it cannot"
        ' answer gets {"error", "message"}. Exits 0 unless the questions cannot be read (exit 1).'
        " Examples: fiftyk rules ask < questions.jsonl; fiftyk rules ask questions.jsonl.",
    )
    ask_parser.add_argument("file", nargs="?", default="-", metavar="FILE",
                            help="a file of questions, one per line (default -: standard input)")
    ask_parser.set_defaults(handler=run_ask)
    for bundle in installed().values():
        if bundle.rules_commands is not None:
            bundle.rules_commands()(commands)


def run_ask(args: argparse.Namespace) -> int:
    """Run `fiftyk rules ask` on standard input (or the named file) and standard output."""
    if args.file != "-":
        try:
            with open(args.file, "rb") as questions:
                return _ask(questions, args.file)
        except OSError as error:
            print(f"fiftyk rules ask: cannot read {args.file}: {error.strerror or error}",
                  file=sys.stderr)
            return oracle.EXIT_UNREADABLE
    if sys.stdin is None:  # started with standard input closed
        print("fiftyk rules ask: cannot read standard input: it is closed", file=sys.stderr)
        return oracle.EXIT_UNREADABLE
    return _ask(sys.stdin.buffer, "standard input")


def _ask(questions: BinaryIO, source: str) -> int:
    try:
        return oracle.run(questions, sys.stdout.buffer)
    except oracle.UnreadableInput as error:
        print(f"fiftyk rules ask: cannot read {source}: {error}", file=sys.stderr)
        return oracle.EXIT_UNREADABLE
    except BrokenPipeError:
        # The reader went away: nobody is left to answer. Point stdout at /dev/null so the
        # interpreter's final flush does not fail a second time.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        print("fiftyk rules ask: standard output was closed", file=sys.stderr)
        return oracle.EXIT_UNREADABLE
