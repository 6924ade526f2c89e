"""Shengji combinations (docs/shengji.md#combinations): single, pair, triple, tractor, ...

A **tuple** is 2 or 3 identical cards; tuples on consecutive tiers of one suit group form a
tractor (pairs) or a titanic (triples). A lead that is not one component is a throw, read as
components in a fixed order (`decompose`). Runs are taken "longest run first":
repeatedly the longest stretch of consecutive tiers that still holds a tuple (ties: the
higher one), one tuple per tier, until no stretch of two is left.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.errors import InvalidCombination
from fiftyk_referee.domain.shengji.cards import TrumpOrder

SINGLE, PAIR, TRIPLE, TRACTOR, TITANIC, THROW = (
    "single", "pair", "triple", "tractor", "titanic", "throw")
PAIR_WIDTH, TRIPLE_WIDTH = 2, 3
MIN_RUN = 2
KIND_OF = {(1, 1): SINGLE, (PAIR_WIDTH, 1): PAIR, (TRIPLE_WIDTH, 1): TRIPLE}


def kind_of(width: int, length: int) -> str:
    """The component type of `length` tuples of `width` cards."""
    if length == 1:
        return KIND_OF[(width, 1)]
    return TRACTOR if width == PAIR_WIDTH else TITANIC


@dataclass(frozen=True, slots=True)
class Component:
    """One component: `length` tuples of `width` identical cards on consecutive tiers."""

    kind: str
    width: int
    length: int
    top: int  # tier of the highest tuple
    strength: int  # strength of a card on the top tier (compares across groups)
    cards: tuple[Card, ...]

    @property
    def size(self) -> int:
        """Number of cards."""
        return self.width * self.length


def longest_runs(tiers: dict[int, list[Card]]) -> tuple[list[list[Card]], dict[int, list[Card]]]:
    """Runs of ≥ 2 consecutive tiers, longest first (ties: higher), one card per tier.

    `tiers` maps a tier to the cards (each standing for one tuple) on it; returns the runs
    (each low to high) and what is left per tier. The input is not changed.
    """
    left = {pos: list(cards) for pos, cards in tiers.items() if cards}
    runs: list[list[Card]] = []
    while len(left) >= MIN_RUN:
        best_start, best_len = -1, 0
        for pos in sorted(left):
            if pos - 1 in left:
                continue
            end = pos
            while end + 1 in left:
                end += 1
            length = end - pos + 1
            if length >= best_len:  # `>=`: ascending scan, so ties go to the higher stretch
                best_start, best_len = pos, length
        if best_len < MIN_RUN:
            break
        run = []
        for pos in range(best_start, best_start + best_len):
            cards = left[pos]
            run.append(cards.pop(0))
            if not cards:
                del left[pos]
        runs.append(run)
    return runs, left


def _component(kind: str, width: int, cards: Sequence[Card], order: TrumpOrder) -> Component:
    """A component of one card per tuple, low to high."""
    top_card = cards[-1]
    info = order.info[top_card]
    expanded = tuple(c for c in cards for _ in range(width))
    return Component(kind, width, len(cards), info.pos, info.strength, expanded)


def decompose(cards: Iterable[Card], order: TrumpOrder) -> list[Component]:
    """Read cards of one suit group as components (a throw's reading), largest first."""
    counts = Counter(cards)
    info = order.info
    components: list[Component] = []
    by_width: dict[int, dict[int, list[Card]]] = {TRIPLE_WIDTH: {}, PAIR_WIDTH: {}}
    singles: list[Card] = []
    for card, count in counts.items():
        if count >= PAIR_WIDTH:
            width = min(count, TRIPLE_WIDTH)
            by_width[width].setdefault(info[card].pos, []).append(card)
        else:
            singles.append(card)
    for width in (TRIPLE_WIDTH, PAIR_WIDTH):
        tiers = {pos: sorted(cs, key=order.sort_key) for pos, cs in by_width[width].items()}
        runs, left = longest_runs(tiers)
        for run in runs:
            components.append(_component(kind_of(width, len(run)), width, run, order))
        for cs in left.values():
            for card in cs:
                components.append(_component(kind_of(width, 1), width, [card], order))
    for card in singles:
        components.append(_component(SINGLE, 1, [card], order))
    components.sort(key=lambda c: (-c.size, -c.width, -c.strength))
    return components


def suit_group_of(cards: Sequence[Card], order: TrumpOrder) -> str:
    """The one suit group of `cards` (`INVALID_COMBINATION` when they span two, or none)."""
    if not cards:
        raise InvalidCombination("a play needs at least one card")
    info = order.info
    group = info[cards[0]].group
    for card in cards:
        if info[card].group != group:
            raise InvalidCombination(
                "a lead must be of one suit group: " + " ".join(map(str, cards)))
    return group


def classify(cards: Sequence[Card], order: TrumpOrder) -> tuple[str, list[Component]]:
    """The type of a lead (a component type or `throw`) and its components."""
    suit_group_of(cards, order)
    components = decompose(cards, order)
    kind = components[0].kind if len(components) == 1 else THROW
    return kind, components


def is_tractor(cards: Sequence[Card], order: TrumpOrder) -> bool:
    """Whether the cards are exactly one tractor (≥ 2 pairs on consecutive tiers)."""
    return _is_one(cards, order, TRACTOR)


def is_titanic(cards: Sequence[Card], order: TrumpOrder) -> bool:
    """Whether the cards are exactly one titanic (≥ 2 triples on consecutive tiers)."""
    return _is_one(cards, order, TITANIC)


def _is_one(cards: Sequence[Card], order: TrumpOrder, kind: str) -> bool:
    try:
        found, _ = classify(cards, order)
    except InvalidCombination:
        return False
    return found == kind


__all__ = [
    "PAIR",
    "SINGLE",
    "THROW",
    "TITANIC",
    "TRACTOR",
    "TRIPLE",
    "Component",
    "classify",
    "decompose",
    "is_titanic",
    "is_tractor",
    "kind_of",
    "longest_runs",
    "suit_group_of",
]
