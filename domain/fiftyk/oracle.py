"""五十K's questions to the rules oracle (docs/oracle.md): `classify` and `beats`, answered
by the functions the referee enforces (`combinations`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from fiftyk_referee.domain.cards import Card, make_deck
from fiftyk_referee.domain.errors import InvalidCombination, Reason
from fiftyk_referee.domain.fiftyk import combinations as fiftyk_combinations
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.oracle import JSON, Input, Kind, ask, cards_beyond_deck

NAME = "fiftyk"


def _fiftyk_deck(rules: Ruleset, *card_lists: Sequence[Card]) -> None:
    deck = Counter(make_deck(rules.packs, jokers=rules.jokers))
    name = f"{rules.deck_size}-card deck of preset {rules.preset!r}"
    for cards in card_lists:
        cards_beyond_deck(cards, deck, name)
    if len(card_lists) > 1:  # the lists are distinct cards on the table together
        cards_beyond_deck((c for cards in card_lists for c in cards), deck, name)


def _fiftyk_classify(rules: Ruleset, given: Input) -> JSON:
    cards = given.cards("cards")
    _fiftyk_deck(rules, cards)
    try:
        combination = fiftyk_combinations.classify(cards, rules)
    except InvalidCombination:
        return {"type": Reason.INVALID_COMBINATION.value}
    return {"type": combination.type,
            "points": combination.points(joker_points=rules.joker_points)}


def _fiftyk_beats(rules: Ruleset, given: Input) -> JSON:
    top_cards, play_cards = given.cards("top"), given.cards("play")
    _fiftyk_deck(rules, top_cards, play_cards)
    try:
        top = fiftyk_combinations.classify(top_cards, rules)
    except InvalidCombination as error:
        raise InvalidCombination(f"input.top is not a standing play: {error.message}") from error
    try:
        play = fiftyk_combinations.classify(play_cards, rules)
    except InvalidCombination:
        return {"beats": False, "reason": Reason.INVALID_COMBINATION.value}
    return {"beats": fiftyk_combinations.beats(play, top, rules)}


FIFTYK_KINDS: dict[str, Kind[Ruleset]] = {
    "classify": Kind(("cards",), _fiftyk_classify),
    "beats": Kind(("top", "play"), _fiftyk_beats),
}


def answer(question: Mapping[str, Any]) -> JSON:
    """The answer to a 五十K question (a `BadQuestion` or `RuleError` when it has none)."""
    return ask(FIFTYK_KINDS, Ruleset.from_json, NAME, question)


__all__ = ["FIFTYK_KINDS", "answer"]
