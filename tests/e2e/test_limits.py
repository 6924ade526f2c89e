"""Limits through a real channel: a credential's call rate (RESOURCE_EXHAUSTED, RATE_LIMITED,
RetryInfo), open watch streams per credential, table and server (LIMIT_EXCEEDED), the
refusal metrics, and a refusal's log line naming its reason code."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import grpc
import pytest

from fiftyk_referee.service.grpc.errors import error_details
from tests.e2e.harness import LiveServer, seat_bots, server_config


def _metric(live: LiveServer, prefix: str) -> float:
    for line in live.running.metrics.render().decode().splitlines():
        if line.startswith(prefix):
            return float(line.split()[-1])
    raise AssertionError(f"no {prefix} in the metrics")


def test_a_credential_over_its_rate_is_refused_with_retry_info_and_counted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    live = LiveServer(server_config(tmp_path, rate_limits="platform.create=2/3"))
    try:
        platform = live.platform()
        table_ids = [platform.create_table("classic", 4).table.table_id for _ in range(3)]
        caplog.set_level(logging.DEBUG, logger="fiftyk.rpc")  # RATE_LIMITED logs at DEBUG
        with pytest.raises(grpc.RpcError) as refused:
            platform.create_table("classic", 4)
        details = error_details(refused.value)
        assert details.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert details.reason == "RATE_LIMITED"
        assert details.retry_after_seconds is not None
        assert 0 < details.retry_after_seconds <= 0.5
        assert details.metadata == {"rpc_class": "create", "role": "platform"}
        assert _metric(live, 'fiftyk_rate_limited_total{role="platform",rpc_class="create"}') \
            == 1

        def logged() -> bool:
            return any("CreateTable ResourceExhausted RATE_LIMITED" in r.getMessage()
                       and getattr(r, "reason", None) == "RATE_LIMITED"
                       for r in caplog.records)

        deadline = time.monotonic() + 5  # the server logs after the client has its answer
        while not logged():
            assert time.monotonic() < deadline, [r.getMessage() for r in caplog.records]
            time.sleep(0.02)
        # Reads are another class, the audit key another credential: neither is held up.
        assert platform.get_table(table_ids[0]).table_id == table_ids[0]
        assert live.audit().get_table(table_ids[1]).table_id == table_ids[1]
        time.sleep(details.retry_after_seconds)
        assert platform.create_table("classic", 4).table.table_id
    finally:
        live.stop()


def test_open_watch_streams_are_limited_per_credential_table_and_server(
    tmp_path: Path,
) -> None:
    live = LiveServer(server_config(tmp_path, watch_limits="seat=2,table=3,server=4"))
    try:
        seated = seat_bots(live, "classic", 4)
        streams: list[grpc.Call] = []

        def watch(client_index: int, table_id: str) -> None:
            stream = seated.seats[client_index].watch(table_id)
            next(iter(stream))  # the stream is open on the server once a message came
            streams.append(stream)  # type: ignore[arg-type]  # also a grpc.Call

        def refused_scope(client_index: int, table_id: str) -> str:
            with pytest.raises(grpc.RpcError) as refused:
                next(iter(seated.seats[client_index].watch(table_id)))
            details = error_details(refused.value)
            assert details.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert details.reason == "LIMIT_EXCEEDED"
            return details.metadata["scope"]

        watch(0, seated.table_id)
        watch(0, seated.table_id)
        assert refused_scope(0, seated.table_id) == "credential"
        watch(1, seated.table_id)
        assert refused_scope(2, seated.table_id) == "table"
        other = seat_bots(live, "classic", 4, prefix="other")
        fourth = other.seats[0].watch(other.table_id)  # kept: a dropped stream is cancelled
        next(iter(fourth))  # the fourth stream on the server
        with pytest.raises(grpc.RpcError) as refused:
            next(iter(other.seats[1].watch(other.table_id)))
        assert error_details(refused.value).metadata["scope"] == "server"
        assert _metric(live, 'fiftyk_watch_limited_total{scope="credential"}') == 1
        assert _metric(live, 'fiftyk_watch_limited_total{scope="server"}') == 1

        streams[0].cancel()  # closing one frees its place
        deadline = time.monotonic() + 10
        while True:
            try:
                watch(0, seated.table_id)
                break
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
    finally:
        live.stop()
