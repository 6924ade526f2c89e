"""The attacker's resolver of the DNS rebinding tests: names under `.rebind.test` resolve to
the addresses in `REBOUND`; every other name resolves as usual.

`resolver` is the replacement of `socket.getaddrinfo`. The referee's webhook deliveries
run in a process of their own, which resolves names itself: `resolver_path(directory)`
writes a `sitecustomize` module that installs the same resolver in every Python process
started with that directory on `PYTHONPATH`.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

REBOUND = {"loopback.rebind.test": "127.0.0.1", "private.rebind.test": "10.20.30.40",
           "metadata.rebind.test": "169.254.169.254", "mapped.rebind.test": "::ffff:127.0.0.1"}
SITECUSTOMIZE = ("from tests.support.rebinding_dns import install\n"
                 "install()\n")


def resolver(real: Callable[..., Any]) -> Callable[..., Any]:
    """`getaddrinfo` that answers the rebound names itself and asks `real` for the others."""

    def resolve(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
        address = REBOUND.get(host)
        if address is None:
            return real(host, port, *args, **kwargs)
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port)))]

    return resolve


def install() -> None:
    """Use the attacker's resolver in this process (for good: a `sitecustomize` calls it)."""
    socket.getaddrinfo = resolver(socket.getaddrinfo)


def resolver_path(directory: Path) -> Path:
    """A directory whose `sitecustomize` installs the resolver in a Python process that has
    it (and this repository) on its path."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    return directory
