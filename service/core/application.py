"""The referee application: its parts composed over the `eventsourcing` library.

`Referee` is one `eventsourcing` application made of the referee's parts, each a module:
the use cases (`use_cases.py`), the queries (`queries.py`), the audit use cases
(`audits.py`) and the commands by name (`aliases.py`). This module wires them to the store:
the chained event store and its mapper (`service/trust/chain_store.py`), the transcoder with
the domain's values (`transcodings.py`), the aggregate cache, the command runner, the ledger
of finished hands, the integrity audit and the signing key.

Storage: the table streams are snapshotted every `TABLE_SNAPSHOT_INTERVAL` events (a match
can run for thousands of hands); hands are short and are replayed from their events. The
cache's settings come from `service.core.store.persistence_env`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar
from uuid import UUID

from eventsourcing.persistence import EventStore, JSONTranscoder, Mapper, Transcoder
from eventsourcing.utils import EnvType

from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.aggregates import AggregateSnapshot
from fiftyk_referee.service.core.aliases import NamedCommands
from fiftyk_referee.service.core.audits import Audits
from fiftyk_referee.service.core.cache import AggregateCache, replay
from fiftyk_referee.service.core.queries import MetricsHook
from fiftyk_referee.service.core.runner import DEFAULT_MAX_ATTEMPTS, CommandRunner
from fiftyk_referee.service.core.topics import register_legacy_topics
from fiftyk_referee.service.core.transcodings import DomainTranscoder
from fiftyk_referee.service.core.use_cases import UseCases
from fiftyk_referee.service.trust.chain_store import ChainedEventStore, ChainedMapper
from fiftyk_referee.service.trust.integrity import IntegrityAudit
from fiftyk_referee.service.trust.ledger import HandLog
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, Signer
from fiftyk_referee.service.trust.witness import WitnessCosignatures, WitnessKeys

TABLE_SNAPSHOT_INTERVAL = 50
# A witness cosigns each larger tree it sees: its stream grows with the ledger.
COSIGNATURES_SNAPSHOT_INTERVAL = 50


class Referee(UseCases, Audits, NamedCommands):
    """The referee: tables, hands, their history, and the global feed."""

    name = "Referee"
    snapshotting_intervals: ClassVar[dict[type[Any], int]] = {
        Table: TABLE_SNAPSHOT_INTERVAL, WitnessCosignatures: COSIGNATURES_SNAPSHOT_INTERVAL}
    snapshotting_projectors: ClassVar[dict[type[Any], Any]] = {Table: replay,
                                                               WitnessCosignatures: replay}
    snapshot_class = AggregateSnapshot

    def __init__(self, env: EnvType | None = None, *, metrics: MetricsHook | None = None,
                 max_attempts: int = DEFAULT_MAX_ATTEMPTS, signer: Signer | None = None,
                 owns: Callable[[UUID], bool] | None = None,
                 witnesses: WitnessKeys | None = None) -> None:
        register_legacy_topics()
        super().__init__(env)
        # Which new table ids this store may take: all of them, unless it is one shard of
        # several (service/core/shards.py), which takes only the ids that hash to it.
        self._owns = owns
        self.metrics = metrics
        # The development key unless the composition root passes the configured one.
        self.signer = signer if signer is not None else Signer.from_text(DEV_SIGNING_KEY)
        self.ledger = HandLog(self.recorder, self.mapper, self.signer)
        # The witnesses whose cosignatures it keeps (FIFTYK_REFEREE_WITNESS_KEYS).
        self.witnesses = witnesses if witnesses is not None else WitnessKeys()
        self.audit = IntegrityAudit(self, metrics=metrics)
        self.cache = AggregateCache(self.repository)
        self.runner = CommandRunner(self.cache, self.save, self._outcome_of_receipt,
                                    metrics=metrics, max_attempts=max_attempts)

    def construct_transcoder(self) -> Transcoder:
        """The JSON transcoder with the domain's transcodings (see service.core.transcodings)."""
        transcoder = DomainTranscoder()
        self.register_transcodings(transcoder)
        return transcoder

    def construct_mapper(self) -> Mapper[UUID]:
        """The mapper that takes the hash chain's link off stored events (chain_store.py)."""
        return ChainedMapper(transcoder=self.construct_transcoder())

    def construct_event_store(self) -> EventStore[UUID]:
        """The event store that seals every event into its stream's hash chain; a table's
        `HandRecorded` chains in the head of the hand it records."""
        return ChainedEventStore(self.mapper, self.recorder,
                                 links={Table.HandRecorded: ("hand_id", "hand_head")})

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        """The domain transcoder registers everything itself; nothing to add."""


__all__ = ["TABLE_SNAPSHOT_INTERVAL", "Referee"]
