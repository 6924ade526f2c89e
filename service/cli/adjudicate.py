"""`fiftyk adjudicate FILE`: rule on a transcript and print the result JSON (docs/transcript.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.service.cli.terminal import outline, people_output
from fiftyk_referee.service.trust.verifier import EVIDENCE_FORMAT

EXIT_UNREADABLE = 1


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `adjudicate`."""
    parser = sub.add_parser(
        "adjudicate", help="replay a transcript and print the ruling (fiftyk-result/1)",
        description="Replay a fiftyk-transcript/1 file through the referee and print the"
        " result JSON. Exit 0 whenever the file is a readable transcript. A hand's signed"
        f" evidence ({EVIDENCE_FORMAT}, from `fiftyk export`) is checked by `fiftyk verify`,"
        " which also re-rules the transcript it carries.",
    )
    parser.add_argument("file", help="transcript JSON file, or - for standard input")
    parser.add_argument("--pretty", action="store_true",
                        help="print the ruling for people (an indented outline with suit"
                             " symbols) instead of one line of JSON")
    parser.set_defaults(handler=run)


def _read(path: str) -> Any:
    if path == "-":
        return json.load(sys.stdin)
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def run(args: argparse.Namespace) -> int:
    """Print the ruling; a message on stderr and a non-zero exit for an unreadable file."""
    # Imported here: the hands it replays are event-sourced aggregates (the server extra).
    from fiftyk_referee.domain.games import adjudicate

    try:
        data = _read(args.file)
    except OSError as error:
        print(f"fiftyk adjudicate: cannot read {args.file}: {error.strerror}", file=sys.stderr)
        return EXIT_UNREADABLE
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        print(f"fiftyk adjudicate: {args.file} is not JSON: {error}", file=sys.stderr)
        return EXIT_UNREADABLE
    except RecursionError:
        print(f"fiftyk adjudicate: {args.file} is nested too deeply to be a transcript",
              file=sys.stderr)
        return EXIT_UNREADABLE
    if isinstance(data, dict) and data.get("format") == EVIDENCE_FORMAT:
        print(f"fiftyk adjudicate: {args.file} is a hand's signed evidence ({EVIDENCE_FORMAT}),"
              f" not a transcript: check it with `fiftyk verify {args.file}`, which re-rules"
              " the transcript it carries and checks the signature, chain and deal",
              file=sys.stderr)
        return EXIT_UNREADABLE
    try:
        result = adjudicate(data)
    except RuleError as error:  # only an unreadable transcript raises; rulings return
        print(f"fiftyk adjudicate: not a valid transcript: {error.message}", file=sys.stderr)
        return EXIT_UNREADABLE
    if args.pretty:
        with people_output():
            print("\n".join(outline(result)))
        return 0
    print(json.dumps(result, ensure_ascii=False))
    return 0
