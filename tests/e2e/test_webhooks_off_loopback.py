"""A referee bound off loopback delivers no webhook to its own host unless the operator says
so (`FIFTYK_WEBHOOKS` `loopback=1`), checked when an endpoint is registered and again at
every connection; and a dead letter says what failed only generically (a status class, "no
HTTP answer"), so the platform cannot scan the referee's network through it, while the
server log keeps the detail.

The server is bound to 0.0.0.0 (off loopback, with real secrets) but every connection of
these tests, the deliveries included, goes to 127.0.0.1."""

from __future__ import annotations

import hashlib
import logging
import socket
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.webhooks.transport import ADDRESS_REFUSED, NO_ANSWER, Sender
from tests.e2e.every_game import GAMES
from tests.e2e.harness import LiveServer, server_config
from tests.e2e.live import dead_letters, wait_until
from tests.support.webhook_receiver import WebhookReceiver

REAL_SECRETS = {
    "token_secret": "token-secret-0123456789abcdef",
    "audit_key": "audit-key-0123456789abcdef",
    "platform_key": "platform-key-0123456789abcdef",
    "signing_key": hashlib.sha256(b"test_webhooks_off_loopback").hexdigest(),
}
FAST = "backoff=0.02,max_backoff=0.05,attempts=2,poll=0.1,timeout=2,lease=5"
WAIT_SECONDS = 60.0


def _off_loopback(tmp_path: Path, webhooks: str = FAST) -> LiveServer:
    return LiveServer(server_config(tmp_path, host="0.0.0.0", trusted_network=True,
                                    webhooks=webhooks, **REAL_SECRETS))


def _platform(live: LiveServer) -> Any:
    return live.client(platform_key=REAL_SECRETS["platform_key"])


@pytest.mark.parametrize("url", ["http://127.0.0.1:{port}/hooks", "http://localhost:{port}/",
                                 "http://[::1]:{port}/", "https://127.0.0.1:{port}/"])
def test_off_loopback_a_loopback_endpoint_is_refused_at_registration(
        tmp_path: Path, url: str) -> None:
    with WebhookReceiver() as target:
        live = _off_loopback(tmp_path)
        try:
            with pytest.raises(grpc.RpcError) as refused:
                _platform(live).register_webhook(
                    url.format(port=target.server.server_address[1]), ["table.opened"])
            details = error_details(refused.value)
            assert details.code == grpc.StatusCode.INVALID_ARGUMENT
            assert details.reason == "INVALID_REQUEST"
            assert "loopback=1" in details.message
        finally:
            live.stop()
        assert target.deliveries == []


@pytest.mark.parametrize("game", sorted(GAMES))
def test_off_loopback_the_operator_may_allow_loopback_endpoints(tmp_path: Path, game: str
                                                                ) -> None:
    with WebhookReceiver() as target:
        live = _off_loopback(tmp_path, FAST + ",loopback=1")
        try:
            platform = _platform(live)
            platform.register_webhook(target.url, ["table.opened"])
            table = platform.create_table(GAMES[game].preset, GAMES[game].players,
                                          game=game).table
            deadline = time.monotonic() + WAIT_SECONDS
            while not target.deliveries:
                assert time.monotonic() < deadline, "nothing was delivered"
                time.sleep(0.05)
            assert target.deliveries[0].json["table_id"] == table.table_id
        finally:
            live.stop()


def test_an_endpoint_stored_on_loopback_gets_nothing_once_the_server_is_off_loopback(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Registered while the referee ran on loopback, then served off loopback: the delivery
    is refused at the connection (nothing reaches the receiver), and the dead letter says so
    without the address; the log names it."""
    with WebhookReceiver() as target:
        on_loopback = LiveServer(server_config(tmp_path, webhooks=FAST, **REAL_SECRETS))
        try:
            webhook = _platform(on_loopback).register_webhook(target.url, ["table.opened"])
        finally:
            on_loopback.stop()
        live = _off_loopback(tmp_path)
        try:
            platform = _platform(live)
            with caplog.at_level(logging.WARNING, "fiftyk_referee.service.webhooks.dispatcher"):
                platform.create_table("classic", 4)
                letters = dead_letters(platform, webhook.webhook.webhook_id, WAIT_SECONDS)
                # The delivery process's log reaches the server's a moment later.
                wait_until(lambda: any("127.0.0.1" in record.getMessage()
                                       for record in caplog.records),
                           "the server log to name the refused address", WAIT_SECONDS)
            assert [letter.last_error for letter in letters] == [ADDRESS_REFUSED]
            assert "127.0.0.1" not in letters[0].last_error
        finally:
            live.stop()
        assert target.deliveries == []


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_dead_letter_names_a_status_class_or_no_answer_never_the_transport_error(
        tmp_path: Path) -> None:
    """Where a refused connection and an HTTP error each used to leave their own text
    ("Connection refused", "HTTP 503"), the dead letters tell only "no HTTP answer" or the
    status class."""
    with WebhookReceiver() as failing:
        failing.failing = True  # answers 503
        live = LiveServer(server_config(tmp_path, webhooks=FAST))
        try:
            platform = live.platform()
            refused = platform.register_webhook(f"http://127.0.0.1:{_closed_port()}/",
                                                ["table.opened"])
            status = platform.register_webhook(failing.url, ["table.opened"])
            platform.create_table("classic", 4)
            refusals = dead_letters(platform, refused.webhook.webhook_id, WAIT_SECONDS)
            assert [x.last_error for x in refusals] == [NO_ANSWER]
            failures = dead_letters(platform, status.webhook.webhook_id, WAIT_SECONDS)
            assert [x.last_error for x in failures] == ["HTTP 5xx"]
        finally:
            live.stop()


def test_the_sender_off_loopback_does_not_connect_to_loopback() -> None:
    with WebhookReceiver() as target:
        sender = Sender(target.url, 2.0, loopback=False)
        try:
            attempt = sender.post(b"{}", {"Content-Type": "application/json"})
        finally:
            sender.close()
        assert attempt.error == ADDRESS_REFUSED
        assert "127.0.0.1" in attempt.detail
        assert target.deliveries == []
