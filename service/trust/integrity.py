"""The integrity audit: a background check that the store still holds what was signed.

Each run reads the ledger of finished hands again from the start (`service/trust/ledger.py`,
never the server's incremental copy) and checks, for every hand in it and every table that
recorded one:

- the stream's hash chain is whole (no event edited, dropped, inserted or reordered);
- the hand's events still hash to the head its table chained in (not replaced);
- the log extends the latest signed checkpoint, the one stored and the highest this process
  has seen (not rolled back, not rewritten) — a consistency proof between the two trees.

A run that finds nothing wrong signs a checkpoint of the log when it grew and stores it.
Problems are logged at ERROR and counted on the `fiftyk_integrity_problems` gauge, which the
`FiftykIntegrityViolation` alert of deploy/prometheus/alerts.yml pages on. Hands still in
progress and command receipts are checked by `VerifyHand` and at export, not here.
Cost: one read of every finished hand's events and of every table stream per run
(`FIFTYK_INTEGRITY_CHECK_SECONDS` sets the interval).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.persistence import IntegrityError

from fiftyk_referee.domain.chain import check_stream
from fiftyk_referee.domain.merkle import MerkleLog, ProofError, verify_consistency
from fiftyk_referee.service.trust.chain_store import ChainedEventStore, chained_event
from fiftyk_referee.service.trust.ledger import CHECKPOINTS_ID, HandLog, LedgerCheckpoints
from fiftyk_referee.service.trust.signing import SignatureError, verify

log = logging.getLogger(__name__)


class IntegrityMetrics(Protocol):
    """What the audit reports (`service.ops.metrics.Metrics` provides it)."""

    def integrity_checked(self, problems: int, hands: int) -> None:
        """Record one run: the problems found and the hands in the ledger."""


class AuditedApp(Protocol):
    """What the audit needs of the referee application."""

    @property
    def events(self) -> Any:
        """The chained event store."""

    @property
    def recorder(self) -> Any:
        """The application recorder (the feed)."""

    @property
    def mapper(self) -> Any:
        """The mapper."""

    @property
    def signer(self) -> Any:
        """The referee's signer."""

    @property
    def repository(self) -> Any:
        """The repository (the stored checkpoints)."""

    def save(self, *objs: Any) -> Any:
        """Store aggregates."""


@dataclass
class AuditResult:
    """What one run found."""

    hands: int = 0
    tables: int = 0
    problems: list[str] = field(default_factory=list)
    checkpoint: Mapping[str, Any] | None = None
    history: list[str] = field(default_factory=list)  # the problems of the ledger's history
    time: str = ""  # when the run ended (ISO 8601)


class IntegrityAudit:
    """Runs the checks of the module docstring over the whole store."""

    def __init__(self, app: AuditedApp, *, metrics: IntegrityMetrics | None = None,
                 on_problem: Callable[[str], None] | None = None) -> None:
        self._app = app
        self._metrics = metrics
        self._on_problem = on_problem
        self._highest: Mapping[str, Any] | None = None  # the largest checkpoint seen here
        self.last: AuditResult | None = None  # the latest run's findings

    def run(self) -> AuditResult:
        """One full check; signs and stores a new checkpoint when all is well."""
        ledger = HandLog(self._app.recorder, self._app.mapper, self._app.signer)
        ledger.refresh()
        result = AuditResult(hands=ledger.size)
        self._check_streams(ledger, result)
        stored = self._stored_checkpoints()
        result.history = self.history_problems(ledger.log, stored)
        result.problems.extend(result.history)
        if not result.problems:
            result.checkpoint = self._sign(ledger, stored)
        for problem in result.problems:
            log.error("integrity audit: %s", problem)
            if self._on_problem is not None:
                self._on_problem(problem)
        if self._metrics is not None:
            self._metrics.integrity_checked(len(result.problems), result.hands)
        result.time = datetime.now(UTC).isoformat()
        self.last = result
        return result

    def _check_streams(self, ledger: HandLog, result: AuditResult) -> None:
        events = self._app.events
        if not isinstance(events, ChainedEventStore):  # pragma: no cover - the referee's
            raise TypeError("the integrity audit needs the chained event store")
        tables: set[str] = set()
        for record in ledger.records():
            if record.table_id not in tables:
                tables.add(record.table_id)
                found = check_stream(record.table_id, [
                    chained_event(e) for e in events.stored(UUID(record.table_id))])
                if not found.ok:
                    result.problems.append(f"table {record.table_id}: {found.problem}")
            stored = events.stored(UUID(record.hand_id))
            found = check_stream(record.hand_id, [chained_event(e) for e in stored])
            if not found.ok:
                result.problems.append(f"hand {record.hand_id}: {found.problem}")
            elif found.head != record.hand_head:
                result.problems.append(
                    f"hand {record.hand_id}: its events hash to {found.head}, its table"
                    f" recorded {record.hand_head}: the hand was replaced")
        result.tables = len(tables)

    def history_problems(self, log: MerkleLog, stored: LedgerCheckpoints | None = None,
                         *, size: int | None = None) -> list[str]:
        """How the first `size` leaves of this log (all by default) fail to extend the
        checkpoints signed before (the stored one and the highest this process has seen);
        empty when they extend both. O(log n) node hashes: the log keeps its subtrees."""
        if stored is None:
            stored = self._stored_checkpoints()
        size = len(log) if size is None else size
        found = AuditResult()
        for checkpoint in (stored.latest if stored else None, self._highest):
            if checkpoint is not None:
                self._check_extends(checkpoint, log, size, found)
        return found.problems

    def _stored_checkpoints(self) -> LedgerCheckpoints | None:
        try:
            found = self._app.repository.get(CHECKPOINTS_ID)
        except AggregateNotFoundError:
            return None
        return found if isinstance(found, LedgerCheckpoints) else None

    def _check_extends(self, checkpoint: Mapping[str, Any], log: MerkleLog, held: int,
                       result: AuditResult) -> None:
        try:
            # The key the checkpoint names: one signed before a key rotation still counts.
            verify(dict(checkpoint))
        except SignatureError as error:
            result.problems.append(f"the stored checkpoint: {error}")
            return
        size, signed_root = int(checkpoint["size"]), bytes.fromhex(checkpoint["root"])
        if held < size:
            result.problems.append(
                f"the ledger holds {held} hands, fewer than the {size} of the"
                f" checkpoint signed at {checkpoint.get('time')}: it was rolled back")
            return
        if size == 0:
            return
        try:
            verify_consistency(size, signed_root, held, log.root(held),
                               log.consistency_proof(size, held))
        except ProofError as error:
            result.problems.append(f"the ledger no longer extends the checkpoint of {size}"
                                   f" hands signed at {checkpoint.get('time')}: {error}")

    def _sign(self, ledger: HandLog, stored: LedgerCheckpoints | None) -> Mapping[str, Any]:
        checkpoint = ledger.checkpoint()
        latest = stored.latest if stored is not None else None
        if latest is None or int(latest["size"]) < int(checkpoint["size"]):
            book = stored if stored is not None else LedgerCheckpoints()
            book.record(dict(checkpoint))
            try:
                self._app.save(book)
            except IntegrityError:
                log.info("integrity audit: another replica stored a checkpoint first")
        if self._highest is None or int(self._highest["size"]) <= int(checkpoint["size"]):
            self._highest = checkpoint
        return checkpoint


__all__ = ["AuditResult", "IntegrityAudit", "IntegrityMetrics"]
