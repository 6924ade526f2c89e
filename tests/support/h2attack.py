"""Hostile HTTP/2 clients for the transport tests: raw frames with the `h2` library.

No gRPC client library stands between these and the server, so they can do what a careful
attacker does and a well-behaved client never would:

- `stall_streams`: one connection opens many `GetTable` streams, each announcing a large
  message and sending only its first bytes, and ignores the server's
  `SETTINGS_MAX_CONCURRENT_STREAMS`; it answers SETTINGS and PING so the server sees a live
  peer, and opens a new connection (up to a budget) when the server closes one.
- `stall_per_connection`: many connections, each opening a number of stalled streams of one
  method (any method: server reflection's request stream too);
- `IdleConnections`: many connections that complete the HTTP/2 preface and then say nothing.

Both report what the server did to them (streams refused or reset, connections closed), so
a test can tell a server that bounds them from one that does not.
"""

from __future__ import annotations

import selectors
import socket
import time
from dataclasses import dataclass, field

import h2.config
import h2.connection
import h2.events
import h2.exceptions

GRPC_HEADER_BYTES = 5  # compressed flag and a 4-byte big-endian length
READ_BYTES = 65536
# How long a read waits for the server when the attacker has nothing else to do.
POLL_SECONDS = 0.05


class _IgnoresStreamLimit(h2.connection.H2Connection):
    """An H2Connection that opens streams past the server's MAX_CONCURRENT_STREAMS."""

    @property
    def open_outbound_streams(self) -> int:
        """Claim none are open: h2 then never refuses to open another."""
        return 0


def _text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _grpc_headers(authority: str, method: str,
                  extra: tuple[tuple[str, str], ...] = ()) -> list[tuple[str, str]]:
    return [(":method", "POST"), (":scheme", "http"), (":path", method),
            (":authority", authority), ("content-type", "application/grpc"),
            ("te", "trailers"), *extra]


@dataclass
class StallReport:
    """What the server did to the stalled streams."""

    opened: int = 0
    refused: int = 0  # streams reset by the server without a status (REFUSED_STREAM, ...)
    answered: int = 0  # streams the server ended with a gRPC status
    connections: int = 0
    closed_by_server: int = 0  # connections ended by GOAWAY or EOF
    statuses: dict[str, int] = field(default_factory=dict)  # grpc-status -> streams

    @property
    def ended(self) -> int:
        """Streams the server ended, one way or the other."""
        return self.refused + self.answered


class StallConnection:
    """One connection of `stall_streams`."""

    def __init__(self, host: str, port: int, source: str | None) -> None:
        self.sock = socket.create_connection((host, port), source_address=(
            (source, 0) if source else None))
        self.sock.setblocking(False)
        self.conn = _IgnoresStreamLimit(h2.config.H2Configuration(
            client_side=True, header_encoding="utf-8"))
        self.conn.initiate_connection()
        self.authority = f"{host}:{port}"
        self.closed = False
        self.answered: set[int] = set()
        self.methods: dict[int, str] = {}  # stream id -> the method it called
        self.statuses: dict[int, str] = {}  # stream id -> the grpc-status it ended with
        self._pending = b""

    def flush(self) -> None:
        """Send what h2 has queued, as far as the socket takes it now."""
        self._pending += self.conn.data_to_send()
        while self._pending and not self.closed:
            try:
                sent = self.sock.send(self._pending)
            except BlockingIOError:
                return
            except OSError:
                self.closed = True
                return
            self._pending = self._pending[sent:]

    def pump(self, report: StallReport, wait: float = 0.0) -> None:
        """Read and handle everything the server sent (acknowledging SETTINGS and PING)."""
        if self.closed:
            return
        if wait:
            with selectors.DefaultSelector() as selector:
                selector.register(self.sock, selectors.EVENT_READ)
                selector.select(wait)
        while not self.closed:
            try:
                data = self.sock.recv(READ_BYTES)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                self._close(report)
                break
            try:
                events = self.conn.receive_data(data)
            except h2.exceptions.ProtocolError:
                self._close(report)
                break
            for event in events:
                self._handle(event, report)
        self.flush()

    def _handle(self, event: h2.events.Event, report: StallReport) -> None:
        if isinstance(event, h2.events.StreamReset):
            if event.stream_id not in self.answered:
                report.refused += 1
        elif isinstance(event, h2.events.ResponseReceived | h2.events.TrailersReceived):
            # A refusal is often a trailers-only response: one HEADERS frame with the status.
            status = {_text(name): _text(value)
                      for name, value in event.headers or []}.get("grpc-status")
            if status is not None and event.stream_id not in self.answered:
                self.answered.add(event.stream_id)
                self.statuses[event.stream_id] = str(status)
                report.answered += 1
                report.statuses[str(status)] = report.statuses.get(str(status), 0) + 1
        elif isinstance(event, h2.events.ConnectionTerminated):
            self._close(report)

    def _close(self, report: StallReport) -> None:
        if not self.closed:
            self.closed = True
            report.closed_by_server += 1

    def open_stalled_stream(self, method: str, announced: int, sent: int,
                            headers: tuple[tuple[str, str], ...] = ()) -> bool:
        """Open one stream that announces `announced` bytes and sends `sent` of the frame
        (`headers`: metadata to send with it)."""
        if self.closed:
            return False
        try:
            stream_id = self.conn.get_next_available_stream_id()
            self.conn.send_headers(stream_id, _grpc_headers(self.authority, method, headers))
            self.methods[stream_id] = method
            prefix = b"\x00" + announced.to_bytes(4, "big")
            body = prefix + b"\x0a" * max(0, sent - GRPC_HEADER_BYTES)
            if self.conn.local_flow_control_window(stream_id) < len(body):
                return True  # the server gave no window: the stream still holds its place
            self.conn.send_data(stream_id, body)
        except (h2.exceptions.ProtocolError, h2.exceptions.StreamClosedError):
            self.closed = True
            return False
        return True

    def close(self) -> None:
        """Close the socket."""
        self.closed = True
        self.sock.close()


def stall_streams(host: str, port: int, *, streams: int, announced: int = 1_000_000,
                  sent: int = 10, method: str = "/fiftyk.referee.v1.RefereeService/GetTable",
                  max_connections: int = 20, source: str | None = None,
                  keep: list[StallConnection] | None = None) -> StallReport:
    """Open `streams` stalled streams, on one connection while the server keeps it open.

    The connections stay open afterwards when `keep` is given (they are appended to it, for
    the caller to hold and close); otherwise they are closed before returning.
    """
    report = StallReport()
    connection = None
    held: list[StallConnection] = []
    try:
        while report.opened < streams:
            if connection is None or connection.closed:
                if report.connections >= max_connections:
                    break
                try:
                    connection = StallConnection(host, port, source)
                except OSError:
                    report.closed_by_server += 1
                    connection = None
                    report.connections += 1
                    continue
                held.append(connection)
                report.connections += 1
                connection.flush()
                connection.pump(report, POLL_SECONDS)
            if connection.open_stalled_stream(method, announced, sent):
                report.opened += 1
            if report.opened % 100 == 0:
                connection.flush()
                connection.pump(report)
        for each in held:
            each.flush()
            each.pump(report, POLL_SECONDS)
    finally:
        if keep is None:
            for each in held:
                each.close()
        else:
            keep.extend(held)
    return report


def stall_per_connection(host: str, port: int, *, connections: int, streams: int,
                         method: str, announced: int = 1_000_000, sent: int = 10,
                         source: str | None = None,
                         keep: list[StallConnection]) -> StallReport:
    """`connections` connections, each opening `streams` stalled streams of `method` (kept
    open in `keep`, for the caller to hold and close)."""
    report = StallReport()
    for _ in range(connections):
        try:
            connection = StallConnection(host, port, source)
        except OSError:
            report.closed_by_server += 1
            continue
        keep.append(connection)
        report.connections += 1
        connection.flush()
        connection.pump(report, POLL_SECONDS)
        for number in range(streams):
            if connection.open_stalled_stream(method, announced, sent):
                report.opened += 1
            if number % 100 == 99:
                connection.flush()
                connection.pump(report)
        connection.flush()
        connection.pump(report)
    return report


def keep_alive(connections: list[StallConnection], report: StallReport,
               seconds: float) -> None:
    """Answer the server's SETTINGS and PING on held connections for `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for connection in connections:
            connection.pump(report)
        time.sleep(POLL_SECONDS)


_PREFACE_SETTINGS = h2.config.H2Configuration(client_side=True)


class IdleConnections:
    """Connections that send the HTTP/2 preface and SETTINGS, then nothing at all."""

    def __init__(self, host: str, port: int, count: int, *, source: str | None = None) -> None:
        self.sockets: list[socket.socket] = []
        self.failed = 0
        for _ in range(count):
            try:
                sock = socket.create_connection((host, port), timeout=5, source_address=(
                    (source, 0) if source else None))
            except OSError:
                self.failed += 1
                continue
            conn = h2.connection.H2Connection(_PREFACE_SETTINGS)
            conn.initiate_connection()
            try:
                sock.sendall(conn.data_to_send())
            except OSError:
                self.failed += 1
                sock.close()
                continue
            sock.setblocking(False)
            self.sockets.append(sock)

    def still_open(self) -> int:
        """Connections the server has not closed (a read finds no EOF or reset)."""
        open_ = 0
        for sock in self.sockets:
            try:
                while True:
                    data = sock.recv(READ_BYTES)
                    if not data:
                        break
            except BlockingIOError:
                open_ += 1
            except OSError:
                pass
        return open_

    def close(self) -> None:
        """Close every connection."""
        for sock in self.sockets:
            sock.close()
        self.sockets.clear()


__all__ = ["IdleConnections", "StallConnection", "StallReport", "keep_alive",
           "stall_per_connection", "stall_streams"]
