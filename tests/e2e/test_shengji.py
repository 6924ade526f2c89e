"""升级/拖拉机 through the real API: whole hands by bots, the kitty's privacy, its refusals."""

from __future__ import annotations

import json
import random
from collections import Counter

import grpc
import pytest

from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.service.games.shengji import client as shengji_calls
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e.harness import LiveServer, Seated
from tests.unit.shengji.helpers import deck_for

PLAYERS = 4
MAX_COMMANDS = 3_000
DECLARE, BURY = pb.ACTION_KIND_DECLARE, pb.ACTION_KIND_BURY


def shengji_table(server: LiveServer, preset: str = "tractor") -> Seated:
    """A Shengji table with a bot in every seat."""
    platform = server.platform()
    table = platform.create_table(preset, PLAYERS, game="shengji").table
    tokens = [platform.join_table(table.table_id, f"sj-{table.table_id[:8]}-{seat}",
                                  seat).seat_token for seat in range(PLAYERS)]
    return Seated(table.table_id, PLAYERS, tokens,
                  [server.client(token=token) for token in tokens], platform)


def step(table: Seated, hand_id: str, rng: random.Random) -> pb.HandView | None:
    """One action by the first seat that has something to do; None when nobody has."""
    for seat in rng.sample(range(PLAYERS), PLAYERS):
        client = table.seats[seat]
        legal = client.legal_plays(table.table_id, hand_id)
        if DECLARE in legal.actions:
            # Declare the strongest listed set now and then, else declare nothing (once
            # per window: a seat that has spoken may only overcall).
            spoken = client.hand_view(table.table_id, hand_id).shengji.spoken
            if legal.plays and (seat in spoken or rng.random() < 0.3):
                return shengji_calls.declare(client, table.table_id, hand_id,
                                             legal.plays[-1].cards).hand
            if seat in spoken:
                continue
            return shengji_calls.declare(client, table.table_id, hand_id).hand
        if BURY in legal.actions:
            return shengji_calls.bury(client, table.table_id, hand_id, legal.plays[0].cards).hand
        if legal.plays:
            return client.play(table.table_id, hand_id, rng.choice(legal.plays).cards).hand
    return None


def play_out(table: Seated, hand: pb.HandView, rng: random.Random) -> pb.HandView:
    """Bots act until the hand is over; every answer is the acting seat's own view."""
    commands = 0
    while hand.status != pb.HAND_STATUS_COMPLETED:
        commands += 1
        assert commands < MAX_COMMANDS, "the hand did not end"
        view = step(table, hand.hand_id, rng)
        assert view is not None, "nobody had anything to do in a hand in progress"
        assert not view.full_view and all(not state.cards for state in view.seats)
        hand = view
    return hand


def test_bots_play_whole_shengji_hands_and_the_match_advances(server: LiveServer) -> None:
    table = shengji_table(server)
    rng = random.Random(12)
    for number in (1, 2):
        hand = table.platform.start_hand(table.table_id).hand
        assert hand.HasField("shengji") and hand.shengji.phase == "declaring"
        final = play_out(table, hand, rng)
        result = final.shengji.result
        assert final.shengji.phase == "over" and result.side in ("dealer", "attackers")
        assert len(result.levels_after) == 2
        seen = server.audit().get_table(table.table_id)
        assert seen.hands_played == number and seen.game == "shengji"
    transcript = server.audit().export_transcript(final.hand_id)
    assert transcript["game"] == "shengji"
    ruling = server.platform().adjudicate(transcript)
    assert ruling["status"] == "completed" and ruling["rejected"] is None


def test_only_the_dealer_who_buried_the_kitty_sees_it(server: LiveServer) -> None:
    table = shengji_table(server)
    rng = random.Random(5)
    hand = table.platform.start_hand(table.table_id).hand
    while hand.shengji.phase in ("declaring", "burying"):
        view = step(table, hand.hand_id, rng)
        assert view is not None
        hand = view
    dealer = hand.shengji.dealer
    for seat, client in enumerate(table.seats):
        view = client.hand_view(table.table_id, hand.hand_id).shengji
        assert view.kitty_visible == (seat == dealer)
        assert (len(view.kitty) == view.kitty_size) == (seat == dealer)
    assert not table.platform.hand_view(table.table_id, hand.hand_id).shengji.kitty
    audit = server.audit().hand_view(table.table_id, hand.hand_id)
    assert audit.full_view and len(audit.shengji.kitty) == audit.shengji.kitty_size


def _refusal(call: object) -> tuple[grpc.StatusCode, str | None]:
    with pytest.raises(grpc.RpcError) as refused:
        call()  # type: ignore[operator]
    code, reason, _ = error_reason(refused.value)
    return code, reason


def test_nobody_passes_in_shengji_and_fiftyk_has_no_declarations(server: LiveServer) -> None:
    table = shengji_table(server)
    hand = table.platform.start_hand(table.table_id).hand
    seat: RefereeClient = table.seats[0]
    assert _refusal(lambda: seat.pass_turn(table.table_id, hand.hand_id)) == (
        grpc.StatusCode.FAILED_PRECONDITION, "PASS_NOT_ALLOWED")
    fiftyk = server.platform().create_table("classic", PLAYERS).table
    tokens = [server.platform().join_table(fiftyk.table_id, f"fk-{fiftyk.table_id[:8]}-{s}",
                                           s).seat_token for s in range(PLAYERS)]
    dealt = server.platform().start_hand(fiftyk.table_id).hand
    player = server.client(token=tokens[dealt.turn_seat])
    code, reason = _refusal(
        lambda: shengji_calls.declare(player, fiftyk.table_id, dealt.hand_id, ["2S"]))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ACTION")


@pytest.mark.parametrize(("preset", "forced"), [("shengji_io", ["9C"]),
                                                ("tractor", ["4C", "4C"])])
def test_a_shengji_io_hand_plays_the_house_rules_through_the_server(
        server: LiveServer, preset: str, forced: list[str]) -> None:
    options = {"start_level": "10", "declare_pacing": "final"}
    platform = server.platform()
    table_id = platform.create_table(preset, PLAYERS, game="shengji", options=options,
                                     allow_preset_deck=True).table.table_id
    tokens = [platform.join_table(table_id, f"io-{preset}-{seat}", seat).seat_token
              for seat in range(PLAYERS)]
    table = Seated(table_id, PLAYERS, tokens, [server.client(token=t) for t in tokens],
                   platform)
    throw = ["9C", "8C", "8C", "4C", "4C"]
    rules = ShengjiRules.from_spec(preset, options)
    deck = deck_for(rules, {0: " ".join(throw) + " 10H", 1: "QC QC"}, dealer=None)
    hand = platform.start_hand(table_id, deck=deck).hand
    hand_id = hand.hand_id
    seat0 = table.seats[0]
    shengji_calls.declare(seat0, table_id, hand_id, ["10H"])
    for seat in (1, 2, 3, 0):
        shengji_calls.declare(table.seats[seat], table_id, hand_id)
    held = list(seat0.hand_view(table_id, hand_id).own_cards)
    for card in throw:
        held.remove(card)
    view = shengji_calls.bury(seat0, table_id, hand_id, held[:rules.kitty_size]).hand
    assert view.shengji.phase == "playing" and view.shengji.dealer == 0
    view = seat0.play(table_id, hand_id, throw).hand
    assert [list(f.forced) for f in view.shengji.failed_throws] == [forced]
    assert sorted(view.trick[0].cards) == sorted(forced)
    final = play_out(table, view, random.Random(3))
    assert final.shengji.phase == "over"
    transcript = server.audit().export_transcript(hand_id)
    assert transcript["ruleset"]["preset"] == preset
    ruling = server.platform().adjudicate(transcript)
    assert ruling["status"] == "completed" and ruling["rejected"] is None
    live = json.loads(final.shengji.result.result_json)
    assert live["throws_failed"][0]["forced"] == forced
    assert {key: ruling[key] for key in live} == live  # the export re-rules to the live result


# -- follow duties through the API ------------------------------------------------------------

PLAIN_CLUBS = "3C 4C 5C 6C 7C 8C 9C JC QC KC AC"


def _led_at_ten(server: LiveServer, preset: str, leader: str, lead: str, follower: str,
                prefix: str) -> tuple[Seated, str]:
    """Level 10: seat 0 declares 10H, deals, buries and leads `lead`; seat 1 holds `follower`."""
    options = {"declare_pacing": "final", "start_level": "10"}
    table = seat_bots_for(server, preset, options, prefix)
    rules = ShengjiRules.from_spec(preset, options)
    deck = deck_for(rules, {0: leader, 1: follower})
    hand_id = table.platform.start_hand(table.table_id, deck=deck).hand.hand_id
    dealer = table.seats[0]
    shengji_calls.declare(dealer, table.table_id, hand_id, ["10H"])
    for seat in (1, 2, 3, 0):
        shengji_calls.declare(table.seats[seat], table.table_id, hand_id)
    rest = Counter(dealer.hand_view(table.table_id, hand_id).own_cards)
    rest.subtract(lead.split())
    shengji_calls.bury(dealer, table.table_id, hand_id, list(rest.elements())[:rules.kitty_size])
    dealer.play(table.table_id, hand_id, lead.split())
    return table, hand_id


def seat_bots_for(server: LiveServer, preset: str, options: dict[str, str],
                  prefix: str) -> Seated:
    """A Shengji table with these options, preset decks allowed, a bot in every seat."""
    platform = server.platform()
    table = platform.create_table(preset, PLAYERS, options=options, allow_preset_deck=True,
                                  game="shengji").table
    tokens = [platform.join_table(table.table_id, f"{prefix}-{seat}", seat).seat_token
              for seat in range(PLAYERS)]
    return Seated(table.table_id, PLAYERS, tokens,
                  [server.client(token=token) for token in tokens], platform)


@pytest.mark.parametrize(("preset", "leader", "lead", "follower", "wrong", "reason"), [
    # Three packs: AH-10C runs into the tractor and keeps 10S×3 for the triple slot.
    ("titanic", "10H 10H 10D 10D SJ SJ SJ BJ", "10D 10D 10H 10H SJ SJ SJ",
     "AH AH AH 10C 10C 10S 10S 10S 5H " + PLAIN_CLUBS.replace("C", "D") + " "
     + PLAIN_CLUBS + " 2C 2D 2S 3S 4S 5S 6S 7S",
     "AH AH 10S 10S 10C 10C 5H", "MUST_FOLLOW_TRIPLE"),
    # Every 2 a trump: AH-2S and 2C-2H fill the four-pair tractor (one run AH-2S-2H fills 3).
    ("tractor_changzhu", "10H 3H 3H 4H 4H 5H 5H 6H 6H", "3H 3H 4H 4H 5H 5H 6H 6H",
     "AH AH 2S 2S 2C 2C 2H 2H 8H 8H " + PLAIN_CLUBS + " 3D 4D 5D 6D",
     "AH AH 2S 2S 2H 2H 8H 8H", "MUST_FOLLOW_TRACTOR"),
], ids=["three-packs-triple-kept", "permanent-two-two-runs"])
def test_a_follower_owes_the_best_reading_of_its_runs(
        server: LiveServer, preset: str, leader: str, lead: str, follower: str, wrong: str,
        reason: str) -> None:
    table, hand_id = _led_at_ten(server, preset, leader, lead, follower, f"runs-{preset}")
    seat = table.seats[1]
    assert Counter(seat.hand_view(table.table_id, hand_id).own_cards) == \
        Counter(follower.split())
    assert _refusal(lambda: seat.play(table.table_id, hand_id, wrong.split())) == (
        grpc.StatusCode.FAILED_PRECONDITION, reason)
    listed = seat.legal_plays(table.table_id, hand_id).plays
    view = seat.play(table.table_id, hand_id, listed[0].cards).hand
    assert [(play.seat, len(play.cards)) for play in view.trick] == [(0, len(lead.split())),
                                                                     (1, len(lead.split()))]
