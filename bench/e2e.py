"""`scripts/bench e2e`: closed-loop load on a running referee, from separate processes.

Each table is played by one bot loop (a thread in a worker process): it sends one command,
waits for the answer, and sends the next. Bots track their own cards from the views the
server returns and choose plays with the domain's legal-play generator, so every timed call
is a command (Play, Pass, or StartHand when a hand ends); the views a bot reads after a
deal are not timed or counted. With `--illegal-rate` a bot sometimes plays out of turn on
purpose: those commands are rule rejections (`rejected`), counted apart from `errors` (every
other failure, including a rule error on a command the bot thought legal).

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

from fiftyk_referee.domain.cards import parse_cards
from fiftyk_referee.domain.fiftyk.combinations import Combination, classify
from fiftyk_referee.domain.fiftyk.legal import legal_plays
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
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
    """Plays one table in a closed loop through the real API."""

    def __init__(self, client: RefereeClient, table_id: str, tokens: list[str],
                 rules: Ruleset, seed: int, illegal_rate: float = 0.0) -> None:
        self.table_id = table_id
        self.seats = [client.as_seat(token) for token in tokens]
        self.rules = rules
        self.rng = random.Random(seed)
        self.illegal_rate = illegal_rate
        self.hand_id = ""
        self.cards: list[list[str]] = [[] for _ in tokens]
        self.turn: int | None = None
        self.top: Combination | None = None
        self.window = Window(0.0, 0.0)

    def adopt(self, view: pb.HandView) -> None:
        """Follow the hand from a command's answer or a view."""
        self.hand_id = view.hand_id
        self.turn = view.turn_seat if view.HasField("turn_seat") else None
        self.top = (classify(parse_cards(list(view.top_play.cards)), self.rules)
                    if view.HasField("top_play") else None)
        if view.HasField("viewer_seat"):
            self.cards[view.viewer_seat] = list(view.own_cards)

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
        """The seat's next legal command, as ("Play" or "Pass", the call to send it)."""
        client = self.seats[seat]
        plays = legal_plays(parse_cards(self.cards[seat]), self.top, self.rules)
        if self.top is not None and (not plays or self.rng.random() < PASS_PROBABILITY):
            return "Pass", lambda: client.pass_turn(self.table_id, self.hand_id)
        cards = self.rng.choice(plays).card_strings()
        return "Play", lambda: client.play(self.table_id, self.hand_id, cards)

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
        bots = [TableBot(client, table["table_id"], table["tokens"],
                         Ruleset.from_json(table["ruleset"]), seed + index, illegal_rate)
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


def setup_tables(target: str, tables: int, preset: str, platform_key: str
                 ) -> list[dict[str, Any]]:
    """Create tables, seat bots, and return what the load processes need."""
    client = RefereeClient(target)
    platform = client.as_platform(platform_key)
    created = []
    rules = Ruleset.preset_named(preset)
    players = rules.player_counts()[-1]
    try:
        for index in range(tables):
            table = platform.create_table(preset, players, name=f"bench-{index}").table
            tokens = [platform.join_table(table.table_id,
                                          f"bench-{table.table_id[:8]}-{seat}").seat_token
                      for seat in range(players)]
            created.append({"table_id": table.table_id, "tokens": tokens,
                            "ruleset": rules.to_json()})
    finally:
        client.close()
    return created


def run_e2e(target: str, *, tables: int, seconds: float, processes: int, preset: str,
            platform_key: str, seed: int = 1, warmup: float = DEFAULT_WARMUP_SECONDS,
            illegal_rate: float = 0.0, probe: WindowProbe | None = None) -> dict[str, Any]:
    """Create tables, play them in a closed loop from worker processes, summarise."""
    created = setup_tables(target, tables, preset, platform_key)
    parts = _spread(created, processes)
    timing = (warmup, seconds)
    results = _run_processes(_worker, [(target, part, timing, seed + 1000 * i, illegal_rate)
                                       for i, part in enumerate(parts)], timing, probe)
    summary = _summary(results, seconds)
    summary.update({"tables": tables, "processes": len(parts), "preset": preset,
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


async def start_echo_server(host: str = "127.0.0.1", port: int = 0,
                            workers: int = 6) -> tuple[grpc.aio.Server, int]:
    """A trivial echo service on the referee's server stack (aio, interceptors, thread hop)."""
    executor = ThreadPoolExecutor(max_workers=workers)

    def echo_sync(request: bytes) -> bytes:
        return request

    async def echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
        del context
        return await asyncio.get_running_loop().run_in_executor(executor, echo_sync, request)

    handler = grpc.method_handlers_generic_handler("fiftyk.bench.Echo", {
        "Echo": grpc.unary_unary_rpc_method_handler(echo)})
    server = grpc.aio.server(interceptors=[RequestContextInterceptor(),
                                           MetricsInterceptor(Metrics())])
    server.add_generic_rpc_handlers((handler,))
    bound = server.add_insecure_port(f"{host}:{port}")
    await server.start()
    return server, bound


def _serve_echo_forever(port_out: Any, stop: Any) -> None:
    async def main() -> None:
        server, port = await start_echo_server()
        port_out.put(port)
        while not stop.is_set():
            await asyncio.sleep(0.1)
        await server.stop(1)

    asyncio.run(main())


class EchoServerProcess:
    """The echo server in a process of its own (like a real server), as a context manager."""

    def __enter__(self) -> str:
        context = multiprocessing.get_context("spawn")
        self._queue = context.Queue()
        self._stop = context.Event()
        self._process = context.Process(target=_serve_echo_forever,
                                        args=(self._queue, self._stop))
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
    e2e.add_argument("--preset", default="classic")
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
    echo.set_defaults(handler=_run_echo_cli)


def _run_e2e_cli(args: argparse.Namespace) -> int:
    summary = run_e2e(args.server, tables=args.tables, seconds=args.seconds,
                      processes=args.processes, preset=args.preset,
                      platform_key=args.platform_key, warmup=args.warmup,
                      illegal_rate=args.illegal_rate)
    print(json.dumps(summary))
    return 0


def _run_echo_cli(args: argparse.Namespace) -> int:
    with EchoServerProcess() as target:
        summary = run_echo_load(target, loops=args.loops, seconds=args.seconds,
                                processes=args.processes, warmup=args.warmup)
    print(json.dumps(summary))
    return 0


__all__ = ["EchoServerProcess", "Window", "WindowProbe", "failure_key", "run_e2e",
           "run_echo_load", "setup_tables", "start_echo_server"]
