"""Plain-text accounts of 升级/拖拉机 hands for the command line (`fiftyk demo`, `fiftyk replay`).

Everything here formats fiftyk.referee.v1 messages; nothing calls the server. The demo tells
what a spectator may see: declarations, the dealer and trump, how many cards were buried
(never which), the tricks, points, the levels and the room points. The replay (the audit
role) also shows every seat's cards, sorted as a player holds them — trumps first, strongest
first, then each plain suit — and names every play's shape as the table's rules read it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from fiftyk_referee.domain.cards import parse_card
from fiftyk_referee.domain.errors import InvalidCombination
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, TRUMP, TrumpOrder, trump_order
from fiftyk_referee.domain.shengji.combinations import THROW, Component
from fiftyk_referee.domain.shengji.play import Lead, play_key
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.domain.shengji.scoring import team_of
from fiftyk_referee.domain.shengji.tricks import TrickRules
from fiftyk_referee.service.cli.hand_text import cards_text, trick_text
from fiftyk_referee.service.grpc.convert import options_from_proto
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

SUIT_NAMES = {"S": "spades", "H": "hearts", "C": "clubs", "D": "diamonds"}
PLAIN_SUIT_ORDER = "SHCD"  # how a sorted hand lays out its plain suits, after the trumps
TEAM_SEATS = ((0, 2), (1, 3))
WINNERS = {"dealer": "the dealer side wins", "attackers": "the attackers take over"}


def rules_of(dealt: pb.ShengjiHandDealt) -> ShengjiRules:
    """The hand's resolved ruleset, from its `shengji.hand_dealt` event."""
    spec = dealt.ruleset.spec
    return ShengjiRules.from_spec(spec.preset, options_from_proto(spec.options))


def order_of(rules: ShengjiRules, level: str, suit: str | None) -> TrumpOrder:
    """The hand's card order: trump rank `level`, trump suit `suit` (None: no-trump)."""
    return trump_order(LEVEL_RANK[level], suit, rules.permanent_two)


def sorted_cards(cards: Iterable[str], order: TrumpOrder) -> list[str]:
    """Cards as a player holds them: trumps strongest first, then spades, hearts, clubs,
    diamonds (the plain ones left), each strongest first."""
    def place(card: str) -> tuple[int, int, str]:
        info = order.info[parse_card(card)]
        group = -1 if info.group == TRUMP else PLAIN_SUIT_ORDER.index(info.group)
        return group, -info.strength, card
    return sorted(cards, key=place)


def sort_seat_cards(view: pb.HandView, rules: ShengjiRules) -> None:
    """Sort every seat's cards in a view (and the kitty) as a player holds them."""
    state = view.shengji
    if state.phase == "declaring":
        return  # no trump suit yet: the deal's order is all there is
    suit = state.trump_suit if state.HasField("trump_suit") else None
    order = order_of(rules, state.trump_rank, suit)
    for seat in view.seats:
        ordered = sorted_cards(seat.cards, order)
        del seat.cards[:]
        seat.cards.extend(ordered)
    kitty = sorted_cards(state.kitty, order)
    del state.kitty[:]
    state.kitty.extend(kitty)


PHASE_ACTIONS = {"declaring": "declare or declare nothing", "burying": "bury the kitty",
                 "playing": "play"}


def to_act_text(view: pb.HandView) -> str:
    """Who is to act and what they do: `seat 2 to play (leads)`."""
    phase = view.shengji.phase
    if phase == "declaring":
        spoken = set(view.shengji.spoken)
        waiting = [seat for seat in range(len(TEAM_SEATS) * 2) if seat not in spoken]
        return ("seats " + ", ".join(map(str, waiting))
                + " may declare or declare nothing (the window is open)")
    if not view.HasField("turn_seat"):
        return "nobody to act"
    what = PHASE_ACTIONS.get(phase, "act")
    leads = " (leads)" if phase == "playing" and not view.trick else ""
    return f"seat {view.turn_seat} to {what}{leads}"


def _parts(components: Sequence[Component]) -> str:
    return "+".join(c.kind for c in components)


def shape_text(cards: Sequence[str], order: TrumpOrder, tricks: TrickRules) -> str:
    """A lead's shape as the table reads it: `tractor`, or `throw (pair+single)`."""
    lead = tricks.read([parse_card(c) for c in cards], order)
    return f"throw ({_parts(lead.components)})" if lead.kind == THROW else lead.kind


def follow_text(cards: Sequence[str], lead: Lead, order: TrumpOrder, tricks: TrickRules) -> str:
    """What a follow does: `follows: pair+single`, `trumps: pair`, `discards`."""
    played = [parse_card(c) for c in cards]
    groups = {order.info[c].group for c in played}
    if len(groups) != 1:
        return "discards"
    (group,) = groups
    try:
        shape = _parts(tricks.read(played, order).components)
    except InvalidCombination:  # unreachable: one suit group always reads
        shape = "cards"
    if group == lead.group:
        return f"follows: {shape}"
    if group == TRUMP and play_key(played, lead, order) is not None:
        return f"trumps: {shape}"
    return "discards"


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
    room = detail.get("room_points")
    if room is not None:
        lines.append(room_points_text(room["base"], room["multiplier"], room["delta"],
                                      room["after"]))
    if result.game_over and result.HasField("game_winner"):
        lines.append(f"{team_text(result.game_winner)} wins the match")
    return lines


def room_points_text(base: int, multiplier: int, delta: Iterable[int],
                     after: Iterable[int]) -> str:
    """`room points: base 4 × 2, seats +8 -8 +8 -8; after: 8 -8 8 -8` (QQ rooms)."""
    moved = " ".join(f"{d:+d}" for d in delta)
    return (f"room points: base {base} × {multiplier}, seats {moved};"
            f" after: {' '.join(str(p) for p in after)}")


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

    def __init__(self, dealt: pb.ShengjiHandDealt) -> None:
        self.tricks = 0
        self.rules = rules_of(dealt)
        self.tricks_rules = TrickRules.of(self.rules)
        self._levels = list(dealt.levels)
        self._order: TrumpOrder | None = None
        self._lead: Lead | None = None
        self._dealt: list[list[str]] = []
        self._rounds = 0
        self._actions: list[str] = []
        self._first = 0
        self._throw: pb.ShengjiThrowFailed | None = None

    def _sorted(self, cards: Iterable[str]) -> list[str]:
        return sorted_cards(cards, self._order) if self._order is not None else list(cards)

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
            return [f"[v{version}] seat {buried.seat} buries"
                    f" {cards_text(self._sorted(buried.cards))}{timed_out};"
                    f" seat {buried.seat} leads"]
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
            if won.HasField("next_leader"):
                text += " and leads"
            self._actions = []
            self._lead = None
            return [f"[v{self._first}-v{version}] {text}"]
        return []

    def _start(self, version: int) -> None:
        if not self._actions and self._throw is None:  # the trick's first event
            self._first = version

    def _play(self, played: pb.ShengjiCardsPlayed) -> str:
        throw, self._throw = self._throw, None
        timed_out = " (timed out)" if played.by_referee else ""
        cards = self._sorted(played.cards)
        seat = played.seat
        order, tricks = self._order, self.tricks_rules
        if order is None:  # no trump yet: unreachable, plays follow the kitty
            return f"seat {seat} {cards_text(cards)}{timed_out}"
        if self._lead is None:
            self._lead = tricks.read([parse_card(c) for c in played.cards], order)
            shape = shape_text(played.cards, order, tricks)
            if throw is not None and throw.seat == seat:
                attempted = self._sorted(throw.attempted)
                parts = shape_text(throw.attempted, order, tricks).removeprefix("throw ")
                return (f"seat {seat} throws {cards_text(attempted)} {parts}, fails:"
                        f" forced to play {shape} {cards_text(cards)}{timed_out}")
            return f"seat {seat} leads {shape} {cards_text(cards)}{timed_out}"
        what = follow_text(played.cards, self._lead, order, tricks)
        return f"seat {seat} {what} {cards_text(cards)}{timed_out}"

    def _kitty_taken(self, version: int, taken: pb.ShengjiKittyTaken) -> list[str]:
        level = self._levels[team_of(taken.dealer)]
        trump = taken.trump_suit if taken.HasField("trump_suit") else None
        self._order = order_of(self.rules, level, trump)
        lines = [f"[v{version}] the deal: {self._rounds} rounds (sorted: trumps first)"]
        lines.extend(f"  seat {seat}: {len(cards)} cards {cards_text(self._sorted(cards))}"
                     for seat, cards in enumerate(self._dealt))
        suit = SUIT_NAMES.get(trump, trump) if trump is not None else "no trump suit"
        lines.append(f"  seat {taken.dealer} deals, trump: rank {level}, {suit}; it takes the"
                     f" kitty {cards_text(self._sorted(taken.kitty))} ({taken.kitty_count}"
                     f" cards) and buries {taken.kitty_count}")
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
        lines.append(room_points_text(room.base, room.multiplier, room.delta, room.after))
    if ended.game_over and ended.HasField("game_winner"):
        lines.append(f"{team_text(ended.game_winner)} wins the match")
    return lines


__all__ = ["ShengjiAccount", "declaration_text", "ended_lines", "follow_text", "levels_text",
           "match_text", "result_lines", "room_points_text", "rules_of", "shape_text",
           "shengji_state_text", "sort_seat_cards", "sorted_cards", "team_text", "to_act_text",
           "trump_text"]
