"""Complete hands of every preset through gRPC, with every seat watching the table.

Bots sit at a table created with the platform key and play a seeded hand to its end through
the real server. Meanwhile every seat, the audit role and the platform follow WatchTable;
seat 0 drops its connection every few messages and resumes from the last position on a new
channel. Afterwards the streams are checked against the global feed and the audit view:
nothing missing, nothing twice, and no seat ever shown another seat's cards.
"""

from __future__ import annotations

import random
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from fiftyk_referee.domain.fiftyk.rulesets import PRESETS
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY, DEV_PLATFORM_KEY
from tests.e2e.harness import (
    COMPLETED,
    LiveServer,
    Watcher,
    hidden_cards,
    play_out,
    seat_bots,
    seeded_deck,
    server_config,
    table_feed,
)

# One player count per preset, covering 2..6 seats across the presets.
PLAYERS = {"classic": 4, "jinzhou": 4, "fuzhou": 4, "jiaodong": 4, "qq4": 4, "qq3": 3,
           "five_card": 3, "six_card": 2, "six_card_two_packs": 6}
RESUMING_SEAT = 0
RESUME_EVERY = 7
VIEWING_SEAT = 1
VIEWED_PRESETS = ("classic", "six_card")


def test_the_preset_list_covers_every_preset() -> None:
    assert set(PLAYERS) == set(PRESETS)


def _check_seat_stream(seat: int, messages: list[pb.WatchTableResponse],
                       audit: list[pb.WatchTableResponse], dealt: pb.HandView) -> None:
    """A seat's stream is the audit stream with other seats' cards taken out, and no more."""
    assert [m.event.position for m in messages] == [a.event.position for a in audit]
    own_cards: Counter[str] = Counter()
    for message, full in zip(messages, audit, strict=True):
        assert (message.event.name, message.hand_id) == (full.event.name, full.hand_id)
        seen, everything = message.event, full.event
        kind = seen.WhichOneof("payload")
        assert kind == everything.WhichOneof("payload") == seen.name.replace(".", "_")
        if kind == "fiftyk_hand_dealt":
            deal = seen.fiftyk_hand_dealt
            assert not deal.deck and not deal.HasField("deal_seed")
            assert everything.fiftyk_hand_dealt.deck and deal.deal_commitment
            assert Counter(deal.hands[seat].cards) == Counter(dealt.seats[seat].cards)
            assert [h.card_count for h in deal.hands] == [len(s.cards) for s in dealt.seats]
            assert not [h for h in deal.hands if h.seat != seat and h.cards]
            own_cards.update(deal.hands[seat].cards)
        elif kind == "fiftyk_cards_drawn" and everything.fiftyk_cards_drawn.seat != seat:
            drawn = everything.fiftyk_cards_drawn
            assert seen.fiftyk_cards_drawn == pb.FiftykCardsDrawn(seat=drawn.seat,
                                                                  count=len(drawn.cards))
        else:
            assert seen == everything
            if kind == "fiftyk_cards_drawn":
                own_cards.update(seen.fiftyk_cards_drawn.cards)
    assert sum(own_cards.values()) >= len(dealt.seats[seat].cards)


def _check_views(seat: int, messages: list[pb.WatchTableResponse],
                 audit: RefereeClient) -> None:
    """With include_views every hand event carries the seat's own view, and only that —
    the state right after the event, as the audit role's replay of that version has it."""
    for message in messages:
        if message.hand_id:
            assert message.HasField("hand") and not message.HasField("table")
            assert message.hand.viewer_seat == seat and not message.hand.full_view
            assert all(not state.cards for state in message.hand.seats)
            assert not message.hand.stock
            assert message.hand.version == message.event.aggregate_version
            then = audit.hand_at(message.hand_id, message.hand.version)
            assert sorted(message.hand.own_cards) == sorted(then.seats[seat].cards)
            assert message.hand.trick == then.trick
            assert message.hand.turn_seat == then.turn_seat
            assert message.hand.status == then.status
        else:
            assert message.HasField("table") and not message.HasField("hand")
            assert message.table.version == message.event.aggregate_version


def play_watched_hand(server: LiveServer, preset: str, players: int, seed: int, *,
                      with_views: bool = False) -> None:
    """One complete hand with watchers on every seat; checks results and every stream.

    `with_views` has seat 1 ask for its views with every event as well (a rebuild per event,
    so only some tests do).
    """
    seated = seat_bots(server, preset, players, allow_preset_deck=True)
    table_id = seated.table_id
    seat_watchers = [
        Watcher(server.target, table_id, {"token": token},
                resume_every=RESUME_EVERY if seat == RESUMING_SEAT else 0,
                include_views=with_views and seat == VIEWING_SEAT).start()
        for seat, token in enumerate(seated.tokens)
    ]
    audit_watcher = Watcher(server.target, table_id, {"audit_key": DEV_AUDIT_KEY}).start()
    public_watcher = Watcher(server.target, table_id, {"platform_key": DEV_PLATFORM_KEY}).start()

    started = seated.platform.start_hand(table_id, deck=seeded_deck(preset, seed)).hand
    assert not started.HasField("viewer_seat") and not started.own_cards
    final, commands = play_out(seated, started, random.Random(seed))
    assert final.status == COMPLETED and final.HasField("result") and commands > players

    audit = server.audit()
    transcript = audit.export_transcript(final.hand_id)
    ruling = audit.adjudicate(transcript)
    assert ruling["status"] == "completed"
    assert [Decimal(str(s["score"])) for s in ruling["seats"]] == [
        Decimal(s.score) for s in final.result.seats]
    scores = seated.platform.scores(table_id)
    assert [h.hand_id for h in scores.hands] == [final.hand_id]

    feed = table_feed(audit, table_id, {final.hand_id})
    last = feed[-1].position
    audit_stream = audit_watcher.finish(last)
    assert [m.event for m in audit_stream] == feed
    assert {m.event.name for m in audit_stream} >= {
        "table.opened", "table.seat_taken", "table.hand_started", "fiftyk.hand_dealt",
        "fiftyk.cards_played", "fiftyk.hand_ended", "table.hand_recorded"}
    dealt = audit.hand_at(final.hand_id, 1)
    for seat, watcher in enumerate(seat_watchers):
        messages = watcher.finish(last)
        _check_seat_stream(seat, messages, audit_stream, dealt)
        if with_views and seat == VIEWING_SEAT:
            _check_views(seat, messages, audit)
    assert seat_watchers[RESUMING_SEAT].connections > len(audit_stream) // RESUME_EVERY
    public_stream = public_watcher.finish(last)
    assert [m.event for m in public_stream] == table_feed(seated.platform, table_id,
                                                          {final.hand_id})
    assert not [m for m in public_stream if hidden_cards(m.event)]


@pytest.mark.parametrize("preset", sorted(PLAYERS))
def test_bots_play_a_complete_hand_of_every_preset_while_every_seat_watches(
        server: LiveServer, preset: str) -> None:
    play_watched_hand(server, preset, PLAYERS[preset], seed=sorted(PLAYERS).index(preset) + 1,
                      with_views=preset in VIEWED_PRESETS)


@pytest.mark.postgres
def test_a_complete_watched_hand_on_postgresql(fresh_postgres_db: str, tmp_path: Path) -> None:
    live = LiveServer(server_config(tmp_path, database_url=fresh_postgres_db))
    try:
        play_watched_hand(live, "classic", 4, seed=11, with_views=True)
    finally:
        live.stop()
