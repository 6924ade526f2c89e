"""Logs of a real `fiftyk serve` process: JSON lines with table, hand and request ids.

A hand is played to the end through the server with a request id on every command; a seat
also tries to play cards it does not hold. Then every line of the process's stderr must be
one JSON object; every command's line must name its table, its hand and its request id
(accepted calls at DEBUG, refusals at INFO); no line above DEBUG may hold a card; and a
server configured at WARNING must write nothing for the same kind of traffic.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from fiftyk_referee.service.ops.config_keys import LOG_LEVEL
from fiftyk_referee.service.ops.logs import redact_cards
from tests.e2e.live import (
    ServeProcess,
    Tally,
    call,
    open_table,
    play_hand,
    start_serve,
    wait_until,
)

METHOD_PREFIX = "/fiftyk.referee.v1.RefereeService/"
RPC_LOGGER = "fiftyk.rpc"
TRACE_ID = "trace-from-the-gateway-1"
SEED = 77


def serve(tmp: Path, level: str) -> ServeProcess:
    """`fiftyk serve` on free ports with SQLite in `tmp`, its log level from the environment."""
    return start_serve(["--data-dir", str(tmp), "--port", "0", "--metrics-port", "0",
                        "--workers", "2"], {LOG_LEVEL: level}, tmp / "stderr.log")


def rpc_lines(entries: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    """The call lines of one RPC method."""
    return [e for e in entries
            if e["logger"] == RPC_LOGGER and e.get("grpc_method") == METHOD_PREFIX + method]


@dataclass
class Played:
    """A hand played through a server at DEBUG, and everything it logged."""

    table_id: str
    hand_id: str
    command_ids: set[str]
    lines: list[str]
    entries: list[dict[str, Any]]


def _play_a_hand(server: ServeProcess) -> tuple[str, str, set[str]]:
    client = RefereeClient(server.target)
    platform = client.as_platform(DEV_PLATFORM_KEY)
    tally = Tally()
    table = open_table([platform], tally)
    hand = platform.start_hand(table.table_id).hand
    holder = table.seats[0][hand.turn_seat]
    others = {c for seat in range(4) if seat != hand.turn_seat
              for c in table.seats[0][seat].hand_view(table.table_id).own_cards}
    not_held = sorted(others - set(holder.hand_view(table.table_id).own_cards))[:1]
    with pytest.raises(grpc.RpcError):
        holder.play(table.table_id, hand.hand_id, not_held, request_id="not-held-1")
    # An id from a gateway header wins over the command's own request id.
    platform.stub.GetTable(pb.GetTableRequest(table_id=table.table_id),
                           metadata=(*platform.metadata, ("x-request-id", TRACE_ID)))
    play_hand(table, hand, tally, seed=SEED)
    commands = tally.calls["Play"] + tally.calls["Pass"]
    client.close()
    return table.table_id, hand.hand_id, {f"{hand.hand_id}-{n}" for n in range(commands)}


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Played]:
    server = serve(Path(tmp_path_factory.mktemp("logs-debug")), "DEBUG")
    try:
        table_id, hand_id, command_ids = _play_a_hand(server)

        def logged_every_command() -> bool:
            entries = [json.loads(line) for line in server.log_lines()]
            found = {e.get("request_id") for e in rpc_lines(entries, "Play")
                     + rpc_lines(entries, "Pass")}
            return command_ids <= found

        wait_until(logged_every_command, "a log line for every command")
    finally:
        assert server.stop() == 0
    lines = server.log_lines()
    yield Played(table_id, hand_id, command_ids, lines, [json.loads(line) for line in lines])


def test_every_line_is_one_json_object_with_time_level_logger_and_message(
    played: Played,
) -> None:
    assert len(played.entries) > len(played.command_ids)
    for entry in played.entries:
        assert {"ts", "level", "logger", "message"} <= set(entry)


def test_each_command_line_names_its_table_hand_and_request_id(played: Played) -> None:
    lines = rpc_lines(played.entries, "Play") + rpc_lines(played.entries, "Pass")
    accepted = [e for e in lines if e["grpc_code"] == "OK"]
    assert {e["request_id"] for e in accepted} == played.command_ids
    assert all((e["table_id"], e["hand_id"]) == (played.table_id, played.hand_id)
               for e in lines)


def test_ids_the_server_assigns_appear_on_the_line_of_the_call_that_made_them(
    played: Played,
) -> None:
    [created] = rpc_lines(played.entries, "CreateTable")
    assert created["table_id"] == played.table_id
    [dealt] = rpc_lines(played.entries, "StartHand")
    assert (dealt["table_id"], dealt["hand_id"]) == (played.table_id, played.hand_id)


def test_a_request_id_header_wins_and_a_refused_command_keeps_its_own_id(
    played: Played,
) -> None:
    [traced] = rpc_lines(played.entries, "GetTable")
    assert (traced["request_id"], traced["table_id"]) == (TRACE_ID, played.table_id)
    [refused] = [e for e in rpc_lines(played.entries, "Play") if e["grpc_code"] != "OK"]
    assert refused["request_id"] == "not-held-1" and refused["level"] == "INFO"


def test_no_line_above_debug_holds_a_card(played: Played) -> None:
    above_debug = [line for line, entry in zip(played.lines, played.entries, strict=True)
                   if entry["level"] != "DEBUG"]
    assert above_debug
    assert [line for line in above_debug if redact_cards(line) != line] == []


def test_accepted_calls_are_logged_at_debug_and_refusals_at_info(played: Played) -> None:
    lines = rpc_lines(played.entries, "Play") + rpc_lines(played.entries, "Pass")
    assert {e["level"] for e in lines if e["grpc_code"] == "OK"} == {"DEBUG"}
    assert {e["level"] for e in lines if e["grpc_code"] != "OK"} == {"INFO"}


def test_a_server_configured_at_warning_logs_nothing_for_the_same_traffic(
    tmp_path: Path,
) -> None:
    server = serve(tmp_path, "WARNING")
    try:
        client = RefereeClient(server.target)
        platform = client.as_platform(DEV_PLATFORM_KEY)
        tally = Tally()
        table = open_table([platform], tally)
        hand = call(tally, "StartHand", lambda: platform.start_hand(table.table_id)).hand
        with pytest.raises(grpc.RpcError):
            table.seats[0][(hand.turn_seat + 1) % 4].pass_turn(table.table_id, hand.hand_id)
        client.close()
    finally:
        assert server.stop() == 0
    assert tally.ok["JoinTable"] == 4
    assert server.log_lines() == []
