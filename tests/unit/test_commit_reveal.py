"""Commit, then reveal: the seats of a seat-entropy deal commit before anyone's bytes count.

Through the table aggregate, for both games: a new seat-entropy table's seats first send the
SHA-256 of their bytes, then the bytes once every seat has committed or the commit window
closed; bytes before that, bytes that do not open the commitment, and commitments too late
are refused with their reasons; a seat that committed and did not reveal is recorded as
withheld and counted as empty; every draw opened for a hand and not dealt (a re-draw) is
named in the deal that follows; the hand's deal and transcript carry the draw's record.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from typing import Any

import pytest

from fiftyk_referee.domain.deal import seed_commitment
from fiftyk_referee.domain.errors import Reason
from fiftyk_referee.domain.game import GameHand
from fiftyk_referee.domain.table import Table
from tests.unit.test_deal import reference_shuffle
from tests.unit.test_seat_entropy import (
    GAMES,
    NOW,
    SEED,
    WINDOW,
    drawing,
    reason_of,
    rebuilt,
    reference_draw_seed,
)

COMMIT_CLOSES = NOW + timedelta(seconds=WINDOW)
REVEAL_CLOSES = NOW + timedelta(seconds=2 * WINDOW)
OTHER_SEED = bytes(reversed(range(32)))


def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def secret(seat: int) -> bytes:
    return bytes([seat + 1]) * (16 + seat)


@pytest.fixture(params=GAMES, ids=lambda g: g[0].name)
def table(request: pytest.FixtureRequest) -> Table:
    game, rules, players = request.param
    opened = drawing(game, rules, players, direct=False)
    opened.start_hand(seed=SEED, now=NOW)
    return opened


def commit_all(table: Table, seats: range | list[int] | None = None) -> None:
    for seat in seats if seats is not None else range(table.players):
        table.commit_entropy(seat, sha(secret(seat)), NOW)


def test_a_new_seat_entropy_table_commits_first_with_two_windows(table: Table) -> None:
    view = table.view()
    assert view.entropy_commit_reveal and view.draw is not None
    assert view.draw.commit_deadline == COMMIT_CLOSES and view.draw.deadline == REVEAL_CLOSES
    assert view.draw.committed == () and view.draw.contributed == ()


def test_every_seat_commits_then_reveals_and_the_last_reveal_deals(table: Table) -> None:
    commit_all(table)
    assert table.view().draw.committed == tuple(range(table.players))  # type: ignore[union-attr]
    hand: GameHand | None = None
    for seat in range(table.players):
        assert hand is None
        hand = table.contribute(seat, secret(seat), NOW)
    assert hand is not None and table.draw is None
    contributions = [secret(seat).hex() for seat in range(table.players)]
    assert hand.contributions == tuple(contributions)
    drawn = reference_shuffle(reference_draw_seed(SEED, str(hand.id), contributions),
                              table.game.base_deck(table.rules))
    assert list(hand.deck) == [str(c) for c in drawn]
    record = hand.draw_record
    assert record is not None
    assert record["commitments"] == [sha(secret(s)).hex() for s in range(table.players)]
    assert record["withheld"] == [] and record["abandoned"] == []
    assert record["commitment"] == seed_commitment(SEED)
    assert record["commit_deadline"] == COMMIT_CLOSES.isoformat()


def test_no_bytes_count_before_every_commitment_is_fixed(table: Table) -> None:
    # Bytes from a seat that has not committed, while others may still commit.
    assert reason_of(table.contribute, 0, secret(0), NOW) == Reason.ENTROPY_COMMIT_FIRST
    commit_all(table, [0])
    # Committed, but the others may still commit: its bytes would be seen too early.
    assert reason_of(table.contribute, 0, secret(0), NOW) == Reason.ENTROPY_REVEAL_NOT_OPEN
    assert table.draw is not None and table.draw["contributions"] == [None] * table.players


def test_bytes_that_do_not_open_the_commitment_are_refused(table: Table) -> None:
    commit_all(table)
    assert reason_of(table.contribute, 0, secret(1), NOW) == Reason.ENTROPY_MISMATCH
    assert table.contribute(0, secret(0), NOW) is None
    assert reason_of(table.contribute, 0, secret(0), NOW) == Reason.ENTROPY_ALREADY_SENT


def test_commitments_are_refused_when_they_cannot_count(table: Table) -> None:
    assert reason_of(table.commit_entropy, 0, b"short", NOW) == Reason.INVALID_ENTROPY
    assert reason_of(table.commit_entropy, 0, bytes(33), NOW) == Reason.INVALID_ENTROPY
    table.commit_entropy(0, sha(secret(0)), NOW)
    assert reason_of(table.commit_entropy, 0, sha(secret(1)), NOW) \
        == Reason.ENTROPY_ALREADY_SENT
    assert reason_of(table.commit_entropy, 1, sha(secret(1)), COMMIT_CLOSES) \
        == Reason.ENTROPY_WINDOW_CLOSED
    # A seat that did not commit cannot bring bytes once the commitments are fixed.
    assert reason_of(table.contribute, 1, secret(1), COMMIT_CLOSES) \
        == Reason.ENTROPY_WINDOW_CLOSED
    assert reason_of(table.contribute, 0, secret(0), REVEAL_CLOSES) \
        == Reason.ENTROPY_WINDOW_CLOSED


def test_a_commitment_at_a_table_of_direct_contributions_is_refused() -> None:
    game, rules, players = GAMES[0]
    direct = drawing(game, rules, players, direct=True)
    direct.start_hand(seed=SEED, now=NOW)
    assert not direct.view().entropy_commit_reveal
    assert reason_of(direct.commit_entropy, 0, sha(secret(0)), NOW) == Reason.INVALID_ENTROPY


def test_a_withheld_reveal_counts_as_empty_and_is_on_the_record(table: Table) -> None:
    commit_all(table)
    withholding = table.players - 1
    for seat in range(withholding):
        assert table.contribute(seat, secret(seat), NOW) is None  # waits for the last
    assert reason_of(table.close_draw, 1, REVEAL_CLOSES - timedelta(microseconds=1)) \
        == Reason.TURN_NOT_EXPIRED
    hand = table.close_draw(1, REVEAL_CLOSES)
    expected = [secret(seat).hex() for seat in range(withholding)] + [""]
    assert hand.contributions == tuple(expected)
    assert hand.draw_record is not None and hand.draw_record["withheld"] == [withholding]
    started = [e for e in table.collect_events() if type(e).__name__ == "HandStarted"]
    assert [e.withheld for e in started] == [[withholding]]  # type: ignore[attr-defined]


def test_reveals_open_at_the_commit_deadline_for_the_seats_that_committed(table: Table
                                                                         ) -> None:
    commit_all(table, [1])
    assert table.contribute(1, secret(1), COMMIT_CLOSES) is not None  # the only commitment


def test_a_re_draw_is_named_in_the_deal_that_follows(table: Table) -> None:
    commit_all(table, [0])
    # An operator's code that abandons the draw after seeing a commitment and opens another
    # (no command does this: it is the attack the record exposes).
    table._open_draw(NOW, OTHER_SEED)
    assert table.view().draw.abandoned == 1  # type: ignore[union-attr]
    commit_all(table)
    for seat in range(table.players):
        hand = table.contribute(seat, secret(seat), NOW)
    assert hand is not None and hand.commitment == seed_commitment(OTHER_SEED)
    record = hand.draw_record
    assert record is not None
    [abandoned] = record["abandoned"]
    assert abandoned["commitment"] == seed_commitment(SEED)
    assert abandoned["commitments"][0] == sha(secret(0)).hex()
    assert SEED.hex() not in repr(record)  # the abandoned draw's seed stays secret


def test_a_committing_table_replays_to_the_same_state(table: Table) -> None:
    commit_all(table)
    table.contribute(0, secret(0), NOW)
    events = table.collect_events()
    again = rebuilt(events)
    assert again.draw == table.draw and again.entropy_commit_reveal
    hand = table.close_draw(1, REVEAL_CLOSES)
    dealt = rebuilt(hand.collect_events())  # type: ignore[attr-defined]  # an aggregate
    assert dealt.draw_record == hand.draw_record


# -- seats' own keys -------------------------------------------------------------------------

KEY = "ab" * 32  # the domain stores a seat's key as hex; the service checks signatures


def keyed(game_rules: tuple[Any, Any, int]) -> Table:
    game, rules, players = game_rules
    table = Table.open(game, rules, players, entropy_window=WINDOW)
    table.join(0, "p0", KEY)
    for seat in range(1, players):
        table.join(seat, f"p{seat}")
    table.start_hand(seed=SEED, now=NOW)
    return table


@pytest.mark.parametrize("game_rules", GAMES, ids=lambda g: g[0].name)
def test_a_seat_that_bound_a_key_must_sign_what_it_sends(game_rules: Any) -> None:
    table = keyed(game_rules)
    assert table.view().seat_keys == (KEY,) + (None,) * (table.players - 1)
    assert reason_of(table.commit_entropy, 0, sha(secret(0)), NOW) \
        == Reason.ENTROPY_SIGNATURE_REQUIRED
    table.commit_entropy(0, sha(secret(0)), NOW, "5a" * 64)
    table.commit_entropy(1, sha(secret(1)), NOW)  # a seat without a key signs nothing
    commit_all(table, range(2, table.players))
    assert reason_of(table.contribute, 0, secret(0), NOW) == Reason.ENTROPY_SIGNATURE_REQUIRED
    table.contribute(0, secret(0), NOW, "6b" * 64)
    for seat in range(1, table.players):
        hand = table.contribute(seat, secret(seat), NOW)
    assert hand is not None and hand.draw_record is not None
    assert hand.draw_record["seat_keys"] == [KEY] + [""] * (table.players - 1)
    assert hand.draw_record["signatures"] == {
        "commitments": ["5a" * 64] + [""] * (table.players - 1),
        "contributions": ["6b" * 64] + [""] * (table.players - 1)}


@pytest.mark.parametrize("key", ["ab" * 31, "AB" * 32, "zz" * 32, 7])
def test_a_seat_key_is_thirty_two_bytes_of_hex(key: Any) -> None:
    game, rules, players = GAMES[0]
    table = Table.open(game, rules, players, entropy_window=WINDOW)
    assert reason_of(table.join, 0, "p0", key) == Reason.INVALID_SEAT_KEY


def test_a_seat_key_goes_with_the_player_who_bound_it() -> None:
    game, rules, players = GAMES[0]
    table = Table.open(game, rules, players, entropy_window=WINDOW)
    table.join(0, "p0", KEY)
    table.leave(0)
    table.join(0, "p1")
    assert table.seat_key(0) is None
    table.leave(0)
    table.join(0, "p2", KEY)
    table.replace_seat(0, "bot")
    assert table.seat_key(0) is None
    assert rebuilt(table.collect_events()).seat_keys == table.seat_keys
