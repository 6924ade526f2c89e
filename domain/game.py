"""The game boundary: what the referee's core needs of a game, and nothing more.

The core (use cases, the store, the feed, the turn clock, the gRPC edge) knows games only
through these protocols; each game is a package of its own (`domain/fiftyk/`, ...) whose
`GAME` object satisfies `Game`, hosted through the game's bundle (`service/core/bundles.py`,
found through Python entry points). Adding a game is new packages and one entry-point line:
nothing in the core changes.

The API is small and fixed, in the spirit of OpenSpiel's: who acts, which actions are legal,
apply one, is it over, the result; plus a view for one viewer (`domain/observer.py`) that
holds nothing that viewer may not see, the hand's transcript, and its public events
(`domain/events.py`: stable names and per-viewer payloads of what its hands record). A hand is an
event-sourced aggregate: commands validate and decide, then record events that only mutate,
so replaying the events rebuilds the hand exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any, Protocol
from uuid import UUID

from fiftyk_referee.domain.events import EventCatalog, PublicEvent
from fiftyk_referee.domain.observer import Viewer

# The kinds of action most trick games share; a game declares which it accepts
# (`Game.action_kinds`), and may add its own (e.g. a bid, or a card to call).
PLAY = "play"
PASS = "pass"
RESIGN = "resign"
# What a kind may look like on the wire: short lower-case words (they label metrics).
MAX_KIND_LENGTH = 32


@dataclass(frozen=True, slots=True)
class Action:
    """One seat's action: a kind its game declares, the cards it names (card notation, any
    order) and an optional value (a bid, a called card, a window number: the game says)."""

    kind: str
    cards: tuple[str, ...] = ()
    value: str | None = None

    @classmethod
    def play(cls, cards: Sequence[str]) -> Action:
        """Play these cards."""
        return cls(PLAY, tuple(cards))


@dataclass(frozen=True, slots=True)
class ActionSpec:
    """One kind of action a game accepts, as its game describes it to clients and the core."""

    kind: str
    summary: str  # what the action does, in a few words (docs, `ListLegalPlays`)
    takes_cards: bool = True  # whether the action names cards (play, ...)
    takes_value: bool = False  # whether `Action.value` means something for it


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

    `kinds` names every kind of action open to the seat now (resigning, open to any seat of
    a hand in progress, is not listed); `plays` lists legal card choices of those kinds, at
    most `limit` of them (`truncated` says when more exist); a game whose legal plays can be
    combinatorial states its `constraints` instead, in words a client can apply (e.g. "play
    2 cards of hearts, a pair if you hold one"), and the same as `requirements` records a
    client can check a selection against.
    """

    seat: int
    plays: tuple[LegalPlay, ...] = ()
    may_pass: bool = False
    kinds: frozenset[str] = frozenset()  # every kind open to the seat now, but resign
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


class GameResult(Protocol):
    """A finished hand's result: each game's own frozen dataclass behind this base."""

    @property
    def side_totals(self) -> Mapping[str, Decimal]:
        """The hand's score per side (keyed as `Game.side_seats`): what the match adds up."""


class GameView(Protocol):
    """A hand as one viewer may see it: each game's own frozen dataclass behind this base.

    The core and the edge rely on these fields; everything else is the game's own, and its
    converter at the edge (found by `game`) turns the whole view into the wire message."""

    @property
    def game(self) -> str:
        """The name of the game the hand is a hand of (the registry's key)."""

    @property
    def hand_id(self) -> str:
        """The hand's id."""

    @property
    def table_id(self) -> str:
        """The table's id."""

    @property
    def number(self) -> int:
        """The hand's number at its table, from 1."""

    @property
    def version(self) -> int:
        """The hand's event version the view reflects."""

    @property
    def is_over(self) -> bool:
        """Whether the hand has ended."""

    @property
    def to_act(self) -> int | None:
        """The seat whose action the hand waits for (None when nobody's)."""

    @property
    def result(self) -> GameResult | None:
        """The hand's result, once it is over."""


@dataclass(frozen=True, slots=True)
class Observation:
    """Something a game counts when its events are recorded: a counter `name` the game
    declares (`Game.observations`) and its label value (`""` when it has none)."""

    name: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class ObservationSpec:
    """A counter a game's events feed: its name, help text, its label (if any) and the
    values that label may take (anything else is counted as `other`)."""

    name: str
    help: str
    label: str = ""
    values: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ValueCodec:
    """A value a game keeps in its aggregates' state that plain JSON would change (a
    NamedTuple, a ruleset object): how a snapshot stores it under `name` and reads it back.
    The store registers every game's codecs; names are unique across games."""

    name: str
    type: type
    encode: Callable[[Any], Any]  # to plain values (the store tags what is inside)
    decode: Callable[[Any], Any]


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
    # deal and the hex seed it opens (None for a preset deck); for a seat-entropy deal, every
    # seat's contribution (hex, empty for none; None for other deals).
    deck: tuple[str, ...]
    commitment: str
    seed: str | None
    contributions: tuple[str, ...] | None
    # The record of the draw a seat-entropy deal came from (`domain.table.draw_record`:
    # commitments, withheld seats, draws abandoned before it); None for other deals and for
    # hands dealt before it was kept.
    draw_record: Mapping[str, Any] | None

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

    def check(self, seat: int, action: Action) -> None:
        """Refuse `action` as `act` would (the same `RuleError`), changing nothing: a dry
        run. It judges only on what `seat` may see (its own cards, the public state), never
        on another seat's cards, the stock or a hidden kitty; a rule that depends on them
        (e.g. whether a throw stands against the others' cards) is left to `act`."""

    def time_out(self, seat: int, now: datetime) -> Action:
        """Act for a seat whose turn clock ran out; returns what the referee did."""

    def turn_deadline(self) -> datetime | None:
        """When the seat to act runs out of time, if this table has a turn clock."""

    def legal_actions(self, seat: int, limit: int | None = None) -> LegalActions:
        """What `seat` may do now, at most `limit` plays (nothing when it is not its turn)."""

    def view(self, viewer: Viewer) -> GameView:
        """The hand as `viewer` may see it: a game's own frozen view dataclass."""

    def record(self) -> HandRecord:
        """What the finished hand leaves on the match (a `RuleError` while it is not over)."""


class Game(Protocol):
    """A game the referee hosts: its rules, its hands, its match and its transcripts."""

    @property
    def name(self) -> str:
        """The game's name: the `game` of tables, transcripts and events."""

    @property
    def presets(self) -> tuple[str, ...]:
        """The names of the game's presets (the `preset` label of its metrics)."""

    @property
    def action_kinds(self) -> tuple[ActionSpec, ...]:
        """The kinds of action its hands accept (an unknown kind is `INVALID_ACTION`)."""

    @property
    def observations(self) -> tuple[ObservationSpec, ...]:
        """The counters its events feed (besides the hands dealt and completed)."""

    @property
    def value_codecs(self) -> tuple[ValueCodec, ...]:
        """How the store keeps the values of its own types found in aggregates' state."""

    def observe(self, hand: Any, events: Sequence[object]) -> list[Observation]:
        """What to count for these events, just recorded by `hand`."""

    def answer(self, question: Mapping[str, Any]) -> Any:
        """The rules oracle's answer to one of its questions (`fiftyk rules ask`; a
        `domain.oracle.BadQuestion` or `RuleError` when the question has none)."""

    def rules(self, preset: str, options: Mapping[str, Any] | None = None) -> Rules:
        """Resolve a preset plus options (`INVALID_RULESET` when they are not valid)."""

    def rules_from_json(self, spec: Mapping[str, Any]) -> Rules:
        """The rules a stored `to_json()` spec describes."""

    def side_seats(self, rules: Rules, players: int) -> dict[str, tuple[int, ...]]:
        """The match's score sides (`team:0`, `seat:3`, ...) and the seats of each."""

    def deal(self, *, table_id: str, number: int, rules: Rules, players: int, dealer: int,
             seat_players: Sequence[str | None], carry: Mapping[str, Any],
             deck: Sequence[str] | None, seed: bytes | None,
             contributions: Sequence[str] | None = None,
             draw: Mapping[str, Any] | None = None) -> GameHand:
        """Deal a table's next hand (from a secret seed, or a permitted preset deck); with
        `contributions` (every seat's, hex, empty for none) a seat-entropy deal of the seed
        (`domain/deal.py`, `fiftyk-shuffle/2`), `draw` the record of its draw, kept by the
        hand's deal and shown in its transcript's deal inputs."""

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
    "MAX_KIND_LENGTH", "PASS", "PLAY", "RESIGN", "Action", "ActionSpec", "Constraint", "Game",
    "GameHand", "GameResult", "GameView", "HandRecord", "LegalActions", "LegalPlay",
    "Observation", "ObservationSpec", "Rules", "ValueCodec",
]
