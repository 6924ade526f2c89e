"""Combinations (docs/rules.md#combinations) and who beats what (docs/rules.md#who-beats-what).

`classify` turns cards into the one combination they form under a ruleset; `beats` compares
two combinations. Ranks are compared through integer keys that a ruleset fixes once (see
`tables`), so both are a handful of dictionary lookups.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from fiftyk_referee.domain.cards import (
    ACE,
    BIG_JOKER,
    FIVE,
    KING,
    SMALL_JOKER,
    SUITS,
    TEN,
    THREE,
    TWO,
    Card,
    canonical_key,
    card_points,
    rank_name,
    sort_cards,
)
from fiftyk_referee.domain.errors import InvalidCombination
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset

# Type codes (docs/rules.md#combinations).
SINGLE = "single"
PAIR = "pair"
TRIPLE = "triple"
STRAIGHT = "straight"
PAIR_STRAIGHT = "pair_straight"
TRIPLE_STRAIGHT = "triple_straight"
TRIPLE_WITH_SINGLE = "triple_with_single"
TRIPLE_WITH_PAIR = "triple_with_pair"
TRIPLE_STRAIGHT_WITH_SINGLES = "triple_straight_with_singles"
TRIPLE_STRAIGHT_WITH_PAIRS = "triple_straight_with_pairs"
FOUR_WITH_TWO = "four_with_two"
FIFTY_K = "fifty_k"
PURE_FIFTY_K = "pure_fifty_k"
BOMB = "bomb"
JOKER_PAIR_MIXED = "joker_pair_mixed"
SMALL_JOKER_PAIR = "small_joker_pair"
BIG_JOKER_PAIR = "big_joker_pair"
JOKER_TRIPLE = "joker_triple"
JOKER_QUAD = "joker_quad"
DOUBLE_FIFTY_K = "double_fifty_k"
PURE_DOUBLE_FIFTY_K = "pure_double_fifty_k"

SEQUENCE_WIDTH = {STRAIGHT: 1, PAIR_STRAIGHT: 2, TRIPLE_STRAIGHT: 3}

# Ladder rungs (docs/rules.md#who-beats-what), lowest first; 0 means a normal (non-bomb) type.
NORMAL = 0
RUNG_BOMB_3 = 10
RUNG_FIFTY_K = 20
RUNG_JOKER_PAIR_MIXED = 30
RUNG_PURE_FIFTY_K = 40
RUNG_SMALL_JOKER_PAIR = 50
RUNG_BIG_JOKER_PAIR = 60
RUNG_BOMB_4 = 70
RUNG_BOMB_5 = 80
RUNG_DOUBLE_FIFTY_K = 85
RUNG_PURE_DOUBLE_FIFTY_K = 87
RUNG_JOKER_TRIPLE = 90
RUNG_BOMB_6 = 100
RUNG_BOMB_7 = 110
RUNG_JOKER_QUAD = 120
RUNG_BOMB_8 = 130
BOMB_RUNGS = {3: RUNG_BOMB_3, 4: RUNG_BOMB_4, 5: RUNG_BOMB_5, 6: RUNG_BOMB_6, 7: RUNG_BOMB_7,
              8: RUNG_BOMB_8}
JOKER_RUNGS = {
    JOKER_PAIR_MIXED: RUNG_JOKER_PAIR_MIXED, SMALL_JOKER_PAIR: RUNG_SMALL_JOKER_PAIR,
    BIG_JOKER_PAIR: RUNG_BIG_JOKER_PAIR, JOKER_TRIPLE: RUNG_JOKER_TRIPLE,
    JOKER_QUAD: RUNG_JOKER_QUAD,
}
# Pure 50K suit strength under pure_fifty_k_suit_order: spades > hearts > clubs > diamonds.
SUIT_STRENGTH = {suit: len(SUITS) - i for i, suit in enumerate(SUITS)}


@dataclass(frozen=True, init=False)
class Combination:
    """A play: its type code, canonical cards, rank key (same-type order) and ladder rung."""

    type: str
    cards: tuple[Card, ...]
    rank: int
    rung: int

    def __init__(self, type: str, cards: tuple[Card, ...], rank: int, rung: int) -> None:
        # Frozen: the values go straight into __dict__. A frozen dataclass's own __init__
        # sets each through object.__setattr__, about three times the cost, and legal-play
        # lists make dozens of combinations per call.
        values = self.__dict__
        values["type"] = type
        values["cards"] = cards
        values["rank"] = rank
        values["rung"] = rung

    @property
    def size(self) -> int:
        """Number of cards."""
        return len(self.cards)

    @property
    def is_bomb_class(self) -> bool:
        """Bombs, 50Ks and joker combos: the classes that can beat other types."""
        return self.rung != NORMAL

    def points(self, *, joker_points: bool = False) -> int:
        """Point value of the cards."""
        return sum(card_points(c, joker_points=joker_points) for c in self.cards)

    def card_strings(self) -> list[str]:
        """Canonical notation of the cards."""
        return [str(c) for c in self.cards]

    def __str__(self) -> str:
        return f"{self.type}({' '.join(self.card_strings())})"


class Tables:
    """Rank keys and sequence orders that a ruleset fixes; built once per ruleset."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        # Single/pair/same-type order: natural order, or 3 above 2 with three_high.
        step = 2
        self.key: dict[int, int] = {r: r * step for r in range(THREE, BIG_JOKER + 1)}
        if ruleset.three_high:
            self.key[THREE] = TWO * step + 1
        self.mixed_pair_key = (BIG_JOKER + 1) * step
        self.seq_low_rank = THREE + 1 if ruleset.three_high else THREE
        order = ruleset.sequence_order
        # ace_two_low_singles_only keeps A (and 2) out of pair and triple straights entirely.
        multi_top = KING if order == "ace_two_low_singles_only" else ACE
        self.seq_high_rank = {1: ACE, 2: multi_top, 3: multi_top}
        self.low_order_widths = (
            {1, 2, 3} if order == "ace_two_low" else {1} if order == "ace_two_low_singles_only"
            else set()
        )
        self.jinzhou = ruleset.bomb_reach == "jinzhou"
        self.min_bomb = ruleset.min_bomb
        self.joker_bombs = ruleset.joker_bombs
        # Two identical jokers are a pair only where joker combos are not bomb-class rungs.
        self.pair_rank_limit = SMALL_JOKER if ruleset.joker_bombs else BIG_JOKER + 1
        self.min_triple_run = max(2, ruleset.min_triple_straight)
        self.min_groups = {
            1: ruleset.min_straight, 2: ruleset.min_pair_straight,
            3: ruleset.min_triple_straight,
        }

    def run_top(self, ranks: Sequence[int], width: int) -> int | None:
        """Top position of distinct natural ranks (ascending) as one sequence, else None."""
        lo, hi, n = ranks[0], ranks[-1], len(ranks)
        if hi >= SMALL_JOKER:
            return None
        if hi <= self.seq_high_rank[width] and lo >= self.seq_low_rank and hi - lo == n - 1:
            return hi
        if width in self.low_order_widths and (ranks[-1] == TWO or ACE in ranks):
            low = sorted(_LOW_POSITION.get(r, r) for r in ranks)
            if low[-1] <= KING and low[-1] - low[0] == n - 1:
                return low[-1]
        return None


_LOW_POSITION = {ACE: 1, TWO: 2}


def tables(ruleset: Ruleset) -> Tables:
    """The ruleset's tables, built on first use and kept on the (frozen) ruleset."""
    cached = ruleset.__dict__.get("_tables")
    if not isinstance(cached, Tables):
        cached = Tables(ruleset)
        ruleset.__dict__["_tables"] = cached
    return cached


def _counts(cards: Iterable[Card]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for rank, _suit in cards:
        counts[rank] = counts.get(rank, 0) + 1
    return counts


def classify(cards: Sequence[Card], ruleset: Ruleset) -> Combination:
    """The one combination the cards form (the stronger reading wins); else InvalidCombination."""
    if not cards:
        raise InvalidCombination("a play needs at least one card")
    combo = _reading(tuple(cards), tables(ruleset))
    if combo is None:
        raise InvalidCombination(
            f"{' '.join(str(c) for c in sort_cards(cards))} is not a combination of preset"
            f" {ruleset.preset!r}"
        )
    return combo


# Readings are remembered per ruleset's tables and cards as given: a table sees the same
# singles, pairs and small combinations over and over. Bounded, so memory is too.
READING_CACHE_SIZE = 1 << 14


def forget_readings() -> None:
    """Empty the readings cache (benchmarks time first readings with it)."""
    _reading.cache_clear()


@lru_cache(maxsize=READING_CACHE_SIZE)
def _reading(cards: tuple[Card, ...], t: Tables) -> Combination | None:
    """The combination the cards (in any order) form under the tables' ruleset, else None."""
    canon = tuple(sorted(cards, key=canonical_key))
    counts = _counts(canon)
    return _bomb_class(canon, counts, t) or _normal(canon, counts, t)


def _fifty_k_rank(cards: Sequence[Card], t: Tables) -> int | None:
    """Suit strength of a pure 50K (0 when suits do not rank them), None when impure."""
    suit = cards[0].suit
    if any(c.suit != suit for c in cards):
        return None
    return SUIT_STRENGTH[suit] if t.ruleset.pure_fifty_k_suit_order else 0


def _bomb_class(
    cards: tuple[Card, ...], counts: dict[int, int], t: Tables
) -> Combination | None:
    n = len(cards)
    if n == 3 and counts.get(FIVE) == 1 and counts.get(TEN) == 1 and counts.get(KING) == 1:
        pure = _fifty_k_rank(cards, t)
        if pure is None:
            return Combination(FIFTY_K, cards, 0, RUNG_FIFTY_K)
        return Combination(PURE_FIFTY_K, cards, pure, RUNG_PURE_FIFTY_K)
    if (n == 6 and t.ruleset.double_fifty_k and counts.get(FIVE) == 2 and counts.get(TEN) == 2
            and counts.get(KING) == 2):
        pure = _fifty_k_rank(cards, t)
        if pure is None:
            return Combination(DOUBLE_FIFTY_K, cards, 0, RUNG_DOUBLE_FIFTY_K)
        return Combination(PURE_DOUBLE_FIFTY_K, cards, pure, RUNG_PURE_DOUBLE_FIFTY_K)
    if cards[0].rank >= SMALL_JOKER:  # jokers only (cards are sorted, jokers last)
        if not t.joker_bombs:
            return None
        code = _joker_code(counts, n)
        return None if code is None else Combination(code, cards, 0, JOKER_RUNGS[code])
    if len(counts) == 1 and n >= t.min_bomb and cards[-1].rank < SMALL_JOKER:
        return Combination(BOMB, cards, t.key[cards[0].rank], BOMB_RUNGS[n])
    return None


def _joker_code(counts: dict[int, int], n: int) -> str | None:
    small = counts.get(SMALL_JOKER, 0)
    if n == 2:
        return JOKER_PAIR_MIXED if small == 1 else SMALL_JOKER_PAIR if small else BIG_JOKER_PAIR
    return {3: JOKER_TRIPLE, 4: JOKER_QUAD}.get(n)


def _normal(cards: tuple[Card, ...], counts: dict[int, int], t: Tables) -> Combination | None:
    n = len(cards)
    r = t.ruleset
    if n == 1:
        return Combination(SINGLE, cards, t.key[cards[0].rank], NORMAL)
    if len(counts) == 1:
        rank = cards[0].rank
        if n == 2:
            return Combination(PAIR, cards, t.key[rank], NORMAL)
        if n == 3 and rank < SMALL_JOKER:
            return Combination(TRIPLE, cards, t.key[rank], NORMAL)
        if n == 3 or n == 4:  # three or four jokers outside joker-bomb games
            return None
    if n == 2 and r.joker_pair_mixed and counts.get(SMALL_JOKER) == 1 and counts.get(BIG_JOKER):
        return Combination(PAIR, cards, t.mixed_pair_key, NORMAL)
    if r.sequences:
        combo = _sequence(cards, counts, t)
        if combo is not None:
            return combo
    if r.kickers:
        combo = _kicker_type(cards, counts, t)
        if combo is not None:
            return combo
    if r.four_with_two and n == 6:
        shape = sorted(counts.values())
        if shape in ([1, 1, 4], [2, 4]):
            four = next(rank for rank, c in counts.items() if c == 4)
            if four < SMALL_JOKER:
                return Combination(FOUR_WITH_TWO, cards, t.key[four], NORMAL)
    return None


def _sequence(cards: tuple[Card, ...], counts: dict[int, int], t: Tables) -> Combination | None:
    width = cards.__len__() // len(counts)
    if width not in SEQUENCE_WIDTH.values() or any(c != width for c in counts.values()):
        return None
    if len(counts) < t.min_groups[width]:
        return None
    top = t.run_top(sorted(counts), width)
    if top is None:
        return None
    code = (STRAIGHT, PAIR_STRAIGHT, TRIPLE_STRAIGHT)[width - 1]
    return Combination(code, cards, top, NORMAL)


def _kicker_type(cards: tuple[Card, ...], counts: dict[int, int], t: Tables) -> Combination | None:
    n = len(cards)
    triples = sorted(rank for rank, c in counts.items() if c == 3)
    if not triples or triples[-1] >= SMALL_JOKER:
        return None
    others = [c for rank, c in counts.items() if c != 3]
    # A kicker pair must be a pair in this ruleset (identical jokers are not in joker-bomb games).
    pair_kickers_ok = all(rank < t.pair_rank_limit for rank, c in counts.items() if c == 2)
    if n == 4 and len(triples) == 1:
        return Combination(TRIPLE_WITH_SINGLE, cards, t.key[triples[0]], NORMAL)
    if n == 5 and len(triples) == 1 and others == [2] and pair_kickers_ok:
        return Combination(TRIPLE_WITH_PAIR, cards, t.key[triples[0]], NORMAL)
    if not t.ruleset.sequences:
        return None
    k = len(triples)
    top = t.run_top(triples, 3) if k >= t.min_triple_run else None
    if top is None:
        return None
    if n == 4 * k and len(others) == k and all(c == 1 for c in others):
        return Combination(TRIPLE_STRAIGHT_WITH_SINGLES, cards, top, NORMAL)
    if n == 5 * k and len(others) == k and all(c == 2 for c in others) and pair_kickers_ok:
        return Combination(TRIPLE_STRAIGHT_WITH_PAIRS, cards, top, NORMAL)
    return None


def beats(play: Combination, top: Combination, ruleset: Ruleset) -> bool:
    """True when `play` beats the trick's current top play `top` (docs/rules.md#who-beats-what)."""
    if play.rung == NORMAL:
        return (top.rung == NORMAL and play.type == top.type and len(play.cards) == len(top.cards)
                and play.rank > top.rank)
    if top.rung == NORMAL:
        return reaches(play, top, ruleset)
    if play.rung != top.rung:
        return play.rung > top.rung
    return play.rank > top.rank


def reaches(play: Combination, top: Combination, ruleset: Ruleset) -> bool:
    """Whether a bomb-class play may beat the normal play `top` (bomb_reach)."""
    if ruleset.bomb_reach == "jinzhou":
        if top.type == PAIR_STRAIGHT:
            return play.rung >= RUNG_BOMB_4
        if top.type == TRIPLE_STRAIGHT:
            return play.rung >= RUNG_BOMB_6
    return True


__all__ = [
    "Combination", "Tables", "beats", "classify", "forget_readings", "rank_name", "reaches",
    "tables",
]
