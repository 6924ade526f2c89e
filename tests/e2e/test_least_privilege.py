"""Least privilege: only the platform credential may deal a preset deck; a seat token at a
table that allows preset decks still may not choose the cards."""

from __future__ import annotations

import grpc
import pytest

from fiftyk_referee.service.grpc.errors import error_details
from tests.e2e.harness import LiveServer, seat_bots, seeded_deck


def test_a_seat_token_cannot_stack_the_deck_even_where_preset_decks_are_allowed(
    server: LiveServer,
) -> None:
    seated = seat_bots(server, "classic", 4, allow_preset_deck=True, prefix="stacker")
    with pytest.raises(grpc.RpcError) as refused:
        seated.seats[0].start_hand(seated.table_id, deck=seeded_deck("classic", 5))
    details = error_details(refused.value)
    assert (details.code, details.reason) == (grpc.StatusCode.PERMISSION_DENIED,
                                              "PLATFORM_REQUIRED")
    # The seat may still deal a shuffled hand, and the platform a preset one.
    assert seated.seats[0].start_hand(seated.table_id).hand.hand_id
    other = seat_bots(server, "classic", 4, allow_preset_deck=True, prefix="dealer")
    assert other.platform.start_hand(other.table_id,
                                     deck=seeded_deck("classic", 5)).hand.hand_id
