"""The webhook HTTP transport: one endpoint's POSTs, each attempt bounded.

One attempt ends within `timeout` seconds whatever the endpoint does (connecting, a trickled
or never-ending answer); a redirect is a failure, not followed; at most `MAX_ANSWER_BYTES`
of an answer are read. Connections go through a checked network backend: every address is
judged by the address policy (`service/platform/webhook_addresses.py`) where it is
connected to, and no proxy from the environment is used.
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from fiftyk_referee.service.platform.webhook_addresses import address_allowed, is_address

SUCCESS = range(200, 300)
USER_AGENT = "fiftyk-referee-webhooks/1"
# Read from an answer (and dropped): a small body is drained, so the connection is kept
# alive; a longer one closes the connection instead of being read to its end.
MAX_ANSWER_BYTES = 64 * 1024


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
        if is_address(host):
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
