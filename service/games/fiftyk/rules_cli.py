"""`fiftyk rules classify|beats`: 五十K's rules engine on the command line, for integrators.

They print one JSON object on stdout and exit 0 for a ruling, also a negative one (cards
that form no combination, a play that does not beat). Input they cannot rule on exits 2,
like an unusable command line: the cards are still answered with `{"error", "message"}` on
stdout (UNKNOWN_CARD: a word that is no card; CARD_NOT_IN_DECK: more of a card than the
preset's deck has), and the message goes to stderr too. An unknown preset or option, or a
bad option value, exits 2 with the message on stderr. The `rules` command adds them through
五十K's bundle (`GameBundle.rules_commands`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from fiftyk_referee.domain.cards import Card, make_deck, parse_cards
from fiftyk_referee.domain.errors import InvalidRuleset, Reason, RuleError
from fiftyk_referee.domain.fiftyk.combinations import Combination, beats, classify
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.domain.oracle import cards_beyond_deck

EXIT_OK, EXIT_USAGE = 0, 2
# Refusals of the cards as given, not rulings about them: the caller's input is wrong.
INPUT_ERRORS = frozenset({Reason.UNKNOWN_CARD, Reason.CARD_NOT_IN_DECK})


def add_rules_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `classify` and `beats` to `fiftyk rules`."""
    classify_parser = commands.add_parser(
        "classify", help="五十K: the combination some cards form",
        description='Print {"type", "cards", "points"}, or {"error", "message"}: exit 0 when'
        " the cards form no combination, 2 for an unknown card or one the deck does not hold"
        " that often.",
    )
    _add_ruleset_arguments(classify_parser)
    classify_parser.add_argument("cards", nargs="+", metavar="CARD",
                                 help="cards in the notation of docs/rules.md#cards, e.g. 10H")
    classify_parser.set_defaults(handler=run_classify)

    beats_parser = commands.add_parser(
        "beats", help="五十K: whether a play beats the trick's top play",
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
