"""The webhook delivery process's entry point (`python -c CHILD_MAIN`, see `process.py`).

It reads its spec, then watches its stdin from a thread of its own while it loads the
delivery code and opens the event store (a second or more on a busy machine, and as long as
a hanging database makes it). Stopped in that time — the server closed the pipe, or died —
it ends at once: it has begun nothing (no lease taken, no attempt sent), so there is nothing
to finish and nobody need wait for it. Once it begins delivering, the end of stdin stops it
as before: the attempt in flight ends, the leases are given back.

Only the standard library is imported here: the delivery code is loaded after the watch
has started.
"""

from __future__ import annotations

import os
import signal
import sys
import threading


class PipeWatch:
    """Reads stdin to its end on a thread of its own: before `begin`, the end ends the
    process at once; after it, the end sets `closed`."""

    def __init__(self) -> None:
        self.closed = threading.Event()
        self._lock = threading.Lock()
        self._begun = False

    def start(self) -> None:
        """Watch from now on."""
        threading.Thread(target=self._watch, name="stdin", daemon=True).start()

    def begin(self) -> None:
        """The process begins delivering: from now on the end of stdin stops it gracefully."""
        with self._lock:
            self._begun = True

    def _watch(self) -> None:
        sys.stdin.buffer.read()  # until the server closes the pipe, or dies
        with self._lock:
            if not self._begun:
                os._exit(0)  # nothing begun: nothing to finish or give back
        self.closed.set()


def main() -> int:
    """The delivery process: read the spec, watch stdin, deliver until stdin ends."""
    # Signals are the parent's to act on (a terminal's Ctrl-C reaches the whole group): it
    # stops this process by closing the pipe, after the commands have drained.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    line = sys.stdin.buffer.readline()
    if not line:  # the server stopped before it said what to do
        return 0
    watch = PipeWatch()
    watch.start()
    from fiftyk_referee.service.webhooks.process import child_main  # the delivery code

    return child_main(line, watch.begin, watch.closed)


__all__ = ["PipeWatch", "main"]
