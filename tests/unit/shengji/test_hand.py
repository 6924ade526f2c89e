"""Scripted Shengji hands: the paced deal, declarations, the kitty, throws, timeouts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import PASS, PLAY, Action, Constraint, LegalActions
from fiftyk_referee.domain.observer import AUDITOR, SPECTATOR, SeatViewer
from fiftyk_referee.domain.shengji import GAME
from fiftyk_referee.domain.shengji import events as sj_events
from fiftyk_referee.domain.shengji.cards import TRUMP
from fiftyk_referee.domain.shengji.hand import (
    BURY,
    BURYING,
    DECLARE,
    DECLARING,
    PLAYING,
    ShengjiHand,
)
from fiftyk_referee.domain.shengji.play import follow_examples
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from tests.unit.shengji.helpers import (
    NOTHING,
    assert_points_conserved,
    assert_views_private,
    bury_lowest,
    close_windows,
    deck_for,
    new_hand,
    play,
)

LONG_AFTER = datetime(3000, 1, 1, tzinfo=UTC)
ALL_CLUBS_BUT_ONE_JACK = ("2C 2C 3C 3C 4C 4C 5C 5C 6C 6C 7C 7C 8C 8C 9C 9C JC QC QC KC KC"
                          " AC AC")


def declare(text: str) -> Action:
    """A declaration of cards in notation."""
    return Action(DECLARE, tuple(text.split()))


def refused(hand: ShengjiHand, seat: int, action: Action) -> Reason:
    """The reason an action is refused."""
    with pytest.raises(RuleError) as error:
        hand.act(seat, action)
    return error.value.reason


def test_the_deal_is_paced_and_a_seat_sees_only_its_own_cards() -> None:
    hand = new_hand(dealer=None, hands={1: "2H"})
    assert hand.phase == DECLARING and hand.round == 1
    assert [len(h) for h in hand.hands] == [1, 1, 1, 1]
    assert hand.view(SeatViewer(1)).cards == ("2H",)
    assert hand.view(SPECTATOR).cards == ()
    assert hand.view(SeatViewer(0)).dealer is None
    for seat in range(4):
        hand.act(seat, NOTHING)
    assert hand.round == 2 and [len(h) for h in hand.hands] == [2, 2, 2, 2]
    assert_views_private(hand)
    assert_points_conserved(hand)


def test_declarations_overcalls_and_their_refusals() -> None:
    hand = new_hand(dealer=None, hands={0: "5S 2D 2D", 1: "2H", 3: "3S 2S"})
    assert refused(hand, 2, declare("2H")) == Reason.CARDS_NOT_IN_HAND
    assert refused(hand, 3, declare("3S")) == ShengjiReason.INVALID_DECLARATION
    assert refused(hand, 0, Action(PASS)) == ShengjiReason.PASS_NOT_ALLOWED
    assert refused(hand, 0, Action.play(["5S"])) == ShengjiReason.DECLARATIONS_OPEN
    assert refused(hand, 0, Action(BURY, ("5S",))) == Reason.NOT_YOUR_TURN
    hand.act(1, declare("2H"))
    assert refused(hand, 1, declare("2H 2H")) == Reason.CARDS_NOT_IN_HAND
    close_windows(hand, {})  # closes round 1's window only after four passes
    assert hand.round >= 2


def test_an_equal_declaration_does_not_overcall_and_a_stronger_one_does() -> None:
    hand = new_hand(dealer=None, hands={0: "5S 2D 2D", 1: "2H", 3: "3S 2S"})
    hand.act(1, declare("2H"))
    for seat in range(4):
        hand.act(seat, NOTHING)
    for seat in range(4):
        hand.act(seat, NOTHING)
    assert hand.round == 3
    assert refused(hand, 3, declare("2S")) == ShengjiReason.DECLARATION_TOO_WEAK
    hand.act(0, declare("2D 2D"))
    assert refused(hand, 3, declare("2S")) == ShengjiReason.DECLARATION_TOO_WEAK
    close_windows(hand)
    assert hand.phase == BURYING
    assert hand.dealer == 1  # 先亮者为庄家: the first declarer deals
    assert {hand.view(viewer).dealer for viewer in (SPECTATOR, SeatViewer(2))} == {1}
    assert hand.order.suit == "D"
    assert len(hand.hands[1]) == hand.rules.hand_size + hand.rules.kitty_size


def test_final_declarer_deals_when_the_option_says_so() -> None:
    hand = new_hand(options={"first_hand_dealer": "final_declarer"}, dealer=None,
                    hands={0: "5S 2D 2D", 1: "2H"})
    close_windows(hand, {1: (1, "2H"), 3: (0, "2D 2D")})
    assert hand.dealer == 0 and hand.order.suit == "D"


def test_jokers_declare_no_trump_and_need_identical_pairs() -> None:
    hand = new_hand(dealer=None, hands={2: "SJ BJ SJ BJ"})
    close_windows(hand)
    assert hand.order.suit is None and hand.dealer == 0  # nobody declared: seat 0, no-trump
    hand = new_hand(dealer=None, hands={2: "SJ BJ SJ BJ"})
    for _ in range(3):
        for seat in range(4):
            hand.act(seat, NOTHING)
    assert refused(hand, 2, declare("SJ BJ")) == ShengjiReason.INVALID_DECLARATION
    hand.act(2, declare("SJ SJ"))
    hand.act(2, declare("BJ BJ"))
    close_windows(hand)
    assert hand.order.suit is None and hand.dealer == 2


def test_final_pacing_deals_everything_before_one_window() -> None:
    hand = new_hand(options={"declare_pacing": "final"}, dealer=3)
    assert hand.round == hand.rules.hand_size
    close_windows(hand)
    assert hand.phase == BURYING and hand.dealer == 3


def test_the_dealer_buries_and_only_it_and_audit_see_the_kitty() -> None:
    hand = new_hand(dealer=2)
    close_windows(hand)
    assert refused(hand, 1, Action(BURY, ("3S",) * 8)) == Reason.NOT_YOUR_TURN
    assert refused(hand, 2, Action.play([str(hand.hands[2][0])])) == ShengjiReason.MUST_BURY
    assert refused(hand, 1, Action.play([str(hand.hands[1][0])])) == Reason.NOT_YOUR_TURN
    cards = [str(c) for c in hand.hands[2]]
    assert refused(hand, 2, Action(BURY, tuple(cards[:7]))) == \
        ShengjiReason.WRONG_BURY_COUNT
    assert refused(hand, 2, Action(BURY, ("BJ",) * 8)) == Reason.CARDS_NOT_IN_HAND
    bury_lowest(hand)
    assert hand.phase == PLAYING and hand.to_act == 2
    assert hand.view(SeatViewer(2)).kitty is not None
    assert hand.view(AUDITOR).kitty == hand.view(SeatViewer(2)).kitty
    assert hand.view(SeatViewer(1)).kitty is None and hand.view(SPECTATOR).kitty is None
    assert_views_private(hand)
    assert_points_conserved(hand)


def test_one_pack_forbids_burying_points() -> None:
    hand = new_hand("shengji_one_pack", dealer=0, hands={0: "5S 10S KS 5H 10H KH"})
    close_windows(hand)
    held = [str(c) for c in hand.hands[0]]
    with_points = ["5S", "10S", "KS", *[c for c in held if c not in ("5S", "10S", "KS")][:3]]
    assert refused(hand, 0, Action(BURY, tuple(with_points))) == \
        ShengjiReason.BURY_POINTS_FORBIDDEN
    offered = hand.legal_actions(0)
    assert offered.kinds == {BURY} and offered.truncated and len(offered.plays) == 1
    example = offered.plays[0]
    assert example is not None and example.kind == BURY
    assert len(example.cards) == hand.rules.kitty_size
    assert not {"5S", "10S", "KS", "5H", "10H", "KH"} & set(example.cards)
    hand.act(0, Action(BURY, example.cards))  # the example the dealer is offered is accepted
    assert not any(c.rank in (5, 10, 13) for c in hand.kitty)


def _club_hand(holder_of_higher: int, higher: str) -> ShengjiHand:
    """Level 10, seat 0 deals with ♥ trump and all clubs but those `holder_of_higher` holds."""
    clubs = Counter(ALL_CLUBS_BUT_ONE_JACK.split()) + Counter(["JC"])
    clubs.subtract(higher.split())
    seat0 = " ".join(clubs.elements()) + " 10H"
    hand = new_hand(levels=("10", "10"), hands={0: seat0, holder_of_higher: higher})
    close_windows(hand, {hand.rules.hand_size: (0, "10H")})
    hand.act(0, Action(BURY, tuple(map(str, hand.kitty_dealt))))
    return hand


def test_seed_throw_98844_fails_on_a_jack_and_the_nine_is_played() -> None:
    hand = _club_hand(2, "JC")
    play(hand, 0, "9C 8C 8C 4C 4C")
    assert [str(c) for c in hand.trick[0][1]] == ["9C"]
    assert hand.throws_failed == [{"action": 2, "seat": 0, "forced": ["9C"]}]
    assert hand.actions[-1] == {"seat": 0, "play": ["9C", "8C", "8C", "4C", "4C"]}
    assert sum(len(h) for h in hand.hands) == 4 * 25 - 1
    off = next(str(c) for c in hand.hands[1] if hand.order.group(c) not in (TRUMP, "C"))
    play(hand, 1, off)
    other = next(str(c) for c in hand.hands[2] if str(c) != "JC")
    assert refused(hand, 2, Action.play([other])) == ShengjiReason.MUST_FOLLOW_SUIT
    play(hand, 2, "JC")
    assert hand.best_seat == 2


def test_seed_throw_98844_fails_on_queens_and_the_fours_are_played() -> None:
    hand = _club_hand(1, "QC QC")
    play(hand, 0, "9C 8C 8C 4C 4C")
    assert [str(c) for c in hand.trick[0][1]] == ["4C", "4C"]
    assert hand.lead is not None and hand.lead.kind == "pair"
    other = next(str(c) for c in hand.hands[1] if str(c) != "QC")
    assert refused(hand, 1, Action.play(["QC", other])) == ShengjiReason.MUST_FOLLOW_SUIT
    play(hand, 1, "QC QC")
    assert hand.best_seat == 1


def test_a_forced_tractor_is_followed_with_the_best_reading_of_the_runs() -> None:
    # Seat 2's higher four-pair tractor fails the throw; seat 0 plays the tractor alone, and
    # seat 1 owes all four slots from two runs through the off-suit 10s.
    follower = ("10H AH AH 10S 10S 10C 10C 10H 8H 8H"
                " 2C 3C 4C 5C 6C 7C 8C 9C JC QC 3D 4D 5D 6D 7D")
    hand = new_hand(levels=("10", "10"), hands={
        0: "3H 3H 4H 4H 5H 5H 6H 6H BJ", 1: follower, 2: "9H 9H JH JH QH QH KH KH"})
    close_windows(hand, {1: (1, "10H")})
    hand.act(0, Action(BURY, tuple(map(str, hand.kitty_dealt))))
    play(hand, 0, "3H 3H 4H 4H 5H 5H 6H 6H BJ")
    assert hand.throws_failed[0]["forced"] == ["3H", "3H", "4H", "4H", "5H", "5H", "6H", "6H"]
    wrong = ["AH", "AH", "10S", "10S", "10H", "10H", "8H", "8H"]
    assert refused(hand, 1, Action.play(wrong)) == ShengjiReason.MUST_FOLLOW_TRACTOR
    play(hand, 1, "AH AH 10S 10S 10C 10C 10H 10H")
    assert hand.to_act == 2


def test_every_phase_answers_with_constraint_records() -> None:
    hand = new_hand(options={"bury_points": False}, dealer=0, hands={0: "AC AC", 1: "5C 9C"})
    assert hand.legal_actions(1).requirements == (Constraint("listed"),)
    close_windows(hand)
    assert hand.legal_actions(0).requirements == (
        Constraint("count", count=hand.rules.kitty_size), Constraint("no_points"))
    assert hand.legal_actions(1).requirements == ()
    hand.act(0, Action(BURY, tuple(map(str, hand.lowest_bury()))))
    assert hand.legal_actions(0).requirements == (Constraint("one_group"),)
    play(hand, 0, "AC AC")
    follow = hand.legal_actions(1)
    assert follow.requirements[:2] == (Constraint("count", count=2),
                                       Constraint("suit", count=2, group="C"))


def test_timeouts_in_every_phase() -> None:
    hand = new_hand(options={"turn_timeout": 30}, dealer=1)
    assert refused_time_out(hand, 0, hand.modified_on) == Reason.TURN_NOT_EXPIRED
    assert hand.time_out(0, LONG_AFTER) == NOTHING
    assert hand.round == 2
    while hand.phase == DECLARING:
        seat = hand.to_act
        assert seat is not None
        hand.time_out(seat, LONG_AFTER)
    done = hand.time_out(1, LONG_AFTER)
    assert done.kind == BURY and len(done.cards) == 8
    lead = hand.time_out(1, LONG_AFTER)
    assert lead.kind == PLAY and len(lead.cards) == 1
    follow = hand.time_out(2, LONG_AFTER)
    assert follow.kind == PLAY and len(follow.cards) == 1
    clockless = new_hand(dealer=1)
    assert refused_time_out(clockless, 0, LONG_AFTER) == Reason.NO_TIMEOUT_CONFIGURED


def refused_time_out(hand: ShengjiHand, seat: int, now: datetime) -> Reason:
    """The reason a timeout is refused."""
    with pytest.raises(RuleError) as error:
        hand.time_out(seat, now)
    return error.value.reason


def test_the_game_object_deals_first_and_later_hands_from_the_carry() -> None:
    rules = GAME.rules("tractor")
    first = GAME.deal(table_id="t", number=1, rules=rules, players=4, dealer=3,
                      seat_players=[None] * 4, carry={}, deck=None, seed=b"x" * 32)
    assert first.view(SPECTATOR).dealer is None and first.first_seat == 0
    later = GAME.deal(table_id="t", number=2, rules=rules, players=4, dealer=0,
                      seat_players=[None] * 4,
                      carry={"next_dealer": 1, "levels": ["5", "3"], "room_points": [0] * 4},
                      deck=None, seed=b"y" * 32)
    assert later.dealer == 1 and later.first_seat == 2
    assert later.view(SPECTATOR).dealer == 1  # a carried dealer is known from the deal
    assert later.rank == 3  # the dealer side (team 1) plays at its level, 3
    assert GAME.side_seats(rules, 4) == {"team:0": (0, 2), "team:1": (1, 3)}


def test_stored_events_show_a_seat_only_its_own_cards_and_the_dealer_the_kitty() -> None:
    hand = new_hand(dealer=2)
    close_windows(hand)
    bury_lowest(hand)
    events = list(hand.collect_events())
    for seat in range(4):
        viewer = SeatViewer(seat)
        mine: list[str] = []
        for ev in events:
            seen = GAME.public_event(ev, viewer)
            if isinstance(seen, sj_events.HandDealt):
                assert not seen.deck and seen.deal_seed is None
            if isinstance(seen, sj_events.RoundDealt):
                assert all(not h.cards for h in seen.hands if h.seat != seat)
                mine += seen.hands[seat].cards
            if isinstance(seen, sj_events.KittyTaken):
                assert bool(seen.kitty.cards) == (seat == 2)
            if isinstance(seen, sj_events.KittyBuried):
                assert bool(seen.buried.cards) == (seat == 2)
        assert len(mine) == hand.rules.hand_size
    audit = GAME.public_event(events[0], AUDITOR)
    assert isinstance(audit, sj_events.HandDealt)
    assert list(audit.deck) == list(hand.deck) and audit.deal_seed == hand.seed


# -- refusing bad deals and turns --------------------------------------------------------------

def refused_to(call: Callable[[], object]) -> Reason:
    """The reason a hand command (or a deal) is refused."""
    with pytest.raises(RuleError) as error:
        call()
    return error.value.reason


def test_a_given_deck_must_be_exactly_the_rulesets_cards() -> None:
    rules = ShengjiRules.from_spec("tractor")
    wrong = deck_for(rules, {})
    index = next(i for i, card in enumerate(wrong) if card != "AS")
    wrong[index] = "AS"  # 108 cards, but three AS and one card missing
    assert refused_to(lambda: ShengjiHand.deal_new(
        table_id="t", number=1, rules=rules, dealer=0, deck=wrong)) == Reason.INVALID_DEAL


@pytest.mark.parametrize("dealer", [4, -1, True])
def test_a_dealer_that_is_not_a_seat_is_refused(dealer: int) -> None:
    rules = ShengjiRules.from_spec("tractor")
    assert refused_to(lambda: ShengjiHand.deal_new(
        table_id="t", number=1, rules=rules, dealer=dealer, seed=b"s" * 32)) == \
        Reason.INVALID_SEAT


def test_a_first_hand_with_unequal_levels_is_refused() -> None:
    rules = ShengjiRules.from_spec("tractor")
    assert refused_to(lambda: ShengjiHand.deal_new(
        table_id="t", number=1, rules=rules, dealer=None, levels=["2", "3"],
        seed=b"s" * 32)) == Reason.INVALID_DEAL
    ShengjiHand.deal_new(table_id="t", number=1, rules=rules, dealer=0, levels=["2", "3"],
                         seed=b"s" * 32)  # a later hand may have any levels


def test_cards_sent_as_one_string_are_refused_even_when_empty() -> None:
    hand = new_hand(dealer=None)
    empty: Any = ""
    assert refused(hand, 0, Action(DECLARE, empty)) == Reason.UNKNOWN_CARD
    assert 0 not in hand.spoken


def test_the_winner_of_a_trick_leads_the_next_one() -> None:
    hand = new_hand(dealer=0, hands={0: "KC", 1: "AC", 2: "4C", 3: "5C"})
    close_windows(hand)
    bury_lowest(hand)
    for seat, card in enumerate(("KC", "AC", "4C", "5C")):
        play(hand, seat, card)
    assert hand.tricks_played == 1 and hand.last_winner == 1
    assert hand.to_act == 1
    assert hand.legal_actions(1).plays
    other = str(hand.hands[0][0])
    assert refused(hand, 0, Action.play([other])) == Reason.NOT_YOUR_TURN


# -- answers -----------------------------------------------------------------------------------

def test_while_the_dealer_buries_the_other_seats_get_no_legal_actions() -> None:
    hand = new_hand(dealer=1)
    close_windows(hand)
    assert hand.phase == BURYING
    for seat in (0, 2, 3):
        answer = hand.legal_actions(seat)
        assert isinstance(answer, LegalActions)
        assert answer.plays == () and not answer.kinds
    assert BURY in hand.legal_actions(1).kinds


def test_a_declaration_window_lists_the_declarations_a_seat_can_make() -> None:
    hand = new_hand(dealer=None, hands={1: "2H"})
    answer = hand.legal_actions(1)
    assert [(p.cards, p.kind) for p in answer.plays] == [(("2H",), "declaration")]
    assert DECLARE in answer.kinds


def test_a_play_made_on_a_timeout_is_published_as_by_the_referee() -> None:
    hand = new_hand(options={"turn_timeout": 30}, dealer=1)
    close_windows(hand)
    hand.collect_events()
    hand.time_out(1, LONG_AFTER)  # the dealer's bury
    hand.time_out(1, LONG_AFTER)  # the dealer's lead
    assert hand.to_act == 2 and hand.lead is not None
    own = follow_examples(hand.hands[2], hand.lead, hand.order)[0][0]
    hand.act(2, Action.play([str(c) for c in own]))
    seen = [GAME.public_event(ev, SPECTATOR) for ev in hand.collect_events()]
    buried = [e for e in seen if isinstance(e, sj_events.KittyBuried)]
    played = [e for e in seen if isinstance(e, sj_events.CardsPlayed)]
    assert [e.by_referee for e in buried] == [True]
    assert [(e.seat, e.by_referee) for e in played] == [(1, True), (2, False)]


def test_a_hand_records_who_held_each_seat_when_it_was_dealt() -> None:
    rules = GAME.rules("tractor")
    hand = GAME.deal(table_id="t", number=1, rules=rules, players=4, dealer=0,
                     seat_players=["p0", "p1", "p2", "p3"], carry={}, deck=None,
                     seed=b"x" * 32)
    assert hand.seat_players == ["p0", "p1", "p2", "p3"]
