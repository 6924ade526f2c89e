"""Shengji transcripts and adjudication (docs/transcript.md#shengji-hands).

A transcript with `"game": "shengji"` holds the rules, the hand's dealer (null: a first
hand), the levels, QQ room points, the deal (`deck`, or `hands` in the order received plus
`kitty`) and the actions: `declare` (with the `round` after which it was made), `bury` and
`play`. The declaration windows close at the first action that is not a declaration; the
referee derives everything else (window closings, the kitty taken, forced plays of failed
throws, tricks won, the result).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fiftyk_referee.domain.cards import make_deck, parse_card
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.shengji.cards import LEVELS
from fiftyk_referee.domain.shengji.hand import GAME_NAME, ShengjiHand
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import PLAYERS, ShengjiRules
from fiftyk_referee.domain.transcripts import (
    COMPLETED,
    IN_PROGRESS,
    REJECTED,
    RESULT_FORMAT,
    TRANSCRIPT_FORMAT,
    InvalidTranscript,
    card_list,
    is_int,
    require,
)

TRANSCRIPT_TABLE_ID = "transcript"
RESULT_FIELDS = ("dealer", "trump", "kitty", "throws_failed", "collected", "last_trick",
                 "attackers", "outcome", "levels", "next_dealer", "game_over", "game_winner",
                 "room_points")


@dataclass(frozen=True)
class ShengjiTranscript:
    """A readable Shengji transcript (not yet judged)."""

    rules: ShengjiRules
    dealer: int | None
    levels: tuple[str, str]
    room_points: tuple[int, ...]
    deck: tuple[str, ...]
    actions: tuple[Any, ...]


def load_transcript(data: Any) -> ShengjiTranscript:
    """Validate the file-level structure, ruleset and deal; raise InvalidTranscript."""
    require(isinstance(data, Mapping), "a transcript is a JSON object")
    require(data.get("format") == TRANSCRIPT_FORMAT, f'"format" must be "{TRANSCRIPT_FORMAT}"')
    require(data.get("game") == GAME_NAME, f'"game" must be "{GAME_NAME}"')
    try:
        rules = ShengjiRules.from_json(data.get("ruleset"))
    except RuleError as error:
        raise InvalidTranscript(f"ruleset: {error.message}") from error
    require(data.get("players", PLAYERS) == PLAYERS and is_int(data.get("players", PLAYERS)),
            '"players" must be 4')
    dealer = data.get("dealer")
    require(dealer is None or (is_int(dealer) and 0 <= dealer < PLAYERS),
            '"dealer" must be a seat 0..3 or null')
    levels = data.get("levels", [rules.start_level] * 2)
    require(isinstance(levels, list) and len(levels) == len(("team 0", "team 1"))
            and all(lv in LEVELS for lv in levels), f'"levels" are two of {" ".join(LEVELS)}')
    require(dealer is not None or levels[0] == levels[1],
            'a first hand ("dealer": null) needs equal "levels"')
    room = data.get("room_points", [0] * PLAYERS)
    require(isinstance(room, list) and len(room) == PLAYERS and all(is_int(p) for p in room),
            '"room_points" are four integers')
    require(("deck" in data) != ("hands" in data), 'give exactly one of "deck" and "hands"')
    deck = _deck_of(data, rules, dealer)
    actions = data.get("actions", [])
    require(isinstance(actions, list), '"actions" must be a list')
    return ShengjiTranscript(rules, dealer, (levels[0], levels[1]), tuple(room), tuple(deck),
                             tuple(actions))


def _deck_of(data: Mapping[str, Any], rules: ShengjiRules, dealer: int | None) -> list[str]:
    if "deck" in data:
        deck = card_list(data["deck"], '"deck"')
    else:
        hands = data["hands"]
        require(isinstance(hands, list) and len(hands) == PLAYERS,
                '"hands" must be a list of 4 card lists')
        parsed = [card_list(h, f"hands[{i}]") for i, h in enumerate(hands)]
        require(all(len(h) == rules.hand_size for h in parsed),
                f"every hand must hold {rules.hand_size} cards")
        kitty = card_list(data.get("kitty"), '"kitty"')
        require(len(kitty) == rules.kitty_size, f'"kitty" must hold {rules.kitty_size} cards')
        first = 0 if dealer is None else (dealer + 1) % PLAYERS
        deck = [parsed[(first + i) % PLAYERS][r]
                for r in range(rules.hand_size) for i in range(PLAYERS)] + kitty
    require(Counter(parse_card(c) for c in deck) == Counter(make_deck(rules.packs, jokers=True)),
            f"the deal must be exactly the {rules.deck_size} cards of {rules.packs} pack(s)")
    return deck


def start_hand(transcript: ShengjiTranscript) -> ShengjiHand:
    """The dealt hand a transcript describes."""
    return ShengjiHand.deal_new(
        table_id=TRANSCRIPT_TABLE_ID, number=1, rules=transcript.rules, dealer=transcript.dealer,
        levels=transcript.levels, room_points=transcript.room_points, deck=list(transcript.deck))


def _card_list(action: Mapping[str, Any], name: str) -> list[Any]:
    cards = action[name]
    if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
        raise RuleError(Reason.UNKNOWN_CARD, f'"{name}" must be a list of card strings')
    return [parse_card(c) for c in cards]


def apply_action(hand: ShengjiHand, action: Any) -> None:
    """Judge one action; raises RuleError with the reason when it cannot be accepted."""
    if not isinstance(action, Mapping) or not is_int(action.get("seat")):
        raise RuleError(Reason.INVALID_ACTION,
                        'an action is {"seat": s, "declare"|"bury"|"play": [cards]}')
    kinds = [k for k in ("declare", "bury", "play", "pass") if k in action]
    if len(kinds) != 1:
        raise RuleError(Reason.INVALID_ACTION,
                        'an action has exactly one of "declare", "bury" and "play"')
    kind, seat = kinds[0], action["seat"]
    if kind == "pass":
        if hand.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        raise RuleError(ShengjiReason.PASS_NOT_ALLOWED, "nobody passes in Shengji")
    cards = _card_list(action, kind)
    if kind == "declare":
        round_ = action.get("round", hand.rules.hand_size)
        hand.declare(seat, cards, round=round_)
        return
    if not hand.is_over:
        hand.close_declarations()
    if kind == "bury":
        hand.bury(seat, cards)
    else:
        hand.play(seat, cards)


def result_of(hand: ShengjiHand, applied: int, rejected: dict[str, Any] | None
              ) -> dict[str, Any]:
    """The `fiftyk-result/1` object of a Shengji hand after `applied` actions."""
    status = REJECTED if rejected else COMPLETED if hand.is_over else IN_PROGRESS
    out: dict[str, Any] = {"format": RESULT_FORMAT, "game": GAME_NAME, "status": status,
                           "actions_applied": applied, "rejected": rejected}
    if hand.result is not None:
        out.update({k: hand.result[k] for k in RESULT_FIELDS})
        return out
    out.update(dict.fromkeys(RESULT_FIELDS))
    out["dealer"] = hand.dealer if hand.dealer_fixed else None
    out["collected"] = list(hand.collected)
    out["throws_failed"] = [dict(t) for t in hand.throws_failed]
    return out


def replay(data: Any) -> tuple[ShengjiHand, dict[str, Any]]:
    """Replay a Shengji transcript: the hand as far as it went, and the ruling on it."""
    transcript = load_transcript(data)
    try:
        hand = start_hand(transcript)
    except RuleError as error:
        raise InvalidTranscript(error.message) from error
    for index, action in enumerate(transcript.actions):
        try:
            apply_action(hand, action)
        except RuleError as error:
            rejected = {"action": index, "reason": error.reason.value, "message": error.message}
            return hand, result_of(hand, index, rejected)
    return hand, result_of(hand, len(transcript.actions), None)


def adjudicate(data: Any) -> dict[str, Any]:
    """Replay a Shengji transcript and rule on it; InvalidTranscript if it is not readable."""
    return replay(data)[1]


__all__ = ["ShengjiTranscript", "adjudicate", "apply_action", "load_transcript", "replay",
           "result_of", "start_hand"]
