"""The game boundary: what the referee's core needs of a game, and nothing more.

The core (use cases, the store, the feed, the turn clock, the gRPC edge) knows games only
through these protocols; each game is a package of its own (`domain/fiftyk/`, ...) whose
`GAME` object satisfies `Game`, registered by name in `domain/games.py`. Adding a game is a
new package, its proto messages and one line in that registry: nothing in the core changes.

The API is small and fixed, in the spirit of OpenSpiel's: who acts, which actions are legal,
apply one, is it over, the result; plus a view for one viewer (`domain/observer.py`) that
holds nothing that viewer may not see, the hand's transcript, and its public events
(`domain/events.py`: stable names and per-viewer payloads of what its hands record). A hand is an
event-sourced aggregate: commands validate and decide, then record events that only mutate,
so replaying the events rebuilds the hand exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Any, Protocol
from uuid import UUID

from fiftyk_referee.domain.events import EventCatalog, PublicEvent
from fiftyk_referee.domain.observer import Viewer


class ActionKind(StrEnum):
    """What a seat can do in a hand (each game accepts a subset)."""

    PLAY = "play"
    PASS = "pass"
    RESIGN = "resign"
    DECLARE = "declare"  # Shengji: show trump cards while the deal is paced out
    BURY = "bury"  # Shengji: the dealer's cards returned to the kitty


@dataclass(frozen=True, slots=True)
class Action:
    """One seat's action: a kind, and the cards it names (card notation, any order)."""

    kind: ActionKind
    cards: tuple[str, ...] = ()

    @classmethod
    def play(cls, cards: Sequence[str]) -> Action:
        """Play these cards."""
        return cls(ActionKind.PLAY, tuple(cards))


PASS = Action(ActionKind.PASS)
RESIGN = Action(ActionKind.RESIGN)


@dataclass(frozen=True, slots=True)
class LegalPlay:
    """One legal play: its cards and what they form (a game's combination name)."""

    cards: tuple[str, ...]
    kind: str


@dataclass(frozen=True, slots=True)
class Constraint:
    """One condition a seat's action must meet, as data a client can check.

    `kind` names the condition (each game documents its kinds); the other fields are its
    arguments, those a kind does not use left empty: how many (`count`), of which suit group
    or card set (`group`), of which shape (`width` identical cards on each of `length`
    consecutive steps) and which cards it concerns (`cards`).
    """

    kind: str
    count: int = 0
    group: str = ""
    width: int = 0
    length: int = 0
    cards: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LegalActions:
    """What a seat may do now.

    `plays` lists legal plays, at most `limit` of them (`truncated` says when more exist);
    a game whose legal plays can be combinatorial states its `constraints` instead, in
    words a client can apply (e.g. "play 2 cards of hearts, a pair if you hold one"), and
    the same as `requirements` records a client can check a selection against.
    """

    seat: int
    plays: tuple[LegalPlay, ...] = ()
    may_pass: bool = False
    other_kinds: frozenset[ActionKind] = frozenset()
    truncated: bool = False
    constraints: tuple[str, ...] = ()
    requirements: tuple[Constraint, ...] = ()


@dataclass(frozen=True, slots=True)
class HandRecord:
    """What a finished hand leaves on its table's match.

    `totals` are the hand's score per side (decimals, keyed as `Game.side_seats`); `carry`
    holds what the next deal needs of this hand (plain JSON: e.g. who went out first). The
    table reads one carry key itself: `next_dealer`, when a game's result decides who deals
    next (otherwise the deal passes to the next seat).
    """

    hand_id: str
    totals: Mapping[str, Decimal]
    carry: Mapping[str, Any] = field(default_factory=dict)


class Rules(Protocol):
    """A game's resolved ruleset: a preset plus options, frozen and validated."""

    @property
    def preset(self) -> str:
        """The preset the options were resolved from."""

    @property
    def fingerprint(self) -> str:
        """A stable hash of the resolved options: equal rules, equal fingerprint."""

    def to_json(self) -> dict[str, Any]:
        """`{"preset": P, "options": {...}}`: the preset and the options that differ from it."""

    def options(self) -> dict[str, Any]:
        """Every option's resolved value."""

    def check_players(self, players: Any) -> int:
        """The seat count, if this ruleset allows it (else a `RuleError`)."""

    @property
    def turn_timeout(self) -> int | None:
        """Seconds a seat has for each turn before the referee acts for it (None or 0: no
        clock)."""


class GameHand(Protocol):
    """One deal of a game: an event-sourced aggregate, from the deal to the result."""

    @property
    def id(self) -> UUID:
        """The hand's id (derived from its table and number)."""

    @property
    def version(self) -> int:
        """The number of events recorded so far."""

    table_id: str
    number: int
    players: int
    dealer: int
    seat_players: list[str | None] | None
    # The deal's inputs, as the hand's first event recorded them (docs/fairness.md): the
    # whole deck in dealing order (the kitty included), the commitment published with the
    # deal and the hex seed it opens (None for a preset deck).
    deck: tuple[str, ...]
    commitment: str
    seed: str | None

    @property
    def rules(self) -> Rules:
        """The hand's resolved rules."""

    @property
    def is_over(self) -> bool:
        """The hand has ended and has its result."""

    @property
    def to_act(self) -> int | None:
        """The seat whose action the hand waits for (None when nobody's, or over)."""

    def act(self, seat: int, action: Action) -> None:
        """Validate and apply one seat's action (a `RuleError` with a reason if refused)."""

    def time_out(self, seat: int, now: datetime) -> Action:
        """Act for a seat whose turn clock ran out; returns what the referee did."""

    def turn_deadline(self) -> datetime | None:
        """When the seat to act runs out of time, if this table has a turn clock."""

    def legal_actions(self, seat: int, limit: int | None = None) -> LegalActions:
        """What `seat` may do now, at most `limit` plays (nothing when it is not its turn)."""

    def view(self, viewer: Viewer) -> Any:
        """The hand as `viewer` may see it: a game's own frozen view dataclass."""

    def record(self) -> HandRecord:
        """What the finished hand leaves on the match (a `RuleError` while it is not over)."""


class Game(Protocol):
    """A game the referee hosts: its rules, its hands, its match and its transcripts."""

    name: str

    def rules(self, preset: str, options: Mapping[str, Any] | None = None) -> Rules:
        """Resolve a preset plus options (`INVALID_RULESET` when they are not valid)."""

    def rules_from_json(self, spec: Mapping[str, Any]) -> Rules:
        """The rules a stored `to_json()` spec describes."""

    def side_seats(self, rules: Rules, players: int) -> dict[str, tuple[int, ...]]:
        """The match's score sides (`team:0`, `seat:3`, ...) and the seats of each."""

    def deal(self, *, table_id: str, number: int, rules: Rules, players: int, dealer: int,
             seat_players: Sequence[str | None], carry: Mapping[str, Any],
             deck: Sequence[str] | None, seed: bytes | None) -> GameHand:
        """Deal a table's next hand (from a secret seed, or a permitted preset deck)."""

    def match_end(self, rules: Rules, hands_played: int,
                  scores: Mapping[str, Decimal]) -> str | None:
        """Why the match is over after this many hands and these scores (None: it goes on)."""

    def adjudicate(self, transcript: Any) -> dict[str, Any]:
        """Rule on a transcript: the result JSON (nothing is stored)."""

    def replay(self, transcript: Any) -> tuple[GameHand, dict[str, Any]]:
        """Replay a transcript: the hand as far as it went (its events still pending, so a
        caller can publish them) and the result JSON, as `adjudicate` gives it."""

    def export_transcript(self, hand: Any) -> dict[str, Any]:
        """A hand of this game as a transcript (the game's transcript format)."""

    def ruling(self, hand: Any) -> dict[str, Any]:
        """The result JSON of a stored hand as it stands: what adjudicating its exported
        transcript must reproduce (the fairness verifier compares the two)."""

    def base_deck(self, rules: Rules) -> list[str]:
        """The ruleset's deck in its canonical order: what the shuffle permutes."""

    def owns(self, hand: object) -> bool:
        """Whether `hand` is a hand of this game."""

    @property
    def events(self) -> EventCatalog:
        """The game's public hand events (`<game>.*`): names, stored classes, payloads."""

    def public_event(self, stored: object, viewer: Viewer) -> PublicEvent | None:
        """A stored hand event as `viewer` may see it (None: not one of this game's)."""


__all__ = [
    "PASS", "RESIGN", "Action", "ActionKind", "Constraint", "Game", "GameHand", "HandRecord",
    "LegalActions", "LegalPlay", "Rules",
]
