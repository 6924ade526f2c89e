"""A hand records who sat where when it was dealt; hand commands can be checked against it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.errors import PermissionDenied, ServiceReason
from fiftyk_referee.service.ops.config import parse_database_url


def test_a_hand_command_by_a_player_not_holding_the_seat_is_refused(tmp_path: Path) -> None:
    app = Referee(persistence_env(parse_database_url("", tmp_path)))
    try:
        table_id = app.create_table("classic", None, 4).table_id
        for seat in range(4):
            app.join_table(table_id, f"p{seat}", seat)
        hand = app.start_hand(table_id).hand
        assert hand is not None
        assert hand.seat_players == ["p0", "p1", "p2", "p3"]
        seat = hand.turn
        assert seat is not None
        lowest = list(hand.legal_actions(seat).plays[0].cards)
        with pytest.raises(PermissionDenied) as refused:
            app.play(table_id, str(hand.id), seat, lowest, player_id="someone-else")
        assert refused.value.reason == ServiceReason.WRONG_SEAT
        played = app.play(table_id, str(hand.id), seat, lowest, player_id=f"p{seat}")
        assert played.hand is not None and played.hand.version == hand.version + 1
    finally:
        app.close()
