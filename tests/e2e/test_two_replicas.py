"""Two `fiftyk serve` processes on one PostgreSQL database, as docker compose runs them.

Replica A creates the schema; replica B starts once A is up, without creating it. Both get
the same real secrets from the environment, so seat tokens issued by one are honoured by the
other. Several tables are played at once; each table is opened and filled through both
replicas, its commands alternate between them, and every fifth command is sent through both
at the same moment with the same request id. Afterwards the stored streams must show nothing
lost and nothing applied twice, the scores must equal the adjudication of the exported
transcripts, a WatchTable stream on A must have seen the events written through B, and the
two replicas' own metrics endpoints must add up to what the clients did.
"""

from __future__ import annotations

import secrets
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import grpc
import pytest
from eventsourcing.utils import get_topic

from fiftyk_referee.domain.fiftyk.transcript import adjudicate
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import parse_database_url
from fiftyk_referee.service.ops.config_keys import AUDIT_KEY, LOG_LEVEL, PLATFORM_KEY, TOKEN_SECRET
from fiftyk_referee.service.trust.receipts import CommandReceipt
from tests.e2e.live import (
    ServeProcess,
    Tally,
    call,
    command_events,
    feed_of,
    open_table,
    play_hand,
    scrape,
    start_serve,
    unexplained_events,
    wait_until,
)
from tests.support.pgserver import ThrowawayPostgres, create_database, drop_database

pytestmark = pytest.mark.postgres

TABLES = 3
REPLICAS = 2
A, B = 0, 1
DUPLICATE_EVERY = 5
PLAYERS = 4
SEED = 4242
RECEIPT_TOPIC = get_topic(CommandReceipt)
TABLE_EVENTS = Counter({"table.opened": 1, "table.seat_taken": PLAYERS,
                        "table.hand_started": 1, "table.hand_recorded": 1})


@dataclass
class PlayedTable:
    """One table played through both replicas, and what its clients did."""

    table_id: str
    hand_id: str = ""
    tally: Tally = field(default_factory=Tally)


@dataclass
class Topology:
    """The replicas, an audit client of each, the tables played and A's watch stream."""

    replicas: list[ServeProcess]
    platforms: list[RefereeClient]
    audits: list[RefereeClient]
    tables: list[PlayedTable]
    watched: list[pb.WatchTableResponse]
    database: str

    @property
    def tally(self) -> Tally:
        """Every table's client tally, added up."""
        total = Tally()
        for table in self.tables:
            total.merge(table.tally)
        return total


@pytest.fixture(scope="module")
def shared_database(postgres_server: ThrowawayPostgres) -> Iterator[str]:
    """A fresh database for this module's replicas (as `fresh_postgres_db`, module-wide)."""
    name = f"fiftyk_replicas_{secrets.token_hex(6)}"
    admin = postgres_server.url("postgres")
    create_database(admin, name)
    yield postgres_server.url(name)
    drop_database(admin, name)


def _watch(client: RefereeClient, table_id: str, into: list[pb.WatchTableResponse]
           ) -> Any:
    stream = client.watch(table_id)

    def read() -> None:
        try:
            for message in stream:
                into.append(message)
        except grpc.RpcError:  # the cancel ends the stream; the assertions check what came
            return

    thread = threading.Thread(target=read, name="watch-on-A", daemon=True)
    thread.start()
    return stream, thread


def _play(table: PlayedTable, seated: Any, index: int, platforms: list[RefereeClient],
          errors: list[BaseException]) -> None:
    try:
        dealer = platforms[(index + 1) % REPLICAS]
        hand = call(table.tally, "StartHand", lambda: dealer.start_hand(table.table_id)).hand
        table.hand_id = hand.hand_id
        last = play_hand(seated, hand, table.tally, seed=SEED + index,
                         route=lambda n: (n + index) % REPLICAS,
                         duplicate_every=DUPLICATE_EVERY)
        if last.status != pb.HAND_STATUS_COMPLETED:
            raise AssertionError(f"table {index}: the hand did not complete")
    except BaseException as error:  # re-raised in the fixture's thread
        errors.append(error)


@pytest.fixture(scope="module")
def topology(tmp_path_factory: pytest.TempPathFactory, shared_database: str
             ) -> Iterator[Topology]:
    logs = Path(tmp_path_factory.mktemp("replicas"))
    keys = {TOKEN_SECRET: secrets.token_hex(24), AUDIT_KEY: secrets.token_hex(24),
            PLATFORM_KEY: secrets.token_hex(24), LOG_LEVEL: "WARNING"}
    common = ["--database-url", shared_database, "--port", "0", "--metrics-port", "0",
              "--workers", "4"]
    replicas = [start_serve([*common, "--create-schema"], keys, logs / "a.log")]
    try:
        replicas.append(start_serve([*common, "--no-create-schema"], keys, logs / "b.log"))
        clients = [RefereeClient(replica.target) for replica in replicas]
        platforms = [client.as_platform(keys[PLATFORM_KEY]) for client in clients]
        audits = [client.as_audit(keys[AUDIT_KEY]) for client in clients]
        tables, seated = [], []
        for index in range(TABLES):
            table = PlayedTable("")
            seats = open_table(platforms, table.tally, players=PLAYERS, first_route=index)
            table.table_id = seats.table_id
            tables.append(table)
            seated.append(seats)
        watched: list[pb.WatchTableResponse] = []
        stream, reader = _watch(audits[A], tables[0].table_id, watched)
        errors: list[BaseException] = []
        players = [threading.Thread(target=_play, args=(table, seats, index, platforms, errors))
                   for index, (table, seats) in enumerate(zip(tables, seated, strict=True))]
        for thread in players:
            thread.start()
        for thread in players:
            thread.join()
        if errors:
            raise errors[0]
        expected = len(feed_of(platforms[B], {tables[0].table_id, tables[0].hand_id}))
        wait_until(lambda: len(watched) >= expected, "A's watch stream to see every event")
        stream.cancel()
        reader.join()
        topology = Topology(replicas, platforms, audits, tables, watched, shared_database)
        yield topology
        for client in clients:
            client.close()
    finally:
        codes = [replica.stop() for replica in replicas]
    assert codes == [0] * REPLICAS, "a replica did not shut down cleanly on SIGTERM"


def _history(topology: Topology, table: PlayedTable) -> list[pb.Event]:
    # Read each hand through the replica that did not deal it, for good measure.
    return list(topology.audits[B].all_hand_events(table.hand_id))


def test_both_replicas_served_the_commands_of_every_table(topology: Topology) -> None:
    for table in topology.tables:
        by_route = table.tally.versions_by_route
        assert by_route[A] and by_route[B]
    for replica in topology.replicas:
        metrics = scrape(replica.metrics_port)
        assert metrics.total("grpc_server_started_total", grpc_method="Play") > 0
        assert metrics.total("grpc_server_started_total", grpc_method="Pass") > 0


def test_every_hand_stream_is_gapless_and_holds_each_applied_command_once(
    topology: Topology,
) -> None:
    for table in topology.tables:
        history = _history(topology, table)
        assert [event.aggregate_version for event in history] == list(
            range(1, len(history) + 1))
        applied = table.tally.applied
        assert command_events(history) == Counter(
            {"StartHand": 1, "Play": applied["Play"], "Pass": applied["Pass"]})
        assert unexplained_events(history) == []
        # Every duplicate pair: one applied, one answered from the receipt.
        assert table.tally.replayed["Play"] + table.tally.replayed["Pass"] > 0


def test_every_table_stream_is_gapless_with_one_event_per_table_command(
    topology: Topology,
) -> None:
    for table in topology.tables:
        events = feed_of(topology.platforms[A], {table.table_id})
        assert [e.aggregate_version for e in events] == list(range(1, len(events) + 1))
        assert Counter(e.name for e in events) == TABLE_EVENTS


def test_each_request_id_was_recorded_by_exactly_one_receipt(topology: Topology) -> None:
    # Receipts are not public events: read them from the shared store itself.
    store = Referee(persistence_env(parse_database_url(topology.database, Path("."))))
    try:
        notifications = store.recorder.select_notifications(
            start=None, limit=1_000_000, topics=[f"{RECEIPT_TOPIC}.Recorded"])
        receipts: list[Any] = [store.mapper.to_domain_event(n) for n in notifications]
    finally:
        store.close()
    ids = Counter((r.scope, r.request_id) for r in receipts)
    assert all(count == 1 for count in ids.values())
    applied = topology.tally.applied
    assert len(ids) == applied["Play"] + applied["Pass"]


def test_scores_equal_the_adjudication_of_the_exported_transcripts(topology: Topology) -> None:
    for index, table in enumerate(topology.tables):
        audit = topology.audits[index % REPLICAS]
        ruling = adjudicate(audit.export_transcript(table.hand_id))
        assert ruling["status"] == "completed" and ruling["rejected"] is None
        [ended] = [e.fiftyk_hand_ended for e in _history(topology, table)
                   if e.HasField("fiftyk_hand_ended")]
        assert [Decimal(str(s["score"])) for s in ruling["seats"]] == [
            Decimal(s.score) for s in ended.result.seats]
        assert ruling["finish_order"] == list(ended.finish_order)
        sheet = topology.platforms[(index + 1) % REPLICAS].scores(table.table_id)
        [row] = sheet.hands
        assert row.hand_id == table.hand_id
        assert [Decimal(s.score) for s in row.result.seats] == [
            Decimal(str(s["score"])) for s in ruling["seats"]]


def test_a_watch_stream_on_one_replica_sees_the_events_written_through_the_other(
    topology: Topology,
) -> None:
    table = topology.tables[0]
    feed = feed_of(topology.platforms[A], {table.table_id, table.hand_id})
    seen = [(m.event.aggregate_id, m.event.aggregate_version) for m in topology.watched]
    assert seen == [(e.aggregate_id, e.aggregate_version) for e in feed]
    through_b = table.tally.versions_by_route[B]
    assert through_b and through_b <= set(seen)


def test_the_replicas_metrics_add_up_to_what_the_clients_did(topology: Topology) -> None:
    scrapes = [scrape(replica.metrics_port) for replica in topology.replicas]
    tally = topology.tally

    def summed(name: str, **labels: str) -> float:
        return sum(s.total(name, **labels) for s in scrapes)

    for method in ("Play", "Pass", "StartHand", "JoinTable", "CreateTable"):
        assert summed("grpc_server_started_total", grpc_method=method) == tally.calls[method]
        assert summed("grpc_server_handled_total", grpc_method=method,
                      grpc_code="OK") == tally.ok[method]
    assert summed("fiftyk_event_store_append_seconds_count") == sum(tally.applied.values())
    assert summed("fiftyk_idempotent_replays_total") == sum(tally.replayed.values()) > 0
    assert summed("fiftyk_commands_total", command="play",
                  outcome="accepted") == tally.ok["Play"]
    assert summed("fiftyk_hands_completed_total") == TABLES
    assert summed("fiftyk_command_retries_total") == summed("fiftyk_event_store_conflicts_total")


def test_neither_replica_logged_a_server_error(topology: Topology) -> None:
    for replica in topology.replicas:
        assert not [line for line in replica.log_lines() if '"level": "ERROR"' in line]
