"""The rules oracle (docs/oracle.md): single rule questions, answered as JSON, one line each.

`answer(question)` answers one parsed question, `answer_line(line)` one line of text, and
`run(stdin, stdout)` a whole stream (what `fiftyk rules ask` runs). Every answer comes from
the functions the referee itself enforces — `domain/fiftyk/combinations.py` for 五十K,
`domain/shengji/` (cards, combinations, play, scoring, hand) for Shengji; this module only
reads the question, checks it is well formed, calls them and writes their ruling.

A question the engine cannot answer gets `{"error": CODE, "message": TEXT}`:
`INVALID_RULESET` (unknown game, preset, option or option value), `UNKNOWN_CARD`,
`CARD_NOT_IN_DECK`, `INVALID_COMBINATION` (a lead, top play or card group the question
takes as standing spans two suit groups or forms nothing), and `INVALID_REQUEST` for the
rest (not JSON, an empty line, an unknown kind, a missing, unknown or mistyped field).
docs/oracle.md#decisions lists the decisions taken where the question format leaves a choice.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO, Generic, TypeVar

from fiftyk_referee.domain.cards import Card, make_deck, parse_card, sort_key
from fiftyk_referee.domain.errors import InvalidCombination, Reason, RuleError, shown
from fiftyk_referee.domain.fiftyk import combinations as fiftyk_combinations
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.shengji.cards import (
    LEVEL_RANK,
    LEVELS,
    POINTS,
    TRUMP,
    TrumpOrder,
    trump_order,
)
from fiftyk_referee.domain.shengji.hand import check_bury, judge_declarations
from fiftyk_referee.domain.shengji.play import Lead
from fiftyk_referee.domain.shengji.rulesets import PLAYERS, POINT_STEP, ShengjiRules
from fiftyk_referee.domain.shengji.scoring import (
    ATTACKERS,
    DEALER,
    HandFacts,
    kitty_bonus,
    level_outcome,
    room_points_moved,
    score_hand,
    team_of,
)
from fiftyk_referee.domain.shengji.tricks import TrickRules
from fiftyk_referee.service.errors import ServiceReason

JSON = Any  # a value json.dumps can write
EXIT_OK, EXIT_UNREADABLE = 0, 1
MAX_LINE_BYTES = 1 << 20  # a question longer than this is refused unread (bounds memory)
FIFTYK, SHENGJI = "fiftyk", "shengji"
QUESTION_FIELDS = ("game", "kind", "preset", "options", "input")
TRUMP_SUITS = ("S", "H", "C", "D")
SIDES = (ATTACKERS, DEALER)
LEGAL, ACCEPTED, TRUMP_GROUP = "legal", "accepted", "trump"
TEAMS = 2
INVALID_REQUEST = ServiceReason.INVALID_REQUEST.value

RulesT = TypeVar("RulesT", Ruleset, ShengjiRules)


class BadQuestion(Exception):
    """A question the oracle cannot answer, with its reason code and a message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _malformed(message: str) -> BadQuestion:
    return BadQuestion(INVALID_REQUEST, message)


def error_answer(code: str, message: str) -> dict[str, str]:
    """The answer to a question the engine cannot answer."""
    return {"error": code, "message": message}


# -- reading a question ------------------------------------------------------------------------


def _integer(value: Any, where: str, *, minimum: int | None = None,
             step: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _malformed(f"{where} must be an integer")
    if minimum is not None and value < minimum:
        raise _malformed(f"{where} must be at least {minimum}")
    if step is not None and value % step:
        raise _malformed(f"{where} must be a multiple of {step}")
    return value


def _seat(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in range(PLAYERS):
        raise _malformed(f"{where} must be a seat 0..{PLAYERS - 1}")
    return value


def _list(value: Any, where: str, length: int | None = None) -> list[Any]:
    if not isinstance(value, list):
        raise _malformed(f"{where} must be a JSON array")
    if length is not None and len(value) != length:
        raise _malformed(f"{where} must have exactly {length} entries")
    return value


def _cards(value: Any, where: str) -> list[Card]:
    """A card list in the notation of docs/rules.md#cards (`UNKNOWN_CARD` names the bad token)."""
    cards = []
    for token in _list(value, where):
        if not isinstance(token, str):
            raise _malformed(f"{where} must be a list of card strings, not {shown(token)}")
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


class _Input:
    """The `input` object of one question: exactly the kind's fields, read with typed refusals."""

    def __init__(self, data: Any, fields: Sequence[str]) -> None:
        if not isinstance(data, Mapping):
            raise _malformed("input must be a JSON object")
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise _malformed(f"unknown input field(s) {', '.join(unknown)};"
                             f" this kind reads {', '.join(fields)}")
        missing = [name for name in fields if name not in data]
        if missing:
            raise _malformed(f"missing input field(s) {', '.join(missing)}")
        self.data = data

    def __getitem__(self, name: str) -> Any:
        return self.data[name]

    def cards(self, name: str) -> list[Card]:
        """A card list field."""
        return _cards(self.data[name], f"input.{name}")


@dataclass(frozen=True)
class _Kind(Generic[RulesT]):
    """One kind of question: the input fields it reads and the function that answers it."""

    fields: tuple[str, ...]
    answer: Callable[[RulesT, _Input], JSON]


# -- 五十K ------------------------------------------------------------------------------------


def _fiftyk_deck(rules: Ruleset, *card_lists: Sequence[Card]) -> None:
    deck = Counter(make_deck(rules.packs, jokers=rules.jokers))
    name = f"{rules.deck_size}-card deck of preset {rules.preset!r}"
    for cards in card_lists:
        cards_beyond_deck(cards, deck, name)
    if len(card_lists) > 1:  # the lists are distinct cards on the table together
        cards_beyond_deck((c for cards in card_lists for c in cards), deck, name)


def _fiftyk_classify(rules: Ruleset, given: _Input) -> JSON:
    cards = given.cards("cards")
    _fiftyk_deck(rules, cards)
    try:
        combination = fiftyk_combinations.classify(cards, rules)
    except InvalidCombination:
        return {"type": Reason.INVALID_COMBINATION.value}
    return {"type": combination.type,
            "points": combination.points(joker_points=rules.joker_points)}


def _fiftyk_beats(rules: Ruleset, given: _Input) -> JSON:
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


FIFTYK_KINDS: dict[str, _Kind[Ruleset]] = {
    "classify": _Kind(("cards",), _fiftyk_classify),
    "beats": _Kind(("top", "play"), _fiftyk_beats),
}


# -- 升级 / 拖拉机 -----------------------------------------------------------------------------


def _max_hold(rules: ShengjiRules) -> int:
    """The most cards a seat ever holds: its hand plus the kitty (the dealer before burying)."""
    return rules.hand_size + rules.kitty_size


def _held(rules: ShengjiRules, given: _Input, name: str) -> list[Card]:
    """A card list one seat can hold or play at once (at most `_max_hold` cards)."""
    return _bounded(rules, given.cards(name), f"input.{name}")


def _bounded(rules: ShengjiRules, cards: list[Card], where: str) -> list[Card]:
    limit = _max_hold(rules)
    if len(cards) > limit:
        raise _malformed(f"{where} has {len(cards)} cards; a seat holds at most {limit}"
                         f" under preset {rules.preset!r}")
    return cards


def _shengji_deck(rules: ShengjiRules, *card_lists: Sequence[Card]) -> None:
    deck = Counter(make_deck(rules.packs, jokers=True))
    name = f"{rules.deck_size}-card deck of {rules.packs} pack(s)"
    for cards in card_lists:
        cards_beyond_deck(cards, deck, name)
    if len(card_lists) > 1:  # the lists are distinct cards: on the table or in other hands
        cards_beyond_deck((c for cards in card_lists for c in cards), deck, name)


def _level(value: Any, where: str = "input.level") -> str:
    if not isinstance(value, str) or value not in LEVELS:
        raise _malformed(f"{where} must be one of {' '.join(LEVELS)}")
    return value


def _order(rules: ShengjiRules, given: _Input) -> TrumpOrder:
    """The hand's trump order from `level` and `trump` (a suit letter, or null: no-trump)."""
    level = _level(given["level"])
    suit = given["trump"]
    if suit is not None and suit not in TRUMP_SUITS:
        raise _malformed(f"input.trump must be one of {' '.join(TRUMP_SUITS)} or null")
    return trump_order(LEVEL_RANK[level], suit, rules.permanent_two)


def _strongest_first(cards: Iterable[Card], order: TrumpOrder) -> list[str]:
    return [str(c) for c in sorted(cards, key=lambda c: (-order.strength(c), sort_key(c)))]


def _standing_lead(rules: ShengjiRules, cards: Sequence[Card], order: TrumpOrder,
                   where: str) -> Lead:
    """A lead the question takes as standing (`INVALID_COMBINATION` when it cannot be one)."""
    try:
        return TrickRules.of(rules).read(cards, order)
    except InvalidCombination as error:
        raise InvalidCombination(f"{where} is not a lead: {error.message}") from error


def _card_points(cards: Iterable[Card]) -> int:
    """Card points, counted as the hand counts its kitty and its tricks."""
    return sum(POINTS[c] for c in cards)


def _points(value: Any, where: str) -> int:
    """A point total: a non-negative multiple of 5 (every point total of a Shengji hand is)."""
    return _integer(value, where, minimum=0, step=POINT_STEP)


def _side(value: Any, where: str) -> str:
    if value not in SIDES:
        raise _malformed(f"{where} must be {' or '.join(map(repr, SIDES))}")
    return str(value)


def _shengji_suit(rules: ShengjiRules, given: _Input) -> JSON:
    order = _order(rules, given)
    value = given["card"]
    if not isinstance(value, str):
        raise _malformed("input.card must be a card string")
    (card,) = _cards([value], "input.card")
    _shengji_deck(rules, [card])
    group = order.group(card)
    return TRUMP_GROUP if group == TRUMP else group


def _shengji_order(rules: ShengjiRules, given: _Input) -> JSON:
    order = _order(rules, given)
    cards = given.cards("cards")
    _shengji_deck(rules, cards)
    if len({order.group(c) for c in cards}) > 1:
        raise InvalidCombination("input.cards must be of one suit group: "
                                 + " ".join(map(str, cards)))
    tiers: dict[int, list[Card]] = {}
    for card in cards:
        tiers.setdefault(order.pos(card), []).append(card)
    return [[str(c) for c in sorted(tiers[pos], key=sort_key)]
            for pos in sorted(tiers, reverse=True)]


def _shengji_classify(rules: ShengjiRules, given: _Input) -> JSON:
    order = _order(rules, given)
    cards = _held(rules, given, "cards")
    _shengji_deck(rules, cards)
    try:
        lead = TrickRules.of(rules).read(cards, order)
    except InvalidCombination:
        return {"type": Reason.INVALID_COMBINATION.value}
    return {"type": lead.kind,
            "components": [_strongest_first(c.cards, order) for c in lead.components]}


def _shengji_follow(rules: ShengjiRules, given: _Input) -> JSON:
    order = _order(rules, given)
    lead_cards, hand, play = (_held(rules, given, name) for name in ("lead", "hand", "play"))
    _shengji_deck(rules, lead_cards, hand)
    _shengji_deck(rules, play)
    lead = _standing_lead(rules, lead_cards, order, "input.lead")
    if Counter(play) - Counter(hand):
        # The referee checks the cards are held before any follow obligation
        # (docs/shengji.md#reason-codes gives the order of the checks).
        return Reason.CARDS_NOT_IN_HAND.value
    problem = TrickRules.of(rules).follow_error(hand, play, lead, order)
    return LEGAL if problem is None else problem[0].value


def _shengji_trick(rules: ShengjiRules, given: _Input) -> JSON:
    order = _order(rules, given)
    plays = [_bounded(rules, _cards(p, f"input.plays[{i}]"), f"input.plays[{i}]")
             for i, p in enumerate(_list(given["plays"], "input.plays", PLAYERS))]
    _shengji_deck(rules, *plays)
    lead = _standing_lead(rules, plays[0], order, "input.plays[0]")
    size = len(plays[0])
    for index, play in enumerate(plays[1:], start=1):
        if len(play) != size:
            raise _malformed(f"input.plays[{index}] has {len(play)} cards; a legal follow"
                             f" has the lead's {size}")
    return TrickRules.of(rules).winner(plays, lead, order)


def _shengji_throw(rules: ShengjiRules, given: _Input) -> JSON:
    order = _order(rules, given)
    lead_cards = _held(rules, given, "lead")
    others = [_bounded(rules, _cards(h, f"input.others[{i}]"), f"input.others[{i}]")
              for i, h in enumerate(_list(given["others"], "input.others", PLAYERS - 1))]
    _shengji_deck(rules, lead_cards, *others)
    lead = _standing_lead(rules, lead_cards, order, "input.lead")
    forced = TrickRules.of(rules).forced(lead, others, order)
    if forced is None:
        return {"valid": True}
    return {"valid": False, "forced": _strongest_first(forced.cards, order)}


def _shengji_kitty(rules: ShengjiRules, given: _Input) -> JSON:
    order = _order(rules, given)
    last_lead, kitty = _held(rules, given, "last_lead"), _held(rules, given, "kitty")
    _shengji_deck(rules, last_lead, kitty)
    lead = _standing_lead(rules, last_lead, order, "input.last_lead")
    side = _side(given["last_winner_side"], "input.last_winner_side")
    kitty_points = _card_points(kitty)
    multiplier, bonus = kitty_bonus(rules, kitty_points, lead.largest, side == ATTACKERS)
    return {"multiplier": multiplier, "kitty_points": kitty_points, "kitty_bonus": bonus}


def _shengji_level_change(rules: ShengjiRules, given: _Input) -> JSON:
    side, levels = level_outcome(_points(given["attacker_points"], "input.attacker_points"),
                                 rules.band)
    return {"side": side, "levels": levels}


def _shengji_hand_outcome(rules: ShengjiRules, given: _Input) -> JSON:
    order = _order(rules, given)
    dealer = _seat(given["dealer"], "input.dealer")
    levels = [_level(v, f"input.levels[{i}]")
              for i, v in enumerate(_list(given["levels"], "input.levels", TEAMS))]
    if given["level"] != levels[team_of(dealer)]:
        raise _malformed(f"input.level {given['level']} is not the dealer team's level"
                         f" {levels[team_of(dealer)]} (the trump rank is the dealer side's)")
    last_lead, kitty = _held(rules, given, "last_lead"), _held(rules, given, "kitty")
    _shengji_deck(rules, last_lead, kitty)
    lead = _standing_lead(rules, last_lead, order, "input.last_lead")
    kitty_points = _card_points(kitty)
    trick_points = _points(given["trick_points"], "input.trick_points")
    if trick_points + kitty_points > rules.total_points:
        raise _malformed(f"input.trick_points {trick_points} and the kitty's {kitty_points}"
                         f" exceed the deck's {rules.total_points} points")
    side = _side(given["last_winner_side"], "input.last_winner_side")
    # Any seat of the winning side gives the same score: only its team is read.
    last_winner = dealer if side == DEALER else (dealer + 1) % PLAYERS
    result = score_hand(rules, HandFacts(
        dealer=dealer, levels=(levels[0], levels[1]), trick_points=trick_points,
        kitty_points=kitty_points, last_winner=last_winner, last_lead_largest=lead.largest,
        failed_throws=(), room_points=(0,) * PLAYERS))
    return {
        "kitty_bonus": result["attackers"]["kitty_bonus"],
        "attacker_points": result["attackers"]["points"],
        "side": result["outcome"]["side"],
        "levels": result["outcome"]["levels"],
        "levels_after": result["levels"]["after"],
        "next_dealer": result["next_dealer"],
        "game_over": result["game_over"],
        "game_winner": result["game_winner"],
    }


def _shengji_qq_points(rules: ShengjiRules, given: _Input) -> JSON:
    totals = [_integer(v, f"input.room_points[{i}]")
              for i, v in enumerate(_list(given["room_points"], "input.room_points", PLAYERS))]
    dealer = _seat(given["dealer"], "input.dealer")
    points = _points(given["attacker_points"], "input.attacker_points")
    return room_points_moved(rules, totals, dealer, points)


DECLARATION_FIELDS = ("seat", "cards")


def _shengji_declare(rules: ShengjiRules, given: _Input) -> JSON:
    rank = LEVEL_RANK[_level(given["level"])]
    dealer = None if given["dealer"] is None else _seat(given["dealer"], "input.dealer")
    declarations: list[tuple[int, list[Card]]] = []
    for index, entry in enumerate(_list(given["declarations"], "input.declarations")):
        where = f"input.declarations[{index}]"
        if not isinstance(entry, Mapping) or set(entry) != set(DECLARATION_FIELDS):
            raise _malformed(f'{where} must be an object {{"seat": S, "cards": [...]}}')
        cards = _cards(entry["cards"], f"{where}.cards")
        _shengji_deck(rules, cards)
        declarations.append((_seat(entry["seat"], f"{where}.seat"), cards))
    outcome = judge_declarations(rules, rank, dealer, declarations)
    standing = outcome.standing
    return {
        "results": [ACCEPTED if refused is None else refused.reason.value
                    for refused in outcome.results],
        "trump": standing.suit if standing else None,
        "declared_by": standing.seat if standing else None,
        "dealer": outcome.dealer,
    }


def _shengji_bury(rules: ShengjiRules, given: _Input) -> JSON:
    kitty_size = _integer(given["kitty_size"], "input.kitty_size", minimum=0)
    if kitty_size != rules.kitty_size:
        # Any other count would be another ruleset's kitty: judge it under that one.
        rules = ShengjiRules.from_spec(rules.preset, {**rules.overrides(),
                                                      "kitty_size": kitty_size})
    cards = _held(rules, given, "cards")
    _shengji_deck(rules, cards)
    try:
        check_bury(cards, rules.kitty_size, rules.bury_points)
    except RuleError as refused:
        return refused.reason.value
    return LEGAL


SHENGJI_KINDS: dict[str, _Kind[ShengjiRules]] = {
    "suit": _Kind(("level", "trump", "card"), _shengji_suit),
    "order": _Kind(("level", "trump", "cards"), _shengji_order),
    "classify": _Kind(("level", "trump", "cards"), _shengji_classify),
    "follow": _Kind(("level", "trump", "lead", "hand", "play"), _shengji_follow),
    "trick": _Kind(("level", "trump", "plays"), _shengji_trick),
    "throw": _Kind(("level", "trump", "lead", "others"), _shengji_throw),
    "kitty": _Kind(("level", "trump", "last_lead", "last_winner_side", "kitty"),
                   _shengji_kitty),
    "level_change": _Kind(("attacker_points",), _shengji_level_change),
    "hand_outcome": _Kind(("dealer", "levels", "level", "trump", "trick_points", "kitty",
                           "last_winner_side", "last_lead"), _shengji_hand_outcome),
    "qq_points": _Kind(("room_points", "dealer", "attacker_points"), _shengji_qq_points),
    "declare": _Kind(("level", "dealer", "declarations"), _shengji_declare),
    "bury": _Kind(("kitty_size", "cards"), _shengji_bury),
}


# -- questions and answers -----------------------------------------------------------------------


def _ask(kinds: Mapping[str, _Kind[RulesT]], read_rules: Callable[[Any], RulesT],
         game: str, question: Mapping[str, Any]) -> JSON:
    kind_name = question.get("kind")
    if not isinstance(kind_name, str) or kind_name not in kinds:
        raise _malformed(f"unknown kind {shown(kind_name)} for game {shown(game)};"
                         f" allowed: {', '.join(kinds)}")
    kind = kinds[kind_name]
    if "preset" not in question:
        raise _malformed("missing field preset")
    options = question.get("options")
    if options is not None and not isinstance(options, Mapping):
        raise BadQuestion(Reason.INVALID_RULESET.value,
                          "options must be an object of name: value (or absent)")
    rules = read_rules({"preset": question["preset"], "options": options})
    if "input" not in question:
        raise _malformed("missing field input")
    return kind.answer(rules, _Input(question["input"], kind.fields))


def answer(question: Any) -> JSON:
    """The answer to one parsed question: the ruling, or `{"error", "message"}`."""
    try:
        if not isinstance(question, Mapping):
            raise _malformed("a question is a JSON object")
        unknown = sorted(set(question) - set(QUESTION_FIELDS))
        if unknown:
            raise _malformed(f"unknown field(s) {', '.join(unknown)};"
                             f" a question has {', '.join(QUESTION_FIELDS)}")
        game = question.get("game")
        if game is None or game == FIFTYK:
            return _ask(FIFTYK_KINDS, Ruleset.from_json, FIFTYK, question)
        if game == SHENGJI:
            return _ask(SHENGJI_KINDS, ShengjiRules.from_json, SHENGJI, question)
        raise BadQuestion(Reason.INVALID_RULESET.value,
                          f"unknown game {shown(game)}; allowed: {FIFTYK}, {SHENGJI}")
    except BadQuestion as bad:
        return error_answer(bad.code, bad.message)
    except RuleError as refused:
        return error_answer(refused.reason.value, refused.message)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def answer_line(line: bytes) -> JSON:
    """The answer to one line of standard input (UTF-8 JSON text)."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return error_answer(INVALID_REQUEST, "the line is not UTF-8 text")
    if not text.strip():
        return error_answer(INVALID_REQUEST, "an empty line is not a question")
    try:
        question = json.loads(text, parse_constant=_reject_constant)
    except ValueError as error:  # JSONDecodeError, NaN/Infinity, an over-long integer
        return error_answer(INVALID_REQUEST, f"not JSON: {error}")
    except RecursionError:
        return error_answer(INVALID_REQUEST, "not JSON this oracle reads: nested too deeply")
    return answer(question)


def encode(value: JSON) -> bytes:
    """One answer as a line of UTF-8 JSON."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8") + b"\n"


class UnreadableInput(Exception):
    """Standard input could not be read (the one case the oracle stops with a failure)."""


def _read_line(stdin: BinaryIO) -> tuple[bytes, bool]:
    """(line, fits): one line of at most MAX_LINE_BYTES; an over-long one is skipped whole."""
    try:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
            return line, True
        rest = line
        while rest and not rest.endswith(b"\n"):
            rest = stdin.readline(MAX_LINE_BYTES)
        return line, False
    except OSError as error:
        raise UnreadableInput(str(error)) from error


def run(stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Answer every line of `stdin` on `stdout`, in order, each answer flushed as written."""
    while True:
        line, fits = _read_line(stdin)
        if not line:
            return EXIT_OK
        if fits:
            result = answer_line(line)
        else:
            result = error_answer(INVALID_REQUEST,
                                  f"a question is at most {MAX_LINE_BYTES} bytes long")
        stdout.write(encode(result))
        stdout.flush()  # a client may wait for each answer before asking the next question


__all__ = [
    "EXIT_OK", "EXIT_UNREADABLE", "FIFTYK_KINDS", "MAX_LINE_BYTES", "SHENGJI_KINDS",
    "BadQuestion", "UnreadableInput", "answer", "answer_line", "cards_beyond_deck", "encode",
    "error_answer", "run",
]
