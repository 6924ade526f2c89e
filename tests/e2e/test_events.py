"""The three event calls through a real channel: ReadEvents, GetHandHistory, WatchTable.

One match of one 5-card hand (a stock to draw from, announcements, a resignation, a seat
freed once the match is over) is played through the server; then its events are read back
through each call, as the platform, a seat and the audit role, and checked against each
other and against the score sheet.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from itertools import islice

import grpc
import pytest

from fiftyk_referee.service.core.public_events import PUBLIC_EVENTS
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e.harness import LiveServer, Seated, hidden_cards, play_out, seat_bots, table_feed

PRESET = "five_card"
PLAYERS = 3
OPTIONS = {"hands": 1, "announce_at": 2}
RESIGNING_SEAT = 2
WATCHING_SEAT = 0
HISTORY_PAGE = 7
WATCH_TIMEOUT_SECONDS = 30


@dataclass
class Match:
    """The match played, and its events as the platform and the audit role read them."""

    seated: Seated
    hand_id: str
    final: pb.HandView
    audit: RefereeClient
    audit_feed: list[pb.Event]
    platform_feed: list[pb.Event]


@pytest.fixture(scope="module")
def match(server: LiveServer) -> Match:
    seated = seat_bots(server, PRESET, PLAYERS, options=OPTIONS, prefix="events")
    dealt = seated.platform.start_hand(seated.table_id).hand
    seated.seats[RESIGNING_SEAT].resign(seated.table_id, dealt.hand_id)
    view = seated.platform.hand_view(seated.table_id, dealt.hand_id)
    final, _ = play_out(seated, view, random.Random(11))
    seated.platform.leave_table(seated.table_id, RESIGNING_SEAT)
    audit = server.audit()
    ids = {dealt.hand_id}
    return Match(seated, dealt.hand_id, final, audit,
                 table_feed(audit, seated.table_id, ids),
                 table_feed(seated.platform, seated.table_id, ids))


def test_every_event_is_typed_and_named_publicly(match: Match) -> None:
    names = [e.name for e in match.audit_feed]
    assert set(names) <= set(PUBLIC_EVENTS.names)
    assert set(names) >= {
        "table.opened", "table.seat_taken", "table.hand_started", "table.hand_recorded",
        "table.match_ended", "table.seat_left", "fiftyk.hand_dealt", "fiftyk.cards_played",
        "fiftyk.passed", "fiftyk.resigned", "fiftyk.trick_won", "fiftyk.cards_drawn",
        "fiftyk.went_out", "fiftyk.hand_ended"}
    for event in match.audit_feed:
        assert event.WhichOneof("payload") == event.name.replace(".", "_")
        assert event.aggregate_id in (match.seated.table_id, match.hand_id)
    assert names[-3:] == ["table.hand_recorded", "table.match_ended", "table.seat_left"]
    assert match.audit_feed[-3].table_hand_recorded.hand_id == match.hand_id
    assert match.audit_feed[-1].table_seat_left.seat == RESIGNING_SEAT


def test_read_events_shows_the_platform_no_card_and_the_audit_role_every_card(
        match: Match) -> None:
    platform, audit = match.platform_feed, match.audit_feed
    assert [e.position for e in platform] == [e.position for e in audit]
    assert not [e for e in platform if hidden_cards(e)]
    differing = {e.name for e, full in zip(platform, audit, strict=True) if e != full}
    assert differing == {"fiftyk.hand_dealt", "fiftyk.cards_drawn"}
    [dealt] = [e.fiftyk_hand_dealt for e in audit if e.HasField("fiftyk_hand_dealt")]
    assert len(dealt.deck) == 54 and dealt.HasField("deal_seed")
    assert dealt.player_ids == [f"events-{seat}" for seat in range(PLAYERS)]
    assert [h.card_count for h in dealt.hands] == [5] * PLAYERS
    assert dealt.stock_count == 54 - 5 * PLAYERS


def test_read_events_filters_by_public_name(match: Match) -> None:
    wanted = ["table.seat_taken", "fiftyk.went_out"]
    filtered = table_feed(match.seated.platform, match.seated.table_id, {match.hand_id},
                          topics=wanted)
    assert filtered == [e for e in match.platform_feed if e.name in wanted]
    assert [e.table_seat_taken.player_id for e in filtered if e.name == wanted[0]] == [
        f"events-{seat}" for seat in range(PLAYERS)]


def test_the_hand_ended_event_carries_the_score_sheet_in_exact_decimals(match: Match) -> None:
    [ended] = [e.fiftyk_hand_ended for e in match.audit_feed if e.HasField("fiftyk_hand_ended")]
    sheet = match.seated.platform.scores(match.seated.table_id)
    assert ended.result == sheet.hands[0].result == match.final.result
    assert ended.deal_seed == match.final.deal_seed
    totals = {t.side: Decimal(t.score) for t in sheet.totals}
    assert {s.side: Decimal(s.score) for s in ended.scores} == totals
    assert ended.result.places[-1] == RESIGNING_SEAT
    assert [e.fiftyk_resigned.seat for e in match.audit_feed
            if e.HasField("fiftyk_resigned")] == [RESIGNING_SEAT]


def test_get_hand_history_pages_the_hands_audit_events_by_version(match: Match) -> None:
    history: list[pb.Event] = []
    while True:
        after = history[-1].aggregate_version if history else 0
        page = match.audit.hand_history(match.hand_id, after_version=after,
                                        limit=HISTORY_PAGE)
        assert len(page.events) <= HISTORY_PAGE
        history.extend(page.events)
        if not page.has_more:
            break
    in_feed = [e for e in match.audit_feed if e.aggregate_id == match.hand_id]
    assert [e.aggregate_version for e in history] == list(range(1, len(in_feed) + 1))
    for event, fed in zip(history, in_feed, strict=True):
        assert event.position == 0
        event.position = fed.position
        assert event == fed


def _watch(client: RefereeClient, table_id: str, after: int, count: int,
           seat: int | None = None) -> list[pb.WatchTableResponse]:
    stream: Iterator[pb.WatchTableResponse] = client.watch(
        table_id, after_position=after, seat=seat, timeout=WATCH_TIMEOUT_SECONDS)
    try:
        return list(islice(stream, count))
    finally:
        stream.cancel()  # type: ignore[attr-defined]


def test_watch_table_gives_each_reader_its_view_and_resumes_after_a_position(
        match: Match, server: LiveServer) -> None:
    table_id, feed = match.seated.table_id, match.audit_feed
    seat = _watch(match.seated.seats[WATCHING_SEAT], table_id, 0, len(feed))
    as_seat = _watch(match.audit, table_id, 0, len(feed), seat=WATCHING_SEAT)
    assert [m.event for m in seat] == [m.event for m in as_seat]
    public = _watch(server.platform(), table_id, 0, len(feed))
    assert [m.event for m in public] == match.platform_feed
    assert [m.event for m in _watch(match.audit, table_id, 0, len(feed))] == feed
    for message, full in zip(seat, feed, strict=True):
        assert message.hand_id == (full.aggregate_id if full.aggregate_id != table_id else "")
        drawn = full.fiftyk_cards_drawn
        if full.HasField("fiftyk_hand_dealt"):
            hands = message.event.fiftyk_hand_dealt.hands
            assert [bool(h.cards) for h in hands] == [s == WATCHING_SEAT for s in range(PLAYERS)]
            assert hands[WATCHING_SEAT] == full.fiftyk_hand_dealt.hands[WATCHING_SEAT]
        elif full.HasField("fiftyk_cards_drawn") and drawn.seat != WATCHING_SEAT:
            assert not message.event.fiftyk_cards_drawn.cards
            assert message.event.fiftyk_cards_drawn.count == len(drawn.cards)
        else:
            assert message.event == full
    middle = len(feed) // 2
    resumed = _watch(match.seated.seats[WATCHING_SEAT], table_id, feed[middle - 1].position,
                     len(feed) - middle)
    assert [m.event for m in resumed] == [m.event for m in seat[middle:]]


def test_watch_refuses_a_seat_token_watching_as_another_seat(match: Match) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        _watch(match.seated.seats[WATCHING_SEAT], match.seated.table_id, 0, 1,
               seat=WATCHING_SEAT + 1)
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
