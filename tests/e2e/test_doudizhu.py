"""斗地主 through the real API: whole hands of every preset by bots that only use
`ListLegalPlays` and `Act`, on SQLite and PostgreSQL; nobody sees another seat's cards or the
底牌 before the landlord shows them (views, events, WatchTable, ReadEvents, webhooks, dry
runs, every credential); the finished hand's transcript, ruling, evidence and `fiftyk
verify`; spectators; the lobby; its own refusals; `fiftyk demo --game doudizhu` and
`fiftyk replay`."""

from __future__ import annotations

import random
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from fiftyk_referee.service.cli.main import main
from fiftyk_referee.service.games.doudizhu import doudizhu_pb2 as dpb
from fiftyk_referee.service.games.doudizhu.demo import choose_bid, choose_play
from fiftyk_referee.service.games.doudizhu.text import EVENT_MESSAGES, payload, rank_of, state_of
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops import config_keys as keys
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY, DEV_PLATFORM_KEY
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, Signer, public_pem
from tests.e2e.harness import COMPLETED, LiveServer, Seated, Watcher, server_config, table_feed
from tests.e2e.live import start_serve
from tests.support.webhook_receiver import WebhookReceiver

GAME = "doudizhu"
PLAYERS = 3
PRESETS = ("classic", "rob", "douzero")
BIDDING = frozenset({"bid", "call", "rob"})
MAX_COMMANDS = 1_000  # a hand has at most 9 bids, 54 plays and their passes
CLI_TIMEOUT_SECONDS = 120
ARRIVAL_TIMEOUT_SECONDS = 120  # a deadline for deliveries, not a speed assertion
CREDENTIALS = ("seat", "other_seat", "spectator", "platform", "none")


# -- bots that know the game only through ListLegalPlays and Act -------------------------------

def doudizhu_table(server: LiveServer, preset: str = "classic", *, hands: int | None = None,
                   options: dict[str, Any] | None = None, prefix: str = "dd") -> Seated:
    """A 斗地主 table with a bot in every seat."""
    platform = server.platform()
    chosen = dict(options or {})
    if hands is not None:
        chosen["hands"] = hands
    table = platform.create_table(preset, PLAYERS, game=GAME, options=chosen).table
    tokens = [platform.join_table(table.table_id, f"{prefix}-{table.table_id[:8]}-{seat}",
                                  seat).seat_token for seat in range(PLAYERS)]
    return Seated(table.table_id, PLAYERS, tokens,
                  [server.client(token=token) for token in tokens], platform)


def step(table: Seated, view: pb.HandView, rng: random.Random, *,
         on_turn: Callable[[RefereeClient, str, int], None] | None = None) -> pb.HandView:
    """The seat to act asks what it may do and does it: in the bidding it bids by its hand's
    strength (the demo's bots) or, now and then, passes or bids at random; in the play it
    plays a listed play or passes. Every answer must be that seat's own view."""
    seat = view.turn_seat
    client = table.seats[seat]
    hand_id = view.hand_id
    if on_turn is not None:
        on_turn(client, hand_id, seat)
    legal = client.legal_plays(table.table_id, hand_id)
    kinds = set(legal.kinds)
    assert kinds, f"seat {seat} is to act but may do nothing"
    if kinds & BIDDING:
        own = client.hand_view(table.table_id, hand_id)
        highest = max((b.points for b in state_of(own).bids), default=0)
        kind, value = choose_bid(sorted(kinds), list(own.own_cards), highest)
        if rng.random() < 0.3:  # now and then a random word, to reach every path
            kind = rng.choice(sorted(kinds))
            value = str(rng.choice([v for v in (1, 2, 3) if v > highest] or [3])) \
                if kind == "bid" else None
        answer = client.act(table.table_id, hand_id, kind, value=value).hand
    elif legal.plays and (not legal.may_pass or rng.random() < 0.8):
        answer = client.act(table.table_id, hand_id, "play", rng.choice(legal.plays).cards).hand
    else:
        assert legal.may_pass
        answer = client.act(table.table_id, hand_id, "pass").hand
    assert answer.viewer_seat == seat and not answer.full_view
    assert all(not state.cards for state in answer.seats)
    return answer


def play_out(table: Seated, view: pb.HandView, rng: random.Random, **kwargs: Any
             ) -> pb.HandView:
    """Bots act until the hand is over."""
    for _ in range(MAX_COMMANDS):
        if view.status == COMPLETED:
            return view
        view = step(table, view, rng, **kwargs)
    raise AssertionError(f"hand {view.hand_id} did not end in {MAX_COMMANDS} commands")


# -- what a viewer may see -------------------------------------------------------------------

def shown_kitty(state: dpb.HandView) -> bool:
    """Whether the 底牌 are public in this view: the landlord took them, or the hand is over."""
    return state.HasField("landlord") or state.phase == "over"


def check_view(view: pb.HandView, seat: int | None, audit: RefereeClient) -> None:
    """A seat's (or, seat None, the public's) view holds its own cards and nothing hidden:
    no other seat's cards, no deck, and the 底牌 only once shown; its cards are exactly the
    seat's cards at that version, as the audit role sees them."""
    state = state_of(view)
    assert not view.full_view and all(not s.cards for s in view.seats)
    truth = audit.hand_at(view.hand_id, view.version)
    if seat is None:
        assert not view.own_cards and not view.HasField("viewer_seat")
    else:
        assert view.viewer_seat == seat
        assert Counter(view.own_cards) == Counter(truth.seats[seat].cards)
    if not shown_kitty(state):
        assert not state.kitty and not state.kitty_shown
    else:
        assert Counter(state.kitty) == Counter(state_of(truth).kitty)
    assert [s.card_count for s in view.seats] == [len(s.cards) for s in truth.seats]
    if view.status != COMPLETED:
        assert not view.HasField("deal_seed")


def check_event(event: pb.Event, seat: int | None) -> None:
    """A 斗地主 event shows no hidden card to a seat (seat None: to the public): the deal
    shows only the seat's own cards, never the deck, the 底牌 or the seed."""
    if not event.name.startswith(f"{GAME}."):
        return
    assert event.WhichOneof("payload") is None  # no 0.2 field, no JSON values: its own message
    message = payload(event)
    if isinstance(message, dpb.HandDealt):
        assert not message.deck and not message.kitty and not message.HasField("deal_seed")
        assert all(not h.cards for h in message.hands if h.seat != seat)
        if seat is not None:
            assert len(message.hands[seat].cards) == message.hands[seat].card_count == 17


# -- whole hands -----------------------------------------------------------------------------

def finished_hand_checks(server: LiveServer, table: Seated, final: pb.HandView) -> None:
    """A finished hand: its scores add up to 0, its transcript re-rules to its result, its
    evidence verifies."""
    state = state_of(final)
    result = state.result
    assert state.phase == "over" and sum(result.scores) == 0
    if result.redeal:
        assert not state.HasField("landlord") and set(result.scores) == {0}
    else:
        assert result.landlord == state.landlord and result.winner in ("landlord", "farmers")
        landlord_gain = result.scores[result.landlord]
        assert landlord_gain == (2 if result.winner == "landlord" else -2) * result.unit
        assert result.unit == result.base * result.multiplier.total
    audit = server.audit()
    transcript = audit.export_transcript(final.hand_id)
    assert transcript["game"] == GAME
    ruling = server.platform().adjudicate(transcript)
    assert ruling["status"] == "completed" and ruling["rejected"] is None
    checked = audit.verify_hand(final.hand_id)
    assert checked.ok, checked


@pytest.mark.parametrize("preset", PRESETS)
def test_bots_play_whole_hands_of_every_preset_and_the_match_adds_them_up(
        server: LiveServer, preset: str) -> None:
    table = doudizhu_table(server, preset, hands=2, prefix=f"whole-{preset}")
    rng = random.Random(PRESETS.index(preset) + 7)
    hand_ids = []
    for number in (1, 2):
        dealt = table.platform.start_hand(table.table_id).hand
        state = state_of(dealt)
        assert dealt.game_view.type_url.endswith("fiftyk.games.doudizhu.v1.HandView")
        assert state.phase == "bidding" and len(dealt.seats) == PLAYERS
        assert [s.card_count for s in dealt.seats] == [17, 17, 17]
        assert state.bidding == ("rob" if preset == "rob" else "points")
        final = play_out(table, dealt, rng)
        finished_hand_checks(server, table, final)
        hand_ids.append(final.hand_id)
        assert server.audit().get_table(table.table_id).hands_played == number
    sheet = table.platform.scores(table.table_id)
    assert sheet.match_over and [row.hand_id for row in sheet.hands] == hand_ids
    totals = Counter[str]()
    for row in sheet.hands:
        outcome = dpb.HandResult()
        assert row.game_outcome.Unpack(outcome)
        for seat, score in enumerate(outcome.scores):
            totals[f"seat:{seat}"] += score
    assert {t.side: int(t.score) for t in sheet.totals} == {
        f"seat:{seat}": totals[f"seat:{seat}"] for seat in range(PLAYERS)}


@pytest.mark.postgres
def test_a_whole_hand_on_postgresql(fresh_postgres_db: str, tmp_path: Path) -> None:
    live = LiveServer(server_config(tmp_path, database_url=fresh_postgres_db))
    try:
        table = doudizhu_table(live, "rob", prefix="pg")
        final = play_out(table, table.platform.start_hand(table.table_id).hand,
                         random.Random(4))
        finished_hand_checks(live, table, final)
    finally:
        live.stop()


# -- privacy ---------------------------------------------------------------------------------

def _reader(server: LiveServer, table: Seated, other: Seated, credential: str
            ) -> tuple[RefereeClient, int | None]:
    if credential == "seat":
        return table.seats[0], 0
    if credential == "other_seat":
        return other.seats[0], None
    if credential == "spectator":
        token = table.platform.issue_spectator_token(table.table_id).spectator_token
        return server.client(token=token), None
    if credential == "platform":
        return table.platform, None
    return server.client(), None


def _delivered(receiver: WebhookReceiver, positions: set[int]) -> list[Any]:
    """The deliveries of these feed positions, once all arrived (within a generous bound)."""
    deadline = time.monotonic() + ARRIVAL_TIMEOUT_SECONDS
    while True:
        found = [d for d in receiver.accepted() if d.json["position"] in positions]
        if {d.json["position"] for d in found} == positions:
            return found
        assert time.monotonic() < deadline, f"{len(found)} of {len(positions)} delivered"
        time.sleep(0.05)


def check_delivered(event: dict[str, Any]) -> None:
    """A webhook's event (the platform's view, as JSON) shows no hidden card."""
    own = event.get("game_event", {})
    if own.get("@type", "").endswith("doudizhu.v1.HandDealt"):
        assert "deck" not in own and "kitty" not in own and "deal_seed" not in own
        assert all("cards" not in hand for hand in own.get("hands", []))


def test_nobody_sees_another_hand_or_the_kitty_before_it_is_shown(server: LiveServer) -> None:
    """Every seat and a spectator watch the table with views; at every turn each credential
    reads the hand and the acting seat dry-runs a play; the platform reads the feed and a
    webhook receives it. Nothing shows a card its reader may not see."""
    receiver = WebhookReceiver()
    platform = server.platform()
    streams: list[Watcher] = []
    try:
        registered = platform.register_webhook(receiver.url, description="ddz privacy")
        table = doudizhu_table(server, "classic", prefix="priv")
        other = doudizhu_table(server, "classic", prefix="priv-other")
        audit = server.audit()
        spectator = platform.issue_spectator_token(table.table_id).spectator_token
        watchers = [Watcher(server.target, table.table_id, {"token": token},
                            include_views=True, seat=seat).start()
                    for seat, token in enumerate(table.tokens)]
        public = Watcher(server.target, table.table_id, {"token": spectator},
                         include_views=True).start()
        streams.extend([*watchers, public])
        outcomes: Counter[tuple[str, str]] = Counter()
        kitty_before: list[bool] = []

        def on_turn(client: RefereeClient, hand_id: str, seat: int) -> None:
            for credential in CREDENTIALS:
                reader, reader_seat = _reader(server, table, other, credential)
                try:
                    view = reader.hand_view(table.table_id, hand_id)
                except grpc.RpcError as error:
                    outcomes[credential, str(error_details(error).reason)] += 1
                    continue
                outcomes[credential, "OK"] += 1
                check_view(view, reader_seat, audit)
                kitty_before.append(shown_kitty(state_of(view)))
            # A dry run answers what a play would do and shows nothing more.
            legal = client.legal_plays(table.table_id, hand_id)
            if legal.plays:
                checked = client.act(table.table_id, hand_id, "play", legal.plays[0].cards,
                                     validate_only=True)
                assert checked.validated
                if checked.HasField("hand"):
                    check_view(checked.hand, seat, audit)

        final = play_out(table, platform.start_hand(table.table_id).hand, random.Random(31),
                         on_turn=on_turn)
        assert outcomes["seat", "OK"] and outcomes["spectator", "OK"]
        assert outcomes["platform", "OK"] and not outcomes["other_seat", "OK"]
        assert not outcomes["none", "OK"]
        assert False in kitty_before  # the bidding was read before the 底牌 were shown
        feed = table_feed(platform, table.table_id, {final.hand_id})
        last = feed[-1].position
        for seat, watcher in enumerate(watchers):
            messages = watcher.finish(last)
            assert [m.event.name for m in messages if m.event.name.startswith(GAME)] == [
                e.name for e in feed if e.name.startswith(GAME)]
            for message in messages:
                check_event(message.event, seat)
                if message.HasField("hand"):
                    check_view(message.hand, seat, audit)
        for message in public.finish(last):
            check_event(message.event, None)
            if message.HasField("hand"):
                check_view(message.hand, None, audit)
        for event in feed:
            check_event(event, None)
        for delivery in _delivered(receiver, {e.position for e in feed}):
            check_delivered(delivery.json["event"])
        # The audit role sees every hand and the 底牌 from the deal.
        dealt = payload(audit.all_hand_events(final.hand_id)[0])
        assert isinstance(dealt, dpb.HandDealt)
        assert len(dealt.kitty) == 3 and len(dealt.deck) == 54 and dealt.HasField("deal_seed")
        first = audit.hand_at(final.hand_id, 1)
        assert first.full_view and len(state_of(first).kitty) == 3
        platform.delete_webhook(registered.webhook.webhook_id)
    finally:
        for watcher in streams:
            if watcher._call is not None:
                watcher._call.cancel()
        receiver.close()


# -- refusals --------------------------------------------------------------------------------

def _refusal(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.RpcError) as refused:
        call()
    details = error_details(refused.value)
    return details.code, str(details.reason), dict(details.metadata)


FAILED = grpc.StatusCode.FAILED_PRECONDITION
INVALID = grpc.StatusCode.INVALID_ARGUMENT


def test_its_refusals_carry_the_games_reasons_and_name_the_game(server: LiveServer) -> None:
    table = doudizhu_table(server, "classic", prefix="refuse")
    dealt = table.platform.start_hand(table.table_id).hand
    hand_id, first = dealt.hand_id, dealt.turn_seat
    bidder, later = table.seats[first], table.seats[(first + 1) % PLAYERS]
    card = bidder.hand_view(table.table_id, hand_id).own_cards[0]
    assert _refusal(lambda: bidder.act(table.table_id, hand_id, "play", [card]))[:2] == (
        FAILED, "BIDDING_OPEN")
    assert _refusal(lambda: later.act(table.table_id, hand_id, "bid", value="1"))[:2] == (
        FAILED, "NOT_YOUR_TURN")
    code, reason, metadata = _refusal(
        lambda: bidder.act(table.table_id, hand_id, "bid", value="4"))
    assert (code, reason, metadata.get("game")) == (FAILED, "INVALID_BID", GAME)
    assert _refusal(lambda: bidder.act(table.table_id, hand_id, "call"))[:2] == (
        FAILED, "WRONG_BIDDING")
    assert _refusal(lambda: bidder.act(table.table_id, hand_id, "declare"))[:2] == (
        INVALID, "INVALID_ACTION")
    bidder.act(table.table_id, hand_id, "bid", value="2")
    assert _refusal(lambda: later.act(table.table_id, hand_id, "bid", value="1"))[:2] == (
        FAILED, "BID_TOO_LOW")
    view = later.act(table.table_id, hand_id, "bid", value="3").hand  # a 3 ends the bidding
    state = state_of(view)
    assert state.phase == "playing" and state.landlord == (first + 1) % PLAYERS
    assert state.kitty_shown and len(state.kitty) == 3 and len(view.own_cards) == 20
    assert _refusal(lambda: later.act(table.table_id, hand_id, "bid", value="3"))[:2] == (
        FAILED, "NOT_BIDDING")
    assert _refusal(lambda: later.act(table.table_id, hand_id, "pass"))[:2] == (
        FAILED, "MUST_LEAD")
    assert _refusal(lambda: later.pass_turn(table.table_id, hand_id))[:2] == (  # 0.2's Pass
        FAILED, "MUST_LEAD")
    loose = _no_combination(list(view.own_cards))
    assert _refusal(lambda: later.act(table.table_id, hand_id, "play", loose))[:2] == (
        FAILED, "INVALID_COMBINATION")
    create = server.platform().create_table
    assert _refusal(lambda: create("classic", 4, game=GAME))[:2] == (
        INVALID, "INVALID_RULESET")
    assert _refusal(lambda: create("tractor", 3, game=GAME))[:2] == (INVALID, "INVALID_RULESET")


def _no_combination(cards: list[str]) -> list[str]:
    """Two cards of different ranks that are not the rocket: no combination."""
    first = cards[0]
    other = next(card for card in cards if rank_of(card) != rank_of(first)
                 and {first, card} != {"SJ", "BJ"})
    return [first, other]


def test_the_rob_preset_calls_then_robs_and_each_rob_doubles(server: LiveServer) -> None:
    table = doudizhu_table(server, "rob", prefix="rob")
    dealt = table.platform.start_hand(table.table_id).hand
    hand_id, first = dealt.hand_id, dealt.turn_seat
    seats = [table.seats[(first + k) % PLAYERS] for k in range(PLAYERS)]
    assert sorted(seats[0].legal_plays(table.table_id, hand_id).kinds) == ["call", "pass"]
    seats[0].act(table.table_id, hand_id, "call")
    assert sorted(seats[1].legal_plays(table.table_id, hand_id).kinds) == ["pass", "rob"]
    seats[1].act(table.table_id, hand_id, "rob")
    seats[2].act(table.table_id, hand_id, "rob")
    view = seats[0].act(table.table_id, hand_id, "rob").hand  # the caller robs back
    state = state_of(view)
    assert state.landlord == first and state.multiplier.robs == 3
    assert state.multiplier.total == 8 and [b.action for b in state.bids] == [
        "call", "rob", "rob", "rob"]


def test_a_hand_every_seat_passes_is_a_redeal_and_the_table_deals_again(
        server: LiveServer) -> None:
    table = doudizhu_table(server, "classic", prefix="redeal")
    dealt = table.platform.start_hand(table.table_id).hand
    view = dealt
    for k in range(PLAYERS):
        view = table.seats[(dealt.turn_seat + k) % PLAYERS].act(
            table.table_id, dealt.hand_id, "pass").hand
    state = state_of(view)
    assert view.status == COMPLETED and state.redeal and state.result.redeal
    assert list(state.result.scores) == [0, 0, 0] and len(state.kitty) == 3
    again = table.platform.start_hand(table.table_id).hand
    assert again.hand_number == 2 and state_of(again).phase == "bidding"


# -- spectators, the lobby -------------------------------------------------------------------

def test_a_spectator_follows_a_table_and_the_lobby_lists_it(server: LiveServer) -> None:
    table = doudizhu_table(server, "douzero", prefix="lobby")
    listed = table.platform.list_tables(game=GAME)
    assert table.table_id in {t.table_id for t in listed.tables}
    assert all(t.game == GAME for t in listed.tables)
    assert table.table_id not in {t.table_id for t in
                                  table.platform.list_tables(game="shengji").tables}
    token = table.platform.issue_spectator_token(table.table_id).spectator_token
    spectator = server.client(token=token)
    watcher = Watcher(server.target, table.table_id, {"token": token},
                      include_views=True).start()
    try:
        final = play_out(table, table.platform.start_hand(table.table_id).hand,
                         random.Random(8))
        last = table_feed(table.platform, table.table_id, {final.hand_id})[-1].position
        messages = watcher.finish(last)
    finally:
        if watcher._call is not None:
            watcher._call.cancel()
    audit = server.audit()
    names = [m.event.name for m in messages]
    assert names[0] == "table.opened" and f"{GAME}.hand_ended" in names
    for message in messages:
        check_event(message.event, None)
        if message.HasField("hand"):
            check_view(message.hand, None, audit)
    check_view(spectator.hand_view(table.table_id, final.hand_id), None, audit)
    assert _refusal(lambda: spectator.act(table.table_id, final.hand_id, "pass"))[0] in (
        grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED)


# -- the command line ------------------------------------------------------------------------

CLI = [sys.executable, "-m", "fiftyk_referee.service.cli"]


@pytest.fixture
def finished(server: LiveServer) -> Iterator[str]:
    """A finished 斗地主 hand's id."""
    table = doudizhu_table(server, "classic", prefix="cli")
    yield play_out(table, table.platform.start_hand(table.table_id).hand,
                   random.Random(2)).hand_id


def test_fiftyk_verify_checks_a_finished_hands_evidence(server: LiveServer, finished: str,
                                                         tmp_path: Path) -> None:
    key = tmp_path / "referee.pub"
    key.write_text(public_pem(Signer.from_text(DEV_SIGNING_KEY).public))
    evidence = tmp_path / "hand.json"
    exported = subprocess.run(
        [*CLI, "export", finished, "--server", server.target, "--audit-key", DEV_AUDIT_KEY,
         "-o", str(evidence)], capture_output=True, text=True, timeout=CLI_TIMEOUT_SECONDS,
        check=False)
    assert exported.returncode == 0, exported.stderr
    done = subprocess.run([*CLI, "verify", str(evidence), "--key", str(key)],
                          capture_output=True, text=True, timeout=CLI_TIMEOUT_SECONDS,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line.split(":")[0].strip() for line in done.stdout.splitlines()[:-1]] == [
        "ok  format", "ok  signature", "ok  chain", "ok  deal", "ok  commitment", "ok  deck",
        "ok  transcript deal", "ok  ledger", "ok  re-rule"]


@pytest.fixture
def _no_key_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(keys.PLATFORM_KEY, raising=False)
    monkeypatch.delenv(keys.AUDIT_KEY, raising=False)


@pytest.mark.usefixtures("_no_key_in_environment")
def test_the_demo_bots_bid_play_whole_hands_and_the_replay_tells_them(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--server", server.target, "--game", GAME, "--hands", "3",
                 "--seed", "6"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.rstrip().endswith("fiftyk demo: 3/3 hands completed")
    hands = re.findall(r"^hand (\d) (\S+): dealer seat \d, seat \d bids first$", out, re.M)
    assert [number for number, _ in hands] == ["1", "2", "3"]
    assert len(re.findall(r"^  seat \d bot-\d: .* \(strength \d+\)$", out, re.M)) == 9
    assert re.search(r"^  seat \d (bids [123]|passes)$", out, re.M)
    assert len(re.findall(r"^  hand \d result:$", out, re.M)) == 3
    assert "final scores after 3 hand(s): " in out
    for _, hand_id in hands:
        assert main(["replay", hand_id, "--server", server.target]) == 0
        told = capsys.readouterr().out
        assert told.startswith(f"hand {hand_id} (table ") and "game doudizhu" in told
        assert "\nresult:\n" in told
        assert re.search(r"^  \[v1\] dealt: 17 cards each, 3 kept back;", told, re.M), told
        assert re.search(r"^    seat 0: 17 cards (\S+ ){16}\S+$", told, re.M)
        events = server.audit().all_hand_events(hand_id)
        rounds = sum(e.name == f"{GAME}.trick_ended" for e in events)
        assert len(re.findall(r"^  \[v\d+-v\d+\] round \d+: ", told, re.M)) in (rounds,
                                                                                rounds + 1)


def test_the_demo_bots_bid_by_strength() -> None:
    strong, weak = "SJ BJ 2S 2H 2C 2D AS", "3S 4H 5C 7D 9S JS QH"
    assert choose_bid(["bid", "pass"], strong.split(), 0) == ("bid", "3")
    assert choose_bid(["bid", "pass"], weak.split(), 0) == ("pass", None)
    assert choose_bid(["bid", "pass"], ["BJ", "2S", "2H", "AS", "AH"], 2) == ("pass", None)
    assert choose_bid(["call", "pass"], ["BJ", "2S", "AS", "5S"], 0) == ("call", None)
    assert choose_bid(["pass", "rob"], ["BJ", "2S", "AS", "5S"], 0) == ("pass", None)


def _listed(*plays: tuple[str, str], may_pass: bool = True) -> pb.ListLegalPlaysResponse:
    return pb.ListLegalPlaysResponse(
        plays=[pb.LegalPlay(cards=cards.split(), combination_type=kind) for cards, kind in plays],
        may_pass=may_pass)


def test_the_demo_bots_keep_their_bombs() -> None:
    held = ["5S", "5H", "5C", "5D", "7S", "9H"]
    leading = dpb.HandView(phase="playing", landlord=0, counts=[6, 17, 17])
    lead = _listed(("5S", "single"), ("7S", "single"), ("9H", "single"), ("5S 5H", "pair"),
                   ("5S 5H 5C 5D", "bomb"), ("5S 5H 5C 7S", "triple_single"), may_pass=False)
    assert list(choose_play(lead, held, leading, 0).cards) == ["7S"]  # type: ignore[union-attr]
    follow = _listed(("9H", "single"), ("5S 5H 5C 5D", "bomb"))
    facing = dpb.HandView(phase="playing", landlord=0, counts=[6, 10, 17],
                          top=dpb.Play(seat=1, cards=["8D"], combination_type="single"))
    assert list(choose_play(follow, held, facing, 0).cards) == ["9H"]  # type: ignore[union-attr]
    only_bomb = _listed(("5S 5H 5C 5D", "bomb"))
    assert choose_play(only_bomb, held, facing, 0) is None  # kept: the opponent holds 10
    facing.counts[1] = 3
    assert choose_play(only_bomb, held, facing, 0) is not None  # it stops a near win
    partner = dpb.HandView(phase="playing", landlord=2, counts=[6, 5, 17],
                           top=dpb.Play(seat=1, cards=["8D"], combination_type="single"))
    assert choose_play(follow, held, partner, 0) is None  # a farmer lets its partner's stand


def test_event_messages_cover_every_public_event_of_the_game() -> None:
    from fiftyk_referee.domain.doudizhu import GAME as DOUDIZHU

    assert set(EVENT_MESSAGES) == {kind.name for kind in DOUDIZHU.events}


# -- found through its entry point, served by reflection ---------------------------------------

def test_a_fiftyk_serve_process_hosts_the_game_and_reflection_serves_its_messages(
        tmp_path: Path) -> None:
    """`fiftyk serve` finds 斗地主 through its entry point; a client with no .proto file
    resolves the game's messages over server reflection and decodes a live hand with them."""
    serving = start_serve(["--data-dir", str(tmp_path), "--port", "0", "--metrics-port", "0",
                           "--workers", "2"], {}, tmp_path / "stderr.log")
    try:
        with grpc.insecure_channel(serving.target) as channel:
            pool = descriptor_pool.DescriptorPool(ProtoReflectionDescriptorDatabase(channel))
            file = pool.FindFileByName("fiftyk/games/doudizhu/v1/doudizhu.proto")
            assert file.package == "fiftyk.games.doudizhu.v1"
            decoder = message_factory.GetMessageClass(
                pool.FindMessageTypeByName("fiftyk.games.doudizhu.v1.HandView"))
            platform = RefereeClient(serving.target, platform_key=DEV_PLATFORM_KEY)
            try:
                table_id = platform.create_table("rob", PLAYERS, game=GAME).table.table_id
                for seat in range(PLAYERS):
                    platform.join_table(table_id, f"reflect-{seat}", seat)
                view = platform.start_hand(table_id).hand
                decoded = decoder()
                assert view.game_view.Unpack(decoded)
                fields = {f.name: v for f, v in decoded.ListFields()}
                assert (fields["phase"], fields["bidding"]) == ("bidding", "rob")
                assert decoded.SerializeToString(deterministic=True) == state_of(
                    view).SerializeToString(deterministic=True)
            finally:
                platform.close()
    finally:
        assert serving.stop() == 0


# -- the turn clock --------------------------------------------------------------------------

CLOCK_BOUND_SECONDS = 120  # a bound for the clock to act on a loaded machine, not a speed test


def test_the_turn_clock_passes_for_seats_that_do_not_bid(server: LiveServer) -> None:
    """Nobody bids at a clocked table: the referee passes for each seat in turn when its time
    runs out, and the hand ends as a redeal; the events say the referee spoke."""
    table = doudizhu_table(server, "classic", options={"turn_timeout": 1}, prefix="clock")
    dealt = table.platform.start_hand(table.table_id).hand
    assert dealt.HasField("turn_deadline")
    audit = server.audit()
    deadline = time.monotonic() + CLOCK_BOUND_SECONDS
    while (events := audit.all_hand_events(dealt.hand_id))[-1].name != f"{GAME}.hand_ended":
        assert time.monotonic() < deadline, [e.name for e in events]
        time.sleep(0.1)
    bids = [payload(e) for e in events if e.name == f"{GAME}.bid"]
    assert [(b.seat, b.action, b.by_referee) for b in bids] == [  # type: ignore[attr-defined]
        ((dealt.turn_seat + k) % PLAYERS, "pass", True) for k in range(PLAYERS)]
    ended = payload(events[-1])
    assert isinstance(ended, dpb.HandEnded) and ended.result.redeal


def test_a_capped_multiplier_shows_what_it_was_before_the_cap(server: LiveServer) -> None:
    """In a rob room capped at 4, three robs make 8: the view shows 4, and 8 uncapped."""
    table = doudizhu_table(server, "rob", options={"multiplier_cap": 4}, prefix="cap")
    dealt = table.platform.start_hand(table.table_id).hand
    seats = [table.seats[(dealt.turn_seat + k) % PLAYERS] for k in range(PLAYERS)]
    for seat, word in zip([0, 1, 2, 0], ["call", "rob", "rob", "rob"], strict=True):
        view = seats[seat].act(table.table_id, dealt.hand_id, word).hand
    multiplier = state_of(view).multiplier
    assert (multiplier.robs, multiplier.total, multiplier.uncapped) == (3, 4, 8)
