"""Act, the one action path, for both games: kinds, aliases, dry runs and named moments.

Play, Pass, Resign, Declare and Bury are aliases of Act; a retry through an alias finds the
receipt the alias wrote before (fingerprints unchanged); `validate_only` records nothing;
`expected_version` and a declaration's window refuse a command decided on a hand that has
moved on.
"""

from __future__ import annotations

import grpc
import pytest

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e.harness import LiveServer, seat_bots
from tests.e2e.test_shengji import shengji_table


def _refused(call: object) -> tuple[grpc.StatusCode, str | None]:
    with pytest.raises(grpc.RpcError) as refused:
        call()  # type: ignore[operator]
    code, reason, _ = error_reason(refused.value)
    return code, reason


def _fiftyk_hand(server: LiveServer) -> tuple[str, str, RefereeClient, pb.HandView]:
    seated = seat_bots(server, "classic", 4)
    dealt = seated.platform.start_hand(seated.table_id).hand
    seat = seated.seats[dealt.turn_seat]
    return seated.table_id, dealt.hand_id, seat, seat.hand_view(seated.table_id, dealt.hand_id)


def test_fiftyk_act_plays_checks_and_refuses_a_stale_version(server: LiveServer) -> None:
    table_id, hand_id, seat, view = _fiftyk_hand(server)
    legal = seat.legal_plays(table_id, hand_id)
    assert list(legal.kinds) == ["play"]  # the leader may not pass
    cards = list(legal.plays[0].cards)

    checked = seat.act(table_id, hand_id, "play", cards, validate_only=True)
    # A dry run answers the hand as it stands (docs/integrating.md): the same version.
    assert checked.validated and checked.version == view.version
    assert seat.hand_view(table_id, hand_id).version == view.version  # nothing recorded
    assert _refused(lambda: seat.act(table_id, hand_id, "pass", validate_only=True)) == (
        grpc.StatusCode.FAILED_PRECONDITION, "MUST_LEAD")
    assert _refused(lambda: seat.act(table_id, hand_id, "declare", ["2S"])) == (
        grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ACTION")
    assert _refused(lambda: seat.act(table_id, hand_id, "play", cards,
                                     expected_version=view.version + 1)) == (
        grpc.StatusCode.ABORTED, "STALE_VERSION")

    played = seat.act(table_id, hand_id, "play", cards, expected_version=view.version,
                      request_id="act-1")
    assert played.version == view.version + 1 and not played.replayed
    assert played.table_version >= 1
    again = seat.act(table_id, hand_id, "play", cards, expected_version=view.version,
                     request_id="act-1")
    assert again.replayed and again.version == played.version


def test_an_alias_retry_finds_the_receipt_its_alias_wrote(server: LiveServer) -> None:
    table_id, hand_id, seat, _ = _fiftyk_hand(server)
    cards = list(seat.legal_plays(table_id, hand_id).plays[0].cards)
    first = seat.play(table_id, hand_id, cards, request_id="alias-1")
    retried = seat.play(table_id, hand_id, cards, request_id="alias-1")
    assert retried.replayed and retried.version == first.version
    # Act names the same kind and cards: the same fingerprint, so the same receipt.
    through_act = seat.act(table_id, hand_id, "play", cards, request_id="alias-1")
    assert through_act.replayed and through_act.version == first.version


def test_shengji_declarations_through_act_name_their_window(server: LiveServer) -> None:
    table = shengji_table(server)
    hand = table.platform.start_hand(table.table_id).hand
    seat_number = hand.turn_seat
    seat = table.seats[seat_number]
    legal = seat.legal_plays(table.table_id, hand.hand_id)
    assert "declare" in legal.kinds and pb.ACTION_KIND_DECLARE in legal.actions
    window = hand.shengji.round
    assert _refused(lambda: seat.act(table.table_id, hand.hand_id, "declare",
                                     value=str(window + 1))) == (
        grpc.StatusCode.FAILED_PRECONDITION, "WRONG_WINDOW")
    assert _refused(lambda: seat.act(table.table_id, hand.hand_id, "declare",
                                     value="soon")) == (
        grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ACTION")
    assert _refused(lambda: seat.act(table.table_id, hand.hand_id, "pass")) == (
        grpc.StatusCode.FAILED_PRECONDITION, "PASS_NOT_ALLOWED")

    checked = seat.act(table.table_id, hand.hand_id, "declare", value=str(window),
                       validate_only=True)
    assert checked.validated and checked.version == hand.version
    assert seat.hand_view(table.table_id, hand.hand_id).version == hand.version
    spoken = seat.act(table.table_id, hand.hand_id, "declare", value=str(window),
                      expected_version=hand.version)
    assert spoken.version == hand.version + 1 and seat_number in spoken.hand.shengji.spoken
    # The same "declare nothing" again, decided on the old version: refused, not applied.
    assert _refused(lambda: seat.act(table.table_id, hand.hand_id, "declare",
                                     value=str(window), expected_version=hand.version)) == (
        grpc.StatusCode.ABORTED, "STALE_VERSION")
    # The Declare alias takes the window too.
    request = pb.DeclareRequest(table_id=table.table_id, hand_id=hand.hand_id,
                                window=window + 5)
    assert _refused(lambda: seat.stub.Declare(request, metadata=seat.metadata, timeout=10)) \
        == (grpc.StatusCode.FAILED_PRECONDITION, "WRONG_WINDOW")
