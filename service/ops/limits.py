"""What one caller may consume: call rates (token buckets) and open watch streams.

Rates are set per role (`player`, `audit`, `platform`, `anonymous`) and per RPC class:

- `create`: CreateTable, JoinTable, ReplaceSeat, ReissueSeatToken, RegisterWebhook,
  DeleteWebhook, RedeliverWebhookEvents — new tables, seats, seat tokens and webhooks;
- `command`: LeaveTable, StartHand, ContributeEntropy, Act and its aliases Play, Pass,
  Resign and the games' legacy RPCs (`GameBundle.legacy_rpcs`), CloseTable, AbortTable,
  AddCosignature;
- `read`: GetTable, GetHandView, ListLegalPlays, GetScores, GetHandHistory, GetHandAt,
  ExportTranscript, ReadEvents, GetFeedHead, ListTables, ListWebhooks,
  ListWebhookDeadLetters, GetCheckpoint;
- `adjudicate`: Adjudicate, VerifyHand (re-rule a whole transcript: the costliest calls);
- `watch`: opening a WatchTable stream.

Each credential has a bucket per class: `rate` tokens a second, up to `burst` saved up; a
call takes one token or is refused with the time until one is there. The credential is the
seat (table, seat, player) for seat tokens, the role for the audit and platform keys, and
the client address for calls without a valid credential (`service.grpc.callers`: the peer's,
or the one a trusted proxy forwarded). Every call also takes a token of its client
address's bucket (`peer`, all classes together: 2,000 a second, 4,000 at once), so
many credentials from one address do not multiply its rates. `FIFTYK_RATE_LIMITS` overrides
entries — `player.command=20/40,platform.create=100/500,peer=500/1000` — or turns them off
(`off`, `role.class=off`, `peer=off`).

Watch streams are counted while open: per seat token, per key credential (audit, platform),
per table and per server (`FIFTYK_WATCH_LIMITS`, e.g. `seat=4,key=256,table=64,server=2000`);
`reserved` (16) of a table's slots are its seats' own, which audit and platform keys and
spectators cannot take.

Below authentication, `TransportLimits` bound what any peer can hold before it has shown a
credential: streams per connection, connections per server, idle and old connections, the
HTTP/2 ping policy, how long each request message may take to arrive and how many calls one
caller (a verified credential, else a client address) may have waiting for one
(`FIFTYK_TRANSPORT_LIMITS`, e.g. `streams=512,idle=300`).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from fiftyk_referee.service.errors import RateLimited, ResourceExhausted, ServiceReason

ROLES = ("player", "spectator", "audit", "platform", "anonymous")
RPC_CLASSES = ("create", "command", "read", "adjudicate", "watch")
METHOD_CLASSES: Mapping[str, str] = {
    "CreateTable": "create", "JoinTable": "create", "IssueSpectatorToken": "create",
    "LeaveTable": "command", "StartHand": "command", "Play": "command", "Pass": "command",
    "Resign": "command", "Act": "command",
    "ContributeEntropy": "command",
    "GetTable": "read", "GetHandView": "read", "ListLegalPlays": "read", "GetScores": "read",
    "GetHandHistory": "read", "GetHandAt": "read", "ExportTranscript": "read",
    "ReadEvents": "read", "GetFeedHead": "read", "ListTables": "read",
    "CloseTable": "command", "AbortTable": "command", "ReplaceSeat": "create",
    "ReissueSeatToken": "create", "RegisterWebhook": "create", "DeleteWebhook": "create",
    "RedeliverWebhookEvents": "create", "ListWebhooks": "read",
    "ListWebhookDeadLetters": "read", "GetCheckpoint": "read",
    "AddCosignature": "command",
    "Adjudicate": "adjudicate", "VerifyHand": "adjudicate",
    "WatchTable": "watch",
}


def method_class(method: str, game_rpcs: Callable[[], Collection[str]] = frozenset
                 ) -> str | None:
    """The class of a method of the Referee service (a game's legacy RPC, one of
    `game_rpcs()`, is a command); None for a method it does not have."""
    known = METHOD_CLASSES.get(method)
    if known is None and method in game_rpcs():
        return "command"
    return known


OFF = "off"
# Buckets kept per limiter (the least recently used is dropped; see RateLimiter).
MAX_BUCKETS = 100_000


@dataclass(frozen=True)
class Rate:
    """`per_second` tokens a second, at most `burst` saved."""

    per_second: float
    burst: float


def _rates(create: Rate, command: Rate, read: Rate, adjudicate: Rate,
           watch: Rate) -> dict[str, Rate]:
    return {"create": create, "command": command, "read": read, "adjudicate": adjudicate,
            "watch": watch}


# Every call from one peer address, whatever its credential: 16 seat tokens from one process
# no longer add up to 16 times a seat's rates. Above a platform's busiest class, so one
# platform server is not held up; behind a proxy every caller is the proxy's address (raise
# it, or `peer=off`, and limit per address in the proxy).
PEER = "peer"
PEER_CLASS = "total"
DEFAULT_PEER_RATE = Rate(2000, 4000)

# A seat acts only on its turn, but four bots playing one table flat out reach a few
# hundred commands a second between them on a fast machine, each with a read or two: a
# seat's buckets hold that with room to spare. A platform runs many tables. Generous for
# honest use, and a stop for the floods the hardening review reproduced (4,959 tables in
# 12 s).
DEFAULT_RATES: Mapping[str, Mapping[str, Rate]] = {
    "player": _rates(Rate(5, 10), Rate(200, 400), Rate(400, 800), Rate(2, 5), Rate(10, 30)),
    "audit": _rates(Rate(5, 10), Rate(5, 10), Rate(500, 1000), Rate(20, 50), Rate(50, 200)),
    "platform": _rates(Rate(20, 100), Rate(500, 1000), Rate(1000, 2000), Rate(20, 50),
                       Rate(50, 200)),
    # A spectator only reads and watches one table.
    "spectator": _rates(Rate(1, 2), Rate(1, 2), Rate(20, 40), Rate(2, 5), Rate(2, 5)),
    "anonymous": _rates(Rate(5, 10), Rate(5, 10), Rate(10, 20), Rate(2, 5), Rate(2, 5)),
}


@dataclass(frozen=True)
class WatchLimits:
    """Most WatchTable streams open at once: per seat token, per key credential (audit or
    platform), per table and per server; `reserved` of a table's are for its seats' tokens
    (everyone else — audit and platform keys, spectators — may hold at most
    `table - reserved` together, so they cannot lock the seats out).
    """

    seat: int = 4
    key: int = 256
    table: int = 64
    server: int = 2000
    reserved: int = 16  # four seats' worth of the per-seat limit

    @property
    def others_per_table(self) -> int:
        """A table's streams that callers other than its seats may hold together (>= 1)."""
        return max(1, self.table - self.reserved)


@dataclass(frozen=True)
class TransportLimits:
    """What a peer may hold below authentication (seconds, or counts).

    The gRPC channel arguments they become are set in `service.server`; `request` and
    `pending` are enforced by `service.grpc.arrival`.
    """

    # HTTP/2 streams open at once on one connection (gRPC's default is unbounded); above the
    # 256 watch streams one key may hold, so a platform's unary calls never queue behind them.
    streams: int = 512
    # Connections open at once on the server; 0: the file-descriptor limit less a reserve
    # for the database, the metrics port and files, so accepting never exhausts descriptors.
    connections: int = 0
    idle: float = 300.0  # a connection without calls for this long is closed
    age: float = 3600.0  # a connection this old is asked to go away (GOAWAY) ...
    age_grace: float = 300.0  # ... and closed this much later, calls in flight or not
    keepalive: float = 60.0  # the server pings a quiet connection this often ...
    keepalive_timeout: float = 20.0  # ... and closes it when no answer comes in this time
    ping_interval: float = 20.0  # a client pinging more often than this earns a strike ...
    ping_strikes: int = 2  # ... and after this many the connection is closed (GOAWAY)
    request: float = 10.0  # the longest each request message of a call may take to arrive
    # Calls one caller may have waiting for a request message: a verified credential's own,
    # else its client address's (service.grpc.callers).
    pending: int = 64


_TRANSPORT_INTEGERS = frozenset({"streams", "connections", "ping_strikes", "pending"})


class LimitSpecError(ValueError):
    """A malformed limit setting; the message says which entry and why."""


def _rate_entries(text: str) -> list[str]:
    return [entry.strip() for entry in text.split(",") if entry.strip()]


def parse_peer_rate(text: str) -> Rate | None:
    """The per-peer total rate: the default, `text`'s `peer=RATE/BURST` or `peer=off`
    (None: no limit), or none at all when `text` is `off`."""
    entries = _rate_entries(text)
    if entries == [OFF]:
        return None
    rate: Rate | None = DEFAULT_PEER_RATE
    for entry in entries:
        key, _, value = entry.partition("=")
        if key.strip() == PEER:
            rate = _parse_rate(entry, value.strip())
    return rate


def parse_rate_limits(text: str) -> dict[str, dict[str, Rate | None]]:
    """Rates per role and class: the defaults with `text`'s entries applied (None: no limit)."""
    rates: dict[str, dict[str, Rate | None]] = {
        role: dict(classes) for role, classes in DEFAULT_RATES.items()}
    entries = _rate_entries(text)
    if entries == [OFF]:
        return {role: dict.fromkeys(RPC_CLASSES) for role in ROLES}
    for entry in entries:
        if entry.partition("=")[0].strip() == PEER:
            _parse_rate(entry, entry.partition("=")[2].strip())  # checked; parse_peer_rate
            continue
        key, sep, value = entry.partition("=")
        role, dot, rpc_class = key.strip().partition(".")
        if not sep or not dot or role not in ROLES or rpc_class not in RPC_CLASSES:
            raise LimitSpecError(
                f"{entry!r}: write role.class=RATE/BURST or role.class=off, with a role of"
                f" {', '.join(ROLES)} and a class of {', '.join(RPC_CLASSES)}"
                f" (or {PEER}=RATE/BURST for every call from one address)")
        rates[role][rpc_class] = _parse_rate(entry, value.strip())
    return rates


def _parse_rate(entry: str, value: str) -> Rate | None:
    if value == OFF:
        return None
    per_second, slash, burst = value.partition("/")
    try:
        rate = Rate(float(per_second), float(burst) if slash else float(per_second))
    except ValueError:
        raise LimitSpecError(f"{entry!r}: {value!r} is not RATE/BURST (calls a second,"
                             " calls saved up)") from None
    if not (rate.per_second > 0 and rate.burst >= 1):
        raise LimitSpecError(f"{entry!r}: the rate must be positive and the burst at least 1")
    return rate


def parse_watch_limits(text: str) -> WatchLimits:
    """Watch limits: the defaults with `text`'s `scope=N` entries applied."""
    values = dict(WatchLimits().__dict__)
    given: set[str] = set()
    for entry in (e.strip() for e in text.split(",") if e.strip()):
        scope, sep, number = (part.strip() for part in entry.partition("="))
        if not sep or scope not in values:
            raise LimitSpecError(f"{entry!r}: write scope=N with a scope of"
                                 f" {', '.join(values)}")
        try:
            values[scope] = int(number)
        except ValueError:
            raise LimitSpecError(f"{entry!r}: {number!r} is not a whole number") from None
        least = 0 if scope == "reserved" else 1
        if values[scope] < least:
            raise LimitSpecError(f"{entry!r}: {scope} is at least {least}")
        given.add(scope)
    # Only a reserve the operator chose is held to the table's size (others_per_table keeps
    # one slot for them when a smaller table limit meets the default reserve).
    if "reserved" in given and values["reserved"] >= values["table"]:
        raise LimitSpecError(f"reserved={values['reserved']} leaves no watch slot of a table"
                             f" (table={values['table']}) to anyone but its seats")
    return WatchLimits(**values)


def parse_transport_limits(text: str) -> TransportLimits:
    """Transport limits: the defaults with `text`'s `name=VALUE` entries applied."""
    values: dict[str, float] = dict(TransportLimits().__dict__)
    for entry in (e.strip() for e in text.split(",") if e.strip()):
        name, sep, number = (part.strip() for part in entry.partition("="))
        if not sep or name not in values:
            raise LimitSpecError(f"{entry!r}: write name=VALUE with a name of"
                                 f" {', '.join(values)}")
        try:
            value = int(number) if name in _TRANSPORT_INTEGERS else float(number)
        except ValueError:
            kind = "a whole number" if name in _TRANSPORT_INTEGERS else "a number of seconds"
            raise LimitSpecError(f"{entry!r}: {number!r} is not {kind}") from None
        least = 0 if name == "connections" else (1 if name in _TRANSPORT_INTEGERS else 0.001)
        if not value >= least or value == float("inf"):
            raise LimitSpecError(f"{entry!r}: {name} is at least {least:g}")
        values[name] = value
    return TransportLimits(**values)  # type: ignore[arg-type]  # ints and floats by name


class TokenBucket:
    """`rate.per_second` tokens a second, holding at most `rate.burst`; starts full."""

    __slots__ = ("_rate", "_stamp", "_tokens")

    def __init__(self, rate: Rate, now: float) -> None:
        self._rate = rate
        self._tokens = rate.burst
        self._stamp = now

    def take(self, now: float) -> float:
        """Take a token: 0.0 when there was one, else the seconds until there will be."""
        rate = self._rate
        self._tokens = min(rate.burst, self._tokens + (now - self._stamp) * rate.per_second)
        self._stamp = now
        if self._tokens >= 1:
            self._tokens -= 1
            return 0.0
        return (1 - self._tokens) / rate.per_second

    def give_back(self) -> None:
        """Return the token just taken (the call was refused by another limit)."""
        self._tokens = min(self._rate.burst, self._tokens + 1)

    def full_at(self) -> float:
        """When the bucket will hold `burst` tokens again, left alone."""
        return self._stamp + (self._rate.burst - self._tokens) / self._rate.per_second

    def empty(self, now: float) -> None:
        """Hold no tokens as of `now` (it refills from here)."""
        self._tokens, self._stamp = 0.0, now


class RateLimiter:
    """Token buckets per (credential, RPC class), and one per peer address for all its calls
    (`peer_rate`); thread-safe.

    At most `max_buckets` are kept, the least recently used dropped first. A bucket dropped
    before it had refilled must not come back full: until every such bucket would have
    refilled, new buckets start empty (they refill at their rate from then), so flooding the
    limiter with other keys wins an attacker nothing.
    """

    def __init__(self, rates: Mapping[str, Mapping[str, Rate | None]],
                 clock: Callable[[], float] = time.monotonic,
                 max_buckets: int = MAX_BUCKETS, *,
                 peer_rate: Rate | None = None) -> None:
        self._rates = rates
        self._peer_rate = peer_rate
        self._clock = clock
        self._max = max_buckets
        self._buckets: OrderedDict[tuple[str, str], TokenBucket] = OrderedDict()
        self._refilled_by = float("-inf")  # when every dropped bucket would be full again
        self._lock = threading.Lock()

    def check(self, role: str, rpc_class: str, credential: str, peer: str = "") -> None:
        """Take a token for the call (and one of its peer's), or raise RateLimited with the
        wait until there is one; a call refused by either takes neither."""
        rate = self._rates.get(role, {}).get(rpc_class)
        peer_rate = self._peer_rate if peer else None
        with self._lock:
            now = self._clock()
            wait = peer_wait = 0.0
            own = None
            if rate is not None:
                own = self._bucket((credential, rpc_class), rate, now)
                wait = own.take(now)
            if peer_rate is not None and wait == 0:
                peer_wait = self._bucket((f"peer:{peer}", PEER_CLASS), peer_rate, now).take(now)
                if peer_wait > 0 and own is not None:
                    own.give_back()
        if wait > 0 and rate is not None:
            raise RateLimited(
                f"too many {rpc_class} calls for this credential: {rate.per_second:g} a"
                f" second, {rate.burst:g} at once; retry in {wait:.3f} s",
                retry_after_seconds=wait, metadata={"rpc_class": rpc_class, "role": role})
        if peer_wait > 0 and peer_rate is not None:
            raise RateLimited(
                f"too many calls from this address, whatever their credentials:"
                f" {peer_rate.per_second:g} a second, {peer_rate.burst:g} at once; retry in"
                f" {peer_wait:.3f} s",
                retry_after_seconds=peer_wait,
                metadata={"rpc_class": PEER_CLASS, "role": PEER})

    def _bucket(self, key: tuple[str, str], rate: Rate, now: float) -> TokenBucket:
        bucket = self._buckets.get(key)
        if bucket is not None:
            self._buckets.move_to_end(key)
            return bucket
        bucket = self._buckets[key] = TokenBucket(rate, now)
        if now < self._refilled_by:
            bucket.empty(now)  # it may be one that was dropped half-drained
        if len(self._buckets) > self._max:
            _, dropped = self._buckets.popitem(last=False)
            self._refilled_by = max(self._refilled_by, dropped.full_at())
        return bucket


class WatchLimiter:
    """Counts open WatchTable streams per credential, table and server."""

    def __init__(self, limits: WatchLimits) -> None:
        self.limits = limits
        self._by_credential: dict[str, int] = {}
        self._by_table: dict[str, int] = {}
        self._others_by_table: dict[str, int] = {}  # streams of callers not seats, per table
        self._total = 0
        self._lock = threading.Lock()

    def acquire(self, credential: str, key_credential: bool, table_id: str, *,
                seat: bool | None = None) -> tuple[str, str, bool]:
        """Hold a place for one stream (give it back with `release`); ResourceExhausted
        (LIMIT_EXCEEDED, naming the scope in its metadata) when a limit is reached. Callers
        that are not a seat (`seat`; by default every key credential) may fill a table only
        up to `table - reserved`."""
        other = not seat if seat is not None else key_credential
        per_credential = self.limits.key if key_credential else self.limits.seat
        with self._lock:
            checks = [
                ("server", self._total, self.limits.server),
                ("table", self._by_table.get(table_id, 0), self.limits.table),
                ("credential", self._by_credential.get(credential, 0), per_credential),
            ]
            if other:
                checks.append(("table", self._others_by_table.get(table_id, 0),
                               self.limits.others_per_table))
            for scope, count, limit in checks:
                if count >= limit:
                    raise ResourceExhausted(
                        ServiceReason.LIMIT_EXCEEDED,
                        f"{limit} watch streams are open {_SCOPE_TEXT[scope]}; close one"
                        " before opening another",
                        metadata={"scope": scope, "limit": str(limit)})
            self._total += 1
            self._by_table[table_id] = self._by_table.get(table_id, 0) + 1
            self._by_credential[credential] = self._by_credential.get(credential, 0) + 1
            if other:
                self._others_by_table[table_id] = self._others_by_table.get(table_id, 0) + 1
        return credential, table_id, other

    def release(self, ticket: tuple[str, str, bool]) -> None:
        """Give back the place `acquire` held."""
        credential, table_id, other = ticket
        with self._lock:
            self._total -= 1
            _decrement(self._by_table, table_id)
            _decrement(self._by_credential, credential)
            if other:
                _decrement(self._others_by_table, table_id)

    def open_streams(self) -> int:
        """Streams open now."""
        return self._total


_SCOPE_TEXT = {"server": "on this server", "table": "for this table",
               "credential": "for this credential"}


def _decrement(counts: dict[str, int], key: str) -> None:
    left = counts[key] - 1
    if left:
        counts[key] = left
    else:
        del counts[key]  # keeps the maps as small as the open streams


__all__ = [
    "DEFAULT_PEER_RATE",
    "DEFAULT_RATES",
    "METHOD_CLASSES",
    "ROLES",
    "RPC_CLASSES",
    "LimitSpecError",
    "Rate",
    "RateLimiter",
    "TokenBucket",
    "TransportLimits",
    "WatchLimiter",
    "WatchLimits",
    "method_class",
    "parse_peer_rate",
    "parse_rate_limits",
    "parse_transport_limits",
    "parse_watch_limits",
]
