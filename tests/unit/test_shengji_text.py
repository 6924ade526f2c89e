"""The replay's account of a Shengji hand, read from its events as the audit role sees them."""

from __future__ import annotations

import itertools
import re
from collections import Counter

from fiftyk_referee.domain.game import Action, ActionKind
from fiftyk_referee.domain.observer import AUDITOR
from fiftyk_referee.domain.shengji import GAME
from fiftyk_referee.domain.shengji.hand import ShengjiHand
from fiftyk_referee.service.grpc.events import PAYLOADS
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.shengji_text import ShengjiAccount, ended_lines
from tests.unit.shengji.helpers import new_hand, play

TRICK = re.compile(r"^\[v(\d+)-v(\d+)\] trick (\d+): (.*) → seat (\d) takes (\d+) points$")
MAX_ACTIONS = 500


def _audit_events(hand: ShengjiHand) -> list[pb.Event]:
    """The hand's stored events as the audit role reads them (GetHandHistory's messages)."""
    messages = []
    for stored in hand.collect_events():
        public = GAME.public_event(stored, AUDITOR)
        assert public is not None
        field, build = PAYLOADS[type(public)]
        message = pb.Event(aggregate_version=stored.originator_version, name=public.NAME)
        getattr(message, field).CopyFrom(build(public))
        messages.append(message)
    return messages


def _scripted_hand() -> ShengjiHand:
    """Seat 2 declares 2H after round 1; dealer seat 0 throws AS KS, which fails (seat 2 holds
    the other AS); then every seat plays the first listed legal play to the end."""
    hand = new_hand("tractor", hands={0: "AS KS", 1: "2H 3C", 2: "AS 4C"}, dealer=0)
    while hand.phase == "declaring":
        if hand.round == 1 and hand.declaration is None:
            hand.act(1, Action(ActionKind.DECLARE, ("2H",)))
        seat = hand.to_act
        assert seat is not None
        hand.act(seat, Action(ActionKind.DECLARE, ()))
    hand.act(0, Action(ActionKind.BURY, tuple(map(str, hand.lowest_bury()))))
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
    account = ShengjiAccount()
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
        assert Counter(line.split(" cards ", 1)[1].split()) == dealt[seat]
    kitty = " ".join(hand.deck[4 * size:])
    assert f"  seat 0 deals, trump suit: hearts; it takes the kitty {kitty} (8 cards)" in lines
    assert any(x.endswith(f"seat 0 buries {' '.join(map(str, hand.kitty))}") for x in lines)
    tricks = [TRICK.match(x) for x in lines if TRICK.match(x)]
    assert len(tricks) == hand.tricks_played
    first = tricks[0]
    assert first is not None
    assert first.group(4).startswith("seat 0 throws AS KS, fails: plays KS · seat 1 ")
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
