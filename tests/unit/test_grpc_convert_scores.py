"""Scores cross the gRPC edge as exact decimal text, never in exponent notation."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from fiftyk_referee.service.grpc.convert import score_text, table_to_proto


@pytest.mark.parametrize(("value", "text"), [
    (220, "220"), (220.0, "220"), ("2.2E+2", "220"), (Decimal("1E+3"), "1000"),
    (-20, "-20"), ("-5.5", "-5.5"), ("0.50", "0.5"), (0, "0"), ("-0", "0"), (None, ""),
])
def test_score_text_is_plain_decimal_text(value: Any, text: str) -> None:
    assert score_text(value) == text


def test_table_scores_are_plain_decimal_text() -> None:
    view = {"table_id": "t", "name": "", "players": 4, "allow_preset_deck": False,
            "hands_played": 2, "hand_ids": [], "next_dealer": 2, "match_over": False,
            "version": 9, "ruleset": {"preset": "classic"}, "seats": [None] * 4,
            "scores": {"team:0": "2.2E+2", "team:1": "-20.0"}, "current_hand": None,
            "match_end_reason": None}
    message = table_to_proto(view, [[0, 2], [1, 3]])
    assert [(s.side, list(s.seats), s.score) for s in message.scores] == [
        ("team:0", [0, 2], "220"), ("team:1", [1, 3], "-20")]
