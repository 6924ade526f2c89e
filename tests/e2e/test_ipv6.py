"""IPv6: the referee serves on `::` and `[::1]` (gRPC and metrics), and refuses an address
it cannot use with one line, not a traceback."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from fiftyk_referee.service.server import SERVICE_NAME
from tests.e2e.harness import LiveServer, server_config

REAL_SECRETS = {
    "token_secret": "token-secret-0123456789abcdef",
    "audit_key": "audit-key-0123456789abcdef",
    "platform_key": "platform-key-0123456789abcdef",
    # An Ed25519 key of this test's own (64 hex digits): not the development default.
    "signing_key": hashlib.sha256(b"test_ipv6 signing key").hexdigest(),
}
START_SECONDS = 30


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback here")


def _serving(target: str) -> bool:
    with grpc.insecure_channel(target) as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=10)
    return bool(answer.status == health_pb2.HealthCheckResponse.SERVING)


@needs_ipv6
def test_a_server_on_ipv6_loopback_plays(tmp_path: Path) -> None:
    live = LiveServer(server_config(tmp_path, host="[::1]"))
    try:
        assert live.target.startswith("[::1]:")
        platform = live.client(platform_key=DEV_PLATFORM_KEY)
        table = platform.create_table("classic", 4).table
        assert platform.get_table(table.table_id).table_id == table.table_id
    finally:
        live.stop()


@needs_ipv6
def test_a_server_on_every_address_answers_on_ipv6_and_ipv4(tmp_path: Path) -> None:
    live = LiveServer(server_config(tmp_path, host="::", trusted_network=True,
                                    **REAL_SECRETS))
    try:
        assert _serving(f"[::1]:{live.running.port}")
        assert _serving(f"127.0.0.1:{live.running.port}")
    finally:
        live.stop()


@needs_ipv6
def test_fiftyk_serve_on_bracketed_ipv6_serves_grpc_and_metrics(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "fiftyk_referee.service.cli", "serve", "--host", "[::1]",
         "--port", "0", "--metrics-port", "0", "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("fiftyk serving grpc=[::1]:"), line
        fields = dict(part.split("=", 1) for part in line.split()[2:])
        assert _serving(fields["grpc"])
        url = f"http://[::1]:{fields['metrics']}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            assert b"grpc_server_started_total" in response.read()
    finally:
        process.terminate()
        process.communicate(timeout=START_SECONDS)


@pytest.mark.parametrize("host", ["999.1.1.1", "bad host", "[::1", "127.0.0.1:80"])
def test_a_malformed_address_is_refused_as_configuration(host: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "fiftyk_referee.service.cli", "serve", "--host", host,
         "--port", "0", "--metrics-port", "0", "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=START_SECONDS, check=False)
    assert result.returncode == 2
    assert "FIFTYK_HOST" in result.stderr and "Traceback" not in result.stderr


def test_an_address_of_another_machine_is_refused_in_one_line(tmp_path: Path) -> None:
    # TEST-NET-1 (RFC 5737) is never assigned to a local interface.
    env = {**os.environ, "FIFTYK_TOKEN_SECRET": REAL_SECRETS["token_secret"],
           "FIFTYK_AUDIT_KEY": REAL_SECRETS["audit_key"],
           "FIFTYK_PLATFORM_KEY": REAL_SECRETS["platform_key"],
           "FIFTYK_SIGNING_KEY": REAL_SECRETS["signing_key"]}
    result = subprocess.run(
        [sys.executable, "-m", "fiftyk_referee.service.cli", "serve", "--host", "192.0.2.1",
         "--trusted-network", "--port", "0", "--metrics-port", "0", "--data-dir",
         str(tmp_path)],
        capture_output=True, text=True, timeout=START_SECONDS, check=False, env=env)
    assert result.returncode == 1
    ours = [line for line in result.stderr.splitlines() if line.startswith("fiftyk serve:")]
    assert ours == ["fiftyk serve: cannot listen on 192.0.2.1:0: the address is not one of"
                    " this machine's, or the port is taken"], result.stderr
    assert "Traceback" not in result.stderr
