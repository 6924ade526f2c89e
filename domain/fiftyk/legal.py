"""Legal plays: every distinct combination a hand can play on the trick's top play.

Distinct means different as a combination: one canonical choice of cards per multiset of
ranks, except that pure and impure 50Ks (and, when suits rank them, each suit's pure 50K)
are different plays. Generators are lazy, so `can_beat` stops at the first find.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import cache, lru_cache
from itertools import chain, groupby, product
from itertools import combinations as choose
from operator import itemgetter

from fiftyk_referee.domain.cards import (
    ACE,
    BIG_JOKER,
    FIVE,
    KING,
    SMALL_JOKER,
    SUITS,
    TEN,
    TWO,
    Card,
    canonical_key,
)
from fiftyk_referee.domain.fiftyk.combinations import (
    BIG_JOKER_PAIR,
    BOMB,
    BOMB_RUNGS,
    DOUBLE_FIFTY_K,
    FIFTY_K,
    FOUR_WITH_TWO,
    JOKER_PAIR_MIXED,
    JOKER_QUAD,
    JOKER_RUNGS,
    JOKER_TRIPLE,
    NORMAL,
    PAIR,
    PAIR_STRAIGHT,
    PURE_DOUBLE_FIFTY_K,
    PURE_FIFTY_K,
    RUNG_DOUBLE_FIFTY_K,
    RUNG_FIFTY_K,
    RUNG_PURE_DOUBLE_FIFTY_K,
    RUNG_PURE_FIFTY_K,
    SINGLE,
    SMALL_JOKER_PAIR,
    STRAIGHT,
    SUIT_STRENGTH,
    TRIPLE,
    TRIPLE_STRAIGHT,
    TRIPLE_STRAIGHT_WITH_PAIRS,
    TRIPLE_STRAIGHT_WITH_SINGLES,
    TRIPLE_WITH_PAIR,
    TRIPLE_WITH_SINGLE,
    Combination,
    Tables,
    beats,
    tables,
)
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset

Groups = dict[int, list[Card]]
LEAD = -1  # rank threshold below every key: any rank will do
_LOW_ORDER = (ACE, TWO, *range(3, KING + 1))  # A 2 3 … K


_key = canonical_key  # canonical order of cards, looked up (a hot path)


_rank = itemgetter(0)  # Card.rank


def group(hand: Iterable[Card]) -> Groups:
    """Cards of a hand by natural rank, each list in canonical suit order."""
    return {rank: list(cards) for rank, cards in groupby(sorted(hand, key=_key), _rank)}


def _canonical(cards: Iterable[Card]) -> tuple[Card, ...]:
    return tuple(sorted(cards, key=_key))


def legal_plays(
    hand: Sequence[Card], top: Combination | None, ruleset: Ruleset
) -> list[Combination]:
    """Every distinct legal play from `hand` on `top` (None when leading)."""
    return list(iter_legal_plays(hand, top, ruleset))


def can_beat(hand: Sequence[Card], top: Combination, ruleset: Ruleset) -> bool:
    """Whether the hand holds any play that beats `top`."""
    return next(iter_legal_plays(hand, top, ruleset), None) is not None


def iter_legal_plays(
    hand: Sequence[Card], top: Combination | None, ruleset: Ruleset
) -> Iterator[Combination]:
    """Lazily yield every distinct legal play (see module docstring)."""
    t = tables(ruleset)
    groups, bomb_class = _shape(tuple(hand), t)
    if top is None:
        return chain(_normal_plays(groups, t, None, LEAD, 0), bomb_class)
    beating = (combo for combo in bomb_class if beats(combo, top, ruleset))
    if top.rung != NORMAL:
        return beating
    normal = _normal_plays(groups, t, top.type, top.rank, len(top.cards))
    # Standard reach: every bomb-class play beats a normal play; jinzhou's must check.
    return chain(normal, beating if t.jinzhou else bomb_class)


# The hands of the last few seats asked about, read once each: a seat that passed asks again
# with the same cards. Bounded; callers only read what it returns.
SHAPE_CACHE_SIZE = 256


def forget_hands() -> None:
    """Empty the cache of hands read (benchmarks time a first look at a hand with it)."""
    _shape.cache_clear()


@lru_cache(maxsize=SHAPE_CACHE_SIZE)
def _shape(hand: tuple[Card, ...], t: Tables) -> tuple[Groups, tuple[Combination, ...]]:
    """A hand's cards by rank, and every bomb-class play it holds (they need no top play)."""
    groups = group(hand)
    return groups, tuple(_bomb_class_plays(groups, t))


# -- normal types ---------------------------------------------------------------------------


def _normal_plays(
    groups: Groups, t: Tables, only: str | None, above: int, size: int
) -> Iterator[Combination]:
    """Normal-type plays; with `only`, just that type, of that size, ranked above `above`."""
    r = t.ruleset
    key = t.key
    if only in (None, SINGLE):
        for rank, cards in groups.items():
            if key[rank] > above:
                yield Combination(SINGLE, (cards[0],), key[rank], NORMAL)
    if only in (None, PAIR):
        yield from _pairs(groups, t, above)
    if only in (None, TRIPLE) and t.min_bomb > 3:
        for rank, cards in groups.items():
            if len(cards) >= 3 and rank < SMALL_JOKER and t.key[rank] > above:
                yield Combination(TRIPLE, tuple(cards[:3]), t.key[rank], NORMAL)
    if r.sequences:
        for code, width in ((STRAIGHT, 1), (PAIR_STRAIGHT, 2), (TRIPLE_STRAIGHT, 3)):
            if only in (None, code):
                groups_wanted = size // width if only else 0
                for _ranks, top_pos, run in _runs(groups, t, width, groups_wanted):
                    if top_pos > above:
                        yield Combination(code, run, top_pos, NORMAL)
    if r.kickers:
        yield from _kicker_plays(groups, t, only, above, size)
    if r.four_with_two and only in (None, FOUR_WITH_TWO):
        yield from _four_with_two(groups, t, above)


def _pair_ranks(groups: Groups, t: Tables) -> list[int]:
    """Ranks that can form a pair: two of a rank (identical jokers only outside joker bombs)."""
    return [
        rank for rank, cards in groups.items()
        if len(cards) >= 2 and rank < t.pair_rank_limit
    ]


def _pairs(groups: Groups, t: Tables, above: int) -> Iterator[Combination]:
    for rank in _pair_ranks(groups, t):
        if t.key[rank] > above:
            yield Combination(PAIR, tuple(groups[rank][:2]), t.key[rank], NORMAL)
    if (t.ruleset.joker_pair_mixed and SMALL_JOKER in groups and BIG_JOKER in groups
            and t.mixed_pair_key > above):
        cards = (groups[SMALL_JOKER][0], groups[BIG_JOKER][0])
        yield Combination(PAIR, cards, t.mixed_pair_key, NORMAL)


def _runs(
    groups: Groups, t: Tables, width: int, wanted: int
) -> Iterator[tuple[tuple[int, ...], int, tuple[Card, ...]]]:
    """(ranks, top position, canonical cards) of every sequence of `width` cards per rank.

    `wanted` fixes the number of groups (0: every length from the ruleset's minimum). Runs
    from one start grow a rank at a time, each one's cards those of the last plus `width`;
    a start is skipped when the ranks held in a row from it are too few.
    """
    shortest = t.min_groups[width] if width != 3 else t.min_triple_run
    if wanted and wanted < shortest:
        return
    orders: list[tuple[tuple[int, ...], bool]] = [
        (_natural_order(t.seq_low_rank, t.seq_high_rank[width]), False)
    ]
    if width in t.low_order_widths:
        orders.append((_LOW_ORDER, True))
    for order, low in orders:
        n = len(order)
        # heads[i]: the run's cards of the i-th rank of the order (empty: too few of them)
        heads = [tuple(groups[rank][:width]) if len(groups.get(rank, ())) >= width else ()
                 for rank in order]
        # held[i]: how many ranks in a row, from the i-th on, have their run's cards
        held = [0] * (n + 1)
        for i in range(n - 1, -1, -1):
            if heads[i]:
                held[i] = held[i + 1] + 1
        starts = (0, 1) if low else range(n)  # low runs must contain A or 2
        for start in starts:
            longest = min(held[start], wanted) if wanted else held[start]
            first = start + (wanted or shortest)  # the end of the shortest run wanted
            if start + longest < first:
                continue
            cards: tuple[Card, ...] = ()
            for head in heads[start:first - 1]:
                cards += head
            for end in range(first, start + longest + 1):
                cards += heads[end - 1]
                # A low run's cards are put back in canonical order (A and 2 sort last).
                yield ((order[start:end], end, _canonical(cards)) if low
                       else (order[start:end], order[end - 1], cards))


@cache
def _natural_order(low: int, high: int) -> tuple[int, ...]:
    return tuple(range(low, high + 1))


def _kicker_plays(
    groups: Groups, t: Tables, only: str | None, above: int, size: int
) -> Iterator[Combination]:
    triple_ranks = [r for r, cards in groups.items() if len(cards) >= 3 and r < SMALL_JOKER]
    if only in (None, TRIPLE_WITH_SINGLE):
        for tr in triple_ranks:
            if t.key[tr] > above:
                for kr, kcards in groups.items():
                    if kr != tr:
                        cards = _canonical((*groups[tr][:3], kcards[0]))
                        yield Combination(TRIPLE_WITH_SINGLE, cards, t.key[tr], NORMAL)
    pair_ranks = _pair_ranks(groups, t)
    if only in (None, TRIPLE_WITH_PAIR):
        for tr in triple_ranks:
            if t.key[tr] > above:
                for pr in pair_ranks:
                    if pr != tr:
                        cards = _canonical((*groups[tr][:3], *groups[pr][:2]))
                        yield Combination(TRIPLE_WITH_PAIR, cards, t.key[tr], NORMAL)
    if not t.ruleset.sequences:
        return
    for code, width, pool in (
        (TRIPLE_STRAIGHT_WITH_SINGLES, 1, list(groups)),
        (TRIPLE_STRAIGHT_WITH_PAIRS, 2, pair_ranks),
    ):
        if only not in (None, code):
            continue
        wanted = size // (3 + width) if only else 0
        for run, top_pos, body in _runs(groups, t, 3, wanted):
            if top_pos <= above:
                continue
            spare = [rank for rank in pool if rank not in run]
            for kicker_ranks in choose(spare, len(run)):
                kick = tuple(c for rank in kicker_ranks for c in groups[rank][:width])
                yield Combination(code, _canonical(body + kick), top_pos, NORMAL)


def _four_with_two(groups: Groups, t: Tables, above: int) -> Iterator[Combination]:
    for fr, fcards in groups.items():
        if len(fcards) < 4 or fr >= SMALL_JOKER or t.key[fr] <= above:
            continue
        four = tuple(fcards[:4])
        others = [r for r in groups if r != fr]
        for r in others:
            if len(groups[r]) >= 2:
                cards = _canonical(four + tuple(groups[r][:2]))
                yield Combination(FOUR_WITH_TWO, cards, t.key[fr], NORMAL)
        for a, b in choose(others, 2):
            cards = _canonical((*four, groups[a][0], groups[b][0]))
            yield Combination(FOUR_WITH_TWO, cards, t.key[fr], NORMAL)


# -- bomb class -----------------------------------------------------------------------------


def _bomb_class_plays(groups: Groups, t: Tables) -> Iterator[Combination]:
    min_bomb = t.min_bomb
    has_bomb = max(map(len, groups.values()), default=0) >= min_bomb  # a cheap first look
    for rank, cards in groups.items() if has_bomb else ():
        if rank < SMALL_JOKER and len(cards) >= min_bomb:
            key = t.key[rank]
            for n in range(min_bomb, len(cards) + 1):
                yield Combination(BOMB, tuple(cards[:n]), key, BOMB_RUNGS[n])
    yield from _fifty_k_plays(groups, t, 1, FIFTY_K, PURE_FIFTY_K, RUNG_FIFTY_K,
                              RUNG_PURE_FIFTY_K)
    if t.ruleset.double_fifty_k:
        yield from _fifty_k_plays(groups, t, 2, DOUBLE_FIFTY_K, PURE_DOUBLE_FIFTY_K,
                                  RUNG_DOUBLE_FIFTY_K, RUNG_PURE_DOUBLE_FIFTY_K)
    if t.joker_bombs:
        yield from _joker_plays(groups)


def _fifty_k_plays(
    groups: Groups, t: Tables, copies: int, impure: str, pure: str, impure_rung: int,
    pure_rung: int,
) -> Iterator[Combination]:
    if FIVE not in groups or TEN not in groups or KING not in groups:
        return
    parts = [groups[FIVE], groups[TEN], groups[KING]]
    if min(len(parts[0]), len(parts[1]), len(parts[2])) < copies:
        return
    five, ten, king = ({c.suit for c in p} for p in parts)
    if len(five | ten | king) > 1:
        yield Combination(impure, _impure_choice(parts, copies), 0, impure_rung)
    ordered = t.ruleset.pure_fifty_k_suit_order
    common = five & ten & king
    for suit in SUITS:  # strongest first: the order of SUIT_STRENGTH
        if suit not in common:
            continue
        same = [[c for c in p if c.suit == suit] for p in parts]
        if all(len(p) >= copies for p in same):
            cards = tuple(c for p in same for c in p[:copies])
            yield Combination(pure, cards, SUIT_STRENGTH[suit] if ordered else 0, pure_rung)
            if not ordered:
                return


def _impure_choice(parts: list[list[Card]], copies: int) -> tuple[Card, ...]:
    """Canonical cards for an impure (double) 50K: the first choice not all of one suit."""
    choices: Iterable[tuple[Card, ...]] = (
        product(*parts) if copies == 1  # the same order as one-card combinations
        else (tuple(c for part in choice for c in part)
              for choice in product(*(list(choose(p, copies)) for p in parts)))
    )
    for cards in choices:
        if len({c.suit for c in cards}) > 1:
            return tuple(sorted(cards, key=_key))
    raise ValueError("no impure choice")  # unreachable: callers check suits_held


# Joker combos: (type, small jokers, big jokers).
_JOKER_COMBOS: tuple[tuple[str, int, int], ...] = (
    (JOKER_PAIR_MIXED, 1, 1), (SMALL_JOKER_PAIR, 2, 0), (BIG_JOKER_PAIR, 0, 2),
    (JOKER_TRIPLE, 2, 1), (JOKER_TRIPLE, 1, 2), (JOKER_QUAD, 2, 2),
)


def _joker_plays(groups: Groups) -> Iterator[Combination]:
    small = groups.get(SMALL_JOKER, [])
    big = groups.get(BIG_JOKER, [])
    if len(small) + len(big) < 2:
        return
    for code, n_small, n_big in _JOKER_COMBOS:
        if len(small) >= n_small and len(big) >= n_big:
            cards = (*small[:n_small], *big[:n_big])
            yield Combination(code, cards, 0, JOKER_RUNGS[code])
