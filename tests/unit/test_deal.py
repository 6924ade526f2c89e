"""Dealing and the fairness commitment: anyone holding the revealed seed can check the deal."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from fiftyk_referee.domain.cards import Card, make_deck, parse_card, parse_cards
from fiftyk_referee.domain.deal import commitment, deal, deal_order, deck_from_hands, shuffle_deck
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.fiftyk.hand import Hand, check_deck, first_leader
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.observer import SeatViewer
from tests.support.scripted import build_deck

SEED = bytes(range(32))


def reference_shuffle(seed: bytes, deck: Sequence[Card]) -> list[Card]:
    """The shuffle exactly as `domain/deal.py` documents it, written independently."""

    def words() -> Iterator[int]:
        counter = 0
        while True:
            block = hashlib.sha256(b"fiftyk-shuffle/1" + seed + counter.to_bytes(8, "big"))
            digest = block.digest()
            for offset in range(0, 32, 8):
                yield int.from_bytes(digest[offset:offset + 8], "big")
            counter += 1

    stream = words()
    cards = list(deck)
    for i in range(len(cards) - 1, 0, -1):
        bound = i + 1
        limit = 2**64 - 2**64 % bound
        word = next(stream)
        while word >= limit:
            word = next(stream)
        j = word % bound
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def reference_commitment(seed: bytes | None, deck: Sequence[str]) -> str:
    return hashlib.sha256(b"fiftyk-commit/1" + (seed or b"") + " ".join(deck).encode()).hexdigest()


def play_to_the_end(hand: Hand, rng: random.Random) -> None:
    """Random legal plays until the hand is over."""
    while not hand.is_over:
        seat = hand.turn
        assert seat is not None
        plays = hand.legal_plays(seat)
        if hand.top is not None and (not plays or rng.random() < 0.3):
            hand.pass_turn(seat)
        else:
            hand.play(seat, list(rng.choice(plays).cards))


def dealt(preset: str = "classic", seed: bytes | None = SEED, players: int = 4) -> Hand:
    return Hand.deal_new(table_id="t", number=1, ruleset=Ruleset.from_spec(preset),
                         players=players, dealer=players - 1, seed=seed)


def test_the_shuffle_is_the_documented_function_of_the_seed() -> None:
    for packs, jokers in ((2, True), (2, False), (1, True), (1, False)):
        deck = make_deck(packs, jokers=jokers)
        assert shuffle_deck(SEED, deck) == reference_shuffle(SEED, deck)
        assert sorted(shuffle_deck(SEED, deck)) == sorted(deck)
    assert shuffle_deck(SEED, make_deck(2, jokers=True)) != make_deck(2, jokers=True)


def test_the_commitment_verifies_with_the_seed_revealed_when_the_hand_ends() -> None:
    hand = dealt()
    play_to_the_end(hand, random.Random(1))
    events: list[Any] = list(hand.collect_events())
    deal_event, end_event = events[0], events[-1]
    assert (type(deal_event).__name__, type(end_event).__name__) == ("Dealt", "HandEnded")
    revealed = bytes.fromhex(end_event.seed)
    assert revealed == SEED
    # The commitment was fixed at the deal: it binds the seed and the deck.
    assert deal_event.commitment == reference_commitment(revealed, deal_event.deck)
    assert hand.commitment == deal_event.commitment
    # Recomputing the shuffle from the revealed seed gives the dealt deck.
    rules = Ruleset.from_spec("classic")
    recomputed = [str(c) for c in shuffle_deck(revealed, make_deck(rules.packs, jokers=True))]
    assert recomputed == deal_event.deck
    # ... and the hands the seats were dealt.
    hands, stock, _ = deal(recomputed, 4, 3, None)
    assert stock == []
    assert sum(len(h) for h in hands) == 108
    assert hand.view(SeatViewer(0)).seed == SEED.hex()


def test_another_seed_neither_gives_the_deck_nor_verifies_the_commitment() -> None:
    hand = dealt()
    other = bytes(32)
    base = make_deck(2, jokers=True)
    assert [str(c) for c in shuffle_deck(other, base)] != hand.deck
    assert reference_commitment(other, hand.deck) != hand.commitment
    assert reference_commitment(SEED, list(reversed(hand.deck))) != hand.commitment


def test_the_seed_stays_hidden_from_every_seat_until_the_hand_ends() -> None:
    hand = dealt("qq3", players=3)
    assert all(hand.view(SeatViewer(seat)).seed is None for seat in range(3))
    assert hand.view(SeatViewer(0)).commitment == hand.commitment
    play_to_the_end(hand, random.Random(2))
    assert all(hand.view(SeatViewer(seat)).seed == SEED.hex() for seat in range(3))


def test_unseeded_deals_draw_a_fresh_secret_seed() -> None:
    first, second = dealt(seed=None), dealt(seed=None)
    assert first.seed is not None and second.seed is not None
    assert len(bytes.fromhex(first.seed)) == 32
    assert first.seed != second.seed and first.deck != second.deck
    assert first.commitment == commitment(bytes.fromhex(first.seed), first.deck)


def test_a_preset_decks_commitment_covers_the_deck_alone() -> None:
    deck = [str(c) for c in make_deck(1, jokers=True)]
    hand = Hand.deal_new(table_id="t", number=1, ruleset=Ruleset.from_spec("five_card"),
                         players=2, dealer=1, deck=deck)
    assert hand.seed is None
    assert hand.commitment == reference_commitment(None, deck)
    play_to_the_end(hand, random.Random(3))
    assert hand.view(SeatViewer(0)).seed is None


def test_cards_are_dealt_one_at_a_time_from_the_seat_after_the_dealer() -> None:
    assert deal_order(4, 1, 6) == [2, 3, 0, 1, 2, 3]
    deck = ["3S", "4S", "5S", "6S", "7S", "8S", "9S"]
    hands, stock, order = deal(deck, 3, 0, None)
    assert [[str(c) for c in h] for h in hands] == [["5S", "8S"], ["3S", "6S", "9S"],
                                                     ["4S", "7S"]]
    assert stock == [] and order[0] == (1, parse_card("3S"))


def test_five_card_deals_hand_size_each_and_the_rest_is_the_stock_in_order() -> None:
    deck = [str(c) for c in make_deck(1, jokers=True)]
    hands, stock, _ = deal(deck, 3, 2, 5)
    assert [len(h) for h in hands] == [5, 5, 5]
    assert [str(c) for c in stock] == deck[15:]


def test_deck_from_hands_builds_the_deck_that_deals_them() -> None:
    hands = [parse_cards("4S 3H 5S"), parse_cards("6S 3H 7S"), parse_cards("8S 9S")]
    deck = deck_from_hands(hands, parse_cards("10S JS"), dealer=2, lead_card=parse_card("3H"))
    assert [str(c) for c in deck[-2:]] == ["10S", "JS"]
    dealt_hands, _, order = deal([str(c) for c in deck[:-2]], 3, 2, None)
    assert [sorted(h) for h in dealt_hands] == [sorted(h) for h in hands]
    # Each hand's lead card comes first, so the first ♥3 dealt is the lowest seat's after
    # the dealer: seat 0 here.
    assert order[0] == (0, parse_card("3H")) and order[1] == (1, parse_card("3H"))
    with pytest.raises(ValueError, match="not a deal"):
        deck_from_hands([hands[2], hands[0], hands[1]], [], dealer=2, lead_card=None)


@pytest.mark.parametrize(("preset", "options", "leader"), [
    ("classic", {}, 1),  # the first ♥3 dealt: seats 1 and 3 hold one; seat 1 gets it first
    ("classic", {"first_lead": "holder:3S"}, 2),
    ("classic", {"first_lead": "holder:AH"}, 3),
    ("classic", {"first_lead": "previous_first_out"}, 1),  # first hand: falls back to ♥3
])
def test_the_first_lead_follows_the_first_lead_option(
    preset: str, options: dict[str, Any], leader: int
) -> None:
    rules = Ruleset.from_spec(preset, options)
    deck = build_deck(rules, ["...", "3H 3C 3C 3D J*8 Q*8 K*7", "3S 3S 3D 10*8 9*8 8*8",
                              "3H AH A*7 2*8 7*8 6*2"], dealer=3)
    assert first_leader(rules, deck, 4, 3, None) == leader
    hand = Hand.deal_new(table_id="t", number=1, ruleset=rules, players=4, dealer=3, deck=deck)
    assert hand.turn == leader


def test_when_nobody_holds_the_lead_card_the_seat_after_the_dealer_leads() -> None:
    rules = Ruleset.from_spec("five_card")
    deck = build_deck(rules, ["4*4 6", "7*4 8"], "...", dealer=0)
    assert "3H" in deck[10:]  # in the stock
    assert first_leader(rules, deck, 2, 0, None) == 1


def test_a_preset_deck_must_be_exactly_the_presets_deck() -> None:
    rules = Ruleset.from_spec("qq4")
    deck = [str(c) for c in make_deck(1, jokers=False)]
    check_deck(rules, deck)
    with pytest.raises(RuleError) as short:
        check_deck(rules, [c for c in deck if c != "3H"] + ["3S"])
    assert short.value.reason == Reason.INVALID_DEAL
    assert "missing 3H" in short.value.message and "extra 3S" in short.value.message
    with pytest.raises(RuleError) as jokers:
        check_deck(rules, [*deck, "SJ"])
    assert jokers.value.reason == Reason.INVALID_DEAL
    assert jokers.value.message.endswith("; missing nothing, extra SJ")
    with pytest.raises(RuleError) as one_short:
        check_deck(rules, deck[1:])
    assert one_short.value.message.endswith(f"; missing {deck[0]}, extra nothing")
    with pytest.raises(RuleError) as unknown:
        check_deck(rules, [*deck[:-1], "1X"])
    assert unknown.value.reason == Reason.INVALID_DEAL
    with pytest.raises(RuleError) as dealer:
        Hand.deal_new(table_id="t", number=1, ruleset=rules, players=4, dealer=4, deck=deck)
    assert dealer.value.reason == Reason.INVALID_SEAT
    with pytest.raises(RuleError) as players:
        Hand.deal_new(table_id="t", number=1, ruleset=rules, players=3, dealer=0, deck=deck)
    assert players.value.reason == Reason.INVALID_RULESET
