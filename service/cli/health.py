"""`fiftyk health`: ask a server's standard gRPC health service whether it is SERVING."""

from __future__ import annotations

import argparse
import sys

import grpc

from fiftyk_referee.service.client import TlsClient, add_tls_arguments, open_channel, tls_from_args

# The server extra's packages are imported when the command runs (see `cli.main`).
NEEDS_SERVER_EXTRA = True

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
    add_tls_arguments(parser)
    parser.set_defaults(handler=run)


def check(server: str, service: str = "", timeout: float = DEFAULT_TIMEOUT_SECONDS,
          tls: TlsClient | None = None) -> int:
    """Return the exit code for the health of `service` on `server`."""
    # Imported here: grpcio-health-checking comes with the server extra, which deployments
    # (and their health checks) install.
    from grpc_health.v1 import health_pb2

    with open_channel(server, tls, options=()) as channel:
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
    try:
        return check(args.server, args.service, args.timeout, tls_from_args(args))
    except OSError as error:  # an unreadable certificate file
        print(f"fiftyk health: {error}", file=sys.stderr)
        return EXIT_UNREACHABLE
