"""`fiftyk health`: ask a server's standard gRPC health service whether it is SERVING.

A plain gRPC call that runs on the client install: the two messages of grpc.health.v1
(`HealthCheckRequest {string service = 1}`, `HealthCheckResponse {ServingStatus status = 1}`)
are described here and built by protobuf's own message factory, so the command needs neither
grpcio-health-checking nor the server extra.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from fiftyk_referee.service.cli.server_address import add_server_argument, describe_rpc_error
from fiftyk_referee.service.grpc.client import (
    TlsClient,
    add_tls_arguments,
    open_channel,
    tls_from_args,
)

DEFAULT_TIMEOUT_SECONDS = 3.0
EXIT_SERVING, EXIT_NOT_SERVING, EXIT_UNREACHABLE = 0, 1, 2
CHECK_METHOD = "/grpc.health.v1.Health/Check"
# grpc/health/v1/health.proto's values of HealthCheckResponse.ServingStatus.
SERVING_STATUSES = {"UNKNOWN": 0, "SERVING": 1, "NOT_SERVING": 2, "SERVICE_UNKNOWN": 3}


def _health_messages() -> tuple[Any, Any]:
    """The classes of grpc.health.v1's HealthCheckRequest and HealthCheckResponse.

    Built in a pool of their own, so a process that also loads grpcio-health-checking (a
    server install) has no clash over the file's name.
    """
    field = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(
        name="fiftyk_cli/grpc_health_v1.proto", package="grpc.health.v1", syntax="proto3")
    request = proto.message_type.add(name="HealthCheckRequest")
    request.field.add(name="service", number=1, type=field.TYPE_STRING,
                      label=field.LABEL_OPTIONAL)
    response = proto.message_type.add(name="HealthCheckResponse")
    status = response.enum_type.add(name="ServingStatus")
    for name, number in SERVING_STATUSES.items():
        status.value.add(name=name, number=number)
    response.field.add(name="status", number=1, type=field.TYPE_ENUM,
                       type_name=".grpc.health.v1.HealthCheckResponse.ServingStatus",
                       label=field.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName(
                "grpc.health.v1.HealthCheckRequest")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName(
                "grpc.health.v1.HealthCheckResponse")))


HealthCheckRequest, HealthCheckResponse = _health_messages()


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `health`."""
    parser = sub.add_parser(
        "health", help="check a server through grpc.health.v1 (exit 0 when SERVING)",
        description="Call grpc.health.v1.Health/Check. Exit 0 when the service is SERVING,"
        " 1 when it answers anything else, 2 when it cannot be reached in time.",
    )
    add_server_argument(parser)
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
    with open_channel(server, tls, options=()) as channel:
        health_check = channel.unary_unary(
            CHECK_METHOD,
            request_serializer=HealthCheckRequest.SerializeToString,
            response_deserializer=HealthCheckResponse.FromString,
        )
        try:
            response = health_check(HealthCheckRequest(service=service), timeout=timeout)
        except grpc.RpcError as error:
            print(f"fiftyk health: {describe_rpc_error(server, error)}", file=sys.stderr)
            return EXIT_UNREACHABLE
    status = response.DESCRIPTOR.fields_by_name["status"].enum_type.values_by_number.get(
        response.status)
    print(f"{server}: {status.name if status is not None else response.status}")
    return EXIT_SERVING if response.status == SERVING_STATUSES["SERVING"] else EXIT_NOT_SERVING


def run(args: argparse.Namespace) -> int:
    """Run `fiftyk health`."""
    try:
        return check(args.server, args.service, args.timeout, tls_from_args(args))
    except BrokenPipeError:
        raise  # the reader of standard output went away: `cli.main` ends quietly
    except OSError as error:  # an unreadable certificate file
        print(f"fiftyk health: {error}", file=sys.stderr)
        return EXIT_UNREACHABLE
