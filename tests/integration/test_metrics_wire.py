"""Metrics over the wire: the scrape endpoint and the gRPC metrics interceptor on a real server."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import grpc.aio
import pytest

from fiftyk_referee.service.grpc.interceptors import MetricsInterceptor
from fiftyk_referee.service.ops.metrics import Metrics

SERVICE = "test.Echo"
STREAMED = 3
CANCEL_AFTER = 2
POLL_SECONDS = 5.0


def value(metrics: Metrics, name: str, **labels: str) -> float:
    """The current value of one sample, 0 when it was never observed."""
    sample = metrics.registry.get_sample_value(name, labels)
    return 0.0 if sample is None else sample


def rpc_labels(method: str, grpc_type: str = "unary") -> dict[str, str]:
    return {"grpc_type": grpc_type, "grpc_service": SERVICE, "grpc_method": method}


def test_each_metrics_object_serves_its_own_scrape_endpoint_on_a_free_port() -> None:
    first, second = Metrics(), Metrics()
    first.count_active_tables_with(lambda: 3)
    second.count_active_tables_with(lambda: 4)
    ports = [first.start_http_server(0, "127.0.0.1"), second.start_http_server(0, "127.0.0.1")]
    try:
        assert ports[0] != ports[1] and all(port > 0 for port in ports)
        bodies = [
            urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read()
            for port in ports
        ]
    finally:
        first.stop_http_server()
        second.stop_http_server()
    assert b"fiftyk_active_tables 3.0" in bodies[0]
    assert b"fiftyk_active_tables 4.0" in bodies[1]


# The gRPC interceptor, on a real grpc.aio server.


def _identity(data: bytes) -> bytes:
    return data


async def _echo(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
    return request


async def _refuse(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
    await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")


async def _crash(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> bytes:
    raise RuntimeError("handler bug")


async def _count(
    request: bytes, context: grpc.aio.ServicerContext[Any, Any]
) -> AsyncIterator[bytes]:
    for i in range(STREAMED):
        yield bytes([i])


async def _forever(
    request: bytes, context: grpc.aio.ServicerContext[Any, Any]
) -> AsyncIterator[bytes]:
    i = 0
    while True:
        yield bytes([i % 256])
        i += 1
        await asyncio.sleep(0.01)


async def _write_count(request: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> None:
    for i in range(STREAMED):
        await context.write(bytes([i]))


async def _echo_each(
    requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[Any, Any]
) -> AsyncIterator[bytes]:
    async for request in requests:
        yield request


async def _with_server(
    metrics: Metrics, client: Callable[[grpc.aio.Channel], Awaitable[None]]
) -> None:
    unary = {name: grpc.unary_unary_rpc_method_handler(behaviour, _identity, _identity)
             for name, behaviour in (("Echo", _echo), ("Refuse", _refuse), ("Crash", _crash))}
    streams = {name: grpc.unary_stream_rpc_method_handler(behaviour, _identity, _identity)
               for name, behaviour in (("Count", _count), ("Forever", _forever),
                                       ("WriteCount", _write_count))}
    streams["EchoEach"] = grpc.stream_stream_rpc_method_handler(_echo_each, _identity, _identity)
    server = grpc.aio.server(interceptors=[MetricsInterceptor(metrics)])
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler(SERVICE, {**unary, **streams})]
    )
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            await client(channel)
    finally:
        await server.stop(None)


def run_against_server(client: Callable[[grpc.aio.Channel], Awaitable[None]]) -> Metrics:
    metrics = Metrics()
    asyncio.run(_with_server(metrics, client))
    return metrics


def test_successful_unary_call_is_started_handled_ok_timed_and_counts_one_message_each_way(
) -> None:
    async def client(channel: grpc.aio.Channel) -> None:
        for _ in range(2):
            assert await channel.unary_unary(f"/{SERVICE}/Echo")(b"hi") == b"hi"

    metrics = run_against_server(client)
    labels = rpc_labels("Echo")
    assert value(metrics, "grpc_server_started_total", **labels) == 2
    assert value(metrics, "grpc_server_handled_total", **labels, grpc_code="OK") == 2
    assert value(metrics, "grpc_server_msg_received_total", **labels) == 2
    assert value(metrics, "grpc_server_msg_sent_total", **labels) == 2
    assert value(metrics, "grpc_server_handling_seconds_count", **labels) == 2
    assert value(metrics, "grpc_server_handling_seconds_bucket", **labels, le="+Inf") == 2


def test_aborted_call_is_handled_with_its_status_code_and_sends_no_message() -> None:
    async def client(channel: grpc.aio.Channel) -> None:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await channel.unary_unary(f"/{SERVICE}/Refuse")(b"x")
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    metrics = run_against_server(client)
    labels = rpc_labels("Refuse")
    assert value(metrics, "grpc_server_handled_total", **labels,
                 grpc_code="FailedPrecondition") == 1
    assert value(metrics, "grpc_server_handled_total", **labels, grpc_code="OK") == 0
    assert value(metrics, "grpc_server_msg_received_total", **labels) == 1
    assert value(metrics, "grpc_server_msg_sent_total", **labels) == 0


def test_handler_that_raises_is_handled_as_unknown() -> None:
    async def client(channel: grpc.aio.Channel) -> None:
        with pytest.raises(grpc.aio.AioRpcError) as crashed:
            await channel.unary_unary(f"/{SERVICE}/Crash")(b"x")
        assert crashed.value.code() == grpc.StatusCode.UNKNOWN

    metrics = run_against_server(client)
    assert value(metrics, "grpc_server_handled_total", **rpc_labels("Crash"),
                 grpc_code="Unknown") == 1


def test_server_stream_counts_every_message_sent() -> None:
    async def client(channel: grpc.aio.Channel) -> None:
        received = [message async for message in channel.unary_stream(f"/{SERVICE}/Count")(b"")]
        assert len(received) == STREAMED

    metrics = run_against_server(client)
    labels = rpc_labels("Count", "server_stream")
    assert value(metrics, "grpc_server_started_total", **labels) == 1
    assert value(metrics, "grpc_server_msg_received_total", **labels) == 1
    assert value(metrics, "grpc_server_msg_sent_total", **labels) == STREAMED
    assert value(metrics, "grpc_server_handled_total", **labels, grpc_code="OK") == 1


def test_stream_cancelled_by_the_client_is_handled_as_canceled() -> None:
    labels = rpc_labels("Forever", "server_stream")
    metrics = Metrics()

    async def client(channel: grpc.aio.Channel) -> None:
        call = channel.unary_stream(f"/{SERVICE}/Forever")(b"")
        received = 0
        async for _ in call:
            received += 1
            if received == CANCEL_AFTER:
                break
        call.cancel()
        deadline = time.monotonic() + POLL_SECONDS
        while time.monotonic() < deadline and not value(
            metrics, "grpc_server_handled_total", **labels, grpc_code="Canceled"
        ):
            await asyncio.sleep(0.01)

    asyncio.run(_with_server(metrics, client))
    assert value(metrics, "grpc_server_handled_total", **labels, grpc_code="Canceled") == 1
    assert value(metrics, "grpc_server_handled_total", **labels, grpc_code="OK") == 0
    assert value(metrics, "grpc_server_msg_sent_total", **labels) >= CANCEL_AFTER


def test_unknown_methods_create_no_labels() -> None:
    async def client(channel: grpc.aio.Channel) -> None:
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await channel.unary_unary(f"/{SERVICE}/NoSuchMethod-12345")(b"")
        assert missing.value.code() == grpc.StatusCode.UNIMPLEMENTED

    metrics = run_against_server(client)
    assert b"NoSuchMethod" not in metrics.render()


def test_bidirectional_stream_counts_messages_both_ways() -> None:
    async def client(channel: grpc.aio.Channel) -> None:
        async def requests() -> AsyncIterator[bytes]:
            for i in range(STREAMED):
                yield bytes([i])

        call = channel.stream_stream(f"/{SERVICE}/EchoEach")(requests())
        assert [message async for message in call] == [bytes([i]) for i in range(STREAMED)]

    metrics = run_against_server(client)
    labels = rpc_labels("EchoEach", "bidi_stream")
    assert value(metrics, "grpc_server_msg_received_total", **labels) == STREAMED
    assert value(metrics, "grpc_server_msg_sent_total", **labels) == STREAMED
    assert value(metrics, "grpc_server_handled_total", **labels, grpc_code="OK") == 1


def test_stream_written_with_context_write_still_works_and_is_handled() -> None:
    async def client(channel: grpc.aio.Channel) -> None:
        call = channel.unary_stream(f"/{SERVICE}/WriteCount")(b"")
        assert len([message async for message in call]) == STREAMED

    metrics = run_against_server(client)
    labels = rpc_labels("WriteCount", "server_stream")
    assert value(metrics, "grpc_server_started_total", **labels) == 1
    assert value(metrics, "grpc_server_handled_total", **labels, grpc_code="OK") == 1
