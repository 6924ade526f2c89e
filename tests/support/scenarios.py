"""Scripted deals shared by several test modules (the arithmetic is in test_hand_scripted)."""

from __future__ import annotations

from typing import Any

from tests.support.scripted import build_deck, deal, ruleset_for, transcript_actions

TRIPLES_3_TO_J = "3*3 4*3 5*3 6*3 7*3 8*3 9*3 10*3 J*3"  # 27 cards, 15 + 30 = 45 points
TRIPLES_4_TO_Q = "4*3 5*3 6*3 7*3 8*3 9*3 10*3 J*3 Q*3"  # 27 cards, 45 points
TRIPLES_6_TO_10 = "6*3 7*3 8*3 9*3 10*3"  # 15 cards, 30 points

# classic (108 cards, 27 each). Seat 0 leads (it holds the first ♥3 dealt).
CLASSIC_HANDS = [
    "3H 3*2 4*3 5*3 6*3 7*3 8*3 9*3 10*3 J*3",  # one triple straight: 45 points
    "Q*4 K*8 A*8 3*5 4*2",  # eight Ks: 80 points
    "2*8 6*3 7*3 8*3 9*3 10*3 5*4",  # 8-bomb, triple straight (30), four 5s (20): 50 points
    None,  # the rest: 3*0 4*3 5 6*2 7*2 8*2 9*2 10*2 J*5 Q*4 SJ*2 BJ*2: 5 + 20 = 25 points
]
SEAT_0_GOES_OUT = f"""
0: {TRIPLES_3_TO_J}   # seat 0 is out, 1st
1: pass
2: pass
3: pass              # seat 0 wins 45; 接风
"""
CLASSIC_SCRIPT = SEAT_0_GOES_OUT + f"""
1: 3
2: 2*8               # the 8-bomb wins the trick: 0 points
3: pass
1: pass
2: {TRIPLES_6_TO_10}
3: pass
1: Q*4               # a 4-bomb beats the triple straight; seat 1 wins 30
2: pass
3: pass
1: K
2: 5*4               # seat 2 is out, 2nd: the hand ends in the middle of this trick
"""
# CLASSIC_SCRIPT's outcome (worked out in test_hand_scripted): out [0, 2], collected
# [45, 30, 30, 0], team scores 270 and -70.
CLASSIC_TEAM_SCORES = (270, -70)


def classic_transcript() -> dict[str, Any]:
    """CLASSIC_SCRIPT as a `deck` transcript (completed: 270 / -70, 15 actions)."""
    return {
        "format": "fiftyk-transcript/1",
        "ruleset": {"preset": "classic"},
        "players": 4,
        "deck": build_deck(ruleset_for("classic"), CLASSIC_HANDS),
        "actions": transcript_actions(deal("classic", CLASSIC_HANDS), CLASSIC_SCRIPT),
    }
