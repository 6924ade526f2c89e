"""斗地主 transcripts and adjudication.

A 斗地主 transcript is a `fiftyk-transcript/1` object with `"game": "doudizhu"` (the format
every game's transcripts share, so every reader of transcripts takes it): the rules, the
dealer, the deal (`deck` in dealing order, or `hands` — seat 0's, 1's and 2's 17 cards — plus
`kitty`, the 底牌) and the actions in order:

- `{"seat": s, "bid": 2}` — a points bid (1-3);
- `{"seat": s, "call": true}` — 叫地主; `{"seat": s, "rob": true}` — 抢地主;
- `{"seat": s, "pass": true}` — a pass, in the bidding or in the play;
- `{"seat": s, "play": ["3H", "3S"]}` — a play.

The referee derives everything else (the landlord taking the 底牌, rounds of play ending,
the result). Only a malformed file, ruleset or deal makes a transcript unreadable
(`InvalidTranscript`); an action the referee cannot accept is a ruling (`status: rejected`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fiftyk_referee.domain.cards import parse_card
from fiftyk_referee.domain.deal import deal_inputs, deal_order
from fiftyk_referee.domain.doudizhu.bidding import BID, CALL, PASS, ROB_KIND
from fiftyk_referee.domain.doudizhu.hand import BASE_DECK, PLAYING, DoudizhuHand
from fiftyk_referee.domain.doudizhu.rulesets import (
    GAME_NAME,
    HAND_SIZE,
    KITTY_SIZE,
    PLAYERS,
    DoudizhuRules,
)
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import PLAY, Action
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
ACTION_KINDS = (BID, CALL, ROB_KIND, PASS, PLAY)
RESULT_FIELDS = ("redeal", "landlord", "bid", "robs", "winner", "winning_seat", "bombs",
                 "rockets", "spring", "anti_spring", "uncapped_multiplier", "multiplier",
                 "base_score", "unit", "scores", "kitty")


@dataclass(frozen=True)
class DoudizhuTranscript:
    """A readable 斗地主 transcript: rules, the deal and the actions (not yet judged)."""

    rules: DoudizhuRules
    dealer: int
    deck: tuple[str, ...]
    actions: tuple[Any, ...]


def load_transcript(data: Any) -> DoudizhuTranscript:
    """Validate the file-level structure, ruleset and deal; raise InvalidTranscript."""
    require(isinstance(data, Mapping), "a transcript is a JSON object")
    require(data.get("format") == TRANSCRIPT_FORMAT, f'"format" must be "{TRANSCRIPT_FORMAT}"')
    require(data.get("game") == GAME_NAME, f'"game" must be "{GAME_NAME}"')
    try:
        rules = DoudizhuRules.from_json(data.get("ruleset"))
    except RuleError as error:
        raise InvalidTranscript(f"ruleset: {error.message}") from error
    players = data.get("players", PLAYERS)
    require(is_int(players) and players == PLAYERS, f'"players" must be {PLAYERS}')
    dealer = data.get("dealer", PLAYERS - 1)
    require(is_int(dealer) and dealer in range(PLAYERS),
            f'"dealer" must be a seat 0..{PLAYERS - 1}')
    require(("deck" in data) != ("hands" in data), 'give exactly one of "deck" and "hands"')
    deck = _deck_of(data, dealer)
    actions = data.get("actions", [])
    require(isinstance(actions, list), '"actions" must be a list')
    return DoudizhuTranscript(rules, dealer, tuple(deck), tuple(actions))


def _deck_of(data: Mapping[str, Any], dealer: int) -> list[str]:
    if "deck" in data:
        deck = card_list(data["deck"], '"deck"')
    else:
        hands = data["hands"]
        require(isinstance(hands, list) and len(hands) == PLAYERS,
                f'"hands" must be a list of {PLAYERS} card lists')
        parsed = [card_list(h, f"hands[{i}]") for i, h in enumerate(hands)]
        require(all(len(h) == HAND_SIZE for h in parsed),
                f"every hand must hold {HAND_SIZE} cards")
        kitty = card_list(data.get("kitty"), '"kitty"')
        require(len(kitty) == KITTY_SIZE, f'"kitty" must hold {KITTY_SIZE} cards')
        order = deal_order(PLAYERS, dealer, PLAYERS * HAND_SIZE)
        deck = [parsed[seat][index // PLAYERS] for index, seat in enumerate(order)] + kitty
    require(Counter(parse_card(c) for c in deck) == Counter(BASE_DECK),
            "the deal must be exactly one 54-card pack")
    return deck


def start_hand(transcript: DoudizhuTranscript) -> DoudizhuHand:
    """The dealt hand a transcript describes."""
    return DoudizhuHand.deal_new(table_id=TRANSCRIPT_TABLE_ID, number=1, rules=transcript.rules,
                                 dealer=transcript.dealer, deck=list(transcript.deck))


def apply_action(hand: DoudizhuHand, action: Any) -> None:
    """Judge one action; raises RuleError with the reason when it cannot be accepted."""
    if not isinstance(action, Mapping) or not is_int(action.get("seat")):
        raise RuleError(Reason.INVALID_ACTION,
                        'an action is {"seat": s, "bid": n}, {"seat": s, "call"|"rob"|"pass":'
                        ' true} or {"seat": s, "play": [cards]}')
    kinds = [k for k in ACTION_KINDS if k in action]
    if len(kinds) != 1:
        raise RuleError(Reason.INVALID_ACTION,
                        'an action has exactly one of "bid", "call", "rob", "pass" and "play"')
    kind, seat = kinds[0], action["seat"]
    if hand.is_over:
        raise RuleError(Reason.HAND_OVER, "the hand is over")
    if kind == PLAY:
        cards = action[PLAY]
        if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
            raise RuleError(Reason.UNKNOWN_CARD, '"play" must be a list of card strings')
        hand.act(seat, Action.play(cards))
        return
    if kind == BID:
        points = action[BID]
        value = str(points) if is_int(points) else repr(points)
        hand.act(seat, Action(BID, (), value))
        return
    if action[kind] is not True:
        raise RuleError(Reason.INVALID_ACTION, f'"{kind}" must be true')
    hand.act(seat, Action(kind))


def result_of(hand: DoudizhuHand, applied: int, rejected: dict[str, Any] | None
              ) -> dict[str, Any]:
    """The `fiftyk-result/1` object of a 斗地主 hand after `applied` actions."""
    status = REJECTED if rejected else COMPLETED if hand.is_over else IN_PROGRESS
    out: dict[str, Any] = {"format": RESULT_FORMAT, "game": GAME_NAME, "status": status,
                           "actions_applied": applied, "rejected": rejected}
    if hand.result is not None:
        out.update({k: hand.result[k] for k in RESULT_FIELDS})
        return out
    out.update(dict.fromkeys(RESULT_FIELDS))
    out.update({"redeal": False, "landlord": hand.landlord, "bombs": hand.bombs,
                "rockets": hand.rockets})
    if hand.phase == PLAYING:
        out["kitty"] = [str(c) for c in hand.kitty]
    return out


def replay(data: Any) -> tuple[DoudizhuHand, dict[str, Any]]:
    """Replay a 斗地主 transcript: the hand as far as it went, and the ruling on it."""
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
    """Replay a 斗地主 transcript and rule on it; InvalidTranscript if it is not readable."""
    return replay(data)[1]


def export_transcript(hand: DoudizhuHand) -> dict[str, Any]:
    """A stored hand as a transcript whose adjudication reproduces its result."""
    data: dict[str, Any] = {
        "format": TRANSCRIPT_FORMAT,
        "game": GAME_NAME,
        "ruleset": hand.rules.to_json(),
        "players": PLAYERS,
        "dealer": hand.dealer,
        "deck": list(hand.deck),
        "actions": hand.actions,
    }
    if hand.is_over:  # the seed is revealed to everyone once the hand is over
        data["deal"] = deal_inputs(hand.seed, hand.commitment, hand_id=str(hand.id),
                                   contributions=hand.contributions, draw=hand.draw_record)
    return data


__all__ = ["DoudizhuTranscript", "adjudicate", "apply_action", "export_transcript",
           "load_transcript", "replay", "result_of", "start_hand"]
