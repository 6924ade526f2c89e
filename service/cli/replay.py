"""`fiftyk replay HAND_ID`: a stored hand trick by trick, or its state at one event version.

Reads the hand's audit history (GetHandHistory, GetHandAt) with the audit key, so it shows
every seat's cards: the dispute tool. Event versions are printed with every trick, so a
disputed moment can be looked at with `--version N`: versions count the hand's events from 1
(its deal), so 0 or less is refused as a usage error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import grpc

from fiftyk_referee.service.cli.games import game_of
from fiftyk_referee.service.cli.hand_text import state_lines
from fiftyk_referee.service.cli.server_address import add_server_argument, describe_rpc_error
from fiftyk_referee.service.cli.terminal import add_text_argument, for_people_wanted, people_output
from fiftyk_referee.service.errors import ServiceReason
from fiftyk_referee.service.grpc.client import RefereeClient, add_tls_arguments, tls_from_args
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.ops import config_keys as keys
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY
from fiftyk_referee.service.web.document import hand_document
from fiftyk_referee.service.web.page import offline_html

CALL_TIMEOUT_SECONDS = 30.0
FIRST_VERSION = 1
EXIT_REFUSED = 1
HINTED_HANDS = 5  # a table's hands a hint lists, the latest first


def event_version(text: str) -> int:
    """`--version`: an event version, counted from 1 (the hand's deal)."""
    try:
        version = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if version < FIRST_VERSION:
        raise argparse.ArgumentTypeError(
            f"{version}: versions start at {FIRST_VERSION}, the hand's first event (its deal);"
            " the state after event N is --version N")
    return version


def account(audit: RefereeClient, hand_id: str) -> list[str]:
    """The whole hand as its game tells it: the deal, tricks with event versions, result."""
    events = audit.all_hand_events(hand_id)
    return game_of(events).account(audit, hand_id, events)


def state_at(audit: RefereeClient, hand_id: str, version: int) -> list[str]:
    """The hand as it stood right after event `version`."""
    view = audit.hand_at(hand_id, version)
    last = audit.hand_history(hand_id, after_version=version - 1, limit=1).events
    what = f" (after {last[0].name})" if last else ""
    lines = [f"hand {view.hand_id} (table {view.table_id}, hand {view.hand_number})"
             f" at version {version}{what}:"]
    dealt = audit.hand_history(hand_id, after_version=0, limit=1).events
    lines.extend("  " + line for line in game_of(dealt).state_lines(view, dealt[0]))
    lines.extend("  " + line for line in state_lines(view))
    return lines


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `replay`."""
    parser = sub.add_parser(
        "replay", help="a stored hand trick by trick, or its state at an event version",
        description="Print a stored hand from its audit history: the deal, every trick"
        " (with the event versions it spans), who went out and the result; with --version N,"
        " the whole state of the hand right after event N. Needs the audit key.",
    )
    parser.add_argument("hand_id", metavar="HAND_ID", help="the hand's id")
    parser.add_argument("--version", type=event_version, metavar="N",
                        help="show the state right after event N (versions start at 1, the"
                             " deal; the account shows each trick's versions)")
    add_text_argument(parser)
    parser.add_argument("--html", metavar="FILE",
                        help="write the hand as one offline HTML page (the web table's replay:"
                             " step, jump, perspectives, the fairness check) instead")
    add_server_argument(parser)
    parser.add_argument("--audit-key",
                        help=f"audit credential (default ${keys.AUDIT_KEY}, else the"
                             " development key a loopback server accepts)")
    add_tls_arguments(parser)
    parser.set_defaults(handler=run)


def _write_html(client: RefereeClient, hand_id: str, path: str) -> int:
    """Write the offline replay page; 0, or 1 when the file cannot be written."""
    html = offline_html(hand_document(client, hand_id))
    try:
        Path(path).write_text(html, encoding="utf-8")
    except OSError as error:
        print(f"fiftyk replay: cannot write {path}: {error.strerror or error}", file=sys.stderr)
        return 1
    print(f"wrote {path} ({len(html.encode('utf-8'))} bytes)")
    return 0


def table_hint(client: RefereeClient, table_id: str) -> str | None:
    """When `table_id` (given as a hand id) names a table the caller may see, a hint naming
    its hands; None otherwise (the server answers what this credential may read)."""
    try:
        table = client.get_table(table_id)
    except grpc.RpcError:
        return None
    hands = list(table.hand_ids)
    if not hands:
        return f"{table_id} is a table, not a hand; it has no hands yet"
    if len(hands) == 1:
        return f"{table_id} is a table, not a hand; its hand: {hands[0]}"
    shown = ", ".join(reversed(hands[-HINTED_HANDS:]))
    more = f", {len(hands)} in all" if len(hands) > HINTED_HANDS else ""
    return f"{table_id} is a table, not a hand; its hands (latest first{more}): {shown}"


def run(args: argparse.Namespace) -> int:
    """Print the account; 0 on success, 1 when the server refused."""
    key = args.audit_key or os.environ.get(keys.AUDIT_KEY) or DEV_AUDIT_KEY
    client = RefereeClient(args.server, audit_key=key, timeout=CALL_TIMEOUT_SECONDS,
                           tls=tls_from_args(args))
    try:
        if args.html is not None:
            return _write_html(client, args.hand_id, args.html)
        if args.version is None:
            lines = account(client, args.hand_id)
        else:
            lines = state_at(client, args.hand_id, args.version)
    except grpc.RpcError as error:
        print(f"fiftyk replay: {describe_rpc_error(args.server, error)}", file=sys.stderr)
        if error_reason(error).reason == ServiceReason.HAND_NOT_FOUND:
            hint = table_hint(client, args.hand_id)
            if hint is not None:
                print(f"fiftyk replay: {hint}", file=sys.stderr)
        return EXIT_REFUSED
    except ValueError as error:  # a hand of a game this command line cannot tell
        print(f"fiftyk replay: {error}", file=sys.stderr)
        return 1
    finally:
        client.close()
    with people_output(for_people_wanted(args.text)):
        print("\n".join(lines))
    return 0


__all__ = ["account", "add_parser", "run", "state_at"]
