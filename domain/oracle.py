"""The rules oracle's questions, as every game reads them (docs/oracle.md).

A question names a game, a kind of question, a preset and options, and the kind's `input`.
Each game answers its own kinds (`Game.answer`, its `oracle` module); this module holds what
they share: reading an input with typed refusals, and the refusal of a malformed question.
The line-by-line I/O of `fiftyk rules ask` is the service's (`service/cli/oracle.py`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from fiftyk_referee.domain.cards import Card, parse_card, sort_key
from fiftyk_referee.domain.errors import Reason, RuleError, shown

JSON = Any  # a value json.dumps can write
INVALID_REQUEST = "INVALID_REQUEST"  # the reason code of a malformed question
RulesT = TypeVar("RulesT")


class BadQuestion(Exception):
    """A question the oracle cannot answer, with its reason code and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def malformed(message: str) -> BadQuestion:
    """The refusal of a malformed question."""
    return BadQuestion(INVALID_REQUEST, message)


def error_answer(code: str, message: str) -> dict[str, str]:
    """The answer to a question the engine cannot answer."""
    return {"error": code, "message": message}


def integer(value: Any, where: str, *, minimum: int | None = None,
            step: int | None = None) -> int:
    """An integer field (at least `minimum`, a multiple of `step`)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise malformed(f"{where} must be an integer")
    if minimum is not None and value < minimum:
        raise malformed(f"{where} must be at least {minimum}")
    if step is not None and value % step:
        raise malformed(f"{where} must be a multiple of {step}")
    return value


def array(value: Any, where: str, length: int | None = None) -> list[Any]:
    """A JSON array field (of exactly `length` entries)."""
    if not isinstance(value, list):
        raise malformed(f"{where} must be a JSON array")
    if length is not None and len(value) != length:
        raise malformed(f"{where} must have exactly {length} entries")
    return value


def card_list(value: Any, where: str) -> list[Card]:
    """A card list in the notation of docs/rules.md#cards (`UNKNOWN_CARD` names the bad token)."""
    cards = []
    for token in array(value, where):
        if not isinstance(token, str):
            raise malformed(f"{where} must be a list of card strings, not {shown(token)}")
        try:
            cards.append(parse_card(token))
        except RuleError as error:
            raise RuleError(error.reason, f"{where}: {error.message}") from error
    return cards


def cards_beyond_deck(cards: Iterable[Card], deck: Counter[Card], deck_name: str) -> None:
    """Refuse (`CARD_NOT_IN_DECK`) cards the deck does not hold that many times."""
    extra = Counter(cards) - deck
    if not extra:
        return
    problems = ", ".join(
        f"{card} ×{count + deck[card]} (the deck has {deck[card]})" if deck[card]
        else f"{card} (the deck has none)"
        for card, count in sorted(extra.items(), key=lambda item: sort_key(item[0]))
    )
    raise RuleError(Reason.CARD_NOT_IN_DECK, f"not in the {deck_name}: {problems}")


class Input:
    """The `input` object of one question: exactly the kind's fields, read with typed refusals."""

    def __init__(self, data: Any, fields: Sequence[str]) -> None:
        if not isinstance(data, Mapping):
            raise malformed("input must be a JSON object")
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise malformed(f"unknown input field(s) {', '.join(unknown)};"
                             f" this kind reads {', '.join(fields)}")
        missing = [name for name in fields if name not in data]
        if missing:
            raise malformed(f"missing input field(s) {', '.join(missing)}")
        self.data = data

    def __getitem__(self, name: str) -> Any:
        return self.data[name]

    def cards(self, name: str) -> list[Card]:
        """A card list field."""
        return card_list(self.data[name], f"input.{name}")


@dataclass(frozen=True)
class Kind(Generic[RulesT]):
    """One kind of question: the input fields it reads and the function that answers it."""

    fields: tuple[str, ...]
    answer: Callable[[RulesT, Input], JSON]


def ask(kinds: Mapping[str, Kind[RulesT]], read_rules: Callable[[Any], RulesT],
        game: str, question: Mapping[str, Any]) -> JSON:
    """Answer a question of one game with its kinds of question and its rules reader."""
    kind_name = question.get("kind")
    if not isinstance(kind_name, str) or kind_name not in kinds:
        raise malformed(f"unknown kind {shown(kind_name)} for game {shown(game)};"
                         f" allowed: {', '.join(kinds)}")
    kind = kinds[kind_name]
    if "preset" not in question:
        raise malformed("missing field preset")
    options = question.get("options")
    if options is not None and not isinstance(options, Mapping):
        raise BadQuestion(Reason.INVALID_RULESET.value,
                          "options must be an object of name: value (or absent)")
    rules = read_rules({"preset": question["preset"], "options": options})
    if "input" not in question:
        raise malformed("missing field input")
    return kind.answer(rules, Input(question["input"], kind.fields))


__all__ = ["INVALID_REQUEST", "JSON", "BadQuestion", "Input", "Kind", "array", "ask",
           "card_list", "cards_beyond_deck", "error_answer", "integer", "malformed"]
