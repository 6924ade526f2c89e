"""Spectators without a server: the policy, the delay that keeps them behind, their tokens."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import ClassVar

import pytest

from fiftyk_referee.domain.events import EventKind, PublicEvent
from fiftyk_referee.domain.spectators import SpectatorPolicy
from fiftyk_referee.service.core.public_events import FeedEvent
from fiftyk_referee.service.errors import Unauthenticated
from fiftyk_referee.service.grpc import auth
from fiftyk_referee.service.platform.spectating import SpectatorDelay

SECRET = "a-test-secret-of-enough-length-0123456789"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
TABLE, HAND = "table-1", "hand-1"


@dataclass(frozen=True, slots=True)
class Played(PublicEvent):
    """A stand-in hand event."""

    NAME: ClassVar[str] = "toy.played"


@dataclass(frozen=True, slots=True)
class Ended(PublicEvent):
    """A stand-in last hand event."""

    NAME: ClassVar[str] = "toy.hand_ended"


@dataclass(frozen=True, slots=True)
class Recorded(PublicEvent):
    """A stand-in table event."""

    NAME: ClassVar[str] = "table.hand_recorded"


def _event(position: int, aggregate: str, public: PublicEvent, at: datetime = T0
           ) -> tuple[FeedEvent, PublicEvent]:
    kind = EventKind(object, type(public), lambda stored, viewer: public)
    return FeedEvent(position, aggregate, position, at, None, kind), public


def _positions(released: list[object]) -> list[int]:
    return [held.event.position for held in released]  # type: ignore[attr-defined]


def test_a_ranked_table_without_a_delay_delays_by_one_round() -> None:
    assert SpectatorPolicy.for_table(4, ranked=True).delay_actions == 4
    assert SpectatorPolicy.for_table(4, ranked=True, delay_seconds=30).delay_actions == 0
    assert not SpectatorPolicy.for_table(4).delayed
    with pytest.raises(ValueError, match="delay_seconds"):
        SpectatorPolicy.for_table(4, delay_seconds=4000)
    policy = SpectatorPolicy.for_table(3, ranked=True, max_spectators=7)
    assert SpectatorPolicy.from_json(policy.to_json()) == policy
    assert SpectatorPolicy.from_json(None) == SpectatorPolicy()


def test_a_hand_event_waits_for_as_many_later_events_as_the_delay() -> None:
    delay = SpectatorDelay(SpectatorPolicy(delay_actions=2), TABLE)
    assert _positions(delay.admit(*_event(1, TABLE, Recorded()), now=T0)) == [1]
    assert delay.admit(*_event(2, HAND, Played()), now=T0) == []
    assert delay.admit(*_event(3, HAND, Played()), now=T0) == []
    assert _positions(delay.admit(*_event(4, HAND, Played()), now=T0)) == [2]
    assert _positions(delay.admit(*_event(5, HAND, Played()), now=T0)) == [3]
    assert delay.holding == 2


def test_the_end_of_the_hand_releases_everything_in_order() -> None:
    delay = SpectatorDelay(SpectatorPolicy(delay_actions=5), TABLE)
    for position in (1, 2, 3):
        assert delay.admit(*_event(position, HAND, Played()), now=T0) == []
    assert _positions(delay.admit(*_event(4, HAND, Ended()), now=T0)) == [1, 2, 3, 4]
    assert _positions(delay.admit(*_event(5, TABLE, Recorded()), now=T0)) == [5]


def test_a_table_event_waits_behind_the_hand_events_before_it() -> None:
    delay = SpectatorDelay(SpectatorPolicy(delay_actions=1), TABLE)
    assert delay.admit(*_event(1, HAND, Played()), now=T0) == []
    assert delay.admit(*_event(2, TABLE, Recorded()), now=T0) == []  # order is kept
    assert _positions(delay.admit(*_event(3, HAND, Played()), now=T0)) == [1, 2]


def test_time_releases_an_event_once_its_delay_passed() -> None:
    delay = SpectatorDelay(SpectatorPolicy(delay_seconds=10), TABLE)
    assert delay.admit(*_event(1, HAND, Played(), at=T0), now=T0) == []
    assert delay.seconds_to_next(T0 + timedelta(seconds=4)) == 6
    assert delay.due(T0 + timedelta(seconds=9)) == []
    assert _positions(delay.due(T0 + timedelta(seconds=10))) == [1]
    assert delay.seconds_to_next(T0) is None


def test_spectator_tokens_name_a_table_and_no_seat() -> None:
    token = auth.issue_spectator_token(SECRET, TABLE, ttl_seconds=60, now=1000)
    claim = auth.verify_spectator_token(SECRET, token, now=1010)
    assert claim.table_id == TABLE and claim.spectator_id
    principal = auth.authenticate([("authorization", f"Bearer {token}")],
                                  _Settings(), now=1010)
    assert principal.spectator == claim and principal.seat is None
    assert principal.label == "spectator"
    auth.require_table_access(principal, TABLE)
    with pytest.raises(Exception, match="another table"):
        auth.require_table_access(principal, "table-2")


def test_a_spectator_token_is_not_a_seat_token_and_cannot_be_forged_or_outlive_itself(
) -> None:
    token = auth.issue_spectator_token(SECRET, TABLE, ttl_seconds=60, now=1000)
    seat_token = auth.issue_seat_token(SECRET, TABLE, 0, "p", ttl_seconds=60, now=1000)
    with pytest.raises(Unauthenticated):
        auth.verify_seat_token(SECRET, token, now=1010)
    with pytest.raises(Unauthenticated):
        auth.verify_spectator_token(SECRET, seat_token, now=1010)
    # The same payload under the seat token's version does not verify: the MAC tags differ.
    with pytest.raises(Unauthenticated):
        auth.verify_seat_token(SECRET, "fk1." + token.split(".", 1)[1], now=1010)
    with pytest.raises(Unauthenticated, match="expired"):
        auth.verify_spectator_token(SECRET, token, now=1060)
    with pytest.raises(Unauthenticated):
        auth.verify_spectator_token("another-secret-of-enough-length-98765", token, now=1010)


@dataclass(frozen=True)
class _Settings:
    token_secret: str = SECRET
    audit_key: str = "audit"
    platform_key: str = "platform"
