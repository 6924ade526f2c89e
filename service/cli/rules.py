"""`fiftyk rules classify|beats|ask`: ask the rules engine about cards, for integrators.

`classify` and `beats` (五十K) print one JSON object on stdout and exit 0 for a ruling, also
a negative one (cards that form no combination, a play that does not beat). Input they
cannot rule on exits 2, like an unusable command line: the cards are still answered with
`{"error", "message"}` on stdout (UNKNOWN_CARD: a word that is no card; CARD_NOT_IN_DECK:
more of a card than the preset's deck has), and the message goes to stderr too. An unknown
preset or option, or a bad option value, exits 2 with the message on stderr.

`ask` is the rules oracle of docs/oracle.md (`service/cli/oracle.py`): JSON questions of either game
on standard input (or in a file named on the command line), one answer line each on standard
output; exit 0 unless the questions cannot be read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any, BinaryIO

from fiftyk_referee.domain.cards import Card, make_deck, parse_cards
from fiftyk_referee.domain.errors import InvalidRuleset, Reason, RuleError
from fiftyk_referee.domain.fiftyk.combinations import Combination, beats, classify
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.domain.oracle import cards_beyond_deck
from fiftyk_referee.service.cli import oracle

EXIT_OK, EXIT_USAGE = 0, 2
# Refusals of the cards as given, not rulings about them: the caller's input is wrong.
INPUT_ERRORS = frozenset({Reason.UNKNOWN_CARD, Reason.CARD_NOT_IN_DECK})


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `rules` with its `classify` and `beats` commands."""
    parser = sub.add_parser(
        "rules", help="ask the rules engine: classify, compare, or the JSON oracle (ask)",
        description="Ask the rules engine. classify and beats print one JSON object and exit"
        " 0 for a ruling, also a negative one; exit 2 for cards they cannot rule on (a word"
        " that is no card, more of a card than the deck has) and for an unusable command"
        " line. ask reads JSON questions line by line (docs/oracle.md) from standard input"
        " or a file.",
    )
    commands = parser.add_subparsers(dest="rules_command", metavar="COMMAND", required=True)

    classify_parser = commands.add_parser(
        "classify", help="the combination some cards form",
        description='Print {"type", "cards", "points"}, or {"error", "message"}: exit 0 when'
        " the cards form no combination, 2 for an unknown card or one the deck does not hold"
        " that often.",
    )
    _add_ruleset_arguments(classify_parser)
    classify_parser.add_argument("cards", nargs="+", metavar="CARD",
                                 help="cards in the notation of docs/rules.md#cards, e.g. 10H")
    classify_parser.set_defaults(handler=run_classify)

    beats_parser = commands.add_parser(
        "beats", help="whether a play beats the trick's top play",
        description='Print {"beats", "top", "play"}, or {"error", "message"}: exit 0 when a'
        " side forms no combination, 2 for an unknown card or one the deck does not hold that"
        " often.",
    )
    _add_ruleset_arguments(beats_parser)
    beats_parser.add_argument("--top", nargs="+", required=True, metavar="CARD",
                              help="the trick's current top play")
    beats_parser.add_argument("--play", nargs="+", required=True, metavar="CARD",
                              help="the play to judge")
    beats_parser.set_defaults(handler=run_beats)

    ask_parser = commands.add_parser(
        "ask", help="the rules oracle: JSON questions of either game on standard input (or"
                    " in FILE), answers on stdout",
        description="Read one JSON question per line from standard input, or from FILE when"
        " one is named (docs/oracle.md, e.g."
        ' {"game": "shengji", "kind": "classify", "preset": "tractor", "options": {},'
        ' "input": {"level": "10", "trump": "H", "cards": ["KS", "KS", "QS", "QS"]}})'
        " and write one JSON answer per line, in order; a question it cannot answer gets"
        ' {"error", "message"}. Exits 0 unless the questions cannot be read (exit 1).'
        " Examples: fiftyk rules ask < questions.jsonl; fiftyk rules ask questions.jsonl.",
    )
    ask_parser.add_argument("file", nargs="?", default="-", metavar="FILE",
                            help="a file of questions, one per line (default -: standard input)")
    ask_parser.set_defaults(handler=run_ask)


def _add_ruleset_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", required=True, metavar="P",
                        help=f"ruleset preset: {', '.join(PRESETS)}")
    parser.add_argument(
        "--option", "-o", action="append", default=[], metavar="NAME=VALUE",
        help="override one option, typed by the schema (wind=partner, min_straight=3);"
        " repeat for several",
    )


def run_classify(args: argparse.Namespace) -> int:
    """Run `fiftyk rules classify`."""
    ruleset = _ruleset(args)
    if ruleset is None:
        return EXIT_USAGE
    try:
        result = describe(_classify_tokens(args.cards, ruleset), ruleset)
    except RuleError as error:
        return _refused("classify", error)
    _print(result)
    return EXIT_OK


def run_beats(args: argparse.Namespace) -> int:
    """Run `fiftyk rules beats`."""
    ruleset = _ruleset(args)
    if ruleset is None:
        return EXIT_USAGE
    try:
        top = _side("top", args.top, ruleset)
        play = _side("play", args.play, ruleset)
        result: dict[str, Any] = {
            "beats": beats(play, top, ruleset),
            "top": describe(top, ruleset),
            "play": describe(play, ruleset),
        }
    except RuleError as error:
        return _refused("beats", error)
    _print(result)
    return EXIT_OK


def _refused(command: str, error: RuleError) -> int:
    """Print the refusal as JSON; exit 2 when the input was wrong, 0 for a ruling."""
    _print(_error(error))
    if error.reason in INPUT_ERRORS:
        print(f"fiftyk rules {command}: {error.reason.value}: {error.message}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


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


def describe(combination: Combination, ruleset: Ruleset) -> dict[str, Any]:
    """The classification as JSON: type code, canonical cards and points (joker_points)."""
    return {
        "type": combination.type,
        "cards": combination.card_strings(),
        "points": combination.points(joker_points=ruleset.joker_points),
    }


def check_in_deck(cards: Sequence[Card], ruleset: Ruleset) -> None:
    """Refuse (CARD_NOT_IN_DECK) cards the ruleset's deck does not hold that many times."""
    cards_beyond_deck(cards, Counter(make_deck(ruleset.packs, jokers=ruleset.jokers)),
                             f"{ruleset.deck_size}-card deck of preset {ruleset.preset!r}")


def _classify_tokens(tokens: Sequence[str], ruleset: Ruleset) -> Combination:
    cards = parse_cards(" ".join(tokens))
    check_in_deck(cards, ruleset)
    return classify(cards, ruleset)


def _side(name: str, tokens: Sequence[str], ruleset: Ruleset) -> Combination:
    """Classify one side of `beats`, naming the side in any error."""
    try:
        return _classify_tokens(tokens, ruleset)
    except RuleError as error:
        raise RuleError(error.reason, f"{name}: {error.message}") from error


def _ruleset(args: argparse.Namespace) -> Ruleset | None:
    try:
        return Ruleset.from_cli(args.preset, args.option)
    except InvalidRuleset as error:
        print(f"fiftyk rules: error: {error.message}", file=sys.stderr)
        return None


def _error(error: RuleError) -> dict[str, Any]:
    return {"error": error.reason.value, "message": error.message}


def _print(result: dict[str, Any]) -> None:
    print(json.dumps(result, ensure_ascii=False))
