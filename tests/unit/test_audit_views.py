"""What a hand's view reveals of its deal, to each viewer, in every built-in game."""

from __future__ import annotations

import pytest

from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.game import Rules
from fiftyk_referee.domain.games import game_named, hosted
from fiftyk_referee.domain.observer import AUDITOR, SPECTATOR, SeatViewer

SEED = bytes(range(32))


def _seats(rules: Rules, players: int) -> bool:
    try:
        rules.check_players(players)
    except RuleError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(hosted()))
def test_the_audit_role_sees_the_deal_seed_while_the_hand_is_played_and_nobody_else(
        name: str) -> None:
    game = game_named(name)
    rules = game.rules(game.presets[0])
    players = next(n for n in range(2, 9) if _seats(rules, n))
    hand = game.deal(table_id="t", number=1, rules=rules, players=players,
                     dealer=players - 1, seat_players=[None] * players, carry={},
                     deck=None, seed=SEED)
    assert not hand.is_over
    assert hand.view(AUDITOR).seed == SEED.hex()
    for viewer in (SPECTATOR, SeatViewer(0)):
        assert hand.view(viewer).seed is None
