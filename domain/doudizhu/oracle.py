"""斗地主's questions to the rules oracle (docs/oracle.md): `classify`, `beats`,
`legal_plays` and `score`, answered by the functions the referee enforces
(`combinations`, `legal`, `scoring`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from fiftyk_referee.domain.cards import Card, format_cards, make_deck
from fiftyk_referee.domain.doudizhu.combinations import Combination, classify, read_play
from fiftyk_referee.domain.doudizhu.legal import legal_plays
from fiftyk_referee.domain.doudizhu.rulesets import (
    GAME_NAME,
    HAND_SIZE,
    KITTY_SIZE,
    MAX_BID,
    DoudizhuRules,
)
from fiftyk_referee.domain.doudizhu.scoring import FARMERS, LANDLORD, HandFacts, score_hand
from fiftyk_referee.domain.errors import InvalidCombination, Reason
from fiftyk_referee.domain.oracle import (
    JSON,
    Input,
    Kind,
    ask,
    cards_beyond_deck,
    integer,
    malformed,
)

DECK_NAME = "54-card pack"
MOST_HELD = HAND_SIZE + KITTY_SIZE  # the landlord's hand once it took the 底牌
MOST_ROBS = 3  # two seats rob, the caller robs back
MOST_BOMBS = 15  # thirteen bombs and a rocket in one pack, and then some room
LANDLORD_SEAT = 0  # the `score` question's seats: the landlord's, then the farmers'


def _deck(*card_lists: Sequence[Card]) -> None:
    deck = Counter(make_deck(1, jokers=True))
    for cards in card_lists:
        cards_beyond_deck(cards, deck, DECK_NAME)
    if len(card_lists) > 1:  # the lists are distinct cards on the table together
        cards_beyond_deck((c for cards in card_lists for c in cards), deck, DECK_NAME)


def _held(given: Input, name: str) -> list[Card]:
    cards = given.cards(name)
    if len(cards) > MOST_HELD:
        raise malformed(f"input.{name} has {len(cards)} cards; a seat holds at most {MOST_HELD}")
    return cards


def _described(combination: Combination) -> dict[str, Any]:
    return {"type": combination.kind, "rank": combination.rank, "length": combination.length,
            "cards": format_cards(combination.cards)}


def _classify(rules: DoudizhuRules, given: Input) -> JSON:
    cards = _held(given, "cards")
    _deck(cards)
    combination = classify(cards, rules.combos)
    if combination is None:
        return {"type": Reason.INVALID_COMBINATION.value}
    return _described(combination)


def _standing(cards: list[Card], rules: DoudizhuRules) -> Combination:
    top = classify(cards, rules.combos)
    if top is None:
        raise InvalidCombination("input.top is not a standing play: its cards form no"
                                 " combination")
    return top


def _beats(rules: DoudizhuRules, given: Input) -> JSON:
    top_cards, play_cards = _held(given, "top"), _held(given, "play")
    _deck(top_cards, play_cards)
    top = _standing(top_cards, rules)
    # Cards that read two ways beat the table when any of their readings does, as at the
    # table itself (`read_play`).
    if classify(play_cards, rules.combos) is None:
        return {"beats": False, "reason": Reason.INVALID_COMBINATION.value}
    return {"beats": read_play(play_cards, top, rules.combos) is not None}


def _legal_plays(rules: DoudizhuRules, given: Input) -> JSON:
    """Every distinct legal play of `hand` over `top` (an empty `top`: a lead)."""
    hand, top_cards = _held(given, "hand"), _held(given, "top")
    _deck(hand, top_cards)
    top = _standing(top_cards, rules) if top_cards else None
    plays = legal_plays(hand, top, rules.combos)
    return {"count": len(plays), "plays": [_described(p) for p in plays]}


def _flag(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise malformed(f"{where} must be true or false")
    return value


def _score(rules: DoudizhuRules, given: Input) -> JSON:
    """The multiplier and scores of a finished hand from its facts (the landlord is seat 0
    of the answer's `scores`, the farmers seats 1 and 2)."""
    bid = integer(given["bid"], "input.bid", minimum=1)
    if bid > MAX_BID:
        raise malformed(f"input.bid must be at most {MAX_BID}")
    robs = integer(given["robs"], "input.robs", minimum=0)
    if robs > MOST_ROBS:
        raise malformed(f"input.robs must be at most {MOST_ROBS}")
    bombs = integer(given["bombs"], "input.bombs", minimum=0)
    rockets = integer(given["rockets"], "input.rockets", minimum=0)
    if rockets > 1 or bombs + rockets > MOST_BOMBS:
        raise malformed("a hand has at most 13 bombs and 1 rocket")
    winner = given["winner"]
    if winner not in (LANDLORD, FARMERS):
        raise malformed(f'input.winner must be "{LANDLORD}" or "{FARMERS}"')
    spring = _flag(given["spring"], "input.spring")
    landlord_won = winner == LANDLORD
    facts = HandFacts(
        landlord=LANDLORD_SEAT, bid_factor=bid << robs,
        winner=LANDLORD_SEAT if landlord_won else LANDLORD_SEAT + 1, bombs=bombs,
        rockets=rockets,
        # A spring: the farmers never played (landlord won) or the landlord played once.
        landlord_plays=1 if spring or landlord_won else 2,
        farmer_plays=0 if spring and landlord_won else 1)
    return score_hand(rules, facts).to_json()


DOUDIZHU_KINDS: dict[str, Kind[DoudizhuRules]] = {
    "classify": Kind(("cards",), _classify),
    "beats": Kind(("top", "play"), _beats),
    "legal_plays": Kind(("hand", "top"), _legal_plays),
    "score": Kind(("bid", "robs", "bombs", "rockets", "winner", "spring"), _score),
}


def answer(question: Mapping[str, Any]) -> JSON:
    """The answer to a 斗地主 question (a `BadQuestion` or `RuleError` when it has none)."""
    return ask(DOUDIZHU_KINDS, DoudizhuRules.from_json, GAME_NAME, question)


__all__ = ["DOUDIZHU_KINDS", "answer"]
