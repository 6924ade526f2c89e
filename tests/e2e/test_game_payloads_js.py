"""Node.js clients of both games against a live referee: docs/examples/game_payloads.js, which
reads each game's own messages from the Any payloads, and tests/e2e/js/play_0_2.js, a client
written from the 0.2 proto (frozen in tests/support/proto-0.2/), which must still play both games.

Marked `npm` (the packages are installed once for this module, as for errors.js); without
node or npm the tests fail with what to install, they are never skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf.json_format import MessageToDict

from fiftyk_referee.service.games.fiftyk import fiftyk_pb2 as fpb
from fiftyk_referee.service.games.shengji import shengji_pb2 as spb
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e.harness import LiveServer
from tests.e2e.test_errors_js_example import _node, node_modules

__all__ = ["node_modules"]  # the fixture, installed once for this module

pytestmark = pytest.mark.npm

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "game_payloads.js"
OLD_CLIENT = ROOT / "tests" / "e2e" / "js" / "play_0_2.js"
GAMES = {"fiftyk": (fpb.HandView, fpb.HandResult), "shengji": (spb.HandView, spb.HandResult)}


def _run(node_modules: Path, script: Path, server: LiveServer, game: str) -> dict[str, object]:
    done = _node(node_modules, str(script), "--server", server.target, "--game", game)
    assert done.returncode == 0, done.stdout + done.stderr
    printed: dict[str, object] = json.loads(done.stdout)
    return printed


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_node_example_plays_a_hand_and_decodes_the_game_payloads(
        node_modules: Path, server: LiveServer, game: str) -> None:
    printed = _run(node_modules, EXAMPLE, server, game)
    view_type, result_type = GAMES[game]
    assert printed["game"] == game
    assert printed["view_type"] == view_type.DESCRIPTOR.full_name
    assert printed["outcome_type"] == result_type.DESCRIPTOR.full_name
    # The same result as the referee's own Python client decodes it from the same Any.
    hand_id = str(printed["hand_id"])
    audit = server.audit()
    view = audit.hand_at(hand_id, len(audit.all_hand_events(hand_id)))
    table_id = view.table_id
    [row] = [h for h in server.platform().scores(table_id).hands if h.hand_id == hand_id]
    outcome = result_type()
    assert row.game_outcome.Unpack(outcome)
    assert printed["outcome"] == MessageToDict(
        outcome, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    # Every event of the hand is a message of the game's own package, first the deal.
    events = audit.all_hand_events(hand_id)
    seen = list(dict.fromkeys(e.game_event.type_url.rpartition("/")[2] for e in events))
    assert printed["event_types"] == seen
    assert seen[0] == f"fiftyk.games.{game}.v1.HandDealt"


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_node_client_written_from_the_0_2_proto_still_plays_both_games(
        node_modules: Path, server: LiveServer, game: str) -> None:
    printed = _run(node_modules, OLD_CLIENT, server, game)
    hand_id = str(printed["hand_id"])
    audit = server.audit()
    view = audit.hand_at(hand_id, len(audit.all_hand_events(hand_id)))
    assert view.status == pb.HAND_STATUS_COMPLETED
    own = GAMES[game][0]()
    assert view.game_view.Unpack(own)
    result = own.result
    assert isinstance(printed["result"], dict)
    if game == "shengji":
        assert isinstance(result, spb.HandResult)
        assert printed["result"]["levels_after"] == list(result.levels_after)
        assert printed["result"]["next_dealer"] == result.next_dealer
        assert printed["result"]["result_json"] == result.result_json
    else:
        assert isinstance(result, fpb.HandResult)
        assert printed["result"]["places"] == list(result.places)
        assert [s["score"] for s in printed["result"]["seats"]] == [
            s.score for s in result.seats]
