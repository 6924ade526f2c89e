"""Signed webhooks through a real referee and a real HTTP receiver on loopback: every public
event in feed order, signed as docs/integrating.md says; a receiver that was down catches up;
dead letters and their redelivery; a referee killed with SIGKILL mid-delivery loses nothing;
two replicas on one PostgreSQL deliver each event once."""

from __future__ import annotations

import random
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.json_format import MessageToDict

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.e2e import test_shengji
from tests.e2e.harness import LiveServer, play_out, seat_bots, server_config
from tests.e2e.live import ServeProcess, start_serve, wait_until
from tests.support.webhook_receiver import Delivery, WebhookReceiver

DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrating.md"
# Fast retries keep the tests short: the production defaults pause up to 5 minutes.
FAST = "backoff=0.02,max_backoff=0.1,attempts=1000,poll=0.2,timeout=2,lease=5"
ARRIVAL_TIMEOUT_SECONDS = 120
PAGE = 1000


def documented_verifier() -> Callable[..., bool]:
    """`verify_fiftyk_signature`, taken from the docs' code block and run as written."""
    text = DOCS.read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S)
                 if "def verify_fiftyk_signature" in b)
    namespace: dict[str, Any] = {}
    exec(compile(block, str(DOCS), "exec"), namespace)
    verifier: Callable[..., bool] = namespace["verify_fiftyk_signature"]
    return verifier


def feed_after(platform: RefereeClient, position: int) -> list[pb.Event]:
    """Every event of the platform's feed after `position`, up to its head now."""
    head = platform.feed_head()
    events: list[pb.Event] = []
    while position < head:
        page = platform.read_events(position, PAGE)
        events.extend(e for e in page.events if e.position <= head)
        if not page.has_more:
            break
        position = page.last_position
    return events


def first_arrivals(deliveries: list[Delivery]) -> list[Delivery]:
    """Each event's first accepted delivery, in arrival order."""
    seen: set[str] = set()
    first = []
    for delivery in deliveries:
        if delivery.json["id"] not in seen:
            seen.add(delivery.json["id"])
            first.append(delivery)
    return first


def assert_every_event_once_in_order(accepted: list[Delivery], expected: list[pb.Event]
                                     ) -> None:
    """At least once, in feed order: each event's first arrival in order, and a repeat is the
    same event again (same id, same body)."""
    assert [d.json["position"] for d in first_arrivals(accepted)] == [
        e.position for e in expected]
    bodies: dict[str, bytes] = {}
    for delivery in accepted:
        assert bodies.setdefault(delivery.json["id"], delivery.body) == delivery.body


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    live = WebhookReceiver()
    yield live
    live.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    live = LiveServer(server_config(tmp_path, webhooks=FAST, rate_limits="off"))
    yield live
    live.stop()


def test_every_event_arrives_signed_in_feed_order_for_both_games(
        server: LiveServer, receiver: WebhookReceiver) -> None:
    platform = server.platform()
    registered = platform.register_webhook(receiver.url, description="lobby service",
                                           request_id="hooks-1")
    again = platform.register_webhook(receiver.url, description="lobby service",
                                      request_id="hooks-1")
    assert again.replayed and again.secret == registered.secret
    closings = WebhookReceiver()
    try:
        only_closed = platform.register_webhook(closings.url, ["table.closed"])
        start = registered.webhook.position
        fiftyk = seat_bots(server, "classic", 4, prefix="hook")
        play_out(fiftyk, platform.start_hand(fiftyk.table_id).hand, random.Random(1))
        shengji = test_shengji.shengji_table(server)
        hand = platform.start_hand(shengji.table_id).hand
        for _ in range(6):
            test_shengji.step(shengji, hand.hand_id, random.Random(2))
        platform.close_table(fiftyk.table_id, "done")
        expected = feed_after(platform, start)
        deliveries = receiver.wait_for(len(expected), ARRIVAL_TIMEOUT_SECONDS)
        closed = closings.wait_for(1, ARRIVAL_TIMEOUT_SECONDS)
    finally:
        closings.close()
    assert [d.json["position"] for d in deliveries] == [e.position for e in expected]
    assert len({d.json["id"] for d in deliveries}) == len(expected)
    for delivery, event in zip(deliveries, expected, strict=True):
        body = delivery.json
        assert body["name"] == event.name == delivery.headers["Fiftyk-Event-Name"]
        assert body["id"] == delivery.headers["Fiftyk-Event-Id"]
        assert body["event"] == MessageToDict(event, preserving_proto_field_name=True)
        assert body["table_id"] in (fiftyk.table_id, shengji.table_id)
    assert {d.json["table_id"] for d in deliveries} == {fiftyk.table_id, shengji.table_id}
    # No card of a seat's hand leaves the referee in a webhook (the platform's view).
    dealt = [d.json["event"] for d in deliveries if d.json["name"].endswith("hand_dealt")]
    assert dealt and all("cards" not in h for e in dealt
                         for h in e.get("fiftyk_hand_dealt", {}).get("hands", []))
    assert all(e["game_event"]["@type"].endswith(".HandDealt") and "deck" not in e["game_event"]
               and all("cards" not in h for h in e["game_event"].get("hands", []))
               for e in dealt)
    assert [d.json["name"] for d in closed] == ["table.closed"]
    assert closed[0].json["id"] == deliveries[-1].json["id"]

    verify = documented_verifier()
    keys = {registered.webhook.key_id: registered.secret}
    for delivery in deliveries:
        assert verify(keys, delivery.headers["Fiftyk-Signature"], delivery.body)
    sample = deliveries[0]
    header = sample.headers["Fiftyk-Signature"]
    assert not verify(keys, header, sample.body + b" ")
    assert not verify({registered.webhook.key_id: "whsec_wrong"}, header, sample.body)
    assert not verify({"other-key": registered.secret}, header, sample.body)
    stale = re.sub(r"t=\d+", f"t={int(time.time()) - 3600}", header)
    assert not verify(keys, stale, sample.body)
    listed = {w.webhook_id: w for w in platform.list_webhooks().webhooks}
    assert listed[only_closed.webhook.webhook_id].events == ["table.closed"]
    assert "secret" not in MessageToDict(listed[registered.webhook.webhook_id])


def test_a_receiver_that_was_down_catches_up_in_order(
        server: LiveServer, receiver: WebhookReceiver) -> None:
    platform = server.platform()
    registered = platform.register_webhook(receiver.url)
    receiver.failing = True
    table = seat_bots(server, "classic", 4, prefix="down")
    platform.start_hand(table.table_id)
    deadline = time.monotonic() + ARRIVAL_TIMEOUT_SECONDS
    while len(receiver.deliveries) < 5:  # several refused attempts while it is down
        assert time.monotonic() < deadline
        time.sleep(0.05)
    receiver.failing = False
    platform.close_table(table.table_id)
    expected = feed_after(platform, registered.webhook.position)
    accepted = receiver.wait_for(len(expected), ARRIVAL_TIMEOUT_SECONDS)
    assert [d.json["position"] for d in accepted] == [e.position for e in expected]
    registry = server.running.metrics.registry
    labels = {"endpoint": registered.webhook.webhook_id}
    # The delivery process reports its counts to the server's metrics a moment later.
    def counted(name: str) -> float:
        return registry.get_sample_value(name, labels) or 0

    wait_until(lambda: counted("fiftyk_webhook_failures_total") >= 5
               and counted("fiftyk_webhook_retries_total") >= 5,
               "five failures and retries counted", ARRIVAL_TIMEOUT_SECONDS)
    assert platform.webhook_dead_letters(registered.webhook.webhook_id) == []


def test_dead_letters_wait_for_a_redelivery_and_later_events_go_on(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    server = LiveServer(server_config(tmp_path, webhooks=FAST.replace("attempts=1000",
                                                                      "attempts=2")))
    try:
        platform = server.platform()
        registered = platform.register_webhook(receiver.url, ["table.opened"])
        webhook_id = registered.webhook.webhook_id
        receiver.failing = True
        lost = platform.create_table("classic", 4).table.table_id
        deadline = time.monotonic() + ARRIVAL_TIMEOUT_SECONDS
        while not (letters := platform.webhook_dead_letters(webhook_id)):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert letters[0].attempts == 2 and letters[0].last_error == "HTTP 5xx"
        assert letters[0].name == "table.opened"
        receiver.failing = False
        later = platform.create_table("classic", 4).table.table_id
        assert receiver.wait_for(1, ARRIVAL_TIMEOUT_SECONDS)[0].json["table_id"] == later
        assert platform.redeliver_webhook_events(webhook_id) == 1
        delivered = receiver.wait_for(2, ARRIVAL_TIMEOUT_SECONDS)
        assert delivered[1].json["table_id"] == lost
        assert delivered[1].json["id"] == letters[0].event_id
        deadline = time.monotonic() + ARRIVAL_TIMEOUT_SECONDS
        while platform.webhook_dead_letters(webhook_id):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        registry = server.running.metrics.registry
        assert registry.get_sample_value("fiftyk_webhook_dead_letters_total",
                                         {"endpoint": webhook_id}) == 1
        platform.delete_webhook(webhook_id)
        assert platform.list_webhooks().webhooks == []
    finally:
        server.stop()


def test_endpoints_must_be_https_or_loopback(server: LiveServer) -> None:
    platform = server.platform()
    for url in ("http://example.com/hook", "ftp://127.0.0.1/x", "https://user:pw@h.test/",
                "not a url"):
        with pytest.raises(grpc.RpcError) as refused:
            platform.register_webhook(url)
        assert error_reason(refused.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT,
                                                   "INVALID_REQUEST"), url
    with pytest.raises(grpc.RpcError) as refused:
        platform.register_webhook("https://hooks.example.com/", ["table.nope"])
    assert error_reason(refused.value)[1] == "INVALID_REQUEST"
    assert platform.register_webhook("https://hooks.example.com/").secret.startswith("whsec_")
    seat = seat_bots(server, "classic", 4, prefix="nohook").seats[0]
    with pytest.raises(grpc.RpcError) as refused:
        seat.list_webhooks()
    assert error_reason(refused.value)[1] == "PLATFORM_REQUIRED"


def _kill(process: ServeProcess) -> None:
    process.process.send_signal(signal.SIGKILL)
    process.process.wait(ARRIVAL_TIMEOUT_SECONDS)
    if process.process.stdout is not None:
        process.process.stdout.close()


def test_a_referee_killed_mid_delivery_loses_no_event(tmp_path: Path,
                                                      receiver: WebhookReceiver) -> None:
    args = ["--port", "0", "--metrics-port", "0", "--database-url",
            str(tmp_path / "store.sqlite"), "--rate-limits", "off", "--webhooks", FAST]
    serving = start_serve(args, {}, tmp_path / "first.log")
    try:
        platform = RefereeClient(serving.target, platform_key=DEV_PLATFORM_KEY)
        start = platform.register_webhook(receiver.url).webhook.position
        receiver.delay = 0.05  # each delivery takes a while: the kill lands in one
        tables = [platform.create_table("classic", 4).table.table_id for _ in range(4)]
        for table_id in tables:
            for seat in range(4):
                platform.join_table(table_id, f"p{seat}", seat)
        expected = feed_after(platform, start)
        receiver.wait_for(5, ARRIVAL_TIMEOUT_SECONDS)
        platform.close()
        _kill(serving)
        arrived_before = len(receiver.deliveries)
        serving = start_serve(args, {}, tmp_path / "second.log")
        receiver.delay = 0.0
        deadline = time.monotonic() + ARRIVAL_TIMEOUT_SECONDS
        while len({d.json["id"] for d in receiver.accepted()}) < len(expected):
            assert time.monotonic() < deadline, "not every event arrived after the restart"
            time.sleep(0.05)
    finally:
        serving.stop()
    assert arrived_before < len(expected), "the kill came after every delivery"
    assert_every_event_once_in_order(receiver.accepted(), expected)


@pytest.mark.postgres
def test_two_replicas_on_one_database_deliver_each_event_once(
        tmp_path: Path, fresh_postgres_db: str, receiver: WebhookReceiver) -> None:
    servers = [LiveServer(server_config(tmp_path / name, database_url=fresh_postgres_db,
                                        webhooks=FAST, rate_limits="off"))
               for name in ("a", "b")]
    try:
        start = servers[0].platform().register_webhook(receiver.url).webhook.position
        for index, server in enumerate(servers * 2):
            table = seat_bots(server, "classic", 4, prefix=f"rep{index}")
            server.platform().start_hand(table.table_id)
            server.platform().abort_table(table.table_id)
        expected = feed_after(servers[1].platform(), start)
        accepted = receiver.wait_for(len(expected), ARRIVAL_TIMEOUT_SECONDS)
        time.sleep(1)  # a second replica delivering too would show by now
        accepted = receiver.accepted()
    finally:
        for server in servers:
            server.stop()
    assert [d.json["position"] for d in accepted] == [e.position for e in expected]
    assert len({d.json["id"] for d in accepted}) == len(accepted)
