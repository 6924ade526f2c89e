"""Scripted hands from preset decks: every expected number is worked out by hand from docs/rules.md.

Hands are chosen so that most cards leave in a few big plays (long triple straights, bombs),
which keeps each script short. Point cards (docs/rules.md#cards): every 5 is worth 5, every
10 and K 10; a two-pack deck holds 200 points, a one-pack deck 100 (120 with joker_points).
Each finished hand is also replayed from its events and adjudicated from its exported
transcript, which must give the same state and the same result.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.fiftyk import GAME as FIFTYK
from fiftyk_referee.domain.fiftyk.events import Announced
from fiftyk_referee.domain.fiftyk.game import BOMBS, TRICKS
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.reasons import FiftykReason
from fiftyk_referee.domain.fiftyk.views import Announcement, TopPlay
from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.observer import AUDITOR, SeatViewer
from tests.support.checks import (
    assert_adjudication_reproduces,
    assert_points_conserved,
    assert_replay_rebuilds,
    assert_views_private,
)
from tests.support.scenarios import (
    CLASSIC_HANDS,
    CLASSIC_SCRIPT,
    SEAT_0_GOES_OUT,
    TRIPLES_4_TO_Q,
    TRIPLES_6_TO_10,
)
from tests.support.scripted import bomb_train, deal, run


def counts(hand: Hand, seat: int) -> list[int | None]:
    """The card counts `seat` sees (None where the rules hide one)."""
    return [state.card_count for state in hand.view(SeatViewer(seat)).seats]


def finished(hand: Hand) -> dict[str, Any]:
    """The result of a hand that must be over, after the cross-checks every hand must pass."""
    assert hand.is_over and hand.result is not None
    assert_points_conserved(hand)
    assert_views_private(hand)
    assert_adjudication_reproduces(hand)
    assert_replay_rebuilds(hand)
    return hand.result


def team_scores(result: dict[str, Any]) -> list[int | float]:
    return [team["score"] for team in result["teams"]]


def seat_scores(result: dict[str, Any]) -> list[int | float]:
    return [seat["score"] for seat in result["seats"]]


def winner(result: dict[str, Any]) -> tuple[int | None, int | None]:
    return result["winner"]["team"], result["winner"]["seat"]


def rejected(hand: Hand, script: str) -> Reason:
    """Run a one-line script that must be refused; the hand must not change."""
    version = hand.version
    with pytest.raises(RuleError) as refused:
        run(hand, script)
    assert hand.version == version
    assert refused.value.message
    return refused.value.reason


# -- full-deal team games (docs/rules.md#full-deal-team-games-scoringteam) --------------------

def test_classic_double_catch_leftover_to_winners_and_a_trick_cut_short() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    assert hand.turn == 0
    run(hand, SEAT_0_GOES_OUT)
    assert hand.turn == 1  # wind=next: the next seat still in the hand leads
    run(hand, CLASSIC_SCRIPT.removeprefix(SEAT_0_GOES_OUT))
    result = finished(hand)
    assert hand.out == [0, 2]
    # The cut-short trick (K 10 + four 5s 20) goes to its top play's player, seat 2.
    assert hand.collected == [45, 30, 30, 0]
    # Team 0: 45 + 30 = 75, double catch +100 = 175, leftover to_winners: seat 1 still holds
    # 80 - 10 = 70, seat 3 holds 25, so +95 = 270. Team 1: 30 - 100 = -70.
    assert team_scores(result) == [270, -70]
    assert seat_scores(result) == [270, -70, 270, -70]
    assert [t["collected"] for t in result["teams"]] == [75, 30]
    assert winner(result) == (0, None)


def test_classic_bomb_multiplier_multiplies_final_scores_for_an_unbeaten_eight_bomb() -> None:
    hand = deal("classic", CLASSIC_HANDS, bomb_bonus="multiplier")
    run(hand, CLASSIC_SCRIPT)
    result = finished(hand)
    # As above (270 / -70); seat 2's 2*8 won its trick: 8-card bomb x8. The 4-card bombs
    # (Q*4, and 5*4 that ended the hand) multiply by nothing.
    assert team_scores(result) == [270 * 8, -70 * 8] == [2160, -560]
    assert hand.unbeaten_bombs == [(2, 8), (1, 4), (2, 4)]


def test_classic_draw_when_first_and_fourth_meet_second_and_third() -> None:
    hand = deal("classic", [
        "3H 3*2 4*3 5*3 6*3 7*3 8*3 9*3 10*3 J*3",  # 45 points
        TRIPLES_4_TO_Q,  # 45 points
        None,  # 3 4*2 5*2 6*2 7*2 8*2 9*2 10*2 J*2 K*8 SJ BJ: 10 + 20 + 80 = 110 points
        "A*8 2*8 Q*5 SJ BJ 3*4",  # no points
    ])
    run(hand, SEAT_0_GOES_OUT + f"""
1: {TRIPLES_4_TO_Q}   # seat 1 is out, 2nd; seat 1 wins 45, 接风 to seat 2
2: pass
3: pass
2: K*4               # 40
3: pass
2: 5
3: pass
2: 10                # seat 2 has collected 40 + 5 + 10 = 55
3: pass
2: K
3: 2                 # seat 3 wins 10
2: pass
3: A*8
2: pass
3: 2*7
2: pass
3: Q*5
2: pass
3: 3*4
2: pass
3: SJ BJ             # seat 3 is out, 3rd: team 1 is out
""")
    result = finished(hand)
    assert hand.out == [0, 1, 3]
    assert hand.collected == [45, 45, 55, 10]
    # 1st and 4th against 2nd and 3rd: nobody pays. Team 0: 45 + 55 = 100. Team 1: 45 + 10
    # = 55, plus seat 2's leftover to_winners 110 - 40 - 5 - 10 - 10 = 45: 100. A draw.
    assert team_scores(result) == [100, 100]
    assert winner(result) == (None, None)


# jinzhou (108 cards): triples are 炮 (3-bombs); penalties 50 / 30; leftover deduct; diff_tenth.
JINZHOU_HANDS = [
    "3H 3*2 4*3 5*3 6*3 7*3 8*3 9*3 10*3 J*3",  # 45 points
    TRIPLES_4_TO_Q,  # 45 points
    "K*7 A*8 2*8 5 10 K 3",  # 7-bomb of K (70), a 50K (25): 95 points
    None,  # 3*4 4*2 5 6*2 7*2 8*2 9*2 10 J*2 Q*5 SJ*2 BJ*2: 5 + 10 = 15 points
]
JINZHOU_SCRIPT = SEAT_0_GOES_OUT + f"""
1: {TRIPLES_4_TO_Q}   # seat 1 is out, 2nd
2: pass
3: pass
2: K*7
3: pass
2: A*8
3: pass
2: 2*8
3: pass
2: 5 10 K
3: pass
2: 3                 # seat 2 is out, 3rd: team 0 is out
"""


def test_jinzhou_single_catch_with_leftover_deducted_and_diff_tenth() -> None:
    hand = deal("jinzhou", JINZHOU_HANDS)
    run(hand, JINZHOU_SCRIPT)
    result = finished(hand)
    assert hand.out == [0, 1, 2]
    assert hand.collected == [45, 45, 95, 0]
    # Team 0: 45 + 95 = 140, single catch +30 = 170. Team 1: 45 - 30 = 15, seat 3's leftover
    # 15 deducted: 0. diff_tenth: (170 - 0) / 10 = 17 and -17.
    assert team_scores(result) == [17, -17]
    assert winner(result) == (0, None)


def test_jinzhou_diff_tenth_score_ending_in_a_half() -> None:
    # With the preset's leftover=deduct every point stays on the board and the difference is
    # always a multiple of 10; voiding the leftover makes an odd number of fives possible.
    hand = deal("jinzhou", JINZHOU_HANDS, leftover="void")
    run(hand, JINZHOU_SCRIPT)
    result = finished(hand)
    # Team 0: 140 + 30 = 170. Team 1: 45 - 30 = 15 (seat 3's 15 are void).
    # (170 - 15) / 10 = 15.5 and (15 - 170) / 10 = -15.5.
    assert team_scores(result) == [15.5, -15.5]
    assert result["side_totals"] == {"team:0": "15.5", "team:1": "-15.5"}


def test_fuzhou_bomb_extra_leftover_void_and_wind_to_partner() -> None:
    hand = deal("fuzhou", [
        "3H 3*2 4*3 5*3 6*3 7*3 8*3 9*3 10*3 J*2",  # 45 points
        "J*6 3*5 4*5 5*5 6*5",  # 25 points
        "A*5 2*6 Q*7 K*8",  # 80 points
        None,  # 7*5 8*5 9*5 10*5 Q A*3 2*2: 50 points
    ], wind="partner")
    run(hand, """
0: 3*3 4*3 5*3 6*3 7*3 8*3 9*3 10*3
1: pass
2: pass
3: pass              # seat 0 wins 45 and leads again
0: J*2               # seat 0 is out, 1st
1: pass
2: pass
3: pass
""")
    assert hand.turn == 2  # wind=partner: the partner leads, not the next seat
    run(hand, """
2: A*5
3: pass
1: J*6               # beats (and voids) the 5-bomb
2: 2*6               # beats (and voids) seat 1's 6-bomb
3: pass
1: pass
2: Q*7
3: pass
1: pass
2: K*8               # seat 2 is out, 2nd: the hand ends on this unbeaten 8-bomb
""")
    result = finished(hand)
    assert hand.out == [0, 2]
    assert hand.collected == [45, 0, 80, 0]
    # Team 0: 45 + 80 = 125, double catch +100 = 225, unbeaten bombs 6 (+100), 7 (+300) and
    # 8 cards (+1000): 1625. Team 1: -100; the leftover 25 + 50 is void.
    assert team_scores(result) == [1625, -100]
    assert winner(result) == (0, None)


# jiaodong: 54 cards, seats 0 and 1 get 14, seats 2 and 3 get 13; 120 points (jokers 10).
JIAODONG_HANDS = [
    "3H 3S 3C 4 5 6 7 8 9 10 J Q K A",  # 25 points
    "2*4 SJ BJ A*3 K*2 Q*3",  # 20 + 20 = 40 points
    "4*2 5*2 6*2 7*2 8*2 9*2 K",  # 20 points
    None,  # 3D 4 5 6 7 8 9 10*3 J*3: 35 points
]


def test_jiaodong_joker_points_kickers_four_with_two_and_zero_penalties() -> None:
    hand = deal("jiaodong", JIAODONG_HANDS)
    run(hand, """
0: 4 5 6 7 8 9 10 J Q K A
1: pass
2: pass
3: pass
0: 3*3               # 3 ranks above 2 (three_high); seat 0 is out, 1st
1: pass
2: pass
3: pass
1: 2*4 SJ BJ         # four with two
2: pass
3: pass
1: A*3 K*2           # triple with a pair
2: pass
3: pass
1: Q*3               # seat 1 is out, 2nd
2: pass
3: pass
2: 4*2 5*2 6*2 7*2 8*2 9*2
3: pass
2: K                 # seat 2 is out, 3rd
""")
    result = finished(hand)
    assert hand.out == [0, 1, 2]
    assert hand.collected == [25, 40, 20, 0]
    # Penalties are 0 and the leftover (seat 3's 35) is void: 25 + 20 = 45 against 40.
    assert team_scores(result) == [45, 40]
    assert winner(result) == (0, None)


# -- QQ rules (docs/rules.md#the-qq-rules-scoringqq) -------------------------------------------


def test_qq4_first_out_bonus_leftover_loss_and_rating_doubling() -> None:
    hand = deal("qq4", [
        "3H 4 5 6 7 8 9 10 J Q K A 2S",  # 25 points
        "3*3 7*3 8*3 9*3 4",  # no points
        "5S 10S KS J*3 Q*3 4*2 6*2",  # a pure 50K: 25 points
        None,  # 5*2 6 10*2 K*2 A*3 2*3: 50 points
    ])
    run(hand, """
0: 3H 4 5 6 7 8 9 10 J Q K A
1: pass
2: pass
3: pass
0: 2S                # seat 0 is out, 1st
1: pass
2: pass
3: pass
1: 3
2: 5S 10S KS         # seat 2 wins 25
3: pass
1: pass
2: J*3 Q*3 4*2 6*2   # triple straight with pairs; seat 2 is out, 2nd
""")
    result = finished(hand)
    assert hand.out == [0, 2]
    assert hand.collected == [25, 0, 25, 0]
    # Team 0: 25 + 25 + 20 (first out) = 70. Team 1: seat 1 -20 - 0, seat 3 -20 - 50: -90.
    # Team 1 collected nothing and did not go out first: ratings doubled, 140 and -180,
    # halved per seat.
    assert team_scores(result) == [70, -90]
    assert [t["rating"] for t in result["teams"]] == [140, -180]
    assert [s["rating"] for s in result["seats"]] == [70, -90, 70, -90]
    assert winner(result) == (0, None)


def test_qq3_tie_on_score_goes_to_the_player_who_went_out_earlier() -> None:
    # 52 cards, dealer 2: seat 0 gets 18, seats 1 and 2 get 17. Seat 1 holds the ♥3.
    hand = deal("qq3", [
        "5C 10C KD 6*3 7*3 8*3 9*3 J*3",  # an impure 50K: 25 points
        "3H 3S 4 5 6 7 8 9 10 J Q K A 2*4",  # 25 points
        None,  # 3*2 4*3 5*2 10*2 Q*3 K*2 A*3: 50 points
    ])
    assert hand.turn == 1
    run(hand, """
1: 3H 4 5 6 7 8 9 10 J Q K A
2: pass
0: pass
1: 2*4
2: pass
0: pass
1: 3S                # seat 1 is out, 1st
2: pass
0: pass
2: K*2
0: 5C 10C KD         # seat 0 wins 20 + 25 = 45
2: pass
0: 6*3 7*3 8*3 9*3
2: pass
0: J*3               # seat 0 is out, 2nd: two players are out
""")
    result = finished(hand)
    assert hand.out == [1, 0]
    assert hand.collected == [45, 25, 0]
    # Seat 1: 25 + 20 = 45. Seat 0: 45. Seat 2: -20 - (50 - 20) = -50. Seats 0 and 1 tie;
    # seat 1 went out earlier and places first. Seat 0 collected points: no doubling.
    assert seat_scores(result) == [45, 45, -50]
    assert [s["rating"] for s in result["seats"]] == [45, 45, -50]
    assert result["places"] == [1, 0, 2]
    assert winner(result) == (None, 1)


# -- 5/6-card games (docs/rules.md#56-card-games-scoringstock) ---------------------------------


@pytest.mark.parametrize(("leftover", "scores"), [("void", [100, -20]), ("to_winners", [120, -20])])
def test_five_card_first_out_payment_after_the_stock_runs_dry(
    leftover: str, scores: list[int]
) -> None:
    # Two players: 10 cards dealt, a 44-card stock of eleven bombs. Seat 0 plays a bomb each
    # trick and draws the next one; seat 1 always passes and never draws.
    hand = deal("five_card", ["3*4 BJ", "5*4 SJ"],
                "4*4 6*4 7*4 8*4 9*4 10*4 J*4 Q*4 K*4 A*4 2*4", leftover=leftover)
    run(hand, bomb_train(0, "3 4 6 7 8 9 10 J Q K A 2", passers=[1]))
    assert (hand.stock, [len(h) for h in hand.hands], hand.out) == ([], [1, 5], [])
    run(hand, "0: BJ")  # empty hand and empty stock: out, and the hand ends
    result = finished(hand)
    assert hand.out == [0]
    assert hand.collected == [80, 0]  # four 10s and four Ks
    # Seat 1 pays 20 to seat 0: 100 and -20. Seat 1's four 5s (20) are void, or go to the
    # winner under to_winners (120).
    assert seat_scores(result) == scores
    assert winner(result) == (None, 0)


def test_six_card_last_standing_payments_and_replenishment_order() -> None:
    # Three players, dealer 2: 18 cards dealt, 36 in the stock.
    hand = deal("six_card", ["3*4 5*2", "10*2 K*2 SJ BJ", "A*4 K*2"],
                "4*4 6*4 7*4 8*4 9*4 J*4 Q*4 2*4 5*2 10*2", end="last_standing")
    run(hand, bomb_train(0, "3 4 6 7 8 9 J Q", passers=[1, 2]))
    assert len(hand.stock) == 4
    run(hand, """
0: 5*2
1: 10*2
2: K*2
0: pass
1: pass              # seat 2 wins 10 + 20 + 20 = 50
""")
    # Each seat played two cards. The winner draws first, then in turn order: seat 2 takes
    # 5 5, seat 0 takes 10 10 and the stock is dry before seat 1.
    assert [len(h) for h in hand.hands] == [6, 4, 6]
    assert [list(state.cards or ()) for state in hand.view(AUDITOR).seats] == [
        ["10C", "10D", "2S", "2H", "2C", "2D"], ["KS", "KH", "SJ", "BJ"],
        ["5C", "5D", "AS", "AH", "AC", "AD"],
    ]
    run(hand, """
2: A*4
0: pass
1: pass
2: 5*2               # seat 2 is out, 1st; the hand goes on (last_standing)
0: pass
1: pass              # seat 2 wins 10; 接风 to seat 0
0: 2*4
1: pass
0: 10*2              # seat 0 is out, 2nd: only seat 1 is left
""")
    result = finished(hand)
    assert hand.out == [2, 0]
    assert hand.collected == [20, 0, 60]
    # Seat 1 pays 20 to each of seats 2 and 0; seat 0 pays 20 to seat 2.
    # Seat 0: 20 + 20 - 20 = 20. Seat 1: 0 - 40 (its K K are void) = -40. Seat 2: 60 + 40.
    assert seat_scores(result) == [20, -40, 100]
    assert winner(result) == (None, 2)


def test_six_card_two_packs_double_fifty_k_and_a_long_stock() -> None:
    # Two players with hand_size 10: 20 cards dealt, 88 in the stock.
    hand = deal("six_card_two_packs", ["3*8 BJ*2", "A*8 SJ*2"],
                "4*8 5*2 10*2 K*2 5*6 6*8 7*8 8*8 9*8 10*6 J*8 Q*8 K*6 2*8", hand_size=10)
    plays = ["3*8", "4*8", "5*2 10*2 K*2", "5*6", "6*8", "7*8", "8*8", "9*8", "10*6", "J*8",
             "Q*8", "K*6", "2*8", "BJ*2"]
    run(hand, "\n".join(f"0: {play}\n1: pass" for play in plays[:3]))
    assert hand.unbeaten_bombs == [(0, 8), (0, 8)]  # a double 50K is no `bomb`
    run(hand, "\n".join(f"0: {play}\n1: pass" for play in plays[3:-1]) + "\n0: BJ*2")
    result = finished(hand)
    assert hand.out == [0]
    assert hand.collected == [200, 0]  # every 5, 10 and K of both packs
    assert seat_scores(result) == [220, -20]


def test_an_empty_hand_passes_automatically_until_it_can_draw() -> None:
    # Three players: seat 1 spends its five cards inside one trick while the stock is full.
    hand = deal("five_card", ["3H 7S 9*3", "4S 8*4", "5S J*4"], "K*4 A 2*2 10*4 Q ...")
    run(hand, """
0: 3H
1: 4S
2: 5S
0: 7S
1: 8*4               # seat 1's hand is empty, but the stock is not: it is not out
2: J*4
0: pass              # seat 1 passes by itself; seat 2 wins the trick
""")
    assert hand.out == [] and hand.turn == 2
    assert hand.collected == [0, 0, 5]
    assert hand.actions[-1] == {"seat": 0, "pass": True}  # no action written for seat 1
    events = assert_replay_rebuilds(hand)
    passes = [(e.seat, e.why) for e in events if type(e).__name__ == "Passed"]
    assert passes[-2:] == [(0, "player"), (1, "empty_hand")]
    drawn = [(e.seat, e.cards) for e in events if type(e).__name__ == "CardsDrawn"]
    assert drawn == [(2, ["KS", "KH", "KC", "KD", "AS"]), (0, ["2S", "2H"]),
                     (1, ["10S", "10H", "10C", "10D", "QS"])]
    assert_adjudication_reproduces(hand)


# -- announcements ---------------------------------------------------------------------------

QQ4_HANDS = [
    "3H 4 5 6 7 8 9 10 J Q K A 2S", "3*3 7*3 8*3 9*3 4", "5S 10S KS J*3 Q*3 4*2 6*2", None,
]


def test_announced_hand_counts_stay_hidden_until_announced() -> None:
    hand = deal("qq4", QQ4_HANDS, announce_at=2, hand_counts="announced")
    assert counts(hand, 1) == [None, 13, None, None]
    run(hand, "0: 3H 4 5 6 7 8 9 10 J Q K A")
    assert hand.view(SeatViewer(1)).announcements == (Announcement(0, 1),)
    assert counts(hand, 1) == [1, 13, None, None]
    assert counts(hand, 0) == [1, None, None, None]
    run(hand, "1: pass\n2: pass\n3: pass\n0: 2S")
    assert counts(hand, 1) == [0, 13, None, None]  # out: the count is no secret
    assert_views_private(hand)


def test_public_hand_counts_show_every_count_and_announcements_are_recorded() -> None:
    hand = deal("qq4", QQ4_HANDS, announce_at=2)
    run(hand, "0: 3H 4 5 6 7 8 9 10 J Q K A")
    assert counts(hand, 3) == [1, 13, 13, 13]
    events: list[Any] = list(hand.collect_events())
    assert [(e.seat, e.count) for e in events if type(e).__name__ == "Announced"] == [(0, 1)]
    # What a watcher is told: the announcing seat and its count, the same for every viewer.
    told = {FIFTYK.public_event(event, viewer) for event in events
            if type(event).__name__ == "Announced" for viewer in (SeatViewer(2), AUDITOR)}
    assert told == {Announced(seat=0, cards_left=1)}


def test_an_announced_count_is_withdrawn_when_the_stock_refills_the_hand() -> None:
    hand = deal("five_card", ["3H 4S 5*3", "6*4 7S", "8*4 9S"], "10*4 ...",
                announce_at=2, hand_counts="announced")
    run(hand, "0: 3H\n1: 6*4\n2: 8*4")
    assert counts(hand, 0) == [4, 1, 1]  # seats 1 and 2 announced one card
    run(hand, "0: pass\n1: pass")  # seat 2 wins; everyone draws back to five cards
    assert [len(h) for h in hand.hands] == [5, 5, 5]
    assert counts(hand, 0) == [5, None, None]
    assert_views_private(hand)


# -- resignation and timeouts ----------------------------------------------------------------


def test_the_play_to_beat_is_shown_with_its_seat_type_and_cards() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    assert hand.view(SeatViewer(1)).top is None
    run(hand, "0: 3H")
    for viewer in (SeatViewer(1), SeatViewer(0), AUDITOR):
        assert hand.view(viewer).top == TopPlay(0, "single", ("3H",))


def test_a_dry_run_checks_the_seats_own_play_and_changes_nothing() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    version = hand.version
    hand.check(0, Action.play(["3H"]))  # seat 0 leads and holds 3♥: no refusal
    with pytest.raises(RuleError) as not_held:
        hand.check(0, Action.play(["QS"]))
    assert not_held.value.reason == Reason.CARDS_NOT_IN_HAND
    with pytest.raises(RuleError) as not_on_turn:
        hand.check(1, Action.play(["QS"]))
    assert not_on_turn.value.reason == Reason.NOT_YOUR_TURN
    assert hand.version == version


def test_a_resigned_seat_keeps_its_cards_and_is_placed_last() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    run(hand, SEAT_0_GOES_OUT + f"""
1: resign
2: 2*8
3: pass
2: {TRIPLES_6_TO_10}
3: pass
2: 5*4               # seat 2 is out, 2nd
""")
    result = finished(hand)
    assert (hand.out, hand.resigned) == ([0, 2], [1])
    assert result["places"] == [0, 2, 3, 1]
    assert hand.collected == [45, 0, 50, 0]
    # Team 0: 45 + 50 = 95, double catch +100, leftover to_winners 80 (seat 1) + 25: 300.
    assert team_scores(result) == [300, -100]


def test_when_a_whole_team_resigns_the_cut_short_trick_goes_to_its_top_play() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    run(hand, SEAT_0_GOES_OUT + """
1: K
2: 5*4
3: resign
1: resign            # nobody of team 1 plays on: the hand ends
""")
    result = finished(hand)
    assert (hand.out, hand.resigned) == ([0], [3, 1])
    assert hand.collected == [45, 0, 30, 0]  # K + four 5s to seat 2
    # Nobody caught (only seat 0 went out). Leftover to_winners: seat 2's 30 (triple
    # straight) to team 1; seats 1 (70) and 3 (25) to team 0. Team 0: 75 + 95 = 170.
    assert team_scores(result) == [170, 30]
    assert result["places"] == [0, 2, 1, 3]


def test_a_resigned_seat_cannot_act_again() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    run(hand, "0: 3H\n2: resign")
    assert rejected(hand, "2: resign") == FiftykReason.PLAYER_OUT
    run(hand, "1: pass")
    assert hand.turn == 3  # the resigned seat is skipped
    assert rejected(hand, "2: pass") == FiftykReason.PLAYER_OUT


def test_a_timed_out_leader_plays_the_lowest_single_and_a_follower_passes() -> None:
    hand = deal("classic", CLASSIC_HANDS, turn_timeout=30)
    start = hand.modified_on
    with pytest.raises(RuleError) as early:
        hand.time_out(0, start + timedelta(seconds=29))
    assert early.value.reason == Reason.TURN_NOT_EXPIRED
    assert hand.time_out(0, start + timedelta(seconds=30)).kind == "play"
    assert hand.time_out(1, hand.modified_on + timedelta(seconds=31)).kind == "pass"
    assert hand.actions == [{"seat": 0, "play": ["3S"]}, {"seat": 1, "pass": True}]
    assert hand.view(SeatViewer(2)).trick[0].by_referee is True
    with pytest.raises(RuleError) as wrong_seat:
        hand.time_out(3, hand.modified_on + timedelta(hours=1))
    assert wrong_seat.value.reason == Reason.NOT_YOUR_TURN
    assert_adjudication_reproduces(hand)


def test_a_timed_out_leader_under_three_high_plays_a_four() -> None:
    hand = deal("jiaodong", JIAODONG_HANDS, turn_timeout=10)
    assert hand.time_out(0, hand.modified_on + timedelta(seconds=10)).kind == "play"
    assert hand.actions == [{"seat": 0, "play": ["4S"]}]


def test_time_out_needs_a_turn_clock() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    with pytest.raises(RuleError) as refused:
        hand.time_out(0, hand.modified_on + timedelta(days=1))
    assert refused.value.reason == Reason.NO_TIMEOUT_CONFIGURED
    assert hand.turn_deadline() is None


# -- reason codes ----------------------------------------------------------------------------


def test_rule_violations_before_the_first_play_have_their_reason_codes() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    assert rejected(hand, "1: 3") == Reason.NOT_YOUR_TURN
    assert rejected(hand, "0: 2S") == Reason.CARDS_NOT_IN_HAND
    assert rejected(hand, "0: 3H 3H") == Reason.CARDS_NOT_IN_HAND  # seat 0 has one ♥3
    assert rejected(hand, "0: 3S 4S") == Reason.INVALID_COMBINATION
    assert rejected(hand, "0: pass") == FiftykReason.MUST_LEAD
    with pytest.raises(RuleError) as unknown:
        hand.play(0, ["3X"])
    assert unknown.value.reason == Reason.UNKNOWN_CARD
    assert rejected(hand, "7: pass") == Reason.INVALID_SEAT
    assert rejected(hand, "-1: resign") == Reason.INVALID_SEAT
    with pytest.raises(RuleError) as no_cards:
        hand.play(0, [])
    assert no_cards.value.reason == Reason.INVALID_COMBINATION
    with pytest.raises(RuleError) as bad_view:
        hand.view(SeatViewer(4))
    assert bad_view.value.reason == Reason.INVALID_SEAT
    assert hand.actions == []


def test_a_play_that_does_not_beat_the_top_play_is_refused() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    run(hand, "0: 4")
    assert rejected(hand, "1: 3") == FiftykReason.DOES_NOT_BEAT
    assert rejected(hand, "1: 4") == FiftykReason.DOES_NOT_BEAT  # equal is not higher
    assert rejected(hand, "1: Q*2") == FiftykReason.DOES_NOT_BEAT  # another type
    run(hand, "1: Q*4")  # any bomb beats a single
    assert rejected(hand, "2: 6*3") == FiftykReason.DOES_NOT_BEAT
    assert hand.actions == [{"seat": 0, "play": ["4S"]},
                            {"seat": 1, "play": ["QS", "QS", "QH", "QH"]}]


def test_seats_that_went_out_and_finished_hands_take_no_more_actions() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    run(hand, SEAT_0_GOES_OUT)
    assert rejected(hand, "0: 3H") == FiftykReason.PLAYER_OUT
    assert rejected(hand, "0: resign") == FiftykReason.PLAYER_OUT
    run(hand, CLASSIC_SCRIPT.removeprefix(SEAT_0_GOES_OUT))
    assert hand.is_over
    assert rejected(hand, "3: pass") == Reason.HAND_OVER
    assert rejected(hand, "3: resign") == Reason.HAND_OVER
    assert rejected(hand, "1: 3") == Reason.HAND_OVER
    assert hand.legal_plays(3) == []


def test_the_game_observes_every_bomb_played_by_its_size_and_every_trick_won() -> None:
    hand = deal("classic", CLASSIC_HANDS)
    run(hand, CLASSIC_SCRIPT)
    seen = FIFTYK.observe(hand, hand.collect_events())
    # Seat 2's 2*8, seat 1's Q*4 and seat 2's 5*4; four tricks were won.
    assert sorted(o.label for o in seen if o.name == BOMBS) == ["bomb_4", "bomb_4", "bomb_8"]
    assert sum(o.name == TRICKS for o in seen) == 4
