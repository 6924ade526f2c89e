"""Plain-text accounts of 斗地主 hands for the command line (`fiftyk demo`, `fiftyk replay`).

Everything here formats messages (the core's and the game's own, fiftyk.games.doudizhu.v1,
which travel in `game_view`, `game_outcome` and `game_event`); nothing calls the server. The
demo tells what a spectator may see: the bidding, the landlord and the 底牌 it shows, every
play and pass, bombs and the multiplier, the scores. The replay (the audit role) also shows
every seat's cards as dealt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from google.protobuf.message import Message

from fiftyk_referee.service.cli.hand_text import cards_text
from fiftyk_referee.service.games.doudizhu import doudizhu_pb2 as dpb
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

GAME = "doudizhu"
# The game's events, by name, and the message each carries in `Event.game_event`.
EVENT_MESSAGES: dict[str, type[Message]] = {
    "doudizhu.hand_dealt": dpb.HandDealt,
    "doudizhu.bid": dpb.Bid,
    "doudizhu.landlord_chosen": dpb.LandlordChosen,
    "doudizhu.cards_played": dpb.CardsPlayed,
    "doudizhu.passed": dpb.Passed,
    "doudizhu.trick_ended": dpb.TrickEnded,
    "doudizhu.hand_ended": dpb.HandEnded,
}
RANK_ORDER = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2", "SJ", "BJ")
SUIT_ORDER = "SHCD"


def payload(event: pb.Event) -> Message:
    """A 斗地主 event's own message (`game_event`, unpacked as its name says)."""
    message = EVENT_MESSAGES[event.name]()
    if not event.game_event.Unpack(message):
        raise ValueError(f"{event.name} carries a {event.game_event.type_url}")
    return message


def state_of(view: pb.HandView) -> dpb.HandView:
    """What only a 斗地主 hand shows (its `game_view`)."""
    state = dpb.HandView()
    if not view.game_view.Unpack(state):
        raise ValueError(f"not a 斗地主 view: {view.game_view.type_url}")
    return state


def result_of(score: pb.HandScore) -> dpb.HandResult:
    """A scored 斗地主 hand's result (its `game_outcome`)."""
    result = dpb.HandResult()
    if not score.game_outcome.Unpack(result):
        raise ValueError(f"not a 斗地主 result: {score.game_outcome.type_url}")
    return result


def rank_of(card: str) -> str:
    """A card's rank: `10` of `10S`, `SJ` of the small joker."""
    return card if card in ("SJ", "BJ") else card[:-1]


def sorted_cards(cards: Iterable[str]) -> list[str]:
    """Cards as a player holds them: by rank 3 … A 2 SJ BJ, suits S H C D."""
    def place(card: str) -> tuple[int, int]:
        suit = card[-1] if card not in ("SJ", "BJ") else ""
        return RANK_ORDER.index(rank_of(card)), SUIT_ORDER.find(suit)
    return sorted(cards, key=place)


def bid_text(bid: dpb.Bid) -> str:
    """`seat 1 bids 2`, `seat 0 robs the landlord`, `seat 2 passes`."""
    late = " (timed out)" if bid.by_referee else ""
    if bid.action == "bid":
        what = f"bids {bid.points}"
    elif bid.action == "call":
        what = "calls the landlord"
    elif bid.action == "rob":
        what = "robs the landlord"
    else:
        what = "passes"
    return f"seat {bid.seat} {what}{late}"


def multiplier_text(multiplier: dpb.Multiplier) -> str:
    """`× 8 (bid 2, 1 bomb, the rocket)`."""
    parts = [f"bid {multiplier.bid}"]
    if multiplier.robs:
        parts.append(f"{multiplier.robs} rob{'s' if multiplier.robs != 1 else ''}")
    if multiplier.bombs:
        parts.append(f"{multiplier.bombs} bomb{'s' if multiplier.bombs != 1 else ''}")
    if multiplier.rockets:
        parts.append("the rocket")
    if multiplier.spring:
        parts.append("spring")
    if multiplier.anti_spring:
        parts.append("anti-spring")
    return f"× {multiplier.total} ({', '.join(parts)})"


def play_line(seat: int, combination_type: str, cards: Sequence[str], *,
              by_referee: bool = False) -> str:
    """`seat 0 pair 5S 5H`."""
    late = " (timed out)" if by_referee else ""
    return f"seat {seat} {combination_type} {cards_text(sorted_cards(cards))}{late}"


def scores_text(scores: Sequence[int]) -> str:
    """`seat 0 +4, seat 1 -2, seat 2 -2`."""
    return ", ".join(f"seat {seat} {score:+d}" for seat, score in enumerate(scores)) or "-"


def result_lines(result: dpb.HandResult) -> list[str]:
    """A finished hand's scoring: who won, the multiplier and what made it, the scores."""
    if result.redeal:
        return ["every seat passed: no landlord, no score; the table deals again"]
    winner = (f"the landlord (seat {result.landlord}) wins" if result.winner == "landlord"
              else f"the farmers win against the landlord (seat {result.landlord})")
    return [winner,
            f"base {result.base} {multiplier_text(result.multiplier)} = {result.unit} per farmer,"
            " twice that for the landlord",
            f"scores: {scores_text(result.scores)}"]


def state_text(state: dpb.HandView) -> str:
    """`playing; landlord seat 1, 底牌 3S 9H BJ; × 4 (bid 2, 1 bomb)` (one line)."""
    text = state.phase
    if state.HasField("landlord"):
        text += f"; landlord seat {state.landlord}"
    if state.kitty:
        text += f", 底牌 {cards_text(sorted_cards(state.kitty))}"
    if state.phase != "bidding":
        text += f"; {multiplier_text(state.multiplier)}"
    elif state.bids:
        text += "; " + ", ".join(bid_text(b) for b in state.bids)
    return text


def to_act_text(view: pb.HandView) -> str:
    """`seat 2 to bid`, `seat 0 to play (leads)`, `nobody to act`."""
    if not view.HasField("turn_seat"):
        return "nobody to act"
    state = state_of(view)
    if state.phase == "bidding":
        return f"seat {view.turn_seat} to bid"
    leads = " (leads)" if not state.HasField("top") else ""
    return f"seat {view.turn_seat} to play{leads}"


class DoudizhuAccount:
    """Turns a 斗地主 hand's public events, in order, into an account: the deal (every seat's
    cards where the reader may see them), each bid, the landlord and its 底牌, each round of
    play (its plays and passes, until two passes in a row give the lead back) on one line
    tagged with the event versions it spans (the result is `result_lines`)."""

    def __init__(self) -> None:
        self.rounds = 0
        self._actions: list[str] = []
        self._first = 0

    def lines(self, event: pb.Event) -> list[str]:
        """The lines this event completes (plays and passes only extend the round)."""
        version = event.aggregate_version
        message = payload(event)
        if isinstance(message, dpb.HandDealt):
            return [f"[v{version}] dealt: 17 cards each, {message.kitty_count} kept back;"
                    f" seat {message.first_bidder} bids first",
                    *(f"  seat {h.seat}: {h.card_count} cards"
                      f" {cards_text(sorted_cards(h.cards))}" if h.cards
                      else f"  seat {h.seat}: {h.card_count} cards" for h in message.hands)]
        if isinstance(message, dpb.Bid):
            return [f"[v{version}] {bid_text(message)}"]
        if isinstance(message, dpb.LandlordChosen):
            robs = f", {message.robs} rob(s)" if message.robs else ""
            return [f"[v{version}] seat {message.landlord} is the landlord (bid"
                    f" {message.bid}{robs}), takes and shows the 底牌"
                    f" {cards_text(sorted_cards(message.kitty))} and leads"]
        if isinstance(message, dpb.CardsPlayed):
            self._start(version)
            self._actions.append(play_line(message.seat, message.combination_type,
                                           message.cards, by_referee=message.by_referee))
            return []
        if isinstance(message, dpb.Passed):
            self._start(version)
            self._actions.append(f"seat {message.seat} passes"
                                 + (" (timed out)" if message.by_referee else ""))
            return []
        if isinstance(message, dpb.TrickEnded):
            return self._close(version, f"seat {message.next_leader} leads")
        if isinstance(message, dpb.HandEnded):  # its result is told after the account
            out = message.result.winning_seat
            return self._close(version, f"seat {out} goes out") if self._actions else []
        return []

    def _start(self, version: int) -> None:
        if not self._actions:
            self._first = version

    def _close(self, version: int, end: str) -> list[str]:
        self.rounds += 1
        text = f"round {self.rounds}: " + " · ".join(self._actions) + f" → {end}"
        self._actions = []
        return [f"[v{self._first}-v{version}] {text}"]


def result_json(result: dpb.HandResult) -> dict[str, object]:
    """The whole result document a HandResult carries."""
    loaded: dict[str, object] = json.loads(result.result_json)
    return loaded


__all__ = ["EVENT_MESSAGES", "DoudizhuAccount", "bid_text", "multiplier_text", "payload",
           "play_line", "rank_of", "result_json", "result_lines", "result_of", "scores_text",
           "sorted_cards", "state_of", "state_text", "to_act_text"]
