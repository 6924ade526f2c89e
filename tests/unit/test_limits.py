"""Call rates and watch-stream limits: token buckets, the settings' syntax, the counts."""

from __future__ import annotations

import pytest

from fiftyk_referee.service.errors import RateLimited, ResourceExhausted
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2
from fiftyk_referee.service.limits import (
    DEFAULT_RATES,
    METHOD_CLASSES,
    RPC_CLASSES,
    LimitSpecError,
    Rate,
    RateLimiter,
    TokenBucket,
    WatchLimiter,
    WatchLimits,
    parse_rate_limits,
    parse_watch_limits,
)
from fiftyk_referee.service.server import SERVICE_NAME


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
    limiter = RateLimiter(parse_rate_limits("anonymous.read=1/1"), clock=FakeClock(),
                          max_buckets=2)
    for peer in ("a", "b", "c"):
        limiter.check("anonymous", "read", peer)
    limiter.check("anonymous", "read", "a")  # "a" was dropped: a full bucket again
    with pytest.raises(RateLimited):
        limiter.check("anonymous", "read", "c")


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
                                                                  server=9)
    for spec in ("seat", "planet=3", "seat=two", "table=0"):
        with pytest.raises(LimitSpecError):
            parse_watch_limits(spec)


def test_every_referee_method_has_an_rpc_class() -> None:
    service = referee_pb2.DESCRIPTOR.services_by_name["RefereeService"]
    assert service.full_name == SERVICE_NAME
    assert {method.name for method in service.methods} == set(METHOD_CLASSES)
    assert set(METHOD_CLASSES.values()) == set(RPC_CLASSES)


def test_watches_are_counted_per_credential_table_and_server() -> None:
    watches = WatchLimiter(WatchLimits(seat=2, key=3, table=4, server=5))
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
