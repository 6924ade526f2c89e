"""`scripts/bench ddz-check`: our 斗地主 move generator checked against RLCard's and DouZero's.

On seeded random positions (a hand of 1–20 cards dealt from one 54-card pack; a top that is
a real play of another hand dealt from the rest of that pack; a real play of the hand) three
questions go to every engine, and every pair of engines is compared:

- lead: the set of the hand's plays as a lead;
- follow: the set of the hand's plays that beat the top (bombs and the rocket included;
  passing is not a play);
- beats: whether the hand's play beats the top, and whether the top beats the play.

Plays are compared in one canonical form, the sorted ranks of their cards (suits never
matter). Our engine runs with the `DOUZERO` options (`ours`), the options where RLCard's and
DouZero's generators agree. The tops are drawn from each engine's own plays in turn (a
family of plays first, uniformly, then another hand from the rest of the pack that holds
one, then one of its plays of that family), so that no engine's idea of a play decides them
all. Position N of seed S is the same on every run that has these three engines (whatever
runs beside them), and on every run with the same engines.

Every difference is grouped into a class: the question, the two engines, which side lists
the play (or each side's answer), the kinds and the play's shape (`3-3-1-1 +rocket`: two
triples and two single cards, among them both jokers). The table gives agreement per
question and pair of engines; `--disagreements FILE` appends each class not yet in FILE
with its first position, for the rules' owner to rule on (a bug or a room rule).

RLCard and DouZero are not dependencies of the referee: `scripts/bench ddz-check` installs
them into `.venv` first (`scripts/lab-engines`).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.arguments import positive
from bench.doudizhu_engines import (
    ENGINE_CLASSES,
    Engine,
    Move,
    load_engines,
    move_text,
    ranks_of,
    shape,
)
from fiftyk_referee.domain.cards import BIG_JOKER, SMALL_JOKER, TWO, Card, make_deck, sort_cards

SEED = 20_261_202
DEFAULT_POSITIONS = 100_000
MAX_HAND = 20
QUESTIONS = ("lead", "follow", "beats")
EXAMPLES = 3  # disagreeing positions printed per question and pair of engines
_PACK = tuple(make_deck(1, jokers=True))
# The families of plays (`family`); "two fours" (33334444) is a play for no engine we know.
FAMILIES = ("single", "pair", "triple", "bomb", "rocket", "straight", "pair chain", "plane",
            "triple with", "plane with", "four with two")
TOP_DEALS = 8
TOP_SOURCES = ("ours", "rlcard", "douzero")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench ddz-check`."""
    parser = sub.add_parser(
        "ddz-check", help="斗地主: our move generator against RLCard's and DouZero's",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--positions", type=positive, default=DEFAULT_POSITIONS, metavar="N",
                        help=f"random positions to check (default {DEFAULT_POSITIONS:,})")
    parser.add_argument("--seed", type=int, default=SEED, help=f"the seed (default {SEED})")
    parser.add_argument("--start", type=int, default=0, metavar="I",
                        help="the first position's number (to rerun a stretch of a seed)")
    parser.add_argument("--deal", choices=("uniform", "dense"), default="uniform",
                        help="uniform: hands of 1-20 cards of the pack (default); dense: 8-20"
                        " cards of 4-7 neighbouring ranks, full of triples, fours and planes")
    parser.add_argument("--engines", default="ours,rlcard,douzero", metavar="A,B,...",
                        help="engines to compare (default ours,rlcard,douzero)")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write the results, with every class, as JSON to FILE")
    parser.add_argument("--disagreements", type=Path, metavar="FILE",
                        help="append each disagreement class not yet in FILE (Markdown)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run `scripts/bench ddz-check`; exit 1 if an engine asked for is missing."""
    names = [name.strip() for name in args.engines.split(",") if name.strip()]
    unknown = [name for name in names if name not in ENGINE_CLASSES]
    if unknown or len(names) < 2:
        print(f"scripts/bench ddz-check: --engines names two or more of"
              f" {', '.join(ENGINE_CLASSES)} (got {args.engines!r})", file=sys.stderr)
        return 2
    engines, missing = load_engines(names)
    for name, why in missing.items():
        print(f"scripts/bench ddz-check: engine {name} is missing: {why}", file=sys.stderr)
    if len(engines) < 2:
        return 1
    started = time.monotonic()
    result = check(engines, args.positions, args.seed, args.start, args.deal == "dense")
    result.seconds = time.monotonic() - started
    print(render(result))
    if args.json is not None:
        args.json.write_text(json.dumps(result.report(), indent=2, ensure_ascii=False) + "\n")
    if args.disagreements is not None:
        added = append_disagreements(args.disagreements, result)
        print(f"\n{added} new disagreement classes appended to {args.disagreements}")
    return 1 if missing else 0


# -- positions ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Position:
    """One position: a hand, a top to follow and a play of the hand."""

    seed: int
    number: int
    dense: bool  # dealt by `--deal dense`
    hand: tuple[Card, ...]
    top: tuple[Card, ...]  # a real play of another hand dealt from the same pack
    top_source: str  # the engine whose plays the top was drawn from
    play: tuple[Card, ...]  # a real play of the hand, for the beats question

    def describe(self) -> str:
        """The position as people (and `--start N --positions 1`) read it."""
        deal = " (dense)" if self.dense else ""
        return (f"seed {self.seed}{deal} position {self.number}:"
                f" hand [{move_text(ranks_of(self.hand))}]"
                f" top [{move_text(ranks_of(self.top))}] (from {self.top_source})"
                f" play [{move_text(ranks_of(self.play))}]")


def family(move: Move) -> str:
    """A play's family, only to draw plays of every kind evenly (no engine's ruling)."""
    counts = Counter(move)
    sizes = set(counts.values())
    if move == (SMALL_JOKER, BIG_JOKER):
        return "rocket"
    if len(sizes) == 1:
        size = sizes.pop()
        single = len(counts) == 1
        return {1: "single" if single else "straight", 2: "pair" if single else "pair chain",
                3: "triple" if single else "plane", 4: "bomb" if single else "two fours"}[size]
    if max(counts.values()) == 4 and len(move) in (6, 8):
        return "four with two"
    triples = sum(1 for n in counts.values() if n >= 3)
    return "triple with" if triples == 1 else "plane with"


def cards_for(move: Move, hand: Sequence[Card]) -> tuple[Card, ...]:
    """The cards of the hand that make the play (the first of each rank, canonically)."""
    wanted = Counter(move)
    picked: list[Card] = []
    for card in sort_cards(hand):
        if wanted[card.rank] > 0:
            wanted[card.rank] -= 1
            picked.append(card)
    if sum(wanted.values()):
        raise ValueError(f"the hand does not hold [{move_text(move)}]")
    return tuple(picked)


def draw_play(plays: frozenset[Move], rng: random.Random, prefer: str | None = None) -> Move:
    """A play: a family drawn uniformly (or `prefer`, half the time, if present), then a play."""
    by_family: dict[str, list[Move]] = {}
    for move in sorted(plays):
        by_family.setdefault(family(move), []).append(move)
    if prefer in by_family and rng.random() < 0.5:
        return rng.choice(by_family[prefer])
    return rng.choice(by_family[rng.choice(sorted(by_family))])


def deal(seed: int, number: int, dense: bool = False) -> tuple[random.Random, list[Card],
                                                              list[Card]]:
    """Position `number`'s generator, its hand and the rest of the pack (the tops' source).

    A uniform deal takes 1–20 cards of the shuffled pack. A dense deal (`--deal dense`)
    takes 8–20 cards among the ranks of a window of 4–7 neighbouring ranks (and both jokers
    half the time): hands full of triples, fours, planes and their kickers, where the rules
    engines differ most.
    """
    rng = random.Random(f"ddz-check:{'dense:' if dense else ''}{seed}:{number}")
    pack = list(_PACK)
    rng.shuffle(pack)
    if not dense:
        size = rng.randint(1, MAX_HAND)
        return rng, sort_cards(pack[:size]), pack[size:]
    width = rng.randint(4, 7)
    low = rng.randint(3, TWO - width + 1)
    jokers = rng.random() < 0.5
    near = [card for card in pack if low <= card.rank < low + width
            or (jokers and card.rank >= SMALL_JOKER)]
    hand = near[:rng.randint(min(8, len(near)), min(MAX_HAND, len(near)))]
    held = set(hand)
    return rng, sort_cards(hand), [card for card in pack if card not in held]


def draw_top(source: Engine, rest: list[Card], rng: random.Random) -> tuple[Card, ...]:
    """A real play of another hand dealt from the rest of the pack, of a family drawn uniformly.

    The family comes first (uniformly among all of them); other hands of 10–20 cards are
    dealt from the rest until one holds a play of that family (at most TOP_DEALS tries, then
    the last hand's plays give a family of their own).
    """
    wanted = rng.choice(FAMILIES)
    for _ in range(TOP_DEALS):
        rng.shuffle(rest)
        other = sort_cards(rest[:rng.randint(10, min(MAX_HAND, len(rest)))])
        plays = source.lead(other)
        matching = [move for move in sorted(plays) if family(move) == wanted]
        if matching:
            return cards_for(rng.choice(matching), other)
    return cards_for(draw_play(plays, rng), other)


# -- comparing ------------------------------------------------------------------------------


@dataclass
class Example:
    """The first position of a disagreement class."""

    position: str
    detail: str


@dataclass
class Tally:
    """Agreement of one pair of engines on one question."""

    compared: int = 0
    agreed: int = 0
    classes: Counter[str] = field(default_factory=Counter)
    examples: dict[str, Example] = field(default_factory=dict)
    first: list[str] = field(default_factory=list)  # the first disagreeing positions

    def record(self, agree: bool, position: Position, found: list[tuple[str, str]]) -> None:
        """Count one comparison; `found` holds (class, detail) of each difference in it."""
        self.compared += 1
        if agree:
            self.agreed += 1
            return
        for key, detail in found:
            self.classes[key] += 1
            self.examples.setdefault(key, Example(position.describe(), detail))
        if len(self.first) < EXAMPLES:
            self.first.append(f"{position.describe()}: {found[0][1]}")

    @property
    def percent(self) -> float:
        """Agreement in percent (100 when nothing was compared)."""
        return 100.0 * self.agreed / self.compared if self.compared else 100.0


@dataclass
class Result:
    """Everything one run found."""

    engines: list[str]
    seed: int
    start: int
    positions: int
    tallies: dict[tuple[str, str, str], Tally]  # (question, engine a, engine b)
    dense: bool = False
    tops: Counter[str] = field(default_factory=Counter)  # families of the tops drawn
    seconds: float = 0.0

    def report(self) -> dict[str, Any]:
        """Plain JSON of the run."""
        return {
            "benchmark": "ddz-check", "engines": self.engines, "seed": self.seed,
            "deal": "dense" if self.dense else "uniform",
            "start": self.start, "positions": self.positions, "seconds": self.seconds,
            "top_families": dict(self.tops),
            "results": [
                {"question": q, "a": a, "b": b, "compared": t.compared, "agreed": t.agreed,
                 "percent": t.percent,
                 "classes": [{"class": key, "count": count, "example": vars(t.examples[key])}
                             for key, count in t.classes.most_common()]}
                for (q, a, b), t in self.tallies.items()
            ],
        }


def _kind(engine: Engine, cards: Sequence[Card]) -> str:
    return engine.kind(cards) or "no play"


def _set_differences(a: Engine, b: Engine, mine: frozenset[Move], theirs: frozenset[Move],
                     hand: Sequence[Card], prefix: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for owner, other, moves in ((a, b, mine - theirs), (b, a, theirs - mine)):
        for move in sorted(moves):
            cards = cards_for(move, hand)
            key = (f"{prefix}only {owner.name} lists {_kind(owner, cards)} {shape(move)}"
                   f" ({other.name}: {_kind(other, cards)})")
            found.append((key, f"only {owner.name} lists [{move_text(move)}]"))
    return found


def check(engines: Sequence[Engine], positions: int, seed: int, start: int = 0,
          dense: bool = False) -> Result:
    """Ask every engine the three questions on each position and compare every pair."""
    names = [engine.name for engine in engines]
    pairs = [(a, b) for i, a in enumerate(engines) for b in engines[i + 1:]]
    tallies = {(q, a.name, b.name): Tally() for q in QUESTIONS for a, b in pairs}
    result = Result(names, seed, start, positions, tallies, dense)
    for position, leads in generate(engines, positions, seed, start, dense):
        result.tops[family(ranks_of(position.top))] += 1
        follows = {e.name: e.follow(position.hand, position.top) for e in engines}
        answers = {e.name: (e.beats(position.play, position.top),
                            e.beats(position.top, position.play)) for e in engines}
        for a, b in pairs:
            found = _set_differences(a, b, leads[a.name], leads[b.name], position.hand, "")
            tallies["lead", a.name, b.name].record(not found, position, found)
            mine, theirs = follows[a.name], follows[b.name]
            top_kind = f"over {_kind(a, position.top)}: "
            if mine is None or theirs is None:
                agree = mine is None and theirs is None
                found = [] if agree else [(
                    f"{top_kind}the top {shape(ranks_of(position.top))} is no play for"
                    f" {a.name if mine is None else b.name}",
                    f"{a.name}: {'no play' if mine is None else 'a play'},"
                    f" {b.name}: {'no play' if theirs is None else 'a play'}")]
            else:
                found = _set_differences(a, b, mine, theirs, position.hand, top_kind)
            tallies["follow", a.name, b.name].record(not found, position, found)
            for n, (play, top) in enumerate(((position.play, position.top),
                                             (position.top, position.play))):
                said_a, said_b = answers[a.name][n], answers[b.name][n]
                key = (f"{_kind(a, play)} {shape(ranks_of(play))} over {_kind(a, top)}"
                       f" {shape(ranks_of(top))}: {a.name} {_answer(said_a)},"
                       f" {b.name} {_answer(said_b)}")
                detail = (f"[{move_text(ranks_of(play))}] over [{move_text(ranks_of(top))}]:"
                          f" {a.name} {_answer(said_a)}, {b.name} {_answer(said_b)}")
                agree = said_a == said_b
                tallies["beats", a.name, b.name].record(
                    agree, position, [] if agree else [(key, detail)])
    return result


def _answer(said: bool | None) -> str:
    return {True: "beats", False: "does not beat", None: "no play"}[said]


def _source(engines: Sequence[Engine], number: int) -> Engine:
    """The engine whose plays position `number` draws from: ours, RLCard's and DouZero's in
    turn, whichever others run beside them (so a position is the same in every comparison
    of those three), else the engines given in turn."""
    by_name = {engine.name: engine for engine in engines}
    wanted = TOP_SOURCES[number % len(TOP_SOURCES)]
    if all(name in by_name for name in TOP_SOURCES):
        return by_name[wanted]
    return engines[number % len(engines)]


def generate(engines: Sequence[Engine], positions: int, seed: int, start: int = 0,
             dense: bool = False) -> Iterator[tuple[Position, dict[str, frozenset[Move]]]]:
    """Positions `start`.. of a seed, each with every engine's leads of its hand."""
    for number in range(start, start + positions):
        rng, hand, rest = deal(seed, number, dense)
        source = _source(engines, number)
        top = draw_top(source, rest, rng)
        leads = {engine.name: engine.lead(hand) for engine in engines}
        player = _source(engines, number + 1)
        play = cards_for(draw_play(leads[player.name], rng, family(ranks_of(top))), hand)
        yield Position(seed, number, dense, tuple(hand), top, source.name, play), leads


# -- output ---------------------------------------------------------------------------------

CLASSES_SHOWN = 12


def render(result: Result) -> str:
    """A readable account: agreement per question and pair, the classes, first positions."""
    deal = "dense" if result.dense else "uniform"
    lines = [f"scripts/bench ddz-check — {result.positions:,} {deal} positions of seed"
             f" {result.seed}"
             f" from {result.start}, engines {', '.join(result.engines)}"
             f" ({result.seconds:.0f} s)", "",
             f"{'question':<8} {'engines':<24} {'compared':>9} {'agreed':>9} {'agree %':>8}"
             f"  classes"]
    for (question, a, b), tally in result.tallies.items():
        lines.append(f"{question:<8} {a + ' vs ' + b:<24} {tally.compared:>9,} {tally.agreed:>9,}"
                     f" {tally.percent:>8.3f}  {len(tally.classes)}")
    lines += ["", "tops drawn, by family: " + ", ".join(
        f"{name} {count:,}" for name, count in sorted(result.tops.items()))]
    for (question, a, b), tally in result.tallies.items():
        if not tally.classes:
            continue
        lines += ["", f"## {question}: {a} vs {b} — {len(tally.classes)} classes"
                      f" (times seen, then the first position)"]
        for key, count in tally.classes.most_common(CLASSES_SHOWN):
            example = tally.examples[key]
            lines.append(f"  {count:>8,}  {key}\n            {example.position}: {example.detail}")
        if len(tally.classes) > CLASSES_SHOWN:
            lines.append(f"  … {len(tally.classes) - CLASSES_SHOWN} more classes (--json)")
    return "\n".join(lines)


def append_disagreements(path: Path, result: Result) -> int:
    """Append each class not yet in the file (its key line); returns how many were added."""
    text = path.read_text() if path.exists() else (
        "# 斗地主: where our move generator and RLCard's / DouZero's disagree\n\n"
        "Written by `scripts/bench ddz-check --disagreements FILE` (LAB). One entry per class;"
        " the rules' owner appends its ruling (`-> fixed in COMMIT` / `-> option X`).\n")
    known = {line.removeprefix("- class: ").strip() for line in text.splitlines()
             if line.startswith("- class: ")}
    number = sum(1 for line in text.splitlines() if line.startswith("## D"))
    added: list[str] = []
    for (question, a, b), tally in result.tallies.items():
        for key, count in tally.classes.most_common():
            full = f"{question}: {a} vs {b}: {key}"
            if full in known:
                continue
            number += 1
            example = tally.examples[key]
            added.append(
                f"\n## D{number}. {question}, {a} vs {b}\n\n- class: {full}\n"
                f"- seen: {count:,} of {tally.compared:,} (seed {result.seed},"
                f" {'dense' if result.dense else 'uniform'} deal,"
                f" positions {result.start}..{result.start + result.positions - 1})\n"
                f"- first: {example.position}\n- answers: {example.detail}\n")
    if added:
        path.write_text(text + "".join(added))
    return len(added)
