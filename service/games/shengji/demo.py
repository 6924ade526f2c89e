"""`fiftyk demo --game shengji`: bots play 升级/拖拉机 hands through the real API.

Each bot acts only with its own seat token and asks the server what it may do
(`ListLegalPlays`: its declarations while the deal is paced out, a bury for the dealer,
example leads and follows). A leading bot often leads a pair, triple or tractor from the
listed leads and now and then throws two listed leads of one suit together (which may
fail), so a demo shows the game's signature plays. The account tells what a spectator may
see: every declaration, the dealer and trump, how many cards the dealer buried (never
which), every trick with its points, failed throws, the scoring, the levels and, in QQ
rooms, the room points.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

from fiftyk_referee.domain.cards import parse_card
from fiftyk_referee.domain.shengji.cards import TrumpOrder
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.service.cli.hand_text import play_text, trick_text
from fiftyk_referee.service.games.shengji import client as shengji_calls
from fiftyk_referee.service.games.shengji.text import (
    declaration_text,
    levels_text,
    order_of,
    result_lines,
    trump_text,
)
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.convert import options_from_proto
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

DECLARE_PROBABILITY = 0.3
THROW_PROBABILITY = 0.2  # a leading bot throws two listed leads of one suit together
SHAPED_PROBABILITY = 0.5  # else it leads a listed pair, triple, tractor or titanic
SINGLE = 1
Lead = tuple[list[str], str]  # cards and their combination type
MAX_COMMANDS_PER_HAND = 3_000
DECLARING, BURYING = "declaring", "burying"


def _collected(view: pb.HandView) -> int:
    return sum(state.collected for state in view.seats)


def _declare(bot: RefereeClient, table_id: str, hand_id: str, rng: random.Random
             ) -> tuple[pb.HandView, list[str]]:
    """The seat to act in a window declares a listed set now and then, else nothing."""
    legal = bot.legal_plays(table_id, hand_id)
    if legal.plays and rng.random() < DECLARE_PROBABILITY:
        cards = list(rng.choice(list(legal.plays)).cards)
        return shengji_calls.declare(bot, table_id, hand_id, cards).hand, cards
    return shengji_calls.declare(bot, table_id, hand_id).hand, []


def choose_lead(examples: Sequence[Lead], order: TrumpOrder, rng: random.Random) -> Lead:
    """A bot's lead from the listed leads: a throw, a shaped lead, or any listed lead."""
    roll = rng.random()
    if roll < THROW_PROBABILITY:
        throw = _throw(examples, order, rng)
        if throw is not None:
            return throw, "throw"
    shaped = [lead for lead in examples if len(lead[0]) > SINGLE]
    if shaped and roll < THROW_PROBABILITY + SHAPED_PROBABILITY:
        return rng.choice(shaped)
    return rng.choice(list(examples))


def _throw(examples: Sequence[Lead], order: TrumpOrder, rng: random.Random) -> list[str] | None:
    """Two listed leads of one suit group with no card in common, played together."""
    by_group: dict[str, list[list[str]]] = {}
    for cards, _ in examples:
        by_group.setdefault(order.group(parse_card(cards[0])), []).append(cards)
    pairs = [(a, b) for leads in by_group.values() for i, a in enumerate(leads)
             for b in leads[i + 1:] if not set(a) & set(b)]
    if not pairs:
        return None
    first, second = rng.choice(pairs)
    return [*first, *second]


def _rules(platform: RefereeClient, table_id: str) -> ShengjiRules:
    spec = platform.get_table(table_id).ruleset.spec
    return ShengjiRules.from_spec(spec.preset, options_from_proto(spec.options))


def _last_winner(view: pb.HandView) -> int:
    """Who won the last trick (the hand is over: nobody leads a next one)."""
    detail = json.loads(view.shengji.result.result_json)
    return int(detail["last_trick"]["winner"])


def play_hand(platform: RefereeClient, table_id: str, seats: Sequence[RefereeClient],
              number: int, rng: random.Random) -> pb.HandView:
    """Deal one Shengji hand, let the bots play it out, and print it; returns the last view."""
    view = platform.start_hand(table_id).hand
    hand_id = view.hand_id
    state = view.shengji
    dealer = (f"dealer seat {state.dealer}" if state.HasField("dealer")
              else "the dealer comes from the declarations")
    print(f"\nhand {number} {hand_id}: {levels_text(list(state.levels))}; {dealer};"
          f" {state.kitty_size} cards in the kitty")
    levels_before = list(state.levels)
    rules = _rules(platform, table_id)
    tricks = 0
    actions: list[str] = []
    for _ in range(MAX_COMMANDS_PER_HAND):
        if view.status == pb.HAND_STATUS_COMPLETED:
            break
        seat = view.turn_seat
        bot = seats[seat]
        phase = view.shengji.phase
        if phase == DECLARING:
            after, declared = _declare(bot, table_id, hand_id, rng)
            if declared:
                print(f"  {declaration_text(seat, declared, view.shengji.round)}")
            if after.shengji.phase != DECLARING:
                print(f"  the deal ends after round {view.shengji.round}:"
                      f" dealer seat {after.shengji.dealer}, {trump_text(after.shengji)}")
        elif phase == BURYING:
            legal = bot.legal_plays(table_id, hand_id)
            after = shengji_calls.bury(bot, table_id, hand_id, legal.plays[0].cards).hand
            print(f"  seat {seat} takes the kitty and buries {len(legal.plays[0].cards)} cards")
        else:
            listed = [(list(p.cards), p.combination_type)
                      for p in bot.legal_plays(table_id, hand_id).plays]
            if view.trick:
                cards, kind = rng.choice(listed)
            else:
                state = view.shengji
                suit = state.trump_suit if state.HasField("trump_suit") else None
                cards, kind = choose_lead(listed, order_of(rules, state.trump_rank, suit), rng)
            after = bot.play(table_id, hand_id, cards).hand
            failed = after.shengji.failed_throws[len(view.shengji.failed_throws):]
            if failed:
                actions.append(play_text(seat, "throw", cards)
                               + f" (fails: plays {' '.join(failed[0].forced)})")
            else:
                actions.append(play_text(seat, kind, cards))
            if not after.trick:  # the fourth play: the trick was won in the same command
                tricks += 1
                winner = (after.leader if after.HasField("leader") else _last_winner(after))
                points = _collected(after) - _collected(view)
                print(f"  {trick_text(tricks, actions, winner, points)}")
                actions = []
        view = after
    if actions:
        print("  " + trick_text(tricks + 1, actions, None, None) + " (unfinished)")
    if view.status == pb.HAND_STATUS_COMPLETED and view.shengji.HasField("result"):
        print(f"  hand {number} result:")
        for line in result_lines(view.shengji.result, levels_before):
            print(f"    {line}")
    return view


__all__ = ["choose_lead", "play_hand"]
