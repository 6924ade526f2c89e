"""Who a call is counted as: its client address and its verified credential, found once.

Every limit that counts per caller (the calls waiting for their request message in
`service.grpc.arrival`, the call rates in `service.grpc.interceptors`) asks this module, so
they agree on who the caller is:

- the client address is the peer's (`context.peer()`), unless the peer is one of the
  operator's trusted proxies (`FIFTYK_TRUSTED_PROXIES`): then it is the address the proxy
  wrote in the `x-forwarded-for` header — the rightmost entry that is not itself a trusted
  proxy. The header of any other peer is ignored, so nobody else can choose the address
  they are counted under;
- the credential is the one `auth.authenticate` verifies (the MAC of a token, the key), so
  a forged or expired credential is no credential: such a call is counted under its address
  like an anonymous one.

`identify` runs once per call, in the outermost interceptor, and leaves its answer in the
call's context (`CALLER`) for the interceptors inside it.
"""

from __future__ import annotations

import ipaddress
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias

import grpc.aio

from fiftyk_referee.service.errors import Unauthenticated
from fiftyk_referee.service.grpc.auth import ANONYMOUS, AuthSettings, Principal, authenticate

if TYPE_CHECKING:  # the grpc classes are generic only in their type stubs
    Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]

FORWARDED_FOR_HEADER = "x-forwarded-for"
# Entries of a forwarded header looked at, from the right: a proxy chain is short, and a
# client's own made-up entries (to the left of what the trusted proxies wrote) never count.
MAX_FORWARDED_HOPS = 16

Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network  # a trusted proxy's


def peer_address(peer: str) -> str:
    """The address of `ipv4:1.2.3.4:5678` / `ipv6:[::1]:5678` without the port (and the
    brackets); other peers (`unix:...`) as they are."""
    if peer.startswith("ipv4:"):  # the usual case first: it is on every call's path
        return peer[5:peer.rindex(":")]
    if peer.startswith("ipv6:"):
        return peer[5:peer.rindex(":")].replace("%5B", "").replace("%5D", "").strip("[]")
    return peer


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:1.2.3.4 is 1.2.3.4
    return mapped if mapped is not None else address


class ClientAddresses:
    """The client address of a call: the peer's, or what a trusted proxy forwarded."""

    def __init__(self, trusted: tuple[Network, ...] = ()) -> None:
        self.trusted = trusted

    def _is_trusted(self, text: str) -> bool:
        address = _ip(text)
        return address is not None and any(address in network for network in self.trusted)

    def of(self, peer: str, metadata: Any) -> str:
        """The address `peer` (as `context.peer()` gives it) calls from, given its metadata."""
        address = peer_address(peer)
        if not self.trusted or not self._is_trusted(address):
            return address  # nobody else's header counts (the usual case: nothing to parse)
        forwarded = [entry for key, value in (metadata or ()) if key == FORWARDED_FOR_HEADER
                     for entry in str(value).split(",")]
        for entry in reversed(forwarded[-MAX_FORWARDED_HOPS:]):
            hop = _ip(entry)
            if hop is None:
                break  # garbage after what a trusted proxy wrote: the last good hop counts
            address = str(hop)
            if not any(hop in network for network in self.trusted):
                break  # the first address a trusted proxy saw that is not a proxy itself
        return address


class Caller:
    """A call's client address, verified principal, and the role and key its limits count
    under (the credential for a valid one, `peer:ADDRESS` without). Made on every call: a
    plain class with slots, cheaper to build than a frozen dataclass."""

    __slots__ = ("address", "credential", "principal", "role")

    def __init__(self, address: str, principal: Principal, role: str, credential: str) -> None:
        self.address = address
        self.principal = principal
        self.role = role
        self.credential = credential

    @property
    def authenticated(self) -> bool:
        """Whether a verified credential came with the call."""
        return self.role != "anonymous"


def _counted_as(principal: Principal, address: str) -> tuple[str, str]:
    """(role, credential) that a call's limits are counted under: the strongest role held."""
    if principal.platform:
        return "platform", "platform"
    if principal.audit:
        return "audit", "audit"
    if principal.seat is not None:
        claim = principal.seat
        return "player", f"seat:{claim.table_id}:{claim.seat}:{claim.player_id}"
    if principal.spectator is not None:
        watcher = principal.spectator
        return "spectator", f"spectator:{watcher.table_id}:{watcher.spectator_id}"
    return "anonymous", f"peer:{address}"


# The caller of the running call, set by the outermost interceptor (each RPC runs in a task
# of its own, so this ends with the call).
CALLER: ContextVar[Caller | None] = ContextVar("caller", default=None)


# Names of the verified client certificate in gRPC's auth context.
_CERTIFICATE_NAME_KEYS = ("x509_common_name", "x509_subject_alternative_name")


def certified_platform(context: Context, names: frozenset[str]) -> bool:
    """Whether the call's verified TLS client certificate carries one of `names` (its common
    name or a subject alternative name): the platform role without the key."""
    if not names:
        return False
    presented = {value.decode("utf-8", "replace")
                 for key in _CERTIFICATE_NAME_KEYS
                 for value in context.auth_context().get(key, ())}
    return bool(presented & names)


def identify(context: Context, settings: AuthSettings, addresses: ClientAddresses,
             certificate_names: frozenset[str] = frozenset()) -> Caller:
    """Who the call is counted as; a bad credential counts as none (the servicer refuses
    it with its reason)."""
    metadata = context.invocation_metadata()
    try:
        principal = authenticate(metadata, settings)
    except Unauthenticated:
        principal = ANONYMOUS
    if not principal.platform and certified_platform(context, certificate_names):
        principal = replace(principal, platform=True)
    address = addresses.of(context.peer(), metadata)
    return Caller(address, principal, *_counted_as(principal, address))


__all__ = [
    "CALLER",
    "FORWARDED_FOR_HEADER",
    "Caller",
    "ClientAddresses",
    "certified_platform",
    "identify",
    "peer_address",
]
