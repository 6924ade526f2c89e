"""A referee killed with SIGKILL under load loses no acknowledged command, on both stores.

Bots play several tables through a real `fiftyk serve` process, every command with a
request id, while the process is killed (`kill -9`, no shutdown at all) and restarted on the
same database, several times. Afterwards, every command the referee acknowledged is in the
store exactly once: repeating its request id replays it (`replayed`, the same version, no
new event), every hand's versions are gapless, and every finished hand re-rules to its
stored result.
"""

from __future__ import annotations

import random
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY, DEV_PLATFORM_KEY
from tests.e2e.live import ServeProcess, start_serve

TABLES = 3
PLAYERS = 4
KILLS = 3
COMMANDS_BETWEEN_KILLS = 40
WAIT_SECONDS = 60
CALL_TIMEOUT = 10.0


@dataclass
class Acknowledged:
    """A command the referee answered: how to send it again, and what it answered."""

    table_id: str
    hand_id: str
    token: str
    cards: tuple[str, ...] | None  # None for a pass
    request_id: str
    version: int


@dataclass
class Load:
    """Bots playing tables through whatever process currently serves the store."""

    target: str
    tables: list[tuple[str, list[str]]]  # table id, seat tokens
    acknowledged: list[Acknowledged] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    counter: int = 0
    errors: list[BaseException] = field(default_factory=list)

    def retarget(self, target: str) -> None:
        """Send the next commands to a restarted process."""
        with self.lock:
            self.target = target

    def play(self, seed: int) -> None:
        """Keep playing until stopped; calls that fail (the process is dead) are retried."""
        try:
            self._play(seed)
        except BaseException as error:  # reported by the test, never lost in the thread
            self.errors.append(error)
            raise

    def _play(self, seed: int) -> None:
        rng = random.Random(seed)
        while not self.stop.is_set():
            table_id, tokens = rng.choice(self.tables)
            with self.lock:
                target = self.target
                self.counter += 1
                request_id = f"crash-{seed}-{self.counter}"
            try:
                self._one(target, table_id, tokens, request_id, rng)
            except grpc.RpcError:
                time.sleep(0.05)  # the server is down or busy: try again shortly

    def _one(self, target: str, table_id: str, tokens: list[str], request_id: str,
             rng: random.Random) -> None:
        with closing(RefereeClient(target, platform_key=DEV_PLATFORM_KEY)) as platform:
            table = platform.get_table(table_id)
            if not table.HasField("current_hand_id"):
                if not table.match_over:
                    platform.start_hand(table_id, request_id=request_id)
                return
            hand_id = table.current_hand_id
            view = platform.hand_view(table_id, hand_id)
            if not view.HasField("turn_seat"):
                return
            token = tokens[view.turn_seat]
        with closing(RefereeClient(target, token=token)) as seat:
            legal = seat.legal_plays(table_id, hand_id)
            if not legal.plays and not legal.may_pass:
                return  # another bot moved first: the seat is no longer to act
            cards: tuple[str, ...] | None = None
            if legal.may_pass and (not legal.plays or rng.random() < 0.3):
                response = seat.pass_turn(table_id, hand_id, request_id=request_id)
            else:
                cards = tuple(rng.choice(list(legal.plays)).cards)
                response = seat.play(table_id, hand_id, cards, request_id=request_id)
        with self.lock:
            self.acknowledged.append(Acknowledged(table_id, hand_id, token, cards,
                                                  request_id, response.version))


def _serve(tmp_path: Path, database_url: str, name: str) -> ServeProcess:
    return start_serve(["--port", "0", "--metrics-port", "0", "--database-url", database_url,
                        "--rate-limits", "off"], {}, tmp_path / f"{name}.log")


def _kill(process: ServeProcess) -> None:
    process.process.send_signal(signal.SIGKILL)
    process.process.wait(WAIT_SECONDS)
    if process.process.stdout is not None:
        process.process.stdout.close()


def _wait_for(load: Load, count: int) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while len(load.acknowledged) < count:
        assert time.monotonic() < deadline, f"only {len(load.acknowledged)} commands answered"
        time.sleep(0.05)


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh store of each kind."""
    if request.param == "sqlite":
        yield str(tmp_path / "store.sqlite")
    else:
        yield request.getfixturevalue("fresh_postgres_db")


@pytest.mark.postgres
def test_kill_9_under_load_loses_no_acknowledged_command(tmp_path: Path,
                                                         database_url: str) -> None:
    serving = _serve(tmp_path, database_url, "first")
    try:
        with closing(RefereeClient(serving.target, platform_key=DEV_PLATFORM_KEY)) as platform:
            tables = []
            for number in range(TABLES):
                table_id = platform.create_table("classic", PLAYERS,
                                                 options={"hands": 50}).table.table_id
                tokens = [platform.join_table(table_id, f"crash-{number}-{seat}",
                                              seat).seat_token for seat in range(PLAYERS)]
                tables.append((table_id, tokens))
        load = Load(serving.target, tables)
        bots = [threading.Thread(target=load.play, args=(seed,)) for seed in range(3)]
        for bot in bots:
            bot.start()
        try:
            for kill in range(KILLS):
                _wait_for(load, COMMANDS_BETWEEN_KILLS * (kill + 1))
                _kill(serving)
                serving = _serve(tmp_path, database_url, f"after-kill-{kill}")
                load.retarget(serving.target)
            _wait_for(load, COMMANDS_BETWEEN_KILLS * (KILLS + 1))
        finally:
            load.stop.set()
            for bot in bots:
                bot.join(WAIT_SECONDS)
        assert not load.errors, load.errors
        _check_store(serving.target, load)
    finally:
        serving.stop()


def _check_store(target: str, load: Load) -> None:
    audit = RefereeClient(target, audit_key=DEV_AUDIT_KEY)
    try:
        hands = {ack.hand_id for ack in load.acknowledged}
        before = {hand_id: len(audit.all_hand_events(hand_id)) for hand_id in hands}
        for hand_id, count in before.items():
            versions = [event.aggregate_version for event in audit.all_hand_events(hand_id)]
            assert versions == list(range(1, count + 1)), f"hand {hand_id} has version gaps"
        for ack in load.acknowledged:
            with closing(RefereeClient(target, token=ack.token)) as seat:
                if ack.cards is None:
                    again = seat.pass_turn(ack.table_id, ack.hand_id, request_id=ack.request_id)
                else:
                    again = seat.play(ack.table_id, ack.hand_id, ack.cards,
                                      request_id=ack.request_id)
            assert again.replayed and again.version == ack.version, ack
        after = {hand_id: len(audit.all_hand_events(hand_id)) for hand_id in hands}
        assert after == before  # the replays wrote nothing
        for table_id, _ in load.tables:
            for row in audit.scores(table_id).hands:
                transcript = audit.export_transcript(row.hand_id)
                ruling = audit.adjudicate(transcript)
                assert ruling["status"] == "completed" and ruling["rejected"] is None
    finally:
        audit.close()
