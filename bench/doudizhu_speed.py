"""`scripts/bench ddz-speed`: 斗地主 through our engine, RLCard's and DouZero's, on the same work.

Targets (issue 27 item 4): random playouts of whole hands at least three times the steps
per second of RLCard's own Dou Dizhu game core stepping random legal actions; the legal
plays of a 20-card landlord hand as a lead ≤ 100 µs median; DouZero's timed beside both.

- Whole hands. Ours through the hand aggregate (`DoudizhuHand`, preset `classic`: the deal
  and its commitment, bidding at random among the legal bids, then the play: the seat's
  `legal_plays` and a random choice every step, applied as the event it records), and
  through `legal_plays` alone (the same play on plain lists of cards: no aggregate, no
  events). RLCard: its `DoudizhuGame` (`init_game` deals and picks the landlord, then
  `step` with a random action of `state['actions']`, as `bench hand` times it). DouZero:
  its `GameEnv` (`card_play_init` with a random deal, then `step`, each seat's agent
  choosing at random among the `legal_actions` its game lists). A choice is uniform over
  the legal plays plus passing when passing is allowed, in every engine. A step is a play
  or a pass (our bids are not counted as steps; their time is).
- A lead's legal plays: 20-card hands (17 cards and the 3 of the 底牌), each timed with our
  `legal_plays` (the `classic` rules and the `douzero` preset's), RLCard's
  `playable_cards_from_hand` and DouZero's `MovesGener(...).gen_moves()`.

Every sample is the CPU time of this process; the engines take turns hand by hand (the
first of each round rotates), so they see the same conditions. Medians over the samples.
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
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.arguments import positive
from bench.doudizhu_engines import DouZeroEngine, EngineMissing, RLCardEngine
from bench.hand import play_random_doudizhu, rlcard_game
from fiftyk_referee.domain.cards import Card, make_deck, sort_cards
from fiftyk_referee.domain.doudizhu.combinations import Combination, ComboOptions
from fiftyk_referee.domain.doudizhu.hand import DoudizhuHand
from fiftyk_referee.domain.doudizhu.legal import legal_plays
from fiftyk_referee.domain.doudizhu.rulesets import DoudizhuRules

PRESET = "classic"
SEED = 20_261_203
DEFAULT_HANDS = 60
DEFAULT_LEADS = 300
SEATS = 3
DEAL_SIZE = 17
SPEEDUP_GOAL = 3.0
LEAD_TARGET_US = 100.0
NS_PER_US = 1_000
NS_PER_S = 1_000_000_000
_PACK = tuple(make_deck(1, jokers=True))


@dataclass(frozen=True)
class Row:
    """One row: a median, its unit, the target (if any) and how it was measured."""

    name: str
    median: float
    unit: str
    target: str
    met: bool | None
    samples: int
    note: str = ""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench ddz-speed`."""
    parser = sub.add_parser(
        "ddz-speed", help="斗地主: random playouts and a lead's legal plays, ours against"
        " RLCard's and DouZero's", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=positive, default=DEFAULT_HANDS, metavar="N",
                        help=f"whole hands per engine (default {DEFAULT_HANDS})")
    parser.add_argument("--leads", type=positive, default=DEFAULT_LEADS, metavar="N",
                        help=f"20-card hands timed as a lead (default {DEFAULT_LEADS})")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write the results as JSON to FILE")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run `scripts/bench ddz-speed`."""
    try:
        rows, notes = benchmark(args.hands, args.leads)
    except EngineMissing as error:
        print(f"scripts/bench ddz-speed: {error}", file=sys.stderr)
        return 1
    print(render(rows, notes, args.hands, args.leads))
    if args.json is not None:
        args.json.write_text(json.dumps(report(rows, notes, args.hands, args.leads), indent=2,
                                        ensure_ascii=False) + "\n")
    return 0


# -- our engine -----------------------------------------------------------------------------


def play_aggregate_hand(rules: DoudizhuRules, rng: random.Random) -> int:
    """A random hand through the aggregate (`random_aggregate_hand`); returns its play steps."""
    return random_aggregate_hand(rules, rng)[2]


def random_aggregate_hand(rules: DoudizhuRules, rng: random.Random
                          ) -> tuple[DoudizhuHand, int, int]:
    """Deal hands through the aggregate until one is bid for, play it out at random; returns
    the hand, the bids said in it and its play steps (plays and passes)."""
    while True:
        hand = DoudizhuHand.deal_new(table_id="bench", number=1, rules=rules,
                                     dealer=rng.randrange(SEATS), seed=rng.randbytes(32))
        bids = 0
        while hand.landlord is None and not hand.is_over:
            seat = hand.turn
            if seat is None:  # unreachable: a hand not over has a seat to act
                break
            values = hand.auction.open_bids(seat)
            choice = rng.randrange(len(values) + 1)
            if choice == len(values):
                hand.bid(seat, "pass")
            else:
                hand.bid(seat, "bid", str(values[choice]))
            bids += 1
        if hand.landlord is not None:
            break
    steps = 0
    while not hand.is_over:
        seat = hand.turn
        if seat is None:
            break
        plays = hand.legal_plays(seat)
        may_pass = hand.top is not None
        choice = rng.randrange(len(plays) + may_pass)
        if choice == len(plays):
            hand.pass_turn(seat)
        else:
            hand.play(seat, plays[choice].cards)
        steps += 1
    return hand, bids, steps


def play_legal_plays_hand(options: ComboOptions, rng: random.Random) -> int:
    """A random hand through `legal_plays` alone (`random_legal_plays_hand`); its steps."""
    return random_legal_plays_hand(options, rng)[1]


def random_legal_plays_hand(options: ComboOptions, rng: random.Random
                            ) -> tuple[list[list[Card]], int]:
    """A random hand through `legal_plays` alone: a random deal, the landlord (a random seat)
    takes the 底牌 and leads; two passes give the lead back. Returns the hands at the end
    (one of them empty) and the steps (plays and passes)."""
    pack = list(_PACK)
    rng.shuffle(pack)
    hands = [sort_cards(pack[i * DEAL_SIZE:(i + 1) * DEAL_SIZE]) for i in range(SEATS)]
    seat = rng.randrange(SEATS)
    hands[seat] = sort_cards(hands[seat] + pack[SEATS * DEAL_SIZE:])
    top: Combination | None = None
    top_seat = seat
    steps = 0
    while True:
        plays = legal_plays(hands[seat], top, options)
        may_pass = top is not None
        choice = rng.randrange(len(plays) + may_pass)
        steps += 1
        if choice < len(plays):
            play = plays[choice]
            held = list(hands[seat])
            for card in play.cards:
                held.remove(card)
            hands[seat] = held
            if not held:
                return hands, steps
            top, top_seat = play, seat
        seat = (seat + 1) % SEATS
        if seat == top_seat:
            top = None


# -- DouZero's game core --------------------------------------------------------------------


class _RandomSeat:
    """A DouZero seat that picks uniformly among the legal actions its game lists."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def act(self, infoset: Any) -> Any:
        return self.rng.choice(infoset.legal_actions)


def douzero_game(rng: random.Random) -> Any:
    """DouZero's `GameEnv` with three random seats sharing one generator."""
    engine = DouZeroEngine()  # raises EngineMissing without DouZero
    seat = _RandomSeat(rng)
    return engine.game_env({"landlord": seat, "landlord_up": seat, "landlord_down": seat})


def play_douzero_game(env: Any, rng: random.Random) -> int:
    """Deal a random hand into DouZero's game (the landlord gets 20 cards) and step it out."""
    deck = DouZeroEngine.codes(_PACK)
    rng.shuffle(deck)
    env.reset()
    env.card_play_init({"landlord": sorted(deck[:20]), "landlord_up": sorted(deck[20:37]),
                        "landlord_down": sorted(deck[37:]),
                        "three_landlord_cards": sorted(deck[17:20])})
    steps = 0
    while not env.game_over:
        env.step()
        steps += 1
    return steps


# -- measurement ----------------------------------------------------------------------------


def _timed(work: Callable[[], int]) -> tuple[int, int]:
    start = time.process_time_ns()
    steps = work()
    return time.process_time_ns() - start, steps


def benchmark(hands: int, leads: int) -> tuple[list[Row], list[str]]:
    """Every row, and notes to print under the table."""
    rules = DoudizhuRules.from_spec(PRESET)
    douzero_rules = DoudizhuRules.from_spec("douzero")
    rng = random.Random(SEED)
    game = rlcard_game(SEED)
    if game is None:
        raise EngineMissing("RLCard cannot be imported; run scripts/lab-engines")
    env = douzero_game(random.Random(SEED + 1))
    rlcard_rng, douzero_rng = random.Random(SEED + 2), random.Random(SEED + 3)

    def rlcard_hand() -> int:
        state, _ = game.init_game()
        return play_random_doudizhu(game, state, rlcard_rng)

    engines: dict[str, Callable[[], int]] = {
        "ours: aggregate": lambda: play_aggregate_hand(rules, rng),
        "ours: legal_plays": lambda: play_legal_plays_hand(rules.combos, rng),
        "RLCard": rlcard_hand,
        "DouZero": lambda: play_douzero_game(env, douzero_rng),
    }
    rates: dict[str, list[float]] = {name: [] for name in engines}
    steps: dict[str, list[int]] = {name: [] for name in engines}
    for work in engines.values():  # warm imports and caches
        work()
    names = list(engines)
    with _gc_paused():
        for n in range(hands):
            for name in names[n % len(names):] + names[:n % len(names)]:
                spent, taken = _timed(engines[name])
                rates[name].append(taken * NS_PER_S / spent)
                steps[name].append(taken)
            gc.collect()
    lead_rows = time_leads(leads, rules.combos, douzero_rules.combos)
    rlcard = statistics.median(rates["RLCard"])
    rows = []
    for name in names:
        rate = statistics.median(rates[name])
        ratio = rate / rlcard
        target, met = ("-", None)
        if name.startswith("ours"):
            target, met = f"≥ {SPEEDUP_GOAL:g}× RLCard", ratio >= SPEEDUP_GOAL
        rows.append(Row(f"random playout steps/s: {name}", rate, "steps/s", target, met,
                        len(rates[name]), f"{ratio:.2f}× RLCard;"
                        f" {statistics.median(steps[name]):.0f} steps per hand"))
    rows += lead_rows
    notes = [f"Hands: preset {PRESET} for ours (its bidding's time counted, its bids not as"
             " steps); RLCard's and DouZero's games have no bidding in their step loop."]
    return rows, notes


def time_leads(count: int, classic: ComboOptions, douzero_preset: ComboOptions) -> list[Row]:
    """A lead's legal plays of 20-card hands, each engine in turn on each hand."""
    rlcard, douzero = RLCardEngine(), DouZeroEngine()
    rng = random.Random(SEED + 4)
    work: dict[str, Callable[[list[Card]], object]] = {
        "ours (classic)": lambda hand: legal_plays(hand, None, classic),
        "ours (douzero preset)": lambda hand: legal_plays(hand, None, douzero_preset),
        "RLCard playable_cards_from_hand": rlcard.lead_text_plays,
        "DouZero MovesGener.gen_moves": douzero.lead_moves,
    }
    times: dict[str, list[float]] = {name: [] for name in work}
    names = list(work)
    with _gc_paused():
        for n in range(count):
            pack = list(_PACK)
            rng.shuffle(pack)
            hand = sort_cards(pack[:DEAL_SIZE + 3])
            for name in names[n % len(names):] + names[:n % len(names)]:
                start = time.process_time_ns()
                work[name](hand)
                times[name].append((time.process_time_ns() - start) / NS_PER_US)
    rows = []
    ours = statistics.median(times["ours (classic)"])
    for name in names:
        median = statistics.median(times[name])
        target, met = ("-", None)
        if name == "ours (classic)":
            target, met = f"≤ {LEAD_TARGET_US:g} µs", median <= LEAD_TARGET_US
        rows.append(Row(f"20-card lead, legal plays: {name}", median, "µs", target, met,
                        len(times[name]), f"{median / ours:.2f}× ours (classic)"))
    return rows


class _gc_paused:
    """Collections off while timing (a collection inside a sample is noise), then on again."""

    def __enter__(self) -> None:
        self.was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.was_enabled:
            gc.enable()


# -- output ---------------------------------------------------------------------------------


def render(rows: list[Row], notes: list[str], hands: int, leads: int) -> str:
    """A readable table of the results."""
    head = (f"scripts/bench ddz-speed — {hands} hands per engine, {leads} 20-card leads,"
            f" medians of process CPU time, Python {platform.python_version()}")
    lines = [head, "", f"{'case':<58} {'median':>12} {'unit':<8} {'target':<14} verdict  notes"]
    for r in rows:
        verdict = {True: "ok", False: "MISSED", None: ""}[r.met]
        value = f"{r.median:,.0f}" if r.unit == "steps/s" else f"{r.median:,.1f}"
        lines.append(f"{r.name:<58} {value:>12} {r.unit:<8} {r.target:<14} {verdict:<8} {r.note}")
    return "\n".join([*lines, "", *notes])


def report(rows: list[Row], notes: list[str], hands: int, leads: int) -> dict[str, Any]:
    """The results as plain JSON."""
    return {"benchmark": "ddz-speed", "preset": PRESET, "hands": hands, "leads": leads,
            "python": platform.python_version(), "implementation": sys.implementation.name,
            "clock": "process_time", "results": [asdict(r) for r in rows], "notes": notes}
