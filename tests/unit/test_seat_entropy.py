"""Seat entropy (`fiftyk-shuffle/2`): every seat contributes to the deal, nobody alone decides it.

The derivation is pinned against an independent reading of docs/fairness.md; the property
"no single party can choose or predict the deal" is tested as what it means here: the
commitment published before any contribution binds the referee's seed, and changing any one
input (a seat's contribution, the seed, the hand) changes the deck. Both games, through the
table aggregate: the draw, its deadline, its refusals, and that the dealt hand records and
reveals its inputs only when it ends.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from fiftyk_referee.domain.cards import make_deck
from fiftyk_referee.domain.deal import (
    DRAW_ALGORITHM,
    commitment,
    draw_seed,
    seed_commitment,
    shuffle_deck,
    shuffled,
)
from fiftyk_referee.domain.doudizhu import GAME as DOUDIZHU
from fiftyk_referee.domain.doudizhu.rulesets import DoudizhuRules
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.fiftyk import GAME as FIFTYK
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.game import Game, GameHand, Rules
from fiftyk_referee.domain.observer import SPECTATOR, SeatViewer
from fiftyk_referee.domain.shengji import GAME as SHENGJI
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.domain.table import Table
from tests.unit.test_deal import reference_shuffle

SEED = bytes(range(32))
HAND = "5b7e6a52-3f1d-5c3e-9d4c-2a1b0c9d8e7f"
NOW = datetime(2026, 12, 1, 16, 0, tzinfo=UTC)
WINDOW = 10
ONE = bytes([1]) * 16


def reference_draw_seed(seed: bytes, hand_id: str, contributions: Sequence[str]) -> bytes:
    """HMAC-SHA256 exactly as docs/fairness.md writes it, independently of domain/deal.py."""
    message = f"fiftyk-shuffle/2\n{hand_id}\n{len(contributions)}"
    for contribution in contributions:
        message += "\n" + contribution
    return hmac.new(seed, message.encode(), hashlib.sha256).digest()


def test_the_draw_seed_is_the_documented_hmac() -> None:
    contributions = ["ab" * 16, "", "0123456789abcdef" * 4, "ff" * 16]
    assert draw_seed(SEED, HAND, contributions) == reference_draw_seed(SEED, HAND, contributions)


def test_a_drawn_deck_is_the_version_1_shuffle_of_the_draw_seed() -> None:
    base = make_deck(2, jokers=True)
    contributions = ["ab" * 16, "", "cd" * 32, ""]
    deck, digest = shuffled(SEED, base, hand_id=HAND, contributions=contributions)
    assert deck == reference_shuffle(reference_draw_seed(SEED, HAND, contributions), base)
    assert digest == hashlib.sha256(b"fiftyk-seed/2" + SEED).hexdigest()


def test_the_commitment_binds_the_seed_before_any_contribution() -> None:
    """Published before the seats contribute, it names one seed: another does not open it."""
    published = seed_commitment(SEED)
    assert published == seed_commitment(bytes(SEED))
    assert all(seed_commitment(SEED[:i] + bytes([SEED[i] ^ 1]) + SEED[i + 1:]) != published
               for i in range(len(SEED)))
    # Nor does it depend on what the seats send: it is fixed before they send anything.
    _, late = shuffled(SEED, make_deck(1, jokers=True), hand_id=HAND,
                       contributions=["ee" * 16] * 4)
    assert late == published


def test_changing_any_one_contribution_changes_the_deck() -> None:
    """No seat's contribution is ignored: whoever sends last cannot be left out."""
    base = make_deck(2, jokers=True)
    contributions = ["11" * 16, "22" * 16, "", "44" * 16]
    deck, _ = shuffled(SEED, base, hand_id=HAND, contributions=contributions)
    for seat in range(len(contributions)):
        for other in ("99" * 16, "", "11" * 17):
            if other == contributions[seat]:
                continue
            changed = [*contributions]
            changed[seat] = other
            assert shuffled(SEED, base, hand_id=HAND, contributions=changed)[0] != deck, seat


def test_the_seed_and_the_hand_change_the_deck_too() -> None:
    base = make_deck(1, jokers=True)
    contributions = ["11" * 16, "22" * 16, "33" * 16, "44" * 16]
    deck, _ = shuffled(SEED, base, hand_id=HAND, contributions=contributions)
    assert shuffled(bytes(32), base, hand_id=HAND, contributions=contributions)[0] != deck
    other_hand = HAND[:-1] + "0"
    assert shuffled(SEED, base, hand_id=other_hand, contributions=contributions)[0] != deck
    # Contributions cannot be shifted between seats or merged unnoticed.
    assert shuffled(SEED, base, hand_id=HAND,
                    contributions=["1111" * 8, "22" * 16, "33" * 16, "44" * 16][::-1]
                    )[0] != deck
    assert shuffled(SEED, base, hand_id=HAND,
                    contributions=["11" * 16 + "22" * 16, "", "33" * 16, "44" * 16])[0] != deck


def test_a_deal_without_contributions_is_version_1_as_before() -> None:
    base = make_deck(1, jokers=True)
    deck, digest = shuffled(SEED, base, hand_id=HAND, contributions=None)
    assert deck == shuffle_deck(SEED, base)
    assert digest == commitment(SEED, [str(c) for c in deck])


# -- the table's draw, for every game ----------------------------------------------------------

GAMES: list[tuple[Game, Rules, int]] = [
    (FIFTYK, Ruleset.from_spec("classic"), 4),
    (SHENGJI, ShengjiRules.from_spec("tractor"), 4),
    (DOUDIZHU, DoudizhuRules.from_spec("classic"), 3),
]


def drawing(game: Game, rules: Rules, players: int, *, window: int | None = WINDOW,
            allow_preset_deck: bool = False, direct: bool = True) -> Table:
    """A full table drawing its deals (its seats send their bytes directly unless not
    `direct`: commit, then reveal, is tested in tests/unit/test_commit_reveal.py)."""
    table = Table.open(game, rules, players, entropy_window=window,
                       allow_preset_deck=allow_preset_deck, entropy_direct=direct)
    for seat in range(players):
        table.join(seat, f"p{seat}")
    return table


def reason_of(call: Any, *args: Any, **kwargs: Any) -> Reason:
    with pytest.raises(RuleError) as error:
        call(*args, **kwargs)
    return error.value.reason


@pytest.fixture(params=GAMES, ids=lambda g: g[0].name)
def table(request: pytest.FixtureRequest) -> Table:
    game, rules, players = request.param
    return drawing(game, rules, players)


def test_start_hand_opens_a_draw_that_commits_to_the_seed(table: Table) -> None:
    assert table.start_hand(seed=SEED, now=NOW) is None
    view = table.view()
    assert view.current_hand is None and view.draw is not None
    assert view.draw.commitment == seed_commitment(SEED)
    assert view.draw.deadline == NOW + timedelta(seconds=WINDOW)
    assert view.draw.contributed == () and view.draw.hand_number == 1
    assert SEED.hex() not in repr(view)  # the seed itself is in no view


def test_the_last_contribution_deals_from_every_seats_entropy(table: Table) -> None:
    table.start_hand(seed=SEED, now=NOW)
    sent = [bytes([seat + 1]) * (16 + seat) for seat in range(table.players)]
    for seat in range(table.players - 1):
        assert table.contribute(seat, sent[seat], NOW) is None
    assert table.view().draw is not None
    assert table.view().draw.contributed == tuple(range(table.players - 1))  # type: ignore[union-attr]
    hand = table.contribute(table.players - 1, sent[-1], NOW)
    assert hand is not None and table.current_hand == str(hand.id) and table.draw is None
    contributions = [c.hex() for c in sent]
    assert hand.contributions == tuple(contributions)
    assert hand.seed == SEED.hex() and hand.commitment == seed_commitment(SEED)
    base = table.game.base_deck(table.rules)
    drawn = reference_shuffle(reference_draw_seed(SEED, str(hand.id), contributions), base)
    assert list(hand.deck) == [str(c) for c in drawn]  # the kitty (Shengji) included


def test_seats_that_send_nothing_count_as_empty_after_the_deadline(table: Table) -> None:
    table.start_hand(seed=SEED, now=NOW)
    table.contribute(1, ONE, NOW)
    deadline = NOW + timedelta(seconds=WINDOW)
    assert reason_of(table.close_draw, 1, deadline - timedelta(microseconds=1)) \
        == Reason.TURN_NOT_EXPIRED
    assert reason_of(table.start_hand, now=deadline - timedelta(seconds=1)) \
        == Reason.HAND_IN_PROGRESS
    assert reason_of(table.contribute, 0, ONE, deadline) == Reason.ENTROPY_WINDOW_CLOSED
    hand = table.close_draw(1, deadline)
    expected = ["" for _ in range(table.players)]
    expected[1] = ONE.hex()
    assert hand.contributions == tuple(expected)
    base = table.game.base_deck(table.rules)
    drawn = reference_shuffle(reference_draw_seed(SEED, str(hand.id), expected), base)
    assert list(hand.deck) == [str(c) for c in drawn]


def test_start_hand_after_the_deadline_deals_the_draw(table: Table) -> None:
    table.start_hand(seed=SEED, now=NOW)
    hand = table.start_hand(now=NOW + timedelta(seconds=WINDOW))
    assert hand is not None and hand.contributions == ("",) * table.players


def test_contributions_are_refused_when_they_cannot_count(table: Table) -> None:
    assert reason_of(table.contribute, 0, ONE, NOW) == Reason.NO_DRAW_OPEN
    table.start_hand(seed=SEED, now=NOW)
    assert reason_of(table.contribute, 0, b"short", NOW) == Reason.INVALID_ENTROPY
    assert reason_of(table.contribute, 0, bytes(65), NOW) == Reason.INVALID_ENTROPY
    assert reason_of(table.contribute, table.players, ONE, NOW) == Reason.INVALID_SEAT
    table.contribute(0, ONE, NOW)
    assert reason_of(table.contribute, 0, ONE * 2, NOW) == Reason.ENTROPY_ALREADY_SENT
    assert reason_of(table.leave, 0) == Reason.HAND_IN_PROGRESS
    assert reason_of(table.replace_seat, 0, "newcomer") == Reason.HAND_IN_PROGRESS
    assert reason_of(table.close_draw, 2, NOW + timedelta(hours=1)) == Reason.NO_DRAW_OPEN


def test_a_seat_sees_only_its_own_cards_of_a_drawn_hand(table: Table) -> None:
    table.start_hand(seed=SEED, now=NOW)
    hand = table.close_draw(1, NOW + timedelta(seconds=WINDOW))
    for seat in range(table.players):
        view = hand.view(SeatViewer(seat))
        text = repr(view)
        assert SEED.hex() not in text
    assert SEED.hex() not in repr(hand.view(SPECTATOR))


def test_closing_the_table_cancels_the_draw(table: Table) -> None:
    table.start_hand(seed=SEED, now=NOW)
    table.close("done")
    assert table.draw is None and table.view().draw is None
    assert reason_of(table.contribute, 0, ONE, NOW) == Reason.TABLE_CLOSED


def rebuilt(events: Sequence[Any]) -> Any:
    """An aggregate rebuilt from its events, as the event store does."""
    aggregate: Any = None
    for event in events:
        aggregate = event.mutate(aggregate)
    return aggregate


def test_a_drawn_table_replays_to_the_same_state(table: Table) -> None:
    table.start_hand(seed=SEED, now=NOW)
    table.contribute(0, ONE, NOW)
    events = table.collect_events()
    assert rebuilt(events).draw == table.draw
    hand = table.close_draw(1, NOW + timedelta(seconds=WINDOW))
    again = rebuilt([*events, *table.collect_events()])
    assert again.current_hand == str(hand.id) and again.draw is None
    dealt = rebuilt(hand.collect_events())  # type: ignore[attr-defined]  # an aggregate
    assert dealt.deck == hand.deck and dealt.contributions == hand.contributions


def test_a_preset_deck_needs_no_draw() -> None:
    game, rules, players = GAMES[0]
    table = drawing(game, rules, players, allow_preset_deck=True)
    deck = game.base_deck(rules)
    hand = table.start_hand(deck=deck, now=NOW)
    assert hand is not None and hand.contributions is None and hand.seed is None


def test_tables_without_seat_entropy_deal_at_once(table: Table) -> None:
    plain = drawing(table.game, table.rules, table.players, window=None)
    hand = plain.start_hand(seed=SEED)
    assert hand is not None and hand.contributions is None
    assert hand.commitment == commitment(SEED, list(hand.deck))


@pytest.mark.parametrize("window", [0, -1, 301, True])
def test_an_entropy_window_is_one_to_three_hundred_seconds(window: Any) -> None:
    game, rules, players = GAMES[0]
    assert reason_of(Table.open, game, rules, players, entropy_window=window) \
        == Reason.INVALID_ENTROPY


def test_a_drawn_hands_transcript_reveals_its_inputs_only_when_over() -> None:
    game, rules, players = GAMES[0]
    table = drawing(game, rules, players)
    table.start_hand(seed=SEED, now=NOW)
    hand: GameHand = table.close_draw(1, NOW + timedelta(seconds=WINDOW))
    assert "deal" not in game.export_transcript(hand)
    hand.act(0, _resign())
    hand.act(1, _resign())
    hand.act(2, _resign())
    assert hand.is_over
    deal = game.export_transcript(hand)["deal"]
    assert deal == {"algorithm": DRAW_ALGORITHM, "seed": SEED.hex(),
                    "commitment": seed_commitment(SEED), "hand_id": str(hand.id),
                    "contributions": [""] * players,
                    # the draw's public record: seats sent bytes directly, none committed
                    "draw": {"number": 1, "commitment": seed_commitment(SEED),
                             "commit_deadline": None,
                             "deadline": (NOW + timedelta(seconds=WINDOW)).isoformat(),
                             "commitments": None, "withheld": [], "abandoned": []}}


def _resign() -> Any:
    from fiftyk_referee.domain.game import RESIGN, Action
    return Action(RESIGN)


def test_a_late_contribution_is_refused_as_closed_before_and_after_the_clock_deals(
        table: Table) -> None:
    """The answer to a contribution after the deadline does not depend on whether the
    referee's clock has dealt the draw yet: the window is closed either way."""
    table.start_hand(seed=SEED, now=NOW)
    table.contribute(1, ONE, NOW)
    late = NOW + timedelta(seconds=WINDOW)
    assert reason_of(table.contribute, 0, ONE, late) == Reason.ENTROPY_WINDOW_CLOSED
    assert table.close_draw(1, late) is not None
    assert reason_of(table.contribute, 0, ONE, late) == Reason.ENTROPY_WINDOW_CLOSED
    assert reason_of(table.contribute, 1, ONE, late) == Reason.ENTROPY_ALREADY_SENT
