"""The replay's account of a Shengji hand, read from its events as the audit role sees them."""

from __future__ import annotations

import itertools
import json
import random
import re
from collections import Counter

from fiftyk_referee.domain.cards import parse_cards
from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.observer import AUDITOR
from fiftyk_referee.domain.shengji import GAME
from fiftyk_referee.domain.shengji.cards import LEVEL_RANK, trump_order
from fiftyk_referee.domain.shengji.hand import BURY, DECLARE, ShengjiHand
from fiftyk_referee.domain.shengji.tricks import TrickRules
from fiftyk_referee.service.games.shengji.demo import choose_lead
from fiftyk_referee.service.games.shengji.text import (
    ShengjiAccount,
    ended_lines,
    follow_text,
    result_lines,
    room_points_text,
    shape_text,
    sorted_cards,
    to_act_text,
)
from fiftyk_referee.service.grpc.events import payloads
from fiftyk_referee.service.grpc.games import legacy_copy
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.unit.shengji.helpers import new_hand, play

TRICK = re.compile(
    r"^\[v(\d+)-v(\d+)\] trick (\d+): (.*) → seat (\d) takes (\d+) points( and leads)?$")
MAX_ACTIONS = 500


def _audit_events(hand: ShengjiHand) -> list[pb.Event]:
    """The hand's stored events as the audit role reads them (GetHandHistory's messages)."""
    messages = []
    for stored in hand.collect_events():
        public = GAME.public_event(stored, AUDITOR)
        assert public is not None
        field, build = payloads()[type(public)]
        message = pb.Event(aggregate_version=stored.originator_version, name=public.NAME)
        legacy_copy(build(public).SerializeToString(), getattr(message, field))
        messages.append(message)
    return messages


def _scripted_hand() -> ShengjiHand:
    """Seat 2 declares 2H after round 1; dealer seat 0 throws AS KS, which fails (seat 2 holds
    the other AS); then every seat plays the first listed legal play to the end."""
    hand = new_hand("tractor", hands={0: "AS KS", 1: "2H 3C", 2: "AS 4C"}, dealer=0)
    while hand.phase == "declaring":
        if hand.round == 1 and hand.declaration is None:
            hand.act(1, Action(DECLARE, ("2H",)))
        seat = hand.to_act
        assert seat is not None
        hand.act(seat, Action(DECLARE, ()))
    hand.act(0, Action(BURY, tuple(map(str, hand.lowest_bury()))))
    play(hand, 0, "AS KS")
    for _ in range(MAX_ACTIONS):
        if hand.is_over:
            break
        seat = hand.to_act
        assert seat is not None
        hand.act(seat, Action.play(hand.legal_actions(seat, 1).plays[0].cards))
    assert hand.is_over
    return hand


def test_the_account_tells_declarations_the_deal_burial_every_trick_and_the_result() -> None:
    hand = _scripted_hand()
    events = _audit_events(hand)
    account = ShengjiAccount(events[0].shengji_hand_dealt)
    lines = [line for event in events[1:] for line in account.lines(event)]
    text = "\n".join(lines)
    assert re.search(r"^\[v\d+\] round 1: seat 1 declares 2H$", text, re.MULTILINE)
    # The deal as dealt, seat by seat (the audit sees every card), and the kitty taken.
    dealt: list[Counter[str]] = [Counter() for _ in range(4)]
    size = hand.rules.hand_size
    for index, card in enumerate(hand.deck[:4 * size]):
        dealt[(1 + index) % 4][card] += 1  # dealer seat 0: seat 1 is dealt first
    for seat in range(4):
        line = next(x for x in lines if x.startswith(f"  seat {seat}: {size} cards "))
        shown = line.split(" cards ", 1)[1].split()
        assert Counter(shown) == dealt[seat]
        assert shown == sorted_cards(shown, hand.order)  # as a player holds them
    kitty = " ".join(sorted_cards(hand.deck[4 * size:], hand.order))
    assert (f"  seat 0 deals, trump: rank 2, hearts; it takes the kitty {kitty} (8 cards)"
            " and buries 8") in lines
    buried = " ".join(sorted_cards(map(str, hand.kitty), hand.order))
    assert any(x.endswith(f"seat 0 buries {buried}; seat 0 leads") for x in lines)
    tricks = [TRICK.match(x) for x in lines if TRICK.match(x)]
    assert len(tricks) == hand.tricks_played
    first = tricks[0]
    assert first is not None
    assert first.group(4).startswith(
        "seat 0 throws AS KS (single+single), fails: forced to play single KS · seat 1 ")
    assert [m.group(7) is not None for m in tricks if m] == (
        [True] * (hand.tricks_played - 1) + [False])  # the winner leads, but after the last
    assert [int(m.group(3)) for m in tricks if m] == list(range(1, hand.tricks_played + 1))
    assert sum(int(m.group(6)) for m in tricks if m) == sum(hand.collected)
    versions = [(int(m.group(1)), int(m.group(2))) for m in tricks if m]
    assert all(a < b for a, b in versions)
    assert all(b1 < a2 for (_, b1), (a2, _) in itertools.pairwise(versions))


def test_the_result_lines_come_from_the_hand_ended_event() -> None:
    hand = _scripted_hand()
    ended = _audit_events(hand)[-1]
    assert ended.HasField("shengji_hand_ended")
    result = hand.result
    assert result is not None
    lines = ended_lines(ended.shengji_hand_ended)
    attackers = result["attackers"]
    assert lines[0] == "dealer seat 0; trump: rank 2, hearts, declared by seat 1 with 2H"
    assert f"= {attackers['points']} points" in lines[3]
    before, after = result["levels"]["before"], result["levels"]["after"]
    assert (f"levels: team 0+2 {before[0]} → {after[0]}, team 1+3 {before[1]} → {after[1]};"
            f" next dealer seat {result['next_dealer']}") in lines


# -- text for people: sorted hands, shapes, who acts, room points -------------------------

HEARTS_TEN = trump_order(LEVEL_RANK["10"], "H", False)
NO_TRUMP_TWO = trump_order(LEVEL_RANK["2"], None, False)
BOOK = TrickRules()


def test_a_hand_is_sorted_trumps_first_then_spades_hearts_clubs_diamonds() -> None:
    held = ["3S", "2D", "KC", "AH", "10S", "BJ", "10H", "AS", "10C", "9H", "SJ"]
    assert sorted_cards(held, HEARTS_TEN) == [
        "BJ", "SJ", "10H", "10C", "10S", "AH", "9H", "AS", "3S", "KC", "2D"]
    assert sorted_cards(["3H", "2S", "AD", "2H", "SJ"], NO_TRUMP_TWO) == [
        "SJ", "2H", "2S", "3H", "AD"]


def test_a_lead_is_named_by_its_shape_and_a_throw_by_its_parts() -> None:
    assert shape_text(["KS", "KS", "QS", "QS"], HEARTS_TEN, BOOK) == "tractor"
    assert shape_text(["JS", "JS", "9S", "9S"], HEARTS_TEN, BOOK) == "tractor"  # 10 is trump
    assert shape_text(["AS", "KS", "KS"], HEARTS_TEN, BOOK) == "throw (pair+single)"
    assert shape_text(["5D"], HEARTS_TEN, BOOK) == "single"


def test_a_follow_says_whether_it_follows_trumps_or_discards() -> None:
    lead = BOOK.read(parse_cards("5C 5C"), HEARTS_TEN)
    assert follow_text(["7C", "7C"], lead, HEARTS_TEN, BOOK) == "follows: pair"
    assert follow_text(["7C", "9C"], lead, HEARTS_TEN, BOOK) == "follows: single+single"
    assert follow_text(["3H", "3H"], lead, HEARTS_TEN, BOOK) == "trumps: pair"
    assert follow_text(["3H", "4H"], lead, HEARTS_TEN, BOOK) == "discards"  # no pair: no win
    assert follow_text(["3H", "4S"], lead, HEARTS_TEN, BOOK) == "discards"


def test_to_act_names_the_seat_and_what_it_does() -> None:
    view = pb.HandView(turn_seat=2, shengji=pb.ShengjiState(phase="playing"))
    assert to_act_text(view) == "seat 2 to play (leads)"
    view.trick.add(seat=1, cards=["3S"])
    assert to_act_text(view) == "seat 2 to play"
    assert to_act_text(pb.HandView(turn_seat=0, shengji=pb.ShengjiState(
        phase="burying"))) == "seat 0 to bury the kitty"
    declaring = pb.HandView(turn_seat=1, shengji=pb.ShengjiState(phase="declaring",
                                                                 spoken=[0, 2]))
    assert to_act_text(declaring) == "seats 1, 3 may declare or declare nothing" \
                                     " (the window is open)"


def test_room_points_read_the_same_in_the_demo_and_the_replay() -> None:
    hand = new_hand("tractor_qq", hands={0: "AS KS", 1: "2H 3C", 2: "AS 4C"}, dealer=0)
    while hand.phase == "declaring":
        seat = hand.to_act
        assert seat is not None
        hand.act(seat, Action(DECLARE, ()))
    hand.act(0, Action(BURY, tuple(map(str, hand.lowest_bury()))))
    for _ in range(MAX_ACTIONS):
        if hand.is_over:
            break
        seat = hand.to_act
        assert seat is not None
        hand.act(seat, Action.play(hand.legal_actions(seat, 1).plays[0].cards))
    assert hand.result is not None
    room = hand.result["room_points"]
    expected = room_points_text(room["base"], room["multiplier"], room["delta"], room["after"])
    assert expected.startswith(f"room points: base {room['base']} × {room['multiplier']}, seats ")
    ended = _audit_events(hand)[-1].shengji_hand_ended
    assert expected in ended_lines(ended)
    message = pb.ShengjiResult(result_json=json.dumps(hand.result), levels_after=["2", "2"])
    assert expected in result_lines(message, ["2", "2"])


def test_demo_bots_lead_pairs_tractors_and_throws_now_and_then() -> None:
    listed = [(["QS", "QS", "KS", "KS"], "tractor"), (["7S", "7S"], "pair"), (["AS"], "single"),
              (["9S"], "single"), (["3C"], "single"), (["5H"], "single")]
    rng = random.Random(1)
    leads = [choose_lead(listed, HEARTS_TEN, rng) for _ in range(300)]
    kinds = Counter(kind for _, kind in leads)
    assert kinds["throw"] > 20 and kinds["tractor"] + kinds["pair"] > 100 and kinds["single"]
    for cards, kind in leads:
        if kind == "throw":  # two listed leads of one suit group, no card in common
            groups = {HEARTS_TEN.group(c) for c in parse_cards(" ".join(cards))}
            assert groups == {"S"} and len(cards) > 1
        else:
            assert (cards, kind) in listed
    only_singles = [(["AS"], "single"), (["3C"], "single")]  # nothing to throw together
    assert all(kind == "single" for _, kind in
               (choose_lead(only_singles, HEARTS_TEN, rng) for _ in range(50)))
