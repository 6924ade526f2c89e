"""Tables name their game; an unknown game is refused like any invalid ruleset."""

from __future__ import annotations

import grpc
import pytest

from fiftyk_referee.service.grpc.errors import error_reason
from tests.e2e.harness import LiveServer


def test_a_table_reports_the_game_it_was_created_for(server: LiveServer) -> None:
    platform = server.platform()
    named = platform.create_table("classic", 4, game="fiftyk").table
    unnamed = platform.create_table("classic", 4).table
    assert (named.game, unnamed.game) == ("fiftyk", "fiftyk")
    assert named.ruleset.spec.game == "fiftyk"
    assert platform.get_table(named.table_id).game == "fiftyk"


def test_an_unknown_game_is_an_invalid_ruleset(server: LiveServer) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        server.platform().create_table("classic", 4, game="chess")
    code, reason, message = error_reason(refused.value)
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_RULESET")
    assert "chess" in message and "fiftyk" in message
