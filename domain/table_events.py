"""The table's public events (`table.*`): seats, hands, the match's end, the lifecycle.

Every viewer gets the same payload. A table records one secret, the referee's seed of a
seat-entropy deal (`table.draw_opened`), which no payload holds: only its commitment, and of
each contribution only its SHA-256 until the hand ends. The stored classes are the `Table`
aggregate's events (`domain/table.py`); their stored topics never change, and neither do
the public names below.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, ClassVar

from fiftyk_referee.domain.events import EventCatalog, EventKind, PublicEvent, stored_event
from fiftyk_referee.domain.games import default_game
from fiftyk_referee.domain.observer import Viewer
from fiftyk_referee.domain.spectators import SpectatorPolicy
from fiftyk_referee.domain.table import Table


@dataclass(frozen=True, slots=True)
class TableOpened(PublicEvent):
    """A table was opened with a game, a ruleset and a number of seats."""

    NAME: ClassVar[str] = "table.opened"
    game: str
    ruleset: Mapping[str, Any]  # the stored spec: {"preset": P, "options": {...}}
    players: int
    allow_preset_deck: bool
    table_name: str
    spectators: SpectatorPolicy = field(default_factory=SpectatorPolicy)


@dataclass(frozen=True, slots=True)
class SeatTaken(PublicEvent):
    """A player sat down at a seat."""

    NAME: ClassVar[str] = "table.seat_taken"
    seat: int
    player_id: str
    public_key: str | None = None  # the player's own key (docs/fairness.md#seat-keys)


@dataclass(frozen=True, slots=True)
class SeatLeft(PublicEvent):
    """A seat was freed between hands."""

    NAME: ClassVar[str] = "table.seat_left"
    seat: int


@dataclass(frozen=True, slots=True)
class HandStarted(PublicEvent):
    """The table dealt its next hand (the hand's own events follow under its id)."""

    NAME: ClassVar[str] = "table.hand_started"
    hand_id: str
    hand_number: int
    dealer: int
    # A seat-entropy deal's contributions (hex, "" for none); None for other deals.
    contributions: tuple[str, ...] | None = None
    # Commit, then reveal: the seats that committed and did not reveal (counted as empty).
    withheld: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class HandRecorded(PublicEvent):
    """A finished hand's scores were added to the match (`totals`: side, exact decimal)."""

    NAME: ClassVar[str] = "table.hand_recorded"
    hand_id: str
    totals: tuple[tuple[str, Decimal], ...]
    hand_head: str | None = None  # the hand's chain head (docs/fairness.md); None before it


@dataclass(frozen=True, slots=True)
class MatchEnded(PublicEvent):
    """The match is over: no hand is dealt at this table any more."""

    NAME: ClassVar[str] = "table.match_ended"
    reason: str


@dataclass(frozen=True, slots=True)
class SeatReplaced(PublicEvent):
    """A taken seat was given to another player between hands; the old seat token is dead."""

    NAME: ClassVar[str] = "table.seat_replaced"
    seat: int
    previous_player_id: str
    player_id: str


@dataclass(frozen=True, slots=True)
class SeatTokenReissued(PublicEvent):
    """A seat's token was reissued: tokens issued before for this seat stopped working."""

    NAME: ClassVar[str] = "table.seat_token_reissued"
    seat: int
    player_id: str


@dataclass(frozen=True, slots=True)
class TableClosed(PublicEvent):
    """The table was closed: it deals no more hands (a hand in progress still finishes)."""

    NAME: ClassVar[str] = "table.closed"
    reason: str


@dataclass(frozen=True, slots=True)
class HandVoided(PublicEvent):
    """The hand in progress was voided (the table was aborted): its score never counts."""

    NAME: ClassVar[str] = "table.hand_voided"
    hand_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class DrawOpened(PublicEvent):
    """A seat-entropy deal is being drawn: the referee committed to its secret seed, and the
    seats may contribute until `deadline` (docs/fairness.md#seat-entropy)."""

    NAME: ClassVar[str] = "table.draw_opened"
    hand_number: int
    commitment: str
    deadline: datetime
    # Commit, then reveal: the seats commit until `commit_deadline`, then reveal until
    # `deadline` (None: a table whose seats send their bytes directly).
    commit_deadline: datetime | None = None


@dataclass(frozen=True, slots=True)
class EntropyCommitted(PublicEvent):
    """A seat committed to its contribution: the SHA-256 of the bytes it will reveal once
    every seat has committed or the commit window closed."""

    NAME: ClassVar[str] = "table.entropy_committed"
    seat: int
    commitment: str


@dataclass(frozen=True, slots=True)
class EntropyContributed(PublicEvent):
    """A seat contributed to the deal being drawn: the SHA-256 of its bytes (the bytes are
    revealed with the deal's inputs once the hand ends)."""

    NAME: ClassVar[str] = "table.entropy_contributed"
    seat: int
    entropy_sha256: str


def _opened(stored: Any, viewer: Viewer) -> TableOpened:
    del viewer  # a table has no secrets
    return TableOpened(game=str(getattr(stored, "game", "") or default_game()),
                       ruleset=dict(stored.ruleset), players=int(stored.players),
                       allow_preset_deck=bool(stored.allow_preset_deck),
                       table_name=str(stored.name),
                       spectators=SpectatorPolicy.from_json(getattr(stored, "spectators", None)))


def _seat_taken(stored: Any, viewer: Viewer) -> SeatTaken:
    del viewer
    key = getattr(stored, "public_key", None)  # none before seat keys
    return SeatTaken(seat=int(stored.seat), player_id=str(stored.player_id),
                     public_key=str(key) if key else None)


def _seat_left(stored: Any, viewer: Viewer) -> SeatLeft:
    del viewer
    return SeatLeft(seat=int(stored.seat))


def _hand_started(stored: Any, viewer: Viewer) -> HandStarted:
    del viewer
    contributions = getattr(stored, "contributions", None)  # None before seat entropy
    withheld = getattr(stored, "withheld", None) or ()  # none before commit, then reveal
    return HandStarted(hand_id=str(stored.hand_id), hand_number=int(stored.number),
                       dealer=int(stored.dealer),
                       contributions=tuple(contributions) if contributions is not None else None,
                       withheld=tuple(int(seat) for seat in withheld))


def _hand_recorded(stored: Any, viewer: Viewer) -> HandRecorded:
    del viewer
    # The stored `carry` (what the next deal needs) is the game's business, not published.
    totals = tuple((str(side), Decimal(str(value))) for side, value in stored.totals.items())
    head = getattr(stored, "hand_head", None)  # events stored before the chain have none
    return HandRecorded(hand_id=str(stored.hand_id), totals=totals,
                        hand_head=str(head) if head else None)


def _match_ended(stored: Any, viewer: Viewer) -> MatchEnded:
    del viewer
    return MatchEnded(reason=str(stored.reason))


def _seat_replaced(stored: Any, viewer: Viewer) -> SeatReplaced:
    del viewer
    return SeatReplaced(seat=int(stored.seat), previous_player_id=str(stored.previous_player_id),
                        player_id=str(stored.player_id))


def _token_reissued(stored: Any, viewer: Viewer) -> SeatTokenReissued:
    del viewer  # the token itself is never in an event, only that there is a new one
    return SeatTokenReissued(seat=int(stored.seat), player_id=str(stored.player_id))


def _closed(stored: Any, viewer: Viewer) -> TableClosed:
    del viewer
    return TableClosed(reason=str(stored.reason))


def _hand_voided(stored: Any, viewer: Viewer) -> HandVoided:
    del viewer
    return HandVoided(hand_id=str(stored.hand_id), reason=str(stored.reason))


def _draw_opened(stored: Any, viewer: Viewer) -> DrawOpened:
    del viewer  # the seed stays secret from everyone until the hand ends
    commit_deadline = getattr(stored, "commit_deadline", None)
    return DrawOpened(hand_number=int(stored.number), commitment=str(stored.commitment),
                      deadline=datetime.fromisoformat(str(stored.deadline)),
                      commit_deadline=(datetime.fromisoformat(str(commit_deadline))
                                       if commit_deadline else None))


def _entropy_committed(stored: Any, viewer: Viewer) -> EntropyCommitted:
    del viewer  # a commitment hides the bytes: public as it is
    return EntropyCommitted(seat=int(stored.seat), commitment=str(stored.commitment))


def _entropy_contributed(stored: Any, viewer: Viewer) -> EntropyContributed:
    del viewer
    digest = hashlib.sha256(bytes.fromhex(str(stored.entropy))).hexdigest()
    return EntropyContributed(seat=int(stored.seat), entropy_sha256=digest)


TABLE_EVENTS = EventCatalog("table", [
    EventKind(stored_event(Table, "Opened"), TableOpened, _opened),
    EventKind(stored_event(Table, "SeatTaken"), SeatTaken, _seat_taken),
    EventKind(stored_event(Table, "SeatLeft"), SeatLeft, _seat_left),
    EventKind(stored_event(Table, "HandStarted"), HandStarted, _hand_started),
    EventKind(Table.HandRecorded, HandRecorded, _hand_recorded),
    EventKind(stored_event(Table, "MatchEnded"), MatchEnded, _match_ended),
    EventKind(stored_event(Table, "SeatReplaced"), SeatReplaced, _seat_replaced),
    EventKind(stored_event(Table, "SeatTokenReissued"), SeatTokenReissued, _token_reissued),
    EventKind(stored_event(Table, "Closed"), TableClosed, _closed),
    EventKind(stored_event(Table, "HandVoided"), HandVoided, _hand_voided),
    EventKind(stored_event(Table, "DrawOpened"), DrawOpened, _draw_opened),
    EventKind(stored_event(Table, "EntropyContributed"), EntropyContributed,
              _entropy_contributed),
    EventKind(stored_event(Table, "EntropyCommitted"), EntropyCommitted, _entropy_committed),
])


__all__ = [
    "TABLE_EVENTS", "DrawOpened", "EntropyCommitted", "EntropyContributed", "HandRecorded",
    "HandStarted", "HandVoided", "MatchEnded", "SeatLeft", "SeatReplaced", "SeatTaken",
    "SeatTokenReissued", "TableClosed", "TableOpened",
]
