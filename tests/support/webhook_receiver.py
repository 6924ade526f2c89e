"""A real HTTP server on loopback that receives webhook deliveries, for the tests.

It records every POST (headers and raw body) in arrival order and answers 200, or — while
told to — a failure status, or answers only after a pause (a slow endpoint).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WAIT_STEP_SECONDS = 0.05


@dataclass(frozen=True)
class Delivery:
    """One POST as it arrived."""

    headers: dict[str, str]
    body: bytes
    status: int

    @property
    def json(self) -> dict[str, Any]:
        """The parsed body."""
        data: dict[str, Any] = json.loads(self.body)
        return data


class WebhookReceiver:
    """Records deliveries; `failing` answers 503, `delay` pauses before answering."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        self.failing = False
        self.delay = 0.0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: one connection for many deliveries

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if receiver.delay:
                    time.sleep(receiver.delay)
                status = HTTPStatus.SERVICE_UNAVAILABLE if receiver.failing else HTTPStatus.OK
                with receiver._lock:
                    receiver.deliveries.append(Delivery(dict(self.headers.items()), body,
                                                        int(status)))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the tests read the deliveries, not a log."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                        name="webhook-receiver")
        self._thread.start()

    @property
    def url(self) -> str:
        """Where to POST."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def accepted(self) -> list[Delivery]:
        """The deliveries answered 200, in arrival order."""
        with self._lock:
            return [d for d in self.deliveries if d.status == HTTPStatus.OK]

    def wait_for(self, count: int, timeout: float) -> list[Delivery]:
        """The accepted deliveries once there are at least `count` (AssertionError after
        `timeout` seconds: a deadline for a wait, not a speed assertion)."""
        deadline = time.monotonic() + timeout
        while len(accepted := self.accepted()) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{len(accepted)} of {count} webhook deliveries arrived")
            time.sleep(WAIT_STEP_SECONDS)
        return accepted

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> WebhookReceiver:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
