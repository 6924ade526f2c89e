"""The referee's commands as data: frozen dataclasses the application runs.

One object is both what is fingerprinted for idempotency (`arguments()`: the plain values a
receipt's fingerprint is made of) and what is executed (`Referee.execute` dispatches on its
type), so a retried command and the command that ran cannot disagree. The fingerprints are
the ones receipts have always recorded: a 0.1 or 0.2 client's retry after an upgrade still
finds its receipt.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.games import default_game
from fiftyk_referee.domain.spectators import SpectatorPolicy

CREATE_SCOPE = "tables"  # table creation has no table yet: its receipts share one scope


@dataclass(frozen=True, kw_only=True)
class Command:
    """A command: its kind (receipts and metrics), the scope of its request ids, and the
    plain arguments its receipt's fingerprint covers."""

    request_id: str | None = None

    KIND: ClassVar[str] = ""

    @property
    def kind(self) -> str:
        """The command's kind: `create_table`, ..., or a hand action's kind."""
        return self.KIND

    @property
    def scope(self) -> str:
        """Where its request id must be unique: the table's id (else `tables`)."""
        raise NotImplementedError

    def arguments(self) -> dict[str, Any]:
        """The plain values the idempotency fingerprint covers."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class CreateTable(Command):
    """Open a table of a game with a ruleset (preset plus overrides) and a seat count."""

    KIND: ClassVar[str] = "create_table"
    preset: str
    options: Mapping[str, Any] = field(default_factory=dict)
    players: int
    allow_preset_deck: bool = False
    name: str = ""
    game: str = ""  # "": the default game
    spectators: SpectatorPolicy | None = None
    entropy_window: int | None = None  # seat entropy's window in seconds (None: off)
    entropy_direct: bool = False  # seats send their bytes without committing first (0.2)

    @property
    def scope(self) -> str:
        """Table creation's one scope."""
        return CREATE_SCOPE

    def arguments(self) -> dict[str, Any]:
        """The ruleset, seats and name (and the game, for any other than the default)."""
        arguments = {"preset": self.preset, "options": dict(self.options),
                     "players": self.players, "allow_preset_deck": self.allow_preset_deck,
                     "name": self.name}
        if self.game and self.game != default_game():  # 0.1's receipts keep their fingerprints
            arguments["game"] = self.game
        if self.spectators is not None and self.spectators != SpectatorPolicy():
            arguments["spectators"] = self.spectators.to_json()  # earlier receipts stay the same
        if self.entropy_window is not None:
            arguments["entropy_window"] = self.entropy_window
        if self.entropy_direct:  # receipts of commit-then-reveal tables keep their fingerprints
            arguments["entropy_direct"] = True
        return arguments


@dataclass(frozen=True, kw_only=True)
class TableCommand(Command):
    """A command on one table."""

    table_id: str

    @property
    def scope(self) -> str:
        """The table's id."""
        return self.table_id


@dataclass(frozen=True, kw_only=True)
class JoinTable(TableCommand):
    """Seat a player: at the given seat, or the lowest free one."""

    KIND: ClassVar[str] = "join_table"
    player_id: str
    seat: int | None = None
    public_key: bytes | None = None  # the player's own Ed25519 key (docs/fairness.md)

    def arguments(self) -> dict[str, Any]:
        """Table, player and seat (and the seat key, when one is bound)."""
        arguments = {"table_id": self.table_id, "player_id": self.player_id, "seat": self.seat}
        if self.public_key is not None:  # receipts of joins without a key keep their prints
            arguments["public_key"] = self.public_key.hex()
        return arguments


@dataclass(frozen=True, kw_only=True)
class LeaveTable(TableCommand):
    """Free a seat between hands."""

    KIND: ClassVar[str] = "leave_table"
    seat: int

    def arguments(self) -> dict[str, Any]:
        """Table and seat."""
        return {"table_id": self.table_id, "seat": self.seat}


@dataclass(frozen=True, kw_only=True)
class StartHand(TableCommand):
    """Deal the table's next hand (shuffled, or a preset deck if the table allows it); at a
    seat-entropy table, open the draw of the next deal. `now` (not fingerprinted): when."""

    KIND: ClassVar[str] = "start_hand"
    deck: tuple[str, ...] | None = None
    now: datetime | None = None

    def arguments(self) -> dict[str, Any]:
        """Table and deck."""
        return {"table_id": self.table_id, "deck": list(self.deck) if self.deck else None}


@dataclass(frozen=True, kw_only=True)
class ContributeEntropy(TableCommand):
    """A seat's random bytes for the deal being drawn (docs/fairness.md#seat-entropy), or,
    with `commitment`, its commitment to them (the SHA-256 of the bytes it will reveal).

    `player_id` and `token_generation`: who must hold the seat and with which seat token
    (not fingerprinted, as for `Act`). `now` (not fingerprinted): when it arrived.
    """

    KIND: ClassVar[str] = "contribute_entropy"
    seat: int
    entropy: bytes = b""
    commitment: bytes | None = None
    signature: bytes | None = None  # the seat key's, when the seat bound one
    player_id: str | None = None
    token_generation: int | None = None
    now: datetime | None = None

    def arguments(self) -> dict[str, Any]:
        """Table, seat and the bytes (hex), or the commitment (hex)."""
        arguments: dict[str, Any] = {"table_id": self.table_id, "seat": self.seat}
        if self.commitment is not None:
            arguments["commitment"] = self.commitment.hex()
        else:
            arguments["entropy"] = self.entropy.hex()
        if self.signature:
            arguments["signature"] = self.signature.hex()
        return arguments


@dataclass(frozen=True, kw_only=True)
class CloseDraw(TableCommand):
    """The referee's clock dealing a seat-entropy draw whose window closed at `now`."""

    KIND: ClassVar[str] = "close_draw"
    number: int
    now: datetime

    def arguments(self) -> dict[str, Any]:
        """Table and hand number (`now` is not fingerprinted: a retry is the same deal)."""
        return {"table_id": self.table_id, "number": self.number}


@dataclass(frozen=True, kw_only=True)
class CloseTable(TableCommand):
    """Deal no more hands at a table; a hand in progress finishes and counts."""

    KIND: ClassVar[str] = "close_table"
    reason: str = ""

    def arguments(self) -> dict[str, Any]:
        """Table and reason."""
        return {"table_id": self.table_id, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class AbortTable(TableCommand):
    """Close a table at once, voiding the hand in progress."""

    KIND: ClassVar[str] = "abort_table"
    reason: str = ""

    def arguments(self) -> dict[str, Any]:
        """Table and reason."""
        return {"table_id": self.table_id, "reason": self.reason}


@dataclass(frozen=True, kw_only=True)
class ReplaceSeat(TableCommand):
    """Give a taken seat to another player between hands (the old seat token stops working)."""

    KIND: ClassVar[str] = "replace_seat"
    seat: int
    player_id: str

    def arguments(self) -> dict[str, Any]:
        """Table, seat and the new player."""
        return {"table_id": self.table_id, "seat": self.seat, "player_id": self.player_id}


@dataclass(frozen=True, kw_only=True)
class ReissueSeatToken(TableCommand):
    """Make a new seat token current for a taken seat; older ones stop working."""

    KIND: ClassVar[str] = "reissue_seat_token"
    seat: int

    def arguments(self) -> dict[str, Any]:
        """Table and seat."""
        return {"table_id": self.table_id, "seat": self.seat}


@dataclass(frozen=True, kw_only=True)
class HandCommand(TableCommand):
    """A command on a table's hand (the named one, else its current hand) for one seat."""

    hand_id: str | None = None
    seat: int

    def _hand_arguments(self) -> dict[str, Any]:
        return {"table_id": self.table_id, "hand_id": self.hand_id, "seat": self.seat}


@dataclass(frozen=True, kw_only=True)
class Act(HandCommand):
    """One seat's action in a hand.

    `player_id`: who must hold the seat in this hand (seat tokens; not fingerprinted, the
    token's table and seat are). `token_generation`: the generation of the seat token it acts
    with (not fingerprinted either: a retry with a reissued token is the same command).
    `expected_version`: the hand version the seat decided on.
    `names_cards`: the request carried a card list, even an empty one (Play, Act and the
    games' legacy RPCs name cards; Pass and Resign do not), as receipts have always
    fingerprinted it.
    """

    action: Action
    player_id: str | None = None
    expected_version: int | None = None
    names_cards: bool = True
    token_generation: int | None = None

    @property
    def kind(self) -> str:
        """The action's kind."""
        return self.action.kind

    def arguments(self) -> dict[str, Any]:
        """The hand and seat, the cards and value, and the version named."""
        arguments = self._hand_arguments()
        if self.action.cards or self.names_cards:
            arguments["cards"] = list(self.action.cards)
        if self.action.value is not None:
            arguments["value"] = self.action.value
        if self.expected_version is not None:
            arguments["expected_version"] = self.expected_version
        return arguments


@dataclass(frozen=True, kw_only=True)
class TimeOut(HandCommand):
    """The referee's decision for a seat whose turn has expired at `now`."""

    KIND: ClassVar[str] = "timeout"
    now: datetime

    def arguments(self) -> dict[str, Any]:
        """The hand and seat: `now` is not fingerprinted (a retry is the same ruling,
        asked later)."""
        return self._hand_arguments()


__all__ = ["CREATE_SCOPE", "AbortTable", "Act", "CloseDraw", "CloseTable", "Command",
           "ContributeEntropy", "CreateTable",
           "HandCommand", "JoinTable", "LeaveTable", "ReissueSeatToken", "ReplaceSeat",
           "StartHand", "TableCommand", "TimeOut"]
