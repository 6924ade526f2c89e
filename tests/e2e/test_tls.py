"""TLS on every port, with a throwaway CA made in the test: gRPC and metrics refuse
plaintext, a renewed certificate is served without a restart, client certificates are
required when a client CA is set and a listed name holds the platform role."""

from __future__ import annotations

import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_details
from tests.e2e.harness import LiveServer, server_config
from tests.support.certs import Issued, TestCA

HOSTS = ("localhost", "127.0.0.1")
RELOAD_WAIT_SECONDS = 10.0


def _channel(live: LiveServer, ca: bytes, client: Issued | None = None) -> grpc.Channel:
    credentials = grpc.ssl_channel_credentials(
        ca, client.key if client else None, client.cert if client else None)
    return grpc.secure_channel(f"localhost:{live.running.port}", credentials)


def _healthy(channel: grpc.Channel) -> bool:
    answer = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                        timeout=5)
    return bool(answer.status == health_pb2.HealthCheckResponse.SERVING)


def _fetch_metrics(port: int, ca: bytes, client: Issued | None = None,
                   tmp_path: Path | None = None) -> bytes:
    context = ssl.create_default_context(cadata=ca.decode())
    if client is not None and tmp_path is not None:
        cert, key = client.write(tmp_path / "metrics-client.pem", tmp_path / "metrics-client.key")
        context.load_cert_chain(cert, key)
    with urllib.request.urlopen(f"https://localhost:{port}/metrics", context=context,
                                timeout=5) as response:
        body: bytes = response.read()
        return body


@pytest.fixture
def ca() -> TestCA:
    return TestCA()


def test_grpc_and_metrics_speak_only_tls_and_follow_a_renewed_certificate(
    ca: TestCA, tmp_path: Path,
) -> None:
    cert, key = ca.issue("referee", hosts=HOSTS).write(tmp_path / "tls.pem",
                                                       tmp_path / "tls.key")
    live = LiveServer(server_config(tmp_path, tls_cert_file=cert, tls_key_file=key),
                      metrics_port=0)
    try:
        with _channel(live, ca.pem) as channel:
            assert _healthy(channel)
        with grpc.insecure_channel(f"127.0.0.1:{live.running.port}") as plain:
            with pytest.raises(grpc.RpcError) as refused:
                _healthy(plain)
            assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        metrics_port = live.running.metrics_port
        assert metrics_port is not None
        assert b"grpc_server_started_total" in _fetch_metrics(metrics_port, ca.pem)
        with pytest.raises((urllib.error.URLError, ConnectionError)):
            urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5)

        # A renewal by another CA: new connections get it, without a restart.
        renewed_ca = TestCA("renewed CA")
        renewed_ca.issue("referee", hosts=HOSTS).write(cert, key)
        deadline = time.monotonic() + RELOAD_WAIT_SECONDS
        while True:
            try:
                with _channel(live, renewed_ca.pem) as channel:
                    assert _healthy(channel)
                assert b"grpc_server" in _fetch_metrics(metrics_port, renewed_ca.pem)
                break
            except (grpc.RpcError, urllib.error.URLError, ssl.SSLError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        with _channel(live, ca.pem) as old, pytest.raises(grpc.RpcError):
            _healthy(old)
    finally:
        live.stop()


def test_client_certificates_are_required_and_a_listed_name_holds_the_platform_role(
    ca: TestCA, tmp_path: Path,
) -> None:
    cert, key = ca.issue("referee", hosts=HOSTS).write(tmp_path / "tls.pem",
                                                       tmp_path / "tls.key")
    client_ca = tmp_path / "clients.pem"
    client_ca.write_bytes(ca.pem)
    live = LiveServer(server_config(tmp_path, tls_cert_file=cert, tls_key_file=key,
                                    tls_client_ca_file=client_ca,
                                    tls_platform_names=("platform-1",)), metrics_port=0)
    try:
        with _channel(live, ca.pem) as anonymous, pytest.raises(grpc.RpcError):
            _healthy(anonymous)  # no client certificate: no handshake
        stranger = TestCA("stranger").issue("platform-1")
        with _channel(live, ca.pem, stranger) as forged, pytest.raises(grpc.RpcError):
            _healthy(forged)  # the right name from the wrong CA

        platform = RefereeClient(_channel(live, ca.pem, ca.issue("platform-1")))
        try:
            table = platform.create_table("classic", 4).table  # no platform key sent
            assert table.table_id
        finally:
            platform.channel.close()

        # A subject alternative name counts like the common name (service.ops.tls).
        by_san = RefereeClient(_channel(live, ca.pem, ca.issue("lobby-7",
                                                               hosts=("platform-1",))))
        try:
            assert by_san.create_table("classic", 4).table.table_id
        finally:
            by_san.channel.close()

        other = RefereeClient(_channel(live, ca.pem, ca.issue("someone-else")))
        try:
            with pytest.raises(grpc.RpcError) as refused:
                other.create_table("classic", 4)
            assert error_details(refused.value).code == grpc.StatusCode.UNAUTHENTICATED
        finally:
            other.channel.close()

        metrics_port = live.running.metrics_port
        assert metrics_port is not None
        with pytest.raises((urllib.error.URLError, ssl.SSLError, ConnectionError)):
            _fetch_metrics(metrics_port, ca.pem)
        assert b"grpc_server" in _fetch_metrics(metrics_port, ca.pem, ca.issue("prometheus"),
                                                tmp_path)
    finally:
        live.stop()


def test_unusable_certificate_files_stop_the_start_with_one_line(
    ca: TestCA, tmp_path: Path,
) -> None:
    cert, key = ca.issue("referee", hosts=HOSTS).write(tmp_path / "tls.pem",
                                                       tmp_path / "tls.key")
    key.write_bytes(TestCA("other").issue("referee").key)  # a key that is not the cert's
    result = subprocess.run(
        [sys.executable, "-m", "fiftyk_referee.service.cli", "serve", "--port", "0",
         "--metrics-port", "0", "--data-dir", str(tmp_path), "--tls-cert-file", str(cert),
         "--tls-key-file", str(key)],
        capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "not a certificate chain and its private key" in lines[0]


def test_fiftyk_health_checks_a_tls_server_with_a_client_certificate(
    ca: TestCA, tmp_path: Path,
) -> None:
    cert, key = ca.issue("referee", hosts=("referee.internal",)).write(
        tmp_path / "tls.pem", tmp_path / "tls.key")
    (tmp_path / "ca.pem").write_bytes(ca.pem)
    probe_cert, probe_key = ca.issue("probe").write(tmp_path / "probe.pem",
                                                    tmp_path / "probe.key")
    live = LiveServer(server_config(tmp_path, tls_cert_file=cert, tls_key_file=key,
                                    tls_client_ca_file=tmp_path / "ca.pem"))
    try:
        base = [sys.executable, "-m", "fiftyk_referee.service.cli", "health", "--server",
                f"127.0.0.1:{live.running.port}", "--tls-ca", str(tmp_path / "ca.pem"),
                "--tls-server-name", "referee.internal"]
        ok = subprocess.run([*base, "--tls-cert", str(probe_cert), "--tls-key", str(probe_key)],
                            capture_output=True, text=True, timeout=60, check=False)
        assert ok.returncode == 0, ok.stderr
        no_cert = subprocess.run(base, capture_output=True, text=True, timeout=60, check=False)
        assert no_cert.returncode == 2
        # What the Kubernetes probes do: present the server's own certificate.
        own = subprocess.run([*base, "--tls-cert", str(cert), "--tls-key", str(key)],
                             capture_output=True, text=True, timeout=60, check=False)
        assert own.returncode == 0, own.stderr
    finally:
        live.stop()


def test_fiftyk_demo_plays_against_a_tls_server(ca: TestCA, tmp_path: Path) -> None:
    cert, key = ca.issue("referee", hosts=HOSTS).write(tmp_path / "tls.pem",
                                                       tmp_path / "tls.key")
    (tmp_path / "ca.pem").write_bytes(ca.pem)
    live = LiveServer(server_config(tmp_path, tls_cert_file=cert, tls_key_file=key))
    try:
        base = [sys.executable, "-m", "fiftyk_referee.service.cli", "demo", "--server",
                f"localhost:{live.running.port}", "--seed", "3"]
        played = subprocess.run([*base, "--tls-ca", str(tmp_path / "ca.pem")],
                                capture_output=True, text=True, timeout=120, check=False)
        assert played.returncode == 0, played.stderr
        assert "1/1 hands completed" in played.stdout
        plaintext = subprocess.run(base, capture_output=True, text=True, timeout=120,
                                   check=False)
        assert plaintext.returncode == 1 and "UNAVAILABLE" in plaintext.stderr
    finally:
        live.stop()
