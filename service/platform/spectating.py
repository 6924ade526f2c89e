"""A spectator's stream behind the table: the delay a table's spectator policy asks for.

`SpectatorDelay` holds a spectator's events in feed order and lets one go only when the
policy (`domain/spectators.py`) allows: a hand event once `delay_actions` later events of
the same hand were recorded, or `delay_seconds` after it was recorded, and every event of a
hand once that hand ended (`<game>.hand_ended`: nothing is hidden any more). Table events
wait behind the hand events recorded before them, so the order never changes. The server
applies it to every spectator-token stream (`WatchTable`); the platform, the audit role and
the seats watch without it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from fiftyk_referee.domain.events import PublicEvent
from fiftyk_referee.domain.spectators import SpectatorPolicy
from fiftyk_referee.service.core.public_events import FeedEvent

HAND_ENDED_SUFFIX = ".hand_ended"  # every game's last hand event (docs/events.md)


@dataclass(frozen=True, slots=True)
class Held:
    """One event waiting for its release, as the spectator will see it."""

    event: FeedEvent
    public: PublicEvent


class SpectatorDelay:
    """The events of one spectator stream, released as the table's policy allows."""

    def __init__(self, policy: SpectatorPolicy, table_id: str) -> None:
        self._policy = policy
        self._table_id = table_id
        self._held: deque[Held] = deque()
        self._later: dict[str, int] = {}  # per hand: events held after its oldest held one
        self._ended: set[str] = set()

    @property
    def holding(self) -> int:
        """How many events wait."""
        return len(self._held)

    def admit(self, event: FeedEvent, public: PublicEvent, now: datetime) -> list[Held]:
        """Take the next event of the stream; returns the events now released, in order."""
        self._held.append(Held(event, public))
        if event.aggregate_id != self._table_id:
            self._later[event.aggregate_id] = self._later.get(event.aggregate_id, -1) + 1
            if public.NAME.endswith(HAND_ENDED_SUFFIX):
                self._ended.add(event.aggregate_id)
        return list(self._release(now))

    def due(self, now: datetime) -> list[Held]:
        """The events whose time came while nothing new arrived."""
        return list(self._release(now))

    def seconds_to_next(self, now: datetime) -> float | None:
        """How long until the oldest held event is released by time (None: never by time)."""
        if not self._held or not self._policy.delay_seconds:
            return None
        age = (now - self._held[0].event.timestamp).total_seconds()
        return max(0.0, self._policy.delay_seconds - age)

    def _releasable(self, held: Held, now: datetime) -> bool:
        hand = held.event.aggregate_id
        if hand == self._table_id or hand in self._ended:
            return True
        actions = self._policy.delay_actions
        if actions and self._later.get(hand, 0) >= actions:
            return True
        seconds = self._policy.delay_seconds
        return bool(seconds) and (now - held.event.timestamp).total_seconds() >= seconds

    def _release(self, now: datetime) -> Iterator[Held]:
        while self._held and self._releasable(self._held[0], now):
            held = self._held.popleft()
            hand = held.event.aggregate_id
            if hand != self._table_id:
                self._later[hand] -= 1
                if self._later[hand] < 0:  # the hand has nothing held any more
                    del self._later[hand]
            yield held


__all__ = ["Held", "SpectatorDelay"]
