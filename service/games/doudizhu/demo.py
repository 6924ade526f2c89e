"""`fiftyk demo --game doudizhu`: bots play 斗地主 hands through the real API.

Each bot acts only with its own seat token, asks the server what it may do
(`ListLegalPlays`), and plays as a careful beginner would:

- it bids by its hand's strength (jokers, 2s, aces and bombs count; `strength`), higher the
  stronger, and passes a weak hand; where the landlord is called and robbed, it calls a fair
  hand and robs only a strong one;
- it keeps its bombs and the rocket: it never breaks one up, leads one only when it holds
  nothing else, and plays one on another's play only to stop an opponent about to go out
  (or to go out itself);
- it leads its lowest cards, the longest combination first, and follows with the cheapest
  play that beats the table; a farmer lets its partner's play stand.

The account tells what a spectator may see: every bid, the landlord and the 底牌 it shows,
each lead with its plays and passes, every bomb and the multiplier, the scores.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from fiftyk_referee.domain.game import PASS
from fiftyk_referee.service.cli.hand_text import cards_text
from fiftyk_referee.service.games.doudizhu import doudizhu_pb2 as dpb
from fiftyk_referee.service.games.doudizhu.text import (
    RANK_ORDER,
    bid_text,
    multiplier_text,
    rank_of,
    result_lines,
    sorted_cards,
    state_of,
)
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

BID, CALL, ROB, PLAY = "bid", "call", "rob", "play"
BOMBS = ("bomb", "rocket")
JOKERS = ("SJ", "BJ")
MAX_COMMANDS_PER_HAND = 500  # a hand has 3 bids to 9 and at most 54 plays, and passes
LISTED_PLAYS = 5_000  # a bot reads this many of its legal plays (a lead may have more)
# What a card or a bomb adds to a hand's strength (`strength`), and the strength a bid needs.
STRENGTH = {"BJ": 4, "SJ": 3, "2": 2, "A": 1}
BOMB_STRENGTH = 6
ROCKET_STRENGTH = 8  # both jokers together: the rocket, instead of 4 + 3
BID_AT = ((12, 3), (9, 2), (6, 1))  # strength -> points bid
CALL_AT, ROB_AT = 6, 9
DANGER = 4  # an opponent holding this many cards or fewer is stopped with a bomb


def strength(cards: Sequence[str]) -> int:
    """How strong a hand is for the bidding: 4 for the big joker, 3 for the small one (8 for
    both, the rocket), 2 per 2, 1 per ace, 6 per bomb."""
    counts = Counter(rank_of(card) for card in cards)
    score = sum(STRENGTH.get(rank, 0) * n for rank, n in counts.items())
    if counts["SJ"] and counts["BJ"]:
        score += ROCKET_STRENGTH - STRENGTH["SJ"] - STRENGTH["BJ"]
    return score + BOMB_STRENGTH * sum(1 for n in counts.values() if n == 4)


def choose_bid(kinds: Sequence[str], cards: Sequence[str], highest: int
               ) -> tuple[str, str | None]:
    """A bot's word in the bidding: the action kind and its value (a bid's points)."""
    score = strength(cards)
    if BID in kinds:
        for needed, points in BID_AT:
            if score >= needed and points > highest:
                return BID, str(points)
        return PASS, None
    if CALL in kinds and score >= CALL_AT:
        return CALL, None
    if ROB in kinds and score >= ROB_AT:
        return ROB, None
    return PASS, None


def _kept(cards: Sequence[str]) -> set[str]:
    """The ranks a bot keeps whole: its bombs' ranks, and the jokers when it holds both."""
    counts = Counter(rank_of(card) for card in cards)
    kept = {rank for rank, n in counts.items() if n == 4}
    if counts["SJ"] and counts["BJ"]:
        kept |= set(JOKERS)
    return kept


def _breaks_a_bomb(play: pb.LegalPlay, kept: set[str]) -> bool:
    if play.combination_type in BOMBS:
        return False
    return any(rank_of(card) in kept for card in play.cards)


def _low_first(play: pb.LegalPlay) -> tuple[int, int]:
    """Lowest cards first, then the longest play (sheds most)."""
    return min(RANK_ORDER.index(rank_of(card)) for card in play.cards), -len(play.cards)


def choose_play(legal: pb.ListLegalPlaysResponse, cards: Sequence[str],
                state: dpb.HandView, seat: int) -> pb.LegalPlay | None:
    """A bot's play (None: pass). See the module's docstring for how it plays."""
    plays = list(legal.plays)
    if not plays:
        return None
    kept = _kept(cards)
    whole = [p for p in plays if not _breaks_a_bomb(p, kept)]
    ordinary = sorted((p for p in whole if p.combination_type not in BOMBS), key=_low_first)
    bombs = sorted((p for p in whole if p.combination_type in BOMBS), key=_low_first)
    if not state.HasField("top"):  # it leads
        return (ordinary or bombs or sorted(plays, key=_low_first))[0]
    top = state.top.seat
    partner = state.HasField("landlord") and seat != state.landlord and top != state.landlord
    if partner and legal.may_pass:
        return None
    if ordinary:
        return ordinary[0]
    goes_out = [p for p in bombs if len(p.cards) == len(cards)]
    if goes_out:
        return goes_out[0]
    if bombs and state.counts[top] <= DANGER:
        return bombs[0]
    return None if legal.may_pass else sorted(plays, key=_low_first)[0]


class _Rounds:
    """The demo's account of the play, round by round (a round ends when two passes in a
    row give the lead back), from the bots' own answers."""

    def __init__(self) -> None:
        self.count = 0
        self.actions: list[str] = []

    def add(self, text: str) -> None:
        self.actions.append(text)

    def close(self, end: str) -> str:
        self.count += 1
        line = f"round {self.count}: " + " · ".join(self.actions) + f" → {end}"
        self.actions = []
        return line


def play_hand(platform: RefereeClient, table_id: str, seats: Sequence[RefereeClient],
              number: int, rng: random.Random) -> pb.HandView:
    """Deal one 斗地主 hand, let the bots bid and play it out, and print it; returns the
    last view. (`rng` is unused: the bots play by rule, not by chance.)"""
    view = platform.start_hand(table_id).hand
    hand_id = view.hand_id
    print(f"\nhand {number} {hand_id}: dealer seat {view.dealer},"
          f" seat {view.turn_seat} bids first")
    for seat, bot in enumerate(seats):
        held = sorted_cards(bot.hand_view(table_id, hand_id).own_cards)
        print(f"  seat {seat} bot-{seat}: {cards_text(held)} (strength {strength(held)})")
    rounds = _Rounds()
    for _ in range(MAX_COMMANDS_PER_HAND):
        if view.status == pb.HAND_STATUS_COMPLETED or not view.HasField("turn_seat"):
            break
        seat = view.turn_seat
        bot = seats[seat]
        own = bot.hand_view(table_id, hand_id)
        state = state_of(own)
        if state.phase == "bidding":
            legal = bot.legal_plays(table_id, hand_id)
            highest = max((b.points for b in state.bids), default=0)
            kind, value = choose_bid(list(legal.kinds), list(own.own_cards), highest)
            after = bot.act(table_id, hand_id, kind, value=value).hand
            done = state_of(after)
            print(f"  {bid_text(done.bids[-1])}")
            if done.HasField("landlord"):
                print(f"  seat {done.landlord} is the landlord and shows the 底牌"
                      f" {cards_text(sorted_cards(done.kitty))};"
                      f" {multiplier_text(done.multiplier)}")
        else:
            legal = bot.legal_plays(table_id, hand_id, max_plays=LISTED_PLAYS)
            choice = choose_play(legal, list(own.own_cards), state, seat)
            if choice is None:
                after = bot.act(table_id, hand_id, PASS).hand
                rounds.add(f"seat {seat} passes")
                done = state_of(after)
                if not done.HasField("top") and after.status != pb.HAND_STATUS_COMPLETED:
                    print(f"  {rounds.close(f'seat {after.turn_seat} leads')}")
            else:
                after = bot.act(table_id, hand_id, PLAY, list(choice.cards)).hand
                done = state_of(after)
                text = (f"seat {seat} {choice.combination_type}"
                        f" {cards_text(sorted_cards(choice.cards))}")
                if choice.combination_type in BOMBS:
                    text += f" ({multiplier_text(done.multiplier)})"
                rounds.add(text)
        view = after
    if rounds.actions:
        ended = view.status == pb.HAND_STATUS_COMPLETED
        print(f"  {rounds.close(f'seat {seat} goes out' if ended else 'unfinished')}")
    if view.status == pb.HAND_STATUS_COMPLETED:
        state = state_of(view)
        print(f"  hand {number} result:")
        for line in result_lines(state.result):
            print(f"    {line}")
    return view


__all__ = ["choose_bid", "choose_play", "play_hand", "strength"]
