"""Webhook deliveries run in a process of the server's own: the process delivers (the
POSTs come from it, not from the server, at the configured niceness), a process killed with
SIGKILL is started again and no event is lost (at least once: a repeat is the same event,
same id and body), and it ends with the server — a graceful stop, and a server killed with
SIGKILL too. On SQLite and on PostgreSQL, with events of every hosted game."""

from __future__ import annotations

import logging
import os
import random
import signal
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.e2e import test_doudizhu, test_shengji
from tests.e2e.harness import LiveServer, play_out, seat_bots, server_config
from tests.e2e.live import start_serve, wait_until
from tests.e2e.test_webhooks import FAST, assert_every_event_once_in_order, feed_after
from tests.support.webhook_receiver import WebhookReceiver

WAIT_SECONDS = 120.0  # a deadline for a wait, not a speed assertion
BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    live = WebhookReceiver()
    yield live
    live.close()


def _database(request: pytest.FixtureRequest, backend: str, tmp_path: Path) -> str:
    if backend == "postgresql":
        url: str = request.getfixturevalue("fresh_postgres_db")
        return url
    return str(tmp_path / "store.sqlite")


def _gone(pid: int) -> bool:
    """The process has ended (a zombie nobody reaped yet has ended too)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _delivery_pid(server: LiveServer) -> int:
    """The running delivery process's id, once there is one."""
    deliveries = server.running.webhooks
    assert deliveries is not None
    wait_until(lambda: deliveries.pid is not None, "a delivery process", WAIT_SECONDS)
    pid = deliveries.pid
    assert pid is not None
    return pid


def _play_every_game(server: LiveServer, prefix: str) -> None:
    """A 五十K hand played out and a few Shengji and 斗地主 actions: events of every game."""
    fiftyk = seat_bots(server, "classic", 4, prefix=prefix)
    play_out(fiftyk, server.platform().start_hand(fiftyk.table_id).hand, random.Random(1))
    shengji = test_shengji.shengji_table(server)
    hand = server.platform().start_hand(shengji.table_id).hand
    for _ in range(4):
        test_shengji.step(shengji, hand.hand_id, random.Random(2))
    doudizhu = test_doudizhu.doudizhu_table(server, prefix=f"{prefix}-dd")
    view = server.platform().start_hand(doudizhu.table_id).hand
    rng = random.Random(3)
    for _ in range(4):
        view = test_doudizhu.step(doudizhu, view, rng)


@pytest.mark.parametrize("backend", BACKENDS)
def test_deliveries_are_posted_by_a_process_of_their_own(
        request: pytest.FixtureRequest, tmp_path: Path, receiver: WebhookReceiver,
        backend: str) -> None:
    server = LiveServer(server_config(tmp_path, webhooks=f"{FAST},niceness=3",
                                      database_url=_database(request, backend, tmp_path)))
    try:
        platform = server.platform()
        start = platform.register_webhook(receiver.url).webhook.position
        _play_every_game(server, "own")
        expected = feed_after(platform, start)
        deliveries = receiver.wait_for(len(expected), WAIT_SECONDS)
        pid = _delivery_pid(server)
        # The connection the POSTs arrive on is the delivery process's, not the server's.
        port = receiver.server.server_address[1]
        remote_ports = {c.raddr.port for c in psutil.Process(pid).net_connections("tcp")
                        if c.raddr}
        own_ports = {c.raddr.port for c in psutil.Process(os.getpid()).net_connections("tcp")
                     if c.raddr}
        niceness = psutil.Process(pid).nice()
    finally:
        server.stop()
    assert pid != os.getpid()
    assert niceness == min(19, os.nice(0) + 3)  # FIFTYK_WEBHOOKS niceness
    assert port in remote_ports and port not in own_ports
    assert [d.json["position"] for d in deliveries] == [e.position for e in expected]
    assert {d.json["event"]["name"].split(".")[0] for d in deliveries} >= {
        "fiftyk", "shengji", "doudizhu"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_killed_delivery_process_is_restarted_and_loses_no_event(
        request: pytest.FixtureRequest, tmp_path: Path, receiver: WebhookReceiver,
        caplog: pytest.LogCaptureFixture, backend: str) -> None:
    server = LiveServer(server_config(tmp_path, webhooks=FAST,
                                      database_url=_database(request, backend, tmp_path)))
    try:
        platform = server.platform()
        start = platform.register_webhook(receiver.url).webhook.position
        receiver.delay = 0.05  # each delivery takes a while: the kill lands among them
        with caplog.at_level(logging.WARNING, "fiftyk_referee.service.webhooks.process"):
            _play_every_game(server, "before")
            receiver.wait_for(5, WAIT_SECONDS)
            first = _delivery_pid(server)
            os.kill(first, signal.SIGKILL)
            arrived_before_restart = len(receiver.deliveries)
            wait_until(lambda: server.running.webhooks is not None
                       and server.running.webhooks.pid not in (None, first),
                       "the delivery process to be started again", WAIT_SECONDS)
            receiver.delay = 0.0
            _play_every_game(server, "after")
            expected = feed_after(platform, start)
            wait_until(lambda: len({d.json["id"] for d in receiver.accepted()})
                       >= len(expected), "every event to arrive after the restart",
                       WAIT_SECONDS)
            wait_until(lambda: any("exited" in r.getMessage() for r in caplog.records),
                       "the server to log the death", WAIT_SECONDS)
        restarts = server.running.metrics.registry.get_sample_value(
            "fiftyk_webhook_process_restarts_total")
    finally:
        server.stop()
    assert arrived_before_restart < len(expected), "the kill came after every delivery"
    assert restarts == 1
    assert_every_event_once_in_order(receiver.accepted(), expected)


def _delivery_child(serving_pid: int) -> int:
    """The delivery process of a `fiftyk serve`, once it runs."""
    found: list[int] = []

    def started() -> bool:
        found[:] = [child.pid for child in psutil.Process(serving_pid).children()]
        return len(found) == 1

    wait_until(started, "the server's delivery process", WAIT_SECONDS)
    return found[0]


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_the_delivery_process_ends_with_the_server(tmp_path: Path, receiver: WebhookReceiver,
                                                    how: str) -> None:
    """Stopped gracefully, the server stops its delivery process; killed, it cannot, and the
    delivery process sees its pipe close and ends by itself. Nothing is left running."""
    serving = start_serve(["--port", "0", "--metrics-port", "0", "--rate-limits", "off",
                           "--database-url", str(tmp_path / "store.sqlite"),
                           "--webhooks", FAST], {}, tmp_path / "serve.log")
    try:
        platform = RefereeClient(serving.target, platform_key=DEV_PLATFORM_KEY)
        try:
            platform.register_webhook(receiver.url)
            platform.create_table("classic", 4)
            receiver.wait_for(1, WAIT_SECONDS)
        finally:
            platform.close()
        child = _delivery_child(serving.process.pid)
        serving.process.send_signal(getattr(signal, how))
        serving.process.wait(WAIT_SECONDS)
        wait_until(lambda: _gone(child), "the delivery process to end", WAIT_SECONDS)
    finally:
        serving.stop()
    if how == "SIGTERM":
        assert serving.process.returncode == 0
