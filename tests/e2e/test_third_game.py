"""A third game, registered by this test alone, played through the real server.

Tiny (`tests/support/tiny_game.py`) is registered with the domain's registry and nothing
else: no core file names it, it has no messages of its own in the proto, and the server
serves it through the same RPCs as 五十K and Shengji — its views, results and events travel
as JSON values (`HandView.game_state`, `HandScore.game_result`, `Event.game_payload`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2

from fiftyk_referee.domain.games import register_game, unregister_game
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e.harness import LiveServer, server_config
from tests.support import tiny_game

DECK = ["QH", "JS", "KH", "KS", "JH", "QS"]  # seat 0: QH JS KH; seat 1: KS JH QS


@pytest.fixture
def tiny_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A referee that also hosts Tiny (registered before the server is built)."""
    register_game(tiny_game.GAME)
    live = LiveServer(server_config(tmp_path))
    try:
        yield live
    finally:
        live.stop()
        unregister_game(tiny_game.NAME)


def test_a_game_registered_by_a_test_is_played_through_every_rpc(
        tiny_server: LiveServer) -> None:
    platform, audit = tiny_server.platform(), tiny_server.audit()
    created = platform.create_table("tiny", 2, game="tiny", allow_preset_deck=True)
    table_id = created.table.table_id
    assert created.table.game == "tiny"
    seats = [platform.as_seat(platform.join_table(table_id, f"p{s}", s).seat_token)
             for s in range(2)]
    dealt = platform.start_hand(table_id, deck=DECK).hand
    hand_id = dealt.hand_id
    assert dealt.turn_seat == 0  # the seat after the first dealer (the last seat) leads

    view = seats[0].hand_view(table_id, hand_id)
    state = plain(view.game_state)
    assert state["own_cards"] == ["QH", "JS", "KH"] and state.get("hands") is None
    assert "KS" not in str(view)  # seat 1's cards are not in seat 0's view

    legal = seats[0].legal_plays(table_id, hand_id)
    assert list(legal.kinds) == ["play"]
    assert sorted(p.cards[0] for p in legal.plays) == ["JS", "KH", "QH"]

    # A dry run records nothing; a wrong kind is refused with the game's own reason.
    checked = seats[0].act(table_id, hand_id, "play", ["KH"], validate_only=True)
    assert checked.validated and checked.version == view.version  # the hand as it stands
    with pytest.raises(grpc.RpcError) as refused:
        seats[0].act(table_id, hand_id, "bid", ["KH"])
    assert error_reason(refused.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT,
                                               "INVALID_ACTION")

    for seat, card in [(0, "KH"), (1, "JH"), (0, "QH"), (1, "KS"), (0, "JS"), (1, "QS")]:
        answer = seats[seat].act(table_id, hand_id, "play", [card])
    assert answer.hand.status == pb.HAND_STATUS_COMPLETED
    assert answer.table_version > 0

    scores = platform.scores(table_id)
    (row,) = scores.hands
    assert row.WhichOneof("outcome") == "game_result"
    assert plain(row.game_result)["tricks"] == [2, 1]
    assert {t.side: t.score for t in scores.totals} == {"seat:0": "2", "seat:1": "1"}

    history = audit.all_hand_events(hand_id)
    assert [e.name for e in history] == ["tiny.dealt"] + ["tiny.played"] * 6
    assert all(e.WhichOneof("payload") == "game_payload" for e in history)
    feed = platform.read_events(limit=1000, topics=["tiny.dealt"]).events
    assert [plain(e.game_payload)["cards"] for e in feed] == [[[], []]]  # the platform's view
    streamed = [m for m, _ in zip(seats[1].watch(table_id, timeout=10), range(10), strict=False)
                if m.event.name == "tiny.dealt"]
    assert plain(streamed[0].event.game_payload)["cards"] == [[], ["KS", "JH", "QS"]]

    transcript = audit.export_transcript(hand_id)
    assert transcript["game"] == "tiny" and transcript["deck"] == DECK
    assert audit.adjudicate(transcript)["tricks"] == [2, 1]
    assert plain(audit.hand_at(hand_id, 3).game_state)["tricks"] == [1, 0]


def plain(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct's JSON values, whole numbers as ints."""
    return json.loads(json.dumps(json_format.MessageToDict(struct)),
                      parse_float=lambda text: int(float(text)) if float(text).is_integer()
                      else float(text))
