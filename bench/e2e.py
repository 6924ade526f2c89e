"""`scripts/bench e2e`: closed-loop load on a running referee, from separate processes.

Each table is played by one bot loop (a thread in a worker process): it sends one command,
waits for the answer, and sends the next. Bots track their own cards from the views the
server returns and choose plays with the game's own rules code (the domain's), so every
timed call is a command; the views a bot reads after a deal are not timed or counted.
`--game` chooses the game: 五十K tables (`fiftyk`, the default: Play, Pass, and StartHand
when a hand ends) or Shengji tables (`shengji`: Declare while the deal is paced out, the
dealer's Bury, Play, and StartHand). A Shengji bot declares nothing, buries its lowest
cards (non-point cards first where the ruleset asks) and plays a listed lead or follow at
random; when the deal ends it reads every seat's view again (untimed), as after a deal.
With `--illegal-rate` a bot sometimes plays out of turn on purpose: those commands are rule
rejections (`rejected`), counted apart from `errors` (every other failure, including a rule
error on a command the bot thought legal).

All worker processes start together; the first `--warmup` seconds are not measured, then
commands that complete within the next `--seconds` are: `commands` and the latencies are
accepted commands only. `scripts/bench echo` measures the same harness against a trivial
echo service on the same server stack: the ceiling for Python gRPC on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import statistics
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc

from bench.arguments import positive
from bench.machine import process_cpu_seconds
from fiftyk_referee.domain.cards import Card, parse_cards
from fiftyk_referee.domain.doudizhu.combinations import Combination as DoudizhuCombination
from fiftyk_referee.domain.doudizhu.combinations import readings as ddz_readings
from fiftyk_referee.domain.doudizhu.legal import legal_plays as ddz_legal_plays
from fiftyk_referee.domain.doudizhu.rulesets import ROB as DOUDIZHU_ROB
from fiftyk_referee.domain.doudizhu.rulesets import DoudizhuRules
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.fiftyk.combinations import Combination, classify
from fiftyk_referee.domain.fiftyk.legal import legal_plays
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.game import Rules
from fiftyk_referee.domain.games import game_named
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, POINTS, TrumpOrder, trump_order
from fiftyk_referee.domain.shengji.play import lead_examples
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.domain.shengji.tricks import TrickRules
from fiftyk_referee.service.games.doudizhu import doudizhu_pb2 as ddz_pb
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.interceptors import MetricsInterceptor, RequestContextInterceptor
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from fiftyk_referee.service.ops.metrics import Metrics

PASS_PROBABILITY = 0.25
COMPLETED = pb.HAND_STATUS_COMPLETED
PERCENT_P50, PERCENT_P99 = 50, 99
ECHO_METHOD = "/fiftyk.bench.Echo/Echo"
DEFAULT_WARMUP_SECONDS = 1.0
SETUP_TIMEOUT_SECONDS = 120.0  # worker start, channels and first deals, before the window
RESULT_GRACE_SECONDS = 120.0  # after the window: in-flight calls finish, results travel
ILLEGAL_ACCEPTED = "ILLEGAL_ACCEPTED"
DEFAULT_GAME = "fiftyk"
DEFAULT_PRESETS = {"fiftyk": "classic", "shengji": "tractor", "doudizhu": "classic"}
SHENGJI_DECLARING, SHENGJI_BURYING = "declaring", "burying"
DOUDIZHU_BIDDING = "bidding"


class WindowProbe(Protocol):
    """Called by the load runner when the measured window opens and closes."""

    def start(self) -> None:
        """The window opens (warm-up is over)."""

    def stop(self) -> None:
        """The window closes."""


@dataclass(frozen=True)
class Window:
    """The measured interval, in `time.perf_counter()` seconds of one worker process."""

    opens: float
    closes: float

    @classmethod
    def after(cls, warmup: float, seconds: float) -> Window:
        """The window that opens `warmup` seconds from now."""
        now = time.perf_counter()
        return cls(now + warmup, now + warmup + seconds)

    def holds(self, moment: float) -> bool:
        """Whether a call that completed at `moment` is measured."""
        return self.opens <= moment <= self.closes


@dataclass
class LoopStats:
    """What one load loop measured inside the window."""

    latencies_ms: list[float] = field(default_factory=list)
    rejected: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    hands_started: int = 0

    def count(self, table: dict[str, int], key: str) -> None:
        """Add one to a per-reason or per-code counter."""
        table[key] = table.get(key, 0) + 1

    def merge(self, other: LoopStats) -> None:
        """Add another loop's figures to these."""
        self.latencies_ms.extend(other.latencies_ms)
        for key, count in other.rejected.items():
            self.rejected[key] = self.rejected.get(key, 0) + count
        for key, count in other.errors.items():
            self.errors[key] = self.errors.get(key, 0) + count
        self.hands_started += other.hands_started

    def as_json(self) -> dict[str, Any]:
        """Plain data for the trip back to the parent process."""
        return {"latencies_ms": self.latencies_ms, "rejected": self.rejected,
                "errors": self.errors, "hands_started": self.hands_started}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoopStats:
        """The inverse of `as_json`."""
        return cls(list(data["latencies_ms"]), dict(data["rejected"]), dict(data["errors"]),
                   int(data["hands_started"]))


def _percentile(values: list[float], percent: int) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(percent / 100 * len(ordered)) - 1))
    return ordered[index]


def failure_key(error: grpc.RpcError) -> tuple[str, str | None]:
    """A failed call as (status code name, reason code or None)."""
    decoded = error_reason(error)
    return decoded.code.name, decoded.reason


class TableBot:
    """Plays one table in a closed loop through the real API (a game's bot says what to send)."""

    def __init__(self, client: RefereeClient, table_id: str, tokens: list[str],
                 rules: Rules, seed: int, illegal_rate: float = 0.0) -> None:
        self.table_id = table_id
        self.seats = [client.as_seat(token) for token in tokens]
        self.rules = rules
        self.rng = random.Random(seed)
        self.illegal_rate = illegal_rate
        self.hand_id = ""
        self.cards: list[list[str]] = [[] for _ in tokens]
        self.turn: int | None = None
        self.window = Window(0.0, 0.0)

    def adopt(self, view: pb.HandView) -> None:
        """Follow the hand from a command's answer or a view."""
        self.hand_id = view.hand_id
        self.turn = view.turn_seat if view.HasField("turn_seat") else None
        if view.HasField("viewer_seat"):
            self.cards[view.viewer_seat] = list(view.own_cards)
        self.follow(view)

    def follow(self, view: pb.HandView) -> None:
        """The game's own part of following the hand (the trick's top play, the phase)."""

    def _timed(self, stats: LoopStats, call: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        response = call()
        finished = time.perf_counter()
        if self.window.holds(finished):
            stats.latencies_ms.append((finished - started) * 1000)
        return response

    def deal(self, stats: LoopStats) -> None:
        """Start the next hand and learn every seat's cards (one untimed view per seat)."""
        response = self._timed(stats, lambda: self.seats[0].start_hand(self.table_id))
        if self.window.holds(time.perf_counter()):
            stats.hands_started += 1
        self.cards = [[] for _ in self.seats]
        self.adopt(response.hand)
        self.resync()

    def resync(self) -> bool:
        """Read every seat's view of the current (else last) hand; False when it is over."""
        status = COMPLETED
        for seat, client in enumerate(self.seats):
            view = client.hand_view(self.table_id, seat=seat)
            self.adopt(view)
            status = view.status
        return bool(status != COMPLETED)

    def step(self, stats: LoopStats) -> bool:
        """One command; False when the hand is over."""
        seat = self.turn
        if seat is None:
            return False
        if self.illegal_rate and self.rng.random() < self.illegal_rate:
            self.play_out_of_turn(stats, seat)
        _, command = self.next_command(seat)
        response = self._timed(stats, command)
        self.adopt(response.hand)
        return bool(response.hand.status != COMPLETED)

    def next_command(self, seat: int) -> tuple[str, Callable[[], Any]]:
        """The seat's next legal command, as (its RPC's name, the call to send it)."""
        raise NotImplementedError

    def play_out_of_turn(self, stats: LoopStats, turn: int) -> None:
        """A deliberate rule violation: a seat that is not on turn plays one of its cards."""
        others = [s for s, cards in enumerate(self.cards) if s != turn and cards]
        if not others:
            return
        seat = self.rng.choice(others)
        card = self.rng.choice(self.cards[seat])
        try:
            self.seats[seat].play(self.table_id, self.hand_id, [card])
        except grpc.RpcError as error:
            if self.window.holds(time.perf_counter()):
                code, reason = failure_key(error)
                stats.count(stats.rejected, reason or code)
            return
        if self.window.holds(time.perf_counter()):
            stats.count(stats.errors, ILLEGAL_ACCEPTED)


class FiftykBot(TableBot):
    """A 五十K table: a legal play at random, or a pass now and then when it may pass."""

    rules: Ruleset
    top: Combination | None = None

    def follow(self, view: pb.HandView) -> None:
        """The play to beat, read from the view."""
        self.top = (classify(parse_cards(list(view.top_play.cards)), self.rules)
                    if view.HasField("top_play") else None)

    def next_command(self, seat: int) -> tuple[str, Callable[[], Any]]:
        """The seat's next legal command, as ("Play" or "Pass", the call to send it)."""
        client = self.seats[seat]
        plays = legal_plays(parse_cards(self.cards[seat]), self.top, self.rules)
        if self.top is not None and (not plays or self.rng.random() < PASS_PROBABILITY):
            return "Pass", lambda: client.pass_turn(self.table_id, self.hand_id)
        cards = self.rng.choice(plays).card_strings()
        return "Play", lambda: client.play(self.table_id, self.hand_id, cards)


class ShengjiBot(TableBot):
    """A Shengji table: declares nothing, buries its lowest cards, leads and follows at random
    from the game's own example leads and follows."""

    rules: ShengjiRules
    phase = SHENGJI_DECLARING
    order: TrumpOrder | None = None
    lead: list[Card] | None = None  # the current trick's first play

    def follow(self, view: pb.HandView) -> None:
        """The phase, the trump order once fixed and the trick's lead, read from the view."""
        state = view.shengji
        self.phase = state.phase
        if state.trump_rank and self.phase != SHENGJI_DECLARING:
            suit = state.trump_suit if state.HasField("trump_suit") else None
            self.order = trump_order(LEVEL_RANK[state.trump_rank], suit,
                                     self.rules.permanent_two)
        self.lead = parse_cards(list(view.trick[0].cards)) if view.trick else None

    def step(self, stats: LoopStats) -> bool:
        """One command; when it ends the paced deal, every seat's cards are read again."""
        declaring = self.phase == SHENGJI_DECLARING
        going_on = super().step(stats)
        if going_on and declaring and self.phase != SHENGJI_DECLARING:
            return self.resync()  # the last rounds and the kitty changed other seats' cards
        return going_on

    def next_command(self, seat: int) -> tuple[str, Callable[[], Any]]:
        """("Act" (a declaration or the bury) | "Play", the call to send it)."""
        client, table, hand = self.seats[seat], self.table_id, self.hand_id
        if self.phase == SHENGJI_DECLARING:
            return "Act", lambda: client.act(table, hand, "declare")
        order = self.order
        if order is None:
            raise RuntimeError("a Shengji hand past its deal has a trump order")
        held = parse_cards(self.cards[seat])
        if self.phase == SHENGJI_BURYING:
            lowest = sorted(held, key=order.sort_key)
            if not self.rules.bury_points:
                lowest.sort(key=lambda card: POINTS[card] > 0)  # non-point cards first
            cards = [str(c) for c in lowest[:self.rules.kitty_size]]
            return "Act", lambda: client.act(table, hand, "bury", cards)
        if self.lead is None:
            choices = [list(cards) for cards, _ in lead_examples(held, order)]
        else:
            tricks = TrickRules.of(self.rules)
            choices, _ = tricks.examples(held, tricks.read(self.lead, order), order)
        cards = [str(c) for c in self.rng.choice(choices)]
        return "Play", lambda: client.play(table, hand, cards)


class DoudizhuBot(TableBot):
    """A 斗地主 table: the first seat to bid bids 3 (`rob` bidding: calls, and the others
    pass), so every hand is played, never redealt; then a legal play at random, or a pass
    now and then when it may pass. 斗地主 is newer than the 0.2 API: every command is Act."""

    rules: DoudizhuRules
    phase = DOUDIZHU_BIDDING
    bids = 0
    top: DoudizhuCombination | None = None

    def follow(self, view: pb.HandView) -> None:
        """The phase, the bids so far and the play to beat, read from the view."""
        state = ddz_pb.HandView()
        if not view.game_view.Unpack(state):
            raise RuntimeError(f"not a 斗地主 view: {view.game_view.type_url}")
        self.phase, self.bids = state.phase, len(state.bids)
        self.top = None
        if state.HasField("top"):
            found = ddz_readings(parse_cards(list(state.top.cards)), self.rules.combos)
            self.top = next((c for c in found if c.kind == state.top.combination_type),
                            found[0] if found else None)

    def step(self, stats: LoopStats) -> bool:
        """One command; when it ends the bidding, every seat's cards are read again (the
        landlord took the 底牌)."""
        bidding = self.phase == DOUDIZHU_BIDDING
        going_on = super().step(stats)
        if going_on and bidding and self.phase != DOUDIZHU_BIDDING:
            return self.resync()
        return going_on

    def next_command(self, seat: int) -> tuple[str, Callable[[], Any]]:
        """("Act", the call to send it): a bid, a call, a pass, or a play."""
        client, table, hand = self.seats[seat], self.table_id, self.hand_id
        if self.phase == DOUDIZHU_BIDDING:
            if self.bids:
                return "Act", lambda: client.act(table, hand, "pass")
            if self.rules.bidding == DOUDIZHU_ROB:
                return "Act", lambda: client.act(table, hand, "call")
            return "Act", lambda: client.act(table, hand, "bid", value="3")
        plays = ddz_legal_plays(parse_cards(self.cards[seat]), self.top, self.rules.combos)
        if self.top is not None and (not plays or self.rng.random() < PASS_PROBABILITY):
            return "Act", lambda: client.act(table, hand, "pass")
        cards = self.rng.choice(plays).card_strings()
        return "Act", lambda: client.act(table, hand, "play", cards)


BOTS: dict[str, type[TableBot]] = {"fiftyk": FiftykBot, "shengji": ShengjiBot,
                                   "doudizhu": DoudizhuBot}


def _table_loop(bot: TableBot, window: Window) -> LoopStats:
    stats = LoopStats()
    bot.window = window
    while time.perf_counter() < window.closes:
        try:
            if not bot.step(stats):
                bot.deal(stats)
        except grpc.RpcError as error:
            if window.holds(time.perf_counter()):
                code, reason = failure_key(error)
                stats.count(stats.errors, f"{code}/{reason}" if reason else code)
            if not bot.resync():
                bot.deal(stats)
    return stats


def _cpu_in_window(window: Window, out: list[float]) -> None:
    time.sleep(max(0.0, window.opens - time.perf_counter()))
    started = time.process_time()
    time.sleep(max(0.0, window.closes - time.perf_counter()))
    out.append(time.process_time() - started)


def _worker(target: str, tables: list[dict[str, Any]], timing: tuple[float, float],
            seed: int, illegal_rate: float, barrier: Any, out: Any) -> None:
    warmup, seconds = timing
    # One connection per table, as players on many hosts would have: the kernel spreads
    # connections over the processes of `fiftyk serve --processes N`.
    clients = [RefereeClient(target) for _ in tables]
    try:
        bots = [BOTS[table["game"]](
                    client, table["table_id"], table["tokens"],
                    game_named(table["game"]).rules_from_json(table["ruleset"]), seed + index,
                    illegal_rate)
                for index, (client, table) in enumerate(zip(clients, tables, strict=True))]
        for bot in bots:
            bot.deal(LoopStats())
        barrier.wait(SETUP_TIMEOUT_SECONDS)
        window = Window.after(warmup, seconds)
        cpu: list[float] = []
        meter = threading.Thread(target=_cpu_in_window, args=(window, cpu), daemon=True)
        meter.start()
        with ThreadPoolExecutor(max_workers=max(1, len(bots))) as pool:
            results = list(pool.map(lambda bot: _table_loop(bot, window), bots))
        meter.join()
        merged = LoopStats()
        for result in results:
            merged.merge(result)
        out.put({**merged.as_json(), "client_cpu_seconds": sum(cpu)})
    except BaseException:
        barrier.abort()
        out.put({"failure": traceback.format_exc()})
        raise
    finally:
        for client in clients:
            client.close()


def _summary(results: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    merged = LoopStats()
    for result in results:
        merged.merge(LoopStats.from_json(result))
    latencies = merged.latencies_ms
    return {
        "commands": len(latencies),
        "seconds": seconds,
        "commands_per_second": round(len(latencies) / seconds, 1),
        "p50_ms": round(_percentile(latencies, PERCENT_P50), 3),
        "p99_ms": round(_percentile(latencies, PERCENT_P99), 3),
        "mean_ms": round(statistics.fmean(latencies), 3) if latencies else 0.0,
        "max_ms": round(max(latencies), 3) if latencies else 0.0,
        "rejected": sum(merged.rejected.values()),
        "rejected_by_reason": merged.rejected,
        "errors": sum(merged.errors.values()),
        "errors_by_code": merged.errors,
        "hands_started": merged.hands_started,
        "client_cpu_seconds": round(sum(r.get("client_cpu_seconds", 0.0) for r in results), 3),
    }


def _spread(items: list[Any], parts: int) -> list[list[Any]]:
    return [items[i::parts] for i in range(parts) if items[i::parts]]


def _run_processes(target: Callable[..., None], jobs: list[tuple[Any, ...]],
                   timing: tuple[float, float], probe: WindowProbe | None
                   ) -> list[dict[str, Any]]:
    """Start the workers, open the window for all at once, and collect their results."""
    warmup, seconds = timing
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    barrier = context.Barrier(len(jobs) + 1)
    processes = [context.Process(target=target, args=(*job, barrier, queue)) for job in jobs]
    for process in processes:
        process.start()
    try:
        barrier.wait(SETUP_TIMEOUT_SECONDS)
        time.sleep(warmup)
        if probe is not None:
            probe.start()
        time.sleep(seconds)
        if probe is not None:
            probe.stop()
    except threading.BrokenBarrierError:
        pass  # a worker failed while setting up: its failure is on the queue
    results = [queue.get(timeout=SETUP_TIMEOUT_SECONDS + RESULT_GRACE_SECONDS)
               for _ in processes]
    for process in processes:
        process.join()
    failures = [r["failure"] for r in results if "failure" in r]
    if failures:
        raise RuntimeError("a load worker failed:\n" + failures[0])
    return results


def table_players(rules: Rules) -> int:
    """The most seats the ruleset allows (four in 五十K's and 升级's presets, three in 斗地主)."""
    return next(n for n in range(8, 1, -1) if _allows(rules, n))


def _allows(rules: Rules, players: int) -> bool:
    try:
        rules.check_players(players)
    except RuleError:
        return False
    return True


def setup_tables(target: str, tables: int, preset: str, platform_key: str,
                 game: str = DEFAULT_GAME) -> list[dict[str, Any]]:
    """Create tables of `game`, seat bots, and return what the load processes need."""
    client = RefereeClient(target)
    platform = client.as_platform(platform_key)
    created = []
    rules = game_named(game).rules(preset)
    players = table_players(rules)
    try:
        for index in range(tables):
            table = platform.create_table(preset, players, name=f"bench-{index}",
                                          game=game).table
            tokens = [platform.join_table(table.table_id,
                                          f"bench-{table.table_id[:8]}-{seat}").seat_token
                      for seat in range(players)]
            created.append({"table_id": table.table_id, "tokens": tokens, "game": game,
                            "ruleset": rules.to_json()})
    finally:
        client.close()
    return created


def run_e2e(target: str, *, tables: int, seconds: float, processes: int, preset: str,
            platform_key: str, seed: int = 1, warmup: float = DEFAULT_WARMUP_SECONDS,
            illegal_rate: float = 0.0, probe: WindowProbe | None = None,
            game: str = DEFAULT_GAME) -> dict[str, Any]:
    """Create tables of `game`, play them in a closed loop from worker processes, summarise."""
    created = setup_tables(target, tables, preset, platform_key, game)
    parts = _spread(created, processes)
    timing = (warmup, seconds)
    results = _run_processes(_worker, [(target, part, timing, seed + 1000 * i, illegal_rate)
                                       for i, part in enumerate(parts)], timing, probe)
    summary = _summary(results, seconds)
    summary.update({"game": game, "tables": tables, "processes": len(parts), "preset": preset,
                    "warmup_seconds": warmup, "illegal_rate": illegal_rate})
    return summary


# -- the echo ceiling -----------------------------------------------------------------------


def _echo_loop(target: str, window: Window) -> LoopStats:
    stats = LoopStats()
    channel = grpc.insecure_channel(target)
    call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
        ECHO_METHOD, request_serializer=None, response_deserializer=None)
    payload = b"x" * 64
    try:
        while time.perf_counter() < window.closes:
            started = time.perf_counter()
            try:
                call(payload, timeout=10)
            except grpc.RpcError as error:
                if window.holds(time.perf_counter()):
                    stats.count(stats.errors, error.code().name)
                continue
            finished = time.perf_counter()
            if window.holds(finished):
                stats.latencies_ms.append((finished - started) * 1000)
    finally:
        channel.close()
    return stats


def _echo_worker(target: str, loops: int, timing: tuple[float, float], barrier: Any,
                 out: Any) -> None:
    warmup, seconds = timing
    try:
        barrier.wait(SETUP_TIMEOUT_SECONDS)
        window = Window.after(warmup, seconds)
        cpu: list[float] = []
        meter = threading.Thread(target=_cpu_in_window, args=(window, cpu), daemon=True)
        meter.start()
        with ThreadPoolExecutor(max_workers=loops) as pool:
            results = list(pool.map(lambda _: _echo_loop(target, window), range(loops)))
        meter.join()
        merged = LoopStats()
        for result in results:
            merged.merge(result)
        out.put({**merged.as_json(), "client_cpu_seconds": sum(cpu)})
    except BaseException:
        barrier.abort()
        out.put({"failure": traceback.format_exc()})
        raise


def run_echo_load(target: str, *, loops: int, seconds: float, processes: int,
                  warmup: float = DEFAULT_WARMUP_SECONDS, probe: WindowProbe | None = None
                  ) -> dict[str, Any]:
    """The same closed loop against the echo service."""
    per_process = [len(part) for part in _spread(list(range(loops)), processes)]
    timing = (warmup, seconds)
    results = _run_processes(_echo_worker, [(target, n, timing) for n in per_process],
                             timing, probe)
    summary = _summary(results, seconds)
    summary.update({"loops": loops, "processes": len(per_process), "warmup_seconds": warmup})
    return summary


# How the echo service serves a call (`bench echo --structure`): the referee's structure
# (the aio server hands each call to a thread and back), or one of two others measured
# beside it: the aio server answering on its event loop (no hand-off), or grpc's synchronous
# server (its own thread pool runs each call; it takes no aio interceptors, so none run).
EXECUTOR, LOOP, SYNC = "executor", "loop", "sync"
ECHO_STRUCTURES = (EXECUTOR, LOOP, SYNC)


def _echo(request: bytes) -> bytes:
    return request


async def start_echo_server(host: str = "127.0.0.1", port: int = 0, workers: int = 6,
                            structure: str = EXECUTOR) -> tuple[grpc.aio.Server, int]:
    """A trivial echo service on the referee's server stack (aio, interceptors, thread hop;
    with `structure=LOOP` answered on the event loop instead)."""
    executor = ThreadPoolExecutor(max_workers=workers)

    async def echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        del context
        if structure == LOOP:
            return _echo(request)
        return await asyncio.get_running_loop().run_in_executor(executor, _echo, request)

    handler = grpc.method_handlers_generic_handler("fiftyk.bench.Echo", {
        "Echo": grpc.unary_unary_rpc_method_handler(echo)})
    server = grpc.aio.server(interceptors=[RequestContextInterceptor(),
                                           MetricsInterceptor(Metrics())])
    server.add_generic_rpc_handlers((handler,))
    bound = server.add_insecure_port(f"{host}:{port}")
    await server.start()
    return server, bound


def _serve_sync_echo(port_out: Any, stop: Any, workers: int = 6) -> None:
    """The echo service on grpc's synchronous server (a thread pool runs each call)."""
    def echo(request: bytes, context: grpc.ServicerContext) -> bytes:
        del context
        return _echo(request)

    server = grpc.server(ThreadPoolExecutor(max_workers=workers))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "fiftyk.bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(echo)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    port_out.put(port)
    stop.wait()
    server.stop(1).wait()


def _serve_echo_forever(port_out: Any, stop: Any, structure: str = EXECUTOR) -> None:
    if structure == SYNC:
        _serve_sync_echo(port_out, stop)
        return

    async def main() -> None:
        server, port = await start_echo_server(structure=structure)
        port_out.put(port)
        while not stop.is_set():
            await asyncio.sleep(0.1)
        await server.stop(1)

    asyncio.run(main())


class EchoServerProcess:
    """The echo server in a process of its own (like a real server), as a context manager."""

    def __init__(self, structure: str = EXECUTOR) -> None:
        if structure not in ECHO_STRUCTURES:
            raise ValueError(f"no echo structure {structure!r}")
        self.structure = structure

    def __enter__(self) -> str:
        context = multiprocessing.get_context("spawn")
        self._queue = context.Queue()
        self._stop = context.Event()
        self._process = context.Process(target=_serve_echo_forever,
                                        args=(self._queue, self._stop, self.structure))
        self._process.start()
        return f"127.0.0.1:{self._queue.get(timeout=30)}"

    @property
    def pid(self) -> int:
        """The echo server's process id."""
        pid = self._process.pid
        if pid is None:
            raise RuntimeError("the echo server is not running")
        return pid

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._process.join(timeout=10)


# -- command line ---------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench e2e` and `bench echo`."""
    e2e = sub.add_parser("e2e", help="closed-loop command load on a running referee",
                         description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    e2e.add_argument("--server", required=True, help="HOST:PORT of the referee")
    e2e.add_argument("--tables", type=int, default=8)
    e2e.add_argument("--seconds", type=float, default=10.0, help="measured seconds")
    e2e.add_argument("--warmup", type=float, default=DEFAULT_WARMUP_SECONDS,
                     help="seconds of load before the measured window")
    e2e.add_argument("--processes", type=int, default=2, help="load-generating processes")
    e2e.add_argument("--game", choices=sorted(BOTS), default=DEFAULT_GAME,
                     help="the game the tables play (default fiftyk)")
    e2e.add_argument("--preset", help="the tables' preset (default: classic for fiftyk"
                     " and doudizhu, tractor for shengji)")
    e2e.add_argument("--illegal-rate", type=float, default=0.0,
                     help="chance per command that a bot also plays out of turn on purpose")
    e2e.add_argument("--platform-key", default=DEV_PLATFORM_KEY,
                     help="platform credential (default: the loopback development key)")
    e2e.set_defaults(handler=_run_e2e_cli)
    echo = sub.add_parser("echo", help="the same load on a trivial echo service (the ceiling)")
    echo.add_argument("--loops", type=int, default=8)
    echo.add_argument("--seconds", type=float, default=10.0)
    echo.add_argument("--warmup", type=float, default=DEFAULT_WARMUP_SECONDS)
    echo.add_argument("--processes", type=int, default=2)
    echo.add_argument("--structure", choices=ECHO_STRUCTURES, default=EXECUTOR,
                      help="how the echo server serves a call: executor (the referee's: the"
                      " aio server hands it to a thread and back, the default), loop (on the"
                      " aio event loop, no hand-off), sync (grpc's synchronous server)")
    echo.add_argument("--rounds", type=positive, default=3, metavar="N",
                      help="rounds of --compare (default 3)")
    echo.add_argument("--compare", action="store_true",
                      help="measure every structure, interleaved, for --rounds rounds, and"
                      " print each one's calls/s and its ratio to the referee's structure")
    echo.set_defaults(handler=_run_echo_cli)


def _run_e2e_cli(args: argparse.Namespace) -> int:
    summary = run_e2e(args.server, tables=args.tables, seconds=args.seconds,
                      processes=args.processes,
                      preset=args.preset or DEFAULT_PRESETS[args.game],
                      platform_key=args.platform_key, warmup=args.warmup,
                      illegal_rate=args.illegal_rate, game=args.game)
    print(json.dumps(summary))
    return 0


def _run_echo_cli(args: argparse.Namespace) -> int:
    if args.compare:
        print(json.dumps(compare_echo_structures(
            rounds=args.rounds, loops=args.loops, seconds=args.seconds,
            processes=args.processes, warmup=args.warmup)))
        return 0
    with EchoServerProcess(args.structure) as target:
        summary = run_echo_load(target, loops=args.loops, seconds=args.seconds,
                                processes=args.processes, warmup=args.warmup)
    print(json.dumps({**summary, "structure": args.structure}))
    return 0


class ProcessCpu:
    """A window probe: the CPU seconds one process used while the window was open."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.used = 0.0
        self._first = 0.0

    def start(self) -> None:
        """The window opens."""
        self._first = process_cpu_seconds(self.pid)

    def stop(self) -> None:
        """The window closes."""
        self.used = process_cpu_seconds(self.pid) - self._first


def compare_echo_structures(*, rounds: int, loops: int, seconds: float, processes: int,
                            warmup: float = DEFAULT_WARMUP_SECONDS) -> dict[str, Any]:
    """Every echo structure, interleaved round by round (the order turned each round), with
    its calls/s and server CPU per call, medians, and each one's ratio to the referee's."""
    runs: dict[str, list[dict[str, Any]]] = {structure: [] for structure in ECHO_STRUCTURES}
    for round_ in range(rounds):
        order = ECHO_STRUCTURES if round_ % 2 == 0 else tuple(reversed(ECHO_STRUCTURES))
        for structure in order:
            server = EchoServerProcess(structure)
            with server as target:
                probe = ProcessCpu(server.pid)
                summary = run_echo_load(target, loops=loops, seconds=seconds,
                                        processes=processes, warmup=warmup, probe=probe)
                summary["server_cpu_ms_per_call"] = round(
                    probe.used * 1000 / max(1, summary["commands"]), 3)
                runs[structure].append(summary)
    result: dict[str, Any] = {"rounds": rounds, "loops": loops, "seconds": seconds}
    base = statistics.median(r["commands_per_second"] for r in runs[EXECUTOR])
    for structure, done in runs.items():
        rate = statistics.median(r["commands_per_second"] for r in done)
        result[structure] = {
            "calls_per_second": rate,
            "server_cpu_ms_per_call": statistics.median(r["server_cpu_ms_per_call"]
                                                        for r in done),
            "p50_ms": statistics.median(r["p50_ms"] for r in done),
            "ratio_to_executor": round(rate / base, 3) if base else None,
            "per_round_calls_per_second": [r["commands_per_second"] for r in done]}
    return result


__all__ = ["BOTS", "DEFAULT_PRESETS", "EchoServerProcess", "FiftykBot", "ShengjiBot", "TableBot",
           "Window", "WindowProbe", "failure_key", "run_e2e", "run_echo_load", "setup_tables",
           "start_echo_server"]
