"""Idempotent retries and racing clients through gRPC.

Racing threads each hold a channel of their own and start together at a barrier, so their
calls really overlap in the server.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from fiftyk_referee.service.errors import ServiceReason
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.e2e.harness import LiveServer, Seated, seat_bots, seeded_deck, server_config

RACERS = 8
BARRIER_TIMEOUT_SECONDS = 20
CONFLICT_ROUNDS = 30


def _race(server: LiveServer, credentials: list[dict[str, str]],
          act: Callable[[RefereeClient, int], Any]) -> list[Any]:
    """Run `act(client, i)` in one thread per credential set, all released at once.

    Returns per racer the response, or the `grpc.RpcError` it failed with.
    """
    clients = [server.client(**c) for c in credentials]
    results: list[Any] = [None] * len(clients)
    barrier = threading.Barrier(len(clients))

    def run(index: int) -> None:
        barrier.wait(BARRIER_TIMEOUT_SECONDS)
        try:
            results[index] = act(clients[index], index)
        except grpc.RpcError as error:
            results[index] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(BARRIER_TIMEOUT_SECONDS)
    return results


def _outcomes(results: list[Any]) -> Counter[str]:
    """`ok` or `CODE/REASON` per racer."""
    counted: Counter[str] = Counter()
    for result in results:
        if isinstance(result, grpc.RpcError):
            details = error_details(result)
            counted[f"{details.code.name}/{details.reason}"] += 1
        else:
            counted["ok"] += 1
    return counted


def _dealt(server: LiveServer, seed: int) -> tuple[Seated, pb.HandView]:
    seated = seat_bots(server, "classic", 4, allow_preset_deck=True, prefix=f"race{seed}")
    hand = seated.platform.start_hand(seated.table_id, deck=seeded_deck("classic", seed)).hand
    return seated, hand


def _head(platform: RefereeClient) -> int:
    position = 0
    while True:
        page = platform.read_events(after_position=position, limit=1000)
        position = page.last_position
        if not page.has_more:
            return position


def _event_types(server: LiveServer, hand_id: str) -> Counter[str]:
    return Counter(event.name for event in server.audit().all_hand_events(hand_id))


def test_a_retried_command_returns_the_original_outcome_and_writes_nothing(
        server: LiveServer) -> None:
    platform = server.platform()
    create_id = f"create-{uuid.uuid4()}"
    created = platform.create_table("classic", 4, request_id=create_id)
    table_id = created.table.table_id
    joined = [platform.join_table(table_id, f"idem-{s}", s, request_id=f"join-{s}")
              for s in range(4)]
    dealt = platform.start_hand(table_id, request_id="deal-1")
    hand_id = dealt.hand.hand_id
    leader = server.client(token=joined[dealt.hand.turn_seat].seat_token)
    card = leader.hand_view(table_id).own_cards[0]
    played = leader.play(table_id, hand_id, [card], request_id="lead-1")
    head = _head(platform)

    again_created = platform.create_table("classic", 4, request_id=create_id)
    again_joined = platform.join_table(table_id, "idem-2", 2, request_id="join-2")
    again_dealt = platform.start_hand(table_id, request_id="deal-1")
    again_played = leader.play(table_id, hand_id, [card], request_id="lead-1")

    assert not any(r.replayed for r in (created, joined[2], dealt, played))
    assert all(r.replayed for r in (again_created, again_joined, again_dealt, again_played))
    assert _head(platform) == head  # nothing was written
    assert (again_created.table.table_id, again_created.version) == (table_id, created.version)
    assert (again_joined.seat, again_joined.version) == (2, joined[2].version)
    assert server.client(token=again_joined.seat_token).get_table(table_id).table_id == table_id
    assert (again_dealt.hand.hand_id, again_dealt.version) == (hand_id, dealt.version)
    assert again_played.hand == played.hand and again_played.version == played.version
    assert _event_types(server, hand_id)["fiftyk.cards_played"] == 1

    # The game moves on; a late retry still answers with the original outcome.
    follower = server.client(token=joined[played.hand.turn_seat].seat_token)
    follower.pass_turn(table_id, hand_id, request_id="follow-1")
    late = leader.play(table_id, hand_id, [card], request_id="lead-1")
    assert late.replayed and late.version == played.version
    with pytest.raises(grpc.RpcError) as caught:  # the id names another command now
        follower.pass_turn(table_id, hand_id, request_id="lead-1")
    assert error_details(caught.value).reason == ServiceReason.REQUEST_ID_REUSED


def test_racing_duplicates_of_one_request_are_applied_once(server: LiveServer) -> None:
    seated, hand = _dealt(server, 31)
    token = seated.tokens[hand.turn_seat]
    card = seated.seats[hand.turn_seat].hand_view(seated.table_id).own_cards[0]
    results = _race(server, [{"token": token}] * RACERS,
                    lambda c, _: c.play(seated.table_id, hand.hand_id, [card],
                                        request_id="same-request"))
    assert _outcomes(results) == {"ok": RACERS}
    assert sorted(r.replayed for r in results) == [False] + [True] * (RACERS - 1)
    assert len({r.version for r in results}) == 1
    assert _event_types(server, hand.hand_id)["fiftyk.cards_played"] == 1


def test_racing_plays_for_one_seat_have_exactly_one_winner(server: LiveServer) -> None:
    seated, hand = _dealt(server, 32)
    leader = seated.seats[hand.turn_seat]
    plays = list(leader.legal_plays(seated.table_id, hand.hand_id).plays)
    assert len(plays) >= RACERS
    results = _race(server, [{"token": seated.tokens[hand.turn_seat]}] * RACERS,
                    lambda c, i: c.play(seated.table_id, hand.hand_id, plays[i].cards))
    assert _outcomes(results) == {"ok": 1, "FAILED_PRECONDITION/NOT_YOUR_TURN": RACERS - 1}
    assert _event_types(server, hand.hand_id)["fiftyk.cards_played"] == 1


def test_racing_players_for_one_seat_seat_exactly_one(server: LiveServer) -> None:
    table = server.platform().create_table("classic", 4).table
    results = _race(server, [{"platform_key": DEV_PLATFORM_KEY}] * RACERS,
                    lambda c, i: c.join_table(table.table_id, f"racer-{i}", 0))
    assert _outcomes(results) == {"ok": 1, "FAILED_PRECONDITION/SEAT_TAKEN": RACERS - 1}
    winner = next(r for r in results if not isinstance(r, grpc.RpcError))
    assert server.platform().get_table(table.table_id).seats[0].player_id == \
        winner.table.seats[0].player_id


def test_racing_players_for_different_seats_all_sit_down(server: LiveServer) -> None:
    table = server.platform().create_table("six_card_two_packs", 6).table
    results = _race(server, [{"platform_key": DEV_PLATFORM_KEY}] * 6,
                    lambda c, i: c.join_table(table.table_id, f"racer-{i}", i))
    assert _outcomes(results) == {"ok": 6}  # losers of a version race were retried
    after = server.platform().get_table(table.table_id)
    assert [s.player_id for s in after.seats] == [f"racer-{i}" for i in range(6)]
    assert after.version == 1 + 6


def test_a_conflict_is_aborted_when_the_application_does_not_retry(tmp_path: Path) -> None:
    live = LiveServer(server_config(tmp_path))
    try:
        live.running.app.runner.max_attempts = 1  # no transparent retry: the loser sees ABORTED
        platform = live.platform()
        aborted: list[grpc.RpcError] = []
        for _ in range(CONFLICT_ROUNDS):
            table = platform.create_table("six_card_two_packs", 6).table
            results = _race(live, [{"platform_key": DEV_PLATFORM_KEY}] * 6,
                            lambda c, i, t=table: c.join_table(t.table_id, f"racer-{i}", i))
            aborted = [r for r in results if isinstance(r, grpc.RpcError)]
            if aborted:
                seated = {s.player_id for s in platform.get_table(table.table_id).seats
                          if s.HasField("player_id")}
                winners = {f"racer-{i}" for i, r in enumerate(results)
                           if not isinstance(r, grpc.RpcError)}
                assert seated == winners  # an aborted command wrote nothing
                break
        assert aborted, f"no conflict in {CONFLICT_ROUNDS} rounds of 6 racing joins"
        details = error_details(aborted[0])
        assert (details.code, details.reason) == (grpc.StatusCode.ABORTED,
                                                  ServiceReason.CONCURRENT_UPDATE)
        assert all(error_details(e).code == grpc.StatusCode.ABORTED for e in aborted)
    finally:
        live.stop()
