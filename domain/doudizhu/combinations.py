"""斗地主's combinations (docs/doudizhu.md#combinations) and who beats what.

`classify` reads cards as the combination they form under a table's `ComboOptions`; `beats`
compares two combinations. Suits never matter: a play is its multiset of ranks.

Readings (docs/doudizhu.md#kickers-wings-and-readings). A few multisets of ranks read as
more than one combination when the options allow wings that are a whole triple next to a
plane (333444555666: a plane of four bare triples, or three triples with 666 or 333 as
wings) or two pairs of one rank (33334444: four 3s with two pairs of 4s, or the other way
round). `readings` lists them all, the preferred first: the longest main part (the chain of
triples, the four), then the highest rank. A lead is its preferred reading (`classify`); a
follow is the preferred reading that beats the play on the table (`read_play`), so a player
never loses a play that some reading of its cards allows. Under the default options every
combination has exactly one reading.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from functools import lru_cache
from typing import NamedTuple

from fiftyk_referee.domain.cards import (
    ACE,
    BIG_JOKER,
    SMALL_JOKER,
    THREE,
    TWO,
    Card,
    canonical_key,
    rank_name,
)
from fiftyk_referee.domain.options import OptionSpec, OptionValue, flag

# Kinds (docs/doudizhu.md#combinations).
SINGLE = "single"
PAIR = "pair"
TRIPLE = "triple"
TRIPLE_SINGLE = "triple_single"
TRIPLE_PAIR = "triple_pair"
STRAIGHT = "straight"
PAIR_STRAIGHT = "pair_straight"
PLANE = "plane"
PLANE_SINGLES = "plane_singles"
PLANE_PAIRS = "plane_pairs"
FOUR_TWO_SINGLES = "four_two_singles"
FOUR_TWO_PAIRS = "four_two_pairs"
BOMB = "bomb"
ROCKET = "rocket"
KINDS: tuple[str, ...] = (
    SINGLE, PAIR, TRIPLE, TRIPLE_SINGLE, TRIPLE_PAIR, STRAIGHT, PAIR_STRAIGHT, PLANE,
    PLANE_SINGLES, PLANE_PAIRS, FOUR_TWO_SINGLES, FOUR_TWO_PAIRS, BOMB, ROCKET,
)

# Chains run from 3 up to A: never a 2 or a joker.
CHAIN_LOW, CHAIN_HIGH = THREE, ACE
MIN_STRAIGHT = 5  # singles
MIN_PAIR_STRAIGHT = 3  # pairs
MIN_PLANE = 2  # triples
MAX_CHAIN = CHAIN_HIGH - CHAIN_LOW + 1  # 12 ranks, 3..A
QUAD = 4


@dataclass(frozen=True)
class ComboOptions:
    """The combination rules that real rooms differ on (docs/doudizhu.md#options and
    #kickers-wings-and-readings).

    Single kickers are the one card of 三带一, the two of 四带二 and a plane's single wings;
    pair kickers are the pair of 三带二, the two pairs of 四带两对 and a plane's pair wings.
    A kicker is never of a rank of its own triples or four (those cards would be a bomb or
    a longer plane), and the rocket is never a pair.
    """

    kickers_share_rank: bool = True
    """Single kickers may share a rank: 333444+55, 4444+55, 333444555+777."""
    kickers_whole_bomb: bool = False
    """A plane's single wings may hold all four cards of a rank: 333444555666+7777."""
    kickers_rocket: bool = False
    """Single kickers may be both jokers: 3333+SJ BJ, 333444+SJ BJ."""
    kickers_pairs_one_rank: bool = False
    """Pair kickers may be two pairs of one rank: 3333+5555, 333444+5555."""
    kickers_adjacent_triple: bool = False
    """A plane's single wings may hold a whole triple next to it: 333444555+666."""
    four_two_singles: bool = True
    """四带二 (four with two single kickers) is a combination."""
    four_two_pairs: bool = True
    """四带两对 (four with two pair kickers) is a combination."""

    def __post_init__(self) -> None:
        # Options key the readings cache on every play: hash them once, not per lookup.
        self.__dict__["_hash"] = hash(astuple(self))

    def __hash__(self) -> int:
        return self.__dict__["_hash"]  # type: ignore[no-any-return]

    @property
    def ambiguous(self) -> bool:
        """Whether some cards read as more than one combination under these options."""
        return self.kickers_adjacent_triple or self.kickers_pairs_one_rank

    def to_options(self) -> dict[str, OptionValue]:
        """The options as ruleset option values (their keys are `OPTION_SPECS`' names)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_options(cls, options: Mapping[str, object]) -> ComboOptions:
        """The combination options named in a ruleset's options (others are ignored); the
        missing ones take `DEFAULT`'s values. Raises InvalidRuleset on a value not a bool."""
        values = {spec.name: bool(spec.check(options[spec.name]))
                  for spec in OPTION_SPECS if spec.name in options}
        return cls(**values)


DEFAULT = ComboOptions()
"""Our rule book: every play has one reading; no bomb or rocket hides among the kickers."""

DOUZERO = ComboOptions(
    kickers_share_rank=True,
    kickers_whole_bomb=True,
    kickers_rocket=True,
    kickers_pairs_one_rank=False,
    kickers_adjacent_triple=True,
    four_two_singles=True,
    four_two_pairs=True,
)
"""DouZero's move generator (douzero 1.1.0): any cards of other ranks than the main part's
are single kickers (a bomb's four, the rocket, a neighbouring triple); pair kickers are
pairs of distinct ranks."""

RLCARD = ComboOptions(
    kickers_share_rank=True,
    kickers_whole_bomb=False,
    kickers_rocket=False,
    kickers_pairs_one_rank=False,
    kickers_adjacent_triple=False,
    four_two_singles=True,
    four_two_pairs=True,
)
"""RLCard's 斗地主 (rlcard 1.2.0): no bomb, rocket or plane-extending triple among wings.
The same choices as our rule book: named apart so that each engine's rooms read as such."""

_OPTION_DOCS: dict[str, str] = {
    "kickers_share_rank": "single kickers may share a rank (333444+55, 4444+55)",
    "kickers_whole_bomb": "a plane's single wings may hold all four cards of a rank",
    "kickers_rocket": "single kickers may be both jokers (4444+SJ BJ, 333444+SJ BJ)",
    "kickers_pairs_one_rank": "pair kickers may be two pairs of one rank (3333+5555)",
    "kickers_adjacent_triple": "a plane's single wings may be a triple next to it (333444555+666)",
    "four_two_singles": "四带二: four of a rank with two single kickers",
    "four_two_pairs": "四带两对: four of a rank with two pair kickers",
}
OPTION_SPECS: tuple[OptionSpec, ...] = tuple(
    flag(f.name, bool(getattr(DEFAULT, f.name)), _OPTION_DOCS[f.name]) for f in fields(DEFAULT)
)
"""The combination options as ruleset options (names, defaults, docs)."""


class Combination(NamedTuple):
    """A play: its kind, the rank that decides it, its length and its canonical cards.

    `rank` is the highest rank of the main part: a chain's or plane's top step, the triple
    of 三带一, the four of 四带二 and of a bomb, BJ for the rocket. `length` is the number of
    steps of a chain or plane (singles, pairs or triples), else 1. Same kind, same length
    and a higher rank beats (`beats`).
    """

    kind: str
    rank: int
    length: int
    cards: tuple[Card, ...]

    @property
    def size(self) -> int:
        """Number of cards."""
        return len(self.cards)

    @property
    def is_bomb(self) -> bool:
        """A bomb or the rocket: the plays that beat other kinds (and double the stakes)."""
        return self.kind == BOMB or self.kind == ROCKET

    def card_strings(self) -> list[str]:
        """Canonical notation of the cards."""
        return [str(card) for card in self.cards]

    def __str__(self) -> str:
        return f"{self.kind}({' '.join(self.card_strings())})"


def beats(play: Combination, top: Combination) -> bool:
    """True when `play` beats `top`: the rocket beats everything, a bomb any non-bomb and a
    lower bomb; otherwise the same kind and length with a higher rank."""
    kind = play.kind
    if kind == ROCKET:
        return top.kind != ROCKET
    if kind == BOMB:
        return top.kind != ROCKET and (top.kind != BOMB or play.rank > top.rank)
    return kind == top.kind and play.length == top.length and play.rank > top.rank


# A reading before its cards are attached: kind, rank, length, cards in the main part.
class _Shape(NamedTuple):
    kind: str
    rank: int
    length: int
    body: int


def classify(cards: Sequence[Card], options: ComboOptions = DEFAULT) -> Combination | None:
    """The combination the cards form as a lead (their preferred reading), else None."""
    found = readings(cards, options)
    return found[0] if found else None


def read_play(
    cards: Sequence[Card], top: Combination | None, options: ComboOptions = DEFAULT
) -> Combination | None:
    """The combination the cards form as a play on `top` (None: a lead): the preferred
    reading that beats `top`, else None (not a combination, or none of its readings beats)."""
    found = readings(cards, options)
    if top is None:
        return found[0] if found else None
    for combo in found:
        if beats(combo, top):
            return combo
    return None


def readings(cards: Sequence[Card], options: ComboOptions = DEFAULT) -> tuple[Combination, ...]:
    """Every combination the cards form, preferred first (module docstring); () for none."""
    return _readings(tuple(cards), options)


_new = tuple.__new__  # a NamedTuple without its constructor's argument handling

# Readings are remembered per cards as given and options: a table sees the same small plays
# over and over. Bounded, so memory is too.
READING_CACHE_SIZE = 1 << 14


def forget_readings() -> None:
    """Empty the readings cache (benchmarks time first readings with it)."""
    _readings.cache_clear()


@lru_cache(maxsize=READING_CACHE_SIZE)
def _readings(cards: tuple[Card, ...], options: ComboOptions) -> tuple[Combination, ...]:
    n = len(cards)
    if n <= 1:
        return (_new(Combination, (SINGLE, cards[0].rank, 1, cards)),) if n else ()
    canon = tuple(sorted(cards, key=canonical_key))
    counts: dict[int, int] = {}
    for rank, _suit in canon:
        counts[rank] = counts.get(rank, 0) + 1
    shapes = _shapes(counts, n, options)
    if len(shapes) > 1:
        shapes.sort(key=lambda s: (s.body, s.rank), reverse=True)
    return tuple([_new(Combination, (kind, rank, length, canon))
                  for kind, rank, length, _body in shapes])


def _shapes(counts: dict[int, int], n: int, o: ComboOptions) -> list[_Shape]:
    """Every reading of a multiset of ranks (`counts`: rank -> cards, `n` cards in all)."""
    if len(counts) == 1:
        ((rank, count),) = counts.items()
        if count == 1:
            return [_Shape(SINGLE, rank, 1, 1)]
        if rank > TWO:  # two of one joker: not in a 54-card pack
            return []
        kind = {2: PAIR, 3: TRIPLE, QUAD: BOMB}.get(count)
        return [] if kind is None else [_Shape(kind, rank, 1, count)]
    if n == 2:
        rocket = SMALL_JOKER in counts and BIG_JOKER in counts
        return [_Shape(ROCKET, BIG_JOKER, 1, 2)] if rocket else []
    found: list[_Shape] = []
    chain = _chain(counts, n)
    if chain is not None:
        found.append(chain)
    if n == 4 or n == 5:
        found.extend(_triple_with(counts, n))
    if n % 4 == 0 and n // 4 >= MIN_PLANE:
        found.extend(_planes(counts, n // 4, singles=True, o=o))
    if n % 5 == 0 and n // 5 >= MIN_PLANE:
        found.extend(_planes(counts, n // 5, singles=False, o=o))
    if n == 6 and o.four_two_singles:
        found.extend(_four_two_singles(counts, o))
    if n == 8 and o.four_two_pairs:
        found.extend(_four_two_pairs(counts, o))
    return found


def _chain(counts: dict[int, int], n: int) -> _Shape | None:
    """A straight, pair straight or bare plane: one width, consecutive ranks 3..A."""
    steps = len(counts)
    width = n // steps
    if width * steps != n or any(count != width for count in counts.values()):
        return None
    low, high = min(counts), max(counts)
    if high > CHAIN_HIGH or high - low != steps - 1:
        return None
    if width == 1 and steps >= MIN_STRAIGHT:
        return _Shape(STRAIGHT, high, steps, n)
    if width == 2 and steps >= MIN_PAIR_STRAIGHT:
        return _Shape(PAIR_STRAIGHT, high, steps, n)
    if width == 3 and steps >= MIN_PLANE:
        return _Shape(PLANE, high, steps, n)
    return None


def _triple_with(counts: dict[int, int], n: int) -> list[_Shape]:
    """三带一 (3+1) and 三带二 (3+2, the pair not jokers)."""
    if len(counts) != 2:
        return []
    (a, ca), (b, cb) = counts.items()
    triple, other, other_count = (a, b, cb) if ca == 3 else (b, a, ca) if cb == 3 else (0, 0, 0)
    if not triple:
        return []
    if n == 4:
        return [_Shape(TRIPLE_SINGLE, triple, 1, 3)]
    if other_count == 2 and other <= TWO:
        return [_Shape(TRIPLE_PAIR, triple, 1, 3)]
    return []


def _planes(counts: dict[int, int], steps: int, *, singles: bool, o: ComboOptions) -> list[_Shape]:
    """Planes of `steps` triples with one single (or one pair) per triple as wings."""
    triples = sorted(r for r, c in counts.items() if c == 3 and r <= CHAIN_HIGH)
    found: list[_Shape] = []
    for i in range(len(triples) - steps + 1):
        low, high = triples[i], triples[i + steps - 1]
        if high - low != steps - 1:
            continue
        wings = {r: c for r, c in counts.items() if not low <= r <= high}
        ok = _single_wings_ok(wings, low, high, o) if singles else _pair_wings_ok(wings, o)
        if ok:
            found.append(_Shape(PLANE_SINGLES if singles else PLANE_PAIRS, high, steps, 3 * steps))
    return found


def _single_wings_ok(wings: dict[int, int], low: int, high: int, o: ComboOptions) -> bool:
    """Whether these single kickers are allowed (the rank counts are the plane's wings)."""
    for rank, count in wings.items():
        if count > 1 and not o.kickers_share_rank:
            return False
        if count == QUAD and not o.kickers_whole_bomb:
            return False
        if count >= 3 and not o.kickers_adjacent_triple and (
            rank == low - 1 or (rank == high + 1 and rank <= CHAIN_HIGH)
        ):
            return False
    return o.kickers_rocket or not (SMALL_JOKER in wings and BIG_JOKER in wings)


def _pair_wings_ok(wings: dict[int, int], o: ComboOptions) -> bool:
    """Whether these pair kickers are allowed: each rank a pair (or two, by the options)."""
    for rank, count in wings.items():
        if rank > TWO:
            return False
        if count != 2 and not (count == QUAD and o.kickers_pairs_one_rank):
            return False
    return True


def _four_two_singles(counts: dict[int, int], o: ComboOptions) -> list[_Shape]:
    """四带二: four of a rank and two single kickers."""
    for rank, count in counts.items():
        if count == QUAD:
            kickers = {r: c for r, c in counts.items() if r != rank}
            if len(kickers) == 1 and not o.kickers_share_rank:
                return []
            if SMALL_JOKER in kickers and BIG_JOKER in kickers and not o.kickers_rocket:
                return []
            return [_Shape(FOUR_TWO_SINGLES, rank, 1, QUAD)]
    return []


def _four_two_pairs(counts: dict[int, int], o: ComboOptions) -> list[_Shape]:
    """四带两对: four of a rank and two pair kickers (two pairs of one rank by the options)."""
    found: list[_Shape] = []
    for rank, count in counts.items():
        if count == QUAD:
            kickers = {r: c for r, c in counts.items() if r != rank}
            if _pair_wings_ok(kickers, o):
                found.append(_Shape(FOUR_TWO_PAIRS, rank, 1, QUAD))
    return found


def describe(combo: Combination) -> str:
    """A short English name of a combination ('plane_singles of 3 up to 5')."""
    if combo.length > 1:
        return f"{combo.kind} of {combo.length} up to {rank_name(combo.rank)}"
    return f"{combo.kind} of {rank_name(combo.rank)}"


__all__ = [
    "BOMB", "DEFAULT", "DOUZERO", "FOUR_TWO_PAIRS", "FOUR_TWO_SINGLES", "KINDS", "OPTION_SPECS",
    "PAIR", "PAIR_STRAIGHT", "PLANE", "PLANE_PAIRS", "PLANE_SINGLES", "RLCARD", "ROCKET",
    "SINGLE", "STRAIGHT", "TRIPLE", "TRIPLE_PAIR", "TRIPLE_SINGLE", "Combination",
    "ComboOptions", "beats", "classify", "describe", "forget_readings", "read_play", "readings",
]
