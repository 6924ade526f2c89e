"""Shengji's questions to the rules oracle (docs/oracle.md): suits, trump order, leads,
follows, tricks, throws, the kitty, levels, QQ points, declarations and burying, answered by
the functions the referee enforces (`cards`, `combinations`, `play`, `scoring`, `hand`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fiftyk_referee.domain.cards import Card, make_deck, sort_key
from fiftyk_referee.domain.errors import InvalidCombination, Reason, RuleError
from fiftyk_referee.domain.oracle import (
    JSON,
    Input,
    Kind,
    array,
    ask,
    card_list,
    cards_beyond_deck,
    integer,
    malformed,
)
from fiftyk_referee.domain.shengji.burying import check_bury
from fiftyk_referee.domain.shengji.cards import (
    LEVEL_RANK,
    LEVELS,
    POINTS,
    TRUMP,
    TrumpOrder,
    trump_order,
)
from fiftyk_referee.domain.shengji.declaring import judge_declarations
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

NAME = "shengji"
TRUMP_SUITS = ("S", "H", "C", "D")
SIDES = (ATTACKERS, DEALER)
LEGAL, ACCEPTED, TRUMP_GROUP = "legal", "accepted", "trump"
TEAMS = 2


def _seat(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in range(PLAYERS):
        raise malformed(f"{where} must be a seat 0..{PLAYERS - 1}")
    return value



def _max_hold(rules: ShengjiRules) -> int:
    """The most cards a seat ever holds: its hand plus the kitty (the dealer before burying)."""
    return rules.hand_size + rules.kitty_size


def _held(rules: ShengjiRules, given: Input, name: str) -> list[Card]:
    """A card list one seat can hold or play at once (at most `_max_hold` cards)."""
    return _bounded(rules, given.cards(name), f"input.{name}")


def _bounded(rules: ShengjiRules, cards: list[Card], where: str) -> list[Card]:
    limit = _max_hold(rules)
    if len(cards) > limit:
        raise malformed(f"{where} has {len(cards)} cards; a seat holds at most {limit}"
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
        raise malformed(f"{where} must be one of {' '.join(LEVELS)}")
    return value


def _order(rules: ShengjiRules, given: Input) -> TrumpOrder:
    """The hand's trump order from `level` and `trump` (a suit letter, or null: no-trump)."""
    level = _level(given["level"])
    suit = given["trump"]
    if suit is not None and suit not in TRUMP_SUITS:
        raise malformed(f"input.trump must be one of {' '.join(TRUMP_SUITS)} or null")
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
    return integer(value, where, minimum=0, step=POINT_STEP)


def _side(value: Any, where: str) -> str:
    if value not in SIDES:
        raise malformed(f"{where} must be {' or '.join(map(repr, SIDES))}")
    return str(value)


def _shengji_suit(rules: ShengjiRules, given: Input) -> JSON:
    order = _order(rules, given)
    value = given["card"]
    if not isinstance(value, str):
        raise malformed("input.card must be a card string")
    (card,) = card_list([value], "input.card")
    _shengji_deck(rules, [card])
    group = order.group(card)
    return TRUMP_GROUP if group == TRUMP else group


def _shengji_order(rules: ShengjiRules, given: Input) -> JSON:
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


def _shengji_classify(rules: ShengjiRules, given: Input) -> JSON:
    order = _order(rules, given)
    cards = _held(rules, given, "cards")
    _shengji_deck(rules, cards)
    try:
        lead = TrickRules.of(rules).read(cards, order)
    except InvalidCombination:
        return {"type": Reason.INVALID_COMBINATION.value}
    return {"type": lead.kind,
            "components": [_strongest_first(c.cards, order) for c in lead.components]}


def _shengji_follow(rules: ShengjiRules, given: Input) -> JSON:
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


def _shengji_trick(rules: ShengjiRules, given: Input) -> JSON:
    order = _order(rules, given)
    plays = [_bounded(rules, card_list(p, f"input.plays[{i}]"), f"input.plays[{i}]")
             for i, p in enumerate(array(given["plays"], "input.plays", PLAYERS))]
    _shengji_deck(rules, *plays)
    lead = _standing_lead(rules, plays[0], order, "input.plays[0]")
    size = len(plays[0])
    for index, play in enumerate(plays[1:], start=1):
        if len(play) != size:
            raise malformed(f"input.plays[{index}] has {len(play)} cards; a legal follow"
                             f" has the lead's {size}")
    return TrickRules.of(rules).winner(plays, lead, order)


def _shengji_throw(rules: ShengjiRules, given: Input) -> JSON:
    order = _order(rules, given)
    lead_cards = _held(rules, given, "lead")
    others = [_bounded(rules, card_list(h, f"input.others[{i}]"), f"input.others[{i}]")
              for i, h in enumerate(array(given["others"], "input.others", PLAYERS - 1))]
    _shengji_deck(rules, lead_cards, *others)
    lead = _standing_lead(rules, lead_cards, order, "input.lead")
    forced = TrickRules.of(rules).forced(lead, others, order)
    if forced is None:
        return {"valid": True}
    return {"valid": False, "forced": _strongest_first(forced.cards, order)}


def _shengji_kitty(rules: ShengjiRules, given: Input) -> JSON:
    order = _order(rules, given)
    last_lead, kitty = _held(rules, given, "last_lead"), _held(rules, given, "kitty")
    _shengji_deck(rules, last_lead, kitty)
    lead = _standing_lead(rules, last_lead, order, "input.last_lead")
    side = _side(given["last_winner_side"], "input.last_winner_side")
    kitty_points = _card_points(kitty)
    multiplier, bonus = kitty_bonus(rules, kitty_points, lead.largest, side == ATTACKERS)
    return {"multiplier": multiplier, "kitty_points": kitty_points, "kitty_bonus": bonus}


def _shengji_level_change(rules: ShengjiRules, given: Input) -> JSON:
    side, levels = level_outcome(_points(given["attacker_points"], "input.attacker_points"),
                                 rules.band)
    return {"side": side, "levels": levels}


def _shengji_hand_outcome(rules: ShengjiRules, given: Input) -> JSON:
    order = _order(rules, given)
    dealer = _seat(given["dealer"], "input.dealer")
    levels = [_level(v, f"input.levels[{i}]")
              for i, v in enumerate(array(given["levels"], "input.levels", TEAMS))]
    if given["level"] != levels[team_of(dealer)]:
        raise malformed(f"input.level {given['level']} is not the dealer team's level"
                         f" {levels[team_of(dealer)]} (the trump rank is the dealer side's)")
    last_lead, kitty = _held(rules, given, "last_lead"), _held(rules, given, "kitty")
    _shengji_deck(rules, last_lead, kitty)
    lead = _standing_lead(rules, last_lead, order, "input.last_lead")
    kitty_points = _card_points(kitty)
    trick_points = _points(given["trick_points"], "input.trick_points")
    if trick_points + kitty_points > rules.total_points:
        raise malformed(f"input.trick_points {trick_points} and the kitty's {kitty_points}"
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


def _shengji_qq_points(rules: ShengjiRules, given: Input) -> JSON:
    totals = [integer(v, f"input.room_points[{i}]")
              for i, v in enumerate(array(given["room_points"], "input.room_points", PLAYERS))]
    dealer = _seat(given["dealer"], "input.dealer")
    points = _points(given["attacker_points"], "input.attacker_points")
    return room_points_moved(rules, totals, dealer, points)


DECLARATION_FIELDS = ("seat", "cards")


def _shengji_declare(rules: ShengjiRules, given: Input) -> JSON:
    rank = LEVEL_RANK[_level(given["level"])]
    dealer = None if given["dealer"] is None else _seat(given["dealer"], "input.dealer")
    declarations: list[tuple[int, list[Card]]] = []
    for index, entry in enumerate(array(given["declarations"], "input.declarations")):
        where = f"input.declarations[{index}]"
        if not isinstance(entry, Mapping) or set(entry) != set(DECLARATION_FIELDS):
            raise malformed(f'{where} must be an object {{"seat": S, "cards": [...]}}')
        cards = card_list(entry["cards"], f"{where}.cards")
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


def _shengji_bury(rules: ShengjiRules, given: Input) -> JSON:
    kitty_size = integer(given["kitty_size"], "input.kitty_size", minimum=0)
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


SHENGJI_KINDS: dict[str, Kind[ShengjiRules]] = {
    "suit": Kind(("level", "trump", "card"), _shengji_suit),
    "order": Kind(("level", "trump", "cards"), _shengji_order),
    "classify": Kind(("level", "trump", "cards"), _shengji_classify),
    "follow": Kind(("level", "trump", "lead", "hand", "play"), _shengji_follow),
    "trick": Kind(("level", "trump", "plays"), _shengji_trick),
    "throw": Kind(("level", "trump", "lead", "others"), _shengji_throw),
    "kitty": Kind(("level", "trump", "last_lead", "last_winner_side", "kitty"),
                   _shengji_kitty),
    "level_change": Kind(("attacker_points",), _shengji_level_change),
    "hand_outcome": Kind(("dealer", "levels", "level", "trump", "trick_points", "kitty",
                           "last_winner_side", "last_lead"), _shengji_hand_outcome),
    "qq_points": Kind(("room_points", "dealer", "attacker_points"), _shengji_qq_points),
    "declare": Kind(("level", "dealer", "declarations"), _shengji_declare),
    "bury": Kind(("kitty_size", "cards"), _shengji_bury),
}


def answer(question: Mapping[str, Any]) -> JSON:
    """The answer to a Shengji question (a `BadQuestion` or `RuleError` when it has none)."""
    return ask(SHENGJI_KINDS, ShengjiRules.from_json, NAME, question)


__all__ = ["SHENGJI_KINDS", "answer"]
