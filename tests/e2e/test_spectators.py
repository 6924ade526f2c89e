"""Spectators through the real API: the platform issues a spectator token for a table; its
holder watches without ever seeing a hidden card, acts for nobody, reads no other table, is
kept behind a ranked table by its delay and is refused beyond the table's limit."""

from __future__ import annotations

import queue
import random
import threading
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e import test_doudizhu
from tests.e2e.every_game import GAMES
from tests.e2e.harness import LiveServer, Seated, hidden_cards, play_out, server_config

NEGATIVE_WAIT_SECONDS = 0.5  # how long a held-back event is given to leak (never to pass)
STREAM_SECONDS = 120.0


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A referee of this module's own, with metrics on a free port."""
    live = LiveServer(server_config(tmp_path_factory.mktemp("spectators")), metrics_port=0)
    yield live
    live.stop()


def fiftyk_table(server: LiveServer, spectators: pb.SpectatorPolicy | None = None) -> Seated:
    """A 五十K table (classic, 4 seats) with a bot per seat and the given spectator policy."""
    platform = server.platform()
    table = platform.create_table("classic", 4, spectators=spectators).table
    tokens = [platform.join_table(table.table_id, f"p-{table.table_id[:6]}-{s}", s).seat_token
              for s in range(4)]
    return Seated(table.table_id, 4, tokens, [server.client(token=t) for t in tokens], platform)


def shengji_hidden(event: pb.Event) -> list[str]:
    """The cards a Shengji event shows that are not on the table for everyone."""
    kind = event.WhichOneof("payload")
    if kind == "shengji_hand_dealt":
        return list(event.shengji_hand_dealt.deck)
    if kind == "shengji_round_dealt":
        return [c for h in event.shengji_round_dealt.hands for c in h.cards]
    if kind == "shengji_kitty_taken":
        return list(event.shengji_kitty_taken.kitty)
    if kind == "shengji_kitty_buried":
        return list(event.shengji_kitty_buried.cards)
    return []


class Stream:
    """A WatchTable stream read in a thread into a queue (so a test can wait with a bound)."""

    def __init__(self, client: RefereeClient, table_id: str) -> None:
        self._call: Any = client.watch(table_id, timeout=STREAM_SECONDS)
        self.messages: queue.Queue[pb.WatchTableResponse | BaseException] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for message in self._call:
                self.messages.put(message)
        except grpc.RpcError as error:
            self.messages.put(error)

    def next(self, timeout: float = STREAM_SECONDS) -> pb.WatchTableResponse:
        """The next message (fails the test on an error or after `timeout`)."""
        item = self.messages.get(timeout=timeout)
        if isinstance(item, BaseException):
            raise item
        return item

    def until(self, done: Callable[[pb.WatchTableResponse], bool]) -> list[pb.WatchTableResponse]:
        """Messages up to and including the first that `done` accepts."""
        seen = [self.next()]
        while not done(seen[-1]):
            seen.append(self.next())
        return seen

    def close(self) -> None:
        """Cancel the stream."""
        self._call.cancel()


def _refusal(call: Callable[[], object]) -> tuple[grpc.StatusCode, str | None]:
    with pytest.raises(grpc.RpcError) as refused:
        call()
    code, reason, _ = error_reason(refused.value)
    return code, reason


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_spectator_follows_a_whole_hand_and_never_sees_a_hidden_card(
        server: LiveServer, game: str) -> None:
    table = GAMES[game].open_table(server)
    issued = table.platform.issue_spectator_token(table.table_id)
    assert issued.spectator_token.startswith("fks1.") and issued.expires_at.seconds > 0
    spectator = server.client(token=issued.spectator_token)
    stream = Stream(spectator, table.table_id)
    try:
        view = table.platform.start_hand(table.table_id).hand
        rng = random.Random(game)
        final = GAMES[game].play_out(table, view, rng)
        seen = stream.until(lambda m: m.event.name.endswith(".hand_ended"))
    finally:
        stream.close()
    hand_events = [m.event for m in seen if m.hand_id == final.hand_id]
    audit = server.audit().all_hand_events(final.hand_id)
    assert [e.aggregate_version for e in hand_events] == [e.aggregate_version for e in audit]
    for event in hand_events:
        assert not hidden_cards(event) and not shengji_hidden(event), event.name
        test_doudizhu.check_event(event, None)  # the public's view of a 斗地主 event
    assert spectator.get_table(table.table_id).table_id == table.table_id


def test_a_spectator_token_reads_only_its_table_and_acts_for_nobody(server: LiveServer) -> None:
    table = fiftyk_table(server)
    other = fiftyk_table(server)
    token = table.platform.issue_spectator_token(table.table_id).spectator_token
    spectator = server.client(token=token)
    hand = table.platform.start_hand(table.table_id).hand
    seen = spectator.hand_view(table.table_id, hand.hand_id)
    assert not seen.full_view and all(not s.cards for s in seen.seats) and not seen.own_cards
    denied = grpc.StatusCode.PERMISSION_DENIED
    assert _refusal(lambda: spectator.get_table(other.table_id)) == (denied, "WRONG_TABLE")
    assert _refusal(lambda: spectator.pass_turn(table.table_id, hand.hand_id)) == (
        denied, "SEAT_TOKEN_REQUIRED")
    assert _refusal(lambda: spectator.legal_plays(table.table_id, hand.hand_id)) == (
        denied, "SEAT_TOKEN_REQUIRED")
    assert _refusal(lambda: spectator.hand_history(hand.hand_id)) == (denied, "AUDIT_REQUIRED")
    assert _refusal(lambda: spectator.issue_spectator_token(table.table_id)) == (
        denied, "PLATFORM_REQUIRED")
    assert _refusal(lambda: spectator.hand_view(table.table_id, hand.hand_id, seat=0)) == (
        denied, "AUDIT_REQUIRED")
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    assert _refusal(lambda: server.client(token=forged).get_table(table.table_id)) == (
        grpc.StatusCode.UNAUTHENTICATED, "INVALID_TOKEN")
    seat = table.seats[0]
    assert _refusal(lambda: seat.issue_spectator_token(table.table_id)) == (
        denied, "PLATFORM_REQUIRED")
    assert _refusal(lambda: table.platform.issue_spectator_token("no-such-table"))[0] in (
        grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT)


def test_a_ranked_table_keeps_its_spectators_behind_by_its_delay(server: LiveServer) -> None:
    delay = 3
    table = fiftyk_table(server, pb.SpectatorPolicy(ranked=True, delay_actions=delay))
    assert table.platform.get_table(table.table_id).spectators.delay_actions == delay
    token = table.platform.issue_spectator_token(table.table_id).spectator_token
    spectator = server.client(token=token)
    hand = table.platform.start_hand(table.table_id).hand
    assert _refusal(lambda: spectator.hand_view(table.table_id, hand.hand_id)) == (
        grpc.StatusCode.PERMISSION_DENIED, "SPECTATOR_DELAYED")
    stream = Stream(spectator, table.table_id)
    rng = random.Random(3)
    audit = server.audit()
    view = hand
    try:
        for _ in range(10):  # ten actions; after each, the spectator is `delay` behind
            seat = view.turn_seat
            legal = table.seats[seat].legal_plays(table.table_id, hand.hand_id)
            client = table.seats[seat]
            if legal.may_pass and (not legal.plays or rng.random() < 0.5):
                view = client.pass_turn(table.table_id, hand.hand_id).hand
            else:
                view = client.play(table.table_id, hand.hand_id,
                                   rng.choice(list(legal.plays)).cards).hand
            version = audit.hand_view(table.table_id, hand.hand_id).version
            if version - delay < 1:
                continue
            stream.until(lambda m, v=version - delay: m.hand_id == hand.hand_id
                         and m.event.aggregate_version == v)
            with pytest.raises(queue.Empty):  # the next event is still held back
                stream.messages.get(timeout=NEGATIVE_WAIT_SECONDS)
        final, _ = play_out(table, view, rng)
        rest = stream.until(lambda m: m.event.name == "fiftyk.hand_ended")
        assert rest[-1].event.aggregate_version == final.version  # the end releases it all
    finally:
        stream.close()


def test_a_table_admits_no_more_spectators_than_its_limit(server: LiveServer) -> None:
    table = fiftyk_table(server, pb.SpectatorPolicy(max_spectators=1))
    tokens = [table.platform.issue_spectator_token(table.table_id).spectator_token
              for _ in range(2)]
    first = Stream(server.client(token=tokens[0]), table.table_id)
    try:
        assert first.next().event.name == "table.opened"
        second = server.client(token=tokens[1]).watch(table.table_id, timeout=STREAM_SECONDS)
        code, reason = _refusal(lambda: next(iter(second)))
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_EXCEEDED")
        # The platform is not a spectator: it watches beside them.
        platform_stream = Stream(table.platform, table.table_id)
        assert platform_stream.next().event.name == "table.opened"
        platform_stream.close()
    finally:
        first.close()
    registry = server.running.metrics.registry
    assert (registry.get_sample_value("fiftyk_spectator_tokens_issued_total") or 0) >= 2
    assert (registry.get_sample_value("fiftyk_watch_limited_total",
                                      {"scope": "spectators"}) or 0) >= 1


def test_a_spectator_policy_out_of_range_is_refused_naming_the_field(server: LiveServer) -> None:
    platform = server.platform()
    code, reason = _refusal(lambda: platform.create_table(
        "classic", 4, spectators=pb.SpectatorPolicy(delay_seconds=4000)))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
