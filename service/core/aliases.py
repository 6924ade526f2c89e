"""The referee's commands by name, for callers in Python (tests, bots, the turn clock).

Each method builds its command (`commands.py`) and runs it through `execute`: the referee's
own (`use_cases.py`), or a router's that hands it to the table's shard (`shards.py`).
`play`, `pass_turn` and `resign` are `act` with one kind each (the kinds most trick games
share; a game's own kinds go through `act`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from fiftyk_referee.domain.game import PASS, RESIGN, Action
from fiftyk_referee.domain.spectators import SpectatorPolicy
from fiftyk_referee.service.core.commands import (
    AbortTable,
    Act,
    CloseDraw,
    CloseTable,
    Command,
    ContributeEntropy,
    CreateTable,
    JoinTable,
    LeaveTable,
    ReissueSeatToken,
    ReplaceSeat,
    StartHand,
    TimeOut,
)
from fiftyk_referee.service.core.runner import Outcome


class NamedCommands:
    """The commands by name, for callers in Python (tests, bots, the turn clock): each
    builds its command and runs it through `execute` (the referee's own, or a router's
    that hands it to the table's shard: `service/core/shards.py`)."""

    def execute(self, command: Command) -> Outcome:
        """Run one command to its outcome."""
        raise NotImplementedError


    def create_table(self, preset: str, options: Mapping[str, Any] | None, players: int, *,
                     allow_preset_deck: bool = False, name: str = "",
                     request_id: str | None = None, game: str = "",
                     spectators: SpectatorPolicy | None = None,
                     entropy_window: int | None = None,
                     entropy_direct: bool = False) -> Outcome:
        """Open a table of a game with a ruleset (preset plus overrides) and a seat count;
        `entropy_window` (seconds) makes its deals seat-entropy deals (commit, then reveal,
        unless `entropy_direct`)."""
        return self.execute(CreateTable(
            preset=preset, options=dict(options or {}), players=players,
            allow_preset_deck=allow_preset_deck, name=name, game=game, spectators=spectators,
            entropy_window=entropy_window, entropy_direct=entropy_direct,
            request_id=request_id))

    def join_table(self, table_id: str | UUID, player_id: str, seat: int | None = None, *,
                   request_id: str | None = None, public_key: bytes | None = None) -> Outcome:
        """Seat a player: at the given seat, or the lowest free one (`public_key`: the
        player's own Ed25519 key, bound to the seat)."""
        return self.execute(JoinTable(table_id=str(table_id), player_id=player_id, seat=seat,
                                      public_key=public_key, request_id=request_id))

    def leave_table(self, table_id: str | UUID, seat: int, *,
                    request_id: str | None = None) -> Outcome:
        """Free a seat between hands."""
        return self.execute(LeaveTable(table_id=str(table_id), seat=seat,
                                       request_id=request_id))

    def start_hand(self, table_id: str | UUID, *, deck: Sequence[str] | None = None,
                   request_id: str | None = None, now: datetime | None = None) -> Outcome:
        """Deal the table's next hand (shuffled, or a preset deck if the table allows it);
        at a seat-entropy table, open its draw (the outcome has no hand then)."""
        return self.execute(StartHand(table_id=str(table_id),
                                      deck=tuple(deck) if deck else None,
                                      request_id=request_id, now=now))

    def contribute_entropy(self, table_id: str | UUID, seat: int, entropy: bytes = b"", *,
                           commitment: bytes | None = None, signature: bytes | None = None,
                           request_id: str | None = None, player_id: str | None = None,
                           token_generation: int | None = None,
                           now: datetime | None = None) -> Outcome:
        """A seat's contribution to the deal being drawn, or with `commitment` its
        commitment to it (the outcome's hand: the hand it dealt, when it was the last one;
        its `detail`: the unsigned receipt, `entropy_receipt`)."""
        return self.execute(ContributeEntropy(
            table_id=str(table_id), seat=seat, entropy=bytes(entropy),
            commitment=bytes(commitment) if commitment is not None else None,
            signature=bytes(signature) if signature else None, player_id=player_id,
            token_generation=token_generation, now=now, request_id=request_id))

    def close_draw(self, table_id: str | UUID, number: int, now: datetime, *,
                   request_id: str | None = None) -> Outcome:
        """Deal a seat-entropy draw whose window closed (the referee's clock)."""
        return self.execute(CloseDraw(table_id=str(table_id), number=number, now=now,
                                      request_id=request_id))

    def act(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
            action: Action, *, request_id: str | None = None, player_id: str | None = None,
            expected_version: int | None = None, names_cards: bool = True,
            token_generation: int | None = None) -> Outcome:
        """One seat's action in a hand (`player_id`: who must hold the seat in this hand;
        `token_generation`: the generation of the seat token it acts with)."""
        return self.execute(Act(
            table_id=str(table_id), hand_id=str(hand_id) if hand_id else None, seat=seat,
            action=action, player_id=player_id, expected_version=expected_version,
            names_cards=names_cards, token_generation=token_generation,
            request_id=request_id))

    # -- the table's lifecycle (docs/integrating.md, "Running a lobby") ----------------------

    def close_table(self, table_id: str | UUID, reason: str = "", *,
                    request_id: str | None = None) -> Outcome:
        """Deal no more hands at a table; a hand in progress finishes and counts."""
        return self.execute(CloseTable(table_id=str(table_id), reason=reason,
                                       request_id=request_id))

    def abort_table(self, table_id: str | UUID, reason: str = "", *,
                    request_id: str | None = None) -> Outcome:
        """Close a table at once, voiding the hand in progress (`detail`: its id, if any)."""
        return self.execute(AbortTable(table_id=str(table_id), reason=reason,
                                       request_id=request_id))

    def replace_seat(self, table_id: str | UUID, seat: int, player_id: str, *,
                     request_id: str | None = None) -> Outcome:
        """Give a taken seat to another player between hands (the old token stops working)."""
        return self.execute(ReplaceSeat(table_id=str(table_id), seat=seat,
                                        player_id=player_id, request_id=request_id))

    def reissue_seat_token(self, table_id: str | UUID, seat: int, *,
                           request_id: str | None = None) -> Outcome:
        """Make a new seat token current for a taken seat; older ones stop working."""
        return self.execute(ReissueSeatToken(table_id=str(table_id), seat=seat,
                                             request_id=request_id))

    def play(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
             cards: Iterable[str], *, request_id: str | None = None,
             player_id: str | None = None, token_generation: int | None = None) -> Outcome:
        """Play cards for a seat."""
        return self.act(table_id, hand_id, seat, Action.play([str(c) for c in cards]),
                        request_id=request_id, player_id=player_id,
                        token_generation=token_generation)

    def pass_turn(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int, *,
                  request_id: str | None = None, player_id: str | None = None,
                  token_generation: int | None = None) -> Outcome:
        """Pass for a seat."""
        return self.act(table_id, hand_id, seat, Action(PASS), request_id=request_id,
                        player_id=player_id, names_cards=False,
                        token_generation=token_generation)

    def resign(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int, *,
               request_id: str | None = None, player_id: str | None = None,
               token_generation: int | None = None) -> Outcome:
        """Resign the current hand for a seat."""
        return self.act(table_id, hand_id, seat, Action(RESIGN), request_id=request_id,
                        player_id=player_id, names_cards=False,
                        token_generation=token_generation)

    def time_out(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
                 now: datetime, *, request_id: str | None = None) -> Outcome:
        """Apply the referee's decision for a seat whose turn has expired at `now`."""
        return self.execute(TimeOut(table_id=str(table_id),
                                    hand_id=str(hand_id) if hand_id else None, seat=seat,
                                    now=now, request_id=request_id))


__all__ = ["NamedCommands"]
