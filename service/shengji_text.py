"""Plain-text accounts of 升级/拖拉机 hands for the command line (`fiftyk demo --game shengji`).

Everything here formats fiftyk.referee.v1 messages; nothing calls the server. What it tells
is what a spectator may see: declarations, the dealer and trump, how many cards were buried
(never which), the tricks, points, and the levels.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.hand_text import cards_text, trick_text

SUIT_NAMES = {"S": "spades", "H": "hearts", "C": "clubs", "D": "diamonds"}
TEAM_SEATS = ((0, 2), (1, 3))
WINNERS = {"dealer": "the dealer side wins", "attackers": "the attackers take over"}


def team_text(team: int) -> str:
    """`team 0+2`."""
    return "team " + "+".join(str(s) for s in TEAM_SEATS[team])


def levels_text(levels: Sequence[str]) -> str:
    """`team 0+2 at 2, team 1+3 at 5`."""
    return ", ".join(f"{team_text(t)} at {level}" for t, level in enumerate(levels))


def declaration_text(seat: int, cards: Sequence[str], round_: int) -> str:
    """`round 3: seat 1 declares 2H 2H`."""
    return f"round {round_}: seat {seat} declares {cards_text(cards)}"


def trump_text(state: pb.ShengjiState) -> str:
    """`trump: rank 2, hearts (seat 1 declared 2H 2H after round 7)`, or no-trump."""
    suit = SUIT_NAMES.get(state.trump_suit, state.trump_suit) if state.HasField(
        "trump_suit") else "no trump suit"
    text = f"trump: rank {state.trump_rank}, {suit}"
    if state.HasField("declaration"):
        declared = state.declaration
        text += (f" (seat {declared.seat} declared {cards_text(declared.cards)}"
                 f" after round {declared.round})")
    else:
        text += " (nobody declared)"
    return text


def shengji_state_text(state: pb.ShengjiState) -> str:
    """`playing, team 0+2 at 2, team 1+3 at 3; dealer seat 1; trump: ...` (one line)."""
    text = f"{state.phase}, {levels_text(list(state.levels))}"
    if state.HasField("dealer"):
        text += f"; dealer seat {state.dealer}"
    if state.phase != "declaring":
        text += f"; {trump_text(state)}"
    elif state.HasField("declaration"):
        declared = state.declaration
        text += (f"; after round {state.round}, seat {declared.seat}'s"
                 f" {cards_text(declared.cards)} stands")
    return text


def result_lines(result: pb.ShengjiResult, levels_before: Sequence[str]) -> list[str]:
    """A finished hand's scoring: the attackers' points, who won, the levels, the next dealer."""
    detail = json.loads(result.result_json)
    attackers = detail["attackers"]
    seats = "+".join(str(s) for s in attackers["seats"])
    lines = [f"attackers team {seats}: {attackers['trick_points']} trick points,"
             f" kitty bonus {attackers['kitty_bonus']}, penalty {attackers['penalty']}"
             f" = {result.attacker_points} points"]
    step = "level" if result.levels == 1 else "levels"
    lines.append(f"{WINNERS.get(result.side, result.side)}: {result.levels} {step} up")
    changes = ", ".join(f"{team_text(t)} {before} → {after}" for t, (before, after) in
                        enumerate(zip(levels_before, result.levels_after, strict=True)))
    lines.append(f"levels: {changes}; next dealer seat {result.next_dealer}")
    if result.game_over and result.HasField("game_winner"):
        lines.append(f"{team_text(result.game_winner)} wins the match")
    return lines


def match_text(table: pb.TableView, levels: Sequence[str], next_dealer: int) -> str:
    """The match after the last hand: levels, the next dealer, or how it ended."""
    text = f"match after {table.hands_played} hand(s): {levels_text(levels)}"
    if table.match_over:
        return text + f"; over: {table.match_end_reason}"
    return text + f"; next dealer seat {next_dealer}"




class ShengjiAccount:
    """Turns a Shengji hand's public events, as the audit role reads them, into an account.

    The deal is told once, when the kitty is taken (every seat's cards as dealt, and the
    kitty); declarations and windows closed by the timer as they happen; each trick on one
    line tagged with the event versions it spans (a failed throw shows the throw and the
    forced play); the burial with its cards (the audit role sees them); the result last.
    """

    def __init__(self) -> None:
        self.tricks = 0
        self._dealt: list[list[str]] = []
        self._rounds = 0
        self._actions: list[str] = []
        self._first = 0
        self._throw: pb.ShengjiThrowFailed | None = None

    def lines(self, event: pb.Event) -> list[str]:
        """The lines this event completes (most events only extend the deal or the trick)."""
        version = event.aggregate_version
        kind = event.WhichOneof("payload")
        if kind == "shengji_round_dealt":
            dealt = event.shengji_round_dealt
            while len(self._dealt) < len(dealt.hands):
                self._dealt.append([])
            for seat, hand in enumerate(dealt.hands):
                self._dealt[seat].extend(hand.cards)
            self._rounds = dealt.round
            return []
        if kind == "shengji_declared":
            declared = event.shengji_declared
            return [f"[v{version}] " + declaration_text(declared.seat, list(declared.cards),
                                                        declared.round)]
        if kind == "shengji_window_closed" and event.shengji_window_closed.by == "timer":
            return [f"[v{version}] the window after round"
                    f" {event.shengji_window_closed.round} closed on the timer"]
        if kind == "shengji_kitty_taken":
            return self._kitty_taken(version, event.shengji_kitty_taken)
        if kind == "shengji_kitty_buried":
            buried = event.shengji_kitty_buried
            timed_out = " (timed out)" if buried.by_referee else ""
            return [f"[v{version}] seat {buried.seat} buries {cards_text(buried.cards)}"
                    f"{timed_out}"]
        if kind == "shengji_throw_failed":
            self._start(version)
            self._throw = event.shengji_throw_failed
            return []
        if kind == "shengji_cards_played":
            self._start(version)
            self._actions.append(self._play(event.shengji_cards_played))
            return []
        if kind == "shengji_trick_won":
            won = event.shengji_trick_won
            self.tricks += 1
            text = trick_text(self.tricks, self._actions, won.seat, won.points)
            self._actions = []
            return [f"[v{self._first}-v{version}] {text}"]
        return []

    def _start(self, version: int) -> None:
        if not self._actions and self._throw is None:  # the trick's first event
            self._first = version

    def _play(self, played: pb.ShengjiCardsPlayed) -> str:
        throw, self._throw = self._throw, None
        timed_out = " (timed out)" if played.by_referee else ""
        if throw is not None and throw.seat == played.seat:
            return (f"seat {played.seat} throws {cards_text(throw.attempted)}, fails:"
                    f" plays {cards_text(played.cards)}{timed_out}")
        return f"seat {played.seat} {cards_text(played.cards)}{timed_out}"

    def _kitty_taken(self, version: int, taken: pb.ShengjiKittyTaken) -> list[str]:
        lines = [f"[v{version}] the deal: {self._rounds} rounds"]
        lines.extend(f"  seat {seat}: {len(cards)} cards {cards_text(cards)}"
                     for seat, cards in enumerate(self._dealt))
        suit = SUIT_NAMES.get(taken.trump_suit, taken.trump_suit) if taken.HasField(
            "trump_suit") else "no trump suit"
        lines.append(f"  seat {taken.dealer} deals, trump suit: {suit}; it takes the kitty"
                     f" {cards_text(taken.kitty)} ({taken.kitty_count} cards)")
        return lines


def ended_lines(ended: pb.ShengjiHandEnded) -> list[str]:
    """A finished hand's scoring from its `shengji.hand_ended` event (the audit's account)."""
    trump = ended.trump
    suit = SUIT_NAMES.get(trump.suit, trump.suit) if trump.HasField("suit") else "no suit"
    declared = (f", declared by seat {trump.declared_by} with {cards_text(trump.cards)}"
                if trump.HasField("declared_by") else ", nobody declared")
    seats = "+".join(str(s) for s in ended.attacker_seats)
    step = "level" if ended.levels_gained == 1 else "levels"
    changes = ", ".join(f"{team_text(t)} {before} → {after}" for t, (before, after) in
                        enumerate(zip(ended.levels_before, ended.levels_after, strict=True)))
    lines = [
        f"dealer seat {ended.dealer}; trump: rank {trump.rank}, {suit}{declared}",
        f"kitty buried: {cards_text(ended.kitty.buried)} ({ended.kitty.points} points)",
        f"last trick: seat {ended.last_trick_winner} ({ended.last_trick_side}),"
        f" kitty multiplier {ended.kitty_multiplier}",
        f"attackers team {seats}: {ended.attacker_trick_points} trick points, kitty bonus"
        f" {ended.kitty_bonus}, penalty {ended.penalty} = {ended.attacker_points} points",
        f"{WINNERS.get(ended.outcome_side, ended.outcome_side)}:"
        f" {ended.levels_gained} {step} up",
        f"levels: {changes}; next dealer seat {ended.next_dealer}",
    ]
    if ended.HasField("room_points"):
        room = ended.room_points
        lines.append(f"room points: base {room.base} × {room.multiplier};"
                     f" after: {' '.join(str(p) for p in room.after)}")
    if ended.game_over and ended.HasField("game_winner"):
        lines.append(f"{team_text(ended.game_winner)} wins the match")
    return lines


__all__ = ["ShengjiAccount", "declaration_text", "ended_lines", "levels_text", "match_text",
           "result_lines", "shengji_state_text", "team_text", "trump_text"]
