"""Seat entropy end to end: the real server, both games, every seat contributing to the deal.

A table created with `seat_entropy` opens a draw on StartHand (the commitment to the
referee's seed is public before anyone contributes), each seat sends its bytes with its own
token, the last one deals; the hand's evidence then verifies, names every contribution, and
a forged contribution or seed is caught. A seat that stays silent cannot stall the table:
the referee's clock deals when the window closes.
"""

from __future__ import annotations

import copy
import hashlib
import random
import time
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from fiftyk_referee.domain.deal import DRAW_ALGORITHM, seed_commitment
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, Signer
from fiftyk_referee.service.trust.verifier import Verifier, rules_engine
from tests.e2e.harness import COMPLETED, LiveServer, Seated, play_out
from tests.e2e.test_doudizhu import play_out as play_out_doudizhu
from tests.e2e.test_shengji import play_out as play_out_shengji

LONG_WINDOW = 300  # the seats contribute well within it, however loaded the machine
SHORT_WINDOW = 1
WAIT_SECONDS = 120  # a generous bound on a loaded machine, not a speed requirement
GAMES = {"fiftyk": ("classic", 4), "shengji": ("tractor", 4), "doudizhu": ("classic", 3)}


def entropy_table(server: LiveServer, game: str, window: int, *, direct: bool = True
                  ) -> Seated:
    """A full seat-entropy table (whose seats send their bytes directly unless not
    `direct`: commit, then reveal, is tested in tests/e2e/test_commit_reveal.py)."""
    preset, players = GAMES[game]
    platform = server.platform()
    table = platform.create_table(preset, players, game="" if game == "fiftyk" else game,
                                  entropy_window=window, entropy_direct=direct).table
    assert table.seat_entropy.window_seconds == window
    tokens = [platform.join_table(table.table_id, f"se-{table.table_id[:8]}-{seat}",
                                  seat).seat_token for seat in range(players)]
    return Seated(table.table_id, players, tokens,
                  [server.client(token=token) for token in tokens], platform)


PLAY_OUT: dict[str, Callable[[Seated, pb.HandView, random.Random], Any]] = {
    "fiftyk": lambda t, v, r: play_out(t, v, r)[0],
    "shengji": play_out_shengji,
    "doudizhu": play_out_doudizhu,
}


def reason(call: Callable[[], Any]) -> str:
    with pytest.raises(grpc.RpcError) as refused:
        call()
    return str(error_details(refused.value).reason)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_seat_contributes_and_the_hand_verifies(server: LiveServer, game: str) -> None:
    table = entropy_table(server, game, LONG_WINDOW)
    opened = table.platform.start_hand(table.table_id)
    assert not opened.HasField("hand") and opened.table.HasField("draw")
    published = opened.table.draw.commitment
    assert not opened.table.HasField("current_hand_id")
    # The commitment is public (in the feed too) before any seat has sent a byte.
    feed = table.platform.read_events(topics=["table.draw_opened"], limit=1000).events
    assert [e.table_draw_opened.commitment for e in feed
            if e.aggregate_id == table.table_id] == [published]

    sent = [bytes([seat + 1]) * 32 for seat in range(table.players)]
    last: pb.ContributeEntropyResponse | None = None
    for seat, client in enumerate(table.seats):
        last = client.contribute_entropy(table.table_id, sent[seat])
        if seat < table.players - 1:
            assert not last.HasField("hand")
            assert list(last.table.draw.contributed) == list(range(seat + 1))
    assert last is not None and last.HasField("hand")
    hand = last.hand
    assert hand.viewer_seat == table.players - 1 and not hand.full_view
    assert all(not state.cards for state in hand.seats)  # only its own cards
    assert hand.deal_commitment == published and not hand.HasField("deal_seed")
    # Its bytes are in the deal: a second contribution is refused as one already sent.
    assert reason(lambda: table.seats[0].contribute_entropy(table.table_id)) \
        == "ENTROPY_ALREADY_SENT"

    digests = [e.table_entropy_contributed for e in table.platform.read_events(
        topics=["table.entropy_contributed"], limit=1000).events
        if e.aggregate_id == table.table_id]
    assert [(d.seat, d.entropy_sha256) for d in digests] == [
        (seat, hashlib.sha256(data).hexdigest()) for seat, data in enumerate(sent)]
    # From the deal on, every seat can check its own bytes in the table's public event.
    started = [e.table_hand_started for e in table.platform.read_events(
        topics=["table.hand_started"], limit=1000).events if e.aggregate_id == table.table_id]
    assert [list(s.contributions) for s in started] == [[data.hex() for data in sent]]

    finished = PLAY_OUT[game](table, hand, random.Random(18))
    assert finished.status == COMPLETED
    audit = server.audit()
    evidence = audit.export_evidence(hand.hand_id)
    deal = evidence["deal"]
    assert deal["algorithm"] == DRAW_ALGORITHM
    assert deal["contributions"] == [data.hex() for data in sent]
    assert deal["commitment"] == published == seed_commitment(bytes.fromhex(deal["seed"]))
    assert evidence["transcript"]["deal"]["contributions"] == deal["contributions"]
    checked = audit.verify_hand(hand.hand_id)
    assert checked.ok, [(c.check, c.status, c.detail) for c in checked.checks]
    lines = {c.check: c for c in checked.checks}
    detail = lines["deck"].detail
    assert DRAW_ALGORITHM in detail and f"{table.players} sent" in detail

    # A forged contribution, or another seed, is caught even when the referee re-signs.
    signer = Signer.from_text(DEV_SIGNING_KEY)
    for forge, check in ((_swap_contribution, "deal"), (_other_seed, "deal")):
        forged = forge(copy.deepcopy(evidence))
        report = Verifier(signer.sign(forged), trusted=[signer.public],
                          rules=rules_engine()).run()
        assert report.failure is not None and report.failure.check == check, report.lines


def _unsigned(evidence: dict[str, Any]) -> dict[str, Any]:
    evidence.pop("signature", None)
    return evidence


def _swap_contribution(evidence: dict[str, Any]) -> dict[str, Any]:
    evidence = _unsigned(evidence)
    evidence["deal"]["contributions"][0] = "ab" * 32
    return evidence


def _other_seed(evidence: dict[str, Any]) -> dict[str, Any]:
    evidence = _unsigned(evidence)
    evidence["deal"]["seed"] = "00" * 32
    return evidence


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_silent_seat_cannot_stall_the_table(server: LiveServer, game: str) -> None:
    table = entropy_table(server, game, SHORT_WINDOW)
    table.platform.start_hand(table.table_id)
    table.seats[1].contribute_entropy(table.table_id, b"\x07" * 16)
    current = ""
    for _ in range(WAIT_SECONDS * 10):  # the clock deals once the window has closed
        view = table.platform.get_table(table.table_id)
        if view.HasField("current_hand_id"):
            current = view.current_hand_id
            break
        time.sleep(0.1)
    assert current, "the referee's clock never dealt the draw"
    assert not view.HasField("draw")
    # Seat 0 sent nothing: once dealt, as before, its window is closed.
    assert reason(lambda: table.seats[0].contribute_entropy(table.table_id)) \
        == "ENTROPY_WINDOW_CLOSED"
    hand = table.platform.hand_view(table.table_id, current)
    PLAY_OUT[game](table, hand, random.Random(7))
    evidence = server.audit().export_evidence(current)
    expected = [""] * table.players
    expected[1] = (b"\x07" * 16).hex()
    assert evidence["deal"]["contributions"] == expected
    assert server.audit().verify_hand(current).ok


def test_contributions_are_refused_with_their_reasons(server: LiveServer) -> None:
    table = entropy_table(server, "fiftyk", LONG_WINDOW)
    seat = table.seats[0]
    assert reason(lambda: seat.contribute_entropy(table.table_id)) == "NO_DRAW_OPEN"
    table.platform.start_hand(table.table_id)
    assert reason(lambda: seat.contribute_entropy(table.table_id, b"x" * 8)) \
        == "INVALID_ENTROPY"
    assert reason(lambda: seat.contribute_entropy(table.table_id, b"")) == "MISSING_FIELD"
    seat.contribute_entropy(table.table_id, b"y" * 16, request_id="once")
    again = seat.contribute_entropy(table.table_id, b"y" * 16, request_id="once")
    assert again.replayed
    assert reason(lambda: seat.contribute_entropy(table.table_id)) == "ENTROPY_ALREADY_SENT"
    assert reason(lambda: table.platform.start_hand(table.table_id)) == "HAND_IN_PROGRESS"
    assert reason(lambda: table.platform.leave_table(table.table_id, 2)) == "HAND_IN_PROGRESS"
    with pytest.raises(grpc.RpcError) as refused:
        table.platform.create_table("classic", 4, entropy_window=301)
    assert error_details(refused.value).reason == "INVALID_ENTROPY"
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
