"""A hostile webhook endpoint on loopback: raw sockets, so it can break HTTP on purpose.

Each connection reads one request (headers and the announced body) and then behaves as told:

- `redirect`: answers `307 Temporary Redirect` to `location` (a well-behaved receiver);
- `endless`: answers 200 with a chunked body that never ends, written as fast as it goes;
- `trickle`: sends a status line, then one header byte every `TRICKLE_PAUSE_SECONDS`, forever
  (each byte arrives well within any read timeout);
- `silent`: never answers, holds the connection open.

It counts the connections it accepted and the bytes it wrote, and notes when a client hung
up on it (a write failed), so a test can tell the client gave up rather than read it all.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field

TRICKLE_PAUSE_SECONDS = 0.1
CHUNK = b"x" * 65536
ACCEPT_POLL_SECONDS = 0.2
HEADER_END = b"\r\n\r\n"
READ_BYTES = 65536


@dataclass
class HostileEndpoint:
    """One behaviour, served on 127.0.0.1 until `close`."""

    behaviour: str
    location: str = ""
    connections: int = 0
    written: int = 0
    hung_up: threading.Event = field(default_factory=threading.Event)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(ACCEPT_POLL_SECONDS)
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        accept = threading.Thread(target=self._accept, name="hostile-endpoint", daemon=True)
        accept.start()
        self._threads.append(accept)

    @property
    def url(self) -> str:
        """Where to POST."""
        return f"http://127.0.0.1:{self.port}/hooks"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self.connections += 1
            worker = threading.Thread(target=self._serve, args=(connection,), daemon=True)
            worker.start()
            self._threads.append(worker)

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            if not self._read_request(connection):
                return
            try:
                getattr(self, f"_{self.behaviour}")(connection)
            except OSError:  # the client hung up: what a bounded client does
                self.hung_up.set()

    def _read_request(self, connection: socket.socket) -> bool:
        received = b""
        while HEADER_END not in received:
            chunk = connection.recv(READ_BYTES)
            if not chunk:
                return False
            received += chunk
        head, _, body = received.partition(HEADER_END)
        length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            chunk = connection.recv(READ_BYTES)
            if not chunk:
                return False
            body += chunk
        return True

    def _send(self, connection: socket.socket, data: bytes) -> None:
        connection.sendall(data)
        with self._lock:
            self.written += len(data)

    def _redirect(self, connection: socket.socket) -> None:
        self._send(connection, b"HTTP/1.1 307 Temporary Redirect\r\nLocation: "
                   + self.location.encode() + b"\r\nContent-Length: 0\r\n\r\n")

    def _endless(self, connection: socket.socket) -> None:
        self._send(connection, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        frame = f"{len(CHUNK):x}\r\n".encode() + CHUNK + b"\r\n"
        while not self._stop.is_set():
            self._send(connection, frame)

    def _trickle(self, connection: socket.socket) -> None:
        self._send(connection, b"HTTP/1.1 200 OK\r\n")
        while not self._stop.wait(TRICKLE_PAUSE_SECONDS):
            self._send(connection, b"X")

    def _silent(self, connection: socket.socket) -> None:
        connection.settimeout(TRICKLE_PAUSE_SECONDS)
        while not self._stop.is_set():
            try:
                if not connection.recv(READ_BYTES):
                    self.hung_up.set()
                    return
            except TimeoutError:
                continue

    def close(self) -> None:
        """Stop serving and end every connection."""
        self._stop.set()
        self._listener.close()
        for thread in self._threads:
            thread.join()

