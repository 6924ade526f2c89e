"""Whole 斗地主 hands scripted from preset decks: the landlord taking the 底牌, rounds of
play, the end, springs and anti-springs, bombs and rockets doubling, the cap, time-outs,
what each viewer sees, dry runs, replays and transcripts."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

import pytest

from fiftyk_referee.domain.cards import format_cards, make_deck, parse_card, parse_cards
from fiftyk_referee.domain.deal import deal_order, draw_seed, seed_commitment, shuffle_deck
from fiftyk_referee.domain.doudizhu.events import DOUDIZHU_EVENTS
from fiftyk_referee.domain.doudizhu.game import GAME
from fiftyk_referee.domain.doudizhu.hand import DoudizhuHand
from fiftyk_referee.domain.doudizhu.reasons import DoudizhuReason
from fiftyk_referee.domain.doudizhu.rulesets import DoudizhuRules
from fiftyk_referee.domain.errors import AnyReason, Reason, RuleError
from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.observer import AUDITOR, SPECTATOR, SeatViewer, Viewer

# Dealt with seat 2 as the dealer, so seat 0 bids first.
LANDLORD_CARDS = "3S 3H 3C 3D 4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S SJ"
KITTY = "BJ 2H 2C"
FARMER_1 = "4H 5H 6H 7H 8H 9H 10H JH QH KH AH 4C 5C 6C 7C 8C 9C"
FARMER_2 = "4D 5D 6D 7D 8D 9D 10D JD QD KD AD 10C JC QC KC AC 2D"
DEALER = 2


def deck_for(hands: Sequence[str], kitty: str, dealer: int = DEALER) -> list[str]:
    """The deck in dealing order that gives seat i `hands[i]` and keeps `kitty` back."""
    cards = [parse_cards(text) for text in hands]
    assert Counter(c for h in cards for c in h) + Counter(parse_cards(kitty)) == Counter(
        make_deck(1, jokers=True))
    order = deal_order(3, dealer, 51)
    return [str(cards[seat][i // 3]) for i, seat in enumerate(order)] + kitty.split()


DECK = deck_for([LANDLORD_CARDS, FARMER_1, FARMER_2], KITTY)


def dealt(preset: str = "classic", deck: list[str] | None = None, **options: Any
          ) -> DoudizhuHand:
    rules = DoudizhuRules.from_spec(preset, options)
    return GAME.deal(table_id="t", number=1, rules=rules, players=3, dealer=DEALER,
                     seat_players=["a", "b", "c"], carry={}, deck=deck or DECK, seed=None)


def refusal(hand: DoudizhuHand, seat: int, action: Action) -> AnyReason:
    """The reason `act` refuses the action; `check` must give the same, changing nothing."""
    before = copy.deepcopy(vars(hand))
    with pytest.raises(RuleError) as checked:
        hand.check(seat, action)
    with pytest.raises(RuleError) as acted:
        hand.act(seat, action)
    assert checked.value.reason == acted.value.reason
    assert vars(hand) == before
    return acted.value.reason


def play(hand: DoudizhuHand, seat: int, cards: str) -> None:
    hand.act(seat, Action.play(cards.split()))


def passes(hand: DoudizhuHand, *seats: int) -> None:
    for seat in seats:
        hand.act(seat, Action("pass"))


def lead_alone(hand: DoudizhuHand, seat: int, leads: Iterable[str]) -> None:
    """`seat` leads each play in turn; the two others pass every time."""
    for cards in leads:
        play(hand, seat, cards)
        if not hand.is_over:
            passes(hand, (seat + 1) % 3, (seat + 2) % 3)


def bid_landlord(hand: DoudizhuHand, points: int = 3) -> None:
    """Seat 0 bids `points`; the others pass when the bidding goes on."""
    hand.act(0, Action("bid", (), str(points)))
    if points < 3:
        passes(hand, 1, 2)
    assert hand.landlord == 0


def singles(text: str) -> list[str]:
    return text.split()


# -- bidding and the 底牌 -------------------------------------------------------------------


def test_the_landlord_takes_the_kitty_shown_to_all_and_leads() -> None:
    hand = dealt()
    assert hand.to_act == 0 and hand.phase == "bidding"
    bid_landlord(hand, 2)
    assert hand.phase == "playing" and hand.to_act == 0 and hand.leader == 0
    assert len(hand.hands[0]) == 20 and Counter(hand.hands[0]) >= Counter(parse_cards(KITTY))
    for viewer in (SeatViewer(0), SeatViewer(1), SPECTATOR, AUDITOR):
        assert hand.view(viewer).kitty == ("2H", "2C", "BJ")
    chosen = [DOUDIZHU_EVENTS.public_event(e, SeatViewer(1)) for e in hand.pending_events]
    assert [e.NAME for e in chosen if e is not None][-1] == "doudizhu.landlord_chosen"


def test_everybody_passing_ends_the_hand_as_a_redeal_with_no_score() -> None:
    hand = dealt()
    passes(hand, 0, 1, 2)
    assert hand.is_over and hand.result is not None and hand.result["redeal"]
    assert hand.result["scores"] == [0, 0, 0] and hand.landlord is None
    record = hand.record()
    assert set(record.totals) == {"seat:0", "seat:1", "seat:2"}
    assert all(v == 0 for v in record.totals.values())
    assert refusal(hand, 0, Action("bid", (), "1")) == Reason.HAND_OVER


def test_a_rob_room_doubles_the_hand_for_each_rob() -> None:
    hand = dealt("rob")
    hand.act(0, Action("call"))
    hand.act(1, Action("rob"))
    hand.act(2, Action("pass"))
    hand.act(0, Action("rob"))
    assert hand.landlord == 0 and hand.multiplier() == 4
    assert hand.view(SPECTATOR).robs == 2


def test_playing_before_the_landlord_is_known_is_refused_and_bidding_after() -> None:
    hand = dealt()
    assert refusal(hand, 0, Action.play(["3S"])) == DoudizhuReason.BIDDING_OPEN
    bid_landlord(hand)
    assert refusal(hand, 1, Action("bid", (), "3")) == DoudizhuReason.NOT_BIDDING
    assert refusal(hand, 0, Action("call")) == DoudizhuReason.NOT_BIDDING


# -- the play ------------------------------------------------------------------------------


def test_two_passes_end_the_round_and_its_last_player_leads() -> None:
    hand = dealt()
    bid_landlord(hand)
    play(hand, 0, "4S")
    play(hand, 1, "5H")
    passes(hand, 2)
    assert hand.to_act == 0 and hand.view(SPECTATOR).top is not None
    play(hand, 0, "2S")
    passes(hand, 1, 2)
    view = hand.view(SPECTATOR)
    assert view.top is None and view.to_act == 0 and view.trick == () and view.leader == 0
    assert refusal(hand, 0, Action("pass")) == DoudizhuReason.MUST_LEAD


def test_a_play_must_beat_the_last_play_and_be_held_and_be_a_combination() -> None:
    hand = dealt()
    bid_landlord(hand)
    play(hand, 0, "6S")
    assert refusal(hand, 1, Action.play(["5H"])) == DoudizhuReason.DOES_NOT_BEAT
    assert refusal(hand, 1, Action.play(["4H", "5H"])) == Reason.INVALID_COMBINATION
    assert refusal(hand, 1, Action.play(["4D"])) == Reason.CARDS_NOT_IN_HAND
    assert refusal(hand, 1, Action.play([])) == Reason.INVALID_COMBINATION
    assert refusal(hand, 2, Action.play(["7D"])) == Reason.NOT_YOUR_TURN
    assert refusal(hand, 1, Action("resign")) == Reason.INVALID_ACTION
    assert refusal(hand, 1, Action("pass", ("4H",))) == Reason.INVALID_ACTION
    play(hand, 1, "7H")


def test_a_spring_with_a_bomb_and_the_rocket_multiplies_bid_bombs_and_spring() -> None:
    hand = dealt(base_score=10)
    bid_landlord(hand, 3)
    lead_alone(hand, 0, ["3S 3H 3C 3D", "SJ BJ", *singles(
        "4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S 2H"), "2C"])
    result = hand.result
    assert result is not None and hand.is_over
    assert (result["winner"], result["spring"], result["anti_spring"]) == ("landlord", True,
                                                                           False)
    assert (result["bombs"], result["rockets"]) == (1, 1)
    assert result["multiplier"] == 3 * 2 * 2 * 2 and result["unit"] == 240
    assert result["scores"] == [480, -240, -240]
    assert hand.view(SPECTATOR).multiplier == 24  # the spring included, as the hand was paid
    assert {k: int(v) for k, v in hand.record().totals.items()} == {
        "seat:0": 480, "seat:1": -240, "seat:2": -240}


def test_the_multiplier_cap_limits_what_a_hand_pays() -> None:
    hand = dealt(multiplier_cap=8)
    bid_landlord(hand, 3)
    play(hand, 0, "3S 3H 3C 3D")
    assert (hand.view(SPECTATOR).multiplier, hand.view(SPECTATOR).uncapped_multiplier) == (6, 6)
    passes(hand, 1, 2)
    play(hand, 0, "SJ BJ")
    assert (hand.view(SPECTATOR).multiplier, hand.view(SPECTATOR).uncapped_multiplier) == (8, 12)
    passes(hand, 1, 2)
    lead_alone(hand, 0, [*singles(
        "4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S 2H 2C")])
    assert hand.result is not None
    assert (hand.result["uncapped_multiplier"], hand.result["multiplier"]) == (24, 8)
    assert hand.result["scores"] == [16, -8, -8]
    view = hand.view(SeatViewer(1))
    assert (view.multiplier, view.uncapped_multiplier) == (8, 24)


def test_without_bomb_doubling_or_springs_only_the_bid_counts() -> None:
    hand = dealt(bomb_doubling=False, spring=False)
    bid_landlord(hand, 2)
    lead_alone(hand, 0, ["3S 3H 3C 3D", "SJ BJ", *singles(
        "4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S 2H 2C")])
    assert hand.result is not None and hand.result["spring"]
    assert hand.result["multiplier"] == 2 and hand.result["scores"] == [4, -2, -2]


def test_a_landlord_win_after_the_farmers_played_is_no_spring() -> None:
    hand = dealt()
    bid_landlord(hand, 1)
    play(hand, 0, "4S")
    play(hand, 1, "5H")
    passes(hand, 2)
    play(hand, 0, "2S")
    passes(hand, 1, 2)
    lead_alone(hand, 0, ["3S 3H 3C 3D", *singles("5S 6S 7S 8S 9S 10S JS QS KS AS 2H 2C"),
                         "SJ BJ"])
    result = hand.result
    assert result is not None and result["winner"] == "landlord" and not result["spring"]
    assert result["multiplier"] == 1 * 2 * 2 and result["scores"] == [8, -4, -4]


def test_an_anti_spring_when_the_landlord_played_only_its_first_lead() -> None:
    hand = dealt()
    bid_landlord(hand, 1)
    play(hand, 0, "3S")
    play(hand, 1, "4H")
    passes(hand, 2, 0)
    lead_alone(hand, 1, singles("5H 6H 7H 8H 9H 10H JH QH KH AH 4C 5C 6C 7C 8C 9C"))
    result = hand.result
    assert result is not None and result["winner"] == "farmers" and result["anti_spring"]
    assert result["winning_seat"] == 1 and result["multiplier"] == 2
    assert result["scores"] == [-4, 2, 2]


def test_the_farmers_win_without_anti_spring_once_the_landlord_played_twice() -> None:
    hand = dealt()
    bid_landlord(hand, 2)
    play(hand, 0, "3S")
    play(hand, 1, "4H")
    passes(hand, 2)
    play(hand, 0, "5S")
    play(hand, 1, "6H")
    passes(hand, 2, 0)
    lead_alone(hand, 1, singles("5H 7H 8H 9H 10H JH QH KH AH 4C 5C 6C 7C 8C 9C"))
    result = hand.result
    assert result is not None and result["winner"] == "farmers" and not result["anti_spring"]
    assert result["scores"] == [-4, 2, 2]


# -- the turn clock --------------------------------------------------------------------------


def test_a_late_bidder_passes_and_a_late_player_passes_or_leads_its_lowest_card() -> None:
    hand = dealt(turn_timeout=30)
    deadline = hand.turn_deadline()
    assert deadline is not None
    with pytest.raises(RuleError) as early:
        hand.time_out(0, deadline - timedelta(seconds=1))
    assert early.value.reason == Reason.TURN_NOT_EXPIRED
    assert hand.time_out(0, deadline) == Action("pass")
    assert hand.auction.entries[-1].by_referee
    hand.act(1, Action("bid", (), "3"))
    assert hand.landlord == 1
    now = hand.turn_deadline()
    assert now is not None
    assert hand.time_out(1, now) == Action.play(["4H"])  # hearts sort before clubs
    later = hand.turn_deadline()
    assert later is not None
    assert hand.time_out(2, later) == Action("pass")
    with pytest.raises(RuleError) as not_theirs:
        hand.time_out(2, later + timedelta(days=1))
    assert not_theirs.value.reason == Reason.NOT_YOUR_TURN


def test_a_table_without_a_clock_has_no_time_outs() -> None:
    hand = dealt()
    assert hand.turn_deadline() is None
    with pytest.raises(RuleError) as refused:
        hand.time_out(0, hand.modified_on + timedelta(days=1))
    assert refused.value.reason == Reason.NO_TIMEOUT_CONFIGURED


# -- what each viewer sees ------------------------------------------------------------------


def shown_cards(value: Any) -> set[str]:
    """Every card text anywhere inside a view or event (dataclasses, tuples, strings)."""
    cards = {str(c) for c in make_deck(1, jokers=True)}
    found: set[str] = set()

    def walk(item: Any) -> None:
        if isinstance(item, str):
            if item in cards:
                found.add(item)
        elif isinstance(item, dict):
            for v in item.values():
                walk(v)
        elif isinstance(item, (list, tuple, set, frozenset)):
            for v in item:
                walk(v)
        elif hasattr(item, "__dataclass_fields__"):
            for name in item.__dataclass_fields__:
                walk(getattr(item, name))

    walk(value)
    return found


def seen_by(hand: DoudizhuHand, viewer: Viewer) -> set[str]:
    view = hand.view(viewer)
    events = [DOUDIZHU_EVENTS.public_event(e, viewer) for e in hand.pending_events]
    return shown_cards(view) | shown_cards(events)


def test_nobody_sees_another_seat_s_cards_or_the_kitty_before_the_landlord_takes_it() -> None:
    hand = dealt()
    hands = [set(format_cards(h)) for h in hand.hands]
    kitty = set(KITTY.split())
    for seat in range(3):
        assert seen_by(hand, SeatViewer(seat)) == hands[seat]
    assert seen_by(hand, SPECTATOR) == set()
    assert seen_by(hand, AUDITOR) == hands[0] | hands[1] | hands[2] | kitty
    assert hand.view(AUDITOR).seed is None and hand.view(AUDITOR).deck is not None
    bid_landlord(hand, 3)
    play(hand, 0, "4S")
    for seat in range(3):
        own = set(format_cards(hand.hands[seat]))
        assert seen_by(hand, SeatViewer(seat)) == hands[seat] | kitty | own | {"4S"}
    assert seen_by(hand, SPECTATOR) == kitty | {"4S"}


def test_a_seeded_deal_shows_its_seed_to_the_auditor_only_until_the_end() -> None:
    rules = DoudizhuRules.from_spec("classic")
    hand = GAME.deal(table_id="t", number=1, rules=rules, players=3, dealer=0,
                     seat_players=[None] * 3, carry={}, deck=None, seed=bytes(32))
    assert hand.view(AUDITOR).seed == bytes(32).hex()
    assert hand.view(SeatViewer(1)).seed is None and hand.view(SPECTATOR).seed is None
    passes(hand, 1, 2, 0)
    assert hand.view(SPECTATOR).seed == bytes(32).hex()


def outcomes(hand: DoudizhuHand, seat: int) -> list[str]:
    """What a dry run answers `seat` for a fixed set of candidate actions."""
    answers = []
    own = [str(c) for c in hand.hands[seat]]
    candidates = [Action("pass"), Action("bid", (), "1"), Action("bid", (), "3"),
                  Action("call"), Action("rob"), Action.play(own[:1]), Action.play(own[:2]),
                  Action.play(own[-4:]), Action.play(["BJ"]), Action.play(["2H"]),
                  Action.play(["SJ", "BJ"])]
    for action in candidates:
        try:
            hand.check(seat, action)
        except RuleError as error:
            answers.append(f"{error.reason}: {error.message}")
        else:
            answers.append("ok")
    return answers


def test_a_dry_run_judges_only_on_what_the_seat_sees() -> None:
    # Seat 0 holds the same cards in both deals; the farmers' cards and the kitty differ.
    other = deck_for([LANDLORD_CARDS, "4D 5D 6D 7D 8D 9D 10D JD QD KD AD 4C 5C 6C 2H 2C BJ",
                      "4H 5H 6H 7H 8H 9H 10H JH QH KH AH 7C 8C 9C 10C JC 2D"],
                     "QC KC AC")
    first, second = dealt(), dealt(deck=other)
    assert outcomes(first, 0) == outcomes(second, 0)
    for hand in (first, second):
        hand.act(0, Action("bid", (), "1"))
    assert outcomes(first, 1) == outcomes(second, 1)


# -- replays and transcripts -----------------------------------------------------------------


def rebuilt(events: Sequence[Any]) -> Any:
    """An aggregate rebuilt from its events, as the event store does."""
    aggregate: Any = None
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate


def test_replaying_the_events_rebuilds_the_hand() -> None:
    hand = dealt("rob")
    hand.act(0, Action("call"))
    passes(hand, 1)
    hand.act(2, Action("rob"))
    passes(hand, 0)
    play(hand, 2, "4D")
    passes(hand, 0)
    events = hand.collect_events()
    assert rebuilt(events) == hand
    passes(hand, 1)
    assert rebuilt([*events, *hand.collect_events()]) == hand


def test_an_exported_transcript_adjudicates_to_the_hand_s_own_ruling() -> None:
    hand = dealt()
    bid_landlord(hand, 1)
    play(hand, 0, "3S")
    play(hand, 1, "4H")
    passes(hand, 2, 0)
    lead_alone(hand, 1, singles("5H 6H 7H 8H 9H 10H JH QH KH AH 4C 5C 6C 7C 8C 9C"))
    transcript = GAME.export_transcript(hand)
    assert transcript["game"] == "doudizhu" and transcript["actions"][:3] == [
        {"seat": 0, "bid": 1}, {"seat": 1, "pass": True}, {"seat": 2, "pass": True}]
    ruling = GAME.adjudicate(transcript)
    assert ruling == GAME.ruling(hand)
    assert ruling["status"] == "completed" and ruling["scores"] == [-4, 2, 2]


def test_a_transcript_may_give_the_hands_and_kitty_instead_of_the_deck() -> None:
    by_hands = {"format": "fiftyk-transcript/1", "game": "doudizhu",
                "ruleset": {"preset": "classic"}, "players": 3, "dealer": DEALER,
                "hands": [LANDLORD_CARDS.split(), FARMER_1.split(), FARMER_2.split()],
                "kitty": KITTY.split(), "actions": [{"seat": 0, "bid": 3}]}
    hand, ruling = GAME.replay(by_hands)
    assert list(hand.deck) == DECK
    assert ruling["status"] == "in_progress" and ruling["landlord"] == 0


def test_a_refused_transcript_action_is_a_ruling_naming_it() -> None:
    transcript = {"format": "fiftyk-transcript/1", "game": "doudizhu",
                  "ruleset": {"preset": "classic"}, "dealer": DEALER, "deck": DECK,
                  "actions": [{"seat": 0, "bid": 2}, {"seat": 1, "bid": 1}]}
    ruling = GAME.adjudicate(transcript)
    assert ruling["status"] == "rejected" and ruling["actions_applied"] == 1
    assert ruling["rejected"]["reason"] == "BID_TOO_LOW"


@pytest.mark.parametrize(("change", "words"), [
    ({"game": "fiftyk"}, '"game"'),
    ({"players": 4}, '"players"'),
    ({"dealer": 3}, '"dealer"'),
    ({"deck": DECK[:-1]}, "54-card"),
    ({"ruleset": {"preset": "nope"}}, "ruleset"),
    ({"actions": {}}, '"actions"'),
])
def test_an_unreadable_transcript_says_what_is_wrong(change: dict[str, Any], words: str
                                                     ) -> None:
    transcript = {"format": "fiftyk-transcript/1", "game": "doudizhu",
                  "ruleset": {"preset": "classic"}, "dealer": DEALER, "deck": DECK,
                  "actions": [], **change}
    with pytest.raises(RuleError) as refused:
        GAME.adjudicate(transcript)
    assert refused.value.reason == Reason.INVALID_TRANSCRIPT
    assert words in refused.value.message


def test_a_preset_deck_must_be_exactly_one_pack() -> None:
    with pytest.raises(RuleError) as refused:
        dealt(deck=[*DECK[:-1], "3S"])
    assert refused.value.reason == Reason.INVALID_DEAL
    assert "missing BJ" not in refused.value.message or "extra 3S" in refused.value.message
    assert parse_card("BJ")  # the notation the message uses


# -- fairness and metrics --------------------------------------------------------------------


def test_a_seat_entropy_deal_shuffles_the_draw_seed_and_its_transcript_names_the_inputs(
        ) -> None:
    rules = DoudizhuRules.from_spec("classic")
    contributions = ["ab" * 16, "", "cd" * 32]
    hand = GAME.deal(table_id="t", number=4, rules=rules, players=3, dealer=1,
                     seat_players=["a", "b", "c"], carry={}, deck=None, seed=bytes(32),
                     contributions=contributions, draw={"withheld": []})
    expected = shuffle_deck(draw_seed(bytes(32), str(hand.id), contributions),
                            [parse_card(c) for c in GAME.base_deck(rules)])
    assert list(hand.deck) == [str(c) for c in expected]
    assert hand.commitment == seed_commitment(bytes(32))
    passes(hand, 2, 0, 1)  # a redeal ends the hand and reveals the seed
    deal = GAME.export_transcript(hand)["deal"]
    assert deal["algorithm"] == "fiftyk-shuffle/2" and deal["seed"] == bytes(32).hex()
    assert deal["contributions"] == contributions and deal["hand_id"] == str(hand.id)


def test_bombs_rockets_springs_rounds_and_redeals_are_observed() -> None:
    hand = dealt()
    bid_landlord(hand, 3)
    lead_alone(hand, 0, ["3S 3H 3C 3D", "SJ BJ", *singles(
        "4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S 2H 2C")])
    seen = Counter((o.name, o.label) for o in GAME.observe(hand, hand.collect_events()))
    assert seen == {("bombs", "bomb_4"): 1, ("bombs", "rocket"): 1, ("springs", "spring"): 1,
                    ("tricks", ""): 15}
    redeal = dealt()
    passes(redeal, 0, 1, 2)
    assert [(o.name, o.label) for o in GAME.observe(redeal, redeal.collect_events())] == [
        ("redeals", "")]


# -- legal actions ---------------------------------------------------------------------------


def test_legal_actions_while_bidding_name_the_open_words_and_the_points_open() -> None:
    hand = dealt()
    first = hand.legal_actions(0)
    assert first.kinds == {"bid", "pass"} and first.may_pass and not first.plays
    assert [r.count for r in first.requirements if r.kind == "bid"] == [1, 2, 3]
    assert first.constraints == ("bid 1, 2, 3 point(s), or pass",)
    assert hand.legal_actions(1) == hand.legal_actions(1, limit=5) and not hand.legal_actions(
        1).kinds
    hand.act(0, Action("bid", (), "2"))
    assert [r.count for r in hand.legal_actions(1).requirements] == [3]
    robbing = dealt("rob")
    assert robbing.legal_actions(0).kinds == {"call", "pass"}
    assert robbing.legal_actions(0).requirements == ()
    robbing.act(0, Action("call"))
    assert robbing.legal_actions(1).kinds == {"rob", "pass"}
    assert robbing.legal_actions(1).constraints == ("rob, or pass",)


def test_legal_plays_are_listed_up_to_the_limit_and_a_follower_may_pass() -> None:
    hand = dealt()
    bid_landlord(hand)
    every = hand.legal_actions(0)
    assert every.kinds == {"play"} and not every.may_pass and not every.truncated
    cut = hand.legal_actions(0, limit=2)
    assert cut.plays == every.plays[:2] and cut.truncated
    assert ("SJ", "BJ") in {p.cards for p in every.plays}
    play(hand, 0, "2S")
    follow = hand.legal_actions(1)
    assert follow.may_pass and follow.kinds == {"pass"} and not follow.plays  # nothing beats 2S
    passes(hand, 1)
    assert not hand.legal_actions(2).plays  # 2D is no higher than 2S, and no bomb


def test_an_unknown_action_kind_is_quoted_within_bounds() -> None:
    hand = dealt()
    assert refusal(hand, 0, Action("x" * 5_000)) == Reason.INVALID_ACTION
    with pytest.raises(RuleError) as refused:
        hand.act(0, Action("x" * 5_000))
    assert len(refused.value.message) < 200 and "5002 characters" in refused.value.message


# -- the game object's refusals ----------------------------------------------------------------


def test_the_game_refuses_what_is_not_a_doudizhu_deal_hand_or_view() -> None:
    rules = DoudizhuRules.from_spec("classic")
    for dealer in (3, -1, True):
        with pytest.raises(RuleError) as bad_dealer:
            GAME.deal(table_id="t", number=1, rules=rules, players=3, dealer=dealer,
                      seat_players=[None] * 3, carry={}, deck=None, seed=bytes(32))
        assert bad_dealer.value.reason == Reason.INVALID_SEAT
    with pytest.raises(RuleError) as four:
        GAME.deal(table_id="t", number=1, rules=rules, players=4, dealer=0,
                  seat_players=[None] * 4, carry={}, deck=None, seed=bytes(32))
    assert four.value.reason == Reason.INVALID_RULESET
    hand = dealt()
    with pytest.raises(RuleError) as early:
        hand.record()
    assert early.value.reason == Reason.HAND_IN_PROGRESS
    with pytest.raises(RuleError) as stranger:
        hand.view(SeatViewer(3))
    assert stranger.value.reason == Reason.INVALID_SEAT
    assert GAME.owns(hand) and not GAME.owns(object())
    with pytest.raises(RuleError) as foreign:
        GAME.export_transcript(object())
    assert foreign.value.reason == Reason.INVALID_ACTION
    assert GAME.public_event(object(), AUDITOR) is None
    assert GAME.export_transcript(hand)["actions"] == [] and "deal" not in (
        GAME.export_transcript(hand))
