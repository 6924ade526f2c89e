"""Every RPC, fed hostile requests, answers with a documented refusal — never UNKNOWN or INTERNAL.

Requests are built by hypothesis from each method's message descriptor (every field set to
random values: huge and negative numbers, long and odd strings, NUL characters, unknown
cards, random ids, nested rulesets with random options) and sent with each credential —
none, the platform key, the audit key, a real seat token and a forged one — through a real
channel to a real server. Raw random bytes are sent too. Every answer must be OK or a
status carrying exactly one `ErrorInfo`; the server's memory must stay flat.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import grpc
import psutil
import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fiftyk_referee.service.grpc.auth import (
    AUDIT_KEY_HEADER,
    AUTHORIZATION_HEADER,
    PLATFORM_KEY_HEADER,
)
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY, DEV_PLATFORM_KEY
from tests.e2e.harness import LiveServer, Seated, seat_bots, server_config
from tests.e2e.test_shengji import shengji_table
from tests.e2e.test_shengji import step as shengji_step

SERVICE = pb.DESCRIPTOR.services_by_name["RefereeService"]
FORBIDDEN = {grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.DATA_LOSS,
             grpc.StatusCode.UNIMPLEMENTED}
# gRPC's own refusals carry no ErrorInfo: a deadline the client set.
WITHOUT_INFO = {grpc.StatusCode.DEADLINE_EXCEEDED}
CALL_TIMEOUT = 5.0
STREAM_MESSAGES = 3
MAX_DEPTH = 3
# The server runs in this process beside the fuzzer (hypothesis), and on a parallel worker the
# process is fresh: the first use of each RPC's strategies and code paths costs memory that a
# serial run had paid earlier (66 MiB seen once). Some 10,000 requests are sent: a leak of
# 10 KB per request still exceeds this.
MEMORY_GROWTH_BYTES = 96 * 1024 * 1024
CARDS = ["3S", "10H", "QS", "SJ", "BJ", "2D", "AH", "ZZ", "", "10", "3S3S"]
# Values a refusal might echo: longer than any trailer a client accepts, if echoed whole.
LONG_TEXTS = ["x" * 5_000, "é" * 200_000]
# JSON Python will not read: an integer over its 4,300-digit limit (a plain ValueError).
HUGE_INTEGER_JSON = '{"game": "fiftyk", "seats": ' + "9" * 5_000 + "}"
TRANSCRIPT_SHAPES = [
    HUGE_INTEGER_JSON,
    '{"ruleset": {"preset": "classic", "options": {"scoring": "' + "x" * 5_000 + '"}}}',
    '{"ruleset": {"preset": "' + "p" * 200_000 + '"}}',
    '{"game": "' + "g" * 5_000 + '"}',
    "[" * 100_000,
]
# A refusal's whole status (message and details) stays this small (trailers, base64 too).
MAX_STATUS_BYTES = 4096

_INT_RANGES = {
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
}


def _scalar(field: FieldDescriptor, ids: list[str]) -> st.SearchStrategy[Any]:
    if field.type in _INT_RANGES:
        low, high = _INT_RANGES[field.type]
        return st.one_of(st.integers(low, high), st.sampled_from([low, high, 0, 1]))
    if field.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(allow_nan=True, width=32)
    if field.type == FieldDescriptor.TYPE_ENUM:
        return st.integers(-5, 10)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=64)
    if field.name in ("table_id", "hand_id"):
        return st.one_of(st.sampled_from(ids), st.sampled_from(ids), st.text(max_size=40))
    if field.name in ("cards", "deck"):
        return st.sampled_from(CARDS)
    if field.name in ("preset", "game"):
        return st.sampled_from(["classic", "tractor", "qq3", "shengji", "fiftyk", "", "x",
                                *LONG_TEXTS])
    if field.name == "transcript_json":
        return st.one_of(st.text(max_size=200), st.sampled_from(TRANSCRIPT_SHAPES))
    return st.one_of(st.text(max_size=200), st.sampled_from(LONG_TEXTS))


def _message(descriptor: Descriptor, ids: list[str], depth: int = 0
             ) -> st.SearchStrategy[dict[str, Any]]:
    """Field values for a message: a random subset of its fields, each a random value."""
    entries: dict[str, st.SearchStrategy[Any]] = {}
    for field in descriptor.fields:
        if field.message_type is not None:
            if field.message_type.GetOptions().map_entry:
                value_field = field.message_type.fields_by_name["value"]
                if value_field.message_type is None:
                    continue
                entries[field.name] = st.dictionaries(
                    st.one_of(st.text(max_size=20), st.sampled_from(LONG_TEXTS)),
                    st.one_of(st.none(), st.booleans(), st.integers(-10, 10**6),
                              st.floats(allow_nan=False), st.text(max_size=10),
                              st.sampled_from(LONG_TEXTS)),
                    max_size=4)
                continue
            if depth >= MAX_DEPTH or field.message_type.full_name.startswith("google."):
                continue
            inner = _message(field.message_type, ids, depth + 1)
            entries[field.name] = st.lists(inner, max_size=2) if field.is_repeated else inner
            continue
        value = _scalar(field, ids)
        entries[field.name] = st.lists(value, max_size=6) if field.is_repeated else value
    return st.fixed_dictionaries({}, optional=entries)


def _fill(message: Message, values: dict[str, Any]) -> None:
    for name, value in values.items():
        field = message.DESCRIPTOR.fields_by_name[name]
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            target = getattr(message, name)
            for key, item in value.items():
                if item is None:
                    target[key].null_value = 0
                elif isinstance(item, bool):
                    target[key].bool_value = item
                elif isinstance(item, int | float):
                    target[key].number_value = float(item)
                else:
                    target[key].string_value = item
        elif field.message_type is not None:
            if field.is_repeated:
                for item in value:
                    _fill(getattr(message, name).add(), item)
            else:
                _fill(getattr(message, name), value)
        elif field.is_repeated:
            getattr(message, name).extend(value)
        else:
            setattr(message, name, value)


def _check(call: Callable[[], Any]) -> None:
    try:
        call()
    except grpc.RpcError as error:
        code = error.code()
        assert code not in FORBIDDEN, f"{code}: {error.details()}"
        if code not in WITHOUT_INFO:
            details = error_details(error)
            assert details.reason, f"{code} without an ErrorInfo: {error.details()[:200]}"
            assert _status_bytes(error) <= MAX_STATUS_BYTES, details.message[:200]


def _status_bytes(error: grpc.RpcError) -> int:
    """The size of the rich status in the call's trailers."""
    trailers = cast(grpc.Call, error).trailing_metadata() or ()
    return sum(len(value) for key, value in trailers if key == "grpc-status-details-bin")


@dataclass
class Target:
    """A server of its own (no rate limits: every request reaches its handler), a table
    with a hand in progress whose ids the fuzzer may use, and the memory at the start."""

    server: LiveServer
    seated: Seated
    ids: list[str]
    rss_before: int


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    """Start the server, deal a 五十K hand, and leave Shengji tables at every phase."""
    server = LiveServer(server_config(tmp_path_factory.mktemp("fuzz"), rate_limits="off"))
    try:
        seated = seat_bots(server, "classic", 4, prefix="fuzz")
        hand = seated.platform.start_hand(seated.table_id).hand
        ids = [seated.table_id, hand.hand_id, *_shengji_phases(server)]
        rss = psutil.Process(os.getpid()).memory_info().rss
        yield Target(server, seated, ids, rss)
    finally:
        server.stop()


def _shengji_phases(server: LiveServer) -> list[str]:
    """The ids of Shengji tables and hands left before the deal, declaring, burying,
    playing and over (a table of its own each)."""
    rng = random.Random(7)
    ids = [shengji_table(server).table_id]
    for phase in ("declaring", "burying", "playing", "over"):
        table = shengji_table(server)
        hand = table.platform.start_hand(table.table_id).hand
        while hand.shengji.phase != phase:
            view = shengji_step(table, hand.hand_id, rng)
            assert view is not None, phase
            hand = view
        ids += [table.table_id, hand.hand_id]
    return ids


def _credentials(seated: Seated) -> list[tuple[tuple[str, str], ...]]:
    return [(), ((PLATFORM_KEY_HEADER, DEV_PLATFORM_KEY),), ((AUDIT_KEY_HEADER, DEV_AUDIT_KEY),),
            ((AUTHORIZATION_HEADER, f"Bearer {seated.tokens[0]}"),),
            ((AUTHORIZATION_HEADER, "Bearer forged.token.value"),),
            ((PLATFORM_KEY_HEADER, "wrong"),)]


@pytest.mark.parametrize("method", [m.name for m in SERVICE.methods])
def test_no_request_makes_any_rpc_fail_unknown_or_internal(target: Target,
                                                           method: str) -> None:
    server, seated, ids = target.server, target.seated, target.ids
    descriptor = SERVICE.methods_by_name[method]
    request_class = getattr(pb, descriptor.input_type.name)
    path = f"/{SERVICE.full_name}/{method}"
    channel = grpc.insecure_channel(server.target)
    streaming = descriptor.server_streaming
    if streaming:
        stub = channel.unary_stream(path, request_serializer=request_class.SerializeToString,
                                    response_deserializer=bytes)
    else:
        stub = channel.unary_unary(path, request_serializer=request_class.SerializeToString,
                                   response_deserializer=bytes)
    raw = (channel.unary_stream if streaming else channel.unary_unary)(path)
    credentials = _credentials(seated)

    @settings(max_examples=60, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(values=_message(descriptor.input_type, ids),
           which=st.integers(0, len(credentials) - 1), garbage=st.binary(max_size=64))
    def probe(values: dict[str, Any], which: int, garbage: bytes) -> None:
        request = request_class()
        try:
            _fill(request, values)
        except (ValueError, TypeError):
            return  # a value protobuf itself refuses to hold (e.g. a surrogate)
        metadata = credentials[which]
        if streaming:
            def watch(message: Any = request, client: Any = stub) -> None:
                for index, _ in enumerate(client(message, metadata=metadata,
                                                 timeout=CALL_TIMEOUT)):
                    if index >= STREAM_MESSAGES:
                        break
            _check(watch)
            _check(lambda: list(raw(garbage, metadata=metadata, timeout=CALL_TIMEOUT)))
        else:
            _check(lambda: stub(request, metadata=metadata, timeout=CALL_TIMEOUT))
            _check(lambda: raw(garbage, metadata=metadata, timeout=CALL_TIMEOUT))

    try:
        probe()
    finally:
        channel.close()


@pytest.mark.parametrize("transcript", TRANSCRIPT_SHAPES, ids=["huge-integer",
                         "long-option-value", "long-preset", "long-game", "deep-nesting"])
def test_adjudicate_refuses_unreadable_or_oversized_transcripts_with_a_small_status(
    target: Target, transcript: str,
) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        target.server.platform().stub.Adjudicate(
            pb.AdjudicateRequest(transcript_json=transcript),
            metadata=((PLATFORM_KEY_HEADER, DEV_PLATFORM_KEY),), timeout=30)
    details = error_details(refused.value)
    assert (details.code, details.reason) == (grpc.StatusCode.INVALID_ARGUMENT,
                                              details.reason)
    assert details.reason in ("INVALID_REQUEST", "INVALID_TRANSCRIPT", "INVALID_RULESET")
    assert _status_bytes(refused.value) <= MAX_STATUS_BYTES


@pytest.mark.parametrize("value", LONG_TEXTS, ids=["5000-characters", "200000-characters"])
def test_a_long_option_value_is_echoed_cut_short_once(target: Target, value: str) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        target.server.platform().create_table("classic", 4, options={"scoring": value})
    details = error_details(refused.value)
    assert (details.code, details.reason) == (grpc.StatusCode.INVALID_ARGUMENT,
                                              "INVALID_RULESET")
    assert value[:60] in details.message and value[:64] not in details.message
    assert f"({len(value) + 2} characters)" in details.message  # repr's quotes, JSON's here
    assert all(value[:60] not in v.description for v in details.field_violations)
    assert _status_bytes(refused.value) <= MAX_STATUS_BYTES


def test_the_fuzzed_server_kept_its_memory_and_still_serves(target: Target) -> None:
    """Runs after the fuzzing above (same module, same server, which runs in this process)."""
    grown = psutil.Process(os.getpid()).memory_info().rss - target.rss_before
    assert grown < MEMORY_GROWTH_BYTES, f"the server grew {grown / 2**20:.0f} MiB"
    table = target.server.platform().get_table(target.seated.table_id)
    assert table.table_id == target.seated.table_id
