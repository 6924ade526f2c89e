"""Shengji cards: levels, the trump order of one hand and point cards.

The rules: docs/shengji.md#cards and docs/shengji.md#teams-levels-and-trump.

The cards themselves, their notation and the canonical deck are the shared ones of
`domain/cards.py` (unchanged for 五十K). What is Shengji's own is the order: every hand fixes
a trump rank R (the dealer side's level), a trump suit T or none (no-trump), and whether 2s
are permanent trumps. `TrumpOrder` precomputes, for each of the 54 distinct cards, its suit
group (`TRUMP` or its plain suit), its tier `pos` within that group (equal cards share a
tier) and its `strength` across groups (any trump above any plain card).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from fiftyk_referee.domain.cards import (
    ACE,
    BJ,
    SJ,
    SUITS,
    TWO,
    Card,
    card_points,
    make_deck,
)

TRUMP = "T"  # the suit group of every trump card
# Shengji's natural rank order, low to high: 2 3 4 ... K A (2 is the lowest card here).
RANKS_LOW_TO_HIGH: tuple[int, ...] = (TWO, *range(3, ACE + 1))
LEVELS: tuple[str, ...] = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
LEVEL_RANK: dict[str, int] = dict(zip(LEVELS, RANKS_LOW_TO_HIGH, strict=True))
TOP_LEVEL = len(LEVELS) - 1  # index of A
TRUMP_STRENGTH = 1_000  # added to a trump card's tier so every trump outranks every plain card
POINTS_PER_PACK = 100
DISTINCT_CARDS: tuple[Card, ...] = tuple(make_deck(1, jokers=True))
POINTS: dict[Card, int] = {card: card_points(card) for card in DISTINCT_CARDS}


@dataclass(frozen=True, slots=True)
class CardInfo:
    """One card's place in a hand's order."""

    group: str  # TRUMP or the plain suit letter
    pos: int  # tier within the group, 0 = lowest
    strength: int  # pos, plus TRUMP_STRENGTH for trumps

    @property
    def is_trump(self) -> bool:
        """Whether the card is a trump."""
        return self.group == TRUMP


@dataclass(frozen=True)
class TrumpOrder:
    """The order of every card in one hand: trump rank, trump suit (None: no-trump), 常主 2."""

    rank: int
    suit: str | None
    permanent_two: bool
    info: dict[Card, CardInfo]
    # sort_key(card): low to high by strength, ties by suit letter so orders are
    # deterministic. Every card's key is made once and looked up (sorting is a hot path).
    sort_key: Callable[[Card], tuple[int, str]] = field(init=False, repr=False, compare=False)
    # Each card's suit group, looked up directly (filtering a hand by group is a hot path).
    group_of: dict[Card, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        keys = {card: (info.strength, card.suit) for card, info in self.info.items()}
        object.__setattr__(self, "sort_key", keys.__getitem__)
        object.__setattr__(self, "group_of", {card: info.group for card, info in self.info.items()})

    def in_group(self, cards: Iterable[Card], group: str) -> list[Card]:
        """The cards in suit group `group`, in the order given."""
        group_of = self.group_of
        return [card for card in cards if group_of[card] == group]

    def not_in_group(self, cards: Iterable[Card], group: str) -> list[Card]:
        """The cards outside suit group `group`, in the order given."""
        group_of = self.group_of
        return [card for card in cards if group_of[card] != group]

    def group(self, card: Card) -> str:
        """The card's suit group."""
        return self.info[card].group

    def pos(self, card: Card) -> int:
        """The card's tier within its group."""
        return self.info[card].pos

    def strength(self, card: Card) -> int:
        """The card's strength across groups (trumps above plain cards)."""
        return self.info[card].strength

    def is_trump(self, card: Card) -> bool:
        """Whether the card is a trump in this hand."""
        return self.info[card].group == TRUMP


def trump_order(rank: int, suit: str | None, permanent_two: bool) -> TrumpOrder:
    """The order for trump rank `rank` (a card rank code), trump suit `suit` or None, 常主 2."""
    return _trump_order(rank, suit, permanent_two)


@lru_cache(maxsize=256)
def _trump_order(rank: int, suit: str | None, permanent_two: bool) -> TrumpOrder:
    if rank not in RANKS_LOW_TO_HIGH:
        raise ValueError(f"not a trump rank: {rank}")
    if suit is not None and suit not in SUITS:
        raise ValueError(f"not a suit: {suit}")
    two_is_trump = permanent_two and rank != TWO
    plain = [r for r in RANKS_LOW_TO_HIGH if r != rank and not (two_is_trump and r == TWO)]
    info: dict[Card, CardInfo] = {}
    for plain_suit in SUITS:
        if plain_suit == suit:
            continue
        for pos, r in enumerate(plain):
            info[Card(r, plain_suit)] = CardInfo(plain_suit, pos, pos)
    tiers: list[list[Card]] = []
    if suit is not None:
        tiers += [[Card(r, suit)] for r in plain]
    others = [s for s in SUITS if s != suit]
    if two_is_trump:
        tiers.append([Card(TWO, s) for s in others])
        if suit is not None:
            tiers.append([Card(TWO, suit)])
    tiers.append([Card(rank, s) for s in others])
    if suit is not None:
        tiers.append([Card(rank, suit)])
    tiers += [[SJ], [BJ]]
    for pos, tier in enumerate(tiers):
        for card in tier:
            info[card] = CardInfo(TRUMP, pos, pos + TRUMP_STRENGTH)
    return TrumpOrder(rank, suit, permanent_two, info)


__all__ = [
    "DISTINCT_CARDS", "LEVELS", "LEVEL_RANK", "POINTS", "POINTS_PER_PACK", "RANKS_LOW_TO_HIGH",
    "TOP_LEVEL", "TRUMP", "TRUMP_STRENGTH", "CardInfo", "TrumpOrder", "trump_order",
]
