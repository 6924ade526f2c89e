"""Bytes that are not the method's message are refused INVALID_ARGUMENT, quietly and counted."""

from __future__ import annotations

import logging
import time

import grpc
import pytest

from fiftyk_referee.service.grpc.auth import PLATFORM_KEY_HEADER
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.e2e.harness import LiveServer

SERVICE = "/fiftyk.referee.v1.RefereeService/"
# A field tag with wire type 7 does not exist; a length running past the end is truncated.
COUNT_WAIT_SECONDS = 5
GARBAGE = [b"\xff", b"\x0f", b"\x0a\x7f", b"\x12\xff\xff\xff\xff\x0f"]


@pytest.mark.parametrize("method", ["CreateTable", "Play", "GetTable", "ReadEvents",
                                    "Adjudicate"])
def test_undecodable_unary_requests_are_invalid_arguments(
        server: LiveServer, method: str, caplog: pytest.LogCaptureFixture) -> None:
    channel = grpc.insecure_channel(server.target)
    call = channel.unary_unary(SERVICE + method)  # raw bytes in, raw bytes out
    with caplog.at_level(logging.INFO):
        for data in GARBAGE:
            with pytest.raises(grpc.RpcError) as refused:
                call(data, metadata=((PLATFORM_KEY_HEADER, DEV_PLATFORM_KEY),), timeout=10)
            code, reason, message = error_reason(refused.value)
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
            assert "not a valid message" in message
    channel.close()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_an_undecodable_watch_request_is_an_invalid_argument(server: LiveServer) -> None:
    channel = grpc.insecure_channel(server.target)
    stream = channel.unary_stream(SERVICE + "WatchTable")
    with pytest.raises(grpc.RpcError) as refused:
        list(stream(b"\xff", metadata=((PLATFORM_KEY_HEADER, DEV_PLATFORM_KEY),), timeout=10))
    assert error_reason(refused.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT,
                                               "INVALID_REQUEST")
    channel.close()


def test_undecodable_requests_are_counted_as_invalid_arguments(server: LiveServer) -> None:
    def invalid_count() -> float:
        families = server.running.metrics.registry.collect()
        return sum(sample.value for family in families if family.name == "grpc_server_handled"
                   for sample in family.samples
                   if sample.labels.get("grpc_method") == "GetTable"
                   and sample.labels.get("grpc_code") == "InvalidArgument"
                   and sample.name.endswith("_total"))

    before = invalid_count()
    channel = grpc.insecure_channel(server.target)
    with pytest.raises(grpc.RpcError) as refused:
        channel.unary_unary(SERVICE + "GetTable")(
            b"\xff", metadata=((PLATFORM_KEY_HEADER, DEV_PLATFORM_KEY),), timeout=10)
    channel.close()
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # The server counts a call when it finishes, just after the client has its answer.
    deadline = time.monotonic() + COUNT_WAIT_SECONDS
    while invalid_count() < before + 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert invalid_count() == before + 1
