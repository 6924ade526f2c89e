"""The command runner: decide, save in one transaction, retry on conflicts, honour receipts.

Concurrency (optimistic, per aggregate stream). Every stored event has a unique
(aggregate id, version) key, so of two commands racing on the same hand or table exactly
one append succeeds; the loser's whole transaction is rolled back (`IntegrityError`).
Decision: the loser is retried transparently — the aggregates are read again (the cache
fast-forwards to the winner's events) and the command runs again, up to `max_attempts`
times in all. The domain validates again, so a command that is no longer valid fails with
its rule error (typically `NOT_YOUR_TURN`), and one that still is (a seat joining while
another seat was taken) succeeds. Only when every attempt lost a race does the command fail
with `Conflict` (`CONCURRENT_UPDATE`, gRPC `ABORTED`). No event is lost or applied twice
and versions stay gapless, because nothing is ever appended except on top of the version
the command was decided on.

A command may also depend on a stream it does not change: a hand command reads its table
(the seat's token generation, whether the hand was voided). The first attempt takes the
table from the cache and names it as a guard with the version it read; the store refuses the
append, as a conflict, if the table moved on since (another replica reissued a token or
aborted the table), and the retry reads it fresh. So the common case costs no read of the
store at all, and a stale cache can never let a revoked token act.

Idempotency. Every command takes an optional `request_id`. An accepted command with a
request id also saves a `CommandReceipt` (`service/trust/receipts.py`) in the same transaction as
its events. A retry with the same id writes nothing and returns the original outcome,
rebuilt from the aggregates at the recorded versions — also after a restart, since the
receipt is stored, not remembered. The same id with a different command is refused with
`AlreadyExists` (`REQUEST_ID_REUSED`). Two identical requests racing collide on the
receipt's version 1: the loser is retried and finds the winner's receipt. Window: receipts
are kept as long as the store keeps the events; a rejected command stores nothing, so
retrying it runs it again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from time import perf_counter
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from fiftyk_referee.domain.aggregate import Aggregate
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.game import GameHand
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.cache import AggregateCache
from fiftyk_referee.service.errors import AlreadyExists, Conflict, ServiceError, ServiceReason
from fiftyk_referee.service.trust.receipts import CommandReceipt, fingerprint_of, receipt_id

DEFAULT_MAX_ATTEMPTS = 8
ACCEPTED = "accepted"


class RunnerMetrics(Protocol):
    """What the runner reports (`service.ops.metrics.Metrics` provides it)."""

    def command(self, kind: str, outcome: str) -> None:
        """Count a command with `accepted` or its reason code."""

    def conflict(self) -> None:
        """Count an append refused by optimistic concurrency control."""

    def retry(self) -> None:
        """Count a command retried after a conflict."""

    def idempotent_replay(self) -> None:
        """Count a command answered from its receipt."""

    def observe_append(self, seconds: float) -> None:
        """Observe one append's duration."""


@dataclass(frozen=True)
class Outcome:
    """What an accepted command produced: the aggregates as they stood right after it."""

    kind: str
    table: Table | None  # None for hand commands that left the table unchanged
    hand: GameHand | None = None
    seat: int | None = None
    detail: str = ""  # `time_out`: what the referee did ("pass", "play")
    replayed: bool = False
    # Hand commands that leave the table unchanged: the table's version they were decided on.
    table_version: int | None = None

    @property
    def table_id(self) -> str:
        """The table's id as text."""
        if self.table is not None:
            return str(self.table.id)
        return self.hand.table_id if self.hand is not None else ""

    @property
    def hand_id(self) -> str | None:
        """The hand's id as text, if the command concerned a hand."""
        return str(self.hand.id) if self.hand is not None else None

    @property
    def version(self) -> int:
        """The version of the aggregate the command was about (the hand's, else the table's)."""
        if self.hand is not None:
            return self.hand.version
        return self.table.version if self.table is not None else 0

    @property
    def current_table_version(self) -> int:
        """The table's version right after the command (0 when not known: old receipts)."""
        if self.table is not None:
            return self.table.version
        return self.table_version or 0

    def receipt_result(self) -> dict[str, Any]:
        """The ids and versions a receipt records to rebuild this outcome later."""
        return {
            "table_id": self.table_id,
            "table_version": self.table.version if self.table is not None else None,
            "hand_id": self.hand_id,
            "hand_version": self.hand.version if self.hand is not None else None,
            "seat": self.seat,
            "detail": self.detail,
            "seen_table_version": self.table_version,
        }


@dataclass
class Decision:
    """What a command decided: the outcome to report, the aggregates to save."""

    outcome: Outcome
    changed: list[Aggregate] = field(default_factory=list)
    on_saved: list[Callable[[], None]] = field(default_factory=list)
    # Streams the decision read but does not change, with the version it read: the append
    # is refused as a conflict (and the command decided again on fresh state) if one of
    # them moved on in the meantime, e.g. the table of a hand command.
    guards: dict[UUID, int] = field(default_factory=dict)

    def unchanged_guards(self) -> dict[UUID, int]:
        """The guards on streams this decision does not write (a written stream is already
        guarded by its own next version)."""
        written = {aggregate.id for aggregate in self.changed}
        return {stream: version for stream, version in self.guards.items()
                if stream not in written}


# Rebuilds an outcome from a receipt: (kind, recorded result) -> Outcome.
OutcomeLoader = Callable[[str, Mapping[str, Any]], Outcome]
Saver = Callable[..., Any]


class CommandRunner:
    """Runs commands: decide on (cached) state, save atomically, retry, replay receipts."""

    def __init__(self, cache: AggregateCache, save: Saver, load_outcome: OutcomeLoader, *,
                 metrics: RunnerMetrics | None = None,
                 max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
        if max_attempts < 1:
            raise ValueError("a command needs at least one attempt")
        self._cache = cache
        self._save = save
        self._load_outcome = load_outcome
        self._metrics = metrics
        self.max_attempts = max_attempts

    def run(self, kind: str, scope: str, request_id: str | None,
            arguments: Mapping[str, Any], decide: Callable[[], Decision]) -> Outcome:
        """Run one command to its outcome (or its refusal) — see the module docstring."""
        receipt_key = receipt_id(scope, request_id) if request_id else None
        fingerprint = fingerprint_of(kind, arguments) if request_id else ""
        for attempt in range(1, self.max_attempts + 1):
            replayed = self._replay(receipt_key, kind, request_id, fingerprint)
            if replayed is not None:
                return replayed
            try:
                decision = self._cache.decide(decide, optimistic=attempt == 1)
            except (RuleError, ServiceError) as error:
                # A duplicate of this request may have been accepted since the check above,
                # so the refusal may only be seeing its effect.
                replayed = self._replay(receipt_key, kind, request_id, fingerprint)
                if replayed is not None:
                    return replayed
                self._count(kind, str(error.reason))
                raise
            receipt = None
            if receipt_key is not None and request_id is not None:
                receipt = CommandReceipt(scope=scope, request_id=request_id, kind=kind,
                                         fingerprint=fingerprint,
                                         result=decision.outcome.receipt_result())
            started = perf_counter()
            guards = decision.unchanged_guards()
            try:
                if guards:
                    self._save(*decision.changed, receipt, guards=guards)
                else:
                    self._save(*decision.changed, receipt)
            except IntegrityError:
                self._conflicted(kind, attempt)
                continue
            if self._metrics is not None:
                self._metrics.observe_append(perf_counter() - started)
            self._cache.remember(decision.changed)
            for callback in decision.on_saved:
                callback()
            self._count(kind, ACCEPTED)
            return decision.outcome
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _conflicted(self, kind: str, attempt: int) -> None:
        if self._metrics is not None:
            self._metrics.conflict()
        if attempt == self.max_attempts:
            self._count(kind, ServiceReason.CONCURRENT_UPDATE)
            raise Conflict(
                ServiceReason.CONCURRENT_UPDATE,
                f"{kind}: another command changed the same state first, {attempt}"
                " times in a row; read the new state and try again",
            )
        if self._metrics is not None:
            self._metrics.retry()

    def _count(self, kind: str, outcome: str) -> None:
        if self._metrics is not None:
            self._metrics.command(kind, outcome)

    def _replay(self, key: UUID | None, kind: str, request_id: str | None,
                fingerprint: str) -> Outcome | None:
        """The original outcome when this request id was accepted before, else None."""
        if key is None or request_id is None:
            return None
        try:
            receipt = self._cache.get(key)
        except AggregateNotFoundError:
            return None
        if not isinstance(receipt, CommandReceipt):  # pragma: no cover - ids are namespaced
            return None
        if receipt.fingerprint != fingerprint or receipt.kind != kind:
            raise AlreadyExists(
                ServiceReason.REQUEST_ID_REUSED,
                f"request id {request_id!r} was already used for a different command"
                f" ({receipt.kind}); use a new request id for a new command",
            )
        if self._metrics is not None:
            self._metrics.idempotent_replay()
        self._count(kind, ACCEPTED)
        return self._load_outcome(kind, receipt.result)


__all__ = ["ACCEPTED", "CommandRunner", "Decision", "Outcome", "RunnerMetrics"]
