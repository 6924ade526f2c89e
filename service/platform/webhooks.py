"""Signed webhooks: every public event POSTed to the platform's endpoints, in feed order.

An endpoint is a URL, a secret, a key id and an optional list of event names, registered by
the platform (`RegisterWebhook`) and kept in the event store's database
(`webhook_endpoints`). Each endpoint is a process over the global feed with a position of
its own: its worker reads the public events after the position (the platform's view, the
same as `ReadEvents` — no cards), POSTs them one by one, and records how far it got at most
every `ADVANCE_SECONDS` (and when it stops), so delivery is **at least once** and **in feed
order** (hence in order per table): a referee killed between a POST and the position's
update sends those events again, with the same event ids. Writes are few on purpose: the
deliveries run in a process of their own (`service.platform.webhook_process`), and on SQLite every
write of theirs waits for, and holds up, the commands' appends (the file has one writer).

Delivery. A 2xx answer delivers the event. Anything else (another status, a timeout, a
refused connection) is retried after an exponential backoff with full jitter
(`backoff · 2^attempt`, capped, times a random fraction), holding back the endpoint's later
events; after `max_attempts` the event goes to the endpoint's dead letters
(`webhook_dead_letters`) and the worker moves on. `RedeliverWebhookEvents` marks dead letters
for another try; the worker sends those before new events.

Bounds. One attempt ends within `timeout` seconds whatever the endpoint does (connecting,
a trickled or never-ending answer); a redirect is a failure, not followed; at most
`MAX_ANSWER_BYTES` of an answer are read. The referee connects only to addresses the policy
allows (`address_allowed`), looked up and checked for each new connection, on the address it
connects to: a name that resolves to a private or loopback address after registration (DNS
rebinding) gets nothing.

Replicas. A worker runs only while it holds its endpoint's lease (`lease_holder`,
`lease_until`, renewed once a third of it has passed, taken over when it runs out): on
PostgreSQL the replicas share the endpoints and each endpoint is served by one of them at a
time; on SQLite one referee serves them all. Every write of the position checks the lease in
the same statement, so a worker that lost its lease (a long pause) stops without moving
anyone's position.

Signature (like Stripe's): header `Fiftyk-Signature: t=<unix seconds>,kid=<key id>,v1=<hex>`
where `v1` is HMAC-SHA256 keyed with the endpoint's secret over `<t>.<body>`. Receivers check
it against the raw body and refuse a `t` outside their replay window; `verify_signature` is
the reference, and docs/integrating.md has a standalone copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import ipaddress
import json
import logging
import random
import secrets
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpcore
import httpx
from google.protobuf.json_format import MessageToDict

from fiftyk_referee.domain.observer import SPECTATOR
from fiftyk_referee.domain.table_events import TABLE_EVENTS, HandStarted
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.public_events import PUBLIC_EVENTS, FeedEvent, feed_event
from fiftyk_referee.service.errors import (
    AlreadyExists,
    FieldViolation,
    InvalidArgument,
    NotFound,
    ResourceExhausted,
    ServiceError,
    ServiceReason,
)
from fiftyk_referee.service.grpc.events import event_to_proto
from fiftyk_referee.service.ops.webhook_settings import WebhookSettings
from fiftyk_referee.service.platform.process_store import (
    INTEGRITY_ERRORS,
    STORE_ERRORS,
    ProcessStore,
    datastore_of,
)

SIGNATURE_HEADER = "Fiftyk-Signature"
EVENT_ID_HEADER = "Fiftyk-Event-Id"
EVENT_NAME_HEADER = "Fiftyk-Event-Name"
SIGNATURE_SCHEME = "v1"
DEFAULT_REPLAY_WINDOW_SECONDS = 300
EVENT_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://fiftyk-referee/webhook-event")
MAX_ENDPOINTS = 32  # a metric label per endpoint: bounded
MAX_URL_LENGTH = 2048
MAX_DESCRIPTION_LENGTH = 256
SECRET_BYTES = 32
LOOPBACK_NAMES = frozenset({"localhost"})
SUCCESS = range(200, 300)
ERROR_TEXT_LENGTH = 200
USER_AGENT = "fiftyk-referee-webhooks/1"
ADVANCE_SECONDS = 0.5  # how often a busy endpoint's position is written
RENEW_FRACTION = 1 / 3  # a lease is renewed once this part of it has passed
# Read from an answer (and dropped): a small body is drained, so the connection is kept
# alive; a longer one closes the connection instead of being read to its end.
MAX_ANSWER_BYTES = 64 * 1024
NAT64_PREFIX = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix
IPV4_BITS = 0xFFFFFFFF
log = logging.getLogger(__name__)
# What a worker survives by starting over later: the store not answering.
RETRIED_FAILURES: tuple[type[Exception], ...] = (*STORE_ERRORS, ServiceError)

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


# -- signatures --------------------------------------------------------------------------------


def signature_header(secret: str, key_id: str, timestamp: int, body: bytes) -> str:
    """The `Fiftyk-Signature` header value for a body sent at `timestamp`."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},kid={key_id},{SIGNATURE_SCHEME}={mac.hexdigest()}"


def verify_signature(secrets_by_key: dict[str, str], header: str, body: bytes, *,
                     now: float | None = None,
                     window_seconds: int = DEFAULT_REPLAY_WINDOW_SECONDS) -> bool:
    """Whether `header` signs `body` with one of the receiver's secrets, within the window."""
    fields: dict[str, str] = {}
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        fields.setdefault(name, value)
    secret = secrets_by_key.get(fields.get("kid", ""))
    if secret is None or not fields.get("t", "").isdigit():
        return False
    timestamp = int(fields["t"])
    if abs((time.time() if now is None else now) - timestamp) > window_seconds:
        return False
    expected = signature_header(secret, fields["kid"], timestamp, body).rpartition("=")[2]
    return hmac.compare_digest(expected, fields.get(SIGNATURE_SCHEME, ""))


def event_id(event: FeedEvent) -> str:
    """A delivery's stable id: the same for every attempt and every replica."""
    return str(uuid.uuid5(EVENT_ID_NAMESPACE, f"{event.aggregate_id}/{event.aggregate_version}"))


# -- endpoints ---------------------------------------------------------------------------------


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


def address_allowed(url_host: str, address: str, *, private: bool = False,
                    loopback: bool = True) -> bool:
    """Whether a delivery to an endpoint whose URL names `url_host` may connect to `address`.

    Public (global unicast) addresses are allowed; a loopback address only when the URL itself
    names loopback and loopback endpoints are allowed at all (`loopback`: on a server bound to
    loopback, or by the operator's consent off it); private networks (RFC 1918, unique local,
    shared address space) only when the operator allows them (`private`). Link-local addresses
    (where cloud metadata services answer), multicast, unspecified and reserved ones never."""
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])  # an IPv6 zone is not an address
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address):
        ip = _embedded_ipv4(ip) or ip
    if ip.is_loopback:
        return loopback and _is_loopback(url_host)
    if ip.is_link_local or ip.is_multicast or ip.is_unspecified or ip.is_reserved:
        return False
    return ip.is_global or private


def check_url(url: str, *, private: bool = False, loopback: bool = True) -> str:
    """An endpoint URL: HTTPS, or plain HTTP to a loopback address, never naming an address
    deliveries may not go to (loopback only with `loopback`); else INVALID_REQUEST."""
    def refuse(problem: str) -> InvalidArgument:
        return InvalidArgument(ServiceReason.INVALID_REQUEST, f"url {problem}",
                               field_violations=[FieldViolation("url", problem)])

    if len(url) > MAX_URL_LENGTH:
        raise refuse(f"is longer than {MAX_URL_LENGTH} characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError:
        raise refuse("is not a URL") from None
    if not host or parts.username or parts.password:
        raise refuse("needs a host and no user or password")
    if _is_loopback(host) and not loopback:
        raise refuse("names loopback, which a server bound off loopback does not deliver to"
                     " unless the operator allows it (FIFTYK_WEBHOOKS loopback=1)")
    if _is_address(host) and not address_allowed(host, host, private=private):
        raise refuse("names an address deliveries may not go to (private, link-local or"
                     " reserved)")
    if parts.scheme == "https":
        return url
    if parts.scheme == "http" and _is_loopback(host):
        return url
    raise refuse("must be https:// (plain http:// only to a loopback address)")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, 6to4, NAT64), judged in its place."""
    if ip.ipv4_mapped is not None or ip.sixtofour is not None:
        return ip.ipv4_mapped or ip.sixtofour
    if ip in NAT64_PREFIX:
        return ipaddress.IPv4Address(int(ip) & IPV4_BITS)
    return None


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _is_loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


# -- delivery ----------------------------------------------------------------------------------


class WebhookMetrics(Protocol):
    """What the dispatcher reports (`service.ops.metrics.Metrics` provides it)."""

    def serve_webhook(self, endpoint: str) -> None:
        """This replica serves the endpoint: its series exist from now on, at zero."""

    def webhook_delivered(self, endpoint: str, lag_seconds: float) -> None:
        """Count a delivery and observe how long after the event it arrived."""

    def webhook_failed(self, endpoint: str) -> None:
        """Count a failed attempt."""

    def webhook_retried(self, endpoint: str) -> None:
        """Count an attempt after a failed one."""

    def webhook_dead_lettered(self, endpoint: str) -> None:
        """Count an event moved to the dead letters."""

    def set_webhook_lag(self, endpoint: str, events: int, seconds: float) -> None:
        """Set how far behind the feed the endpoint is."""

    def forget_webhook(self, endpoint: str) -> None:
        """This replica no longer serves the endpoint: drop its gauges."""


def payload(event: FeedEvent, table_id: str) -> dict[str, Any]:
    """The JSON body of one delivery: an envelope and the event as `ReadEvents` shows it."""
    message = event_to_proto(event, event.public(SPECTATOR))
    return {
        "id": event_id(event),
        "name": event.name,
        "position": event.position,
        "table_id": table_id,
        "created_at": event.timestamp.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "event": MessageToDict(message, preserving_proto_field_name=True),
    }


class Deadline:
    """When the attempt under way must end (monotonic seconds)."""

    def __init__(self) -> None:
        self.until = 0.0

    def left(self, timeout: float | None) -> float:
        """The time an I/O step may take: the smaller of its timeout and what is left."""
        left = self.until - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout("the attempt's time is up")
        return left if timeout is None else min(timeout, left)


class _BoundedStream(httpcore.NetworkStream):
    """A connection whose every read and write ends by the attempt's deadline."""

    def __init__(self, stream: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._stream = stream
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._deadline.left(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _BoundedStream(self._stream.start_tls(ssl_context, server_hostname,
                                                     self._deadline.left(timeout)),
                              self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _CheckedBackend(httpcore.NetworkBackend):
    """Opens connections only to addresses the policy allows, looked up and checked at each
    connection (so a name cannot be rebound between the check and the connection), and
    bounds each connection's I/O by the attempt's deadline."""

    def __init__(self, deadline: Deadline, private: bool, loopback: bool) -> None:
        self._deadline = deadline
        self._private = private
        self._loopback = loopback
        self._backend = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        if _is_address(host):
            addresses = [host]
        else:
            try:
                found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            except socket.gaierror as error:
                raise httpcore.ConnectError(f"{host} does not resolve: {error.strerror}"
                                            ) from None
            addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
        allowed = [a for a in addresses if address_allowed(
            host, a, private=self._private, loopback=self._loopback)]
        if not allowed:
            raise AddressRefused(f"{host} resolves only to addresses deliveries may"
                                        f" not go to ({', '.join(addresses)})")
        stream = self._backend.connect_tcp(allowed[0], port, self._deadline.left(timeout),
                                           local_address, socket_options)
        return _BoundedStream(stream, self._deadline)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("webhooks are delivered over TCP only")

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


@dataclass(frozen=True)
class Attempt:
    """One POST's outcome. `error` is "" when the endpoint took the event, else what the
    dead letter keeps: generic on purpose (a status class, "no HTTP answer"), so the platform
    cannot map the operator's network through its dead letters; `detail` says exactly what
    went wrong, for the server's log."""

    error: str = ""
    detail: str = ""


class AddressRefused(httpcore.ConnectError):
    """A connection the address policy refused (nothing was sent)."""


# What a dead letter says of an attempt that got no HTTP answer (the detail is logged).
NO_ANSWER = "no HTTP answer (the connection failed or the answer was not HTTP)"
ADDRESS_REFUSED = "the endpoint resolves only to addresses deliveries may not go to"


class Sender:
    """Sends one endpoint's POSTs, each attempt bounded as the module says.

    Straight on httpcore's connection pool (HTTP/1.1, keep-alive, TLS), over the checked
    backend: no redirects are followed and no proxy from the environment is used (one would
    connect to the host itself, past the address check)."""

    def __init__(self, url: str, timeout: float, *, private: bool = False,
                 loopback: bool = True) -> None:
        self.url = url
        self.timeout = timeout
        self._deadline = Deadline()
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            network_backend=_CheckedBackend(self._deadline, private, loopback))
        self._extensions = {"timeout": dict.fromkeys(("connect", "read", "write", "pool"),
                                                     timeout)}

    def post(self, body: bytes, headers: dict[str, str]) -> Attempt:
        """One attempt: an empty Attempt when the endpoint took it (2xx), else what went
        wrong (see `Attempt`)."""
        self._deadline.until = time.monotonic() + self.timeout
        try:
            with self._pool.stream("POST", self.url, content=body,
                                   headers=[("User-Agent", USER_AGENT), *headers.items()],
                                   extensions=self._extensions) as response:
                read = 0
                for chunk in response.iter_stream():
                    read += len(chunk)
                    if read > MAX_ANSWER_BYTES:
                        break  # the rest is not read: closing drops the connection
        except httpcore.TimeoutException as error:
            text = f"no answer within {self.timeout:g} s"
            return Attempt(text, f"{text} ({type(error).__name__})")
        except AddressRefused as error:
            return Attempt(ADDRESS_REFUSED, f"{_kind(error)}: {error}")
        except HTTP_ERRORS as error:
            return Attempt(NO_ANSWER, f"{_kind(error)}: {error}")
        if response.status in SUCCESS:
            return Attempt()
        return Attempt(f"HTTP {response.status // 100}xx", f"HTTP {response.status}")

    def close(self) -> None:
        """Close the connections."""
        self._pool.close()


# What an attempt that got no HTTP answer raises (a timeout apart).
HTTP_ERRORS: tuple[type[Exception], ...] = (
    httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol,
    httpcore.ConnectionNotAvailable)


def _kind(error: Exception) -> str:
    """The httpcore name of an error (`ConnectError` for an address refused)."""
    return next(kind.__name__ for kind in type(error).__mro__
                if kind.__module__.startswith("httpcore"))


class Stopped(Exception):
    """The worker must stop: the server stops, the lease or the endpoint is gone."""


class EndpointWorker:
    """Delivers one endpoint's events while it holds the endpoint's lease."""

    def __init__(self, dispatcher: WebhookDispatcher, endpoint: Endpoint) -> None:
        self.dispatcher = dispatcher
        self.endpoint = endpoint
        self.settings = dispatcher.settings
        self.store = dispatcher.store
        self.app = dispatcher.app
        self._rng = random.Random()
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"webhook-{endpoint.endpoint_id[:8]}")
        self._topics = PUBLIC_EVENTS.topics(endpoint.events)
        self._tables: dict[str, str] = {}  # hand id -> table id, as hands start
        self.wake = threading.Event()
        self._renewed = -float("inf")  # monotonic time of the last renewal
        self._recorded = endpoint.position  # the position last written
        self._position = endpoint.position  # the position delivered up to
        self._written = time.monotonic()  # when it was

    def _run(self) -> None:
        holder = self.dispatcher.holder
        client = Sender(self.endpoint.url, self.settings.timeout,
                        private=self.settings.private,
                        loopback=self.settings.loopback is not False)
        if self.dispatcher.metrics is not None:
            self.dispatcher.metrics.serve_webhook(self.endpoint.endpoint_id)
        try:
            self._recorded = self._position = self.store.endpoint(
                self.endpoint.endpoint_id).position
            while not self.dispatcher.stopping.is_set():
                self._renew()
                self._redeliver(client)
                self._step(client)
        except Stopped:
            pass
        except NotFound:  # deleted meanwhile
            pass
        except RETRIED_FAILURES as error:
            log.warning("webhook %s: the store did not answer (%s); another round retries",
                        self.endpoint.endpoint_id, error)
        finally:
            client.close()
            if self.dispatcher.metrics is not None:
                self.dispatcher.metrics.forget_webhook(self.endpoint.endpoint_id)
            if self.dispatcher.stopping.is_set():
                # The last position (else its events are sent again after a restart), then
                # the lease (else it runs out by itself).
                with contextlib.suppress(Stopped, *STORE_ERRORS):
                    if self._position != self._recorded:
                        self._advance(self._position)
                with contextlib.suppress(*STORE_ERRORS):
                    self.store.release(self.endpoint.endpoint_id, holder)
            self.dispatcher.worker_done(self.endpoint.endpoint_id)

    def _renew(self) -> None:
        """Renew the lease once a third of it has passed (a write each time)."""
        now = time.monotonic()
        if now - self._renewed < self.settings.lease * RENEW_FRACTION:
            return
        if not self.store.take_lease(self.endpoint.endpoint_id, self.dispatcher.holder,
                                     self.settings.lease):
            raise Stopped
        self._renewed = now

    def _step(self, client: Sender) -> None:
        """Deliver the next page of events after the endpoint's position."""
        position = self._position
        head = self.app.head_position()
        notifications = self.app.recorder.select_notifications(
            start=position, limit=self.settings.batch, stop=head, topics=self._topics,
            inclusive_of_start=False)
        events = [e for n in notifications
                  if (e := feed_event(self.app.mapper.to_domain_event(n), n.id)) is not None]
        for index, event in enumerate(events):
            self._report_lag(head, position, events[index:])
            self._renew()  # a page of slow answers may take longer than the lease
            self._deliver_or_dead_letter(client, event)
            position = self._position = event.position
            self._advance_now_and_then(position)
        caught_up = len(notifications) < self.settings.batch
        if caught_up:
            position = self._position = head  # nothing else for this endpoint up to the head
        self._advance_now_and_then(position)
        self._report_lag(head, position, [])
        if caught_up:
            self.wake.wait(self.settings.poll)
            self.wake.clear()

    def _advance_now_and_then(self, position: int) -> None:
        """Write the position if it moved and ADVANCE_SECONDS passed since the last write (a
        write per event, or per look at the feed, would bound an endpoint to the store's
        commit rate and hold up the commands' appends): a crash sends at most that much
        again, with the same ids."""
        if position != self._recorded and time.monotonic() - self._written >= ADVANCE_SECONDS:
            self._advance(position)

    def _advance(self, position: int) -> None:
        if not self.store.advance(self.endpoint.endpoint_id, self.dispatcher.holder, position):
            raise Stopped
        self._recorded, self._written = position, time.monotonic()

    def _report_lag(self, head: int, position: int, pending: Sequence[FeedEvent]) -> None:
        """Report the lag: feed positions to the head, and the age of the oldest pending."""
        metrics = self.dispatcher.metrics
        if metrics is None:
            return
        seconds = ((datetime.now(UTC) - pending[0].timestamp).total_seconds()
                   if pending else 0.0)
        metrics.set_webhook_lag(self.endpoint.endpoint_id, max(0, head - position), seconds)

    def _table_of(self, event: FeedEvent) -> str:
        public = event.public(SPECTATOR)
        if isinstance(public, HandStarted):
            self._tables[public.hand_id] = event.aggregate_id
        if TABLE_EVENTS.kind_named(event.name) is not None:
            return event.aggregate_id
        table_id = self._tables.get(event.aggregate_id)
        if table_id is None:
            table_id = self.app.get_hand(event.aggregate_id).table_id
            self._tables[event.aggregate_id] = table_id
        return table_id

    def _body(self, event: FeedEvent) -> bytes:
        """The delivery's body: the same bytes for every attempt, from any replica (keys
        sorted: protobuf's maps iterate in no fixed order)."""
        return json.dumps(payload(event, self._table_of(event)), separators=(",", ":"),
                          ensure_ascii=False, sort_keys=True).encode()

    def _deliver_or_dead_letter(self, client: Sender, event: FeedEvent) -> None:
        body = self._body(event)
        attempts, failure = self._attempts(client, event, body, self.settings.attempts)
        if failure.error:
            self._dead_letter(event, attempts, failure)

    def _dead_letter(self, event: FeedEvent, attempts: int, failure: Attempt) -> None:
        """Keep the event as a dead letter (its generic error) and log what went wrong."""
        self.store.dead_letter(self.endpoint.endpoint_id, event, attempts, failure.error)
        if self.dispatcher.metrics is not None:
            self.dispatcher.metrics.webhook_dead_lettered(self.endpoint.endpoint_id)
        log.warning("webhook %s: event %s dead-lettered after %d attempts: %s",
                    self.endpoint.endpoint_id, event_id(event), attempts, failure.detail)

    def _attempts(self, client: Sender, event: FeedEvent, body: bytes,
                  limit: int) -> tuple[int, Attempt]:
        """POST until taken or `limit` attempts; (attempts, the last attempt)."""
        metrics = self.dispatcher.metrics
        failure = Attempt()
        for attempt in range(1, limit + 1):
            if self.dispatcher.stopping.is_set():
                raise Stopped
            if attempt > 1 and metrics is not None:
                metrics.webhook_retried(self.endpoint.endpoint_id)
            failure = self._post(client, event, body)
            if not failure.error:
                if metrics is not None:
                    lag = (datetime.now(UTC) - event.timestamp).total_seconds()
                    metrics.webhook_delivered(self.endpoint.endpoint_id, lag)
                return attempt, failure
            if metrics is not None:
                metrics.webhook_failed(self.endpoint.endpoint_id)
            log.info("webhook %s: attempt %d of event %s failed: %s",
                     self.endpoint.endpoint_id, attempt, event_id(event), failure.detail)
            if attempt < limit:
                pause = self.settings.pause(attempt, self._rng)
                if self.dispatcher.stopping.wait(pause):
                    raise Stopped
                self._renew()
        return limit, failure

    def _post(self, client: Sender, event: FeedEvent, body: bytes) -> Attempt:
        """One attempt (see `Attempt`)."""
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature_header(self.endpoint.secret, self.endpoint.key_id,
                                               int(time.time()), body),
            EVENT_ID_HEADER: event_id(event),
            EVENT_NAME_HEADER: event.name,
        }
        return client.post(body, headers)

    def _redeliver(self, client: Sender) -> None:
        """Send the dead letters marked for redelivery (one attempt cycle each)."""
        for letter in self.store.dead_letters(self.endpoint.endpoint_id, redeliver_only=True):
            notifications = self.app.recorder.select_notifications(
                start=letter.position, limit=1, inclusive_of_start=True)
            stored = [e for n in notifications[:1] if n.id == letter.position
                      if (e := feed_event(self.app.mapper.to_domain_event(n), n.id))]
            if not stored:  # pragma: no cover - a stored event never disappears
                self.store.delivered_again(self.endpoint.endpoint_id, letter.position)
                continue
            event = stored[0]
            body = self._body(event)
            attempts, failure = self._attempts(client, event, body, self.settings.attempts)
            if failure.error:  # a dead letter again (counted once, when it first was)
                self.store.dead_letter(self.endpoint.endpoint_id, event, attempts,
                                       failure.error)
                log.warning("webhook %s: event %s failed its redelivery: %s",
                            self.endpoint.endpoint_id, event_id(event), failure.detail)
            else:
                self.store.delivered_again(self.endpoint.endpoint_id, letter.position)


class WebhookDispatcher:
    """Runs a worker for every endpoint whose lease this process holds."""

    def __init__(self, app: Referee, store: WebhookStore, settings: WebhookSettings, *,
                 metrics: WebhookMetrics | None = None, holder: str | None = None) -> None:
        self.app = app
        self.store = store
        self.settings = settings
        self.metrics = metrics
        # Who holds the leases: one name per server, so that a delivery process restarted by
        # its server takes its endpoints back at once instead of waiting for the leases.
        self.holder = holder or str(uuid.uuid4())
        self.stopping = threading.Event()
        self._workers: dict[str, EndpointWorker] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def poke(self, events: object = None) -> None:
        """New events are in the feed (a feed hub listener): wake the workers."""
        del events
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            worker.wake.set()

    def start(self) -> None:
        """Look for endpoints to serve until `stop`."""
        self._thread = threading.Thread(target=self._supervise, name="webhooks", daemon=True)
        self._thread.start()

    def _supervise(self) -> None:
        while not self.stopping.is_set():
            try:
                self._claim_endpoints()
            except RETRIED_FAILURES as error:
                log.warning("webhooks: the store did not answer (%s); retrying", error)
            self.stopping.wait(self.settings.poll)

    def _claim_endpoints(self) -> None:
        for endpoint in self.store.endpoints():
            with self._lock:
                if endpoint.endpoint_id in self._workers:
                    continue
            if not self.store.take_lease(endpoint.endpoint_id, self.holder,
                                         self.settings.lease):
                continue
            worker = EndpointWorker(self, endpoint)
            with self._lock:
                self._workers[endpoint.endpoint_id] = worker
            worker.thread.start()

    def worker_done(self, endpoint_id: str) -> None:
        """A worker ended (lease lost, endpoint deleted, stopping)."""
        with self._lock:
            self._workers.pop(endpoint_id, None)

    def serving(self) -> list[str]:
        """The endpoints this process delivers to now."""
        with self._lock:
            return sorted(self._workers)

    def stop(self) -> None:
        """Stop every worker (an attempt in flight finishes or times out) and give the
        leases back."""
        self.stopping.set()
        self.poke()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            workers = list(self._workers.values())
        for worker in workers:
            worker.thread.join()

__all__ = [
    "EVENT_ID_HEADER",
    "EVENT_NAME_HEADER",
    "SIGNATURE_HEADER",
    "DeadLetter",
    "Endpoint",
    "WebhookDispatcher",
    "WebhookMetrics",
    "WebhookStore",
    "address_allowed",
    "check_url",
    "event_id",
    "payload",
    "signature_header",
    "verify_signature",
]
