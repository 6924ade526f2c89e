"""Helpers for end-to-end tests against real referee servers: run, scrape, play, audit.

No stand-ins: servers are `create_server` (in a thread with its own event loop) or
`fiftyk serve` processes; hands are played through the gRPC client with the legal plays the
server lists; scrapes are real HTTP GETs of `/metrics`.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from prometheus_client.parser import text_string_to_metric_families

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import Config
from fiftyk_referee.service.server import RunningServer, create_server

REPO = Path(__file__).resolve().parents[2]
FIFTYK = str(Path(sys.executable).with_name("fiftyk"))
START_TIMEOUT_SECONDS = 120.0  # a deadline for a start, generous for a loaded machine
WAIT_SECONDS = 10.0
COMPLETED = pb.HAND_STATUS_COMPLETED
PASS_PROBABILITY = 0.3
# Events of a hand that no command asks for: the referee records them as consequences.
AUTOMATIC_HAND_EVENTS = frozenset({"fiftyk.trick_won", "fiftyk.cards_drawn", "fiftyk.announced",
                                   "fiftyk.went_out", "fiftyk.hand_ended"})
PLAYER_PASS = pb.FIFTYK_PASS_REASON_PLAYER


# -- servers --------------------------------------------------------------------------------


@contextmanager
def referee_in_thread(config: Config) -> Iterator[RunningServer]:
    """`create_server(config)` on an event loop of its own thread; stopped on exit."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="referee-loop", daemon=True)
    thread.start()
    try:
        running = asyncio.run_coroutine_threadsafe(create_server(config), loop).result(
            START_TIMEOUT_SECONDS)
        try:
            yield running
        finally:
            asyncio.run_coroutine_threadsafe(running.stop(1.0), loop).result(
                START_TIMEOUT_SECONDS)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(START_TIMEOUT_SECONDS)
        loop.close()


@dataclass
class ServeProcess:
    """A `fiftyk serve` child process and the ports it announced."""

    process: subprocess.Popen[str]
    grpc_port: int
    metrics_port: int
    stderr_path: Path

    @property
    def target(self) -> str:
        """host:port of its gRPC server."""
        return f"127.0.0.1:{self.grpc_port}"

    def stop(self) -> int:
        """SIGTERM, wait for the graceful shutdown; return the exit code."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(START_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        return int(self.process.returncode)

    def log_lines(self) -> list[str]:
        """Everything it wrote to stderr so far, line by line."""
        return self.stderr_path.read_text(encoding="utf-8").splitlines()


# Set RLIMIT_NOFILE to argv[1], then exec argv[2:].
FILE_LIMIT_SHIM = ("import os, resource, sys; limit = int(sys.argv[1]);"
                   " resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit));"
                   " os.execv(sys.argv[2], sys.argv[2:])")


def start_serve(args: Sequence[str], env: Mapping[str, str], stderr_path: Path, *,
                file_limit: int | None = None) -> ServeProcess:
    """Start `fiftyk serve ARGS` and wait for its `fiftyk serving grpc=... metrics=...` line
    (with `file_limit`: under that limit of open file descriptors, RLIMIT_NOFILE)."""
    full_env = {**os.environ, **env}
    command = [FIFTYK, "serve", *args]
    if file_limit is not None:
        # The limit is set by a small Python that then becomes `fiftyk serve` (exec keeps the
        # process), not by a `preexec_fn`: that runs Python in a child forked from this
        # process while its gRPC threads run, and gRPC's state copied so mid-call once crashed
        # the child before it could exec (seen under load).
        command = [sys.executable, "-c", FILE_LIMIT_SHIM, str(file_limit), *command]
    with stderr_path.open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(command, cwd=REPO, env=full_env, stdout=subprocess.PIPE,
                                   stderr=stderr, text=True)
    if process.stdout is None:  # pragma: no cover - stdout=PIPE always gives one
        raise RuntimeError("no stdout")
    first = process.stdout.readline()
    if not first.startswith("fiftyk serving "):
        process.kill()
        process.wait()
        raise RuntimeError(f"fiftyk serve did not start: {first!r}\n"
                           + stderr_path.read_text(encoding="utf-8"))
    fields = dict(part.split("=", 1) for part in first.split()[2:])
    return ServeProcess(process, int(fields["grpc"].rsplit(":", 1)[1]),
                        int(fields["metrics"]), stderr_path)


# -- scraping -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scrape:
    """One scrape of a `/metrics` endpoint: every sample by name and labels."""

    samples: dict[tuple[str, frozenset[tuple[str, str]]], float]

    @property
    def names(self) -> set[str]:
        """Every sample name present (`_total`, `_bucket`, `_count`, ... included)."""
        return {name for name, _ in self.samples}

    def value(self, name: str, **labels: str) -> float:
        """The sample with exactly these labels; 0 when the series does not exist yet."""
        return self.samples.get((name, frozenset(labels.items())), 0.0)

    def total(self, name: str, **labels: str) -> float:
        """The sum over every series of `name` whose labels include `labels`."""
        wanted = set(labels.items())
        return sum(v for (n, series), v in self.samples.items()
                   if n == name and wanted <= series)


def scrape(port: int) -> Scrape:
    """GET http://127.0.0.1:PORT/metrics and parse the exposition."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode("utf-8")
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = float(sample.value)
    return Scrape(samples)


def wait_until(check: Callable[[], bool], what: str, timeout: float = WAIT_SECONDS) -> None:
    """Poll `check` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


# -- playing --------------------------------------------------------------------------------


@dataclass
class Tally:
    """What the clients did and what the server answered, per RPC and per command."""

    calls: Counter[str] = field(default_factory=Counter)  # RPCs sent, by method
    ok: Counter[str] = field(default_factory=Counter)  # RPCs answered OK, by method
    applied: Counter[str] = field(default_factory=Counter)  # accepted and not replayed
    replayed: Counter[str] = field(default_factory=Counter)
    failed: Counter[tuple[str, grpc.StatusCode]] = field(default_factory=Counter)
    # (hand id, hand version) of every command answered by each route (replica).
    versions_by_route: dict[int, set[tuple[str, int]]] = field(default_factory=dict)

    def merge(self, other: Tally) -> None:
        """Add another tally's numbers to this one."""
        for mine, theirs in ((self.calls, other.calls), (self.ok, other.ok),
                             (self.applied, other.applied), (self.replayed, other.replayed)):
            mine.update(theirs)
        self.failed.update(other.failed)
        for route, versions in other.versions_by_route.items():
            self.versions_by_route.setdefault(route, set()).update(versions)


def call(tally: Tally, method: str, send: Callable[[], Any]) -> Any:
    """Send one RPC and record it; re-raise a failure after counting it."""
    tally.calls[method] += 1
    try:
        response = send()
    except grpc.RpcError as error:
        tally.failed[(method, error.code())] += 1
        raise
    tally.ok[method] += 1
    if hasattr(response, "replayed"):
        (tally.replayed if response.replayed else tally.applied)[method] += 1
    return response


@dataclass
class Seated:
    """A table with every seat taken: its id and one seat client per seat and route."""

    table_id: str
    seats: list[list[RefereeClient]]  # seats[route][seat]


def player_id(table_id: str, seat: int) -> str:
    """The player id `open_table` seats at a seat."""
    return f"player-{table_id[:8]}-{seat}"


def open_table(platforms: Sequence[RefereeClient], tally: Tally, *, players: int = 4,
               preset: str = "classic", join_request_prefix: str = "",
               first_route: int = 0) -> Seated:
    """Create a table through `first_route` and seat `players`, seat n through the next routes.

    With `join_request_prefix`, seat n joins with request id `{prefix}{n}`.
    """
    routes = len(platforms)
    creator = platforms[first_route % routes]
    created = call(tally, "CreateTable", lambda: creator.create_table(preset, players))
    table_id = created.table.table_id
    tokens = []
    for seat in range(players):
        platform = platforms[(first_route + seat) % routes]
        request_id = f"{join_request_prefix}{seat}" if join_request_prefix else ""
        joined = call(tally, "JoinTable", lambda p=platform, s=seat, r=request_id: p.join_table(
            table_id, player_id(table_id, s), s, request_id=r))
        tokens.append(joined.seat_token)
    seats = [[platform.as_seat(token) for token in tokens] for platform in platforms]
    return Seated(table_id, seats)


def _command(client: RefereeClient, table_id: str, hand_id: str, cards: list[str] | None,
             request_id: str) -> Any:
    """Send one Play (cards) or Pass (None) for the client's seat."""
    if cards is None:
        return client.pass_turn(table_id, hand_id, request_id=request_id)
    return client.play(table_id, hand_id, cards, request_id=request_id)


def _send_everywhere(clients: Sequence[RefereeClient], method: str, table_id: str,
                     hand_id: str, cards: list[str] | None, request_id: str,
                     tally: Tally) -> Any:
    """The same command (same request id) sent through every client at once.

    Exactly one copy may be applied; every other copy must be answered from its receipt.
    Returns the applied copy's response.
    """
    barrier = threading.Barrier(len(clients))
    responses: list[Any] = [None] * len(clients)
    errors: list[BaseException] = []

    def send(index: int) -> None:
        barrier.wait()
        try:
            responses[index] = call(tally, method, functools.partial(
                _command, clients[index], table_id, hand_id, cards, request_id))
        except BaseException as error:  # reported below, in the caller's thread
            errors.append(error)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    applied = [r for r in responses if not r.replayed]
    if len(applied) != 1 or len({r.version for r in responses}) != 1:
        raise AssertionError(f"{request_id}: {len(applied)} copies applied, versions"
                             f" {[r.version for r in responses]}")
    return applied[0]


def play_hand(table: Seated, hand: pb.HandView, tally: Tally, *, seed: int,
              route: Callable[[int], int] = lambda n: 0, duplicate_every: int = 0
              ) -> pb.HandView:
    """Play a dealt hand to the end with random legal plays; command n goes via route(n).

    Every command carries a request id. With `duplicate_every=k`, every k-th command is sent
    through every route at once instead (see `_send_everywhere`). Returns the last view (the
    acting seat's) of the completed hand.
    """
    rng = random.Random(seed)
    view = hand
    number = 0
    while view.status != COMPLETED:
        seat = view.turn_seat
        via = route(number)
        client = table.seats[via][seat]
        legal = call(tally, "ListLegalPlays",
                     functools.partial(client.legal_plays, table.table_id, hand.hand_id))
        if not legal.plays and not legal.may_pass:
            raise AssertionError(f"seat {seat} is to act but may neither play nor pass")
        cards: list[str] | None = None
        if not legal.may_pass or (legal.plays and rng.random() >= PASS_PROBABILITY):
            cards = list(rng.choice(list(legal.plays)).cards)
        method = "Pass" if cards is None else "Play"
        request_id = f"{hand.hand_id}-{number}"
        if duplicate_every and number % duplicate_every == duplicate_every - 1:
            clients = [seats[seat] for seats in table.seats]
            response = _send_everywhere(clients, method, table.table_id, hand.hand_id, cards,
                                        request_id, tally)
        else:
            response = call(tally, method, functools.partial(
                _command, client, table.table_id, hand.hand_id, cards, request_id))
            tally.versions_by_route.setdefault(via, set()).add((hand.hand_id,
                                                                response.version))
        view = response.hand
        number += 1
    return view


# -- auditing -------------------------------------------------------------------------------


def feed_of(platform: RefereeClient, originators: set[str],
            tally: Tally | None = None) -> list[pb.Event]:
    """Every event of the global feed recorded by these aggregates, in feed order."""
    events: list[pb.Event] = []
    after = 0
    while True:
        page = call(tally or Tally(), "ReadEvents",
                    lambda a=after: platform.read_events(after_position=a, limit=1000))
        events.extend(e for e in page.events if e.aggregate_id in originators)
        after = page.last_position
        if not page.has_more:
            return events


def command_events(history: Sequence[pb.Event]) -> Counter[str]:
    """A hand's events that commands asked for, by command: dealt, play and pass."""
    counts: Counter[str] = Counter()
    for event in history:
        if event.HasField("fiftyk_hand_dealt"):
            counts["StartHand"] += 1
        elif event.HasField("fiftyk_cards_played") and not event.fiftyk_cards_played.by_referee:
            counts["Play"] += 1
        elif event.HasField("fiftyk_passed") and event.fiftyk_passed.reason == PLAYER_PASS:
            counts["Pass"] += 1
    return counts


def unexplained_events(history: Sequence[pb.Event]) -> list[str]:
    """Event names that are neither a command's nor an automatic consequence."""
    explained = {"fiftyk.hand_dealt", "fiftyk.cards_played", "fiftyk.passed",
                 *AUTOMATIC_HAND_EVENTS}
    return [event.name for event in history if event.name not in explained]


class StreamEnding:
    """Reads a server stream on a thread of its own until it ends; `error` says how."""

    def __init__(self, stream: Iterator[Any]) -> None:
        self._errors: list[grpc.RpcError] = []
        self._thread = threading.Thread(target=self._follow, args=(stream,), daemon=True)
        self._thread.start()

    def _follow(self, stream: Iterator[Any]) -> None:
        try:
            for _ in stream:
                pass
        except grpc.RpcError as error:
            self._errors.append(error)

    def error(self, timeout: float) -> grpc.RpcError:
        """The error the stream ended with (a bounded wait; fails if it ends OK or not)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the stream did not end"
        assert self._errors, "the stream ended OK"
        return self._errors[0]


def dead_letters(platform: RefereeClient, webhook_id: str,
                 timeout: float) -> list[pb.WebhookDeadLetter]:
    """A webhook's dead letters, once it has any (a bounded wait)."""
    deadline = time.monotonic() + timeout
    while not (letters := platform.webhook_dead_letters(webhook_id)):
        assert time.monotonic() < deadline, "no dead letter"
        time.sleep(0.05)
    return list(letters)
