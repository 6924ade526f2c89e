"""A third game, installed as a bundle by this test alone, played through a real server.

Tiny (`tests/support/tiny_game.py`, its bundle `tests/support/tiny_bundle.py`) is installed
the way a package installs a game: a `*.dist-info` folder with an `entry_points.txt` naming
its bundle in the group `fiftyk_referee.games`, on the `PYTHONPATH` of a `fiftyk serve`
process. No file of the referee names it, it has no messages of its own in the proto, and
the server serves it through the same RPCs as 五十K and Shengji: every RPC of the Referee
service is called for it below (`RPCS_CALLED` counts them against the service). Its views,
results and events travel as JSON values (`HandView.game_state`, `HandScore.game_result`,
`Event.game_payload`); its own refusal names it in `ErrorInfo.metadata`.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, struct_pb2

from fiftyk_referee.service.core import bundles
from fiftyk_referee.service.core.bundles import ENTRY_POINT_GROUP
from fiftyk_referee.service.games.shengji import client as shengji_calls
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_details, error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY, DEV_PLATFORM_KEY
from fiftyk_referee.service.trust.signing import Signer
from fiftyk_referee.service.trust.witness import cosignature_body
from tests.e2e.harness import LiveServer, server_config
from tests.e2e.live import REPO, ServeProcess, start_serve

WAIT_SECONDS = 30.0  # a bound for one HTTP answer on a loaded machine
DECK = ["QH", "JS", "KH", "KS", "JH", "QS"]  # seat 0: QH JS KH; seat 1: KS JH QS
# The RPCs this test calls, each at least once, for Tiny's tables and hands.
RPCS_CALLED = frozenset({
    "CreateTable", "JoinTable", "IssueSpectatorToken", "LeaveTable", "StartHand",
    "ContributeEntropy", "Play", "Pass", "Resign", "GetTable", "GetHandView",
    "ListLegalPlays", "GetScores", "GetHandHistory", "GetHandAt", "ExportTranscript",
    "Adjudicate", "VerifyHand", "ReadEvents", "WatchTable", "Declare", "Bury", "Act",
    "GetFeedHead", "ListTables", "CloseTable", "AbortTable", "ReplaceSeat",
    "ReissueSeatToken", "RegisterWebhook", "ListWebhooks", "DeleteWebhook",
    "ListWebhookDeadLetters", "RedeliverWebhookEvents", "GetCheckpoint", "AddCosignature",
})


def install_tiny(folder: Path) -> dict[str, str]:
    """Install Tiny's bundle as a package would (its distribution's metadata and entry
    point in `folder`); the environment of a process that has it installed."""
    info = folder / "tiny_referee_game-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tiny-referee-game\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ntiny = tests.support.tiny_bundle:BUNDLE\n", encoding="utf-8")
    # The bundle's code is the tests' own package (tests.support), found from the checkout.
    paths = [str(folder), str(REPO), os.environ.get("PYTHONPATH", "")]
    return {"PYTHONPATH": os.pathsep.join(path for path in paths if path)}


class Referee:
    """A `fiftyk serve` process and the clients of this test (closed with it)."""

    def __init__(self, process: ServeProcess) -> None:
        self.process = process
        self._clients: list[RefereeClient] = []

    def client(self, **credentials: Any) -> RefereeClient:
        client = RefereeClient(self.process.target, **credentials)
        self._clients.append(client)
        return client

    def close(self) -> None:
        for client in self._clients:
            client.close()
        self.process.stop()


@pytest.fixture
def tiny_referee(tmp_path: Path) -> Iterator[Referee]:
    """`fiftyk serve` with Tiny installed through its entry point (SQLite, loopback)."""
    env = install_tiny(tmp_path / "site")
    process = start_serve(["--host", "127.0.0.1", "--port", "0", "--metrics-port", "0",
                           "--database-url", f"sqlite:///{tmp_path / 'referee.sqlite'}"],
                          env, tmp_path / "serve.log")
    referee = Referee(process)
    try:
        yield referee
    finally:
        referee.close()


def test_a_game_installed_through_an_entry_point_is_played_through_every_rpc(
        tiny_referee: Referee) -> None:
    platform = tiny_referee.client(platform_key=DEV_PLATFORM_KEY)
    audit = tiny_referee.client(audit_key=DEV_AUDIT_KEY)
    created = platform.create_table("tiny", 2, game="tiny", allow_preset_deck=True)
    table_id = created.table.table_id
    assert created.table.game == "tiny"
    joined = [platform.join_table(table_id, f"p{s}", s) for s in range(2)]
    seats = [tiny_referee.client(token=j.seat_token) for j in joined]
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

    # A dry run records nothing; kinds Tiny does not have are refused with the core's
    # reason, whichever RPC sends them (Pass, and the legacy RPCs of another game).
    checked = seats[0].act(table_id, hand_id, "play", ["KH"], validate_only=True)
    assert checked.validated and checked.version == view.version  # the hand as it stands
    for refused_call in (lambda: seats[0].act(table_id, hand_id, "bid", ["KH"]),
                         lambda: seats[0].pass_turn(table_id, hand_id),
                         lambda: shengji_calls.declare(seats[0], table_id, hand_id, ["KH"]),
                         lambda: shengji_calls.bury(seats[0], table_id, hand_id, ["KH"])):
        with pytest.raises(grpc.RpcError) as refused:
            refused_call()
        assert error_reason(refused.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT,
                                                   "INVALID_ACTION")

    # Tiny's own reason: a card off the led suit by a seat that holds it.
    seats[0].play(table_id, hand_id, ["KH"])
    with pytest.raises(grpc.RpcError) as off_suit:
        seats[1].act(table_id, hand_id, "play", ["KS"])
    details = error_details(off_suit.value)
    assert (details.code, details.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                              "FOLLOW_SUIT")
    assert details.metadata["game"] == "tiny"

    for seat, card in [(1, "JH"), (0, "QH"), (1, "KS"), (0, "JS"), (1, "QS")]:
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
    assert [e.name for e in audit.hand_history(hand_id).events][:1] == ["tiny.dealt"]
    feed = platform.read_events(limit=1000, topics=["tiny.dealt"]).events
    assert [plain(e.game_payload)["cards"] for e in feed] == [[[], []]]  # the platform's view
    assert platform.feed_head() >= feed[-1].position
    streamed = [m for m, _ in zip(seats[1].watch(table_id, timeout=10), range(10), strict=False)
                if m.event.name == "tiny.dealt"]
    assert plain(streamed[0].event.game_payload)["cards"] == [[], ["KS", "JH", "QS"]]

    transcript = audit.export_transcript(hand_id)
    assert transcript["game"] == "tiny" and transcript["deck"] == DECK
    assert audit.adjudicate(transcript)["tricks"] == [2, 1]
    assert plain(audit.hand_at(hand_id, 3).game_state)["tricks"] == [1, 0]
    # The evidence names the game. (Tiny commits to its deck with a plain hash, not with the
    # verifiable shuffle of domain/deal.py, so its deal check fails: a limit of the test
    # game, which VerifyHand reports like any other failed check.)
    first = audit.verify_hand(hand_id).checks[0]
    assert (first.check, first.status) == ("format", "ok") and "game tiny" in first.detail
    # Its finished hand is in the ledger's published checkpoint, which a witness cosigns; a
    # cosignature by a key this referee does not list is refused whatever the game.
    checkpoint = json.loads(scores.checkpoint_json)
    assert row.ledger_index < checkpoint["size"] <= json.loads(
        seats[0].checkpoint().checkpoint_json)["size"]
    with pytest.raises(grpc.RpcError) as unknown:
        seats[0].add_cosignature(Signer.from_text("c3" * 32).sign(
            cosignature_body(checkpoint, datetime.now(UTC))))
    assert error_reason(unknown.value)[:2] == (grpc.StatusCode.PERMISSION_DENIED,
                                               "UNKNOWN_WITNESS")

    # The table around the hands: listing, spectators, seats, tokens, the match's end.
    assert [t.table_id for t in platform.list_tables(game="tiny").tables] == [table_id]
    assert platform.get_table(table_id).game == "tiny"
    spectator = tiny_referee.client(
        token=platform.issue_spectator_token(table_id).spectator_token)
    assert spectator.get_table(table_id).table_id == table_id
    replaced = platform.replace_seat(table_id, 1, "p1-again").seat_token  # between hands
    second = platform.start_hand(table_id, deck=DECK).hand
    reissued = platform.reissue_seat_token(table_id, 0).seat_token
    resigned = tiny_referee.client(token=replaced).resign(table_id, second.hand_id).hand
    assert resigned.status == pb.HAND_STATUS_COMPLETED
    assert plain(tiny_referee.client(token=reissued).hand_view(
        table_id, second.hand_id).game_state)["tricks"] == [3, 0]  # seat 1 resigned them
    assert platform.get_table(table_id).match_over  # Tiny's matches are two hands
    platform.leave_table(table_id, 0)
    assert platform.close_table(table_id, "done").table.close_reason == "done"

    # A table of seat-entropy deals, aborted mid-draw.
    drawn = platform.create_table("tiny", 2, game="tiny", entropy_window=60).table.table_id
    tokens = [platform.join_table(drawn, f"d{s}", s).seat_token for s in range(2)]
    platform.start_hand(drawn)
    # The seats commit first (the default for new seat-entropy tables), with a receipt.
    contributed = tiny_referee.client(token=tokens[0]).commit_entropy(drawn, bytes(16))
    assert contributed.table.table_id == drawn and contributed.receipt_json
    assert list(contributed.table.draw.committed) == [0]
    aborted = platform.abort_table(drawn, "test over").table
    assert (aborted.state, aborted.close_reason) == (pb.TABLE_STATE_CLOSED, "test over")

    # Webhooks take the game's events by name.
    hook = platform.register_webhook("http://127.0.0.1:9/tiny", ["tiny.played"]).webhook
    assert list(hook.events) == ["tiny.played"]
    assert hook.webhook_id in [w.webhook_id for w in platform.list_webhooks().webhooks]
    assert platform.webhook_dead_letters(hook.webhook_id) == []
    assert platform.redeliver_webhook_events(hook.webhook_id) == 0
    platform.delete_webhook(hook.webhook_id)


def test_tiny_is_played_through_every_rpc_of_the_service() -> None:
    service = pb.DESCRIPTOR.services_by_name["RefereeService"]
    assert {method.name for method in service.methods} == RPCS_CALLED


def plain(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct's JSON values, whole numbers as ints."""
    return json.loads(json.dumps(json_format.MessageToDict(struct)),
                      parse_float=lambda text: int(float(text)) if float(text).is_integer()
                      else float(text))


@pytest.fixture
def only_one_game(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LiveServer]:
    """A referee built while only the named built-in game is installed."""
    bundles.install([bundles.installed()[request.param]])
    live = LiveServer(server_config(tmp_path, web_port=0))
    try:
        yield live
    finally:
        live.stop()
        bundles.install(bundles.entry_point_bundles())


@pytest.mark.parametrize("only_one_game", ["shengji"], indirect=True)
def test_a_referee_without_fiftyk_installed_refuses_it_as_an_unknown_game(
        only_one_game: LiveServer) -> None:
    platform, audit = only_one_game.platform(), only_one_game.audit()
    for game in ("fiftyk", ""):  # named, or the default game of 0.1's requests
        with pytest.raises(grpc.RpcError) as refused:
            platform.create_table("classic", 4, game=game)
        assert error_reason(refused.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT,
                                                   "INVALID_RULESET")
    with pytest.raises(grpc.RpcError) as transcript:
        audit.adjudicate({"format": "fiftyk-transcript/1", "ruleset": {"preset": "classic"}})
    assert error_reason(transcript.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT,
                                                  "INVALID_TRANSCRIPT")
    table = platform.create_table("tractor", 4, game="shengji").table
    tokens = [platform.join_table(table.table_id, f"s{s}", s).seat_token for s in range(4)]
    hand = platform.start_hand(table.table_id).hand
    declared = shengji_calls.declare(only_one_game.client(token=tokens[hand.turn_seat]),
                                     table.table_id, hand.hand_id)
    assert declared.version > hand.version  # Shengji's legacy RPC, answered as `Act`

    # The web table draws the installed game only: its renderer is served and in the page.
    web = f"http://127.0.0.1:{only_one_game.running.web_port}"
    with urllib.request.urlopen(f"{web}/", timeout=WAIT_SECONDS) as page:
        html = page.read().decode("utf-8")
    assert 'FK.registerGame("shengji"' in html and 'FK.registerGame("fiftyk"' not in html
    with urllib.request.urlopen(f"{web}/games/shengji.js", timeout=WAIT_SECONDS) as script:
        assert 'FK.registerGame("shengji"' in script.read().decode("utf-8")
    with pytest.raises(urllib.error.HTTPError) as absent:
        urllib.request.urlopen(f"{web}/games/fiftyk.js", timeout=WAIT_SECONDS)
    assert absent.value.code == 404
    absent.value.close()


@pytest.mark.parametrize("only_one_game", ["fiftyk"], indirect=True)
def test_a_referee_without_shengji_installed_leaves_its_legacy_rpcs_unimplemented(
        only_one_game: LiveServer) -> None:
    platform = only_one_game.platform()
    table = platform.create_table("classic", 4).table
    tokens = [platform.join_table(table.table_id, f"f{s}", s).seat_token for s in range(4)]
    hand = platform.start_hand(table.table_id).hand
    with pytest.raises(grpc.RpcError) as absent:
        shengji_calls.declare(only_one_game.client(token=tokens[hand.turn_seat]),
                              table.table_id, hand.hand_id)
    assert absent.value.code() == grpc.StatusCode.UNIMPLEMENTED
    with pytest.raises(grpc.RpcError) as refused:
        platform.create_table("tractor", 4, game="shengji")
    assert error_reason(refused.value)[:2] == (grpc.StatusCode.INVALID_ARGUMENT,
                                               "INVALID_RULESET")
