"""`fiftyk bench e2e`: closed-loop load on a running referee, from separate processes.

Each table is played by one bot loop (a thread in a worker process): it sends one command,
waits for the answer, and sends the next. Bots track their own cards from the views the
server returns and choose plays with the domain's legal-play generator, so every timed call
is a command (Play, Pass, or StartHand when a hand ends). Latency is measured per command
at the client. `fiftyk bench echo` measures the same harness against a trivial echo service
on the same server stack: the ceiling for Python gRPC on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import grpc

from domain.cards import parse_cards
from domain.combinations import Combination, classify
from domain.legal import legal_plays
from domain.rulesets import Ruleset
from service.client import RefereeClient
from service.config import DEV_PLATFORM_KEY
from service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from service.grpc.interceptors import MetricsInterceptor, RequestContextInterceptor
from service.metrics import Metrics

PASS_PROBABILITY = 0.25
COMPLETED = pb.HAND_STATUS_COMPLETED
PERCENT_P50, PERCENT_P99 = 50, 99
ECHO_METHOD = "/fiftyk.bench.Echo/Echo"


@dataclass
class LoopStats:
    """What one load loop measured."""

    latencies_ms: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, code: str) -> None:
        """Count a failed call by status code name."""
        self.errors[code] = self.errors.get(code, 0) + 1


def _percentile(values: list[float], percent: int) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(percent / 100 * len(ordered)) - 1))
    return ordered[index]


class TableBot:
    """Plays one table in a closed loop through the real API."""

    def __init__(self, client: RefereeClient, table_id: str, tokens: list[str],
                 rules: Ruleset, seed: int) -> None:
        self.table_id = table_id
        self.seats = [client.as_seat(token) for token in tokens]
        self.rules = rules
        self.rng = random.Random(seed)
        self.hand_id = ""
        self.cards: list[list[str]] = []
        self.turn: int | None = None
        self.top: Combination | None = None

    def _adopt(self, view: pb.HandView) -> None:
        self.hand_id = view.hand_id
        self.turn = view.turn_seat if view.HasField("turn_seat") else None
        self.top = (classify(parse_cards(list(view.top_play.cards)), self.rules)
                    if view.HasField("top_play") else None)
        if view.HasField("viewer_seat"):
            self.cards[view.viewer_seat] = list(view.own_cards)

    def deal(self, stats: LoopStats) -> None:
        """Start the next hand and learn every seat's cards (one view per seat)."""
        started = time.perf_counter()
        response = self.seats[0].start_hand(self.table_id)
        stats.latencies_ms.append((time.perf_counter() - started) * 1000)
        self.cards = [[] for _ in self.seats]
        self._adopt(response.hand)
        for seat, client in enumerate(self.seats):
            view = client.hand_view(self.table_id, self.hand_id, seat=seat)
            self._adopt(view)

    def step(self, stats: LoopStats) -> bool:
        """One command; False when the hand is over."""
        seat = self.turn
        if seat is None:
            return False
        client = self.seats[seat]
        plays = legal_plays(parse_cards(self.cards[seat]), self.top, self.rules)
        started = time.perf_counter()
        if self.top is not None and (not plays or self.rng.random() < PASS_PROBABILITY):
            response: Any = client.pass_turn(self.table_id, self.hand_id)
        else:
            response = client.play(self.table_id, self.hand_id,
                                   self.rng.choice(plays).card_strings())
        stats.latencies_ms.append((time.perf_counter() - started) * 1000)
        self._adopt(response.hand)
        return bool(response.hand.status != COMPLETED)


def _table_loop(target: str, table: dict[str, Any], deadline: float, seed: int) -> LoopStats:
    stats = LoopStats()
    client = RefereeClient(target)
    bot = TableBot(client, table["table_id"], table["tokens"],
                   Ruleset.from_json(table["ruleset"]), seed)
    try:
        bot.deal(stats)
        while time.perf_counter() < deadline:
            try:
                if not bot.step(stats):
                    bot.deal(stats)
            except grpc.RpcError as error:
                stats.error(error.code().name)
                bot.deal(stats)
    finally:
        client.close()
    return stats


def _worker(target: str, tables: list[dict[str, Any]], seconds: float, seed: int,
            out: Any) -> None:
    deadline = time.perf_counter() + seconds
    with ThreadPoolExecutor(max_workers=max(1, len(tables))) as pool:
        results = list(pool.map(
            lambda item: _table_loop(target, item[1], deadline, seed + item[0]),
            enumerate(tables)))
    merged = LoopStats()
    for result in results:
        merged.latencies_ms.extend(result.latencies_ms)
        for code, count in result.errors.items():
            merged.errors[code] = merged.errors.get(code, 0) + count
    out.put({"latencies_ms": merged.latencies_ms, "errors": merged.errors})


def _summary(stats: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    latencies = [x for s in stats for x in s["latencies_ms"]]
    errors: dict[str, int] = {}
    for s in stats:
        for code, count in s["errors"].items():
            errors[code] = errors.get(code, 0) + count
    return {
        "commands": len(latencies),
        "seconds": seconds,
        "commands_per_second": round(len(latencies) / seconds, 1),
        "p50_ms": round(_percentile(latencies, PERCENT_P50), 3),
        "p99_ms": round(_percentile(latencies, PERCENT_P99), 3),
        "mean_ms": round(statistics.fmean(latencies), 3) if latencies else 0.0,
        "errors": sum(errors.values()),
        "errors_by_code": errors,
    }


def _spread(items: list[Any], parts: int) -> list[list[Any]]:
    return [items[i::parts] for i in range(parts) if items[i::parts]]


def _run_processes(target: Callable[..., None], jobs: list[tuple[Any, ...]]
                   ) -> list[dict[str, Any]]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=target, args=(*job, queue)) for job in jobs]
    for process in processes:
        process.start()
    results = [queue.get() for _ in processes]
    for process in processes:
        process.join()
    return results


def setup_tables(target: str, tables: int, preset: str, platform_key: str
                 ) -> list[dict[str, Any]]:
    """Create tables, seat bots, and return what the load processes need."""
    platform = RefereeClient(target).as_platform(platform_key)
    created = []
    rules = Ruleset.preset_named(preset)
    players = rules.player_counts()[-1]
    for index in range(tables):
        table = platform.create_table(preset, players, name=f"bench-{index}").table
        tokens = [platform.join_table(table.table_id, f"bench-{index}-{seat}").seat_token
                  for seat in range(players)]
        created.append({"table_id": table.table_id, "tokens": tokens,
                        "ruleset": rules.to_json()})
    return created


def run_e2e(target: str, *, tables: int, seconds: float, processes: int, preset: str,
            platform_key: str, seed: int = 1) -> dict[str, Any]:
    """Create tables, play them in a closed loop from worker processes, summarise."""
    created = setup_tables(target, tables, preset, platform_key)
    parts = _spread(created, processes)
    results = _run_processes(_worker, [(target, part, seconds, seed + 1000 * i)
                                       for i, part in enumerate(parts)])
    summary = _summary(results, seconds)
    summary.update({"tables": tables, "processes": len(parts), "preset": preset})
    return summary


# -- the echo ceiling -----------------------------------------------------------------------


def _echo_loop(target: str, deadline: float) -> LoopStats:
    stats = LoopStats()
    channel = grpc.insecure_channel(target)
    call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
        ECHO_METHOD, request_serializer=None, response_deserializer=None)
    payload = b"x" * 64
    try:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            try:
                call(payload, timeout=10)
            except grpc.RpcError as error:
                stats.error(error.code().name)
                continue
            stats.latencies_ms.append((time.perf_counter() - started) * 1000)
    finally:
        channel.close()
    return stats


def _echo_worker(target: str, loops: int, seconds: float, out: Any) -> None:
    deadline = time.perf_counter() + seconds
    with ThreadPoolExecutor(max_workers=loops) as pool:
        results = list(pool.map(lambda _: _echo_loop(target, deadline), range(loops)))
    out.put({"latencies_ms": [x for r in results for x in r.latencies_ms],
             "errors": {k: v for r in results for k, v in r.errors.items()}})


def run_echo_load(target: str, *, loops: int, seconds: float, processes: int
                  ) -> dict[str, Any]:
    """The same closed loop against the echo service."""
    per_process = [len(part) for part in _spread(list(range(loops)), processes)]
    results = _run_processes(_echo_worker, [(target, n, seconds) for n in per_process])
    summary = _summary(results, seconds)
    summary.update({"loops": loops, "processes": len(per_process)})
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

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._process.join(timeout=10)


# -- command line ---------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench e2e` and `bench echo`."""
    e2e = sub.add_parser("e2e", help="closed-loop command load on a running referee",
                         description=__doc__)
    e2e.add_argument("--server", required=True, help="HOST:PORT of the referee")
    e2e.add_argument("--tables", type=int, default=8)
    e2e.add_argument("--seconds", type=float, default=10.0)
    e2e.add_argument("--processes", type=int, default=2, help="load-generating processes")
    e2e.add_argument("--preset", default="classic")
    e2e.add_argument("--platform-key", default=DEV_PLATFORM_KEY,
                     help="platform credential (default: the loopback development key)")
    e2e.set_defaults(handler=_run_e2e_cli)
    echo = sub.add_parser("echo", help="the same load on a trivial echo service (the ceiling)")
    echo.add_argument("--loops", type=int, default=8)
    echo.add_argument("--seconds", type=float, default=10.0)
    echo.add_argument("--processes", type=int, default=2)
    echo.set_defaults(handler=_run_echo_cli)


def _run_e2e_cli(args: argparse.Namespace) -> int:
    summary = run_e2e(args.server, tables=args.tables, seconds=args.seconds,
                      processes=args.processes, preset=args.preset,
                      platform_key=args.platform_key)
    print(json.dumps(summary))
    return 0


def _run_echo_cli(args: argparse.Namespace) -> int:
    with EchoServerProcess() as target:
        summary = run_echo_load(target, loops=args.loops, seconds=args.seconds,
                                processes=args.processes)
    print(json.dumps(summary))
    return 0


__all__ = ["EchoServerProcess", "run_e2e", "run_echo_load", "start_echo_server"]
