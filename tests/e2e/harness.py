"""A real referee in the test process, bots that play through its gRPC API, and watchers.

`LiveServer` runs `service.server.create_server` on its own event loop in a background
thread, listening on a free loopback port; tests talk to it over real channels with the
typed client, exactly as a remote client would.
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc

from fiftyk_referee.domain.cards import make_deck
from fiftyk_referee.domain.deal import shuffle_deck
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY, DEV_PLATFORM_KEY, Config, host_port
from fiftyk_referee.service.server import RunningServer, create_server

T = TypeVar("T")
START_TIMEOUT_SECONDS = 120  # a deadline for a start, generous for a loaded machine
WATCH_DEADLINE_SECONDS = 60
COMPLETED = pb.HAND_STATUS_COMPLETED
MAX_COMMANDS_PER_HAND = 5_000


def dial_host(host: str) -> str:
    """The address a client on this machine dials for a server bound to `host`."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)


def server_config(data_dir: Path, **overrides: Any) -> Config:
    """A loopback config on a free port with a fast turn clock (SQLite in `data_dir`).

    Rate limits are off: a test of something else must not depend on how fast the machine
    is (tests of the limits set their own, `rate_limits=...`)."""
    settings: dict[str, Any] = {"host": "127.0.0.1", "port": 0, "data_dir": data_dir,
                                "workers": 8, "turn_sweep_seconds": 0.1, "rate_limits": "off"}
    settings.update(overrides)
    return Config(**settings).validate()


class LiveServer:
    """The real server (`create_server`) on an event loop of its own, in a daemon thread."""

    def __init__(self, config: Config, *, metrics_port: int = -1) -> None:
        self.config = config
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="live-server",
                                        daemon=True)
        self._thread.start()
        self.running: RunningServer = self.run(create_server(config, metrics_port=metrics_port))
        self.target = host_port(dial_host(config.host), self.running.port)
        self._clients: list[RefereeClient] = []
        self.stopped = False

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float = START_TIMEOUT_SECONDS
            ) -> T:
        """Run a coroutine on the server's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def client(self, **credentials: Any) -> RefereeClient:
        """A client on a new channel to this server (closed when the server stops)."""
        client = RefereeClient(self.target, **credentials)
        self._clients.append(client)
        return client

    def platform(self) -> RefereeClient:
        """A client holding the (development) platform key."""
        return self.client(platform_key=DEV_PLATFORM_KEY)

    def audit(self) -> RefereeClient:
        """A client holding the (development) audit key."""
        return self.client(audit_key=DEV_AUDIT_KEY)

    def stop(self, grace: float = 0.2) -> None:
        """Graceful shutdown, then end the loop thread; safe to call twice."""
        if self.stopped:
            return
        self.stopped = True
        try:
            self.run(self.running.stop(grace), timeout=grace + START_TIMEOUT_SECONDS)
        finally:
            for client in self._clients:
                client.close()
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(START_TIMEOUT_SECONDS)
            self._loop.close()


@dataclass
class Seated:
    """A table with a bot in every seat: the seat clients act with their seat tokens."""

    table_id: str
    players: int
    tokens: list[str]
    seats: list[RefereeClient]
    platform: RefereeClient


def seat_bots(server: LiveServer, preset: str, players: int, *,
              options: Mapping[str, Any] | None = None, allow_preset_deck: bool = False,
              prefix: str = "bot") -> Seated:
    """Create a table with the platform key and seat one bot per seat."""
    platform = server.platform()
    table = platform.create_table(preset, players, options=options,
                                  allow_preset_deck=allow_preset_deck).table
    tokens = [platform.join_table(table.table_id, f"{prefix}-{seat}", seat).seat_token
              for seat in range(players)]
    seats = [server.client(token=token) for token in tokens]
    return Seated(table.table_id, players, tokens, seats, platform)


def seeded_deck(preset: str, seed: int) -> list[str]:
    """A reproducible deck order for a preset (the same shuffle every run)."""
    rules = Ruleset.from_spec(preset)
    base = make_deck(rules.packs, jokers=rules.jokers)
    return [str(card) for card in shuffle_deck(seed.to_bytes(32, "big"), base)]


def play_out(seated: Seated, view: pb.HandView, rng: random.Random, *,
             pass_rate: float = 0.3) -> tuple[pb.HandView, int]:
    """Bots play the hand to its end; returns the last view and the number of commands.

    The seat to act asks for its legal plays, then passes (when allowed, with probability
    `pass_rate`, or when nothing beats) or plays one at random. Every response must be the
    acting seat's own view: its cards and nobody else's.
    """
    hand_id = view.hand_id
    commands = 0
    while view.status != COMPLETED:
        if commands > MAX_COMMANDS_PER_HAND:
            raise AssertionError(f"hand {hand_id} did not end in {commands} commands")
        seat = view.turn_seat
        client = seated.seats[seat]
        legal = client.legal_plays(seated.table_id, hand_id)
        if legal.may_pass and (not legal.plays or rng.random() < pass_rate):
            view = client.pass_turn(seated.table_id, hand_id).hand
        else:
            play = rng.choice(list(legal.plays))
            view = client.play(seated.table_id, hand_id, play.cards).hand
        commands += 1
        assert view.viewer_seat == seat and not view.full_view
        assert all(not state.cards for state in view.seats)
    return view, commands


@dataclass
class Watcher:
    """Follows a table's WatchTable stream in a thread, reconnecting every `resume_every`
    messages on a brand-new channel from the last position received."""

    target: str
    table_id: str
    credentials: dict[str, str]
    resume_every: int = 0
    include_views: bool = False
    seat: int | None = None
    messages: list[pb.WatchTableResponse] = field(default_factory=list)
    connections: int = 0
    error: BaseException | None = None
    _position: int = 0
    _stop_at: int | None = None
    _call: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _thread: threading.Thread | None = None

    def start(self) -> Watcher:
        """Start following in a daemon thread."""
        self._thread = threading.Thread(target=self._follow, name="watcher", daemon=True)
        self._thread.start()
        return self

    def _done(self) -> bool:
        return self._stop_at is not None and self._position >= self._stop_at

    def _follow(self) -> None:
        try:
            while True:
                with self._lock:
                    if self._done():
                        return
                client = RefereeClient(self.target, **self.credentials)
                self.connections += 1
                try:
                    if self._read(client):
                        return
                finally:
                    client.close()
        except BaseException as error:  # reported to the test through `finish`
            self.error = error

    def _read(self, client: RefereeClient) -> bool:
        """Read one connection; True when finished, False to reconnect."""
        stream = client.watch(self.table_id, after_position=self._position,
                              include_views=self.include_views, seat=self.seat,
                              timeout=WATCH_DEADLINE_SECONDS)
        with self._lock:
            self._call = stream
            if self._done():
                return True
        received = 0
        try:
            for message in stream:
                with self._lock:
                    self.messages.append(message)
                    self._position = message.event.position
                    if self._done():
                        return True
                received += 1
                if self.resume_every and received >= self.resume_every:
                    return False  # drop the connection mid-stream; `finally` closes it
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                raise
            with self._lock:
                return self._done()
        raise AssertionError("the watch stream ended by itself")

    def finish(self, last_position: int, timeout: float = 30) -> list[pb.WatchTableResponse]:
        """Stop once `last_position` has arrived; returns every message received."""
        with self._lock:
            self._stop_at = last_position
            if self._done() and self._call is not None:
                self._call.cancel()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self._call.cancel()
                raise AssertionError(f"watcher stuck at {self._position} < {last_position}")
        if self.error is not None:
            raise self.error
        return list(self.messages)


def table_feed(client: RefereeClient, table_id: str, hand_ids: set[str],
               after: int = 0, topics: Sequence[str] = ()) -> list[pb.Event]:
    """The table's and its hands' events from the global feed (ReadEvents, as the client's
    credential sees them: platform or audit; `topics`: only these public names)."""
    ids = {table_id, *hand_ids}
    events: list[pb.Event] = []
    position = after
    while True:
        page = client.read_events(after_position=position, limit=1000, topics=topics)
        events.extend(e for e in page.events if e.aggregate_id in ids)
        position = page.last_position
        if not page.has_more:
            return events


def hidden_cards(event: pb.Event) -> list[str]:
    """The cards an event shows that are not played face up: a deal's and a draw's."""
    kind = event.WhichOneof("payload")
    if kind == "fiftyk_hand_dealt":
        dealt = event.fiftyk_hand_dealt
        return [*dealt.deck, *(card for hand in dealt.hands for card in hand.cards)]
    if kind == "fiftyk_cards_drawn":
        return list(event.fiftyk_cards_drawn.cards)
    return []
