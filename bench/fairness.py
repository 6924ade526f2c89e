"""`scripts/bench fairness`: what the hash chain, the signatures and the verifier cost.

Targets (issue 18): the chain and signatures add at most 10% to a command's CPU time;
verifying a 200-event hand takes at most 20 ms. Also the Merkle log against `pymerkle`
(when it is installed: it is not a dependency) for the same RFC 6962 hashing.

- `command CPU`: process CPU time per command over whole hands played through the
  application on SQLite (every seat's turn taken by the referee's timeout), with the
  chained event store and with the library's plain one; the ratio is the chain's cost.
- `verify`: the offline verifier over a hand of at least 200 events, with the rules engine
  (re-ruling included) and with the cryptographic checks alone; and the `VerifyHand` use
  case (the evidence built from the store, signed, verified, the table link and the
  ledger's history). Each as wall time and as the process's CPU time: on a shared machine
  the wall time mostly measures how long the process waited for a core.
- `merkle`: root of N leaves, and an inclusion proof built and checked per leaf.
- `draw`: process CPU time of one seat-entropy draw of a 4-seat table through the
  application on SQLite, from `StartHand` to the dealt hand, every answer's signed receipt
  made as the gRPC edge makes it: seats sending their bytes directly (4 contributions)
  against commit, then reveal (4 commitments, 4 reveals).
- `witness` (`--only-witness` alone): what witnesses cost the referee per call — signing a
  checkpoint, serving the latest, GetCheckpoint with a proof, AddCosignature, an export
  carrying two witnesses' cosignatures against none.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

from eventsourcing.persistence import EventStore, Mapper

from bench.arguments import positive
from fiftyk_referee.domain.merkle import MerkleLog, leaf_hash, verify_inclusion
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.ops.config import parse_database_url
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, Signer
from fiftyk_referee.service.trust.verifier import Verifier, rules_engine
from fiftyk_referee.service.trust.witness import WitnessKeys, cosignature_body, public_key_line

DEFAULT_HANDS = 6
DEFAULT_REPEAT = 20
DEFAULT_LEAVES = 10_000
DEFAULT_DRAWS = 15
MIN_EVENTS = 200
CLOCK = {"turn_timeout": 30}
LATER = timedelta(days=1)
MS = 1_000
DRAW_SEATS = 4
DRAW_WINDOW = 300


class PlainReferee(Referee):
    """The referee on the library's own mapper and event store: no chain (the baseline)."""

    def construct_mapper(self) -> Mapper[UUID]:
        """The library's mapper."""
        return Mapper(transcoder=self.construct_transcoder())

    def construct_event_store(self) -> EventStore[UUID]:
        """The library's event store."""
        return EventStore(self.mapper, self.recorder)


def _play(app: Referee, preset: str, seats: int) -> tuple[str, int, float]:
    """(hand id, commands, CPU seconds) of one hand played by timeouts."""
    table_id = app.create_table(preset, CLOCK, seats).table_id
    for seat in range(seats):
        app.join_table(table_id, f"bench-{seat}", seat)
    started = time.process_time()
    hand_id = app.start_hand(table_id).hand_id or ""
    commands = 1
    while not (hand := app.get_hand(hand_id)).is_over:
        app.time_out(table_id, hand_id, hand.to_act or 0, datetime.now(UTC) + LATER)
        commands += 1
    return hand_id, commands, time.process_time() - started


def _draw(app: Referee, table_id: str, *, direct: bool) -> float:
    """CPU seconds of one draw at a full table, its receipts signed."""
    started = time.process_time()
    app.start_hand(table_id)
    data = [bytes([seat + 1]) * 32 for seat in range(DRAW_SEATS)]
    steps = [] if direct else [("commit", seat) for seat in range(DRAW_SEATS)]
    steps += [("bytes", seat) for seat in range(DRAW_SEATS)]
    for step, seat in steps:
        if step == "commit":
            outcome = app.contribute_entropy(table_id, seat,
                                             commitment=hashlib.sha256(data[seat]).digest())
        else:
            outcome = app.contribute_entropy(table_id, seat, data[seat])
        app.entropy_receipt(outcome)
    assert outcome.hand is not None
    return time.process_time() - started


def draw_cpu(draws: int) -> tuple[float, float]:
    """Median CPU milliseconds per draw: (direct, commit then reveal), interleaved."""
    direct: list[float] = []
    committed: list[float] = []
    with tempfile.TemporaryDirectory() as directory:
        env = persistence_env(parse_database_url("", Path(directory)), cache_size=100)
        app = Referee(env)
        try:
            for _ in range(draws):
                for kind, times in ((True, direct), (False, committed)):
                    table_id = app.create_table("classic", None, DRAW_SEATS,
                                                entropy_window=DRAW_WINDOW,
                                                entropy_direct=kind).table_id
                    for seat in range(DRAW_SEATS):
                        app.join_table(table_id, f"bench-{seat}", seat)
                    times.append(_draw(app, table_id, direct=kind) * MS)
        finally:
            app.close()
    return statistics.median(direct), statistics.median(committed)


def command_cpu(kind: type[Referee], hands: int) -> float:
    """Median CPU microseconds per command over `hands` classic hands."""
    per_command = []
    with tempfile.TemporaryDirectory() as directory:
        env = persistence_env(parse_database_url("", Path(directory)), cache_size=100)
        app = kind(env)
        try:
            for _ in range(hands):
                _, commands, seconds = _play(app, "classic", 4)
                per_command.append(seconds / commands * 1e6)
        finally:
            app.close()
    return statistics.median(per_command)


@dataclass(frozen=True)
class Timing:
    """Medians of one timed call, in milliseconds: wall clock and the process's CPU."""

    wall: float
    cpu: float

    def __str__(self) -> str:
        return f"{self.wall:.1f} ms wall, {self.cpu:.1f} ms CPU"


def _timed(function: Callable[[], Any], repeat: int) -> Timing:
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        function()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return Timing(statistics.median(walls) * MS, statistics.median(cpus) * MS)


@dataclass(frozen=True)
class VerifyTimes:
    """The verifier's and VerifyHand's timings over one hand of `events` events."""

    events: int
    with_rules: Timing
    alone: Timing
    verify_hand: Timing


def verify_times(repeat: int) -> VerifyTimes:
    """The offline verifier (with the rules engine, and without) and the VerifyHand use case
    over a hand of at least MIN_EVENTS events."""
    with tempfile.TemporaryDirectory() as directory:
        env = persistence_env(parse_database_url("", Path(directory)), cache_size=100)
        app = Referee(env)
        try:
            while True:
                hand_id, _, _ = _play(app, "classic", 4)
                evidence = app.export_evidence(hand_id)
                if len(evidence["events"]) >= MIN_EVENTS:
                    break
            if not app.verify_hand(hand_id).ok:
                raise RuntimeError("the benchmark's hand does not verify")
            verify_hand = _timed(lambda: app.verify_hand(hand_id), repeat)
        finally:
            app.close()
    trusted = [Signer.from_text(DEV_SIGNING_KEY).public]  # what Referee signs with by default
    rules = rules_engine()
    with_rules = _timed(lambda: Verifier(evidence, trusted=trusted, rules=rules).run(), repeat)
    alone = _timed(lambda: Verifier(evidence, trusted=trusted, rules=None).run(), repeat)
    return VerifyTimes(len(evidence["events"]), with_rules, alone, verify_hand)


def witness_rows(hands: int, repeat: int) -> list[tuple[str, str]]:
    """What witnesses cost the referee, as CPU per call through the application on SQLite
    (`docs/fairness.md#witnesses`): signing a new checkpoint, serving the latest (a size
    seen before), GetCheckpoint's use case with a consistency proof, AddCosignature of a new
    tree (stored) and of one kept already (a retry), and an evidence export with two
    witnesses' cosignatures against none."""
    alice, bob = Signer.from_text("a1" * 32), Signer.from_text("b1" * 32)
    witnesses = WitnessKeys.parse(f"{public_key_line('alice', alice.public)}\n"
                                  f"{public_key_line('bob', bob.public)}\n")
    stored: list[float] = []
    with tempfile.TemporaryDirectory() as directory:
        env = persistence_env(parse_database_url("", Path(directory)), cache_size=100)
        app = Referee(env, witnesses=witnesses)
        try:
            hand_id = ""
            for _ in range(hands):
                hand_id, _, _ = _play(app, "classic", 4)
                for signer in (alice, bob):
                    text = json.dumps(signer.sign(cosignature_body(app.ledger.published(),
                                                                   datetime.now(UTC))))
                    started = time.process_time()
                    app.add_cosignature(text)
                    stored.append((time.process_time() - started) * MS)
            sign = _timed(lambda: app.ledger.checkpoint(), repeat)
            latest = _timed(lambda: app.ledger.published(), repeat)
            proof = _timed(lambda: app.published_checkpoint(1), repeat)
            retry = _timed(lambda: app.add_cosignature(text), repeat)
            with_witnesses = _timed(lambda: app.export_evidence(hand_id), repeat)
            app.witnesses = WitnessKeys()
            without = _timed(lambda: app.export_evidence(hand_id), repeat)
        finally:
            app.close()
    return [
        ("witness: sign a checkpoint of a new size", f"{sign.cpu:.2f} ms CPU"),
        ("witness: the latest checkpoint, size seen before", f"{latest.cpu:.2f} ms CPU"),
        ("witness: GetCheckpoint's use case, proof from 1", f"{proof.cpu:.2f} ms CPU"),
        ("witness: AddCosignature, a new tree (stored)",
         f"{statistics.median(stored):.2f} ms CPU (median of {len(stored)})"),
        ("witness: AddCosignature, a tree kept already", f"{retry.cpu:.2f} ms CPU"),
        ("witness: export with 2 witnesses / with none",
         f"{with_witnesses.cpu:.2f} / {without.cpu:.2f} ms CPU"),
    ]


def merkle_rows(leaves_count: int) -> list[tuple[str, str]]:
    """Our RFC 6962 code against pymerkle: agreement and timings."""
    data = [f"leaf {i}".encode() for i in range(leaves_count)]
    rows: list[tuple[str, str]] = []
    started = time.perf_counter()
    log = MerkleLog()
    for d in data:
        log.append(leaf_hash(d))
    ours_root = log.root()
    rows.append(("ours: append entries + root", f"{(time.perf_counter() - started) * MS:.1f} ms"))
    sample = range(0, leaves_count, max(1, leaves_count // 100))
    started = time.perf_counter()
    for i in sample:
        verify_inclusion(log.leaf(i), i, leaves_count, log.inclusion_proof(i), ours_root)
    each = (time.perf_counter() - started) / len(sample) * MS
    rows.append(("ours: inclusion proof + check", f"{each:.2f} ms per leaf"))
    try:
        pymerkle: Any = importlib.import_module("pymerkle")
    except ModuleNotFoundError:
        rows.append(("pymerkle", "not installed (pip install pymerkle to compare)"))
        return rows
    tree = pymerkle.InmemoryTree(algorithm="sha256")
    started = time.perf_counter()
    for d in data:
        tree.append_entry(d)
    theirs_root = tree.get_state()
    rows.append(("pymerkle: append entries + root",
                 f"{(time.perf_counter() - started) * MS:.1f} ms"))
    rows.append(("pymerkle root equals ours", str(theirs_root == ours_root)))
    started = time.perf_counter()
    for i in sample:
        proof = tree.prove_inclusion(i + 1)  # pymerkle counts leaves from 1
        pymerkle.verify_inclusion(tree.get_leaf(i + 1), theirs_root, proof)
    each = (time.perf_counter() - started) / len(sample) * MS
    rows.append(("pymerkle: inclusion proof + check", f"{each:.2f} ms per leaf"))
    agree = all(log.root(n) == tree.get_state(n) for n in range(1, min(leaves_count, 300) + 1))
    rows.append(("pymerkle roots of every prefix up to 300 equal ours", str(agree)))
    return rows


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench fairness`."""
    parser = sub.add_parser(
        "fairness", help="the hash chain's command cost, the verifier, the Merkle log",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--hands", type=positive, default=DEFAULT_HANDS, metavar="N",
                        help=f"classic hands per store variant (default {DEFAULT_HANDS})")
    parser.add_argument("--repeat", type=positive, default=DEFAULT_REPEAT, metavar="N",
                        help=f"verifier runs to time (default {DEFAULT_REPEAT})")
    parser.add_argument("--leaves", type=positive, default=DEFAULT_LEAVES, metavar="N",
                        help=f"Merkle leaves (default {DEFAULT_LEAVES})")
    parser.add_argument("--draws", type=positive, default=DEFAULT_DRAWS, metavar="N",
                        help=f"seat-entropy draws per protocol (default {DEFAULT_DRAWS})")
    parser.add_argument("--only-draws", action="store_true",
                        help="measure the seat-entropy draws alone")
    parser.add_argument("--only-witness", action="store_true",
                        help="measure what witnesses cost the referee alone (--hands hands,"
                             " --repeat calls)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run `scripts/bench fairness` and print a table."""
    if args.only_witness:
        _print(witness_rows(args.hands, args.repeat))
        return 0
    direct, committed = draw_cpu(args.draws)
    draw_rows = [
        ("draw CPU, direct (4 contributions)", f"{direct:.1f} ms (median of {args.draws})"),
        ("draw CPU, commit then reveal (4 + 4)", f"{committed:.1f} ms"),
        ("commit then reveal / direct", f"{committed / direct:.2f}x"),
    ]
    if args.only_draws:
        _print(draw_rows)
        return 0
    plain = command_cpu(PlainReferee, args.hands)
    chained = command_cpu(Referee, args.hands)
    times = verify_times(args.repeat)
    events = times.events
    rows = [
        ("command CPU, plain store", f"{plain:.0f} µs (median of {args.hands} hands)"),
        ("command CPU, chained store", f"{chained:.0f} µs"),
        ("chain cost per command", f"{(chained / plain - 1) * 100:+.1f}% (target ≤ +10%)"),
        (f"verify a {events}-event hand, re-rule included", str(times.with_rules)),
        (f"verify a {events}-event hand, crypto checks only", str(times.alone)),
        (f"VerifyHand of a {events}-event hand", str(times.verify_hand)),
        *merkle_rows(args.leaves),
        *draw_rows,
        *witness_rows(args.hands, args.repeat),
    ]
    _print(rows)
    return 0


def _print(rows: list[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


__all__ = ["Timing", "VerifyTimes", "add_parser", "command_cpu", "draw_cpu", "merkle_rows",
           "run", "verify_times", "witness_rows"]
