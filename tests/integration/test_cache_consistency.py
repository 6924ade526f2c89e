"""The aggregate cache can never serve state the store does not hold.

Random sequences of commands — accepted ones, refused ones (wrong seat, cards not held,
plays that do not beat, passes by the leader), resignations, turn clock rulings, deals,
seats taken and left — run through two applications sharing one SQLite store (as two
server processes would). After every command, each table and hand served by the acting
application's cache must equal the same aggregate replayed from the stored events alone.
A command that mutated its private copy and was then refused, or a copy that shared a
container with the cached original (which a lost race then fast-forwards), would show up
here as a difference.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from datetime import timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fiftyk_referee.domain.cards import make_deck
from fiftyk_referee.domain.deal import shuffle_deck
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.cache import replay
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.errors import ServiceError
from fiftyk_referee.service.ops.config import parse_database_url

PLAYERS = 4
STEPS = 60
COMMANDS = ("legal", "legal", "legal", "pass", "wrong_seat", "not_held", "weak", "resign",
            "timeout", "deal", "leave", "join", "other_app", "race", "race", "race")


def _state(aggregate: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(aggregate).items() if k != "_pending_events"}


def _stored(app: Referee, aggregate_id: UUID) -> Any:
    return replay(None, app.events.get(aggregate_id))


class Scenario:
    """A table played by random commands through two applications on one store."""

    def __init__(self, apps: list[Referee], data: st.DataObject) -> None:
        self.apps = apps
        self.data = data
        self.table_id = apps[0].create_table("six_card", {"turn_timeout": 5}, PLAYERS,
                                             allow_preset_deck=True).table_id
        for seat in range(PLAYERS):
            apps[0].join_table(self.table_id, f"p{seat}", seat)
        self.app = apps[0]

    def check(self) -> None:
        """Every table and hand the acting application serves equals its stored replay.

        Only the acting application is read: reading fast-forwards its cache, and the other
        one must stay stale so that its next command decides on a stale cached copy, loses
        the race on saving, and retries.
        """
        table_uid = UUID(self.table_id)
        stored_table = _stored(self.app, table_uid)
        for app in [self.app]:
            table = app.get_table(table_uid)
            assert isinstance(table, Table)
            assert _state(table) == _state(stored_table)
            for hand_id in table.hand_ids:
                hand = app.get_hand(hand_id)
                assert _state(hand) == _state(_stored(app, UUID(hand_id)))

    def race(self, hand: Hand) -> None:
        """Both applications make the same move: the second decides on its cached copy of
        the state before the first's move, so its save collides and it retries (then is
        refused, or plays on). Passing makes the stale copy win tricks before it collides."""
        seat, hand_id = hand.turn, str(hand.id)
        assert seat is not None
        other = self.apps[1] if self.app is self.apps[0] else self.apps[0]
        other.get_hand(hand_id)  # the other application caches the state before the move
        plays = hand.legal_plays(seat)
        cards = None
        if plays and (hand.top is None or self.data.draw(st.booleans())):
            cards = self.data.draw(st.sampled_from(plays)).cards
        for app in (self.app, other):
            with suppress(RuleError, ServiceError):
                if cards is None:
                    app.pass_turn(self.table_id, hand_id, seat)
                else:
                    app.play(self.table_id, hand_id, seat, cards)
        self.app = other

    def deal(self) -> None:
        """Deal a deck drawn by hypothesis (the referee's own shuffle is secret)."""
        seed = self.data.draw(st.integers(0, 2**32))
        rules = Ruleset.from_spec("six_card")
        deck = shuffle_deck(seed.to_bytes(32, "big"), make_deck(rules.packs, jokers=rules.jokers))
        self.app.start_hand(self.table_id, deck=[str(card) for card in deck])

    def hand(self) -> Hand | None:
        """The current hand as stored (read past both caches, so they may stay stale)."""
        table = _stored(self.app, UUID(self.table_id))
        if table.current_hand is None:
            return None
        hand = _stored(self.app, UUID(table.current_hand))
        assert isinstance(hand, Hand)
        return hand

    def step(self) -> None:
        """One random command; refusals are expected and must leave no trace."""
        command = self.data.draw(st.sampled_from(COMMANDS))
        with suppress(RuleError, ServiceError):
            self._run(command)

    def _run(self, command: str) -> None:
        app, table_id = self.app, self.table_id
        if command == "other_app":
            self.app = self.apps[1] if self.app is self.apps[0] else self.apps[0]
            return
        if command == "deal":
            self.deal()
            return
        if command in ("leave", "join"):
            seat = self.data.draw(st.integers(0, PLAYERS - 1))
            if command == "leave":
                app.leave_table(table_id, seat)
            else:
                app.join_table(table_id, f"p{seat}", seat)
            return
        hand = self.hand()
        if hand is None or hand.turn is None:
            self.deal()
            return
        seat, hand_id = hand.turn, str(hand.id)
        if command == "race":
            self.race(hand)
        elif command == "legal":
            plays = hand.legal_plays(seat)
            if plays:
                app.play(table_id, hand_id, seat, self.data.draw(st.sampled_from(plays)).cards)
            else:
                app.pass_turn(table_id, hand_id, seat)
        elif command == "pass":
            app.pass_turn(table_id, hand_id, seat)
        elif command == "wrong_seat":
            app.pass_turn(table_id, hand_id, (seat + 1) % PLAYERS)
        elif command == "not_held":
            other = hand.hands[(seat + 1) % PLAYERS]
            if other:
                app.play(table_id, hand_id, seat, [str(other[0])])
        elif command == "weak":
            lowest = min(hand.hands[seat], key=lambda card: card.rank)
            app.play(table_id, hand_id, seat, [str(lowest)])
        elif command == "resign":
            app.resign(table_id, hand_id, self.data.draw(st.integers(0, PLAYERS - 1)))
        elif command == "timeout":
            early = self.data.draw(st.booleans())
            now = hand.modified_on + timedelta(seconds=1 if early else 3_600)
            app.time_out(table_id, hand_id, seat, now)


@pytest.fixture
def store_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A fresh SQLite store with the server's cache settings."""
    yield persistence_env(parse_database_url(str(tmp_path / "store.sqlite"), tmp_path))


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_cached_state_always_equals_the_state_replayed_from_the_store(
        store_env: dict[str, str], data: st.DataObject) -> None:
    apps = [Referee(dict(store_env)), Referee(dict(store_env))]
    try:
        scenario = Scenario(apps, data)
        scenario.check()
        for _ in range(STEPS):
            scenario.step()
            scenario.check()
    finally:
        for app in apps:
            app.close()
