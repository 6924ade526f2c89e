"""Call rates and watch-stream limits: token buckets, the settings' syntax, the counts."""

from __future__ import annotations

import pytest

from fiftyk_referee.service.core.bundles import legacy_rpcs
from fiftyk_referee.service.errors import RateLimited, ResourceExhausted
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2
from fiftyk_referee.service.ops.limits import (
    DEFAULT_PEER_RATE,
    DEFAULT_RATES,
    METHOD_CLASSES,
    RPC_CLASSES,
    LimitSpecError,
    Rate,
    RateLimiter,
    TokenBucket,
    TransportLimits,
    WatchLimiter,
    WatchLimits,
    method_class,
    parse_peer_rate,
    parse_rate_limits,
    parse_transport_limits,
    parse_watch_limits,
)
from fiftyk_referee.service.server import (
    RESERVED_FILE_DESCRIPTORS,
    SERVICE_NAME,
    connection_limit,
    transport_options,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_spends_its_burst_then_refills_at_its_rate() -> None:
    bucket = TokenBucket(Rate(per_second=2, burst=3), now=0.0)
    assert [bucket.take(0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take(0.0) == pytest.approx(0.5)  # one token every half second
    assert bucket.take(0.25) == pytest.approx(0.25)
    assert bucket.take(0.5) == 0.0
    assert bucket.take(10.0) == 0.0  # a long pause refills only up to the burst
    assert [bucket.take(10.0) for _ in range(3)][-1] > 0


def test_the_limiter_refuses_with_the_wait_and_keeps_credentials_apart() -> None:
    clock = FakeClock()
    limiter = RateLimiter(parse_rate_limits("platform.create=1/2"), clock=clock)
    limiter.check("platform", "create", "platform")
    limiter.check("platform", "create", "platform")
    with pytest.raises(RateLimited) as refused:
        limiter.check("platform", "create", "platform")
    assert refused.value.reason == "RATE_LIMITED"
    assert refused.value.retry_after_seconds == pytest.approx(1.0)
    assert refused.value.metadata == {"rpc_class": "create", "role": "platform"}
    limiter.check("platform", "read", "platform")  # another class has its own bucket
    limiter.check("player", "create", "seat:t:0:p")  # another credential too
    clock.now += 1.0
    limiter.check("platform", "create", "platform")


def test_the_least_recently_used_buckets_are_dropped_beyond_the_cap() -> None:
    clock = FakeClock()
    limiter = RateLimiter(parse_rate_limits("anonymous.read=1/1"), clock=clock,
                          max_buckets=2)
    for peer in ("a", "b", "c"):
        limiter.check("anonymous", "read", peer)
    assert len(limiter._buckets) == 2
    clock.now += 1.0  # every dropped bucket has refilled by now
    limiter.check("anonymous", "read", "a")  # "a" was dropped: a full bucket again
    with pytest.raises(RateLimited):
        limiter.check("anonymous", "read", "a")


def test_a_drained_bucket_dropped_under_a_flood_of_other_keys_does_not_come_back_full(
) -> None:
    clock = FakeClock()
    limiter = RateLimiter(parse_rate_limits("anonymous.read=1/5"), clock=clock,
                          max_buckets=100)
    for _ in range(5):
        limiter.check("anonymous", "read", "attacker")
    refused_others = 0
    for index in range(200):  # pushes "attacker" (and more) out of the limiter
        try:
            limiter.check("anonymous", "read", f"other-{index}")
        except RateLimited:
            refused_others += 1  # once a drained bucket was dropped, new ones start empty
    assert refused_others == 100
    with pytest.raises(RateLimited) as refused:
        limiter.check("anonymous", "read", "attacker")
    assert refused.value.retry_after_seconds == pytest.approx(1.0)  # it refills at its rate
    clock.now += 5.0  # the drained buckets would all be full now: new ones start full
    for _ in range(5):
        limiter.check("anonymous", "read", "newcomer")


def test_one_address_shares_a_total_over_all_its_credentials() -> None:
    clock = FakeClock()
    limiter = RateLimiter(parse_rate_limits("player.read=100/100"), clock=clock,
                          peer_rate=Rate(1, 3))
    for seat in range(3):  # three seat tokens of one process
        limiter.check("player", "read", f"seat:t:{seat}:p{seat}", "10.0.0.7")
    with pytest.raises(RateLimited) as refused:
        limiter.check("player", "read", "seat:t:3:p3", "10.0.0.7")
    assert refused.value.metadata == {"rpc_class": "total", "role": "peer"}
    assert refused.value.retry_after_seconds == pytest.approx(1.0)
    limiter.check("player", "read", "seat:t:3:p3", "10.0.0.8")  # another address
    # The refused call took no token of its credential: after the wait it gets through.
    clock.now += 1.0
    limiter.check("player", "read", "seat:t:3:p3", "10.0.0.7")


def test_the_peer_total_is_set_with_the_rate_limits() -> None:
    assert parse_peer_rate("") == DEFAULT_PEER_RATE
    assert parse_peer_rate("peer=5/10, player.read=1/2") == Rate(5, 10)
    assert parse_peer_rate("peer=off") is None
    assert parse_peer_rate("off") is None
    assert parse_rate_limits("peer=5/10")["player"] == DEFAULT_RATES["player"]
    with pytest.raises(LimitSpecError):
        parse_rate_limits("peer=fast")


def test_limits_can_be_overridden_per_entry_or_turned_off() -> None:
    rates = parse_rate_limits(" player.command=10/20 , audit.read=off ")
    assert rates["player"]["command"] == Rate(10, 20)
    assert rates["audit"]["read"] is None
    assert rates["platform"]["create"] == DEFAULT_RATES["platform"]["create"]
    assert all(rate is None for classes in parse_rate_limits("off").values()
               for rate in classes.values())
    assert parse_rate_limits("player.read=7")["player"]["read"] == Rate(7, 7)


@pytest.mark.parametrize("spec", ["player.command", "nobody.read=1/1", "player.x=1/1",
                                  "player.read=fast", "player.read=0/1", "player.read=1/0.5"])
def test_malformed_rate_limits_are_refused(spec: str) -> None:
    with pytest.raises(LimitSpecError):
        parse_rate_limits(spec)


def test_watch_limits_parse_and_refuse_nonsense() -> None:
    assert parse_watch_limits("seat=2, server=9") == WatchLimits(seat=2, key=256, table=64,
                                                                  server=9, reserved=16)
    for spec in ("seat", "planet=3", "seat=two", "table=0"):
        with pytest.raises(LimitSpecError):
            parse_watch_limits(spec)


def test_transport_limits_parse_seconds_and_counts_and_refuse_nonsense() -> None:
    limits = parse_transport_limits("streams=64, request=2.5, connections=0")
    assert limits == TransportLimits(streams=64, request=2.5, connections=0)
    assert parse_transport_limits("") == TransportLimits()
    for spec in ("streams", "tunnels=3", "streams=2.5", "request=soon", "request=0",
                 "streams=0", "pending=-1", "connections=-1", "idle=inf", "idle=nan"):
        with pytest.raises(LimitSpecError):
            parse_transport_limits(spec)


def test_transport_limits_become_grpcs_channel_arguments() -> None:
    limits = TransportLimits(streams=100, connections=900, idle=2, age=60, age_grace=5,
                             keepalive=30, keepalive_timeout=10, ping_interval=15,
                             ping_strikes=3, request=4)
    options = dict(transport_options(limits, pool_size=10))
    assert options == {
        "grpc.max_concurrent_streams": 100, "grpc.max_allowed_incoming_connections": 900,
        "grpc.max_connection_idle_ms": 2000, "grpc.max_connection_age_ms": 60_000,
        "grpc.max_connection_age_grace_ms": 5000, "grpc.keepalive_time_ms": 30_000,
        "grpc.keepalive_timeout_ms": 10_000, "grpc.keepalive_permit_without_calls": 1,
        "grpc.http2.min_ping_interval_without_data_ms": 15_000,
        "grpc.http2.max_ping_strikes": 3, "grpc.server_handshake_timeout_ms": 4000}


def test_the_default_connection_cap_leaves_descriptors_for_the_database_and_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("resource.getrlimit", lambda _which: (1024, 4096))
    assert connection_limit(TransportLimits(), pool_size=10) == \
        1024 - RESERVED_FILE_DESCRIPTORS - 10
    assert connection_limit(TransportLimits(connections=50), pool_size=10) == 50


def test_every_referee_method_has_an_rpc_class() -> None:
    service = referee_pb2.DESCRIPTOR.services_by_name["RefereeService"]
    assert service.full_name == SERVICE_NAME
    # The core's methods by name; the games' legacy RPCs (Declare, Bury) are commands.
    assert {method.name for method in service.methods} == {*METHOD_CLASSES, *legacy_rpcs()}
    assert {method_class(name, legacy_rpcs) for name in legacy_rpcs()} == {"command"}
    assert {method_class(name) for name in legacy_rpcs()} == {None}  # unless named
    assert set(METHOD_CLASSES.values()) == set(RPC_CLASSES)


def test_keys_cannot_take_a_tables_reserved_watch_slots_but_its_seats_can() -> None:
    watches = WatchLimiter(WatchLimits(seat=10, key=10, table=3, server=10, reserved=2))
    watches.acquire("platform", True, "t1")
    with pytest.raises(ResourceExhausted) as refused:
        watches.acquire("audit", True, "t1")
    assert refused.value.metadata["scope"] == "table"
    with pytest.raises(ResourceExhausted):  # a spectator shares the others' slots too
        watches.acquire("spectator:t1:s", False, "t1", seat=False)
    watches.acquire("seat:a", False, "t1", seat=True)
    watches.acquire("seat:b", False, "t1", seat=True)  # the seats find their reserved slots
    assert parse_watch_limits("reserved=0").reserved == 0
    assert parse_watch_limits("table=3").others_per_table == 1  # the default reserve bends
    for spec in ("reserved=64", "table=8,reserved=9", "reserved=-1"):
        with pytest.raises(LimitSpecError):
            parse_watch_limits(spec)


def test_watches_are_counted_per_credential_table_and_server() -> None:
    watches = WatchLimiter(WatchLimits(seat=2, key=3, table=4, server=5, reserved=0))
    held = [watches.acquire("seat:a", False, "t1") for _ in range(2)]
    with pytest.raises(ResourceExhausted) as refused:
        watches.acquire("seat:a", False, "t1")
    assert refused.value.reason == "LIMIT_EXCEEDED"
    assert refused.value.metadata["scope"] == "credential"
    held += [watches.acquire("seat:b", False, "t1"), watches.acquire("platform", True, "t1")]
    with pytest.raises(ResourceExhausted) as refused:
        watches.acquire("platform", True, "t1")
    assert refused.value.metadata["scope"] == "table"
    held.append(watches.acquire("platform", True, "t2"))
    with pytest.raises(ResourceExhausted) as refused:
        watches.acquire("platform", True, "t3")
    assert refused.value.metadata["scope"] == "server"
    for ticket in held:
        watches.release(ticket)
    assert watches.open_streams() == 0
    watches.acquire("seat:a", False, "t1")
