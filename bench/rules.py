"""`scripts/bench rules`: how fast the rules engine classifies, compares and lists plays.

Targets (issue 25): classify + beats of a typical play ≤ 1.5 µs median; legal plays for a
27-card two-pack `classic` hand as a lead ≤ 40 µs median. Following a single, a pair
straight or a bomb keeps issue 2's ≤ 2 ms. The worst hand we could construct is reported
on its own rows.

The engine remembers recent readings of plays and hands (bounded caches). The typical plays
repeat, as a table's do, so their row reads them mostly from the cache; the last row times
each one's first reading. Every legal-plays call is timed on a first look at its hand: the
caches are emptied before it, outside the timing.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.arguments import positive
from fiftyk_referee.domain.cards import Card, make_deck, parse_cards
from fiftyk_referee.domain.fiftyk.combinations import (
    Combination,
    beats,
    classify,
    forget_readings,
)
from fiftyk_referee.domain.fiftyk.legal import forget_hands, legal_plays
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset

PRESET = "classic"
HAND_SIZE = 27
SEATS = 4
DEALS = 10  # 40 hands of 27 cards
SEED = 20_240_501
DEFAULT_REPEAT = 30
INNER_LOOPS = 20  # classify+beats is timed over this many passes per sample
NS_PER_US = 1_000
CLASSIFY_TARGET_US = 1.5
LEAD_TARGET_US = 40.0
LEGAL_TARGET_US = 2_000.0
P95 = 0.95

# (trick top, play) pairs a real table sees all the time, in the classic preset.
TYPICAL_PLAYS: tuple[tuple[str, str], ...] = (
    ("7H", "JS"),
    ("2S", "3S"),
    ("5S 5H", "9C 9D"),
    ("8S 8H 8C", "QS QH QD"),
    ("3S 4H 5C 6D 7S", "6S 7H 8C 9D 10S"),
    ("3S 4H 5C 6D 7S", "4S 5H 6C 7D 8S 9S"),
    ("4S 4H 5C 5D 6S 6H", "9S 9H 10C 10D JS JH"),
    ("3S 3H 3C 4S 4H 4C 5S 5H 5C", "8S 8H 8C 9S 9H 9D 10S 10H 10C"),
    ("AS", "5S 10H KC"),
    ("KS KH", "9S 9H 9C 9D"),
    ("9S 9H 9C 9D", "JS JH JC JD JS"),
    ("5S 10H KC", "SJ SJ"),
)

# Tops to follow, and the lowest of each kind for the worst hand (everything above them counts).
FOLLOW_TOPS = {"single": "9H", "pair straight": "5S 5H 6S 6H 7S 7H", "bomb": "8S 8H 8C 8D"}
WORST_FOLLOW_TOPS = {"single": "3D", "pair straight": "3D 3C 4D 4C 5D 5C",
                     "bomb": "3D 3C 3S 3H"}

# The most plays we found for 27 classic cards (a hill-climbing search over random hands):
# a pair of every rank 3..A (10 pair straights of every length, 36 straights) plus
# SJ SJ BJ (three joker combos), with suits that give both an impure and a pure 50K:
# 122 distinct plays when leading.
WORST_HAND = ("3S 3H 4S 4H 5S 5H 6S 6H 7S 7H 8S 8H 9S 9H 10S 10H JS JH QS QH KS KH AS AH"
              " SJ SJ BJ")


@dataclass(frozen=True)
class Result:
    """One benchmark row: timings in microseconds."""

    name: str
    median_us: float
    p95_us: float
    max_us: float
    target_us: float | None
    samples: int
    plays: float | None = None
    issue: str = "issue 2"  # where the target comes from

    @property
    def met(self) -> bool | None:
        """Whether the median meets the target (None when the row has no target)."""
        return None if self.target_us is None else self.median_us <= self.target_us


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench rules`."""
    parser = sub.add_parser(
        "rules", help="classify/beats and legal-play timings of the rules engine",
        description=__doc__,
    )
    parser.add_argument("--repeat", type=positive, default=DEFAULT_REPEAT, metavar="N",
                        help=f"timing samples per case (default {DEFAULT_REPEAT})")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write the results as JSON to FILE")
    parser.set_defaults(handler=run)



def run(args: argparse.Namespace) -> int:
    """Run `scripts/bench rules`."""
    results = benchmark(args.repeat)
    print(render(results, args.repeat))
    if args.json is not None:
        args.json.write_text(json.dumps(report(results, args.repeat), indent=2) + "\n")
    return 0


def benchmark(repeat: int) -> list[Result]:
    """Every row of the benchmark."""
    ruleset = Ruleset.from_spec(PRESET)
    hands = deal_hands(ruleset)
    worst = parse_cards(WORST_HAND)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # a collection in the middle of a sample is noise, not the engine
    try:
        results = [time_classify_and_beats(ruleset, repeat)]
        results.append(time_legal("legal plays: lead", hands, None, ruleset, repeat,
                                  LEAD_TARGET_US))
        for kind, top in FOLLOW_TOPS.items():
            results.append(time_legal(f"legal plays: follow a {kind}", hands,
                                      classify(parse_cards(top), ruleset), ruleset, repeat))
        results.append(time_legal("worst hand: lead", [worst], None, ruleset, repeat))
        for kind, top in WORST_FOLLOW_TOPS.items():
            results.append(time_legal(f"worst hand: follow a {kind}", [worst],
                                      classify(parse_cards(top), ruleset), ruleset, repeat))
        results.append(time_first_readings(ruleset, repeat))
    finally:
        if gc_was_enabled:
            gc.enable()
    return results


def deal_hands(ruleset: Ruleset) -> list[list[Card]]:
    """27-card hands from seeded shuffles of the two-pack deck (all four seats of each)."""
    rng = random.Random(SEED)
    hands = []
    for _ in range(DEALS):
        deck = make_deck(ruleset.packs, jokers=ruleset.jokers)
        rng.shuffle(deck)
        hands += [deck[seat * HAND_SIZE:(seat + 1) * HAND_SIZE] for seat in range(SEATS)]
    return hands


def time_classify_and_beats(ruleset: Ruleset, repeat: int) -> Result:
    """Median time of classify(play) + beats(play, top) over the typical plays."""
    cases = [(classify(parse_cards(top), ruleset), parse_cards(play))
             for top, play in TYPICAL_PLAYS]
    per_op: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        for _ in range(INNER_LOOPS):
            for top, cards in cases:
                beats(classify(cards, ruleset), top, ruleset)
        elapsed = time.perf_counter_ns() - start
        per_op.append(elapsed / (INNER_LOOPS * len(cases)) / NS_PER_US)
    return _result("classify+beats: typical play", per_op, CLASSIFY_TARGET_US)


def time_first_readings(ruleset: Ruleset, repeat: int) -> Result:
    """Per-call times of classify(play) + beats(play, top), each play read for the first time."""
    cases = [(classify(parse_cards(top), ruleset), parse_cards(play))
             for top, play in TYPICAL_PLAYS]
    times: list[float] = []
    for _ in range(repeat):
        for top, cards in cases:
            forget_readings()
            start = time.perf_counter_ns()
            beats(classify(cards, ruleset), top, ruleset)
            times.append((time.perf_counter_ns() - start) / NS_PER_US)
    return _result("classify+beats: first reading", times, None)


def time_legal(
    name: str, hands: Sequence[list[Card]], top: Combination | None, ruleset: Ruleset,
    repeat: int, target: float = LEGAL_TARGET_US,
) -> Result:
    """Per-call times of legal_plays over every hand, `repeat` times, each a first look."""
    times: list[float] = []
    counts: list[int] = []
    for _ in range(repeat):
        for hand in hands:
            forget_hands()
            start = time.perf_counter_ns()
            plays = legal_plays(hand, top, ruleset)
            times.append((time.perf_counter_ns() - start) / NS_PER_US)
            counts.append(len(plays))
    return _result(name, times, target, plays=statistics.fmean(counts))


def _result(name: str, times: list[float], target: float | None,
            plays: float | None = None) -> Result:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(P95 * len(ordered)))]
    issue = "issue 25" if target in (CLASSIFY_TARGET_US, LEAD_TARGET_US) else "issue 2"
    return Result(name, statistics.median(ordered), p95, ordered[-1], target, len(ordered),
                  plays, issue)


def render(results: Sequence[Result], repeat: int) -> str:
    """A readable table of the results."""
    head = (f"scripts/bench rules — preset {PRESET}, {DEALS * SEATS} seeded {HAND_SIZE}-card"
            f" hands, repeat {repeat}, Python {platform.python_version()}")
    lines = [head, "",
             f"{'case':<36} {'median µs':>10} {'p95 µs':>10} {'max µs':>10} {'target µs':>10}"
             f" {'plays':>6}  verdict"]
    for r in results:
        target = "-" if r.target_us is None else f"≤ {r.target_us:g}"
        plays = "" if r.plays is None else f"{r.plays:.0f}"
        verdict = {True: "ok", False: "MISSED", None: ""}[r.met]
        lines.append(f"{r.name:<36} {r.median_us:>10.1f} {r.p95_us:>10.1f} {r.max_us:>10.1f}"
                     f" {target:>10} {plays:>6}  {verdict}")
    return "\n".join(lines)


def report(results: Sequence[Result], repeat: int) -> dict[str, Any]:
    """The results as plain JSON."""
    return {
        "benchmark": "rules",
        "preset": PRESET,
        "repeat": repeat,
        "hands": DEALS * SEATS,
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "results": [{**asdict(r), "met": r.met} for r in results],
    }
