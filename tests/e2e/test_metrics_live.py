"""Metrics of a real server: play a hand over gRPC, scrape `/metrics`, check the values.

One server (`create_server`, SQLite in a temp dir, gRPC and metrics on free ports) serves a
whole scenario: a table is opened and filled (one join retried with its request id), a hand
is dealt, a seat plays out of turn, the hand is played to the end, a state is replayed for
audit and a WatchTable stream reads the table's whole history. The tests then check that each
counter moved by exactly what the clients did and what the stored history shows, and that
every series the dashboard and the alert rules query is in the live exposition.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import psutil
import pytest

from fiftyk_referee.domain.cards import parse_cards
from fiftyk_referee.domain.fiftyk.combinations import classify
from fiftyk_referee.domain.fiftyk.game import BOMB_SIZES, OTHER_BOMB, bomb_size_label
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY, DEV_PLATFORM_KEY, Config
from tests.e2e.live import (
    Scrape,
    Tally,
    call,
    feed_of,
    open_table,
    play_hand,
    player_id,
    referee_in_thread,
    scrape,
    wait_until,
)
from tests.support.webhook_receiver import WebhookReceiver
from tests.unit.test_deploy import (
    PROMETHEUS_SERIES,
    alert_expressions,
    dashboard_expressions,
    metric_names,
)

SERVICE = "fiftyk.referee.v1.RefereeService"
PRESET = "classic"
SEED = 20240601
JOIN_PREFIX = "join-"
STREAM = "server_stream"


def rpc(method: str, grpc_type: str = "unary") -> dict[str, str]:
    """The go-grpc-prometheus labels of one method."""
    return {"grpc_type": grpc_type, "grpc_service": SERVICE, "grpc_method": method}


@dataclass
class Scenario:
    """What was done against the server, what it stored, and scrapes taken along the way."""

    tally: Tally
    history: list[pb.Event]
    watched_events: int
    watch_received: int
    during_hand: Scrape
    watch_open: Scrape
    final: Scrape
    webhook_id: str
    webhook_deliveries: int


def _play_out_of_turn(seated_clients: list[RefereeClient], table_id: str, hand: pb.HandView,
                      tally: Tally) -> None:
    """A seat that is not to act tries to play one of its own cards: NOT_YOUR_TURN."""
    seat = (hand.turn_seat + 1) % len(seated_clients)
    client = seated_clients[seat]
    own = call(tally, "GetHandView", lambda: client.hand_view(table_id, hand.hand_id)).own_cards
    with pytest.raises(grpc.RpcError) as refused:
        call(tally, "Play", lambda: client.play(table_id, hand.hand_id, [own[0]]))
    assert error_reason(refused.value)[:2] == (grpc.StatusCode.FAILED_PRECONDITION,
                                               "NOT_YOUR_TURN")


def _watch_whole_history(audit: RefereeClient, table_id: str, expected: int,
                         metrics_port: int) -> tuple[int, Scrape]:
    """Read a WatchTable stream from the start until `expected` events; scrape while open."""
    stream = audit.watch(table_id)
    received = 0
    for _ in stream:
        received += 1
        if received == expected:
            break
    # The server counts a message as sent once its generator resumes after sending it.
    wait_until(lambda: scrape(metrics_port).value(
        "grpc_server_msg_sent_total", **rpc("WatchTable", STREAM)) == expected,
        "every watched event to be counted as sent")
    open_scrape = scrape(metrics_port)
    stream.cancel()  # type: ignore[attr-defined]
    return received, open_scrape


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    data = Path(tmp_path_factory.mktemp("metrics-live"))
    config = Config(database_url=str(data / "events.sqlite"), data_dir=data, port=0,
                    metrics_port=0, workers=4, webhooks="poll=0.2").validate()
    with referee_in_thread(config) as server, WebhookReceiver() as receiver:
        port = server.metrics_port
        assert port is not None
        client = RefereeClient(f"127.0.0.1:{server.port}")
        platform = client.as_platform(DEV_PLATFORM_KEY)
        audit = client.as_audit(DEV_AUDIT_KEY)
        tally = Tally()
        webhook = call(tally, "RegisterWebhook",
                       lambda: platform.register_webhook(receiver.url)).webhook
        table = open_table([platform], tally, preset=PRESET, join_request_prefix=JOIN_PREFIX)
        table_id = table.table_id
        # Seat 0's join, retried with its request id: answered from the receipt.
        retried = call(tally, "JoinTable", lambda: platform.join_table(
            table_id, player_id(table_id, 0), 0, request_id=f"{JOIN_PREFIX}0"))
        assert retried.replayed
        hand = call(tally, "StartHand", lambda: platform.start_hand(table_id)).hand
        _play_out_of_turn(table.seats[0], table_id, hand, tally)
        wait_until(lambda: scrape(port).value("fiftyk_active_tables") == 1,
                   "the dealt hand to make its table active")
        during_hand = scrape(port)
        last = play_hand(table, hand, tally, seed=SEED)
        assert last.status == pb.HAND_STATUS_COMPLETED
        wait_until(lambda: scrape(port).value("fiftyk_active_tables") == 0,
                   "the finished hand to leave no table active")
        history = call(tally, "GetHandHistory", lambda: audit.hand_history(hand.hand_id,
                                                                           limit=1000)).events
        call(tally, "GetHandAt", lambda: audit.hand_at(hand.hand_id, len(history) // 2))
        watched = len(feed_of(platform, {table_id, hand.hand_id}, tally))
        received, watch_open = _watch_whole_history(audit, table_id, watched, port)
        wait_until(lambda: scrape(port).value("fiftyk_watch_streams_open") == 0,
                   "the cancelled watch stream to close")
        wait_until(lambda: len(receiver.deliveries) >= watched,
                   "the webhook endpoint to receive every event of the table")
        wait_until(lambda: scrape(port).value("fiftyk_webhook_deliveries_total",
                                              endpoint=webhook.webhook_id) == watched,
                   "every webhook delivery to be counted")
        final = scrape(port)
        deliveries = len(receiver.deliveries)
        client.close()
    yield Scenario(tally, list(history), watched, received, during_hand, watch_open, final,
                   webhook.webhook_id, deliveries)


def test_each_unary_rpc_is_started_handled_timed_and_counted_once_per_call(
    scenario: Scenario,
) -> None:
    tally, final = scenario.tally, scenario.final
    for method, calls in tally.calls.items():
        labels = rpc(method)
        assert final.value("grpc_server_started_total", **labels) == calls, method
        assert final.value("grpc_server_msg_received_total", **labels) == calls, method
        assert final.value("grpc_server_handling_seconds_count", **labels) == calls, method
        assert final.value("grpc_server_handled_total", grpc_code="OK",
                           **labels) == tally.ok[method], method
        assert final.value("grpc_server_msg_sent_total", **labels) == tally.ok[method], method
    unary_started = final.total("grpc_server_started_total", grpc_type="unary")
    assert unary_started == sum(tally.calls.values())


def test_play_and_pass_counters_moved_by_the_plays_and_passes_made(scenario: Scenario) -> None:
    tally, final = scenario.tally, scenario.final
    assert tally.ok["Play"] > 0 and tally.ok["Pass"] > 0
    assert final.value("grpc_server_started_total", **rpc("Play")) == tally.ok["Play"] + 1
    assert final.value("grpc_server_handled_total", grpc_code="OK",
                       **rpc("Play")) == tally.ok["Play"]
    assert final.value("grpc_server_started_total", **rpc("Pass")) == tally.ok["Pass"]
    assert final.value("grpc_server_handled_total", grpc_code="OK",
                       **rpc("Pass")) == tally.ok["Pass"]


def test_the_out_of_turn_play_is_handled_as_failed_precondition_and_counted_by_reason(
    scenario: Scenario,
) -> None:
    final = scenario.final
    assert scenario.tally.failed == Counter({("Play", grpc.StatusCode.FAILED_PRECONDITION): 1})
    assert final.value("grpc_server_handled_total", grpc_code="FailedPrecondition",
                       **rpc("Play")) == 1
    assert final.value("fiftyk_commands_total", command="play", outcome="NOT_YOUR_TURN") == 1


def test_commands_are_counted_by_kind_and_outcome(scenario: Scenario) -> None:
    tally, final = scenario.tally, scenario.final
    expected = {
        ("create_table", "accepted"): 1,
        # The replayed join was answered as accepted (and counted as a replay below).
        ("join_table", "accepted"): tally.ok["JoinTable"],
        ("start_hand", "accepted"): 1,
        ("play", "accepted"): tally.ok["Play"],
        ("play", "NOT_YOUR_TURN"): 1,
        ("pass", "accepted"): tally.ok["Pass"],
    }
    counted = {(dict(labels)["command"], dict(labels)["outcome"]): value
               for (name, labels), value in final.samples.items()
               if name == "fiftyk_commands_total"}
    assert counted == expected
    assert tally.ok["JoinTable"] == 5 and tally.replayed["JoinTable"] == 1


def test_a_retried_request_id_is_counted_as_one_idempotent_replay(scenario: Scenario) -> None:
    assert scenario.final.value("fiftyk_idempotent_replays_total") == 1


def test_hands_tricks_and_bombs_match_the_stored_history(scenario: Scenario) -> None:
    final, history = scenario.final, scenario.history
    assert final.value("fiftyk_hands_started_total", game="fiftyk", preset=PRESET) == 1
    assert final.value("fiftyk_hands_completed_total", game="fiftyk", preset=PRESET) == 1
    tricks = sum(1 for event in history if event.HasField("fiftyk_trick_won"))
    assert tricks > 0
    assert final.value("fiftyk_tricks_total", game="fiftyk", preset=PRESET) == tricks
    assert final.total("fiftyk_tricks_total") == tricks
    bombs: Counter[str] = Counter()
    rules = Ruleset.from_spec(PRESET)
    for event in history:
        if event.HasField("fiftyk_cards_played"):
            played = event.fiftyk_cards_played
            combination = classify(parse_cards(list(played.cards)), rules)
            assert combination.type == played.combination_type
            if combination.is_bomb_class:
                bombs[bomb_size_label(combination.type, len(combination.cards))] += 1
    for size in BOMB_SIZES - {OTHER_BOMB}:
        assert final.value("fiftyk_bombs_total", game="fiftyk", preset=PRESET,
                           size=size) == bombs[size], size


def test_every_applied_command_is_one_append_without_conflicts_or_retries(
    scenario: Scenario,
) -> None:
    final, tally = scenario.final, scenario.tally
    # A webhook's registration is kept in the webhook store, not appended as an event.
    applied = sum(count for method, count in tally.applied.items()
                  if method != "RegisterWebhook")
    assert applied == 1 + 4 + 1 + tally.ok["Play"] + tally.ok["Pass"]
    assert final.value("fiftyk_event_store_append_seconds_count") == applied
    assert final.value("fiftyk_event_store_conflicts_total") == 0
    assert final.value("fiftyk_command_retries_total") == 0


def test_replaying_a_hand_for_audit_is_one_rebuild(scenario: Scenario) -> None:
    assert scenario.final.value("fiftyk_rebuild_seconds_count") == 1
    assert scenario.final.value("fiftyk_rebuild_seconds_sum") > 0


def test_watch_stream_counts_each_event_sent_and_the_gauge_goes_up_then_down(
    scenario: Scenario,
) -> None:
    open_, final = scenario.watch_open, scenario.final
    labels = rpc("WatchTable", STREAM)
    assert scenario.watch_received == scenario.watched_events > 0
    assert open_.value("fiftyk_watch_streams_open") == 1
    assert open_.value("grpc_server_msg_sent_total", **labels) == scenario.watched_events
    assert open_.value("grpc_server_started_total", **labels) == 1
    assert open_.total("grpc_server_handled_total", **labels) == 0
    assert final.value("fiftyk_watch_streams_open") == 0
    assert final.value("grpc_server_msg_received_total", **labels) == 1
    assert final.value("grpc_server_handled_total", grpc_code="Canceled", **labels) == 1


def test_a_table_is_active_while_its_hand_is_played(scenario: Scenario) -> None:
    assert scenario.during_hand.value("fiftyk_active_tables") == 1
    assert scenario.final.value("fiftyk_active_tables") == 0


def test_every_series_the_dashboard_and_alerts_query_is_in_the_live_scrape(
    scenario: Scenario,
) -> None:
    queried = set().union(*(metric_names(expr)
                            for expr in [*alert_expressions(), *dashboard_expressions()]))
    assert len(queried) > 10
    assert queried - PROMETHEUS_SERIES - scenario.final.names == set()


def test_the_process_collectors_report_the_servers_own_process(scenario: Scenario) -> None:
    final = scenario.final
    rss = psutil.Process().memory_info().rss  # the server runs in this test process
    assert rss / 2 <= final.value("process_resident_memory_bytes") <= 2 * rss
    assert final.value("process_open_fds") >= 1
    assert final.value("process_max_fds") >= final.value("process_open_fds")
    assert final.value("process_cpu_seconds_total") > 0
    assert final.total("python_gc_collections_total") > 0
    assert final.total("python_info") == 1


def test_a_webhook_endpoints_series_exist_from_its_first_delivery_and_count_each_one(
    scenario: Scenario,
) -> None:
    final, endpoint = scenario.final, scenario.webhook_id
    assert final.value("fiftyk_webhook_deliveries_total", endpoint=endpoint) == (
        scenario.webhook_deliveries)
    for idle in ("fiftyk_webhook_failures_total", "fiftyk_webhook_retries_total",
                 "fiftyk_webhook_dead_letters_total", "fiftyk_webhook_lag_events"):
        assert final.value(idle, endpoint=endpoint) == 0, idle
