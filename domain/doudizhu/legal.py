"""斗地主's legal plays: every distinct play a hand can make, as a lead or on the table's play.

Distinct means one play per multiset of ranks (suits never matter), its cards picked
canonically from the hand: the first cards of each rank in canonical order. Each play is
the reading `classify` (a lead) or `read_play` (a follow) gives those cards, so the two
agree by construction and by test.

The hand is counted once per call (cards per rank); every kind is then enumerated over
ranks, and the kickers of 三带, 四带 and planes over the ranks outside the main part, with
how many cards each rank may give. Cards are tuples joined from slices of each rank's, so a
20-card lead is a few hundred tuple joins, not a search over subsets.
"""

from __future__ import annotations

from collections.abc import Sequence

from fiftyk_referee.domain.cards import BIG_JOKER, SMALL_JOKER, TWO, Card, canonical_key
from fiftyk_referee.domain.doudizhu.combinations import (
    BOMB,
    CHAIN_HIGH,
    CHAIN_LOW,
    DEFAULT,
    FOUR_TWO_PAIRS,
    FOUR_TWO_SINGLES,
    MIN_PAIR_STRAIGHT,
    MIN_PLANE,
    MIN_STRAIGHT,
    PAIR,
    PAIR_STRAIGHT,
    PLANE,
    PLANE_PAIRS,
    PLANE_SINGLES,
    QUAD,
    ROCKET,
    SINGLE,
    STRAIGHT,
    TRIPLE,
    TRIPLE_PAIR,
    TRIPLE_SINGLE,
    Combination,
    ComboOptions,
)

_SLOTS = BIG_JOKER + 2  # counts and cards are indexed by the rank itself
_new = tuple.__new__
# Pieces of cards: a prefix of one rank's cards, or the joined cards of several ranks.
Cards = tuple[Card, ...]
_NO_CARDS: Cards = ()


class _Hand:
    """A hand counted by rank: how many cards of each, and each rank's cards in canonical
    order (a play takes the first ones)."""

    __slots__ = ("chains", "count", "group", "present", "with_width")

    def __init__(self, hand: Sequence[Card]) -> None:
        cards = tuple(sorted(hand, key=canonical_key))
        count = [0] * _SLOTS
        present: list[int] = []  # ranks held, ascending (the cards are sorted)
        for rank, _suit in cards:
            if not count[rank]:
                present.append(rank)
            count[rank] += 1
        group: list[Cards] = [_NO_CARDS] * _SLOTS
        start = 0
        for rank in present:
            stop = start + count[rank]
            group[rank] = cards[start:stop]
            start = stop
        self.count = count
        self.group = group
        self.present = present
        # Ranks held with at least 1, 2, 3 or 4 cards (by that number), found on first use.
        self.with_width: list[list[int] | None] = [present, present, None, None, None]
        # Per width (1 straights, 2 pair straights, 3 planes), found on first use.
        self.chains: list[_Chains | None] = [None, None, None, None]

    def ranks_with(self, width: int) -> list[int]:
        """Ranks held (ascending) with at least `width` cards."""
        found = self.with_width[width]
        if found is None:
            count = self.count
            found = self.with_width[width] = [r for r in self.present if count[r] >= width]
        return found


def legal_plays(
    hand: Sequence[Card], top: Combination | None, options: ComboOptions = DEFAULT
) -> list[Combination]:
    """Every distinct play of `hand` as a lead (`top` None) or that beats `top`."""
    h = _Hand(hand)
    out: list[Combination] = []
    if top is None:
        _lead(h, options, out)
    else:
        _follow(h, top, options, out)
    if options.ambiguous and len(out) > 1:
        # Cards that read several ways were generated once per reading, preferred first.
        seen: set[Cards] = set()
        unique: list[Combination] = []
        for combo in out:
            if combo.cards not in seen:
                seen.add(combo.cards)
                unique.append(combo)
        out = unique
    return out


def can_beat(hand: Sequence[Card], top: Combination, options: ComboOptions = DEFAULT) -> bool:
    """Whether `hand` holds a play that beats `top`."""
    h = _Hand(hand)
    if top.kind == ROCKET:
        return False
    count = h.count
    if count[SMALL_JOKER] and count[BIG_JOKER]:
        return True
    above = top.rank if top.kind == BOMB else 0
    if any(count[r] == QUAD for r in range(above + 1, TWO + 1)):
        return True
    out: list[Combination] = []
    _follow(h, top, options, out)
    return bool(out)


def _lead(h: _Hand, o: ComboOptions, out: list[Combination]) -> None:
    _sets(h, SINGLE, 1, 0, out)
    _sets(h, PAIR, 2, 0, out)
    _sets(h, TRIPLE, 3, 0, out)
    _triples_with(h, 1, 0, out)
    _triples_with(h, 2, 0, out)
    for length in range(MIN_STRAIGHT, _chains_of(h, 1).longest() + 1):
        _chains(h, STRAIGHT, 1, length, 0, out)
    for length in range(MIN_PAIR_STRAIGHT, _chains_of(h, 2).longest() + 1):
        _chains(h, PAIR_STRAIGHT, 2, length, 0, out)
    longest = _chains_of(h, 3).longest()
    for length in range(longest, MIN_PLANE - 1, -1):  # longer planes first: preferred readings
        _chains(h, PLANE, 3, length, 0, out)
    for length in range(MIN_PLANE, longest + 1):
        _planes(h, length, 0, True, o, out)
        _planes(h, length, 0, False, o, out)
    if o.four_two_singles:
        _fours_with(h, 1, 0, o, out)
    if o.four_two_pairs:
        _fours_with(h, 2, 0, o, out)
    _bombs(h, 0, out)


def _follow(h: _Hand, top: Combination, o: ComboOptions, out: list[Combination]) -> None:
    kind, rank, length = top.kind, top.rank, top.length
    if kind == ROCKET:
        return
    if kind == BOMB:
        _bombs(h, rank, out)
        return
    if kind == SINGLE:
        _sets(h, SINGLE, 1, rank, out)
    elif kind == PAIR:
        _sets(h, PAIR, 2, rank, out)
    elif kind == TRIPLE:
        _sets(h, TRIPLE, 3, rank, out)
    elif kind == TRIPLE_SINGLE:
        _triples_with(h, 1, rank, out)
    elif kind == TRIPLE_PAIR:
        _triples_with(h, 2, rank, out)
    elif kind == STRAIGHT:
        _chains(h, STRAIGHT, 1, length, rank, out)
    elif kind == PAIR_STRAIGHT:
        _chains(h, PAIR_STRAIGHT, 2, length, rank, out)
    elif kind == PLANE:
        _chains(h, PLANE, 3, length, rank, out)
    elif kind == PLANE_SINGLES:
        _planes(h, length, rank, True, o, out)
    elif kind == PLANE_PAIRS:
        _planes(h, length, rank, False, o, out)
    elif kind == FOUR_TWO_SINGLES and o.four_two_singles:
        _fours_with(h, 1, rank, o, out)
    elif kind == FOUR_TWO_PAIRS and o.four_two_pairs:
        _fours_with(h, 2, rank, o, out)
    _bombs(h, 0, out)


def _sets(h: _Hand, kind: str, width: int, above: int, out: list[Combination]) -> None:
    """Singles, pairs or triples of one rank, above rank `above`."""
    group = h.group
    last = BIG_JOKER if width == 1 else TWO  # a pair or triple of jokers is nothing
    for r in h.ranks_with(width):
        if above < r <= last:
            out.append(_new(Combination, (kind, r, 1, group[r][:width])))


def _bombs(h: _Hand, above: int, out: list[Combination]) -> None:
    """Bombs above rank `above`, then the rocket."""
    count, group = h.count, h.group
    for r in h.present:
        if count[r] == QUAD and r > above:
            out.append(_new(Combination, (BOMB, r, 1, group[r])))
    if count[SMALL_JOKER] and count[BIG_JOKER]:
        out.append(_new(Combination, (ROCKET, BIG_JOKER, 1,
                                      group[SMALL_JOKER] + group[BIG_JOKER])))


def _triples_with(h: _Hand, width: int, above: int, out: list[Combination]) -> None:
    """三带一 (`width` 1) or 三带二 (`width` 2) whose triple is above rank `above`."""
    group = h.group
    kind = TRIPLE_SINGLE if width == 1 else TRIPLE_PAIR
    last = BIG_JOKER if width == 1 else TWO
    triples = [t for t in h.ranks_with(3) if above < t <= TWO]
    if not triples:
        return
    kickers = [(k, group[k][:width]) for k in h.ranks_with(width) if k <= last]
    for t in triples:
        body = group[t][:3]
        for k, kicker in kickers:
            if k != t:
                cards = kicker + body if k < t else body + kicker
                out.append(_new(Combination, (kind, t, 1, cards)))


class _Chains:
    """The runs of consecutive ranks (3..A) a hand holds with `width` cards or more each:
    their (low, high) ranks, and the cards of every such rank in one tuple, so that the
    cards of any chain inside a run are one slice of it."""

    __slots__ = ("cards", "runs", "start")

    def __init__(self, h: _Hand, width: int) -> None:
        count, group = h.count, h.group
        self.runs: list[tuple[int, int]] = []
        self.start = [0] * _SLOTS  # where each rank's cards start in `cards`
        cards: list[Card] = []
        low = 0
        for r in range(CHAIN_LOW, CHAIN_HIGH + 2):  # one past A closes the last run
            if r <= CHAIN_HIGH and count[r] >= width:
                self.start[r] = len(cards)
                cards += group[r][:width]
                if not low:
                    low = r
            elif low:
                self.runs.append((low, r - 1))
                low = 0
        self.cards: Cards = tuple(cards)

    def tops(self, length: int, above: int) -> list[int]:
        """Top ranks of the chains of `length` steps topped above `above`, highest first."""
        tops: list[int] = []
        for low, high in reversed(self.runs):
            first = max(low + length - 1, above + 1)
            if first <= high:
                tops.extend(range(high, first - 1, -1))
        return tops

    def longest(self) -> int:
        """Steps of the longest run (0 when there is none)."""
        return max((high - low + 1 for low, high in self.runs), default=0)

    def cards_of(self, width: int, low: int, high: int) -> Cards:
        """The cards of the chain from `low` to `high` (inside one run)."""
        begin = self.start[low]
        return self.cards[begin:begin + width * (high - low + 1)]


def _chains_of(h: _Hand, width: int) -> _Chains:
    found = h.chains[width]
    if found is None:
        found = h.chains[width] = _Chains(h, width)
    return found


def _chains(
    h: _Hand, kind: str, width: int, length: int, above: int, out: list[Combination]
) -> None:
    """Straights, pair straights or bare planes of `length` steps topped above `above`."""
    chains = _chains_of(h, width)
    start, cards = chains.start, chains.cards
    span = width * length
    for high in chains.tops(length, above):
        begin = start[high - length + 1]
        out.append(_new(Combination, (kind, high, length, cards[begin:begin + span])))


def _planes(
    h: _Hand, length: int, above: int, singles: bool, o: ComboOptions, out: list[Combination]
) -> None:
    """Planes of `length` triples topped above `above`, with single (or pair) wings."""
    kind = PLANE_SINGLES if singles else PLANE_PAIRS
    chains = _chains_of(h, 3)
    for high in chains.tops(length, above):
        low = high - length + 1
        body = chains.cards_of(3, low, high)
        if singles:
            below = _kickers(h, range(CHAIN_LOW, low), length, 1, o, low, high)
            over = _kickers(h, range(high + 1, BIG_JOKER + 1), length, 1, o, low, high)
        else:
            below = _kickers(h, range(CHAIN_LOW, low), length, 2, o, low, high)
            over = _kickers(h, range(high + 1, TWO + 1), length, 2, o, low, high)
        _attach(kind, high, length, body, below, over, length, out)


def _fours_with(
    h: _Hand, width: int, above: int, o: ComboOptions, out: list[Combination]
) -> None:
    """四带二 (`width` 1: two single kickers) or 四带两对 (`width` 2) above rank `above`."""
    kind = FOUR_TWO_SINGLES if width == 1 else FOUR_TWO_PAIRS
    group = h.group
    last = BIG_JOKER if width == 1 else TWO
    for f in reversed(h.ranks_with(QUAD)):  # highest first: preferred readings
        if f <= above:
            break
        below = _kickers(h, range(CHAIN_LOW, f), 2, width, o, 0, 0)
        over = _kickers(h, range(f + 1, last + 1), 2, width, o, 0, 0)
        _attach(kind, f, 1, group[f], below, over, 2, out)


def _attach(
    kind: str, rank: int, length: int, body: Cards, below: list[list[Cards]],
    over: list[list[Cards]], kickers: int, out: list[Combination],
) -> None:
    """One play per way to take `kickers` kickers from below and above the main part."""
    for k in range(kickers + 1):
        lows, highs = below[k], over[kickers - k]
        if not lows or not highs:
            continue
        for low_cards in lows:
            head = low_cards + body
            for high_cards in highs:
                out.append(_new(Combination, (kind, rank, length, head + high_cards)))


def _kickers(
    h: _Hand, ranks: range, most: int, width: int, o: ComboOptions, low: int, high: int
) -> list[list[Cards]]:
    """Ways to take 0..`most` kickers (singles, or pairs when `width` is 2) from `ranks`:
    entry k lists the canonical cards of each distinct choice of k kickers. `low`..`high`
    is a plane's chain (0, 0 for a four), whose neighbours may give no whole triple."""
    count, group = h.count, h.group
    ways: list[list[Cards]] = [[_NO_CARDS]] + [[] for _ in range(most)]
    if width == 1:
        cap_any = (QUAD if o.kickers_whole_bomb else 3) if o.kickers_share_rank else 1
    else:
        cap_any = 2 if o.kickers_pairs_one_rank else 1
    jokers = 0
    for r in ranks:
        have = count[r] // width
        if not have:
            continue
        if r >= SMALL_JOKER:
            jokers += 1
        cap = min(have, cap_any, most)
        if width == 1 and not o.kickers_adjacent_triple and (
            r == low - 1 or (r == high + 1 and r <= CHAIN_HIGH)
        ):
            cap = min(cap, 2)
        cards = group[r]
        for size in range(most, 0, -1):
            grown = ways[size]
            for take in range(1, min(cap, size) + 1):
                piece = cards[:take * width]
                for before in ways[size - take]:
                    grown.append(before + piece)
    if jokers == 2 and not o.kickers_rocket:
        rocket = group[SMALL_JOKER] + group[BIG_JOKER]
        for size in range(2, most + 1):
            ways[size] = [w for w in ways[size] if w[-2:] != rocket]
    return ways


__all__ = ["can_beat", "legal_plays"]
