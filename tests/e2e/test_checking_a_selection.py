"""A client checks a selection before acting, for both games: the records of
`ListLegalPlays.requirements` describe what the seat owes, and `Act` with `validate_only`
answers for certain (the refusal it would get, or the view it would leave) recording
nothing."""

from __future__ import annotations

import random

import grpc
import pytest

from fiftyk_referee.service.grpc.errors import error_reason
from tests.e2e.harness import LiveServer, seat_bots
from tests.e2e.test_shengji import shengji_table
from tests.e2e.test_shengji import step as shengji_step


def _refusal(call: object) -> str | None:
    with pytest.raises(grpc.RpcError) as refused:
        call()  # type: ignore[operator]
    return error_reason(refused.value)[1]


def test_a_shengji_follower_checks_a_selection_against_the_records_and_the_dry_run(
        server: LiveServer) -> None:
    table = shengji_table(server)
    rng = random.Random(3)
    hand = table.platform.start_hand(table.table_id).hand
    while not (hand.shengji.phase == "playing" and hand.trick):
        view = shengji_step(table, hand.hand_id, rng)
        assert view is not None
        hand = view
    seat = table.seats[hand.turn_seat]
    legal = seat.legal_plays(table.table_id, hand.hand_id)
    records = {r.kind: r for r in legal.requirements}
    lead_size = len(hand.trick[0].cards)
    assert records["count"].count == lead_size and "suit" in records
    own = list(seat.hand_view(table.table_id, hand.hand_id).own_cards)
    assert records["suit"].group in {"S", "H", "C", "D", "T"}
    # A listed example passes the dry run and leaves the stored hand as it was.
    example = list(legal.plays[0].cards)
    checked = seat.act(table.table_id, hand.hand_id, "play", example, validate_only=True)
    assert checked.validated and checked.version == hand.version
    assert seat.hand_view(table.table_id, hand.hand_id).version == hand.version
    # A selection of the wrong size gets the code the play would get, and records nothing.
    wrong = own[:lead_size + 1]
    assert _refusal(lambda: seat.act(table.table_id, hand.hand_id, "play", wrong,
                                     validate_only=True)) == "WRONG_CARD_COUNT"
    assert seat.hand_view(table.table_id, hand.hand_id).version == hand.version


def test_a_fiftyk_seat_checks_a_selection_with_the_dry_run(server: LiveServer) -> None:
    seated = seat_bots(server, "classic", 4)
    hand = seated.platform.start_hand(seated.table_id).hand
    seat = seated.seats[hand.turn_seat]
    legal = seat.legal_plays(seated.table_id, hand.hand_id)
    assert not legal.requirements and not legal.truncated  # 五十K lists every play
    own = list(seat.hand_view(seated.table_id, hand.hand_id).own_cards)
    listed = {tuple(sorted(p.cards)) for p in legal.plays}
    pair_or_not = own[:2]
    answer = None
    if tuple(sorted(pair_or_not)) in listed:
        answer = seat.act(seated.table_id, hand.hand_id, "play", pair_or_not,
                          validate_only=True)
        assert answer.validated
    else:
        assert _refusal(lambda: seat.act(seated.table_id, hand.hand_id, "play", pair_or_not,
                                         validate_only=True)) == "INVALID_COMBINATION"
    assert seat.hand_view(seated.table_id, hand.hand_id).version == hand.version
