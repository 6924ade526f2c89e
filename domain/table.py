"""The table aggregate: seats, a ruleset, a series of hands and the cumulative score.

Its length (about 580 lines) is one aggregate whose event methods must stay on its class
(a stored event's topic names it).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any, ClassVar

from fiftyk_referee.domain.aggregate import Aggregate, AggregateEvent, event
from fiftyk_referee.domain.deal import (
    ENTROPY_COMMITMENT_BYTES,
    MAX_CONTRIBUTION_BYTES,
    MAX_ENTROPY_WINDOW,
    MIN_CONTRIBUTION_BYTES,
    SEED_BYTES,
    entropy_commitment,
    seed_commitment,
    withheld_seats,
)
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import Game, GameHand, Rules
from fiftyk_referee.domain.games import default_game, game_named
from fiftyk_referee.domain.spectators import SpectatorPolicy

MAX_PLAYER_ID_LENGTH = 128
MAX_REASON_LENGTH = 512  # a close or abort reason is a line of text for people
SEAT_KEY_HEX = 64  # a seat's Ed25519 public key: 32 bytes, as hex
FIRST_OUT = "first_out"  # 0.1.0's HandRecorded field, now a key of the carry
NEXT_DEALER = "next_dealer"  # a carry key the table honours: who deals the next hand


def check_entropy_window(seconds: int | None) -> None:
    """Refuse a seat-entropy window outside 1..MAX_ENTROPY_WINDOW seconds (`INVALID_ENTROPY`)."""
    if seconds is None:
        return
    if isinstance(seconds, bool) or not isinstance(seconds, int) \
            or not 0 < seconds <= MAX_ENTROPY_WINDOW:
        raise RuleError(Reason.INVALID_ENTROPY,
                        f"a seat-entropy window is 1..{MAX_ENTROPY_WINDOW} seconds")


@dataclass(frozen=True, slots=True)
class DrawView:
    """A seat-entropy deal being drawn (docs/fairness.md): what anyone at the table sees."""

    hand_number: int
    commitment: str  # SHA-256 of the referee's secret seed, published before contributions
    deadline: datetime  # after it, a seat that sent nothing counts as the empty contribution
    contributed: tuple[int, ...]  # the seats whose bytes are in so far (revealed, or sent)
    # Commit, then reveal: the seats commit until `commit_deadline` (None: a table whose
    # seats send their bytes directly), then reveal until `deadline`.
    commit_deadline: datetime | None = None
    committed: tuple[int, ...] = ()  # the seats that committed so far
    abandoned: int = 0  # draws opened for this hand before this one and never dealt


@dataclass(frozen=True, slots=True)
class SideScore:
    """One side's cumulative score in the match."""

    side: str  # `team:0`, `seat:3`, ...
    seats: tuple[int, ...]
    score: Decimal


@dataclass(frozen=True, slots=True)
class TableView:
    """What anyone at the table may see of it (no cards)."""

    table_id: str
    version: int
    game: str
    name: str
    ruleset: Mapping[str, Any]
    fingerprint: str
    players: int
    seats: tuple[str | None, ...]  # the player id per seat
    scores: tuple[SideScore, ...]
    hands_played: int
    current_hand: str | None
    hand_ids: tuple[str, ...]
    next_dealer: int
    match_over: bool
    match_end_reason: str | None
    allow_preset_deck: bool
    spectators: SpectatorPolicy = field(default_factory=SpectatorPolicy)
    closed: bool = False
    close_reason: str | None = None
    voided_hands: tuple[str, ...] = ()
    entropy_window: int | None = None  # seat entropy's window in seconds (None: off)
    entropy_commit_reveal: bool = False  # seats commit first, then reveal (else: direct)
    draw: DrawView | None = None  # the next deal, while the seats contribute to it
    seat_keys: tuple[str | None, ...] = ()  # each seat's own public key (hex), if bound

    @property
    def state(self) -> str:
        """The lobby state: `closed`, `finished`, `playing` or `waiting` (TABLE_STATES)."""
        return table_state(closed=self.closed, match_over=self.match_over,
                           playing=self.current_hand is not None)


WAITING, PLAYING, FINISHED, CLOSED = "waiting", "playing", "finished", "closed"
TABLE_STATES = (WAITING, PLAYING, FINISHED, CLOSED)


def table_state(*, closed: bool, match_over: bool, playing: bool) -> str:
    """A table's lobby state: closed wins over a finished match, a hand on means playing."""
    if closed:
        return CLOSED
    if match_over:
        return FINISHED
    return PLAYING if playing else WAITING


@lru_cache(maxsize=256)
def _rules_from_text(game: str, text: str) -> Rules:
    return game_named(game).rules_from_json(json.loads(text))


def rules_of(game: str, spec: Mapping[str, Any]) -> Rules:
    """A game's rules for a stored spec (cached: tables read them on every deal)."""
    return _rules_from_text(game, json.dumps(spec, sort_keys=True))


class Table(Aggregate):
    """A table of one game: who sits where, which rules, which hand is on, the match score.

    The table knows its game only through the game boundary (`domain/game.py`): the game
    resolves the rules, deals each hand, names the score sides and says when the match ends.
    """

    # Set when the table opens, never changed in place: copies may share it (service/core/cache.py).
    NEVER_MUTATED: ClassVar[frozenset[str]] = frozenset({"ruleset_spec", "spectator_policy"})
    # The contributions the hand in play was dealt with (hex; "" for a seat that sent none),
    # None when it was not drawn. A class default: snapshots stored before it was kept hold
    # no such field, and their hand answers as an undrawn one.
    dealt_contributions: list[str] | None = None
    # Tables opened before commit-then-reveal took their seats' bytes directly (class
    # defaults: older snapshots hold neither field).
    entropy_commit_reveal: bool = False
    # The public records of draws opened for the next hand and never dealt (a re-draw):
    # every one is named in the deal that follows them (docs/fairness.md).
    abandoned_draws: tuple[dict[str, Any], ...] = ()
    # Each seat's own Ed25519 public key (hex), bound when it joined (None: none bound).
    # A class default: tables from before seat keys hold none.
    seat_keys: tuple[str | None, ...] = ()

    @classmethod
    def open(cls, game: Game, rules: Rules, players: int, *, allow_preset_deck: bool = False,
             name: str = "", spectators: SpectatorPolicy | None = None,
             entropy_window: int | None = None, entropy_direct: bool = False) -> Table:
        """Open a table of `game`, validating the seat count against the rules;
        `entropy_window` (seconds) makes every deal a seat-entropy deal, whose seats commit
        to their bytes before they reveal them unless `entropy_direct` (0.2's protocol)."""
        rules.check_players(players)
        check_entropy_window(entropy_window)
        policy = spectators if spectators is not None else SpectatorPolicy()
        return cls(ruleset=rules.to_json(), players=players,
                   allow_preset_deck=allow_preset_deck, name=name, game=game.name,
                   spectators=policy.to_json(), entropy_window=entropy_window,
                   commit_reveal=entropy_window is not None and not entropy_direct)

    @event("Opened")
    def __init__(self, ruleset: dict[str, Any], players: int, allow_preset_deck: bool,
                 name: str, game: str = "",
                 spectators: dict[str, Any] | None = None,
                 entropy_window: int | None = None, commit_reveal: bool = False) -> None:
        self.game_name = game or default_game()  # 0.1's tables name no game
        # Tables opened before seat entropy stored no window: their deals are the seed's.
        self.entropy_window = entropy_window
        self.entropy_commit_reveal = commit_reveal
        # The next deal while seats contribute to it: its number, the referee's secret seed
        # (hex) and its commitment, the deadline (ISO text) and each seat's contribution
        # (hex, None until sent). Secret until the hand ends: never in a view or event.
        self.draw: dict[str, Any] | None = None
        # Tables opened before spectator policies stored none: no delay, no limit.
        self.spectator_policy = dict(spectators or SpectatorPolicy().to_json())
        self.ruleset_spec = ruleset
        self.players = players
        self.allow_preset_deck = allow_preset_deck
        self.name = name
        self.seats: list[str | None] = [None] * players
        self.scores: dict[str, Decimal] = {
            side: Decimal(0) for side in game_named(game).side_seats(self.rules, players)}
        self.hands_played = 0
        self.current_hand: str | None = None
        self.hand_ids: list[str] = []
        self.next_dealer = players - 1  # so seat 0 receives the first card of the first hand
        self.carry: dict[str, Any] = {}  # what the last hand left for the next deal
        self.match_over = False
        self.match_end_reason: str | None = None
        self.closed = False
        self.close_reason: str | None = None
        self.voided_hands: list[str] = []
        # Per seat: which seat token is current; a reissue (or a replacement) moves it on,
        # and tokens of an older generation stop working.
        self.token_generations: list[int] = [0] * players

    # Snapshots of version 1 (0.1.0) hold `rules` and `previous_first_out` and no game name;
    # those of version 2 no spectator policy; those of version 3 no lifecycle (closing,
    # voided hands, token generations); those of version 4 no seat entropy.
    class_version = 5

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """Upcast a 0.1.0 snapshot's state."""
        state.pop("rules", None)
        state["game_name"] = default_game()
        state["carry"] = {FIRST_OUT: state.pop("previous_first_out", None)}

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """Upcast a snapshot taken before spectator policies: no delay, no limit."""
        state["spectator_policy"] = SpectatorPolicy().to_json()

    @staticmethod
    def upcast_v3_v4(state: dict[str, Any]) -> None:
        """Upcast a snapshot from before the table lifecycle."""
        state["closed"] = False
        state["close_reason"] = None
        state["voided_hands"] = []
        state["token_generations"] = [0] * int(state["players"])

    @staticmethod
    def upcast_v4_v5(state: dict[str, Any]) -> None:
        """Upcast a snapshot from before seat entropy: no window, no draw."""
        state["entropy_window"] = None
        state["draw"] = None

    # -- queries ----------------------------------------------------------------------------

    @property
    def game(self) -> Game:
        """The game played at this table."""
        return game_named(self.game_name)

    @property
    def spectators(self) -> SpectatorPolicy:
        """How spectators watch this table."""
        return SpectatorPolicy.from_json(self.spectator_policy)

    @property
    def rules(self) -> Rules:
        """The table's resolved rules."""
        return rules_of(self.game_name, self.ruleset_spec)

    @property
    def is_full(self) -> bool:
        """Every seat is taken."""
        return all(p is not None for p in self.seats)

    def token_generation(self, seat: int) -> int:
        """The generation of the seat's current token (0 until one is reissued)."""
        return self.token_generations[seat] if 0 <= seat < self.players else 0

    def seat_of(self, player_id: str) -> int | None:
        """The seat a player holds, if any."""
        return self.seats.index(player_id) if player_id in self.seats else None

    def view(self) -> TableView:
        """Public state of the table (no cards)."""
        sides = self.game.side_seats(self.rules, self.players)
        return TableView(
            table_id=str(self.id),
            version=self.version,
            game=self.game_name,
            name=self.name,
            ruleset=self.ruleset_spec,
            fingerprint=self.rules.fingerprint,
            players=self.players,
            seats=tuple(self.seats),
            scores=tuple(SideScore(side, tuple(sides.get(side, ())), score)
                         for side, score in self.scores.items()),
            hands_played=self.hands_played,
            current_hand=self.current_hand,
            hand_ids=tuple(self.hand_ids),
            next_dealer=self.next_dealer,
            match_over=self.match_over,
            match_end_reason=self.match_end_reason,
            allow_preset_deck=self.allow_preset_deck,
            spectators=self.spectators,
            closed=self.closed,
            close_reason=self.close_reason,
            voided_hands=tuple(self.voided_hands),
            entropy_window=self.entropy_window,
            entropy_commit_reveal=self.entropy_commit_reveal,
            draw=self._draw_view(),
            seat_keys=tuple(self.seat_key(seat) for seat in range(self.players)),
        )

    def _draw_view(self) -> DrawView | None:
        draw = self.draw
        if draw is None:
            return None
        commit_deadline = draw.get("commit_deadline")
        return DrawView(hand_number=draw["number"], commitment=draw["commitment"],
                        deadline=datetime.fromisoformat(draw["deadline"]),
                        contributed=tuple(seat for seat, sent in enumerate(draw["contributions"])
                                          if sent is not None),
                        commit_deadline=(datetime.fromisoformat(commit_deadline)
                                         if commit_deadline else None),
                        committed=tuple(seat for seat, sent
                                        in enumerate(draw.get("commitments") or ())
                                        if sent is not None),
                        abandoned=len(self.abandoned_draws))

    def draw_deadline(self) -> datetime | None:
        """When the seats of the deal being drawn stop contributing (None: no draw)."""
        return datetime.fromisoformat(self.draw["deadline"]) if self.draw else None

    def _commit_deadline(self) -> datetime | None:
        """When the seats of a commit-then-reveal draw stop committing (None: not one)."""
        text = self.draw.get("commit_deadline") if self.draw else None
        return datetime.fromisoformat(text) if text else None

    def _reveal_open(self, now: datetime) -> bool:
        """Every seat committed, or the commit window closed: the commitments are fixed."""
        draw, commit_deadline = self.draw, self._commit_deadline()
        if draw is None or commit_deadline is None:
            return False
        return now >= commit_deadline or all(c is not None for c in draw["commitments"])

    # -- commands ---------------------------------------------------------------------------

    def _check_seat(self, seat: int) -> None:
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.players:
            raise RuleError(Reason.INVALID_SEAT, f"seat must be 0..{self.players - 1}")

    def _check_open(self) -> None:
        if self.closed:
            raise RuleError(Reason.TABLE_CLOSED, "this table is closed")

    @staticmethod
    def _check_player_id(player_id: str) -> None:
        if not isinstance(player_id, str) or not 0 < len(player_id) <= MAX_PLAYER_ID_LENGTH:
            raise RuleError(Reason.INVALID_SEAT,
                            f"a player id is a non-empty string of at most"
                            f" {MAX_PLAYER_ID_LENGTH} characters")

    @staticmethod
    def _check_reason(reason: str) -> None:
        if not isinstance(reason, str) or len(reason) > MAX_REASON_LENGTH:
            raise RuleError(Reason.INVALID_REASON,
                            f"a reason is text of at most {MAX_REASON_LENGTH} characters")

    def _check_between_hands(self) -> None:
        if self.current_hand is not None:
            raise RuleError(Reason.HAND_IN_PROGRESS, "seats cannot change during a hand")
        if self.draw is not None:
            raise RuleError(Reason.HAND_IN_PROGRESS,
                            "seats cannot change while the next deal is being drawn")

    def _check_newcomer(self, player_id: str) -> None:
        if player_id in self.seats:
            raise RuleError(Reason.PLAYER_ALREADY_SEATED,
                            f"player {player_id!r} already sits at seat {self.seat_of(player_id)}")

    def seat_key(self, seat: int) -> str | None:
        """The public key (hex) the seat's player bound when it joined, if any."""
        return self.seat_keys[seat] if 0 <= seat < len(self.seat_keys) else None

    def join(self, seat: int, player_id: str, public_key: str | None = None) -> None:
        """Take a free seat; `public_key` (an Ed25519 key's 32 bytes, hex) binds the seat's
        own key: its commitments and contributions are then signed with it."""
        self._check_seat(seat)
        self._check_player_id(player_id)
        if public_key is not None and (
                not isinstance(public_key, str) or len(public_key) != SEAT_KEY_HEX
                or any(c not in "0123456789abcdef" for c in public_key)):
            raise RuleError(Reason.INVALID_SEAT_KEY,
                            "a seat key is an Ed25519 public key: 32 bytes")
        self._check_open()
        if self.match_over:
            raise RuleError(Reason.MATCH_OVER, "the match at this table is over")
        if self.seats[seat] is not None:
            raise RuleError(Reason.SEAT_TAKEN, f"seat {seat} is taken")
        self._check_newcomer(player_id)
        if public_key is None:  # stored as before: tables without seat keys are unchanged
            self._joined(seat=seat, player_id=player_id)
        else:
            self._joined(seat=seat, player_id=player_id, public_key=public_key)

    def replace_seat(self, seat: int, player_id: str) -> None:
        """Give a taken seat to another player (or a bot) between hands; the old token dies."""
        self._check_seat(seat)
        self._check_player_id(player_id)
        self._check_open()
        if self.match_over:
            raise RuleError(Reason.MATCH_OVER, "the match at this table is over")
        previous = self.seats[seat]
        if previous is None:
            raise RuleError(Reason.SEAT_EMPTY, f"seat {seat} is empty; seat a player with"
                            " JoinTable")
        self._check_between_hands()
        self._check_newcomer(player_id)
        self._seat_replaced(seat=seat, previous_player_id=previous, player_id=player_id,
                            token_generation=self.token_generations[seat] + 1)

    def reissue_token(self, seat: int) -> int:
        """Make a new token generation current for a taken seat (also mid-hand); return it."""
        self._check_seat(seat)
        player = self.seats[seat]
        if player is None:
            raise RuleError(Reason.SEAT_EMPTY, f"seat {seat} is empty")
        generation = self.token_generations[seat] + 1
        self._token_reissued(seat=seat, player_id=player, token_generation=generation)
        return generation

    def close(self, reason: str) -> None:
        """Deal no more hands here; a hand in progress still finishes and counts."""
        self._check_reason(reason)
        self._check_open()
        self._closed(reason=reason)

    def abort(self, reason: str) -> str | None:
        """Close the table now, voiding the hand in progress (its score never counts);
        return the voided hand's id, if there was one."""
        self._check_reason(reason)
        self._check_open()
        voided = self.current_hand
        if voided is not None:
            self._hand_voided(hand_id=voided, reason=reason)
        self._closed(reason=reason)
        return voided

    def leave(self, seat: int) -> None:
        """Leave a seat between hands (also at a closed table)."""
        self._check_seat(seat)
        if self.seats[seat] is None:
            raise RuleError(Reason.SEAT_EMPTY, f"seat {seat} is empty")
        self._check_between_hands()
        self._left(seat=seat)

    def start_hand(self, *, deck: list[str] | None = None, seed: bytes | None = None,
                   now: datetime | None = None) -> GameHand | None:
        """Deal the next hand (a preset deck only when the table allows it).

        At a seat-entropy table a shuffled deal is drawn first: this opens the draw
        (committing to `seed`, the seats contribute until `now` plus the window) and returns
        None; once the window has passed, it deals the draw as it stands.
        """
        self._check_open()
        if self.match_over:
            raise RuleError(Reason.MATCH_OVER, "the match at this table is over")
        if self.current_hand is not None:
            raise RuleError(Reason.HAND_IN_PROGRESS, "a hand is already being played")
        if self.draw is not None:
            deadline = self.draw_deadline()
            if now is None or deadline is None or now < deadline:
                raise RuleError(Reason.HAND_IN_PROGRESS,
                                f"the next deal is being drawn: seats contribute until"
                                f" {self.draw['deadline']}")
            return self._deal_draw()
        if not self.is_full:
            raise RuleError(Reason.TABLE_NOT_FULL,
                            f"all {self.players} seats must be taken to deal")
        if deck is not None and not self.allow_preset_deck:
            raise RuleError(Reason.PRESET_DECK_NOT_ALLOWED,
                            "this table was not created to allow preset decks")
        if deck is None and self.entropy_window is not None:
            if now is None:
                raise RuleError(Reason.INVALID_ENTROPY,
                                "a seat-entropy draw needs the time it opens at")
            self._open_draw(now, seed)
            return None
        return self._deal(deck=deck, seed=seed, contributions=None)

    def _open_draw(self, now: datetime, seed: bytes | None) -> None:
        """Open the draw of the next deal: the seed's commitment and the windows (commit,
        then reveal, one window each; or one window for bytes sent directly)."""
        window = timedelta(seconds=self.entropy_window or 0)
        secret = seed if seed is not None else secrets.token_bytes(SEED_BYTES)
        commit_deadline = (now + window).isoformat() if self.entropy_commit_reveal else None
        deadline = now + (2 * window if self.entropy_commit_reveal else window)
        self._draw_opened(number=self.hands_played + 1, commitment=seed_commitment(secret),
                          seed=secret.hex(), deadline=deadline.isoformat(),
                          commit_deadline=commit_deadline)

    def _open_draw_of(self, seat: int) -> dict[str, Any]:
        """The draw a seat contributes to (refusing when none is open)."""
        self._check_seat(seat)
        self._check_open()
        draw = self.draw
        if draw is None:
            self._refuse_contribution_to_a_dealt_draw(seat)
            raise RuleError(Reason.NO_DRAW_OPEN,
                            "no deal is being drawn at this table (StartHand opens one at a"
                            " table created with seat entropy)")
        return draw

    def _check_signed(self, seat: int, signature: str | None) -> None:
        """A seat that bound a key signs what it sends (the caller checked the signature
        itself against the key: the domain does no cryptography)."""
        if self.seat_key(seat) is not None and not signature:
            raise RuleError(Reason.ENTROPY_SIGNATURE_REQUIRED,
                            f"seat {seat} bound a key of its own: sign what it sends with it")

    def commit_entropy(self, seat: int, commitment: bytes, now: datetime,
                       signature: str | None = None) -> None:
        """Record a seat's commitment (the SHA-256 of the bytes it will reveal) to the deal
        being drawn, while the commit window is open (`signature`: the seat key's, hex)."""
        draw = self._open_draw_of(seat)
        self._check_signed(seat, signature)
        commit_deadline = self._commit_deadline()
        if commit_deadline is None:
            raise RuleError(Reason.INVALID_ENTROPY,
                            "this table's seats send their bytes directly (it was created with"
                            " seat_entropy.direct): send `entropy`, not a commitment")
        if not isinstance(commitment, bytes) or len(commitment) != ENTROPY_COMMITMENT_BYTES:
            raise RuleError(Reason.INVALID_ENTROPY,
                            f"a commitment is the {ENTROPY_COMMITMENT_BYTES}-byte SHA-256 of the"
                            " bytes the seat will reveal")
        if draw["commitments"][seat] is not None:
            raise RuleError(Reason.ENTROPY_ALREADY_SENT,
                            f"seat {seat} already committed to this deal")
        if now >= commit_deadline:
            raise RuleError(Reason.ENTROPY_WINDOW_CLOSED,
                            f"the commit window closed at {draw['commit_deadline']}: the deal"
                            " counts this seat's contribution as empty")
        if signature:
            self._entropy_committed(seat=seat, commitment=commitment.hex(),
                                    signature=signature)
        else:
            self._entropy_committed(seat=seat, commitment=commitment.hex())

    def contribute(self, seat: int, entropy: bytes, now: datetime,
                   signature: str | None = None) -> GameHand | None:
        """Record a seat's bytes for the deal being drawn (sent directly, or revealing its
        commitment); the last seat's deals it (the hand is returned), else None."""
        draw = self._open_draw_of(seat)
        self._check_signed(seat, signature)
        if not isinstance(entropy, bytes) \
                or not MIN_CONTRIBUTION_BYTES <= len(entropy) <= MAX_CONTRIBUTION_BYTES:
            raise RuleError(Reason.INVALID_ENTROPY,
                            f"a contribution is {MIN_CONTRIBUTION_BYTES} to"
                            f" {MAX_CONTRIBUTION_BYTES} random bytes")
        if self._commit_deadline() is not None:
            return self._reveal(draw, seat, entropy, now, signature)
        if draw["contributions"][seat] is not None:
            raise RuleError(Reason.ENTROPY_ALREADY_SENT,
                            f"seat {seat} already contributed to this deal")
        deadline = self.draw_deadline()
        if deadline is not None and now >= deadline:
            raise RuleError(Reason.ENTROPY_WINDOW_CLOSED,
                            f"the window closed at {draw['deadline']}: the deal counts this"
                            " seat's contribution as empty")
        self._record_bytes(seat, entropy, signature)
        if all(sent is not None for sent in draw["contributions"]):
            return self._deal_draw()
        return None

    def _record_bytes(self, seat: int, entropy: bytes, signature: str | None) -> None:
        if signature:
            self._entropy_contributed(seat=seat, entropy=entropy.hex(), signature=signature)
        else:
            self._entropy_contributed(seat=seat, entropy=entropy.hex())

    def _reveal(self, draw: dict[str, Any], seat: int, entropy: bytes, now: datetime,
                signature: str | None) -> GameHand | None:
        """A seat's bytes opening its commitment; the last outstanding reveal deals."""
        committed = draw["commitments"][seat]
        reveal_open = self._reveal_open(now)
        if committed is None:
            if not reveal_open:
                raise RuleError(Reason.ENTROPY_COMMIT_FIRST,
                                "this table's seats commit first: send the SHA-256 of your bytes"
                                " as `commitment`, then the bytes once every seat has committed"
                                f" or the commit window closed ({draw['commit_deadline']})")
            raise RuleError(Reason.ENTROPY_WINDOW_CLOSED,
                            f"seat {seat} did not commit before the commit window closed at"
                            f" {draw['commit_deadline']}: the deal counts its contribution as"
                            " empty")
        if draw["contributions"][seat] is not None:
            raise RuleError(Reason.ENTROPY_ALREADY_SENT,
                            f"seat {seat} already revealed its contribution to this deal")
        deadline = self.draw_deadline()
        if deadline is not None and now >= deadline:
            raise RuleError(Reason.ENTROPY_WINDOW_CLOSED,
                            f"the reveal window closed at {draw['deadline']}: the deal counts"
                            " this seat's contribution as withheld (empty)")
        if not reveal_open:
            raise RuleError(Reason.ENTROPY_REVEAL_NOT_OPEN,
                            "other seats may still commit: reveal once every seat has"
                            f" committed or at {draw['commit_deadline']}")
        if entropy_commitment(entropy) != committed:
            raise RuleError(Reason.ENTROPY_MISMATCH,
                            f"these bytes do not open seat {seat}'s commitment (their SHA-256"
                            " differs)")
        self._record_bytes(seat, entropy, signature)
        if all(sent is None or draw["contributions"][s] is not None
               for s, sent in enumerate(draw["commitments"])):
            return self._deal_draw()
        return None

    def _refuse_contribution_to_a_dealt_draw(self, seat: int) -> None:
        """A contribution to the hand in play, once its draw was dealt, gets the same answer
        whether the referee's clock dealt it a moment ago or not yet: the window is closed
        (or the seat's bytes are already in the deal)."""
        dealt = self.dealt_contributions if self.current_hand is not None else None
        if dealt is None:
            return
        if dealt[seat]:
            raise RuleError(Reason.ENTROPY_ALREADY_SENT,
                            f"seat {seat} contributed to hand {self.hands_played + 1}'s deal,"
                            " which is dealt")
        raise RuleError(Reason.ENTROPY_WINDOW_CLOSED,
                        f"hand {self.hands_played + 1} was dealt when its window closed: the"
                        " deal counted this seat's contribution as empty")

    def close_draw(self, number: int, now: datetime) -> GameHand:
        """Deal the draw of hand `number` once its window has passed (the referee's clock)."""
        self._check_open()
        if self.draw is None or self.draw["number"] != number:
            raise RuleError(Reason.NO_DRAW_OPEN, f"hand {number} is not being drawn")
        deadline = self.draw_deadline()
        if deadline is not None and now < deadline:
            raise RuleError(Reason.TURN_NOT_EXPIRED,
                            f"the seats contribute until {self.draw['deadline']}")
        return self._deal_draw()

    def _deal_draw(self) -> GameHand:
        draw = self.draw
        if draw is None:  # pragma: no cover - the callers checked
            raise RuleError(Reason.NO_DRAW_OPEN, "no deal is being drawn")
        # A seat that sent nothing counts as the empty contribution (docs/fairness.md).
        contributions = [sent or "" for sent in draw["contributions"]]
        record = draw_record(draw, self.abandoned_draws, self.seat_keys, self.players)
        return self._deal(deck=None, seed=bytes.fromhex(draw["seed"]),
                          contributions=contributions, record=record)

    def _deal(self, *, deck: list[str] | None, seed: bytes | None,
              contributions: list[str] | None, record: dict[str, Any] | None = None
              ) -> GameHand:
        number = self.hands_played + 1
        hand = self.game.deal(
            table_id=str(self.id), number=number, rules=self.rules, players=self.players,
            dealer=self.next_dealer, seat_players=list(self.seats), carry=self.carry,
            deck=deck, seed=seed, contributions=contributions, draw=record,
        )
        withheld = record["withheld"] if record is not None else None
        self._hand_started(hand_id=str(hand.id), number=number, dealer=self.next_dealer,
                           contributions=contributions, withheld=withheld)
        return hand

    def record_hand(self, hand: GameHand) -> None:
        """Add a finished hand's scores to the match (save table and hand together)."""
        if self.current_hand != str(hand.id):
            raise RuleError(Reason.NO_HAND_IN_PROGRESS,
                            "that hand is not this table's current hand")
        record = hand.record()
        self.trigger_event(self.HandRecorded, hand_id=record.hand_id,
                           totals={side: str(v) for side, v in record.totals.items()},
                           carry=dict(record.carry))
        reason = self.game.match_end(self.rules, self.hands_played, self.scores)
        if reason is not None:
            self._match_ended(reason=reason)

    # -- events -----------------------------------------------------------------------------

    @event("SeatTaken")
    def _joined(self, seat: int, player_id: str, public_key: str | None = None) -> None:
        self.seats[seat] = player_id
        self._bind_key(seat, public_key)

    def _bind_key(self, seat: int, public_key: str | None) -> None:
        if public_key is None and self.seat_key(seat) is None:
            return  # tables without seat keys keep none
        keys = list(self.seat_keys) + [None] * (self.players - len(self.seat_keys))
        keys[seat] = public_key
        self.seat_keys = tuple(keys)

    @event("SeatLeft")
    def _left(self, seat: int) -> None:
        self.seats[seat] = None
        self._bind_key(seat, None)

    @event("SeatReplaced")
    def _seat_replaced(self, seat: int, previous_player_id: str, player_id: str,
                       token_generation: int) -> None:
        self.seats[seat] = player_id
        self.token_generations[seat] = token_generation
        self._bind_key(seat, None)  # the new player bound no key

    @event("SeatTokenReissued")
    def _token_reissued(self, seat: int, player_id: str, token_generation: int) -> None:
        self.token_generations[seat] = token_generation

    @event("Closed")
    def _closed(self, reason: str) -> None:
        self.closed = True
        self.close_reason = reason
        self.draw = None  # a deal still being drawn is never dealt

    @event("DrawOpened")
    def _draw_opened(self, number: int, commitment: str, seed: str, deadline: str,
                     commit_deadline: str | None = None) -> None:
        previous = self.draw
        if previous is not None:  # a draw replaced before it was dealt: kept on the record
            self.abandoned_draws = (*self.abandoned_draws, public_draw(previous))
        self.draw = {"number": number, "commitment": commitment, "seed": seed,
                     "deadline": deadline, "contributions": [None] * self.players,
                     "commit_deadline": commit_deadline,
                     "commitments": [None] * self.players if commit_deadline else None,
                     "signatures": {"commitments": [None] * self.players,
                                    "contributions": [None] * self.players}}

    @event("EntropyCommitted")
    def _entropy_committed(self, seat: int, commitment: str, signature: str | None = None
                           ) -> None:
        if self.draw is not None:  # pragma: no branch - recorded only while drawing
            self.draw["commitments"][seat] = commitment
            if signature and "signatures" in self.draw:
                self.draw["signatures"]["commitments"][seat] = signature

    @event("EntropyContributed")
    def _entropy_contributed(self, seat: int, entropy: str, signature: str | None = None
                             ) -> None:
        if self.draw is not None:  # pragma: no branch - recorded only while drawing
            self.draw["contributions"][seat] = entropy
            if signature and "signatures" in self.draw:
                self.draw["signatures"]["contributions"][seat] = signature

    @event("HandVoided")
    def _hand_voided(self, hand_id: str, reason: str) -> None:
        self.current_hand = None
        self.voided_hands.append(hand_id)

    @event("HandStarted")
    def _hand_started(self, hand_id: str, number: int, dealer: int,
                      contributions: list[str] | None = None,
                      withheld: list[int] | None = None) -> None:
        del withheld  # public record only: the hand's deal holds it too
        self.draw = None  # a drawn deal is dealt
        self.abandoned_draws = ()
        self.dealt_contributions = contributions
        self.current_hand = hand_id
        self.hand_ids.append(hand_id)
        self.next_dealer = (dealer + 1) % self.players

    class HandRecorded(AggregateEvent):
        """A finished hand's side totals added to the match; `carry` is for the next deal.

        Version 1 (stored by 0.1.0) had `first_out` instead of `carry`. `hand_head` is the
        hash of the hand's last stored event, written by the event store when it chains the
        hand into the table's stream (docs/fairness.md); None before the chain existed.
        """

        class_version = 2
        hand_id: str
        totals: dict[str, str]
        carry: dict[str, Any]
        hand_head: str | None = None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            """`first_out` became the carry key it is for 五十K."""
            state["carry"] = {FIRST_OUT: state.pop("first_out", None)}

        def apply(self, aggregate: Any) -> None:
            """Mutate the table."""
            aggregate._hand_recorded(self.totals, self.carry)

    def _hand_recorded(self, totals: dict[str, str], carry: dict[str, Any]) -> None:
        for side, value in totals.items():
            self.scores[side] += Decimal(value)
        self.hands_played += 1
        self.current_hand = None
        self.carry = dict(carry)
        if isinstance(carry.get(NEXT_DEALER), int):
            self.next_dealer = carry[NEXT_DEALER]

    @event("MatchEnded")
    def _match_ended(self, reason: str) -> None:
        self.match_over = True
        self.match_end_reason = reason


def public_draw(draw: Mapping[str, Any]) -> dict[str, Any]:
    """What anyone may know of a draw: its commitment, its windows and who committed or sent
    what (digests only; never the seed, never a seat's bytes)."""
    commitments = draw.get("commitments")
    return {
        "number": draw["number"], "commitment": draw["commitment"],
        "commit_deadline": draw.get("commit_deadline"), "deadline": draw["deadline"],
        "commitments": ([sent or "" for sent in commitments]
                        if commitments is not None else None),
        "contributed": [seat for seat, sent in enumerate(draw["contributions"])
                        if sent is not None],
    }


def draw_record(draw: Mapping[str, Any], abandoned: tuple[Mapping[str, Any], ...],
                seat_keys: tuple[str | None, ...] = (), players: int = 0) -> dict[str, Any]:
    """The record of the draw a hand is dealt from, as its deal stores it: the draw's public
    record, the seats that committed and withheld their bytes, every draw opened for this
    hand before it and never dealt (a re-draw), and, at a table where seats bound keys of
    their own, those keys and each commitment's and contribution's signature (hex, "" for
    none)."""
    record = public_draw(draw)
    del record["contributed"]  # the deal's contributions say it
    record["withheld"] = withheld_seats(record["commitments"],
                                        [sent or "" for sent in draw["contributions"]])
    record["abandoned"] = [dict(previous) for previous in abandoned]
    if any(seat_keys):
        signatures = draw.get("signatures") or {}
        record["seat_keys"] = [seat_keys[s] or "" if s < len(seat_keys) else ""
                               for s in range(players)]
        record["signatures"] = {
            kind: [sent or "" for sent in signatures.get(kind) or [None] * players]
            for kind in ("commitments", "contributions")}
    return record


__all__ = [
    "CLOSED", "FINISHED", "PLAYING", "TABLE_STATES", "WAITING", "DrawView", "SideScore",
    "Table", "TableView", "check_entropy_window", "draw_record", "public_draw", "rules_of",
    "table_state",
]
