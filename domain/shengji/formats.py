"""Trick play by formats: the house rules the `shengji_io` preset opts into (docs/shengji.md).

The rule book (play.py) reads a lead into components, owes a follower the largest match
vector its holding allows, forces a failed throw's lowest component and lets a trump play
win a throw on its key component. The house rules of shengji.io, each an option:

- `lead_reading=largest_unit`: a lead is read into **units** (runs of tuples, or all copies
  of one card) by every split that starts each unit at the lowest card left, a run taking
  as many copies from each step as its narrowest step holds (so with three packs a tractor
  may take two cards of a triple); the reading whose largest unit is biggest (a run beating
  an equal-sized lone tuple) wins, ties going to the split found last in that walk.
- `follow_duty=format_order`: a follower holding more cards of the suit than the lead owes
  the first **format** of a fixed sequence its holding can make: the lead's own units, then
  ever weaker splits of them (`requirements`); a follow that makes that format (or an
  earlier one) is legal. A follower holding a tractor of the lead's length must play it.
- `failed_throw_play=first_blocker`: the seats after the leader are asked in play order; the
  first one holding something that beats a unit decides, and the leader plays the first
  unit (smallest, then lowest) that seat beats.
- `throw_evaluation`: how a later play that matches the lead's units beats the best play so
  far: `all` (each unit beats its counterpart), `highest` (its highest card beats theirs) or
  `unit_length` (the longest units decide, singles only when nothing longer is led).

A unit is `Unit(width, steps)`: `width` copies of each card of `steps` (low to high, one card
per consecutive step). Among cards on one step (the off-suit trump-rank cards) the walks
take spades, hearts, diamonds, clubs in that order.

Its length (about 530 lines) is the house rules' formats, one table each, kept together
so that they read as one catalogue.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache

from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.errors import AnyReason
from fiftyk_referee.domain.shengji.cards import TRUMP, TrumpOrder, trump_order
from fiftyk_referee.domain.shengji.combinations import (
    MIN_RUN,
    PAIR_WIDTH,
    Component,
    kind_of,
)
from fiftyk_referee.domain.shengji.reasons import ShengjiReason

SUIT_WALK = {"S": 0, "H": 1, "D": 2, "C": 3, "": 4}  # order among cards of one step
Shape = tuple[int, ...]  # a unit's tuple widths, step by step
Format = tuple[Shape, ...]  # a follow requirement: one shape per unit


@dataclass(frozen=True, slots=True)
class Unit:
    """`width` copies of each card of `steps` (consecutive, low to high)."""

    width: int
    steps: tuple[Card, ...]

    @property
    def size(self) -> int:
        """Number of cards."""
        return self.width * len(self.steps)

    @property
    def is_run(self) -> bool:
        """Whether the unit spans two or more steps (a tractor or titanic)."""
        return len(self.steps) >= MIN_RUN

    @property
    def shape(self) -> Shape:
        """Its tuple widths, step by step."""
        return (self.width,) * len(self.steps)

    def cards(self) -> tuple[Card, ...]:
        """The unit's cards, low to high."""
        return tuple(c for c in self.steps for _ in range(self.width))


def walk_key(order: TrumpOrder, card: Card) -> tuple[int, int]:
    """The order the walks visit cards in: by strength, then spades, hearts, diamonds, clubs."""
    return order.info[card].strength, SUIT_WALK[card.suit]


def _next_step(order: TrumpOrder, card: Card) -> tuple[Card, ...]:
    """The cards on the next step of the card's suit group, in walk order."""
    return _steps_after(order.rank, order.suit, order.permanent_two)[card]


@lru_cache(maxsize=256)
def _steps_after(rank: int, suit: str | None, permanent_two: bool) -> dict[Card, tuple[Card, ...]]:
    order = trump_order(rank, suit, permanent_two)
    by_step: dict[tuple[str, int], list[Card]] = {}
    for card, info in order.info.items():
        by_step.setdefault((info.group, info.pos), []).append(card)
    return {card: tuple(sorted(by_step.get((info.group, info.pos + 1), ()),
                               key=lambda c: walk_key(order, c)))
            for card, info in order.info.items()}


def to_component(unit: Unit, order: TrumpOrder) -> Component:
    """The rule book's `Component` of a unit (a lone tuple of more than three counts as one)."""
    top = order.info[unit.steps[-1]]
    return Component(kind_of(min(unit.width, 3), len(unit.steps)), unit.width,
                     len(unit.steps), top.pos, top.strength, unit.cards())


def to_unit(component: Component) -> Unit:
    """The unit of a component (its cards are `width` copies per step)."""
    return Unit(component.width, component.cards[::component.width])


def engine_order(units: Sequence[Unit], order: TrumpOrder) -> list[Unit]:
    """Units smallest first, then lowest first: the order units are checked and compared in."""
    return sorted(units, key=lambda u: (u.size, walk_key(order, u.steps[0])))


# -- reading a lead (`lead_reading=largest_unit`) ------------------------------------------

def _runs_from(order: TrumpOrder, start: Card, counts: dict[Card, int],
               min_width: int = PAIR_WIDTH, min_length: int = MIN_RUN) -> list[Unit]:
    """Every run starting at `start`, shortest first; each takes its narrowest step's count."""
    if counts.get(start, 0) < min_width:
        return []
    found: list[Unit] = []
    frontier: list[tuple[Card, tuple[Card, ...]]] = [
        (nxt, (start,)) for nxt in _next_step(order, start)]
    narrowest = counts[start]
    while frontier:
        grown = []
        for card, path in frontier:
            count = counts.get(card, 0)
            if count < PAIR_WIDTH:
                continue
            # The narrowest step so far, over every path walked (as the walk it follows does).
            narrowest = min(narrowest, count)
            steps = (*path, card)
            if narrowest >= min_width and len(steps) >= min_length:
                found.append(Unit(narrowest, steps))
            grown += [(nxt, steps) for nxt in _next_step(order, card)]
        frontier = grown
    return found


def _splits(order: TrumpOrder, counts: dict[Card, int], left: int,
            floor: tuple[int, int] | None) -> list[list[Unit]]:
    """Every reading of `counts` (`left` cards) whose units start at or above `floor`."""
    if left == 0:
        return []
    cards = sorted((c for c, n in counts.items() if n > 0), key=lambda c: walk_key(order, c))
    if floor is not None:
        cards = [c for c in cards if walk_key(order, c) >= floor]
    starts: list[Unit] = []
    if cards:
        low = cards[0]
        runs = _runs_from(order, low, counts)
        starts += runs
        whole = bool(runs) and all(counts[c] == r.width for r in runs for c in r.steps)
        if not whole:
            starts.append(Unit(counts[low], (low,)))
    for start in starts:
        if start.size == left:
            return [[start]]
    readings: list[list[Unit]] = []
    for start in starts:
        for card in start.steps:
            counts[card] -= start.width
        for rest in _splits(order, counts, left - start.size, walk_key(order, start.steps[0])):
            readings.append([*rest, start])
        for card in start.steps:
            counts[card] += start.width
    return readings


def read_units(cards: Sequence[Card], order: TrumpOrder) -> list[Unit]:
    """The units of a lead of one suit group under `lead_reading=largest_unit`."""
    return list(_read_units(tuple(sorted(cards)), order.rank, order.suit, order.permanent_two))


@lru_cache(maxsize=2048)
def _read_units(cards: tuple[Card, ...], rank: int, suit: str | None,
                permanent_two: bool) -> tuple[Unit, ...]:
    # Cached: the hand reads each lead when it is played and again when its event applies.
    order = trump_order(rank, suit, permanent_two)
    counts = dict(Counter(cards))
    readings = _splits(order, counts, len(cards), None)
    # Stable: among readings with an equally big largest unit the last one found wins.
    best = max(reversed(readings), key=lambda us: max((u.size, u.is_run) for u in us))
    return tuple(engine_order(best, order))


# -- failed throws (`failed_throw_play=first_blocker`) -------------------------------------

def _beats_unit(unit: Unit, held: Counter[Card], order: TrumpOrder) -> bool:
    """Whether a holding (of the unit's group) has something beating this unit of a throw."""
    if not unit.is_run:
        low = order.info[unit.steps[0]].strength
        return any(n >= unit.width and order.info[c].strength > low for c, n in held.items())
    # A run as long or longer, as wide or wider, starting at the unit's second step or above
    # (by step alone: an off-suit trump-rank card starts a run on that step whatever its suit).
    floor = order.info[unit.steps[1]].strength
    counts = dict(held)
    return any(_runs_from(order, c, counts, unit.width, len(unit.steps))
               for c in held if order.info[c].strength >= floor)


def first_blocked(units: Sequence[Unit], others: Sequence[Sequence[Card]],
                  order: TrumpOrder) -> Unit | None:
    """The unit a failed throw plays: the first seat (in play order) able to beat one decides."""
    if len(units) < MIN_RUN:
        return None
    group = order.info[units[0].steps[0]].group
    ordered = engine_order(units, order)
    for hand in others:
        held = Counter(c for c in hand if order.info[c].group == group)
        for unit in ordered:
            if _beats_unit(unit, held, order):
                return unit
    return None


# -- the sequence of formats a follower owes (`follow_duty=format_order`) -----------------

@cache
def _partitions(n: int) -> tuple[tuple[int, ...], ...]:
    """Every way to split n cards into tuple sizes, largest first, in descending order."""
    found: set[tuple[int, ...]] = set()

    def grow(left: int, most: int, parts: tuple[int, ...]) -> None:
        if left == 0:
            found.add(parts)
            return
        for size in range(min(left, most), 0, -1):
            grow(left - size, size, (*parts, size))

    grow(n, n, ())
    return tuple(sorted(found, reverse=True))


@cache
def _groupings(length: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """The ways to group items 0..length-1 into runs: biggest group first, then fewest groups.

    Built item by item (the new item joins each existing group in turn, then a group of its
    own) and ordered stably, so equal-ranked groupings keep the order they were built in.
    """
    if length == 1:
        return (((0,),),)
    item = length - 1
    built: list[tuple[tuple[int, ...], ...]] = []
    for grouping in _groupings(length - 1):
        for i in range(len(grouping)):
            built.append((*grouping[:i], (*grouping[i], item), *grouping[i + 1:]))
        built.append((*grouping, (item,)))
    built.sort(key=lambda g: (-max(len(part) for part in g), len(g)))
    return tuple(built)


def _unique(items: Iterable[tuple[Shape, ...]]) -> list[tuple[Shape, ...]]:
    seen: set[tuple[Shape, ...]] = set()
    kept = []
    for item in items:
        if item not in seen:
            seen.add(item)
            kept.append(item)
    return kept


def _orderings(part: Shape) -> list[Shape]:
    """The distinct orders of a run's tuple widths, first seen first."""
    return [tuple(p) for p in dict.fromkeys(itertools.permutations(part))]


def _runs_of(widths: Shape) -> list[tuple[Shape, ...]]:
    """Every way to arrange tuples of these widths into runs (`_groupings`, then orders)."""
    arranged: list[tuple[Shape, ...]] = []
    for grouping in _groupings(len(widths)):
        runs = tuple(tuple(widths[i] for i in part) for part in grouping)
        if all(len(set(run)) == 1 for run in runs):
            arranged.append(runs)
        else:
            arranged += itertools.product(*(_orderings(run) for run in runs))
    return _unique(arranged)


@cache
def _partition_formats(sizes: tuple[int, ...]) -> tuple[Format, ...]:
    """The formats of one split into tuple sizes, strongest first (singles are never runs)."""
    tuples = tuple(s for s in sizes if s > 1)
    singles = tuple((1,) for s in sizes if s == 1)
    if not tuples:
        return (singles,)
    return tuple(_unique(tuple(sorted((*runs, *singles), reverse=True))
                         for runs in _runs_of(tuples)))


def _formats_after(unit: Shape) -> Iterator[Format]:
    """Every format of the unit's cards weaker than the unit itself, strongest first."""
    own = tuple(sorted(unit, reverse=True))
    started = False
    for sizes in _partitions(sum(unit)):
        formats = _partition_formats(sizes)
        if started:
            yield from formats
        elif sizes == own:
            started = True
            yield from formats[formats.index((unit,)) + 1:]


def requirements(shapes: Sequence[Shape], new_runs: bool = True) -> Iterator[Format]:
    """The formats a follower owes after the lead's own, each weaker than the one before.

    Each unit of the lead walks down its own list of weaker formats (`_formats_after`); at
    every step the unit with the most formats left takes its next one, and the combination
    of every unit's current format is the next requirement. One unit walks lazily: a long
    tractor has thousands of weaker formats and a follower usually owes one of the first.
    """
    units = [tuple(sorted(s, reverse=True)) for s in shapes]
    if any(not u for u in units):
        return
    may_join = [new_runs or len(u) > 1 for u in units]
    if len(units) == 1:
        for wanted in _formats_after(units[0]):
            if may_join[0] or all(len(shape) == 1 for shape in wanted):
                yield wanted
        return
    remaining = [list(reversed(list(_formats_after(u)))) for u in units]  # popped from the end
    current: dict[int, tuple[Shape, ...]] = {i: (u,) for i, u in enumerate(units)}
    turn = list(range(len(units)))
    while True:
        turn.sort(key=lambda i: -len(remaining[i]))
        index = turn[0]
        if not remaining[index]:
            return
        current[index] = remaining[index].pop()
        if all(len(shape) == 1 or may_join[i] for i in turn for shape in current[i]):
            yield tuple(sorted((s for i in turn for s in current[i]), reverse=True))


def can_make(counts: Counter[Card], wanted: Format, order: TrumpOrder) -> bool:
    """Whether cards (one suit group) hold disjoint units of every shape of `wanted`."""
    shapes = sorted(wanted, key=lambda s: (-len(s), -max(s)))
    left = dict(counts)

    def fill(index: int) -> bool:
        if index == len(shapes):
            return True
        for steps in _placements(left, shapes[index], order):
            for card, width in zip(steps, shapes[index], strict=True):
                left[card] -= width
            ok = fill(index + 1)
            for card, width in zip(steps, shapes[index], strict=True):
                left[card] += width
            if ok:
                return True
        return False

    return fill(0)


def _placements(left: dict[Card, int], shape: Shape, order: TrumpOrder) -> Iterator[list[Card]]:
    """Every way to lay a shape on consecutive steps of the cards left, highest start first."""
    starts = sorted((c for c, n in left.items() if n >= shape[0]),
                    key=lambda c: walk_key(order, c), reverse=True)
    for start in starts:
        stack = [[start]]
        while stack:
            path = stack.pop()
            if len(path) == len(shape):
                yield path
                continue
            for nxt in _next_step(order, path[-1]):
                if left.get(nxt, 0) >= shape[len(path)]:
                    stack.append([*path, nxt])


def owed_formats(components: Sequence[Component]) -> Iterator[Format]:
    """The lead's own format, then the weaker ones, in the order a follower owes them."""
    shapes = [(c.width,) * c.length for c in components]
    yield tuple(sorted(shapes, reverse=True))
    yield from requirements(shapes)


def format_follow_error(held: Sequence[Card], in_suit: Sequence[Card],
                        components: Sequence[Component], order: TrumpOrder,
                        owed: Format | None = None) -> tuple[AnyReason, str] | None:
    """Why a full-suit follow misses the first format the holding can make, or None.

    The play's cards are some of the holding's, so the play can make no format before the
    first one the holding can make: the follow is legal exactly when it makes that one.
    `owed` is that format when the caller already knows it (`first_owed`).
    """
    if owed is None:
        owed = first_owed(held, components, order)
    if owed is None or can_make(Counter(in_suit), owed, order):
        return None
    return _reason(owed), f"your hand can make {describe_format(owed)}: play it"


def first_owed(held: Sequence[Card], components: Sequence[Component],
               order: TrumpOrder) -> Format | None:
    """The first format of the sequence the holding can make (None: only the suit is owed)."""
    counts = Counter(held)
    for wanted in owed_formats(components):
        if not any(w > 1 for shape in wanted for w in shape):
            return None  # singles only: any cards of the suit make it
        if can_make(counts, wanted, order):
            return wanted
    return None


def witness(held: Sequence[Card], wanted: Format, order: TrumpOrder) -> list[Card]:
    """The cards of one way the holding makes `wanted` (lowest placements first)."""
    left = dict(Counter(held))
    chosen: list[Card] = []
    shapes = sorted(wanted, key=lambda s: (-len(s), -max(s)))

    def fill(index: int) -> bool:
        if index == len(shapes):
            return True
        for steps in reversed(list(_placements(left, shapes[index], order))):
            for card, width in zip(steps, shapes[index], strict=True):
                left[card] -= width
                chosen.extend([card] * width)
            if fill(index + 1):
                return True
            for card, width in zip(steps, shapes[index], strict=True):
                left[card] += width
                del chosen[-width:]
        return False

    fill(0)
    return chosen


def _reason(wanted: Format) -> ShengjiReason:
    if any(len(shape) > 1 for shape in wanted):
        return ShengjiReason.MUST_FOLLOW_TRACTOR
    if any(shape[0] >= 3 for shape in wanted):
        return ShengjiReason.MUST_FOLLOW_TRIPLE
    return ShengjiReason.MUST_FOLLOW_PAIR


_TUPLE_WORDS = {1: "single", 2: "pair", 3: "triple"}


def describe_format(wanted: Format) -> str:
    """A format in words: `a tractor of 2 pairs, a pair and 2 singles`."""
    words: Counter[str] = Counter()
    for shape in wanted:
        if len(shape) == 1:
            words[_TUPLE_WORDS.get(shape[0], f"{shape[0]}-tuple")] += 1
        elif len(set(shape)) == 1:
            name = "tractor" if shape[0] == PAIR_WIDTH else "titanic"
            words[f"{name} of {len(shape)}"] += 1
        else:
            words["run of " + "-".join(_TUPLE_WORDS.get(w, str(w)) for w in shape)] += 1
    return ", ".join(f"{n} × {w}" if n > 1 else f"a {w}" for w, n in words.items())


# -- winning a trick (`throw_evaluation`) --------------------------------------------------

def unit_matchings(play: Sequence[Card], units: Sequence[Unit],
                   order: TrumpOrder) -> Iterator[list[Unit]]:
    """Every way to read a play as units of the lead's shapes, unit by unit (highest first)."""
    left = dict(Counter(play))

    def fill(index: int, chosen: list[Unit]) -> Iterator[list[Unit]]:
        if index == len(units):
            yield list(chosen)
            return
        shape = units[index].shape
        for steps in _placements(left, shape, order):
            for card in steps:
                left[card] -= units[index].width
            chosen.append(Unit(units[index].width, tuple(steps)))
            yield from fill(index + 1, chosen)
            chosen.pop()
            for card in steps:
                left[card] += units[index].width

    yield from fill(0, [])


def _higher(a: Card, b: Card, order: TrumpOrder) -> int:
    sa, sb = order.info[a].strength, order.info[b].strength
    return (sa > sb) - (sa < sb)


def defeats(new: Sequence[Unit], best: Sequence[Unit], policy: str, order: TrumpOrder) -> bool:
    """Whether units matched to the lead beat the best play's units under the policy."""
    if policy == "highest":
        top_new = max((u.steps[-1] for u in new), key=lambda c: walk_key(order, c))
        top_best = max((u.steps[-1] for u in best), key=lambda c: walk_key(order, c))
        return _higher(top_new, top_best, order) > 0
    if policy == "unit_length":
        skip_singles = len(new) > 1 and any(u.size > 1 for u in new)
        compared = [(u.size, _higher(u.steps[0], w.steps[0], order))
                    for u, w in zip(new, best, strict=True) if not skip_singles or u.size > 1]
        compared.sort(key=lambda sc: (-sc[0], sc[1] == 0))
        for _, outcome in compared:
            if outcome:
                return outcome > 0
        return False
    return all(_higher(u.steps[0], w.steps[0], order) > 0
               for u, w in zip(new, best, strict=True))


def beating_units(play: Sequence[Card], lead_units: Sequence[Unit], best: Sequence[Unit],
                  lead_group: str, policy: str, order: TrumpOrder) -> list[Unit] | None:
    """The first reading of `play` as the lead's units that beats `best`, or None."""
    groups = {order.info[c].group for c in play}
    if len(groups) != 1 or len(play) != sum(u.size for u in lead_units):
        return None
    (group,) = groups
    if group != lead_group and group != TRUMP:
        return None
    for matching in unit_matchings(play, lead_units, order):
        if defeats(matching, best, policy, order):
            return matching
    return None


__all__ = [
    "Unit", "beating_units", "can_make", "defeats", "describe_format", "engine_order",
    "first_blocked", "first_owed", "format_follow_error", "owed_formats", "read_units",
    "requirements", "to_component", "to_unit", "unit_matchings", "walk_key", "witness",
]
