"""Each game's own messages on the wire, for 五十K and Shengji: server reflection serves their
proto packages (a client with no .proto file decodes the Any payloads), and what a 0.2 client
reads of every answer (the 0.2 proto, frozen in tests/support/proto-0.2/) agrees with them."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import any_pb2, descriptor_pb2, descriptor_pool, message_factory, struct_pb2
from google.protobuf.message import Message
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from fiftyk_referee.service.core import bundles
from fiftyk_referee.service.games.fiftyk import fiftyk_pb2 as fpb
from fiftyk_referee.service.games.shengji import shengji_pb2 as spb
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.e2e import test_shengji
from tests.e2e.harness import LiveServer, Seated, seat_bots, server_config
from tests.e2e.live import start_serve
from tests.support import tiny_bundle

OLD_PROTO = Path(__file__).resolve().parents[1] / "support" / "proto-0.2"
COMPLETED = pb.HAND_STATUS_COMPLETED
MAX_COMMANDS = 3_000
PROTOC_TIMEOUT_SECONDS = 120
# The message each game's Any carries in a view and in a score.
GAMES = {"fiftyk": (fpb.HandView, fpb.HandResult), "shengji": (spb.HandView, spb.HandResult)}


@pytest.fixture(scope="module")
def old_pool(tmp_path_factory: pytest.TempPathFactory) -> descriptor_pool.DescriptorPool:
    """The messages of the 0.2 proto, as a client compiled from it has them."""
    out = tmp_path_factory.mktemp("proto-0.2") / "referee.pb"
    done = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", f"--proto_path={OLD_PROTO}",
         f"--descriptor_set_out={out}", "--include_imports", "fiftyk/referee/v1/referee.proto"],
        capture_output=True, text=True, timeout=PROTOC_TIMEOUT_SECONDS, check=False)
    assert done.returncode == 0, done.stderr
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file:
        pool.Add(file)
    return pool


def as_0_2(pool: descriptor_pool.DescriptorPool, message: Message) -> Message:
    """A message as a 0.2 client decodes it."""
    name = message.DESCRIPTOR.full_name
    old = message_factory.GetMessageClass(pool.FindMessageTypeByName(name))()
    old.ParseFromString(message.SerializeToString())
    return old


def same(one: Message, other: Message) -> bool:
    """Whether two messages (of a 0.2 type and a game's own) hold the same fields."""
    return one.SerializeToString(deterministic=True) == other.SerializeToString(
        deterministic=True)


def unpack(payload: any_pb2.Any, kind: type[Message]) -> Message:
    """The game's own message in an Any (which must be of that type)."""
    message = kind()
    assert payload.Unpack(message), payload.type_url
    return message


def check_view(pool: descriptor_pool.DescriptorPool, view: pb.HandView, game: str) -> None:
    """A 0.2 client's view of a hand agrees with the game's own view in `game_view`."""
    own = unpack(view.game_view, GAMES[game][0])
    old = as_0_2(pool, view)
    if game == "shengji":
        assert old.HasField("shengji") and same(old.shengji, own)
        assert not old.HasField("result")
        return
    assert isinstance(own, fpb.HandView)
    assert not old.HasField("shengji")
    assert old.HasField("stock_count") == own.HasField("stock_count")
    assert old.stock_count == own.stock_count
    assert list(old.stock) == list(own.stock)
    assert [(a.seat, a.cards) for a in old.announcements] == [
        (a.seat, a.cards) for a in own.announcements]
    assert old.HasField("top_play") == own.HasField("top_play")
    assert same(old.top_play, own.top_play)
    assert old.trick_points == own.trick_points
    assert list(old.finish_order) == list(own.finish_order)
    assert old.HasField("result") == own.HasField("result")
    assert same(old.result, own.result)


def check_scores(pool: descriptor_pool.DescriptorPool, scores: pb.GetScoresResponse,
                 game: str) -> None:
    """Each hand's 0.2 result agrees with the game's own result in `game_outcome`."""
    assert scores.hands
    field = {"fiftyk": "result", "shengji": "shengji"}[game]
    for row in as_0_2(pool, scores).hands:
        own = unpack(scores.hands[row.hand_number - 1].game_outcome, GAMES[game][1])
        assert row.WhichOneof("outcome") == field
        assert same(getattr(row, field), own)


def check_history(pool: descriptor_pool.DescriptorPool, events: list[pb.Event],
                  game: str) -> None:
    """Each event's 0.2 payload agrees with the game's own message in `game_event`."""
    assert events
    module = {"fiftyk": fpb, "shengji": spb}[game]
    for event in events:
        old = as_0_2(pool, event)
        field = old.WhichOneof("payload")
        assert field == event.name.replace(".", "_")
        camel = "".join(part.capitalize() for part in event.name.partition(".")[2].split("_"))
        assert same(getattr(old, field), unpack(event.game_event, getattr(module, camel)))


def fiftyk_views(seated: Seated, audit: RefereeClient, rng: random.Random
                 ) -> Iterator[pb.HandView]:
    """A 五十K hand played to its end by bots: every view a command answered, and the audit
    view (with the stock) after each."""
    view = seated.platform.start_hand(seated.table_id).hand
    for _ in range(MAX_COMMANDS):
        yield view
        yield audit.hand_view(seated.table_id, view.hand_id)
        if view.status == COMPLETED:
            return
        client = seated.seats[view.turn_seat]
        legal = client.legal_plays(seated.table_id, view.hand_id)
        if legal.may_pass and (not legal.plays or rng.random() < 0.3):
            view = client.pass_turn(seated.table_id, view.hand_id).hand
        else:
            view = client.play(seated.table_id, view.hand_id,
                               rng.choice(list(legal.plays)).cards).hand
    raise AssertionError("the hand did not end")


def shengji_views(seated: Seated, rng: random.Random) -> Iterator[pb.HandView]:
    """A Shengji hand played to its end by bots: every view a command answered."""
    view = seated.platform.start_hand(seated.table_id).hand
    for _ in range(MAX_COMMANDS):
        yield view
        if view.status == COMPLETED:
            return
        answered = test_shengji.step(seated, view.hand_id, rng)
        assert answered is not None
        view = answered
    raise AssertionError("the hand did not end")


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_0_2_client_reads_what_the_any_payloads_carry(
        server: LiveServer, old_pool: descriptor_pool.DescriptorPool, game: str) -> None:
    rng = random.Random(26)
    audit = server.audit()
    if game == "fiftyk":  # five cards and a stock: every 五十K-only field gets filled
        seated = seat_bots(server, "five_card", 3, prefix="any-payloads")
        views = list(fiftyk_views(seated, audit, rng))
    else:
        seated = test_shengji.shengji_table(server)
        views = list(shengji_views(seated, rng))
    for view in views:
        check_view(old_pool, view, game)
    if game == "fiftyk":
        assert any(v.stock for v in views) and any(v.HasField("top_play") for v in views)
    else:
        assert any(v.shengji.HasField("declaration") for v in views)
    assert views[-1].status == COMPLETED
    check_scores(old_pool, seated.platform.scores(seated.table_id), game)
    check_history(old_pool, audit.all_hand_events(views[-1].hand_id), game)


def test_reflection_serves_each_game_package_and_decodes_a_live_hand(tmp_path: Path) -> None:
    """A client with no .proto file at all (grpcurl, or this pool over reflection) resolves
    each game's messages by their full names, from a fresh server that has converted no
    hand yet, and decodes a real view's Any with them."""
    serving = start_serve(["--data-dir", str(tmp_path), "--port", "0", "--metrics-port", "0",
                           "--workers", "2"], {}, tmp_path / "stderr.log")
    try:
        with grpc.insecure_channel(serving.target) as channel:
            pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
            decoders = {game: message_factory.GetMessageClass(pool.FindMessageTypeByName(
                f"fiftyk.games.{game}.v1.HandView")) for game in GAMES}
            assert pool.FindMessageTypeByName("fiftyk.games.shengji.v1.Declared").fields
            file = pool.FindFileByName("fiftyk/games/fiftyk/v1/fiftyk.proto")
            assert file.package == "fiftyk.games.fiftyk.v1"
            platform = RefereeClient(serving.target, platform_key=DEV_PLATFORM_KEY)
            try:
                for game, preset, players in (("fiftyk", "classic", 4),
                                              ("shengji", "tractor", 4)):
                    table = platform.create_table(preset, players, game=game).table
                    for seat in range(players):
                        platform.join_table(table.table_id, f"reflect-{seat}", seat)
                    view = platform.start_hand(table.table_id).hand
                    assert view.game_view.type_url.endswith(f"fiftyk.games.{game}.v1.HandView")
                    decoded = decoders[game]()
                    assert view.game_view.Unpack(decoded)
                    assert same(decoded, unpack(view.game_view, GAMES[game][0]))
                    phase = {f.name: v for f, v in decoded.ListFields()}.get("phase")
                    assert phase == ("declaring" if game == "shengji" else None)
            finally:
                platform.close()
    finally:
        assert serving.stop() == 0


@pytest.fixture
def tiny_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A referee that also hosts Tiny, a game with no proto messages of its own."""
    bundles.install([*bundles.entry_point_bundles(), tiny_bundle.BUNDLE])
    live = LiveServer(server_config(tmp_path))
    try:
        yield live
    finally:
        live.stop()
        bundles.install(bundles.entry_point_bundles())


def test_a_game_without_proto_messages_sends_json_values_in_the_same_any_fields(
        tiny_server: LiveServer) -> None:
    """New games use only the Any: one without messages of its own packs a Struct there,
    the same values as its JSON fields (`game_state`, `game_result`, `game_payload`)."""
    platform, audit = tiny_server.platform(), tiny_server.audit()
    table_id = platform.create_table("tiny", 2, game="tiny", allow_preset_deck=True
                                     ).table.table_id
    seats = [platform.as_seat(platform.join_table(table_id, f"p{s}", s).seat_token)
             for s in range(2)]
    hand_id = platform.start_hand(table_id, deck=["QH", "JS", "KH", "KS", "JH", "QS"]
                                  ).hand.hand_id
    view = seats[0].hand_view(table_id, hand_id)
    assert same(unpack(view.game_view, struct_pb2.Struct), view.game_state)
    for seat, card in [(0, "KH"), (1, "JH"), (0, "QH"), (1, "KS"), (0, "JS"), (1, "QS")]:
        seats[seat].act(table_id, hand_id, "play", [card])
    (row,) = platform.scores(table_id).hands
    assert same(unpack(row.game_outcome, struct_pb2.Struct), row.game_result)
    events = audit.all_hand_events(hand_id)
    assert len(events) == 7
    for event in events:
        assert same(unpack(event.game_event, struct_pb2.Struct), event.game_payload)
