"""Every read RPC answers for every game, at every phase of a table, for every credential.

The per-RPC, per-game matrix: for each game and each seat count its presets allow, a table
before its first deal, with a hand in progress, with a finished hand, and after its match
ended; every read RPC with each kind of credential (the table's seat token, another
table's seat token, the table's spectator token, the audit key, the platform key, none). No
answer is UNKNOWN or INTERNAL, every refusal carries its reason, and no view or event shows
a card its viewer may not see. A new RPC adds its row to `READS` (or to the command tests of
its own). The webhook RPCs answer the platform key alone, and the endpoint registered
before a game's tables were made receives their events.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.service.games.doudizhu import doudizhu_pb2 as dpb
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.trust.signing import Signer
from fiftyk_referee.service.trust.witness import cosignature_body
from tests.e2e.harness import COMPLETED, LiveServer, Seated, table_feed
from tests.e2e.test_doudizhu import check_event as check_doudizhu_event
from tests.support.webhook_receiver import WebhookReceiver

WATCH_BOUND_SECONDS = 120  # a bound for a watch's whole history, not a speed assertion
MID_HAND_ACTIONS = 3
MAX_ACTIONS_PER_HAND = 5_000  # a bound for a hand played to its end
PASS_RATE = 0.3  # how often a seat that may pass does
ARRIVAL_TIMEOUT_SECONDS = 120  # a deadline for deliveries, not a speed assertion
UNKNOWN_WEBHOOK = "6f1c1bbf-7d0e-4c1e-9d1a-3d2b8f1f0a11"
# The refusals a read may answer (a credential without access, a phase without a hand).
REFUSALS = {grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED,
            grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION,
            grpc.StatusCode.INVALID_ARGUMENT}
CREDENTIALS = ("seat", "other_seat", "spectator", "audit", "platform", "none")
PHASES = ("before_deal", "mid_hand", "finished_hand", "match_over")


def _fiftyk_counts() -> list[tuple[str, str, int]]:
    """One preset per seat count 五十K's presets allow."""
    chosen: dict[int, str] = {}
    for preset in PRESETS:
        for count in Ruleset.from_spec(preset).player_counts():
            chosen.setdefault(count, preset)
    return [("fiftyk", preset, count) for count, preset in sorted(chosen.items())]


TABLES = [*_fiftyk_counts(), ("shengji", "tractor", 4), ("doudizhu", "classic", 3)]


@dataclass
class Phase:
    """A table at one phase: its id, its hand (if any) and its seats' clients."""

    game: str
    table: Seated
    hand_id: str
    webhook_id: str = ""
    receiver: WebhookReceiver | None = None  # the endpoint registered before the tables
    last_position: int = 0  # the feed position of the table's (and its hands') last event


def _seated(server: LiveServer, game: str, preset: str, players: int, hands: int,
            prefix: str) -> Seated:
    platform = server.platform()
    table = platform.create_table(preset, players, options={"hands": hands},
                                  game="" if game == "fiftyk" else game).table
    tokens = [platform.join_table(table.table_id, f"{prefix}-{seat}", seat).seat_token
              for seat in range(players)]
    return Seated(table.table_id, players, tokens,
                  [server.client(token=token) for token in tokens], platform)


def _choices(legal: pb.ListLegalPlaysResponse, rng: random.Random
             ) -> list[tuple[str, list[str], str | None]]:
    """What a seat tries, in order, from what ListLegalPlays answers alone (every game): a
    listed play of the one kind that takes cards (now and then a pass first, when it may),
    then each value its requirements name (a bid's points), then each other open kind as it
    stands (a call, a pass, a declaration of nothing)."""
    kinds = set(legal.kinds)
    tries: list[tuple[str, list[str], str | None]] = []
    carded = sorted(kinds - {"pass"})
    if legal.plays and len(carded) == 1:
        plays = list(legal.plays)
        rng.shuffle(plays)
        tries.extend((carded[0], list(play.cards), None) for play in plays[:3])
        if legal.may_pass and rng.random() < PASS_RATE:
            tries.insert(0, ("pass", [], None))
    valued = [(r.kind, [], str(r.count)) for r in legal.requirements if r.kind in kinds]
    rng.shuffle(valued)
    tries.extend(valued)
    tries.extend((kind, [], None) for kind in rng.sample(sorted(kinds), len(kinds)))
    return tries


def _act_once(table: Seated, hand: pb.HandView, rng: random.Random) -> pb.HandView:
    """One action by a seat that has something to do (ListLegalPlays + Act, every game); a
    choice the game refuses (a declaration that does not overcall, a second word in one
    window) is not made and the next is tried. Every answer is the acting seat's own view."""
    for seat in rng.sample(range(table.players), table.players):
        client = table.seats[seat]
        for kind, cards, value in _choices(client.legal_plays(table.table_id, hand.hand_id),
                                           rng):
            try:
                view = client.act(table.table_id, hand.hand_id, kind, cards, value=value).hand
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                continue
            assert view.viewer_seat == seat and not view.full_view
            assert all(not state.cards for state in view.seats)
            return view
    raise AssertionError(f"nobody could act in hand {hand.hand_id}, which is not over")


def _advance(table: Seated, hand: pb.HandView, actions: int | None,
             rng: random.Random) -> pb.HandView:
    """Play `actions` actions of the hand (None: to its end)."""
    for _ in range(MAX_ACTIONS_PER_HAND if actions is None else actions):
        if hand.status == COMPLETED:
            return hand
        hand = _act_once(table, hand, rng)
    assert actions is not None or hand.status == COMPLETED, "the hand did not end"
    return hand


@pytest.fixture(scope="module", params=TABLES, ids=lambda t: f"{t[0]}-{t[1]}-{t[2]}")
def phases(request: pytest.FixtureRequest, server: LiveServer) -> Iterator[dict[str, Phase]]:
    """The four phases of a game's table, each a table of its own left at that phase."""
    game, preset, players = request.param
    rng = random.Random(players)
    receiver = WebhookReceiver()
    webhook_id = server.platform().register_webhook(
        receiver.url, description=f"matrix {game} {players}").webhook.webhook_id
    found: dict[str, Phase] = {}
    fresh = _seated(server, game, preset, players, 2, f"m0-{game}-{players}")
    found["before_deal"] = Phase(game, fresh, "", webhook_id, receiver)
    mid = _seated(server, game, preset, players, 2, f"mm-{game}-{players}")
    hand = _advance(mid, mid.platform.start_hand(mid.table_id).hand, MID_HAND_ACTIONS, rng)
    assert hand.status != COMPLETED
    found["mid_hand"] = Phase(game, mid, hand.hand_id, webhook_id, receiver)
    two = _seated(server, game, preset, players, 2, f"m2-{game}-{players}")
    hand = _advance(two, two.platform.start_hand(two.table_id).hand, None, rng)
    assert not two.platform.get_table(two.table_id).match_over
    found["finished_hand"] = Phase(game, two, hand.hand_id, webhook_id, receiver)
    one = _seated(server, game, preset, players, 1, f"m1-{game}-{players}")
    last = _advance(one, one.platform.start_hand(one.table_id).hand, None, rng)
    assert one.platform.get_table(one.table_id).match_over
    found["match_over"] = Phase(game, one, last.hand_id, webhook_id, receiver)
    audit = server.audit()
    for phase in found.values():
        hand_ids = set(audit.get_table(phase.table.table_id).hand_ids)
        phase.last_position = table_feed(audit, phase.table.table_id, hand_ids)[-1].position
    yield found
    server.platform().delete_webhook(webhook_id)
    receiver.close()


def _client(server: LiveServer, phase: Phase, other: Phase, credential: str) -> RefereeClient:
    if credential == "seat":
        return phase.table.seats[0]
    if credential == "other_seat":
        return other.table.seats[0]
    if credential == "spectator":
        token = phase.table.platform.issue_spectator_token(phase.table.table_id)
        return server.client(token=token.spectator_token)
    if credential == "audit":
        return server.audit()
    if credential == "platform":
        return server.platform()
    return server.client()


def _watch(client: RefereeClient, phase: Phase) -> list[pb.WatchTableResponse]:
    """The stream's messages up to the table's last event (its whole history: the phase's
    table is left as it is), within a generous bound; a refusal is raised as it came."""
    messages: list[pb.WatchTableResponse] = []
    stream = client.watch(phase.table.table_id, include_views=True, timeout=WATCH_BOUND_SECONDS)
    try:
        for message in stream:
            messages.append(message)
            if message.event.position >= phase.last_position:
                break
        else:
            raise AssertionError(f"the watch ended before position {phase.last_position}")
    finally:
        stream.cancel()  # type: ignore[attr-defined]
    return messages


Read = Callable[[RefereeClient, Phase], Any]
READS: dict[str, Read] = {
    "GetTable": lambda c, p: c.get_table(p.table.table_id),
    "GetHandView": lambda c, p: c.hand_view(p.table.table_id, p.hand_id),
    "GetScores": lambda c, p: c.scores(p.table.table_id),
    "GetHandHistory": lambda c, p: c.hand_history(p.hand_id or p.table.table_id),
    "GetHandAt": lambda c, p: c.hand_at(p.hand_id or p.table.table_id, 1),
    "ListLegalPlays": lambda c, p: c.legal_plays(p.table.table_id, p.hand_id),
    "ReadEvents": lambda c, p: c.read_events(limit=50),
    "GetFeedHead": lambda c, p: c.feed_head(),
    "ListTables": lambda c, p: c.list_tables(game=p.game),
    "WatchTable": _watch,
    "ExportTranscript": lambda c, p: c.export_transcript(p.hand_id or p.table.table_id),
    # Not a read of the table's state, but it changes nothing: the platform's spectator token.
    "IssueSpectatorToken": lambda c, p: c.issue_spectator_token(p.table.table_id),
    "ListWebhooks": lambda c, p: c.list_webhooks(),
    "ListWebhookDeadLetters": lambda c, p: c.webhook_dead_letters(p.webhook_id),
    # The ledger's checkpoint: a hand count and a root, for anyone (docs/fairness.md).
    "GetCheckpoint": lambda c, p: c.checkpoint(1),
}
PLATFORM_ONLY = ("IssueSpectatorToken", "ListTables", "ListWebhooks", "ListWebhookDeadLetters")


def _check_view(view: pb.HandView, credential: str) -> None:
    """A view holds only what its viewer may see."""
    if credential == "audit":
        return
    assert not view.full_view and all(not state.cards for state in view.seats)
    assert not view.stock
    if credential != "seat":
        assert not view.own_cards
    if view.HasField("shengji") and view.status != COMPLETED:
        dealer_sees = credential == "seat" and view.shengji.dealer == view.viewer_seat
        assert dealer_sees or not view.shengji.kitty
    ddz = dpb.HandView()
    if view.game_view.Unpack(ddz) and not ddz.HasField("landlord") and ddz.phase != "over":
        assert not ddz.kitty and not ddz.kitty_shown  # the 底牌 before the landlord shows them


def _check_event(event: pb.Event, seat: int | None) -> None:
    """An event shows no other seat's hidden cards (seat None: nobody's)."""
    kind = event.WhichOneof("payload")
    if kind == "fiftyk_hand_dealt":
        dealt = event.fiftyk_hand_dealt
        assert not dealt.deck
        assert all(not h.cards for h in dealt.hands if h.seat != seat)
    elif kind == "shengji_hand_dealt":
        assert not event.shengji_hand_dealt.deck
    elif kind == "shengji_round_dealt":
        assert all(not h.cards for h in event.shengji_round_dealt.hands if h.seat != seat)
    elif kind == "shengji_kitty_taken":
        assert seat == event.shengji_kitty_taken.dealer or not event.shengji_kitty_taken.kitty
    elif kind == "shengji_kitty_buried":
        assert seat == event.shengji_kitty_buried.seat or not event.shengji_kitty_buried.cards
    else:
        check_doudizhu_event(event, seat)  # a game newer than 0.2: its own messages


def _check_answer(rpc: str, answer: Any, credential: str) -> None:
    seat = 0 if credential == "seat" else None
    if isinstance(answer, pb.HandView):
        _check_view(answer, credential)
    elif rpc == "WatchTable" and credential != "audit":
        for message in answer:
            _check_event(message.event, seat)
            if message.HasField("hand"):
                _check_view(message.hand, credential)
    elif rpc == "ReadEvents" and credential != "audit":
        for event in answer.events:
            _check_event(event, None)
    elif rpc == "GetCheckpoint":  # a count and a root: nothing of any hand
        assert set(json.loads(answer.checkpoint_json)) == {"format", "size", "root", "time",
                                                           "signature"}


@pytest.mark.parametrize("phase_name", PHASES)
def test_every_read_rpc_answers_every_credential_with_a_status_and_no_hidden_card(
        server: LiveServer, phases: dict[str, Phase], phase_name: str) -> None:
    phase = phases[phase_name]
    other = phases["match_over" if phase_name != "match_over" else "before_deal"]
    outcomes: dict[tuple[str, str], str] = {}
    for rpc, read in READS.items():
        for credential in CREDENTIALS:
            client = _client(server, phase, other, credential)
            try:
                answer = read(client, phase)
            except grpc.RpcError as error:
                details = error_details(error)
                assert details.code in REFUSALS, (rpc, credential, details)
                assert details.reason, (rpc, credential, details)
                outcomes[rpc, credential] = str(details.reason)
                continue
            _check_answer(rpc, answer, credential)
            outcomes[rpc, credential] = "OK"
    # Each RPC answered its own: the audit key reads everything a phase has to offer.
    expected_ok = {"GetTable", "GetScores", "ReadEvents", "WatchTable", "GetFeedHead",
                   "GetCheckpoint"}
    if phase.hand_id:
        expected_ok |= {"GetHandView", "GetHandHistory", "GetHandAt", "ExportTranscript"}
    assert {rpc for rpc in READS if outcomes[rpc, "audit"] == "OK"} == expected_ok, outcomes
    assert outcomes["GetTable", "seat"] == outcomes["GetScores", "seat"] == "OK"
    assert outcomes["GetTable", "none"] != "OK"
    # A spectator watches its table as the public does, and reads nothing only audit may.
    assert {rpc for rpc in ("GetTable", "GetScores", "WatchTable")
            if outcomes[rpc, "spectator"] == "OK"} == {"GetTable", "GetScores", "WatchTable"}
    assert all(outcomes[rpc, "spectator"] != "OK" for rpc in (
        "GetHandHistory", "GetHandAt", "ExportTranscript", "ListLegalPlays", "ReadEvents",
        "IssueSpectatorToken", "GetFeedHead", "ListTables"))
    for rpc in PLATFORM_ONLY:
        assert {credential for credential in CREDENTIALS
                if outcomes[rpc, credential] == "OK"} == {"platform"}, (rpc, outcomes)
    # Every credential, and none, reads the checkpoint.
    assert {outcomes["GetCheckpoint", credential] for credential in CREDENTIALS} == {"OK"}
    # The lobby is the platform's: a seat or an auditor lists no tables.
    assert outcomes["ListTables", "platform"] == "OK"
    assert outcomes["ListTables", "seat"] == outcomes["ListTables", "audit"] != "OK"


def test_scores_carry_each_games_own_result(server: LiveServer,
                                            phases: dict[str, Phase]) -> None:
    phase = phases["match_over"]
    sheet = phase.table.platform.scores(phase.table.table_id)
    (row,) = sheet.hands
    assert row.game_outcome.type_url.endswith(f"/fiftyk.games.{phase.game}.v1.HandResult")
    # The 0.2 field of the `outcome` oneof: 五十K's and Shengji's; a newer game has none.
    assert row.WhichOneof("outcome") == {"fiftyk": "result", "shengji": "shengji"}.get(
        phase.game)
    if phase.game == "shengji":
        assert len(row.shengji.levels_after) == 2  # GetScores answered UNKNOWN here once
    assert sheet.match_over and sheet.totals


def test_add_cosignature_answers_every_credential_and_the_checkpoint_holds_the_hand(
        server: LiveServer, phases: dict[str, Phase]) -> None:
    """The row of AddCosignature: every credential (and none) is answered alike, since the
    witness's key is what counts — this referee lists none, so a well-formed cosignature is
    refused UNKNOWN_WITNESS and a malformed one INVALID_COSIGNATURE; and the game's finished
    hand is in the tree of the checkpoint its score sheet carries."""
    phase = phases["finished_hand"]
    checkpoint = json.loads(server.client().checkpoint().checkpoint_json)
    assert set(checkpoint) == {"format", "size", "root", "time", "signature"}
    cosignature = Signer.from_text("c3" * 32).sign(
        cosignature_body(checkpoint, datetime.now(UTC)))
    for document, reason in ((cosignature, "UNKNOWN_WITNESS"), ("{}", "INVALID_COSIGNATURE")):
        assert _entropy_outcomes(
            server, phase, phases["match_over"],
            lambda c, document=document: c.add_cosignature(document)) == {
                credential: reason for credential in CREDENTIALS}
    scores = phase.table.seats[0].scores(phase.table.table_id)
    (row,) = [h for h in scores.hands if h.hand_id == phase.hand_id]
    assert row.HasField("ledger_index")
    assert row.ledger_index < json.loads(scores.checkpoint_json)["size"]


ENTROPY_GAMES = {"fiftyk": ("classic", 4), "shengji": ("tractor", 4), "doudizhu": ("classic", 3)}
ENTROPY_WINDOW_SECONDS = 300  # the draw stays open for the whole test, however loaded


def _entropy_table(server: LiveServer, game: str, prefix: str, *, direct: bool) -> Seated:
    preset, players = ENTROPY_GAMES[game]
    platform = server.platform()
    table = platform.create_table(preset, players, game="" if game == "fiftyk" else game,
                                  entropy_window=ENTROPY_WINDOW_SECONDS,
                                  entropy_direct=direct).table
    tokens = [platform.join_table(table.table_id, f"{prefix}-{table.table_id[:8]}-{s}",
                                  s).seat_token for s in range(players)]
    return Seated(table.table_id, players, tokens,
                  [server.client(token=token) for token in tokens], platform)


def _entropy_outcomes(server: LiveServer, phase: Phase, other_phase: Phase,
                      send: Callable[[RefereeClient], Any]) -> dict[str, str]:
    """What each credential's `send` to the table answers: OK or the refusal's reason."""
    found: dict[str, str] = {}
    for credential in CREDENTIALS:
        client = _client(server, phase, other_phase, credential)
        try:
            send(client)
        except grpc.RpcError as error:
            details = error_details(error)
            assert details.code in REFUSALS, (credential, details)
            assert details.reason, (credential, details)
            found[credential] = str(details.reason)
            continue
        found[credential] = "OK"
    return found


ENTROPY_REFUSED_ALWAYS = {"other_seat": "WRONG_TABLE", "spectator": "SEAT_TOKEN_REQUIRED",
                          "audit": "SEAT_TOKEN_REQUIRED", "platform": "SEAT_TOKEN_REQUIRED",
                          "none": "MISSING_CREDENTIALS"}


@pytest.mark.parametrize("game", sorted(ENTROPY_GAMES))
def test_commitments_and_reveals_answer_every_credential_at_every_phase(server: LiveServer,
                                                                       game: str) -> None:
    """The row of ContributeEntropy's `commitment` (commit-then-reveal tables): only the
    table's own seat token commits, once, while the commit window is open, and reveals the
    same bytes once every seat committed; everyone else gets a reason, never UNKNOWN."""
    table = _entropy_table(server, game, "cc", direct=False)
    other = _entropy_table(server, game, "cx", direct=False)
    phase, other_phase = Phase(game, table, ""), Phase(game, other, "")
    data = bytes(range(32))

    def commits() -> dict[str, str]:
        return _entropy_outcomes(server, phase, other_phase,
                                 lambda c: c.commit_entropy(table.table_id, data))

    def reveals() -> dict[str, str]:
        return _entropy_outcomes(server, phase, other_phase,
                                 lambda c: c.reveal_entropy(table.table_id, data))

    assert commits() == {"seat": "NO_DRAW_OPEN", **ENTROPY_REFUSED_ALWAYS}  # before the deal
    table.platform.start_hand(table.table_id)
    assert reveals() == {"seat": "ENTROPY_COMMIT_FIRST", **ENTROPY_REFUSED_ALWAYS}
    assert commits() == {"seat": "OK", **ENTROPY_REFUSED_ALWAYS}  # the commit window is open
    assert commits()["seat"] == "ENTROPY_ALREADY_SENT"
    assert reveals()["seat"] == "ENTROPY_REVEAL_NOT_OPEN"  # the others may still commit
    for seat in range(1, table.players):
        table.seats[seat].commit_entropy(table.table_id, data)
    assert commits()["seat"] == "ENTROPY_ALREADY_SENT"
    assert reveals() == {"seat": "OK", **ENTROPY_REFUSED_ALWAYS}
    for seat in range(1, table.players):
        dealt = table.seats[seat].reveal_entropy(table.table_id, data)
    assert dealt.HasField("hand")
    _check_view(dealt.hand, "seat")
    assert reveals() == {"seat": "ENTROPY_ALREADY_SENT", **ENTROPY_REFUSED_ALWAYS}
    assert commits() == {"seat": "ENTROPY_ALREADY_SENT", **ENTROPY_REFUSED_ALWAYS}


@pytest.mark.parametrize("game", sorted(ENTROPY_GAMES))
def test_seat_keys_answer_every_credential_at_every_phase(server: LiveServer, game: str
                                                          ) -> None:
    """The rows of JoinTable's `seat_public_key` and ContributeEntropy's `signature`: only
    the platform binds a key, of 32 bytes; a keyed seat's token alone, or another key's
    signature, is refused at every phase of the draw; the key's signature is accepted."""
    preset, players = ENTROPY_GAMES[game]
    platform = server.platform()
    table_id = platform.create_table(preset, players, game="" if game == "fiftyk" else game,
                                     entropy_window=ENTROPY_WINDOW_SECONDS).table.table_id
    other = _entropy_table(server, game, "kx", direct=False)
    joins: dict[str, str] = {}
    for credential in CREDENTIALS:
        client = server.platform() if credential == "platform" else (
            server.audit() if credential == "audit" else other.seats[0]
            if credential in ("seat", "other_seat") else server.client())
        try:
            client.join_table(table_id, f"kj-{credential}", 0, public_key=b"\x01" * 31)
        except grpc.RpcError as error:
            details = error_details(error)
            assert details.code in REFUSALS and details.reason, (credential, details)
            joins[credential] = str(details.reason)
    assert joins["platform"] == "INVALID_SEAT_KEY" and set(joins) == set(CREDENTIALS)
    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    tokens = [platform.join_table(table_id, f"kj-{table_id[:8]}-{s}", s,
                                  public_key=public if s == 0 else b"").seat_token
              for s in range(players)]
    table = Seated(table_id, players, tokens, [server.client(token=t) for t in tokens],
                   platform)
    phase, other_phase = Phase(game, table, ""), Phase(game, other, "")
    data, stranger = bytes(range(32)), Ed25519PrivateKey.generate()
    platform.start_hand(table_id)
    for signer, answer in ((None, "ENTROPY_SIGNATURE_REQUIRED"),
                           (stranger, "ENTROPY_SIGNATURE_INVALID"), (key, "OK")):
        assert _entropy_outcomes(
            server, phase, other_phase,
            lambda c, signer=signer: c.commit_entropy(table_id, data, key=signer)) \
            == {"seat": answer, **ENTROPY_REFUSED_ALWAYS}
    for seat in range(1, players):
        table.seats[seat].commit_entropy(table_id, data)
    for signer, answer in ((None, "ENTROPY_SIGNATURE_REQUIRED"),
                           (stranger, "ENTROPY_SIGNATURE_INVALID"), (key, "OK")):
        assert _entropy_outcomes(
            server, phase, other_phase,
            lambda c, signer=signer: c.reveal_entropy(table_id, data, key=signer)) \
            == {"seat": answer, **ENTROPY_REFUSED_ALWAYS}


@pytest.mark.parametrize("game", sorted(ENTROPY_GAMES))
def test_contribute_entropy_answers_every_credential_at_every_phase(server: LiveServer,
                                                                    game: str) -> None:
    """The command row of ContributeEntropy at a table of direct contributions: only the
    table's own seat token contributes, once, and only while a draw is open; everyone else
    gets a reason, never UNKNOWN."""
    players = ENTROPY_GAMES[game][1]
    platform = server.platform()
    table = _entropy_table(server, game, "ce", direct=True)
    other = _entropy_table(server, game, "co", direct=True)
    phase = Phase(game, table, "")
    other_phase = Phase(game, other, "")

    def outcomes() -> dict[str, str]:
        found: dict[str, str] = {}
        for credential in CREDENTIALS:
            client = _client(server, phase, other_phase, credential)
            try:
                client.contribute_entropy(table.table_id)
            except grpc.RpcError as error:
                details = error_details(error)
                assert details.code in REFUSALS, (credential, details)
                assert details.reason, (credential, details)
                found[credential] = str(details.reason)
                continue
            found[credential] = "OK"
        return found

    refused_always = {"other_seat": "WRONG_TABLE", "spectator": "SEAT_TOKEN_REQUIRED",
                      "audit": "SEAT_TOKEN_REQUIRED", "platform": "SEAT_TOKEN_REQUIRED",
                      "none": "MISSING_CREDENTIALS"}
    assert outcomes() == {"seat": "NO_DRAW_OPEN", **refused_always}  # before the deal
    platform.start_hand(table.table_id)
    assert outcomes() == {"seat": "OK", **refused_always}  # the draw is open
    assert outcomes()["seat"] == "ENTROPY_ALREADY_SENT"
    for seat in range(1, players):
        dealt = table.seats[seat].contribute_entropy(table.table_id)
    assert dealt.HasField("hand")
    _check_view(dealt.hand, "seat")
    # The hand is dealt, with this seat's bytes in it.
    assert outcomes() == {"seat": "ENTROPY_ALREADY_SENT", **refused_always}


Command = Callable[[RefereeClient, Phase], Any]
WEBHOOK_COMMANDS: dict[str, Command] = {
    "RegisterWebhook": lambda c, p: c.delete_webhook(
        c.register_webhook("https://hooks.example.com/matrix", ["table.closed"])
        .webhook.webhook_id),
    "RedeliverWebhookEvents": lambda c, p: c.redeliver_webhook_events(p.webhook_id),
    "DeleteWebhook": lambda c, p: c.delete_webhook(UNKNOWN_WEBHOOK),
}


def test_webhook_commands_answer_only_the_platform(server: LiveServer,
                                                   phases: dict[str, Phase]) -> None:
    phase = phases["mid_hand"]
    outcomes: dict[tuple[str, str], str] = {}
    for rpc, command in WEBHOOK_COMMANDS.items():
        for credential in CREDENTIALS:
            client = _client(server, phase, phases["match_over"], credential)
            try:
                command(client, phase)
            except grpc.RpcError as error:
                details = error_details(error)
                assert details.code in REFUSALS and details.reason, (rpc, credential, details)
                outcomes[rpc, credential] = str(details.reason)
                continue
            outcomes[rpc, credential] = "OK"
    platform = {rpc: outcomes[rpc, "platform"] for rpc in WEBHOOK_COMMANDS}
    assert platform == {"RegisterWebhook": "OK", "RedeliverWebhookEvents": "OK",
                        "DeleteWebhook": "WEBHOOK_NOT_FOUND"}
    # Anyone else is refused for the credential, before the webhook is looked up.
    assert all(outcome not in ("OK", "WEBHOOK_NOT_FOUND")
               for (_, credential), outcome in outcomes.items() if credential != "platform")


def test_the_webhook_receives_every_tables_events_of_the_game(
        phases: dict[str, Phase]) -> None:
    """Each phase's table opened, was sat at and (but the first) dealt: the endpoint got it
    all, with the table's id on the table's and on its hands' events."""
    receiver = phases["before_deal"].receiver
    assert receiver is not None
    tables = {phase.table.table_id: phase for phase in phases.values()}
    deadline = time.monotonic() + ARRIVAL_TIMEOUT_SECONDS
    while True:
        names: dict[str, set[str]] = {table_id: set() for table_id in tables}
        for delivery in receiver.accepted():
            names.get(delivery.json["table_id"], set()).add(delivery.json["name"])
        if all(_dealt(names[t]) == bool(phase.hand_id) for t, phase in tables.items()):
            break
        assert time.monotonic() < deadline, names
        time.sleep(0.05)
    for table_id in tables:
        assert {"table.opened", "table.seat_taken"} <= names[table_id], names[table_id]


def _dealt(names: set[str]) -> bool:
    return any(name.endswith("hand_dealt") or name.endswith("round_dealt") for name in names)
