"""Hostile webhook endpoints cost the referee one bounded attempt each, and reach nothing.

An endpoint that redirects (the redirect is not followed: the attempt fails), one that
answers with a body that never ends (it is not read to its end), one that trickles its
headers or never answers (the attempt ends at the timeout, whatever reads do), and a host
name that resolves to a loopback or private address after it was registered (DNS
rebinding: nothing is sent, the event becomes a dead letter that says why). The sender is
driven directly against real sockets, and once through the real referee. Name resolution is
replaced for the rebinding cases (the resolver is the attacker's: in this process and in the
referee's delivery process, tests/support/rebinding_dns.py), nothing else is.
"""

from __future__ import annotations

import os
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from fiftyk_referee.service.webhooks.transport import ADDRESS_REFUSED, MAX_ANSWER_BYTES, Sender
from tests.e2e.harness import LiveServer, server_config
from tests.e2e.live import dead_letters
from tests.support.certs import TestCA
from tests.support.hostile_endpoint import HostileEndpoint
from tests.support.rebinding_dns import REBOUND, resolver, resolver_path
from tests.support.webhook_receiver import WebhookReceiver

TIMEOUT = 1.0  # the referee's timeout per attempt in these tests
LONG_TIMEOUT = 60.0  # longer than the test could wait: what ends the attempt is not it
WAIT_SECONDS = 60.0  # a deadline for a wait, not a speed assertion
BODY = b'{"id": "x"}'
HEADERS = {"Content-Type": "application/json"}
REPO_ROOT = Path(__file__).resolve().parents[2]
ATTEMPTS = "backoff=0.02,max_backoff=0.05,attempts=2,poll=0.2,timeout=1,lease=5"


@pytest.fixture
def rebinding_dns(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Names under .rebind.test resolve to the addresses an attacker's DNS would answer, here
    and in the processes started from here (the referee's delivery process)."""
    monkeypatch.setattr(socket, "getaddrinfo", resolver(socket.getaddrinfo))
    path = resolver_path(tmp_path / "resolver")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(path), str(REPO_ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))


@pytest.fixture
def hostile() -> Iterator[Callable[..., HostileEndpoint]]:
    started: list[HostileEndpoint] = []

    def start(behaviour: str, **options: Any) -> HostileEndpoint:
        endpoint = HostileEndpoint(behaviour, **options)
        started.append(endpoint)
        return endpoint

    yield start
    for endpoint in started:
        endpoint.close()


def _post(url: str, timeout: float = TIMEOUT, *, private: bool = False) -> str:
    """What went wrong with one attempt, in detail (as the server log says it)."""
    sender = Sender(url, timeout, private=private)
    try:
        return sender.post(BODY, HEADERS).detail
    finally:
        sender.close()


class TlsEndpoint:
    """An HTTPS endpoint on 127.0.0.1 whose certificate names only `hosts` (no address)."""

    def __init__(self, tmp_path: Path, ca: TestCA, hosts: tuple[str, ...]) -> None:
        cert, key = ca.issue(hosts[0], hosts=hosts).write(tmp_path / f"{hosts[0]}.pem",
                                                          tmp_path / f"{hosts[0]}.key")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self.hosts_seen: list[str] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                endpoint.hosts_seen.append(self.headers.get("Host", ""))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = int(self.server.server_address[1])
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


def test_tls_names_and_verifies_the_urls_host_not_the_address_connected_to(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ca = TestCA()
    (tmp_path / "ca.pem").write_bytes(ca.pem)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    named = TlsEndpoint(tmp_path, ca, ("localhost",))
    other = TlsEndpoint(tmp_path, ca, ("hooks.example.com",))
    try:
        # The sender connects to the address it checked, 127.0.0.1, which the certificate
        # does not name: it is verified as "localhost", the URL's host.
        assert _post(f"https://localhost:{named.port}/hooks") == ""
        assert named.hosts_seen == [f"localhost:{named.port}"]
        outcome = _post(f"https://localhost:{other.port}/hooks")
        assert outcome.startswith("ConnectError") and "certificate" in outcome, outcome
        assert other.hosts_seen == []
    finally:
        named.close()
        other.close()


def test_a_redirect_fails_the_attempt_and_is_not_followed(
        hostile: Callable[..., HostileEndpoint]) -> None:
    with WebhookReceiver() as target:
        redirecting = hostile("redirect", location=target.url)
        assert _post(redirecting.url) == "HTTP 307"
        assert target.deliveries == []


def test_an_endless_answer_is_not_read_to_its_end(
        hostile: Callable[..., HostileEndpoint]) -> None:
    endless = hostile("endless")
    assert _post(endless.url, LONG_TIMEOUT) == ""  # a 2xx status took the event
    assert endless.hung_up.wait(WAIT_SECONDS), "the sender read on"
    assert endless.written > MAX_ANSWER_BYTES


@pytest.mark.parametrize("behaviour", ["trickle", "silent"])
def test_an_answer_that_never_completes_ends_at_the_timeout(
        hostile: Callable[..., HostileEndpoint], behaviour: str) -> None:
    slow = hostile(behaviour)
    outcome = _post(slow.url)
    # Trickled header bytes each arrive within any read timeout: only a bound on the whole
    # attempt ends it. A silent one may meet the read timeout first.
    expected = ("no answer within 1 s",) + (("ReadTimeout",) if behaviour == "silent" else ())
    assert outcome.startswith(expected), outcome
    assert slow.hung_up.wait(WAIT_SECONDS), "the connection was left open"


@pytest.mark.usefixtures("rebinding_dns")
@pytest.mark.parametrize("host", sorted(REBOUND))
def test_a_name_that_resolves_to_a_non_public_address_gets_nothing(
        hostile: Callable[..., HostileEndpoint], host: str) -> None:
    listening = hostile("silent")  # where a rebound name on loopback would land
    outcome = _post(f"https://{host}:{listening.port}/hooks", private=True)
    if host == "private.rebind.test":
        # An operator may let endpoints be on private networks (`private=1`), and then the
        # sender tries that address; nothing listens there.
        assert "resolves only to" not in outcome
    else:
        assert outcome == (f"ConnectError: {host} resolves only to addresses deliveries may"
                           f" not go to ({REBOUND[host]})")
    assert f"{host} resolves only" in _post(f"https://{host}:{listening.port}/hooks")
    assert listening.connections == 0


@pytest.mark.usefixtures("rebinding_dns")
def test_the_referee_dead_letters_what_a_redirect_or_a_rebound_name_would_have_taken(
        tmp_path: Path, hostile: Callable[..., HostileEndpoint]) -> None:
    server = LiveServer(server_config(tmp_path, webhooks=ATTEMPTS))
    with WebhookReceiver() as target:
        redirecting = hostile("redirect", location=target.url)
        try:
            platform = server.platform()
            rebound = f"https://loopback.rebind.test:{target.server.server_address[1]}/"
            # The dead letters say it generically (the server log has the address).
            endpoints = {
                "HTTP 3xx": platform.register_webhook(redirecting.url, ["table.opened"]),
                ADDRESS_REFUSED: platform.register_webhook(rebound, ["table.opened"]),
            }
            platform.create_table("classic", 4)
            for error, registered in endpoints.items():
                letters = dead_letters(platform, registered.webhook.webhook_id, WAIT_SECONDS)
                assert [(letter.attempts, letter.name) for letter in letters] == [
                    (2, "table.opened")]
                assert letters[0].last_error == error
        finally:
            server.stop()
        assert target.deliveries == []
