"""The request-context interceptor on a real grpc.aio server: request ids in the logs."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import grpc
import grpc.aio
import pytest

from fiftyk_referee.service.grpc.interceptors import RequestContextInterceptor
from fiftyk_referee.service.ops.logs import configure_logging

SERVICE = "test.Logged"


@pytest.fixture
def output() -> Iterator[io.StringIO]:
    """Capture JSON logs in a buffer; restore the root logger afterwards."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    stream = io.StringIO()
    yield stream
    root.handlers[:] = handlers
    root.setLevel(level)


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


# The request-context interceptor on a real grpc.aio server.


def _identity(data: bytes) -> bytes:
    return data


async def _handle(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
    logging.getLogger("fiftyk.test").info("handling")
    return request


async def _call_with(metadata_sets: list[tuple[tuple[str, str], ...]]) -> None:
    server = grpc.aio.server(interceptors=[RequestContextInterceptor()])
    handler = grpc.unary_unary_rpc_method_handler(_handle, _identity, _identity)
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler(SERVICE, {"Handle": handler})]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            for metadata in metadata_sets:
                await channel.unary_unary(f"/{SERVICE}/Handle")(b"", metadata=metadata)
    finally:
        await server.stop(None)


def test_request_id_from_metadata_is_bound_to_the_handlers_logs_and_the_call_line(
    output: io.StringIO,
) -> None:
    configure_logging("DEBUG", output)
    asyncio.run(_call_with([(("x-request-id", "req-42"),)]))
    handling, finished = [e for e in lines(output) if e["logger"].startswith("fiftyk.")]
    assert handling["message"] == "handling" and handling["request_id"] == "req-42"
    assert (finished["request_id"], finished["grpc_method"], finished["grpc_code"]) == (
        "req-42", f"/{SERVICE}/Handle", "OK",
    )
    assert finished["duration_ms"] >= 0


def test_calls_without_a_usable_request_id_get_a_fresh_one_each(output: io.StringIO) -> None:
    configure_logging("INFO", output)
    unusable = [(("x-request-id", "id with spaces"),), (("x-request-id", "x" * 500),)]
    asyncio.run(_call_with([(), *unusable, ()]))
    ids = [entry["request_id"] for entry in lines(output) if entry["message"] == "handling"]
    assert len(ids) == len(set(ids)) == 4


def test_an_accepted_call_writes_no_line_at_info(output: io.StringIO) -> None:
    configure_logging("INFO", output)
    asyncio.run(_call_with([(("x-request-id", "req-7"),)]))
    assert [entry["message"] for entry in lines(output)] == ["handling"]
