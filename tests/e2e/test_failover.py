"""The referee follows its database through failovers: pg_auto_failover, kill -9, a lost node.

A pg_auto_failover formation on loopback (a monitor and two nodes, synchronous replication)
serves one `fiftyk serve` process, given the URI `pg_autoctl show uri` prints, unchanged.
Bots play eight tables, every command with a request id; a command whose answer is lost is
sent again with the same id until it answers, as docs/integrating.md tells clients to. Then:

1. the primary's `pg_autoctl` and postgres are killed with SIGKILL: the standby is promoted;
2. the dead primary's data directory is deleted and the node dropped — lost for good — and a
   new standby takes its address, while the bots play on;
3. the new primary is killed in turn: the new standby is promoted.

After each failover the same referee process serves again. At the end every acknowledged
command is stored (sent again with its request id it replays, with its version, writing
nothing), none was applied twice, every hand's versions are gapless, and every finished hand
re-rules to its result. The test prints its timings (kill to first acknowledged command,
promotion to first acknowledged command, commands in doubt) and the bots' throughput with
synchronous and with asynchronous replication: figures to report, never asserted.

Run it alone: `./scripts/test -n 0 -m failover -s`.
"""

from __future__ import annotations

import contextlib
import random
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar, cast

import grpc
import psutil
import pytest

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import ErrorDetails, error_details
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY, DEV_PLATFORM_KEY
from tests.e2e.live import ServeProcess, scrape, start_serve
from tests.support.autofailover import AutoFailoverCluster, ClusterError

# A formation of three PostgreSQL servers, two failovers and a rebuilt standby take minutes
# on a loaded two-core machine: more than the suite's default per-test limit.
pytestmark = [pytest.mark.failover, pytest.mark.timeout(900)]

TABLES = 8
PLAYERS = 4
BOTS = 4  # each owns TABLES // BOTS tables: no two bots race for one seat
HANDS = 50
CALL_TIMEOUT = 10.0  # the client deadline: above the store's 3 s budget (docs/integrating.md)
RETRY_PAUSE_SECONDS = 0.1  # when a refusal carries no RetryInfo
COMMANDS_BETWEEN_STEPS = 60
WAIT_SECONDS = 120.0
THROUGHPUT_WINDOW_SECONDS = 5.0
PASS_PROBABILITY = 0.3
IN_DOUBT_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
T = TypeVar("T")


@dataclass
class Acknowledged:
    """A command the referee answered: how to send it again, what it answered, and when."""

    table_id: str
    hand_id: str
    token: str
    cards: tuple[str, ...] | None  # None for a pass
    request_id: str
    version: int
    sent: float  # monotonic time the answered attempt was sent
    at: float  # monotonic time of the answer


@dataclass
class Bots:
    """Bots playing their own tables through one referee, resending lost commands."""

    target: str
    tables: list[tuple[str, list[str]]]  # table id, seat tokens
    acknowledged: list[Acknowledged] = field(default_factory=list)
    in_doubt: int = 0  # commands whose first answer was lost, resolved by resending
    in_doubt_applied: int = 0  # ... of which the resend found already stored (replayed)
    refusals: Counter[tuple[str, str | None]] = field(default_factory=Counter)
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    errors: list[BaseException] = field(default_factory=list)

    def run(self, bot: int) -> None:
        """Play the bot's tables until stopped; an unexpected error is kept for the test."""
        try:
            rng = random.Random(bot)
            mine = self.tables[bot::BOTS]
            number = 0
            while not self.stop.is_set():
                table_id, tokens = rng.choice(mine)
                number += 1
                self._turn(table_id, tokens, f"failover-{bot}-{number}", rng)
        except BaseException as error:
            self.errors.append(error)
            raise

    def _turn(self, table_id: str, tokens: list[str], request_id: str,
              rng: random.Random) -> None:
        with closing(RefereeClient(self.target, platform_key=DEV_PLATFORM_KEY,
                                   timeout=CALL_TIMEOUT)) as platform:
            table = self._read(lambda: platform.get_table(table_id))
            if table is None:
                return
            if not table.HasField("current_hand_id"):
                if not table.match_over:
                    self._send(lambda: platform.start_hand(table_id, request_id=request_id))
                return
            hand_id = table.current_hand_id
            view = self._read(lambda: platform.hand_view(table_id, hand_id))
        if view is None or not view.HasField("turn_seat"):
            return
        token = tokens[view.turn_seat]
        with closing(RefereeClient(self.target, token=token, timeout=CALL_TIMEOUT)) as seat:
            legal = self._read(lambda: seat.legal_plays(table_id, hand_id))
            if legal is None:
                return
            cards: tuple[str, ...] | None = None
            answer: tuple[pb.PlayResponse | pb.PassResponse, float] | None
            if legal.may_pass and (not legal.plays or rng.random() < PASS_PROBABILITY):
                answer = self._send(lambda: seat.pass_turn(table_id, hand_id,
                                                           request_id=request_id))
            else:
                cards = tuple(rng.choice(list(legal.plays)).cards)
                chosen = cards
                answer = self._send(lambda: seat.play(table_id, hand_id, chosen,
                                                      request_id=request_id))
        if answer is not None:
            response, sent = answer
            with self.lock:
                self.acknowledged.append(Acknowledged(
                    table_id, hand_id, token, cards, request_id, response.version, sent,
                    time.monotonic()))

    def _read(self, call: Callable[[], T]) -> T | None:
        """A read: None when the store cannot answer now (the bot then starts over, after
        the delay the refusal names)."""
        try:
            return call()
        except grpc.RpcError as error:
            time.sleep(self._refused(error).retry_after_seconds or RETRY_PAUSE_SECONDS)
            return None

    def _send(self, call: Callable[[], T]) -> tuple[T, float] | None:
        """A command: sent again with the same request id until it is answered; returns the
        answer and when the answered attempt was sent."""
        lost = False
        while not self.stop.is_set():
            sent = time.monotonic()
            try:
                response = call()
            except grpc.RpcError as error:
                details = self._refused(error)
                if details.code not in IN_DOUBT_CODES:
                    raise
                lost = True
                time.sleep(details.retry_after_seconds or RETRY_PAUSE_SECONDS)
                continue
            if lost:
                with self.lock:
                    self.in_doubt += 1
                    self.in_doubt_applied += int(getattr(response, "replayed", False))
            return response, sent
        return None

    def _refused(self, error: grpc.RpcError) -> ErrorDetails:
        details = error_details(error)
        with self.lock:
            self.refusals[(details.code.name, details.reason)] += 1
        if details.code not in IN_DOUBT_CODES:
            raise error
        return details

    def count(self) -> int:
        """Commands acknowledged so far."""
        with self.lock:
            return len(self.acknowledged)

    def first_after(self, moment: float) -> float:
        """When the first command sent after `moment` was acknowledged."""
        with self.lock:
            return min(ack.at for ack in self.acknowledged if ack.sent > moment)


@dataclass
class Watcher:
    """A client following one table with WatchTable, resuming from the position of the last
    event it received whenever the stream ends, as docs/integrating.md tells clients to."""

    target: str
    table_id: str
    positions: list[int] = field(default_factory=list)
    resumes: int = 0
    stop: threading.Event = field(default_factory=threading.Event)
    stream: grpc.Call | None = None
    errors: list[BaseException] = field(default_factory=list)

    def run(self) -> None:
        """Follow the table until stopped."""
        try:
            with closing(RefereeClient(self.target, platform_key=DEV_PLATFORM_KEY)) as client:
                while not self.stop.is_set():
                    after = self.positions[-1] if self.positions else 0
                    stream = client.watch(self.table_id, after_position=after)
                    self.stream = cast(grpc.Call, stream)
                    try:
                        for message in stream:
                            self.positions.append(message.event.position)
                    except grpc.RpcError as error:
                        if self.stop.is_set():
                            return
                        if error_details(error).code not in IN_DOUBT_CODES:
                            raise
                    self.resumes += 1
                    time.sleep(RETRY_PAUSE_SECONDS)
        except BaseException as error:
            self.errors.append(error)
            raise

    def end(self) -> None:
        """Stop following (cancels the open stream)."""
        self.stop.set()
        if self.stream is not None:
            self.stream.cancel()


def _table_positions(target: str, table_id: str) -> list[int]:
    """Every stored event position of a table, read by a fresh stream from the start."""
    positions: list[int] = []
    with closing(RefereeClient(target, audit_key=DEV_AUDIT_KEY)) as audit:
        stream = audit.watch(table_id, timeout=THROUGHPUT_WINDOW_SECONDS)
        try:
            positions.extend(message.event.position for message in stream)
        except grpc.RpcError as error:
            assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED, error
    return positions


def _wait_for_more(bots: Bots, count: int) -> None:
    wanted = bots.count() + count
    deadline = time.monotonic() + WAIT_SECONDS
    while bots.count() < wanted:
        assert not bots.errors, bots.errors
        assert time.monotonic() < deadline, (
            f"only {bots.count()} of {wanted} commands answered; refusals {bots.refusals}")
        time.sleep(0.05)


def _throughput(bots: Bots) -> float:
    """Commands acknowledged per second over a short window."""
    before = bots.count()
    time.sleep(THROUGHPUT_WINDOW_SECONDS)
    return (bots.count() - before) / THROUGHPUT_WINDOW_SECONDS


@pytest.fixture
def cluster() -> Iterator[AutoFailoverCluster]:
    """A monitor and two nodes with synchronous replication; a clear failure, never a skip,
    when pg_auto_failover is missing."""
    try:
        formation = AutoFailoverCluster()
    except ClusterError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        started = time.monotonic()
        formation.start_monitor()
        formation.add_node("node-a")
        formation.add_node("node-b")
        formation.wait_state("node-a", {"primary"})
        print(f"\nformation ready in {time.monotonic() - started:.1f} s")
        yield formation
    finally:
        formation.stop()


def _serve(tmp_path: Path, uri: str) -> ServeProcess:
    return start_serve(["--port", "0", "--metrics-port", "0", "--database-url", uri,
                        "--rate-limits", "off"], {}, tmp_path / "referee.log")


def _open_tables(target: str) -> list[tuple[str, list[str]]]:
    with closing(RefereeClient(target, platform_key=DEV_PLATFORM_KEY)) as platform:
        tables = []
        for number in range(TABLES):
            table_id = platform.create_table("classic", PLAYERS,
                                             options={"hands": HANDS}).table.table_id
            tokens = [platform.join_table(table_id, f"failover-{number}-{seat}",
                                          seat).seat_token for seat in range(PLAYERS)]
            tables.append((table_id, tokens))
        return tables


def test_the_referee_follows_its_database_through_failovers_and_loses_nothing(
    cluster: AutoFailoverCluster, tmp_path: Path,
) -> None:
    started = time.monotonic()
    uri = cluster.uri()
    assert "target_session_attrs=read-write" in uri  # pg_autoctl's own form, not ours
    cluster.grant_referee_role()
    assert cluster.synchronous_standby_names()  # the standby is in the write quorum
    serving = _serve(tmp_path, uri)
    try:
        bots = Bots(serving.target, _open_tables(serving.target))
        watcher = Watcher(serving.target, bots.tables[0][0])
        threads = [threading.Thread(target=bots.run, args=(n,)) for n in range(BOTS)]
        following = threading.Thread(target=watcher.run)
        following.start()
        for thread in threads:
            thread.start()
        timings: list[tuple[float, float]] = []
        try:
            _wait_for_more(bots, COMMANDS_BETWEEN_STEPS)
            synchronous, asynchronous = _measure_replication_cost(cluster, bots)
            timings.append(_fail_over(cluster, bots, "node-a", "node-b"))
            # node-a is lost for good: a new standby takes its address while the bots play.
            cluster.add_node("node-c", port=cluster.destroy("node-a"))
            cluster.wait_state("node-c", {"secondary"})
            cluster.wait_state("node-b", {"primary"})
            _wait_for_more(bots, COMMANDS_BETWEEN_STEPS)
            timings.append(_fail_over(cluster, bots, "node-b", "node-c"))
            bots.stop.set()
            for thread in threads:
                thread.join(WAIT_SECONDS)
            expected = _table_positions(serving.target, watcher.table_id)
            _until(lambda: watcher.positions[-1:] == expected[-1:], "the watcher to catch up")
        finally:
            bots.stop.set()
            watcher.end()
            following.join(WAIT_SECONDS)
            for thread in threads:
                thread.join(WAIT_SECONDS)
        assert not bots.errors, bots.errors
        assert not watcher.errors, watcher.errors
        # The stream, resumed from its position, saw every event of the table once, in order.
        assert watcher.positions == expected
        assert serving.process.poll() is None  # the same process served throughout
        assert set(bots.refusals) <= {("UNAVAILABLE", "STORE_UNAVAILABLE"),
                                      ("DEADLINE_EXCEEDED", None)}, bots.refusals
        assert scrape(serving.metrics_port).total("fiftyk_event_store_failovers_total") >= 1
        _check_store(serving.target, bots)
        _report(timings, bots, synchronous, asynchronous)
        print(f"watch stream resumed {watcher.resumes} time(s)")
        print(f"failover test body: {time.monotonic() - started:.1f} s")
    finally:
        serving.stop()


def _measure_replication_cost(cluster: AutoFailoverCluster, bots: Bots) -> tuple[float, float]:
    """The bots' throughput with the standby synchronous, then asynchronous (then back)."""
    synchronous = _throughput(bots)
    cluster.set_synchronous("node-b", False)
    _until(lambda: cluster.synchronous_standby_names() == "", "asynchronous replication")
    asynchronous = _throughput(bots)
    cluster.set_synchronous("node-b", True)
    _until(lambda: cluster.synchronous_standby_names() != "", "synchronous replication")
    return synchronous, asynchronous


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def _fail_over(cluster: AutoFailoverCluster, bots: Bots, primary: str,
               standby: str) -> tuple[float, float]:
    """Kill the primary; wait for the standby's promotion and for the bots to play on.
    Returns (kill to first acknowledged command, promotion to first acknowledged command)."""
    cluster.wait_state(standby, {"secondary"})
    cluster.kill(primary)
    # From here no process of the old primary runs: a command sent while `kill` was still
    # finding and signalling them may have been stored there (and, synchronously, on the
    # standby), which is no measure of the failover.
    killed = time.monotonic()
    promoted = cluster.wait_writable(standby)
    _wait_for_more(bots, COMMANDS_BETWEEN_STEPS)
    assert cluster.primary().name == standby
    first = bots.first_after(killed)
    return first - killed, first - promoted


def _check_store(target: str, bots: Bots) -> None:
    """Every acknowledged command stored once; gapless versions; finished hands re-rule."""
    with closing(RefereeClient(target, audit_key=DEV_AUDIT_KEY)) as audit:
        hands = {ack.hand_id for ack in bots.acknowledged}
        stored = {hand_id: [event.aggregate_version for event in audit.all_hand_events(hand_id)]
                  for hand_id in hands}
        for hand_id, versions in stored.items():
            assert versions == list(range(1, len(versions) + 1)), f"{hand_id}: version gaps"
        answered = Counter((ack.hand_id, ack.version) for ack in bots.acknowledged)
        assert max(answered.values()) == 1, "two commands answered with one version"
        for ack in bots.acknowledged:
            again: pb.PlayResponse | pb.PassResponse
            with closing(RefereeClient(target, token=ack.token)) as seat:
                if ack.cards is None:
                    again = seat.pass_turn(ack.table_id, ack.hand_id, request_id=ack.request_id)
                else:
                    again = seat.play(ack.table_id, ack.hand_id, ack.cards,
                                      request_id=ack.request_id)
            assert again.replayed and again.version == ack.version, ack
        after = {hand_id: len(audit.all_hand_events(hand_id)) for hand_id in hands}
        assert after == {hand_id: len(versions) for hand_id, versions in stored.items()}
        for table_id, _ in bots.tables:
            for row in audit.scores(table_id).hands:
                ruling = audit.adjudicate(audit.export_transcript(row.hand_id))
                assert ruling["status"] == "completed" and ruling["rejected"] is None


def _report(timings: list[tuple[float, float]], bots: Bots, synchronous: float,
            asynchronous: float) -> None:
    to_ack = [kill for kill, _ in timings]
    after_promotion = [promotion for _, promotion in timings]
    print(f"\nfailover: kill -> first acknowledged command {to_ack} s"
          f" (median {statistics.median(to_ack):.2f}); promotion -> first acknowledged"
          f" {after_promotion} s; {len(bots.acknowledged)} acknowledged, 0 lost;"
          f" {bots.in_doubt} in doubt, resolved by resending ({bots.in_doubt_applied} had"
          f" been stored); refusals {dict(bots.refusals)}; throughput synchronous"
          f" {synchronous:.1f}/s, asynchronous {asynchronous:.1f}/s")


def test_a_node_whose_keeper_service_dies_is_restarted_and_keeps_its_state() -> None:
    """The formation's keepers survive their own service restarts. pg_autoctl's supervisor
    restarts a service that dies; a node started by `create --run` restarts through the init
    path, which in pg_auto_failover 2.0 fails five times and stops the node (what failed CI
    once, and what this test saw on the old harness)."""
    try:
        formation = AutoFailoverCluster()
    except ClusterError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        formation.start_monitor()
        node = formation.add_node("node-a")
        _until(lambda: bool(_services(node.process.pid)), "the node-active service")
        services = _services(node.process.pid)
        for service in services:
            service.kill()
        _until(lambda: bool(_services(node.process.pid) - services) or
               node.process.poll() is not None, "a new node-active service")
        assert node.process.poll() is None, formation.log_tail()
        formation.wait_state("node-a", {"single"})
    finally:
        formation.stop()


def _services(root: int) -> set[psutil.Process]:
    """The running node-active services under a node's `pg_autoctl`."""
    with contextlib.suppress(psutil.NoSuchProcess):
        return {child for child in psutil.Process(root).children(recursive=True)
                if "node-active" in child.cmdline() or "node active" in " ".join(child.cmdline())}
    return set()
