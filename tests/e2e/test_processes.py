"""`fiftyk serve --processes N`: several server processes share one port and one database.

Many clients (each with its own connection) play a hand through the shared port; the kernel
spreads their connections over the processes, so both must have answered calls. The hand's
result must equal adjudicating its exported transcript, and SIGTERM to the supervisor must
shut every process down cleanly.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from fiftyk_referee.domain.fiftyk.transcript import adjudicate
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config_keys import (
    AUDIT_KEY,
    DATABASE_URL,
    LOG_LEVEL,
    PLATFORM_KEY,
    TOKEN_SECRET,
)
from tests.e2e.live import FIFTYK, REPO, START_TIMEOUT_SECONDS, Tally, open_table, play_hand, scrape
from tests.support.pgserver import ThrowawayPostgres, create_database, drop_database

PROCESSES = 2
CLIENTS = 24  # connections: the chance that all land on one process is 2 ** -23
SEED = 77


@pytest.mark.postgres
def test_several_processes_share_the_port_and_play_one_hand_together(
    postgres_server: ThrowawayPostgres, tmp_path: Path,
) -> None:
    name = f"fiftyk_processes_{secrets.token_hex(6)}"
    admin = postgres_server.url("postgres")
    create_database(admin, name)
    keys = {TOKEN_SECRET: secrets.token_hex(24), AUDIT_KEY: secrets.token_hex(24),
            PLATFORM_KEY: secrets.token_hex(24), LOG_LEVEL: "WARNING",
            DATABASE_URL: postgres_server.url(name)}
    with (tmp_path / "serve.log").open("w") as log:
        supervisor = subprocess.Popen(
            [FIFTYK, "serve", "--processes", str(PROCESSES), "--port", "0",
             "--metrics-port", "0", "--workers", "3"],
            cwd=REPO, env={**os.environ, **keys}, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert supervisor.stdout is not None
        first = supervisor.stdout.readline()
        assert first.startswith("fiftyk serving "), (tmp_path / "serve.log").read_text()
        fields = dict(part.split("=", 1) for part in first.split()[2:])
        assert fields["processes"] == str(PROCESSES)
        metrics_ports = [int(port) for port in fields["metrics"].split(",")]
        children = psutil.Process(supervisor.pid).children()
        assert len(children) == PROCESSES

        clients = [RefereeClient(fields["grpc"]) for _ in range(CLIENTS)]
        platforms = [client.as_platform(keys[PLATFORM_KEY]) for client in clients]
        tally = Tally()
        table = open_table(platforms, tally)
        hand = platforms[0].start_hand(table.table_id).hand
        last = play_hand(table, hand, tally, seed=SEED, route=lambda n: n % CLIENTS)
        assert last.status == pb.HAND_STATUS_COMPLETED

        answered = [scrape(port).total("grpc_server_handled_total") for port in metrics_ports]
        assert all(count > 0 for count in answered), answered
        audit = clients[0].as_audit(keys[AUDIT_KEY])
        ruling = adjudicate(audit.export_transcript(hand.hand_id))
        assert ruling["status"] == "completed"
        stored = audit.hand_view(table.table_id, hand.hand_id).result
        assert [s.score for s in stored.seats] == [str(s["score"]) for s in ruling["seats"]]
        for client in clients:
            client.close()

        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(START_TIMEOUT_SECONDS) == 0
        assert not any(child.is_running() and child.status() != psutil.STATUS_ZOMBIE
                       for child in children)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
        if supervisor.stdout is not None:
            supervisor.stdout.close()
        drop_database(admin, name)


@pytest.mark.parametrize("count", ["0", "65"])
def test_a_process_count_out_of_range_is_refused(count: str) -> None:
    done = subprocess.run([FIFTYK, "serve", "--processes", count, "--port", "0"], cwd=REPO,
                          capture_output=True, text=True, timeout=START_TIMEOUT_SECONDS)
    assert done.returncode == 2
    assert "FIFTYK_PROCESSES" in done.stderr


def test_the_supervisor_fails_clearly_when_its_processes_cannot_start(tmp_path: Path) -> None:
    with socket.socket() as taken:  # bound without SO_REUSEPORT: nobody can share this port
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [FIFTYK, "serve", "--processes", "2", "--port", str(port), "--metrics-port", "0",
             "--data-dir", str(tmp_path)],
            cwd=REPO, capture_output=True, text=True, timeout=START_TIMEOUT_SECONDS)
    assert done.returncode == 1
    assert "did not start" in done.stderr
    assert not done.stdout.startswith("fiftyk serving")


def test_a_stop_while_the_processes_start_leaves_none_running(tmp_path: Path) -> None:
    """SIGTERM reaches a process that is still starting; no further process is started, the
    supervisor exits, and nothing is left running (before: the starting process was missed
    and the supervisor went on to start, then wait for, processes nobody stopped)."""
    supervisor = subprocess.Popen(
        [FIFTYK, "serve", "--processes", "2", "--port", "0", "--metrics-port", "0",
         "--data-dir", str(tmp_path)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    seen: set[psutil.Process] = set()
    try:
        parent = psutil.Process(supervisor.pid)
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while not seen and time.monotonic() < deadline:  # the first process is starting
            seen.update(parent.children(recursive=True))
            time.sleep(0.01)
        assert seen, "the supervisor started no process"
        supervisor.send_signal(signal.SIGTERM)
        supervisor.wait(timeout=START_TIMEOUT_SECONDS)
        assert supervisor.stdout is not None
        assert not supervisor.stdout.read().startswith("fiftyk serving")
        _gone, alive = psutil.wait_procs(list(seen), timeout=START_TIMEOUT_SECONDS)
        assert not alive, f"left running: {alive}"
    finally:
        for process in [*seen, *(psutil.Process(supervisor.pid).children(recursive=True)
                                 if supervisor.poll() is None else [])]:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
