"""Scores cross the gRPC edge as exact decimal text, never in exponent notation."""

from __future__ import annotations

from decimal import Decimal

import pytest

from fiftyk_referee.domain.table import SideScore, TableView
from fiftyk_referee.service.grpc.convert import decimal_text, table_to_proto


@pytest.mark.parametrize(("value", "text"), [
    (Decimal(220), "220"), (Decimal("220.0"), "220"), (Decimal("2.2E+2"), "220"),
    (Decimal("1E+3"), "1000"), (Decimal(-20), "-20"), (Decimal("-5.5"), "-5.5"),
    (Decimal("0.50"), "0.5"), (Decimal(0), "0"), (Decimal("-0"), "0"),
])
def test_decimal_text_is_plain_decimal_text(value: Decimal, text: str) -> None:
    assert decimal_text(value) == text


def test_table_scores_are_plain_decimal_text() -> None:
    view = TableView(
        table_id="t", version=9, game="fiftyk", name="", ruleset={"preset": "classic"},
        fingerprint="", players=4, seats=(None,) * 4,
        scores=(SideScore("team:0", (0, 2), Decimal("2.2E+2")),
                SideScore("team:1", (1, 3), Decimal("-20.0"))),
        hands_played=2, current_hand=None, hand_ids=(), next_dealer=2, match_over=False,
        match_end_reason=None, allow_preset_deck=False)
    message = table_to_proto(view)
    assert [(s.side, list(s.seats), s.score) for s in message.scores] == [
        ("team:0", [0, 2], "220"), ("team:1", [1, 3], "-20")]
