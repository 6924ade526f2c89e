"""The webhook endpoints in the event store's database: registered, leased, dead letters.

An endpoint is a URL, a secret, a key id and an optional list of event names, registered by
the platform (`RegisterWebhook`) and kept in `webhook_endpoints` with its feed position and
its lease (`lease_holder`, `lease_until`); the events it did not take after every attempt
are its dead letters (`webhook_dead_letters`). Every write of a position checks the lease in
the same statement, so a worker that lost its lease (a long pause) moves no one's position.
The same SQL runs on SQLite and PostgreSQL (`process_store.py`). Deliveries themselves are
`service/webhooks/`; a URL is checked by the address policy (`webhook_addresses.py`).
"""

from __future__ import annotations

import json
import secrets
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.public_events import PUBLIC_EVENTS, FeedEvent
from fiftyk_referee.service.errors import (
    AlreadyExists,
    FieldViolation,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
    ServiceReason,
)
from fiftyk_referee.service.platform.process_store import (
    INTEGRITY_ERRORS,
    ProcessStore,
    datastore_of,
)
from fiftyk_referee.service.platform.webhook_addresses import check_url

EVENT_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://fiftyk-referee/webhook-event")
MAX_ENDPOINTS = 32  # a metric label per endpoint: bounded
MAX_DESCRIPTION_LENGTH = 256
SECRET_BYTES = 32
ERROR_TEXT_LENGTH = 200
CREATE_STATEMENTS = (
    "CREATE TABLE IF NOT EXISTS webhook_endpoints (endpoint_id TEXT PRIMARY KEY,"
    " url TEXT NOT NULL, secret TEXT NOT NULL, key_id TEXT NOT NULL, events TEXT NOT NULL,"
    " description TEXT NOT NULL, created_at TEXT NOT NULL, position BIGINT NOT NULL,"
    " lease_holder TEXT, lease_until DOUBLE PRECISION NOT NULL DEFAULT 0,"
    " request_id TEXT UNIQUE)",
    "CREATE TABLE IF NOT EXISTS webhook_dead_letters (endpoint_id TEXT NOT NULL,"
    " position BIGINT NOT NULL, event_id TEXT NOT NULL, event_name TEXT NOT NULL,"
    " attempts INTEGER NOT NULL, last_error TEXT NOT NULL, failed_at TEXT NOT NULL,"
    " redeliver INTEGER NOT NULL, PRIMARY KEY (endpoint_id, position))",
)


def event_id(event: FeedEvent) -> str:
    """A delivery's stable id: the same for every attempt and every replica."""
    return str(uuid.uuid5(EVENT_ID_NAMESPACE, f"{event.aggregate_id}/{event.aggregate_version}"))


@dataclass(frozen=True)
class Endpoint:
    """A registered endpoint (its secret is shown once, when it is registered)."""

    endpoint_id: str
    url: str
    secret: str = field(repr=False)
    key_id: str
    events: tuple[str, ...]
    description: str
    created_at: datetime
    position: int

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Endpoint:
        """A row read back."""
        return cls(endpoint_id=row["endpoint_id"], url=row["url"], secret=row["secret"],
                   key_id=row["key_id"], events=tuple(json.loads(row["events"])),
                   description=row["description"],
                   created_at=datetime.fromisoformat(row["created_at"]),
                   position=int(row["position"]))


@dataclass(frozen=True)
class DeadLetter:
    """An event an endpoint did not take after every attempt."""

    endpoint_id: str
    position: int
    event_id: str
    event_name: str
    attempts: int
    last_error: str
    failed_at: datetime
    redeliver: bool


class WebhookStore:
    """The endpoints, their positions and leases, and their dead letters."""

    def __init__(self, app: Referee, *, create: bool = True, private: bool = False,
                 loopback: bool = True) -> None:
        self.app = app
        self.private = private
        self.loopback = loopback
        self.store = ProcessStore(datastore_of(app), create_statements=CREATE_STATEMENTS,
                                  create=create)

    def register(self, url: str, events: Sequence[str], description: str = "", *,
                 request_id: str | None = None) -> tuple[Endpoint, bool]:
        """A new endpoint, starting after the feed's head (it receives later events), and
        whether it was registered before under `request_id`."""
        check_url(url, private=self.private, loopback=self.loopback)
        PUBLIC_EVENTS.topics(events)  # refuses an unknown name
        if len(description) > MAX_DESCRIPTION_LENGTH:
            raise InvalidArgument(ServiceReason.INVALID_REQUEST,
                                  f"description is longer than {MAX_DESCRIPTION_LENGTH}"
                                  " characters",
                                  field_violations=[FieldViolation("description", "too long")])
        wanted = tuple(dict.fromkeys(events))
        if request_id:
            known = self._registered(request_id, url, wanted, description)
            if known is not None:
                return known, True
        endpoint = Endpoint(
            endpoint_id=str(uuid.uuid4()), url=url,
            secret="whsec_" + secrets.token_urlsafe(SECRET_BYTES),
            key_id="k" + secrets.token_hex(4), events=wanted, description=description,
            created_at=datetime.now(UTC), position=self.app.head_position())
        try:
            with self.store.transaction() as statements:
                statements.execute("SELECT COUNT(*) AS n FROM webhook_endpoints")
                row = statements.fetchone()
                if row is not None and int(row["n"]) >= MAX_ENDPOINTS:
                    raise ResourceExhausted(ServiceReason.LIMIT_EXCEEDED,
                                            f"at most {MAX_ENDPOINTS} webhook endpoints")
                statements.execute(
                    "INSERT INTO webhook_endpoints (endpoint_id, url, secret, key_id, events,"
                    " description, created_at, position, lease_holder, lease_until,"
                    " request_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, 0, ?)",
                    (endpoint.endpoint_id, url, endpoint.secret, endpoint.key_id,
                     json.dumps(list(wanted)), description, endpoint.created_at.isoformat(),
                     endpoint.position, request_id or None))
        except INTEGRITY_ERRORS:
            # The same request id raced us and won: answer with its endpoint.
            known = self._registered(request_id or "", url, wanted, description)
            if known is None:  # pragma: no cover - only a request id can collide
                raise
            return known, True
        return endpoint, False

    def _registered(self, request_id: str, url: str, events: tuple[str, ...],
                    description: str) -> Endpoint | None:
        """The endpoint registered under `request_id`; REQUEST_ID_REUSED if it differs."""
        with self.store.transaction(commit=False) as statements:
            statements.execute("SELECT * FROM webhook_endpoints WHERE request_id=?",
                               (request_id,))
            row = statements.fetchone()
        if row is None:
            return None
        known = Endpoint.from_row(row)
        if (known.url, known.events, known.description) != (url, events, description):
            raise AlreadyExists(ServiceReason.REQUEST_ID_REUSED,
                                f"request id {request_id!r} registered a different webhook")
        return known

    def dead_letter_counts(self) -> dict[str, int]:
        """Dead letters per endpoint."""
        with self.store.transaction(commit=False) as statements:
            statements.execute("SELECT endpoint_id, COUNT(*) AS n FROM webhook_dead_letters"
                               " GROUP BY endpoint_id")
            return {row["endpoint_id"]: int(row["n"]) for row in statements.fetchall()}

    def endpoints(self) -> list[Endpoint]:
        """Every endpoint, oldest first."""
        with self.store.transaction(commit=False) as statements:
            statements.execute("SELECT * FROM webhook_endpoints ORDER BY created_at, endpoint_id")
            return [Endpoint.from_row(row) for row in statements.fetchall()]

    def endpoint(self, endpoint_id: str) -> Endpoint:
        """One endpoint, or NOT_FOUND."""
        with self.store.transaction(commit=False) as statements:
            statements.execute("SELECT * FROM webhook_endpoints WHERE endpoint_id=?",
                               (endpoint_id,))
            row = statements.fetchone()
        if row is None:
            raise NotFound(ServiceReason.WEBHOOK_NOT_FOUND, f"no webhook {endpoint_id}")
        return Endpoint.from_row(row)

    def delete(self, endpoint_id: str) -> None:
        """Remove an endpoint and its dead letters (NOT_FOUND if there is none)."""
        self.endpoint(endpoint_id)
        with self.store.transaction() as statements:
            statements.execute("DELETE FROM webhook_dead_letters WHERE endpoint_id=?",
                               (endpoint_id,))
            statements.execute("DELETE FROM webhook_endpoints WHERE endpoint_id=?",
                               (endpoint_id,))

    def take_lease(self, endpoint_id: str, holder: str, seconds: float) -> bool:
        """Take or renew the endpoint's lease; False while another worker holds it."""
        now = time.time()
        with self.store.transaction() as statements:
            statements.execute(
                "UPDATE webhook_endpoints SET lease_holder=?, lease_until=?"
                " WHERE endpoint_id=? AND (lease_holder=? OR lease_holder IS NULL"
                " OR lease_until < ?)", (holder, now + seconds, endpoint_id, holder, now))
            statements.execute("SELECT lease_holder FROM webhook_endpoints WHERE endpoint_id=?",
                               (endpoint_id,))
            row = statements.fetchone()
        return row is not None and row["lease_holder"] == holder

    def release(self, endpoint_id: str, holder: str) -> None:
        """Give the lease up (a stopping server), so another replica takes over at once."""
        with self.store.transaction() as statements:
            statements.execute("UPDATE webhook_endpoints SET lease_holder=NULL, lease_until=0"
                               " WHERE endpoint_id=? AND lease_holder=?", (endpoint_id, holder))

    def advance(self, endpoint_id: str, holder: str, position: int) -> bool:
        """Record the endpoint's new position, if `holder` still holds its lease."""
        with self.store.transaction() as statements:
            statements.execute(
                "UPDATE webhook_endpoints SET position=? WHERE endpoint_id=? AND lease_holder=?"
                " AND lease_until >= ? AND position < ?",
                (position, endpoint_id, holder, time.time(), position))
            statements.execute("SELECT position, lease_holder FROM webhook_endpoints"
                               " WHERE endpoint_id=?", (endpoint_id,))
            row = statements.fetchone()
        return (row is not None and row["lease_holder"] == holder
                and int(row["position"]) == position)

    def dead_letter(self, endpoint_id: str, event: FeedEvent, attempts: int,
                    error: str) -> None:
        """Keep an event the endpoint did not take (or keep it again, after a redelivery)."""
        with self.store.transaction() as statements:
            statements.execute(
                "INSERT INTO webhook_dead_letters VALUES (?, ?, ?, ?, ?, ?, ?, 0)"
                " ON CONFLICT (endpoint_id, position) DO UPDATE SET"
                " attempts=webhook_dead_letters.attempts+excluded.attempts,"
                " last_error=excluded.last_error, failed_at=excluded.failed_at, redeliver=0",
                (endpoint_id, event.position, event_id(event), event.name, attempts,
                 error[:ERROR_TEXT_LENGTH], datetime.now(UTC).isoformat()))

    def dead_letters(self, endpoint_id: str, *, redeliver_only: bool = False,
                     after_position: int = 0, limit: int | None = None) -> list[DeadLetter]:
        """The endpoint's dead letters in feed order (after a position, at most `limit`)."""
        sql = "SELECT * FROM webhook_dead_letters WHERE endpoint_id=? AND position>?"
        if redeliver_only:
            sql += " AND redeliver=1"
        sql += " ORDER BY position"
        parameters: tuple[Any, ...] = (endpoint_id, after_position)
        if limit is not None:
            sql += " LIMIT ?"
            parameters += (limit,)
        with self.store.transaction(commit=False) as statements:
            statements.execute(sql, parameters)
            rows = statements.fetchall()
        return [DeadLetter(endpoint_id=r["endpoint_id"], position=int(r["position"]),
                           event_id=r["event_id"], event_name=r["event_name"],
                           attempts=int(r["attempts"]), last_error=r["last_error"],
                           failed_at=datetime.fromisoformat(r["failed_at"]),
                           redeliver=bool(r["redeliver"])) for r in rows]

    def redeliver(self, endpoint_id: str, event_ids: Iterable[str] = ()) -> int:
        """Mark dead letters (these ids, or all) for another delivery; return how many."""
        self.endpoint(endpoint_id)
        wanted = list(event_ids)
        sql = "UPDATE webhook_dead_letters SET redeliver=1 WHERE endpoint_id=?"
        parameters: list[Any] = [endpoint_id]
        if wanted:
            sql += f" AND event_id IN ({', '.join('?' * len(wanted))})"
            parameters.extend(wanted)
        with self.store.transaction() as statements:
            statements.execute(sql, parameters)
            statements.execute("SELECT COUNT(*) AS n FROM webhook_dead_letters"
                               " WHERE endpoint_id=? AND redeliver=1", (endpoint_id,))
            row = statements.fetchone()
        return int(row["n"]) if row is not None else 0

    def delivered_again(self, endpoint_id: str, position: int) -> None:
        """A redelivered dead letter was taken: forget it."""
        with self.store.transaction() as statements:
            statements.execute("DELETE FROM webhook_dead_letters WHERE endpoint_id=?"
                               " AND position=?", (endpoint_id, position))
