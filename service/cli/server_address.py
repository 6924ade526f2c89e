"""Which referee the client commands call, and how a failed call reads on the command line.

Every command that calls a referee takes `--server HOST:PORT`; without it, the address in
`FIFTYK_SERVER`, else the quickstart's `127.0.0.1:50051` (what `./scripts/serve` listens on).
"""

from __future__ import annotations

import argparse
import os
import re

import grpc

from fiftyk_referee.service.grpc.errors import error_reason

DEFAULT_SERVER = "127.0.0.1:50051"
SERVER_ENVIRONMENT = "FIFTYK_SERVER"
# What the transport says when nothing listens at the address (grpc core's wording varies
# by version and platform; these are the causes people can act on).
_TRANSPORT_CAUSES = (
    (re.compile(r"connection refused", re.IGNORECASE), "connection refused"),
    (re.compile(r"dns resolution failed|name or service not known|"
                r"could not resolve|domain name not found", re.IGNORECASE),
     "the host name does not resolve"),
    (re.compile(r"no route to host", re.IGNORECASE), "no route to host"),
    (re.compile(r"network is unreachable", re.IGNORECASE), "the network is unreachable"),
    (re.compile(r"ssl|tls|handshake|certificate", re.IGNORECASE),
     "the TLS handshake failed (is it a TLS server, and --tls-ca its issuer?)"),
)


def default_server() -> str:
    """`FIFTYK_SERVER` when set, else the quickstart's address."""
    return os.environ.get(SERVER_ENVIRONMENT, "").strip() or DEFAULT_SERVER


def add_server_argument(parser: argparse.ArgumentParser) -> None:
    """`--server HOST:PORT`, defaulting to `FIFTYK_SERVER` or the quickstart's address."""
    parser.add_argument(
        "--server", default=default_server(), metavar="HOST:PORT",
        help=f"the referee's gRPC address (default: ${SERVER_ENVIRONMENT} when set, else"
             f" {DEFAULT_SERVER}, where ./scripts/serve listens)",
    )


def transport_cause(details: str) -> str:
    """The transport's reason a call never reached a server, in a few words."""
    for pattern, cause in _TRANSPORT_CAUSES:
        if pattern.search(details):
            return cause
    return details or "no answer"


def describe_rpc_error(server: str, error: grpc.RpcError) -> str:
    """One line for a failed call: the referee's status and reason, or why nothing answered.

    UNAVAILABLE without a reason code never reached a referee: it names the address and the
    transport's cause ("no server at 127.0.0.1:50051: connection refused").
    """
    code, reason, message = error_reason(error)
    if code == grpc.StatusCode.UNAVAILABLE and not reason:
        return f"no server at {server}: {transport_cause(message)}"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED and not reason:
        return f"no answer from {server} in time ({message or 'deadline exceeded'})"
    return " ".join(part for part in (code.name, reason, message) if part)


__all__ = ["DEFAULT_SERVER", "SERVER_ENVIRONMENT", "add_server_argument", "default_server",
           "describe_rpc_error", "transport_cause"]
