"""A PostgreSQL outage, seen from outside: calls fail UNAVAILABLE (STORE_UNAVAILABLE) within
the configured store timeout, readiness goes NOT_SERVING while liveness stays SERVING, the
store gauge drops to 0 — and everything comes back by itself when the database does. A
database that is down at start gives one line naming it (never its password)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.server import EXIT_LEFT_BEHIND, LIVENESS_SERVICE, SERVICE_NAME
from tests.e2e.harness import LiveServer, server_config
from tests.e2e.live import start_serve
from tests.support.pgserver import TEST_DATABASE, ThrowawayPostgres, _free_port

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
STORE_TIMEOUT_SECONDS = 2
PROBE_SECONDS = 0.2
# The bound a caller sees: the store timeout, plus the retry pause and scheduling slack.
CALL_BOUND_SECONDS = STORE_TIMEOUT_SECONDS + 1.5
HEALTH_WAIT_SECONDS = 15.0
LOAD_WORKERS = 3
LOAD_WAIT_SECONDS = 30.0
# Long enough for psycopg's doubling reconnect pause to reach 32 s (issue 16: 14 s from
# SERVING to the first command that worked).
LONG_OUTAGE_SECONDS = 45.0
OUTAGE_CALL_PAUSE_SECONDS = 2.0
# Generous: a shutdown takes its grace period and, when the database hangs, a few bounded
# steps; one that waits for the database for ever never ends.
SHUTDOWN_WAIT_SECONDS = 180.0


def _health(target: str, service: str) -> int:
    with grpc.insecure_channel(target) as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=5)
        return int(answer.status)


def _wait_for_health(target: str, service: str, wanted: int) -> float:
    started = time.monotonic()
    while _health(target, service) != wanted:
        if time.monotonic() - started > HEALTH_WAIT_SECONDS:
            raise AssertionError(f"health of {service!r} did not become {wanted}")
        time.sleep(0.05)
    return time.monotonic() - started


def _store_up(live: LiveServer) -> str:
    for line in live.running.metrics.render().decode().splitlines():
        if line.startswith("fiftyk_event_store_up "):
            return line.split()[1]
    raise AssertionError("no fiftyk_event_store_up in the metrics")


@pytest.mark.postgres
def test_an_outage_fails_calls_unavailable_in_bounded_time_and_health_recovers_by_itself(
    own_postgres: ThrowawayPostgres, tmp_path: Path,
) -> None:
    live = LiveServer(server_config(
        tmp_path, database_url=own_postgres.url(TEST_DATABASE),
        db_timeout_seconds=STORE_TIMEOUT_SECONDS, db_probe_seconds=PROBE_SECONDS))
    try:
        platform = live.platform()
        table_id = platform.create_table("classic", 4).table.table_id
        assert _health(live.target, "") == SERVING
        assert _store_up(live) == "1.0"

        own_postgres.pause()
        for call in (lambda: platform.get_table(table_id),
                     lambda: platform.create_table("classic", 4)):
            started = time.monotonic()
            with pytest.raises(grpc.RpcError) as failed:
                call()
            elapsed = time.monotonic() - started
            details = error_details(failed.value)
            assert details.code == grpc.StatusCode.UNAVAILABLE, details
            assert details.reason == "STORE_UNAVAILABLE"
            assert "Error" not in details.message  # no internal class names
            assert elapsed < CALL_BOUND_SECONDS, elapsed
        _wait_for_health(live.target, "", NOT_SERVING)
        assert _health(live.target, SERVICE_NAME) == NOT_SERVING
        assert _health(live.target, LIVENESS_SERVICE) == SERVING
        assert _store_up(live) == "0.0"
        # Known down: a call fails at once instead of waiting out the timeout.
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as failed:
            platform.get_table(table_id)
        assert error_details(failed.value).reason == "STORE_UNAVAILABLE"
        assert time.monotonic() - started < 1.0

        own_postgres.resume()
        _wait_for_health(live.target, "", SERVING)
        assert _health(live.target, SERVICE_NAME) == SERVING
        assert _store_up(live) == "1.0"
        assert platform.get_table(table_id).table_id == table_id
        assert platform.create_table("classic", 4).table.table_id
    finally:
        live.stop()


@pytest.mark.postgres
def test_after_a_long_outage_the_first_command_once_ready_succeeds(
    own_postgres: ThrowawayPostgres, tmp_path: Path,
) -> None:
    """Readiness is the commands' own pool: however long the outage grew the pool's
    reconnect pauses, the first command after SERVING is stored, not refused."""
    live = LiveServer(server_config(
        tmp_path, database_url=own_postgres.url(TEST_DATABASE),
        db_timeout_seconds=STORE_TIMEOUT_SECONDS))  # the default probe interval
    try:
        platform = live.platform()
        table_id = platform.create_table("classic", 4).table.table_id
        own_postgres.pause()
        _wait_for_health(live.target, "", NOT_SERVING)
        outage_ends = time.monotonic() + LONG_OUTAGE_SECONDS
        while time.monotonic() < outage_ends:  # callers keep trying, as clients do
            with pytest.raises(grpc.RpcError) as failed:
                platform.get_table(table_id)
            assert error_details(failed.value).reason == "STORE_UNAVAILABLE"
            time.sleep(OUTAGE_CALL_PAUSE_SECONDS)
        own_postgres.resume()
        _wait_for_health(live.target, "", SERVING)
        created = platform.create_table("classic", 4, request_id="first-after-outage")
        assert not created.replayed
        assert platform.get_table(table_id).table_id == table_id
    finally:
        live.stop()


def test_postgres_down_at_start_is_one_line_naming_the_database_without_its_password(
    tmp_path: Path,
) -> None:
    port = _free_port()  # nothing listens there
    password = "s3cret-never-printed"
    env = {**os.environ, "FIFTYK_DATABASE_URL":
           f"postgresql://referee:{password}@127.0.0.1:{port}/fiftyk_nowhere",
           "FIFTYK_DB_STARTUP_WAIT_SECONDS": "2", "FIFTYK_DB_TIMEOUT_SECONDS": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "fiftyk_referee.service.cli", "serve", "--port", "0",
         "--metrics-port", "0", "--data-dir", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "fiftyk_nowhere" in lines[0] and f"127.0.0.1:{port}" in lines[0]
    assert "after 2 s" in lines[0]  # it gave up after the startup wait it was given
    assert password not in result.stderr + result.stdout


@pytest.mark.postgres
def test_an_outage_under_load_fails_only_unavailable_and_loses_no_acknowledged_command(
    own_postgres: ThrowawayPostgres, tmp_path: Path,
) -> None:
    live = LiveServer(server_config(
        tmp_path, database_url=own_postgres.url(TEST_DATABASE), rate_limits="off",
        db_timeout_seconds=STORE_TIMEOUT_SECONDS, db_probe_seconds=PROBE_SECONDS))
    acknowledged: dict[str, str] = {}
    failures: Counter[tuple[str, str | None]] = Counter()
    lock = threading.Lock()
    stop = threading.Event()

    def load(worker: int) -> None:
        platform = live.platform()
        number = 0
        while not stop.is_set():
            request_id = f"load-{worker}-{number}"
            try:
                table = platform.create_table("classic", 4, request_id=request_id).table
            except grpc.RpcError as error:  # retried with the same request id
                details = error_details(error)
                with lock:
                    failures[(details.code.name, details.reason)] += 1
                time.sleep(0.05)
                continue
            with lock:
                acknowledged[request_id] = table.table_id
            number += 1

    def until(condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + LOAD_WAIT_SECONDS
        while True:
            with lock:
                if condition():
                    return
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: {len(acknowledged)} acknowledged, {failures}")
            time.sleep(0.05)

    workers = [threading.Thread(target=load, args=(n,)) for n in range(LOAD_WORKERS)]
    try:
        for worker in workers:
            worker.start()
        until(lambda: len({rid.split("-")[1] for rid in acknowledged}) == LOAD_WORKERS,
              "every worker is acknowledged before the outage")
        own_postgres.pause()
        _wait_for_health(live.target, "", NOT_SERVING)
        # The outage lasts until the load has met it: a call that waits longer than the
        # store timeout fails this wait.
        until(lambda: sum(failures.values()) >= LOAD_WORKERS, "calls fail during the outage")
        own_postgres.resume()
        _wait_for_health(live.target, "", SERVING)
        during = len(acknowledged)
        until(lambda: len(acknowledged) > during + LOAD_WORKERS, "calls succeed again")
    finally:
        stop.set()
        for worker in workers:
            worker.join(30)
    try:
        assert failures and set(failures) == {("UNAVAILABLE", "STORE_UNAVAILABLE")}, failures
        audit = live.audit()
        for table_id in acknowledged.values():
            assert audit.get_table(table_id).table_id == table_id
        # Each worker's ids are consecutive: a failed command was retried until acknowledged,
        # and a retry of one that had been applied answered with the stored table.
        assert len(set(acknowledged.values())) == len(acknowledged)
    finally:
        live.stop()


@pytest.mark.postgres
def test_a_referee_whose_database_hangs_still_shuts_down_and_exits_on_sigterm(
        own_postgres: ThrowawayPostgres, tmp_path: Path) -> None:
    serving = start_serve(["--port", "0", "--metrics-port", "0", "--rate-limits", "off",
                           "--database-url", own_postgres.url(TEST_DATABASE),
                           "--db-timeout-seconds", str(STORE_TIMEOUT_SECONDS)],
                          {}, tmp_path / "serve.log")
    try:
        _wait_for_health(serving.target, "", SERVING)
        # Every process of the database stops: connections stay open, nothing answers. The
        # threads that were asking it (the feed hub's poll, the lobby, the webhooks) wait.
        own_postgres.freeze()
        _wait_for_health(serving.target, "", NOT_SERVING)
        serving.process.terminate()
        try:
            code = serving.process.wait(SHUTDOWN_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            raise AssertionError("fiftyk serve did not exit after SIGTERM") from None
    finally:
        own_postgres.thaw()
        serving.stop()
    records = [json.loads(line) for line in serving.log_lines() if line.startswith("{")]
    overran = [r for r in records if "did not finish" in r["message"]]
    assert overran, "no shutdown step waited for the database"
    # Each is named, with its bound, and the shutdown went on to the end.
    assert all(r["step"] and r["bound_seconds"] > 0 for r in overran)
    exiting = [r for r in records if r["message"].startswith("exiting without waiting for")]
    assert exiting and exiting[-1]["left_behind"] == [r["step"] for r in overran]
    assert code == EXIT_LEFT_BEHIND
