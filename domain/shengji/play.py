"""Tricks (docs/shengji.md, "Tricks"): leads, throws, following, trumping and the winner.

- `make_lead` reads a lead (one suit group; one component or a throw).
- `failed_throw` checks a throw against the other three hands ("Leading and throwing") and
  names the component the leader is forced to play, if any.
- `follow_error` is the fast follow-legality check ("Following"): card count, suit, then the
  **match vector** of the play against that of the follower's whole holding in the suit.
- `play_key` ("Winning a trick"): whether a play has the lead's shape in a winning suit
  group, and its key (compared by `strength`; equal keeps the earlier play).
- `follow_constraint`, `follow_examples` and `lead_examples` answer `ListLegalPlays`
  (through `ShengjiHand.legal_actions`) in bounded size — see "Legal actions" below.

Match vector. The lead offers **bins** (its tractors and titanics: `length` adjacent slots
of their width) and lone slots (its pairs and triples). The follower's tuples (2 or 3
identical cards) form runs on consecutive tiers; where a tier holds several tuples, every
reading of the holding as runs is tried (`_readings`) and the best counts, so a follower
owes the most its cards allow. Run pieces (≥ 2 consecutive tuples) are placed into bins,
several pieces may share a bin, at most one tuple per slot, a triple serving as a pair and a
pair sitting in a triple slot. Entries, maximised lexicographically over every reading and
every placement of run pieces: (1) triples of X's titanics (stretches of ≥ 2 consecutive
triples) in titanic bins, (2) tuples of pieces in bins, (3) triple slots holding a triple
(pieces, then the remaining triples in the remaining triple slots), (4) slots of width ≥ 2
holding a tuple — always min(tuples, such slots), whatever the placement. The same
maximum is taken for the holding and for the play.

Legal actions (`ListLegalPlays`). The number of legal follows is combinatorial (a void seat
may discard any n of its cards), so the answer is **constraints plus a bounded list**:

- `FollowConstraint` (data): how many cards, which suit group, how many of them must come
  from it, the cards that must all be played (when the seat holds n or fewer of the suit),
  and the match vector the play's suit cards must reach (entries 1–4 above); `describe`
  gives the same in words, one line per constraint, and `requirements` as `Constraint`
  records (with the lead's slots and the seat's tuples that can serve each entry).
- `plays`: at most `EXAMPLE_LIMIT` distinct example plays, every one checked legal by
  `follow_error` before it is listed (the lowest-ranked fills first, then variations, and a
  void seat's shaped trump plays). `truncated` says when other legal plays exist: when the
  seat has at most `COMPLETE_LIMIT` possible plays they are all checked, so a complete list
  is known to be complete; a single led lists every distinct legal card.
- Leading: any cards of one suit group; the examples list the seat's single, pair, triple,
  tractor and titanic components (a throw is always allowed, and checked when played).

Its length (about 740 lines) is one algorithm: a play matched against the lead's shape
(pairs, tractors, throws), for following, examples and the trick's winner.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.errors import AnyReason
from fiftyk_referee.domain.game import Constraint
from fiftyk_referee.domain.shengji.cards import TRUMP, TrumpOrder, trump_order
from fiftyk_referee.domain.shengji.combinations import (
    MIN_RUN,
    PAIR_WIDTH,
    SINGLE,
    TRIPLE_WIDTH,
    Component,
    classify,
    decompose,
    kind_of,
)
from fiftyk_referee.domain.shengji.reasons import ShengjiReason

EXAMPLE_LIMIT = 24
CANDIDATES = EXAMPLE_LIMIT + EXAMPLE_LIMIT // 2  # candidate follows tried (some repeat)
COMPLETE_LIMIT = 256  # at most this many possible plays are all checked, to prove a list complete
SUIT_NAMES = {"S": "spades", "H": "hearts", "C": "clubs", "D": "diamonds", TRUMP: "trumps"}
Vector = tuple[int, int, int, int]
ZERO: Vector = (0, 0, 0, 0)
VECTOR_REASONS = (ShengjiReason.MUST_FOLLOW_TRACTOR, ShengjiReason.MUST_FOLLOW_TRACTOR,
                  ShengjiReason.MUST_FOLLOW_TRIPLE, ShengjiReason.MUST_FOLLOW_PAIR)


@dataclass(frozen=True)
class Lead:
    """A trick's lead as the followers must answer it: its group, components and slots."""

    group: str
    cards: tuple[Card, ...]
    kind: str  # a component type, or `throw`
    components: tuple[Component, ...]  # largest first: components[0] is the key component
    bins: tuple[tuple[int, int], ...]  # (width, length) of tractors and titanics, widest first
    triples: int  # lone triple slots
    pairs: int  # lone pair slots

    @property
    def size(self) -> int:
        """Number of cards every follower plays."""
        return len(self.cards)

    @property
    def largest(self) -> int:
        """Cards of the largest component (what the 抠底 kitty multiplier reads)."""
        return self.components[0].size

    @property
    def has_tuples(self) -> bool:
        """Whether the lead has any slot of width ≥ 2 (else only the suit is owed)."""
        return bool(self.bins) or self.triples > 0 or self.pairs > 0


def lead_of(kind: str, components: Sequence[Component], group: str) -> Lead:
    """The `Lead` of components already read (a whole lead, or a failed throw's forced part)."""
    bins = sorted(((c.width, c.length) for c in components if c.length >= MIN_RUN),
                  reverse=True)
    cards = tuple(card for c in components for card in c.cards)
    return Lead(
        group=group, cards=cards, kind=kind, components=tuple(components), bins=tuple(bins),
        triples=sum(1 for c in components if c.length == 1 and c.width == TRIPLE_WIDTH),
        pairs=sum(1 for c in components if c.length == 1 and c.width == PAIR_WIDTH),
    )


def make_lead(cards: Sequence[Card], order: TrumpOrder) -> Lead:
    """Read a lead (`INVALID_COMBINATION` when its cards span two suit groups)."""
    key = tuple(sorted(cards))
    return _read_lead(key, order.rank, order.suit, order.permanent_two)


@lru_cache(maxsize=4096)
def _read_lead(cards: tuple[Card, ...], rank: int, suit: str | None,
               permanent_two: bool) -> Lead:
    # Cached: the hand reads each lead when it is played and again when its event applies.
    order = trump_order(rank, suit, permanent_two)
    kind, components = classify(cards, order)
    return lead_of(kind, components, order.info[cards[0]].group)


# -- throws ---------------------------------------------------------------------------------

def _tier_heights(cards: Iterable[Card], group: str, order: TrumpOrder) -> dict[int, int]:
    """For one suit group: each tier's largest number of identical cards."""
    counts: Counter[Card] = Counter(c for c in cards if order.info[c].group == group)
    heights: dict[int, int] = {}
    for card, count in counts.items():
        pos = order.info[card].pos
        if count > heights.get(pos, 0):
            heights[pos] = count
    return heights


def _holds_higher(component: Component, heights: dict[int, int]) -> bool:
    """Whether a holding (tier heights) has this component's type and length, higher."""
    width, length = component.width, component.length
    streak = 0
    for pos in sorted(heights):
        if heights[pos] < width:
            streak = 0
            continue
        streak = streak + 1 if pos - 1 in heights and heights[pos - 1] >= width else 1
        if streak >= length and pos > component.top:
            return True
    return False


def failed_throw(lead: Lead, others: Sequence[Sequence[Card]],
                 order: TrumpOrder) -> Component | None:
    """The component a failed throw is forced to play (lowest top, then fewer cards), or None."""
    if len(lead.components) < MIN_RUN:
        return None
    heights = [_tier_heights(cards, lead.group, order) for cards in others]
    failed = [c for c in lead.components if any(_holds_higher(c, h) for h in heights)]
    if not failed:
        return None
    return min(failed, key=lambda c: (c.strength, c.size))


# -- the match vector -----------------------------------------------------------------------

@dataclass
class _Material:
    """A holding's tuples in one suit group: per card its width, readings, triple count."""

    width: dict[Card, int]
    readings: list[list[list[Card]]]  # every distinct way to read the tuples as runs
    triples: int
    tuples: list[Card]  # every tuple (one card each), low to high


def _material(counts: Counter[Card], order: TrumpOrder, need_runs: bool) -> _Material:
    width: dict[Card, int] = {}
    tiers: dict[int, list[Card]] = {}
    info = order.info
    for card, count in counts.items():
        if count >= PAIR_WIDTH:
            w = TRIPLE_WIDTH if count >= TRIPLE_WIDTH else PAIR_WIDTH
            width[card] = w
            if need_runs:
                tiers.setdefault(info[card].pos, []).append(card)
    readings: list[list[list[Card]]] = []
    if need_runs and len(tiers) >= MIN_RUN:
        readings = _readings(tiers, width)
    ordered = sorted(width, key=order.sort_key)
    return _Material(width, readings, sum(1 for w in width.values() if w == TRIPLE_WIDTH),
                     ordered)


def _readings(tiers: dict[int, list[Card]], width: dict[Card, int]) -> list[list[list[Card]]]:
    """Every distinct reading of a holding's tuples as runs (each low to high).

    A tier may hold several tuples (the off-suit trump-rank cards, the 2s under
    `permanent_two`), and which of them a run goes through changes what the holding owes:
    the follow duty is the best over every reading. Between two adjacent tiers a reading
    links as many tuples as it can (any cut the placement needs, it makes itself), so the
    readings are the maximum matchings of neighbouring tiers. Readings that differ only in
    which of two equally wide tuples of one tier they take are the same reading.
    """
    found: dict[tuple[tuple[tuple[int, int], ...], ...], list[list[Card]]] = {}
    positions = sorted(tiers)
    tier_of = {card: pos for pos, cards in tiers.items() for card in cards}

    def walk(index: int, chains: list[list[Card]], done: list[list[Card]]) -> None:
        if index == len(positions):
            runs = [chain for chain in done + chains if len(chain) >= MIN_RUN]
            key = tuple(sorted(tuple((tier_of[c], width[c]) for c in run) for run in runs))
            found.setdefault(key, runs)
            return
        pos = positions[index]
        cards = tiers[pos]
        if index and positions[index - 1] != pos - 1:
            done, chains = done + chains, []
        linked = min(len(chains), len(cards))
        for ends in itertools.combinations(range(len(chains)), linked):
            for picks in itertools.permutations(cards, linked):
                grown = [chains[e] + [card] for e, card in zip(ends, picks, strict=True)]
                closed = [chain for e, chain in enumerate(chains) if e not in ends]
                fresh = [[card] for card in cards if card not in picks]
                walk(index + 1, grown + fresh, done + closed)

    walk(0, [], [])
    return list(found.values())


@dataclass
class _Placement:
    score: tuple[int, int, int]  # entries 1-3
    pieces: list[tuple[int, list[Card]]]  # (bin width, tuples of the piece)
    caps: tuple[int, ...]  # what is left of each bin


def _titanic_tuples(widths: Sequence[int]) -> int:
    """Triples of a piece that sit in stretches of ≥ 2 consecutive triples (X's titanics)."""
    total = streak = 0
    for width in (*widths, 0):
        if width == TRIPLE_WIDTH:
            streak += 1
            continue
        if streak >= MIN_RUN:
            total += streak
        streak = 0
    return total


def _place(bins: Sequence[tuple[int, int]], runs: list[list[Card]], width: dict[Card, int],
           triples: int, lone_triple_slots: int) -> _Placement:
    """The best placement of run pieces into the bins (entries 1-3, lexicographic).

    Entry 3 counts triples in titanic slots through pieces, plus the triples left over in
    the triple slots left over. A branch is cut when even its optimistic bound cannot beat
    the best placement found; longer pieces are tried first so good bounds come early.
    """
    caps = [length for _, length in bins]
    is_titanic = [w == TRIPLE_WIDTH for w, _ in bins]
    best = _Placement((-1, -1, -1), [], tuple(caps))
    e3_bound = min(triples, lone_triple_slots + sum(c for c, t in zip(caps, is_titanic,
                                                                      strict=True) if t))
    pieces: list[tuple[int, list[Card]]] = []
    score = [0, 0, 0, 0]  # entries 1, 2, triples in titanic slots, triples used by pieces

    def finish() -> None:
        nonlocal best
        free = lone_triple_slots + sum(c for c, t in zip(caps, is_titanic, strict=True) if t)
        e3 = score[2] + min(triples - score[3], free)
        if (score[0], score[1], e3) > best.score:
            best = _Placement((score[0], score[1], e3), list(pieces), tuple(caps))

    def search(index: int, runs: list[list[Card]]) -> None:
        if index == len(bins) or not runs:
            finish()
            return
        room = sum(caps[index:])
        titanic_room = sum(c for c, t in zip(caps[index:], is_titanic[index:], strict=True) if t)
        tuples_left = sum(len(r) for r in runs)
        triples_left = sum(1 for r in runs for c in r if width[c] == TRIPLE_WIDTH)
        bound = (score[0] + min(titanic_room, triples_left), score[1] + min(room, tuples_left),
                 e3_bound)
        if bound <= best.score:
            return
        bin_width = bins[index][0]
        cap = caps[index]
        for r, run in enumerate(runs):
            for start in range(len(run) - 1):
                for stop in range(min(len(run), start + cap), start + MIN_RUN - 1, -1):
                    piece = run[start:stop]
                    widths = [width[c] for c in piece]
                    used = sum(1 for w in widths if w == TRIPLE_WIDTH)
                    if bin_width == TRIPLE_WIDTH:
                        gained_triples, titanic = used, _titanic_tuples(widths)
                    else:
                        gained_triples = titanic = 0
                    rest = runs[:r] + runs[r + 1:]
                    rest += [part for part in (run[:start], run[stop:]) if len(part) >= MIN_RUN]
                    step = (titanic, len(piece), gained_triples, used)
                    caps[index] -= len(piece)
                    for entry, gain in enumerate(step):
                        score[entry] += gain
                    pieces.append((bin_width, piece))
                    search(index, rest)
                    pieces.pop()
                    for entry, gain in enumerate(step):
                        score[entry] -= gain
                    caps[index] += len(piece)
        search(index + 1, runs)

    search(0, runs)
    return best


def match_vector(counts: Counter[Card], lead: Lead, order: TrumpOrder,
                 witness: bool = False) -> tuple[Vector, list[Card]]:
    """The match vector of a holding (its cards in the lead's group) against the lead.

    With `witness`, also a smallest set of cards that reaches the same vector (≤ lead size).
    """
    if not lead.has_tuples:
        return ZERO, []
    material = _material(counts, order, bool(lead.bins))
    width = material.width
    slots = sum(length for _, length in lead.bins) + lead.triples + lead.pairs
    e4 = min(len(width), slots)
    if lead.bins and material.readings:
        placed = max((_place(lead.bins, runs, width, material.triples, lead.triples)
                      for runs in material.readings), key=lambda p: p.score)
        e1, e2, e3 = placed.score
        caps = placed.caps
        pieces = placed.pieces
    else:
        e1 = e2 = 0
        caps = tuple(length for _, length in lead.bins)
        pieces = []
        free_triple_slots = lead.triples + sum(
            cap for (w, _), cap in zip(lead.bins, caps, strict=True) if w == TRIPLE_WIDTH)
        e3 = min(material.triples, free_triple_slots)
    if not witness:
        return (e1, e2, e3, e4), []
    used = {card for _, piece in pieces for card in piece}
    in_pieces = sum(1 for bin_width, piece in pieces for c in piece
                    if bin_width == TRIPLE_WIDTH and width[c] == TRIPLE_WIDTH)
    cards: list[Card] = []
    for bin_width, piece in pieces:
        for card in piece:
            cards += [card] * min(width[card], bin_width)
    free = [c for c in material.tuples if c not in used]
    triples = [c for c in free if width[c] == TRIPLE_WIDTH][:e3 - in_pieces]
    for card in triples:
        cards += [card] * TRIPLE_WIDTH
    rest = [c for c in free if c not in triples][:e4 - len(used) - len(triples)]
    for card in rest:
        cards += [card] * PAIR_WIDTH
    return (e1, e2, e3, e4), cards


# -- following ------------------------------------------------------------------------------

def _group_counts(cards: Iterable[Card], group: str, order: TrumpOrder) -> Counter[Card]:
    info = order.info
    return Counter(c for c in cards if info[c].group == group)


def follow_error(hand: Sequence[Card], play: Sequence[Card], lead: Lead,
                 order: TrumpOrder) -> tuple[AnyReason, str] | None:
    """Why `play` (cards the seat holds) may not follow `lead`, or None when it may."""
    held = order.in_group(hand, lead.group)
    return _FollowCheck(held, lead, order).error(play)


class _FollowCheck:
    """The follow check for one holding, its vector computed once (for many candidates)."""

    def __init__(self, held: list[Card], lead: Lead, order: TrumpOrder) -> None:
        self.held = held
        self.lead = lead
        self.order = order
        self.want: Vector | None = None
        # A play's vector depends only on its tuples (which cards, pairs or triples): the
        # many candidates of one answer share a few, each computed once.
        self.vectors: dict[frozenset[tuple[Card, int]], Vector] = {}

    def error(self, play: Sequence[Card]) -> tuple[AnyReason, str] | None:
        lead, order = self.lead, self.order
        n = len(lead.cards)
        if len(play) != n:
            return ShengjiReason.WRONG_CARD_COUNT, f"the lead has {n} cards; play exactly {n}"
        group = lead.group
        held = self.held
        in_suit = order.in_group(play, group)
        have = len(held)
        name = SUIT_NAMES[group]
        if have >= n and len(in_suit) != n:
            return ShengjiReason.MUST_FOLLOW_SUIT, f"play {n} {name}: you hold {have}"
        if have < n and Counter(in_suit) != Counter(held):
            return ShengjiReason.MUST_FOLLOW_SUIT, f"play all your {have} {name} first"
        if have <= n or not lead.has_tuples:
            return None
        if self.want is None:
            self.want = match_vector(Counter(held), lead, order)[0]
        want = self.want
        counts: dict[Card, int] = {}
        for card in in_suit:
            counts[card] = counts.get(card, 0) + 1
        tuples = frozenset((card, min(count, TRIPLE_WIDTH)) for card, count in counts.items()
                           if count >= PAIR_WIDTH)
        got = self.vectors.get(tuples)
        if got is None:
            got = self.vectors[tuples] = match_vector(Counter(counts), lead, order)[0]
        if got == want:
            return None
        for entry, reason in enumerate(VECTOR_REASONS):
            if got[entry] != want[entry]:
                return reason, _vector_message(entry, want[entry], name)
        return None  # unreachable: the vectors differ in some entry


def _vector_message(entry: int, wanted: int, name: str) -> str:
    what = ("triples in titanics", "pairs of tractors in the lead's tractors",
            "triples", "pairs")[entry]
    return f"you must follow with {wanted} {what} of {name}, as your hand allows"


# -- winning a trick ------------------------------------------------------------------------

def play_key(play: Sequence[Card], lead: Lead, order: TrumpOrder) -> int | None:
    """The key strength of a play that can win the trick, or None (wrong group or shape)."""
    info = order.info
    groups = {info[c].group for c in play}
    if len(groups) != 1:
        return None
    (group,) = groups
    if group != lead.group and not (lead.group != TRUMP and group == TRUMP):
        return None
    if len(lead.components) == 1:
        shape = lead.components[0]
        if shape.kind == SINGLE:
            return info[play[0]].strength
        parts = decompose(play, order)
        if len(parts) == 1 and parts[0].kind == shape.kind and parts[0].length == shape.length:
            return parts[0].strength
        return None
    return _throw_key(Counter(play), lead.components, order)


def trick_winner(plays: Sequence[Sequence[Card]], order: TrumpOrder) -> int:
    """The index of the winning play of a trick of legal plays, `plays[0]` the lead.

    The lead stands until a later play's key is strictly higher (equal keeps the earlier),
    as the hand aggregate decides trick by trick.
    """
    lead = make_lead(plays[0], order)
    best, best_key = 0, play_key(plays[0], lead, order)
    for index, play in enumerate(plays[1:], start=1):
        key = play_key(play, lead, order)
        if key is not None and (best_key is None or key > best_key):
            best, best_key = index, key
    return best


def _placements(counts: Counter[Card], width: int, length: int,
                order: TrumpOrder) -> Iterator[tuple[int, list[Card]]]:
    """Every way to take `length` tuples of `width` on consecutive tiers: (top strength, cards)."""
    tiers: dict[int, list[Card]] = {}
    for card, count in counts.items():
        if count >= width:
            tiers.setdefault(order.info[card].pos, []).append(card)
    for top in sorted(tiers, reverse=True):
        span = range(top - length + 1, top + 1)
        if all(p in tiers for p in span):
            for choice in itertools.product(*(tiers[p] for p in span)):
                yield order.info[choice[-1]].strength, list(choice)


def _fits(counts: Counter[Card], parts: Sequence[Component], order: TrumpOrder) -> bool:
    """Whether the cards split into groups of exactly these components' types and lengths."""
    if not parts or all(p.kind == SINGLE for p in parts):
        return True  # sizes match, so the rest are the singles
    first, rest = parts[0], parts[1:]
    for _, cards in _placements(counts, first.width, first.length, order):
        left = counts.copy()
        for card in cards:
            left[card] -= first.width
        if _fits(+left, rest, order):
            return True
    return False


def _throw_key(counts: Counter[Card], parts: Sequence[Component],
               order: TrumpOrder) -> int | None:
    key, rest = parts[0], parts[1:]
    for strength, cards in _placements(counts, key.width, key.length, order):
        left = counts.copy()
        for card in cards:
            left[card] -= key.width
        if _fits(+left, rest, order):
            return strength
    return None


# -- legal actions -------------------------------------------------------------------------

@dataclass(frozen=True)
class FollowConstraint:
    """What a follower must play, as data (see the module docstring)."""

    count: int
    group: str
    from_group: int  # how many of the cards must be of `group`
    must_include: tuple[Card, ...]  # all of these (the seat's whole suit when it is short)
    vector: Vector  # the match vector the suit cards of the play must have
    slots: tuple[tuple[int, int, int], ...] = ()  # the lead's (width, length, how many)
    owed_from: tuple[tuple[Card, ...], ...] = ((), (), (), ())  # per entry: tuples that serve

    def describe(self) -> tuple[str, ...]:
        """The constraints in words."""
        name = SUIT_NAMES[self.group]
        lines = [f"play exactly {self.count} cards"]
        if self.from_group == self.count:
            lines.append(f"all {self.count} of {name}")
        elif self.from_group:
            lines.append(f"all your {self.from_group} {name}, then any other cards")
        else:
            lines.append(f"no {name} left: any cards (all trumps with the lead's shape win)")
        e1, e2, e3, e4 = self.vector
        if e1:
            lines.append(f"{e1} triples in runs matching the lead's titanics")
        if e2:
            lines.append(f"{e2} tuples in runs matching the lead's tractors and titanics")
        if e3:
            lines.append(f"{e3} triples where the lead has triples")
        if e4:
            lines.append(f"{e4} pairs or triples where the lead has pairs or triples")
        return tuple(lines)

    def requirements(self) -> tuple[Constraint, ...]:
        """The same constraints as records (kinds documented in docs/shengji.md)."""
        found = [Constraint("count", count=self.count),
                 Constraint("suit", count=self.from_group, group=self.group)]
        if self.must_include:
            found.append(Constraint("include", group=self.group,
                                    cards=tuple(map(str, self.must_include))))
        if self.vector != ZERO:
            found += [Constraint("slots", count=count, group=self.group, width=width,
                                 length=length) for width, length, count in self.slots]
        for entry, (kind, width) in enumerate(ENTRY_KINDS):
            if self.vector[entry]:
                found.append(Constraint(kind, count=self.vector[entry], group=self.group,
                                        width=width,
                                        cards=tuple(map(str, self.owed_from[entry]))))
        return tuple(found)


# The match vector's entries as constraint kinds, with the narrowest tuple each counts.
ENTRY_KINDS = (("titanic_triples", TRIPLE_WIDTH), ("run_tuples", PAIR_WIDTH),
               ("triples", TRIPLE_WIDTH), ("tuples", PAIR_WIDTH))


def follow_constraint(hand: Sequence[Card], lead: Lead, order: TrumpOrder) -> FollowConstraint:
    """The constraint a follower holding `hand` must meet."""
    held = _group_counts(hand, lead.group, order)
    have = sum(held.values())
    n = lead.size
    must = tuple(sorted(held.elements(), key=order.sort_key)) if have <= n else ()
    vector = match_vector(held, lead, order)[0] if have > n else ZERO
    shapes = Counter((c.width, c.length) for c in lead.components if c.width >= PAIR_WIDTH)
    slots = tuple((w, length, k) for (w, length), k in sorted(shapes.items(), reverse=True))
    return FollowConstraint(n, lead.group, min(have, n), must, vector, slots,
                            _owed_from(held, order))


def _owed_from(held: Counter[Card], order: TrumpOrder) -> tuple[tuple[Card, ...], ...]:
    """Per match-vector entry, the holding's tuples (one card each) that can count there."""
    tuples = sorted((c for c, k in held.items() if k >= PAIR_WIDTH), key=order.sort_key)
    triples = [c for c in tuples if held[c] >= TRIPLE_WIDTH]

    def in_runs(cards: list[Card]) -> tuple[Card, ...]:
        steps = {order.info[c].pos for c in cards}
        return tuple(c for c in cards
                     if order.info[c].pos - 1 in steps or order.info[c].pos + 1 in steps)

    return in_runs(triples), in_runs(tuples), tuple(triples), tuple(tuples)


def lead_examples(hand: Sequence[Card], order: TrumpOrder) -> list[tuple[list[Card], str]]:
    """Example leads: every single, pair and triple, and the tractors and titanics (bounded)."""
    by_group: dict[str, list[Card]] = {}
    for card in hand:
        by_group.setdefault(order.info[card].group, []).append(card)
    found: dict[tuple[Card, ...], str] = {}
    for cards in by_group.values():
        counts = Counter(cards)
        for card in sorted(counts, key=order.sort_key):
            for width in range(1, min(counts[card], TRIPLE_WIDTH) + 1):
                found[(card,) * width] = kind_of(width, 1)
        tuples = [c for c in cards if counts[c] >= PAIR_WIDTH]
        if len(tuples) >= MIN_RUN * PAIR_WIDTH:  # room for a tractor at least
            for component in decompose(tuples, order):
                if component.length >= MIN_RUN:
                    found[component.cards] = component.kind
    plays = [(list(cards), kind) for cards, kind in found.items()]
    plays.sort(key=lambda p: (-len(p[0]), order.sort_key(p[0][-1])))
    return plays[:EXAMPLE_LIMIT]


def follow_examples(hand: Sequence[Card], lead: Lead,
                    order: TrumpOrder) -> tuple[list[list[Card]], bool]:
    """Bounded legal follows (each checked) and whether other legal follows exist."""
    n = lead.size
    group = lead.group
    in_group = sorted(order.in_group(hand, group), key=order.sort_key)
    others = sorted(order.not_in_group(hand, group), key=order.sort_key)
    candidates: list[list[Card]] = []
    if len(in_group) == n:
        return [in_group], False
    if n == 1:
        # A single led: every distinct card of the suit (or of the hand, when void) is legal.
        distinct = dict.fromkeys(in_group or sorted(hand, key=order.sort_key))
        singles = [[card] for card in distinct]
        return singles[:EXAMPLE_LIMIT], len(singles) > EXAMPLE_LIMIT
    if len(in_group) > n:
        _, base = match_vector(Counter(in_group), lead, order, witness=True)
        pool = list((Counter(in_group) - Counter(base)).elements())
        pool.sort(key=order.sort_key)
        fill = n - len(base)
        for extra in itertools.islice(itertools.combinations(pool, fill), CANDIDATES):
            candidates.append(base + list(extra))
    else:
        fill = n - len(in_group)
        if not in_group:
            candidates += _trump_shapes(hand, lead, order)
        for extra in itertools.islice(itertools.combinations(others, fill), CANDIDATES):
            candidates.append(in_group + list(extra))
    plays: list[list[Card]] = []
    seen: set[tuple[Card, ...]] = set()
    check = _FollowCheck(in_group, lead, order)
    for cards in candidates:
        key = tuple(sorted(cards, key=order.sort_key))
        if key in seen or check.error(cards) is not None:
            continue
        seen.add(key)
        plays.append(list(key))
        if len(plays) == EXAMPLE_LIMIT:
            break
    return complete_follows(plays, in_group, others, n, order,
                            lambda cards: check.error(cards) is None)


def complete_follows(plays: list[list[Card]], in_group: list[Card], others: list[Card],
                     n: int, order: TrumpOrder, is_legal: Callable[[list[Card]], bool]
                     ) -> tuple[list[list[Card]], bool]:
    """Example follows made complete when the seat has few possible plays, and `truncated`.

    With at most `COMPLETE_LIMIT` possible plays every one is checked: the legal ones the
    examples missed are listed, and the answer says "complete" exactly when none is left
    out. With more, other legal plays may exist.
    """
    plays = [sorted(p, key=order.sort_key) for p in plays]
    every = _every_follow(in_group, others, n, order)
    if every is None:
        return plays, True
    seen = {tuple(p) for p in plays}
    for cards in every:
        key = tuple(cards)
        if key in seen or not is_legal(cards):
            continue
        seen.add(key)
        plays.append(cards)
        if len(plays) > EXAMPLE_LIMIT:
            return plays[:EXAMPLE_LIMIT], True
    return plays, False


def _every_follow(in_group: list[Card], others: list[Card], n: int,
                  order: TrumpOrder) -> list[list[Card]] | None:
    """Every distinct play that follows the suit rule, or None when there are too many."""
    if len(in_group) >= n:
        base, pool, fill = [], in_group, n
    else:
        base, pool, fill = in_group, others, n - len(in_group)
    counts = sorted(Counter(pool).items(), key=lambda item: order.sort_key(item[0]))
    if _count_choices([count for _, count in counts], fill) > COMPLETE_LIMIT:
        return None
    plays = []
    for choice in _choices(counts, fill):
        plays.append(sorted(base + choice, key=order.sort_key))
    return plays


def _count_choices(copies: Sequence[int], k: int) -> int:
    """How many distinct multisets of `k` cards a holding with these copy counts has."""
    ways = [1] + [0] * k
    for have in copies:
        ways = [sum(ways[j - t] for t in range(min(have, j) + 1)) for j in range(k + 1)]
    return ways[k]


def _choices(counts: Sequence[tuple[Card, int]], k: int) -> list[list[Card]]:
    """Every distinct multiset of `k` cards out of (card, copies) pairs, lowest cards first.

    Built from the last pair back: `tails[j]` holds the choices of j cards among the pairs
    seen so far, kept only for the j that the pairs still ahead can complete to k.
    """
    ahead = sum(have for _, have in counts)
    tails: dict[int, list[list[Card]]] = {0: [[]]}
    for card, have in reversed(counts):
        ahead -= have
        tails = {
            j: [[card] * take + tail for take in range(min(have, j), -1, -1)
                for tail in tails.get(j - take, ())]
            for j in range(max(0, k - ahead), k + 1)
        }
    return tails.get(k, [])


def _trump_shapes(hand: Sequence[Card], lead: Lead, order: TrumpOrder) -> list[list[Card]]:
    """A void seat's trump plays with the lead's shape (one-component leads)."""
    if lead.group == TRUMP or len(lead.components) != 1:
        return []
    shape = lead.components[0]
    trumps = Counter(c for c in hand if order.info[c].group == TRUMP)
    found = []
    for _, cards in _placements(trumps, shape.width, shape.length, order):
        found.append([c for c in cards for _ in range(shape.width)])
    return found[:EXAMPLE_LIMIT]


__all__ = [
    "EXAMPLE_LIMIT", "FollowConstraint", "Lead", "complete_follows", "failed_throw",
    "follow_constraint", "follow_error", "follow_examples", "lead_examples", "lead_of",
    "make_lead", "match_vector", "play_key", "trick_winner",
]
