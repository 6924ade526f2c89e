"""Who a call is counted as: the client address behind trusted proxies, and verified
credentials only (service.grpc.callers)."""

from __future__ import annotations

import ipaddress

import pytest

from fiftyk_referee.service.grpc.callers import FORWARDED_FOR_HEADER, ClientAddresses, peer_address

PROXIES = ClientAddresses((ipaddress.ip_network("10.0.0.0/24"),
                           ipaddress.ip_network("fd00::/8")))


@pytest.mark.parametrize(("peer", "address"), [
    ("ipv4:127.0.0.1:5678", "127.0.0.1"), ("ipv6:[::1]:5678", "::1"),
    ("ipv6:%5B::1%5D:5678", "::1"), ("unix:/tmp/x/grpc.sock", "unix:/tmp/x/grpc.sock"),
])
def test_the_peer_address_drops_the_port(peer: str, address: str) -> None:
    assert peer_address(peer) == address


@pytest.mark.parametrize(("peer", "forwarded", "client"), [
    # Not a trusted proxy: its header counts for nothing.
    ("ipv4:192.0.2.9:1", ["203.0.113.5"], "192.0.2.9"),
    # A trusted proxy: the rightmost address that is not a proxy.
    ("ipv4:10.0.0.7:1", ["203.0.113.5"], "203.0.113.5"),
    ("ipv4:10.0.0.7:1", ["198.51.100.1, 203.0.113.5"], "203.0.113.5"),
    ("ipv4:10.0.0.7:1", ["203.0.113.5, 10.0.0.8"], "203.0.113.5"),
    ("ipv4:10.0.0.7:1", ["203.0.113.5", "10.0.0.8"], "203.0.113.5"),
    ("ipv6:[fd00::1]:1", ["2001:db8::5"], "2001:db8::5"),
    ("ipv4:10.0.0.7:1", ["::ffff:203.0.113.5"], "203.0.113.5"),
    # Nothing usable forwarded: the proxy's own address.
    ("ipv4:10.0.0.7:1", [], "10.0.0.7"),
    ("ipv4:10.0.0.7:1", ["unknown"], "10.0.0.7"),
    # Garbage right of a good entry stops the walk at the last good hop.
    ("ipv4:10.0.0.7:1", ["203.0.113.5, 10.0.0.8, nonsense"], "10.0.0.7"),
    # Only proxies: the leftmost of them.
    ("ipv4:10.0.0.7:1", ["10.0.0.9, 10.0.0.8"], "10.0.0.9"),
])
def test_only_a_trusted_proxy_names_the_client(peer: str, forwarded: list[str],
                                               client: str) -> None:
    metadata = [(FORWARDED_FOR_HEADER, value) for value in forwarded]
    assert PROXIES.of(peer, [("user-agent", "x"), *metadata]) == client


def test_without_trusted_proxies_no_header_counts() -> None:
    assert ClientAddresses().of("ipv4:10.0.0.7:1", [(FORWARDED_FOR_HEADER, "1.2.3.4")]) == \
        "10.0.0.7"
