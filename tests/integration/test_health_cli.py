"""`fiftyk health` against a real gRPC server running the standard health service."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from concurrent import futures

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from fiftyk_referee.service.cli.health import EXIT_NOT_SERVING, EXIT_SERVING, EXIT_UNREACHABLE
from fiftyk_referee.service.cli.main import main
from fiftyk_referee.service.cli.server_address import SERVER_ENVIRONMENT

# The server extra's health package; `fiftyk health` must not need it (client install).
HEALTH_PACKAGE_MODULES = ("grpc_health", "grpc_health.v1", "grpc_health.v1.health_pb2",
                          "grpc_health.v1.health_pb2_grpc")


@pytest.fixture
def health_server() -> Iterator[tuple[str, health.HealthServicer]]:
    """A gRPC server with only the health service; yields its address and servicer."""
    servicer = health.HealthServicer()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}", servicer
    server.stop(None)


def test_health_exits_zero_when_the_server_is_serving(
    health_server: tuple[str, health.HealthServicer], capsys: pytest.CaptureFixture[str]
) -> None:
    address, servicer = health_server
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    assert main(["health", "--server", address]) == EXIT_SERVING
    assert "SERVING" in capsys.readouterr().out


def test_health_exits_one_when_the_server_is_draining(
    health_server: tuple[str, health.HealthServicer], capsys: pytest.CaptureFixture[str]
) -> None:
    address, servicer = health_server
    servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    assert main(["health", "--server", address]) == EXIT_NOT_SERVING
    assert "NOT_SERVING" in capsys.readouterr().out


def test_health_checks_a_named_service(
    health_server: tuple[str, health.HealthServicer],
) -> None:
    address, servicer = health_server
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    servicer.set("fiftyk.referee.v1.RefereeService", health_pb2.HealthCheckResponse.NOT_SERVING)
    assert main(["health", "--server", address, "--service",
                 "fiftyk.referee.v1.RefereeService"]) == EXIT_NOT_SERVING


def _free_port() -> int:
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_health_exits_two_when_nothing_answers_and_says_why(
        capsys: pytest.CaptureFixture[str]) -> None:
    address = f"127.0.0.1:{_free_port()}"
    assert main(["health", "--server", address, "--timeout", "5"]) == EXIT_UNREACHABLE
    assert capsys.readouterr().err == (
        f"fiftyk health: no server at {address}: connection refused\n")


def test_health_calls_the_server_in_the_environment_without_a_server_option(
    health_server: tuple[str, health.HealthServicer], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    address, servicer = health_server
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    monkeypatch.setenv(SERVER_ENVIRONMENT, address)
    assert main(["health"]) == EXIT_SERVING
    assert capsys.readouterr().out == f"{address}: SERVING\n"


@pytest.mark.parametrize(("status", "expected"), [
    (health_pb2.HealthCheckResponse.SERVING, EXIT_SERVING),
    (health_pb2.HealthCheckResponse.NOT_SERVING, EXIT_NOT_SERVING),
])
def test_health_needs_no_health_checking_package(
    health_server: tuple[str, health.HealthServicer], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, status: int, expected: int,
) -> None:
    address, servicer = health_server
    servicer.set("", status)
    for module in HEALTH_PACKAGE_MODULES:  # a None entry makes its import fail
        monkeypatch.setitem(sys.modules, module, None)
    assert main(["health", "--server", address]) == expected
    name = health_pb2.HealthCheckResponse.ServingStatus.Name(status)
    assert capsys.readouterr().out == f"{address}: {name}\n"
