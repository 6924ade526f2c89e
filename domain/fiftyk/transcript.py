"""Transcripts (`fiftyk-transcript/1`) in, results (`fiftyk-result/1`) out (docs/transcript.md).

A transcript is replayed through the same `Hand` aggregate the live service uses. Only a
malformed file, ruleset or deal makes a transcript unreadable (`InvalidTranscript`); an
action the referee cannot accept is a ruling (`status: rejected`).

Extensions (optional fields; the documented ones keep their meaning):
- an action `{"seat": s, "resign": true}` records a resignation;
- `"first_leader": s` names the seat that leads the first trick when it does not follow from
  the deal (`first_lead=previous_first_out`); exports write it only in that case.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fiftyk_referee.domain.cards import make_deck, parse_card
from fiftyk_referee.domain.deal import deal_inputs, deck_from_hands
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.fiftyk.hand import Hand, check_deck, first_leader, lead_card_of
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.fiftyk.scoring import teams_of
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


@dataclass(frozen=True)
class Transcript:
    """A readable transcript: rules, the deal and the actions (not yet judged)."""

    ruleset: Ruleset
    players: int
    dealer: int
    deck: tuple[str, ...]
    first_leader: int | None
    actions: tuple[Any, ...]


def load_transcript(data: Any) -> Transcript:
    """Validate the file-level structure, ruleset and deal; raise InvalidTranscript."""
    require(isinstance(data, Mapping), "a transcript is a JSON object")
    require(data.get("format") == TRANSCRIPT_FORMAT,
            f'"format" must be "{TRANSCRIPT_FORMAT}"')
    try:
        ruleset = Ruleset.from_json(data.get("ruleset"))
        players = data.get("players")
        require(is_int(players), '"players" must be an integer')
        ruleset.check_players(players)
    except InvalidTranscript:
        raise
    except RuleError as error:
        raise InvalidTranscript(f"ruleset: {error.message}") from error
    dealer = data.get("dealer", players - 1)
    require(is_int(dealer) and 0 <= dealer < players, f'"dealer" must be a seat 0..{players - 1}')
    require(("deck" in data) != ("hands" in data), 'give exactly one of "deck" and "hands"')
    deck = _deck_of(data, ruleset, players, dealer)
    leader = data.get("first_leader")
    require(leader is None or (is_int(leader) and 0 <= leader < players),
            f'"first_leader" must be a seat 0..{players - 1}')
    actions = data.get("actions", [])
    require(isinstance(actions, list), '"actions" must be a list')
    return Transcript(ruleset, players, dealer, tuple(deck), leader, tuple(actions))


def _deck_of(data: Mapping[str, Any], ruleset: Ruleset, players: int, dealer: int) -> list[str]:
    if "deck" in data:
        deck = card_list(data["deck"], '"deck"')
    else:
        hands = data["hands"]
        require(isinstance(hands, list) and len(hands) == players,
                f'"hands" must be a list of {players} card lists')
        parsed = [[parse_card(c) for c in card_list(h, f"hands[{i}]")] for i, h in enumerate(hands)]
        stock_given = data.get("stock", [])
        require(ruleset.has_stock or not stock_given, '"stock" exists only in 5/6-card games')
        stock = [parse_card(c) for c in card_list(stock_given, '"stock"')]
        total = Counter(c for h in parsed for c in h) + Counter(stock)
        require(total == Counter(make_deck(ruleset.packs, jokers=ruleset.jokers)),
                f"hands and stock must be exactly the {ruleset.deck_size}-card deck")
        if ruleset.has_stock:
            require(all(len(h) == ruleset.hand_size for h in parsed),
                    f"every hand must hold {ruleset.hand_size} cards")
        lead = lead_card_of(ruleset.first_lead if ruleset.first_lead.startswith("holder")
                            else "holder:3H")
        try:
            deck = [str(c) for c in deck_from_hands(parsed, stock, dealer, lead)]
        except ValueError as error:
            raise InvalidTranscript(f'"hands": {error}') from error
    try:
        check_deck(ruleset, deck)
    except RuleError as error:
        raise InvalidTranscript(error.message) from error
    return deck


def start_hand(transcript: Transcript) -> Hand:
    """The dealt hand a transcript describes."""
    rules = transcript.ruleset
    hand = Hand.deal_new(
        table_id=TRANSCRIPT_TABLE_ID, number=1, ruleset=rules, players=transcript.players,
        dealer=transcript.dealer, deck=list(transcript.deck),
        previous_first_out=transcript.first_leader,
    )
    if transcript.first_leader is not None and rules.first_lead != "previous_first_out":
        derived = first_leader(rules, transcript.deck, transcript.players, transcript.dealer,
                               None)
        require(derived == transcript.first_leader,
                f'"first_leader" {transcript.first_leader} contradicts the deal (seat'
                f" {derived} leads under first_lead={rules.first_lead})")
    return hand


def apply_action(hand: Hand, action: Any) -> None:
    """Judge one action; raises RuleError with the reason when it cannot be accepted."""
    if not isinstance(action, Mapping) or not is_int(action.get("seat")):
        raise RuleError(Reason.INVALID_ACTION,
                        'an action is {"seat": s, "play": [cards]} or {"seat": s, "pass": true}')
    seat = action["seat"]
    kinds = [k for k in ("play", "pass", "resign") if k in action]
    if len(kinds) != 1:
        raise RuleError(Reason.INVALID_ACTION,
                        'an action has exactly one of "play", "pass" (or "resign")')
    if kinds[0] == "play":
        cards = action["play"]
        if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
            raise RuleError(Reason.UNKNOWN_CARD, '"play" must be a list of card strings')
        hand.play(seat, cards)
    elif action[kinds[0]] is not True:
        raise RuleError(Reason.INVALID_ACTION, f'"{kinds[0]}" must be true')
    elif kinds[0] == "pass":
        hand.pass_turn(seat)
    else:
        hand.resign(seat)


def result_of(hand: Hand, applied: int, rejected: dict[str, Any] | None) -> dict[str, Any]:
    """The `fiftyk-result/1` object for a hand after `applied` actions."""
    status = REJECTED if rejected else COMPLETED if hand.is_over else IN_PROGRESS
    out: dict[str, Any] = {
        "format": RESULT_FORMAT,
        "status": status,
        "actions_applied": applied,
        "rejected": rejected,
        "finish_order": list(hand.out),
        "collected": list(hand.collected),
    }
    if hand.result is not None:
        out.update({k: hand.result[k] for k in ("teams", "seats", "winner")})
    else:
        out.update(_unscored(hand))
    return out


def _unscored(hand: Hand) -> dict[str, Any]:
    teams = teams_of(hand.rules, hand.players)
    return {
        "teams": [
            {"seats": list(team), "collected": sum(hand.collected[s] for s in team),
             "score": None, "rating": None}
            for team in teams
        ],
        "seats": [{"seat": s, "score": None, "rating": None} for s in range(hand.players)],
        "winner": {"team": None, "seat": None},
    }


def replay(data: Any) -> tuple[Hand, dict[str, Any]]:
    """Replay a transcript: the hand as far as it went, and the ruling on it."""
    transcript = load_transcript(data)
    hand = start_hand(transcript)
    for index, action in enumerate(transcript.actions):
        try:
            apply_action(hand, action)
        except RuleError as error:
            rejected = {"action": index, "reason": error.reason.value, "message": error.message}
            return hand, result_of(hand, index, rejected)
    return hand, result_of(hand, len(transcript.actions), None)


def adjudicate(data: Any) -> dict[str, Any]:
    """Replay a transcript and rule on it; InvalidTranscript if it is not readable."""
    return replay(data)[1]


def export_transcript(hand: Hand) -> dict[str, Any]:
    """A stored hand as a transcript whose adjudication reproduces its result."""
    data: dict[str, Any] = {
        "format": TRANSCRIPT_FORMAT,
        "ruleset": hand.rules.to_json(),
        "players": hand.players,
        "dealer": hand.dealer,
        "deck": list(hand.deck),
        "actions": [dict(a) for a in hand.actions],
    }
    if hand.rules.first_lead == "previous_first_out":
        data["first_leader"] = hand.first_leader
    if hand.is_over:  # the seed is revealed to everyone once the hand is over
        data["deal"] = deal_inputs(hand.seed, hand.commitment, hand_id=str(hand.id),
                                   contributions=hand.contributions,
                                   draw=hand.draw_record)
    return data
