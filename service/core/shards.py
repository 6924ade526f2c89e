"""Tables spread over several event stores (shards): the routing, nothing else.

Each shard is a whole referee store of its own — its events, its global feed, its receipts,
its ledger of finished hands and its integrity audit — on its own PostgreSQL database (in
production its own pg_auto_failover formation). A table lives wholly in one shard, with its
hands (a hand's id derives from its table's) and the receipts of its commands (their scope
is the table): every command, read and watch of one table is served by one shard exactly
as a single-database referee serves it. The router adds only this:

- **Placement.** `shard_of(table_id, count)`: the first 8 bytes of SHA-256 over a fixed
  prefix and the id's 16 bytes, modulo the shard count — stable across processes, versions
  and restarts (never Python's salted `hash`). A new table is created by a shard that keeps
  drawing random ids until one hashes to itself (`Referee(owns=...)`), so the id alone
  names the shard. `CreateTable` with a request id goes to the shard its receipt's id hashes
  to, so a retry finds its receipt; without one, the shards take turns.
- **Reads by hand id alone** (history, evidence, `VerifyHand`, `GetHandAt`): the id does not
  name its table, so the shards are asked in turn; the one holding the hand answers.
- **The global feed.** Positions are a shard's own; across shards the reader's place is a
  vector of one position per shard (`ShardPositions`, written as an opaque token). A page
  merges the shards' next events, keeping each shard's order; there is no order between
  shards' events, nor does a table need one: a table's events are all in one shard, so
  `WatchTable` resumes with a plain position of that shard.

One shard is exactly the single-database referee: `ShardedReferee` is then a thin pass
through, and its feed token is the one position.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from eventsourcing.utils import EnvType

from fiftyk_referee.domain.game import GameHand, GameView, LegalActions
from fiftyk_referee.domain.observer import Viewer
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.aliases import NamedCommands
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.commands import (
    CREATE_SCOPE,
    Act,
    Command,
    CreateTable,
    TableCommand,
)
from fiftyk_referee.service.core.public_events import FeedEvent, HistoryPage
from fiftyk_referee.service.core.queries import (
    DEFAULT_PAGE_SIZE,
    MAX_PAGE_SIZE,
    MetricsHook,
    ScoreSheet,
    parse_id,
)
from fiftyk_referee.service.core.runner import DEFAULT_MAX_ATTEMPTS, Outcome
from fiftyk_referee.service.errors import InvalidArgument, NotFound, ServiceReason
from fiftyk_referee.service.trust.integrity import AuditResult
from fiftyk_referee.service.trust.receipts import receipt_id
from fiftyk_referee.service.trust.signing import Signer
from fiftyk_referee.service.trust.verifier import Report

SHARD_KEY_PREFIX = b"fiftyk-shard/1\n"
TOKEN_PREFIX = "shards1"
MAX_SHARDS = 64
MAX_TOKEN_CHARS = 32 * MAX_SHARDS


def shard_of(key: UUID, count: int) -> int:
    """The shard (0..count-1) of a table id or a creation receipt's id: stable for ever."""
    if not 1 <= count <= MAX_SHARDS:
        raise ValueError(f"a referee has 1..{MAX_SHARDS} shards, not {count}")
    digest = hashlib.sha256(SHARD_KEY_PREFIX + key.bytes).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class ShardPositions:
    """A reader's place in the feed of every shard: one position per shard, in shard order.

    Its text (`token`) is what a client keeps to resume: `shards1.P0.P1...`; with one
    shard the position itself (`P0`), so a single-database client's integer reads on."""

    positions: tuple[int, ...]

    @classmethod
    def start(cls, count: int) -> ShardPositions:
        """Before every shard's first event."""
        return cls((0,) * count)

    @property
    def token(self) -> str:
        """The resume token."""
        if len(self.positions) == 1:
            return str(self.positions[0])
        return ".".join((TOKEN_PREFIX, *map(str, self.positions)))

    @classmethod
    def parse(cls, token: str, count: int) -> ShardPositions:
        """A token read back for a referee of `count` shards; InvalidArgument when it is not
        one of this referee's (another shard count, a negative or malformed position)."""
        text = token.strip()
        if not text:
            return cls.start(count)
        parts = text.split(".")
        if count > 1 and parts[0] == TOKEN_PREFIX:
            parts = parts[1:]
        elif count > 1 or len(parts) != 1:
            parts = []
        if (len(text) > MAX_TOKEN_CHARS or len(parts) != count
                or not all(p.isdigit() for p in parts)):
            raise InvalidArgument(ServiceReason.INVALID_REQUEST,
                                  f"{token[:80]!r} is not a feed position of this referee"
                                  f" ({count} shard{'s' if count > 1 else ''}): resume"
                                  " with the token a page of its feed returned")
        return cls(tuple(int(p) for p in parts))

    def advanced(self, shard: int, position: int) -> ShardPositions:
        """The same place, with one shard's position moved to `position`."""
        moved = list(self.positions)
        moved[shard] = position
        return ShardPositions(tuple(moved))


@dataclass(frozen=True)
class ShardedFeedPage:
    """A page of the feed across shards: each event with its shard, the place after it."""

    events: list[tuple[int, FeedEvent]]
    after: ShardPositions
    has_more: bool


class ShardedReferee(NamedCommands):
    """The referee over several event stores: routes each table to its shard.

    `envs` are the shards' persistence settings (`service.core.store.persistence_env` of each
    database), in shard order: the order is part of the placement, so a deployment lists
    its databases in the same order for ever (adding a shard moves tables: see
    docs/scaling.md)."""

    def __init__(self, envs: Sequence[EnvType], *, metrics: MetricsHook | None = None,
                 max_attempts: int = DEFAULT_MAX_ATTEMPTS, signer: Signer | None = None
                 ) -> None:
        count = len(envs)
        if not 1 <= count <= MAX_SHARDS:
            raise ValueError(f"a referee has 1..{MAX_SHARDS} shards, not {count}")
        self.shards: list[Referee] = []
        try:
            for index, env in enumerate(envs):
                owns = None if count == 1 else self._owner(index, count)
                self.shards.append(Referee(env, metrics=metrics, max_attempts=max_attempts,
                                           signer=signer, owns=owns))
        except BaseException:
            self.close()
            raise
        self._turns = itertools.count()
        self._turn_lock = threading.Lock()

    @staticmethod
    def _owner(index: int, count: int) -> Callable[[UUID], bool]:
        return lambda table_id: shard_of(table_id, count) == index

    @property
    def count(self) -> int:
        """How many shards."""
        return len(self.shards)

    def close(self) -> None:
        """Close every shard's store."""
        for shard in self.shards:
            shard.close()

    # -- routing ----------------------------------------------------------------------------

    def shard_index(self, table_id: str | UUID) -> int:
        """The shard of a table (InvalidArgument for a malformed id)."""
        return shard_of(parse_id(table_id, "table id"), self.count)

    def for_table(self, table_id: str | UUID) -> Referee:
        """The store of a table's shard."""
        return self.shards[self.shard_index(table_id)]

    def _for_creation(self, command: CreateTable) -> Referee:
        if command.request_id:
            return self.shards[shard_of(receipt_id(CREATE_SCOPE, command.request_id),
                                        self.count)]
        with self._turn_lock:
            turn = next(self._turns)
        return self.shards[turn % self.count]

    def _for_command(self, command: Command) -> Referee:
        if isinstance(command, TableCommand):
            return self.for_table(command.table_id)
        if isinstance(command, CreateTable):
            return self._for_creation(command)
        raise TypeError(f"no shard routing for {type(command).__name__}")

    def shard_of_hand(self, hand_id: str | UUID) -> Referee:
        """The shard holding a hand (NotFound `HAND_NOT_FOUND` when none does)."""
        uid = parse_id(hand_id, "hand id")
        for shard in self.shards:
            try:
                shard.get_hand(uid)
            except NotFound as error:
                if error.reason != ServiceReason.HAND_NOT_FOUND:
                    raise
                continue
            return shard
        raise NotFound(ServiceReason.HAND_NOT_FOUND, f"no hand {uid}")

    # -- commands ---------------------------------------------------------------------------

    def execute(self, command: Command) -> Outcome:
        """Run a command on its table's shard (a new table: see the module docstring)."""
        return self._for_command(command).execute(command)

    def check(self, command: Act) -> Outcome:
        """A dry run of an action, on its table's shard."""
        return self.for_table(command.table_id).check(command)

    # -- reads of one table -----------------------------------------------------------------

    def get_table(self, table_id: str | UUID) -> Table:
        """The table's current state."""
        return self.for_table(table_id).get_table(table_id)

    def get_hand(self, hand_id: str | UUID, table_id: str | UUID | None = None) -> GameHand:
        """A hand's current state (of the given table, when one is named)."""
        if table_id is not None:
            return self.for_table(table_id).get_hand(hand_id, table_id)
        return self.shard_of_hand(hand_id).get_hand(hand_id)

    def check_seat_token(self, table_id: str | UUID, seat: int, player_id: str,
                         token_generation: int) -> Table:
        """The table, if the seat token still holds the seat (its shard decides)."""
        return self.for_table(table_id).check_seat_token(table_id, seat, player_id,
                                                         token_generation)

    def legal_actions(self, table_id: str | UUID, hand_id: str | UUID | None, seat: int,
                      limit: int | None = None) -> tuple[LegalActions, int]:
        """What a seat may do now, and the hand's version."""
        return self.for_table(table_id).legal_actions(table_id, hand_id, seat, limit)

    def hand_view(self, table_id: str | UUID, hand_id: str | UUID | None,
                  viewer: Viewer) -> GameView:
        """A hand as `viewer` may see it."""
        return self.for_table(table_id).hand_view(table_id, hand_id, viewer)

    def scores(self, table_id: str | UUID) -> ScoreSheet:
        """The table's score sheet."""
        return self.for_table(table_id).scores(table_id)

    def rebuild_table(self, table_id: str | UUID) -> Table:
        """The table replayed from its stored events alone."""
        return self.for_table(table_id).rebuild_table(table_id)

    # -- reads by hand id alone -------------------------------------------------------------

    def hand_history(self, hand_id: str | UUID, *, after_version: int = 0,
                     limit: int = DEFAULT_PAGE_SIZE) -> HistoryPage:
        """A hand's events in version order."""
        return self.shard_of_hand(hand_id).hand_history(hand_id, after_version=after_version,
                                                        limit=limit)

    def hand_at(self, hand_id: str | UUID, version: int) -> GameHand:
        """A hand as it stood right after event `version`."""
        return self.shard_of_hand(hand_id).hand_at(hand_id, version)

    def export_transcript(self, hand_id: str | UUID) -> dict[str, Any]:
        """A stored hand as its game's transcript."""
        return self.shard_of_hand(hand_id).export_transcript(hand_id)

    def export_evidence(self, hand_id: str | UUID, *,
                        since_size: int | None = None) -> dict[str, Any]:
        """A stored hand's signed evidence: its proofs are of its own shard's ledger."""
        return self.shard_of_hand(hand_id).export_evidence(hand_id, since_size=since_size)

    def verify_hand(self, hand_id: str | UUID) -> Report:
        """`VerifyHand` on the hand's shard (its chain, its shard's ledger and audit)."""
        return self.shard_of_hand(hand_id).verify_hand(hand_id)

    def signed_ruling(self, transcript_text: str, result: Any) -> dict[str, Any]:
        """A signed ruling (no store involved: any shard's signer, they share one)."""
        return self.shards[0].signed_ruling(transcript_text, result)

    # -- the feed across shards -------------------------------------------------------------

    def head(self) -> ShardPositions:
        """Every shard's feed head."""
        return ShardPositions(tuple(shard.head_position() for shard in self.shards))

    def read_feed(self, after: ShardPositions, limit: int = DEFAULT_PAGE_SIZE,
                  names: Sequence[str] = ()) -> ShardedFeedPage:
        """The next events of every shard after `after`, merged by time (each shard's own
        order kept), at most `limit`; the place after the page is the resume point."""
        if len(after.positions) != self.count:
            raise InvalidArgument(ServiceReason.INVALID_REQUEST,
                                  f"a feed position of {len(after.positions)} shards, not"
                                  f" {self.count}")
        size = min(limit, MAX_PAGE_SIZE) if limit > 0 else DEFAULT_PAGE_SIZE  # as one store's
        pages = [shard.read_events(after.positions[index], size, names)
                 for index, shard in enumerate(self.shards)]
        streams: list[Iterable[tuple[int, FeedEvent]]] = [
            [(index, event) for event in page.events] for index, page in enumerate(pages)]
        merged = heapq.merge(*streams, key=lambda item: (item[1].timestamp, item[0]))
        taken = list(itertools.islice(merged, size))
        place = after
        for index, event in taken:
            place = place.advanced(index, event.position)
        more = any(
            page.has_more or place.positions[index] < (page.events[-1].position
                                                       if page.events else 0)
            for index, page in enumerate(pages))
        return ShardedFeedPage(events=taken, after=place, has_more=more)

    # -- integrity --------------------------------------------------------------------------

    def audit(self) -> list[AuditResult]:
        """Run every shard's integrity audit (each checks its own chains and ledger and
        signs its own checkpoint); the results in shard order."""
        return [shard.audit.run() for shard in self.shards]


__all__ = ["MAX_SHARDS", "ShardPositions", "ShardedFeedPage", "ShardedReferee", "shard_of"]
