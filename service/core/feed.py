"""The feed hub: one reader of the global event feed per server process.

Watch streams and the turn clock follow the feed through the hub instead of each polling
the database: the hub polls the store's notification log (so events written by other
server processes sharing the database arrive too), keeps the recent tail in memory and
wakes its listeners (the turn clock, the lobby, the webhooks, the active-table count: each
event is read and decoded once for all of them). A watcher that resumes from a position
older than the tail reads the older part straight from the store, page by page, then
continues from memory.

The tail is for watchers near the head: a few pages of the newest events. Each held event
is a decoded domain event (about 2 KiB), so a long tail costs memory for as long as the
process runs (20,000 events held some 40 MiB, most of a server's growth over 10,000 idle
tables) while watchers further behind are served from the store all the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.public_events import FeedEvent
from fiftyk_referee.service.errors import Unavailable

DEFAULT_TAIL = 2_000  # events held in memory: four pages
PAGE = 500
log = logging.getLogger(__name__)


async def cancel(task: asyncio.Task[None] | None) -> None:
    """Cancel a background task and wait until it has stopped. A cancellation of the caller
    meanwhile goes on to the caller (it is not taken for the task's own)."""
    if task is not None:
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            caller = asyncio.current_task()
            if caller is not None and caller.cancelling():
                raise


class FeedHub:
    """Follows the global feed and serves its recent tail to watchers."""

    def __init__(self, app: Referee, executor: Executor, *, poll_seconds: float = 0.2,
                 tail: int = DEFAULT_TAIL) -> None:
        self._app = app
        self._executor = executor
        self._poll_seconds = poll_seconds
        self._tail: deque[FeedEvent] = deque(maxlen=tail)
        self._head = 0
        # Set (and replaced by a fresh one) whenever the head moves: a watcher waits on the
        # event of the moment. An Event, not a Condition: a waiter cancelled at shutdown must
        # not have to take a lock back (asyncio.Condition then raises "Lock is not acquired").
        self._advanced = asyncio.Event()
        self._released = False
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._listeners: list[Callable[[list[FeedEvent]], None]] = []

    @property
    def held(self) -> int:
        """How many of the newest events the hub holds in memory (at most its tail)."""
        return len(self._tail)

    @property
    def head(self) -> int:
        """The position of the last event the hub has seen."""
        return self._head

    def add_listener(self, listener: Callable[[list[FeedEvent]], None]) -> None:
        """Call `listener` with every batch of new events (on the event loop)."""
        self._listeners.append(listener)

    async def start(self) -> None:
        """Start following the feed from its current head."""
        loop = asyncio.get_running_loop()
        self._head = await loop.run_in_executor(self._executor, self._app.head_position)
        self._task = asyncio.create_task(self._run(), name="feed-hub")

    async def stop(self) -> None:
        """Stop following the feed."""
        await cancel(self._task)
        self._task = None

    def poke(self) -> None:
        """Something was just written here: read the feed now rather than at the next poll."""
        self._wake.set()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        outage = False
        while True:
            try:
                page = await loop.run_in_executor(
                    self._executor, lambda: self._app.read_events(self._head, PAGE))
                outage = False
            except asyncio.CancelledError:
                raise
            except Unavailable as error:  # an outage: one line when it starts, not per poll
                if not outage:
                    log.warning("reading the event feed: %s; retrying", error.message)
                outage = True
                page = None
            except Exception:  # the store may be briefly unreachable; keep following
                log.exception("reading the event feed failed; retrying")
                page = None
            if page is not None and page.events:
                self._tail.extend(page.events)
                self._head = page.events[-1].position
                for listener in self._listeners:
                    listener(page.events)
                self._notify()
                if page.has_more:
                    continue
            self._wake.clear()
            # `asyncio.timeout`, not `wait_for`: on Python 3.11 `wait_for` swallows a
            # cancellation that arrives as the poke does, and `stop` never ended.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._poll_seconds):
                    await self._wake.wait()

    async def after(self, position: int) -> list[FeedEvent]:
        """Events after `position` that are known now (from memory, else from the store)."""
        if self._tail and position >= self._tail[0].position - 1:
            # Watchers are mostly near the head: walk back from the newest event.
            newer: list[FeedEvent] = []
            for event in reversed(self._tail):
                if event.position <= position:
                    break
                newer.append(event)
            newer.reverse()
            return newer[:PAGE]
        if position >= self._head:
            return []
        loop = asyncio.get_running_loop()
        page = await loop.run_in_executor(
            self._executor, lambda: self._app.read_events(position, PAGE))
        return [e for e in page.events if e.position <= self._head]

    def _notify(self) -> None:
        advanced, self._advanced = self._advanced, asyncio.Event()
        advanced.set()

    def release(self) -> None:
        """Wake every waiting watcher now and from now on (the server is shutting down)."""
        self._released = True
        self._notify()

    async def wait_beyond(self, position: int, timeout: float) -> None:
        """Wait until the hub has seen an event after `position`, the timeout passes, or the
        hub is released."""
        if self._head > position or self._released:
            return
        advanced = self._advanced
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):  # not `wait_for`: see `_run`
                await advanced.wait()
