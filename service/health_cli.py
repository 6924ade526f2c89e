"""`fiftyk health`: ask a server's standard gRPC health service whether it is SERVING."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NamedTuple

import grpc
from grpc_health.v1 import health_pb2

DEFAULT_TIMEOUT_SECONDS = 3.0
EXIT_SERVING, EXIT_NOT_SERVING, EXIT_UNREACHABLE = 0, 1, 2
CHECK_METHOD = "/grpc.health.v1.Health/Check"


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `health`."""
    parser = sub.add_parser(
        "health", help="check a server through grpc.health.v1 (exit 0 when SERVING)",
        description="Call grpc.health.v1.Health/Check. Exit 0 when the service is SERVING,"
        " 1 when it answers anything else, 2 when it cannot be reached in time.",
    )
    parser.add_argument("--server", required=True, metavar="HOST:PORT", help="server address")
    parser.add_argument(
        "--service", default="", help="service name to check (default: the whole server)"
    )
    parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT_SECONDS, metavar="SECONDS",
        help=f"give up after this long (default {DEFAULT_TIMEOUT_SECONDS:g})",
    )
    parser.add_argument("--tls-ca", metavar="PEM",
                        help="connect over TLS, trusting this CA (default: plaintext)")
    parser.add_argument("--tls-cert", metavar="PEM",
                        help="client certificate, for a server that requires one")
    parser.add_argument("--tls-key", metavar="PEM", help="the client certificate's key")
    parser.add_argument("--tls-server-name", metavar="NAME",
                        help="the name the server's certificate must carry, when the address"
                             " is not it (e.g. dialing 127.0.0.1 inside the container)")
    parser.set_defaults(handler=run)


def _channel(server: str, tls: TlsClient | None) -> grpc.Channel:
    if tls is None:
        return grpc.insecure_channel(server)
    credentials = grpc.ssl_channel_credentials(
        tls.ca.read_bytes(), tls.key.read_bytes() if tls.key else None,
        tls.cert.read_bytes() if tls.cert else None)
    options = ([("grpc.ssl_target_name_override", tls.server_name)] if tls.server_name
               else [])
    return grpc.secure_channel(server, credentials, options=options)


class TlsClient(NamedTuple):
    """How `fiftyk health` speaks TLS: the CA to trust and an optional client certificate."""

    ca: Path
    cert: Path | None = None
    key: Path | None = None
    server_name: str | None = None


def check(server: str, service: str = "", timeout: float = DEFAULT_TIMEOUT_SECONDS,
          tls: TlsClient | None = None) -> int:
    """Return the exit code for the health of `service` on `server`."""
    with _channel(server, tls) as channel:
        health_check = channel.unary_unary(
            CHECK_METHOD,
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        try:
            response = health_check(health_pb2.HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as error:
            code = getattr(error, "code", None)  # the raised error is also a grpc.Call
            reason = code().name if callable(code) else type(error).__name__
            print(f"{server}: health check failed: {reason}", file=sys.stderr)
            return EXIT_UNREACHABLE
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
    print(f"{server}: {status}")
    return EXIT_SERVING if response.status == health_pb2.HealthCheckResponse.SERVING else (
        EXIT_NOT_SERVING
    )


def run(args: argparse.Namespace) -> int:
    """Run `fiftyk health`."""
    tls = None
    if args.tls_ca:
        tls = TlsClient(Path(args.tls_ca), Path(args.tls_cert) if args.tls_cert else None,
                        Path(args.tls_key) if args.tls_key else None, args.tls_server_name)
    try:
        return check(args.server, args.service, args.timeout, tls)
    except OSError as error:  # an unreadable certificate file
        print(f"fiftyk health: {error}", file=sys.stderr)
        return EXIT_UNREACHABLE
