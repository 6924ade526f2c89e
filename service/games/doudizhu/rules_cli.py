"""`fiftyk rules doudizhu classify|beats|legal`: 斗地主's rules engine on the command line.

Each asks the rules oracle (docs/oracle.md, the same answers as `fiftyk rules ask`) one
question built from the command line, and prints its answer as one JSON object on stdout:
exit 0 for a ruling, also a negative one (cards that form no combination, a play that does
not beat). Cards it cannot rule on (UNKNOWN_CARD: a word that is no card; CARD_NOT_IN_DECK:
more of a card than the pack has) are answered `{"error", "message"}` and exit 2, the message
on stderr too; so do an unknown preset or option and a bad option value (stderr only). The
`rules` command adds them through 斗地主's bundle (`GameBundle.rules_commands`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from fiftyk_referee.domain.doudizhu.rulesets import GAME_NAME, PRESETS, DoudizhuRules
from fiftyk_referee.domain.errors import InvalidRuleset, Reason
from fiftyk_referee.service.cli import oracle

EXIT_OK, EXIT_USAGE = 0, 2
# Refusals of the cards as given, not rulings about them: the caller's input is wrong.
INPUT_ERRORS = frozenset({Reason.UNKNOWN_CARD.value, Reason.CARD_NOT_IN_DECK.value})
CARD_HELP = "cards in the notation of docs/doudizhu.md#cards, e.g. 10H SJ"


def add_rules_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `doudizhu` (with `classify`, `beats` and `legal`) to `fiftyk rules`."""
    game = commands.add_parser(
        GAME_NAME, help="斗地主: classify cards, judge a play, list legal plays",
        description="斗地主's rules engine: the rules oracle's questions (docs/oracle.md) from"
        " the command line. Each prints one JSON answer; exit 0 for a ruling, 2 for cards"
        " or a ruleset it cannot rule on.")
    questions = game.add_subparsers(dest="question", metavar="QUESTION", required=True)
    classify = questions.add_parser(
        "classify", help="the combination some cards form",
        description='Print {"type", "rank", "length", "cards"}, or {"type":'
        ' "INVALID_COMBINATION"} when the cards form none.')
    _ruleset_arguments(classify)
    classify.add_argument("cards", nargs="+", metavar="CARD", help=CARD_HELP)
    classify.set_defaults(handler=lambda args: _ask(args, "classify", {"cards": args.cards}))
    beats = questions.add_parser(
        "beats", help="whether a play beats the play on the table",
        description='Print {"beats": true|false} (with "reason" when the play forms no'
        " combination).")
    _ruleset_arguments(beats)
    beats.add_argument("--top", nargs="+", required=True, metavar="CARD",
                       help="the play on the table")
    beats.add_argument("--play", nargs="+", required=True, metavar="CARD",
                       help="the play to judge")
    beats.set_defaults(handler=lambda args: _ask(args, "beats",
                                                 {"top": args.top, "play": args.play}))
    legal = questions.add_parser(
        "legal", help="every distinct legal play of a hand, leading or following",
        description='Print {"count", "plays"}: the hand\'s leads, or with --top its plays'
        " that beat the play on the table.")
    _ruleset_arguments(legal)
    legal.add_argument("hand", nargs="+", metavar="CARD", help=CARD_HELP)
    legal.add_argument("--top", nargs="+", default=[], metavar="CARD",
                       help="the play on the table (none: the hand leads)")
    legal.set_defaults(handler=lambda args: _ask(args, "legal_plays",
                                                 {"hand": args.hand, "top": args.top}))


def _ruleset_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", default="classic", metavar="P",
                        help=f"ruleset preset: {', '.join(PRESETS)} (default classic)")
    parser.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE",
                        help="override one option, typed by the schema (kickers_rocket=true);"
                        " repeat for several")


def _ask(args: argparse.Namespace, kind: str, given: dict[str, Any]) -> int:
    """Ask the oracle one question; print its answer; the exit code."""
    command = f"fiftyk rules {GAME_NAME} {args.question}"
    try:
        rules = DoudizhuRules.from_cli(args.preset, args.option)
    except InvalidRuleset as error:
        print(f"{command}: error: {error.message}", file=sys.stderr)
        return EXIT_USAGE
    answer = oracle.answer({"game": GAME_NAME, "kind": kind, "preset": rules.preset,
                            "options": rules.to_json()["options"], "input": given})
    print(json.dumps(answer, ensure_ascii=False))
    if isinstance(answer, dict) and answer.get("error") in INPUT_ERRORS:
        print(f"{command}: {answer['error']}: {answer['message']}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


__all__ = ["add_rules_commands"]
