"""Helpers for Shengji tests: decks built from chosen hands, driving a hand, invariants."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from eventsourcing.persistence import (
    DatetimeAsISO,
    DecimalAsStr,
    JSONTranscoder,
    Mapper,
    UUIDAsHex,
)

from fiftyk_referee.domain.cards import make_deck, parse_cards
from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.observer import AUDITOR, SPECTATOR, SeatViewer
from fiftyk_referee.domain.shengji.cards import POINTS
from fiftyk_referee.domain.shengji.hand import BURY, DECLARE, DECLARING, ShengjiHand
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.domain.shengji.transcript import adjudicate

NOTHING = Action(DECLARE, ())


def deck_for(rules: ShengjiRules, hands: dict[int, str], kitty: str = "",
             dealer: int | None = None, seed: int = 7) -> list[str]:
    """A deck dealing these cards to these seats (and kitty), the rest shuffled by `seed`."""
    rest = Counter(make_deck(rules.packs, jokers=True))
    chosen = {seat: parse_cards(text) for seat, text in hands.items()}
    kitty_cards = parse_cards(kitty)
    for cards in [*chosen.values(), kitty_cards]:
        rest.subtract(cards)
    if any(v < 0 for v in rest.values()):
        raise ValueError("more copies chosen than the deck holds")
    pool = sorted(rest.elements())
    random.Random(seed).shuffle(pool)
    size = rules.hand_size
    seats = []
    for seat in range(4):
        cards = list(chosen.get(seat, []))
        while len(cards) < size:
            cards.append(pool.pop())
        seats.append(cards)
    kitty_cards = list(kitty_cards)
    while len(kitty_cards) < rules.kitty_size:
        kitty_cards.append(pool.pop())
    first = 0 if dealer is None else (dealer + 1) % 4
    order = [seats[(first + i) % 4][r] for r in range(size) for i in range(4)]
    return [str(c) for c in order + kitty_cards]


def new_hand(preset: str = "tractor", options: dict[str, Any] | None = None, *,
             hands: dict[int, str] | None = None, kitty: str = "", dealer: int | None = 0,
             levels: Sequence[str] | None = None, seed: int = 7) -> ShengjiHand:
    """A hand dealt from a chosen deck."""
    rules = ShengjiRules.from_spec(preset, options)
    deck = deck_for(rules, hands or {}, kitty, dealer, seed)
    return ShengjiHand.deal_new(table_id="t", number=1, rules=rules, dealer=dealer,
                                levels=levels, deck=deck)


def close_windows(hand: ShengjiHand, declarations: dict[int, tuple[int, str]] | None = None
                  ) -> None:
    """Every seat declares nothing in every window; `declarations` maps round -> (seat, cards)."""
    wanted = dict(declarations or {})
    while hand.phase == DECLARING:
        if hand.round in wanted:
            declarer, text = wanted.pop(hand.round)
            hand.act(declarer, Action(DECLARE, tuple(text.split())))
        seat = hand.to_act
        assert seat is not None
        hand.act(seat, NOTHING)


def bury_lowest(hand: ShengjiHand) -> None:
    """The dealer buries its lowest allowed cards."""
    hand.act(hand.dealer, Action(BURY, tuple(map(str, hand.lowest_bury()))))


def play(hand: ShengjiHand, seat: int, text: str) -> None:
    """A seat plays cards written in notation."""
    hand.act(seat, Action.play(text.split()))


# -- invariants ------------------------------------------------------------------------------

def state_of(hand: ShengjiHand) -> dict[str, Any]:
    """The aggregate's public attributes (what replaying its events must rebuild)."""
    return {k: v for k, v in vars(hand).items() if not k.startswith("_")}


def _mapper() -> Mapper[Any]:
    transcoder = JSONTranscoder()
    for transcoding in (UUIDAsHex(), DatetimeAsISO(), DecimalAsStr()):
        transcoder.register(transcoding)
    return Mapper(transcoder=transcoder)


MAPPER = _mapper()


def assert_replay_rebuilds(hand: ShengjiHand, events: Sequence[Any]) -> None:
    """Replaying the events, stored as JSON and read back, rebuilds the hand exactly."""
    rebuilt: Any = None
    for event in events:
        stored: Any = MAPPER.to_domain_event(MAPPER.to_stored_event(event))
        rebuilt = stored.mutate(rebuilt)
    assert isinstance(rebuilt, ShengjiHand)
    assert state_of(rebuilt) == state_of(hand)
    assert rebuilt.version == hand.version


def assert_points_conserved(hand: ShengjiHand) -> None:
    """Points in hands, the trick, tricks won, the kitty and the undealt cards add up."""
    in_hands = sum(POINTS[c] for h in hand.hands for c in h)
    in_trick = sum(POINTS[c] for _, cards in hand.trick for c in cards)
    kitty = hand.kitty_dealt if hand.phase == DECLARING else hand.kitty
    undealt = parse_cards(list(hand.deck[hand.round * 4:hand.rules.hand_size * 4]))
    total = (in_hands + in_trick + sum(hand.collected) + sum(POINTS[c] for c in kitty)
             + sum(POINTS[c] for c in undealt))
    assert total == hand.rules.total_points


def assert_views_private(hand: ShengjiHand) -> None:
    """No view shows another seat's cards or a hidden kitty; audit sees everything."""
    audit = hand.view(AUDITOR)
    assert audit.hands is not None and audit.deck is not None
    for seat in range(4):
        view = hand.view(SeatViewer(seat))
        assert Counter(view.cards) == Counter(map(str, hand.hands[seat]))
        assert view.hands is None and view.deck is None
        if hand.is_over:
            continue
        assert view.seed is None
        if view.kitty is not None:
            assert seat == hand.dealer and hand.kitty
        text = repr(view).replace(repr(view.cards), "").replace(repr(view.kitty), "")
        for other in range(4):
            if other != seat:
                hidden = Counter(map(str, hand.hands[other])) - Counter(view.cards)
                played = {c for _, cs in view.trick for c in cs}
                declared = set(view.declaration.cards) if view.declaration else set()
                forced = {c for t in view.throws_failed for c in t.forced}
                for card in hidden:
                    if card not in played | declared | forced:
                        assert f"'{card}'" not in text, (seat, other, card)
    public = hand.view(SPECTATOR)
    assert public.cards == () and public.kitty is None and public.hands is None


def assert_adjudication_reproduces(hand: ShengjiHand) -> None:
    """The exported transcript of a finished hand re-rules to the live result."""
    result = adjudicate(json.loads(json.dumps(hand.transcript())))
    assert result["status"] == "completed", result["rejected"]
    assert hand.result is not None
    for key, value in hand.result.items():
        assert result[key] == value, key
