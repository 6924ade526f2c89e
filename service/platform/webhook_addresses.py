"""The webhook address policy: which URLs may be registered, which addresses connected to.

An endpoint URL is HTTPS, or plain HTTP to loopback, and never names an address deliveries
may not go to (`check_url`, at registration). A delivery connects only to addresses the
policy allows (`address_allowed`), looked up and checked for each new connection, on the
address it connects to (`service/webhooks/transport.py`): a name that resolves to a private
or loopback address after registration (DNS rebinding) gets nothing.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from fiftyk_referee.service.errors import FieldViolation, InvalidArgument, ServiceReason

MAX_URL_LENGTH = 2048
LOOPBACK_NAMES = frozenset({"localhost"})
NAT64_PREFIX = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix
IPV4_BITS = 0xFFFFFFFF


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
    if is_address(host) and not address_allowed(host, host, private=private):
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


def is_address(host: str) -> bool:
    """Whether `host` is an IP address (not a name)."""
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
