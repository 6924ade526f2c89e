"""A store written by version 0.1.0 still loads and answers as 0.1.0 answered.

`tests/integration/legacy/` holds a SQLite store written by 0.1.0 (how: its README) and the
answers 0.1.0 gave through the public API. The store is opened by today's server: every
table and hand must answer the same, and the hand 0.1.0 left in progress must play on.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict

from fiftyk_referee.domain.deal import commitment
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, Signer
from fiftyk_referee.service.trust.verifier import NO_CHAIN, OK, SKIPPED, verify
from tests.e2e.harness import LiveServer, Seated, hidden_cards, play_out, server_config

LEGACY = Path(__file__).parent.parent / "integration" / "legacy"
STORE = LEGACY / "store-0.1.0.sqlite.gz"
ANSWERS = LEGACY / "expected-0.1.0.json.gz"
PLAYERS = 4
RECEIPTS = "service.application:CommandReceipt."
# How each class 0.1.0 stored is published today (written out here, not derived from the
# code, so a change to the published name of an old event fails this test).
PUBLISHED_AS = {
    "domain.table:Table.Opened": "table.opened",
    "domain.table:Table.SeatTaken": "table.seat_taken",
    "domain.table:Table.SeatLeft": "table.seat_left",
    "domain.table:Table.HandStarted": "table.hand_started",
    "domain.table:Table.HandRecorded": "table.hand_recorded",
    "domain.table:Table.MatchEnded": "table.match_ended",
    "domain.hand:Hand.Dealt": "fiftyk.hand_dealt",
    "domain.hand:Hand.CardsPlayed": "fiftyk.cards_played",
    "domain.hand:Hand.Passed": "fiftyk.passed",
    "domain.hand:Hand.Resigned": "fiftyk.resigned",
    "domain.hand:Hand.TrickWon": "fiftyk.trick_won",
    "domain.hand:Hand.CardsDrawn": "fiftyk.cards_drawn",
    "domain.hand:Hand.Announced": "fiftyk.announced",
    "domain.hand:Hand.WentOut": "fiftyk.went_out",
    "domain.hand:Hand.HandEnded": "fiftyk.hand_ended",
}


def assert_answers(now: Any, then: Any, where: str = "") -> None:
    """`now` answers everything `then` did, the same way (fields added since are allowed)."""
    if isinstance(then, dict):
        assert isinstance(now, dict), where
        for key, value in then.items():
            assert key in now, f"{where}.{key} is gone"
            assert_answers(now[key], value, f"{where}.{key}")
    elif isinstance(then, list):
        assert isinstance(now, list) and len(now) == len(then), where
        for index, (item_now, item_then) in enumerate(zip(now, then, strict=True)):
            assert_answers(item_now, item_then, f"{where}[{index}]")
    else:
        assert now == then, where


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    """What 0.1.0 answered."""
    with gzip.open(ANSWERS, "rt", encoding="utf-8") as file:
        answers: dict[str, Any] = json.load(file)
    return answers


@pytest.fixture(scope="module")
def legacy_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Today's server on a copy of the 0.1.0 store."""
    folder = tmp_path_factory.mktemp("legacy")
    store = folder / "store.sqlite"
    with gzip.open(STORE, "rb") as source, store.open("wb") as target:
        shutil.copyfileobj(source, target)
    live = LiveServer(server_config(folder, database_url=str(store)))
    yield live
    live.stop()


def test_every_table_of_a_0_1_0_store_answers_as_before(
        legacy_server: LiveServer, expected: dict[str, Any]) -> None:
    audit = legacy_server.audit()
    for table_id, answer in expected["tables"].items():
        assert_answers(MessageToDict(audit.get_table(table_id)), answer["table"])
        assert_answers(MessageToDict(audit.scores(table_id)), answer["scores"])


def test_every_hand_of_a_0_1_0_store_exports_the_same_transcript(
        legacy_server: LiveServer, expected: dict[str, Any]) -> None:
    audit = legacy_server.audit()
    live_hand = expected["live"]["hand_id"]
    for hand_id, answer in expected["hands"].items():
        transcript = audit.export_transcript(hand_id)
        events = len(audit.all_hand_events(hand_id))
        if hand_id == live_hand:
            # The hand in progress has a 30 s turn clock that ran out long ago: the server
            # that opens the store may already have acted for the seat to play. What 0.1.0
            # recorded is still there, unchanged, in front of it.
            recorded = answer["transcript"]["actions"]
            assert transcript["actions"][:len(recorded)] == recorded
            transcript["actions"] = recorded
            assert events >= answer["events"]
        else:
            assert events == answer["events"], hand_id
            # A finished hand's export now carries its deal inputs, and they open its
            # commitment: the deck 0.1.0 recorded is the one the seed deals.
            deal = transcript.pop("deal")
            seed = bytes.fromhex(deal["seed"]) if deal["seed"] else None
            assert deal["commitment"] == commitment(seed, transcript["deck"]), hand_id
        transcript.pop("deal", None)
        assert transcript == answer["transcript"], hand_id


@pytest.fixture(scope="module")
def stored_topics(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[int, str]]:
    """(position, topic) of every event 0.1.0 stored, read from the database file itself."""
    copy = tmp_path_factory.mktemp("legacy-read") / "store.sqlite"
    with gzip.open(STORE, "rb") as source, copy.open("wb") as target:
        shutil.copyfileobj(source, target)
    with sqlite3.connect(copy) as database:
        rows = database.execute(
            "SELECT rowid, topic FROM stored_events ORDER BY rowid")
        return [(int(position), str(topic)) for position, topic in rows]


def _whole_feed(client: RefereeClient, until: int) -> list[pb.Event]:
    events: list[pb.Event] = []
    position = 0
    while True:
        page = client.read_events(after_position=position, limit=1000)
        events.extend(e for e in page.events if e.position <= until)
        position = page.last_position
        if not page.has_more or position >= until:
            return events


def test_the_whole_feed_of_a_0_1_0_store_reads_as_typed_public_events(
        legacy_server: LiveServer, expected: dict[str, Any],
        stored_topics: list[tuple[int, str]]) -> None:
    last_stored = stored_topics[-1][0]
    public = [(position, topic) for position, topic in stored_topics
              if not topic.startswith(RECEIPTS)]
    assert len(public) < len(stored_topics)  # the store holds receipts, never published
    feed = _whole_feed(legacy_server.audit(), last_stored)
    assert [e.position for e in feed] == [position for position, _ in public]
    assert [e.name for e in feed] == [PUBLISHED_AS[topic] for _, topic in public]
    for event in feed:  # every event typed, its payload the one its name says
        assert event.WhichOneof("payload") == event.name.replace(".", "_"), event
    versions: dict[str, list[int]] = {}
    for event in feed:
        versions.setdefault(event.aggregate_id, []).append(event.aggregate_version)
    assert all(v == list(range(1, len(v) + 1)) for v in versions.values())
    assert Counter(e.name for e in feed)["table.opened"] == len(expected["tables"])
    assert {e.aggregate_id for e in feed if e.name == "fiftyk.hand_dealt"} == set(
        expected["hands"])
    platform_feed = _whole_feed(legacy_server.platform(), last_stored)
    assert [e.position for e in platform_feed] == [e.position for e in feed]
    assert not [e for e in platform_feed if hidden_cards(e)]


def test_the_hand_results_of_a_0_1_0_store_are_published_as_its_score_sheets_show(
        legacy_server: LiveServer, expected: dict[str, Any],
        stored_topics: list[tuple[int, str]]) -> None:
    audit = legacy_server.audit()
    feed = _whole_feed(audit, stored_topics[-1][0])
    ended = {e.aggregate_id: e.fiftyk_hand_ended for e in feed
             if e.HasField("fiftyk_hand_ended")}
    recorded = {e.table_hand_recorded.hand_id: e.table_hand_recorded for e in feed
                if e.HasField("table_hand_recorded")}
    dealt = {e.aggregate_id: e.fiftyk_hand_dealt for e in feed
             if e.HasField("fiftyk_hand_dealt")}
    assert ended and set(ended) == set(recorded)
    checked = 0
    for answer in expected["tables"].values():
        for row in answer["scores"].get("hands", []):
            event = ended[row["handId"]]
            assert MessageToDict(event.result) == row["result"]
            assert event.scores == recorded[row["handId"]].scores
            # The revealed seed opens the deal's commitment to the deck 0.1.0 exported.
            deck = expected["hands"][row["handId"]]["transcript"]["deck"]
            assert commitment(bytes.fromhex(event.deal_seed), deck) == (
                dealt[row["handId"]].deal_commitment)
            checked += 1
    assert checked == len(ended)
    history = audit.all_hand_events(next(iter(ended)))
    assert [e.aggregate_version for e in history] == list(range(1, len(history) + 1))
    assert history[0].fiftyk_hand_dealt.deck and history[-1].HasField("fiftyk_hand_ended")


def test_a_hand_left_in_progress_by_0_1_0_plays_to_its_end(
        legacy_server: LiveServer, expected: dict[str, Any]) -> None:
    live = expected["live"]
    tokens: list[str] = live["seat_tokens"]
    seated = Seated(live["table_id"], PLAYERS, tokens,
                    [legacy_server.client(token=token) for token in tokens],
                    legacy_server.platform())
    view = seated.platform.hand_view(seated.table_id, live["hand_id"])
    final, commands = play_out(seated, view, random.Random(3))
    assert commands > 0
    assert final.HasField("result") and final.result.places
    table = seated.platform.get_table(seated.table_id)
    assert table.hands_played == 1 and not table.HasField("current_hand_id")
    # Its events from 0.1.0 carry no chain link; the ones recorded since chain onto them,
    # its table chains its head in, and it is the ledger's first hand.
    evidence = legacy_server.audit().export_evidence(live["hand_id"])
    report = verify(evidence, trusted=[Signer.from_text(DEV_SIGNING_KEY).public])
    assert report.ok, "\n".join(map(str, report.lines))
    chain = next(line for line in report.lines if line.check == "chain")
    assert chain.status == OK and "earlier events unchained" in chain.detail
    assert evidence["ledger"]["index"] == 0
    assert legacy_server.audit().verify_hand(live["hand_id"]).ok


def test_hands_finished_by_0_1_0_verify_as_no_chain_never_as_tampered(
        legacy_server: LiveServer, expected: dict[str, Any]) -> None:
    audit = legacy_server.audit()
    trusted = [Signer.from_text(DEV_SIGNING_KEY).public]
    for hand_id in expected["hands"]:
        if hand_id == expected["live"]["hand_id"]:
            continue
        report = verify(audit.export_evidence(hand_id), trusted=trusted)
        assert report.ok, hand_id
        statuses = {line.check: line.status for line in report.lines}
        assert statuses["chain"] == NO_CHAIN and statuses["ledger"] == SKIPPED
        assert statuses["re-rule"] == OK and statuses["commitment"] == OK
        checked = audit.verify_hand(hand_id)
        assert checked.ok
        assert {c.check: c.status for c in checked.checks}["table link"] == NO_CHAIN
