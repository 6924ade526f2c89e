"""The audit use cases: a stored hand's evidence, its verification, signed rulings.

What a sceptic asks of the referee, read from the store as it holds the hand now (never the
cache): the hand's evidence (`service/trust/evidence.py` builds it; the referee signs it),
the whole of `fiftyk verify`'s checks run on it plus the hand's link in its table's chain
and the ledger's history, and a signed ruling on any submitted transcript.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError
from eventsourcing.domain import EventSourcingError
from eventsourcing.persistence import IntegrityError, StoredEvent

from fiftyk_referee.domain.chain import check_stream
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.game import GameHand
from fiftyk_referee.domain.games import game_of
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.cache import replay
from fiftyk_referee.service.core.commands import ContributeEntropy
from fiftyk_referee.service.core.queries import Queries, parse_id
from fiftyk_referee.service.core.runner import Outcome
from fiftyk_referee.service.errors import (
    Conflict,
    DataLoss,
    FieldViolation,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ServiceReason,
)
from fiftyk_referee.service.trust.chain_store import ChainedEventStore, chained_event
from fiftyk_referee.service.trust.evidence import DISTRIBUTION, build_evidence, engine_version
from fiftyk_referee.service.trust.integrity import IntegrityAudit
from fiftyk_referee.service.trust.ledger import HandLog
from fiftyk_referee.service.trust.signing import Signer
from fiftyk_referee.service.trust.verifier import (
    FAILED,
    NO_CHAIN,
    OK,
    SKIPPED,
    Line,
    Report,
    Verifier,
    rules_engine,
)
from fiftyk_referee.service.trust.witness import (
    MAX_COSIGNATURE_CHARS,
    UnknownWitness,
    WitnessCosignatures,
    WitnessKeys,
    check_cosignature,
    witness_stream,
)

RULING_FORMAT = "fiftyk-ruling/1"
COSIGNATURE_SAVE_ATTEMPTS = 3


class Audits(Queries):
    """A hand's evidence and verification, and signed rulings."""

    signer: Signer
    ledger: HandLog
    audit: IntegrityAudit
    witnesses: WitnessKeys

    def _stored_events(self, stream: UUID) -> list[StoredEvent]:
        events = self.events
        if not isinstance(events, ChainedEventStore):  # pragma: no cover - construct_event_store
            raise TypeError("the referee's event store is a ChainedEventStore")
        return events.stored(stream)

    def _stored_hand(self, hand_id: str | UUID) -> tuple[GameHand, list[StoredEvent]]:
        """A hand replayed from its stored events as the store holds them now (no cache),
        and those events; DataLoss when they no longer replay."""
        uid = parse_id(hand_id, "hand id")
        stored = self._stored_events(uid)
        if not stored:
            raise NotFound(ServiceReason.HAND_NOT_FOUND, f"no hand {uid}")
        return self._replayed(uid, stored), stored

    def _replayed(self, uid: UUID, stored: list[StoredEvent]) -> GameHand:
        """The hand these stored events replay to; DataLoss when they no longer replay."""
        try:
            hand = replay(None, map(self.mapper.to_domain_event, stored))
        except (EventSourcingError, ValueError, TypeError, KeyError, AttributeError,
                RuleError) as error:
            raise DataLoss(ServiceReason.EVENTS_TAMPERED,
                           f"the stored events of hand {uid} do not replay"
                           f" ({type(error).__name__}: {error}); VerifyHand names the"
                           " broken check") from None
        try:
            game_of(hand)
        except RuleError:
            raise NotFound(ServiceReason.HAND_NOT_FOUND, f"no hand {uid}") from None
        return hand  # type: ignore[no-any-return]  # game_of checked it is a game's hand

    def unsigned_evidence(self, hand_id: str | UUID, *,
                          since_size: int | None = None) -> dict[str, Any]:
        """A stored hand's evidence as the store holds it now (docs/fairness.md), unsigned."""
        hand, stored = self._stored_hand(hand_id)
        evidence = build_evidence(game_of(hand), hand, stored, self.ledger,
                                  cosignatures=self.latest_cosignatures())
        ledger = evidence.get("ledger")
        if since_size and ledger is not None:
            if not 0 < since_size <= ledger["size"]:
                raise InvalidArgument(
                    ServiceReason.INVALID_REQUEST,
                    f"the ledger holds {ledger['size']} hands; no consistency proof from"
                    f" {since_size}")
            ledger["consistency"] = {"from_size": since_size,
                                     "proof": self.ledger.consistency(since_size,
                                                                      ledger["size"])}
        return evidence

    def export_evidence(self, hand_id: str | UUID, *,
                        since_size: int | None = None) -> dict[str, Any]:
        """A stored hand's evidence, signed by the referee (`fiftyk verify` checks it)."""
        return self.signer.sign(self.unsigned_evidence(hand_id, since_size=since_size))

    def published_checkpoint(self, since_size: int | None = None
                             ) -> tuple[dict[str, Any], list[str] | None]:
        """The latest signed checkpoint (docs/fairness.md#witnesses) and, for
        0 < since_size <= its size, the consistency proof from that tree (else None)."""
        checkpoint = self.ledger.published()
        size = int(checkpoint["size"])
        if since_size is None or not 0 < since_size <= size:
            return checkpoint, None
        return checkpoint, self.ledger.consistency(since_size, size)

    def hands_checkpoint(self, hand_ids: Sequence[str], *, fresh: bool = True
                         ) -> tuple[dict[str, Any], dict[str, int]] | None:
        """The latest signed checkpoint and the leaf index of each of these hands its tree
        includes; None when it includes none of them. `fresh=False` (a stream replaying a
        table's history): the last checkpoint signed here when it includes them all, without
        reading the store again."""
        if not hand_ids:
            return None
        if not fresh:
            found = self._included(self.ledger.published(fresh=False), hand_ids)
            if len(found[1]) == len(hand_ids):
                return found
        checkpoint, indexes = self._included(self.ledger.published(), hand_ids)
        return (checkpoint, indexes) if indexes else None

    def _included(self, checkpoint: dict[str, Any], hand_ids: Sequence[str]
                  ) -> tuple[dict[str, Any], dict[str, int]]:
        size = int(checkpoint["size"])
        return checkpoint, {hand_id: index for hand_id in hand_ids
                            if (index := self.ledger.index_of(hand_id)) is not None
                            and index < size}

    def latest_cosignatures(self) -> list[tuple[str, dict[str, Any]]]:
        """Each configured witness's latest cosignature kept (name, cosignature), in the
        order the operator listed them; a witness that cosigned nothing yet is left out."""
        found = []
        for witness in self.witnesses:
            book = self._cosignatures_of(witness.key_id)
            if book is not None and book.latest is not None:
                found.append((witness.name, book.latest))
        return found

    def _cosignatures_of(self, witness_key_id: str) -> WitnessCosignatures | None:
        try:
            # A copy (the library's default): add_cosignature records on it.
            book = self.repository.get(witness_stream(witness_key_id), projector_func=replay)
        except AggregateNotFoundError:
            return None
        return book if isinstance(book, WitnessCosignatures) else None

    def add_cosignature(self, text: str) -> tuple[str, bool]:
        """Keep a witness's cosignature of a tree this ledger holds: (the witness's name,
        whether it was stored now — not when one of this size or larger is kept already).
        PermissionDenied UNKNOWN_WITNESS for a key the operator did not list,
        InvalidArgument INVALID_COSIGNATURE for one that does not check."""
        if len(text) > MAX_COSIGNATURE_CHARS:
            raise InvalidArgument(ServiceReason.INVALID_COSIGNATURE,
                                  f"a cosignature has at most {MAX_COSIGNATURE_CHARS}"
                                  f" characters, not {len(text)}",
                                  field_violations=[FieldViolation("cosignature_json",
                                                                   "too long")])
        try:
            document = json.loads(text)
            signer = check_cosignature(document, [w.key for w in self.witnesses])
        except UnknownWitness as error:
            raise PermissionDenied(ServiceReason.UNKNOWN_WITNESS,
                                   f"{error} (the operator lists witnesses in"
                                   " FIFTYK_REFEREE_WITNESS_KEYS)") from None
        except (ValueError, RecursionError) as error:  # JSON, or CosignatureError
            raise InvalidArgument(ServiceReason.INVALID_COSIGNATURE, str(error),
                                  field_violations=[FieldViolation("cosignature_json",
                                                                   "not a cosignature")]
                                  ) from None
        witness = self.witnesses.by_key_id(signer)
        if witness is None:  # pragma: no cover - check_cosignature checked the key
            raise PermissionDenied(ServiceReason.UNKNOWN_WITNESS, f"no witness {signer}")
        self._check_cosigned_tree(document)
        for _ in range(COSIGNATURE_SAVE_ATTEMPTS):
            book = self._cosignatures_of(signer) or WitnessCosignatures(signer)
            if book.latest is not None and int(book.latest["size"]) >= document["size"]:
                return witness.name, False
            book.record(document)
            try:
                self.save(book)
            except IntegrityError:  # another process kept one first: read it and decide again
                continue
            return witness.name, True
        raise Conflict(ServiceReason.CONCURRENT_UPDATE,
                       "other cosignatures of this witness were stored meanwhile; retry")

    def _check_cosigned_tree(self, document: Mapping[str, Any]) -> None:
        """Refuse a cosignature of a tree this ledger does not hold."""
        self.ledger.refresh()
        log, size = self.ledger.view()
        cosigned = int(document["size"])
        if cosigned > size:
            raise InvalidArgument(ServiceReason.INVALID_COSIGNATURE,
                                  f"the cosignature is of a tree of {cosigned} hands; this"
                                  f" referee's ledger holds {size}")
        if log.root(cosigned).hex() != document["root"]:
            raise InvalidArgument(ServiceReason.INVALID_COSIGNATURE,
                                  f"the cosignature's root is not this ledger's root of its"
                                  f" first {cosigned} hands")

    def entropy_receipt(self, outcome: Outcome) -> dict[str, Any] | None:
        """The referee's signed receipt for an accepted commitment or contribution
        (docs/fairness.md#receipts); None for any other outcome."""
        if outcome.kind != ContributeEntropy.KIND or not outcome.detail.startswith("{"):
            return None
        return self.signer.sign(json.loads(outcome.detail))

    def signed_ruling(self, transcript_text: str, result: Mapping[str, Any]) -> dict[str, Any]:
        """A ruling signed by the referee: the submitted transcript's SHA-256 and the result."""
        return self.signer.sign({
            "format": RULING_FORMAT,
            "transcript_sha256": hashlib.sha256(transcript_text.encode()).hexdigest(),
            "result": dict(result),
            "engine": {"name": DISTRIBUTION, "version": engine_version()},
            "time": datetime.now(UTC).isoformat(),
        })

    def verify_hand(self, hand_id: str | UUID) -> Report:
        """Check a stored hand as an auditor would: its evidence, built from the store now,
        through every check of `fiftyk verify`, plus its head as its table recorded it."""
        uid = parse_id(hand_id, "hand id")
        stored = self._stored_events(uid)
        if not stored:
            raise NotFound(ServiceReason.HAND_NOT_FOUND, f"no hand {uid}")
        chain = check_stream(str(uid), [chained_event(e) for e in stored])
        if not chain.ok:
            return Report([Line("chain", FAILED, chain.problem)])
        try:
            # The events just read and checked, not a second read: one snapshot of the store.
            hand = self._replayed(uid, stored)
        except DataLoss as error:
            return Report([Line("replay", FAILED, error.message)])
        evidence = self.signer.sign(build_evidence(
            game_of(hand), hand, stored, self.ledger, chain=chain,
            cosignatures=self.latest_cosignatures()))
        report = Verifier(evidence, trusted=[self.signer.public], rules=rules_engine()).run()
        if report.ok:
            report.lines.append(self._table_link_line(evidence))
        if report.ok:
            report.lines.append(self._history_line())
        return report

    def _history_line(self) -> Line:
        """Whether the ledger extends every signed checkpoint: this process's log, brought
        up to date from the store's new records (a vanished tail makes it read the store
        again from the start), checked by a consistency proof from its kept subtrees, so
        the cost does not grow with the ledger; and whether the latest integrity audit,
        which reads the whole ledger again, found it edited."""
        self.ledger.refresh()
        log, size = self.ledger.view()
        problems = self.audit.history_problems(log, size=size)
        if problems:
            return Line("ledger history", FAILED, problems[0])
        last = self.audit.last
        if last is not None and last.history:
            return Line("ledger history", FAILED,
                        f"the integrity audit of {last.time} found: {last.history[0]}")
        return Line("ledger history", OK, f"the ledger of {size} hands extends every"
                                          " checkpoint signed before")

    def _table_link_line(self, evidence: Mapping[str, Any]) -> Line:
        """Whether the hand's head is the one its table's stream chained in."""
        head = evidence["chain"]["head"]
        if not evidence["over"]:
            return Line("table link", SKIPPED, "the hand is not over")
        table_id = parse_id(evidence["table_id"], "table id")
        for event in self._table_records(table_id, evidence["hand_id"]):
            if isinstance(event, Table.HandRecorded) and event.hand_id == evidence["hand_id"]:
                if event.hand_head is None:
                    return Line("table link", NO_CHAIN, "recorded before the hash chain")
                if event.hand_head != head:
                    return Line("table link", FAILED,
                                f"the table recorded head {event.hand_head}, the hand's"
                                f" events now hash to {head}: the hand was replaced")
                return Line("table link", OK, "the table's chain recorded this head")
        return Line("table link", FAILED, "the table has no record of this hand")

    def _table_records(self, table_id: UUID, hand_id: str) -> Iterable[Any]:
        """The table's events that may record the hand: the one event at the version the
        ledger read the record from (however long the table's history; a record moved or
        removed since is not there), or the whole stream for a hand not in the ledger."""
        recorded = self.ledger.recorded(hand_id)
        if recorded is None or recorded.table_id != str(table_id):
            return self.events.get(table_id)
        version = recorded.table_version
        stored = self.recorder.select_events(table_id, gt=version - 1, lte=version)
        return map(self.mapper.to_domain_event, stored)


__all__ = ["RULING_FORMAT", "Audits"]
