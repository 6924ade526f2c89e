"""The turn clock: applies the domain's timeout decision when a turn runs out.

The deadline of a turn follows from stored events alone (the time of the hand's last event
plus the table's `turn_timeout`, see `GameHand.turn_deadline`), so the clock survives
restarts: at start it finds the hands in progress by reading the tables' `hand_started` and
`hand_recorded` events of the feed (a voided hand's `hand_voided` ends it too) — the same for
every game — then follows the feed hub.
A hand whose rules have no clock is dropped at its first sweep. The clock also deals a
seat-entropy draw (`table.draw_opened`) whose window has closed, so a seat that sends
nothing cannot stall its table (docs/fairness.md#seat-entropy). Several server processes
may run clocks on one database: each timeout carries a request id derived from the hand's
version, so the same decision is recorded once and the other process's attempt replays the
receipt.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from datetime import UTC, datetime

from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.observer import SPECTATOR
from fiftyk_referee.domain.table_events import (
    DrawOpened,
    HandRecorded,
    HandStarted,
    HandVoided,
    TableClosed,
)
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.feed import PAGE, FeedHub, cancel
from fiftyk_referee.service.core.public_events import FeedEvent
from fiftyk_referee.service.errors import ServiceError

WATCHED = (HandStarted.NAME, HandRecorded.NAME, HandVoided.NAME, DrawOpened.NAME,
           TableClosed.NAME)
log = logging.getLogger(__name__)


class TurnClock:
    """Times out expired turns of clocked hands in progress."""

    def __init__(self, app: Referee, executor: Executor, hub: FeedHub, *,
                 sweep_seconds: float, now: Callable[[], datetime] | None = None,
                 on_change: Callable[[], None] | None = None) -> None:
        self._app = app
        self._executor = executor
        self._hub = hub
        self._sweep_seconds = sweep_seconds
        self._now = now or (lambda: datetime.now(UTC))
        self._on_change = on_change
        self._clocked: dict[str, str] = {}  # hand id -> table id
        self._drawing: dict[str, tuple[int, datetime]] = {}  # table id -> (hand, deadline)
        self._task: asyncio.Task[None] | None = None

    def _observe(self, events: list[FeedEvent]) -> None:
        for event in events:
            if event.name == DrawOpened.NAME:
                opened = event.public(SPECTATOR)
                if isinstance(opened, DrawOpened):
                    self._drawing[event.aggregate_id] = (opened.hand_number, opened.deadline)
            elif event.name == TableClosed.NAME:
                self._drawing.pop(event.aggregate_id, None)
            elif event.name == HandStarted.NAME:
                self._drawing.pop(event.aggregate_id, None)
                started = event.public(SPECTATOR)
                if isinstance(started, HandStarted):
                    self._clocked[started.hand_id] = event.aggregate_id
            elif event.name in (HandRecorded.NAME, HandVoided.NAME):
                ended = event.public(SPECTATOR)
                if isinstance(ended, HandRecorded | HandVoided):
                    self._clocked.pop(ended.hand_id, None)

    def _scan(self) -> list[FeedEvent]:
        position = 0
        found: list[FeedEvent] = []
        while True:
            page = self._app.read_events(position, PAGE, WATCHED)
            found.extend(page.events)
            position = page.last_position
            if not page.has_more:
                return found

    async def start(self) -> None:
        """Find the clocked hands in progress, then follow the feed and sweep."""
        # Listen first, so no deal recorded while the history is read can slip between the
        # two. Seeing an event twice is harmless, and the scan's result is applied on the
        # event loop: a hand the listener already saw end is dropped by its first sweep.
        self._hub.add_listener(self._observe)
        loop = asyncio.get_running_loop()
        self._observe(await loop.run_in_executor(self._executor, self._scan))
        self._task = asyncio.create_task(self._run(), name="turn-clock")

    async def stop(self) -> None:
        """Stop sweeping."""
        await cancel(self._task)
        self._task = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self._sweep_seconds)
            await self._sweep_draws(loop)
            for hand_id, table_id in list(self._clocked.items()):
                try:
                    acted = await loop.run_in_executor(
                        self._executor, self.sweep_one, table_id, hand_id)
                except (RuleError, ServiceError) as error:
                    log.info("turn clock: %s", error, extra={"hand_id": hand_id})
                    continue
                except Exception:  # the store may be briefly unreachable; keep the clock
                    log.exception("turn clock: sweeping failed", extra={"hand_id": hand_id})
                    continue
                if acted and self._on_change is not None:
                    self._on_change()

    async def _sweep_draws(self, loop: asyncio.AbstractEventLoop) -> None:
        now = self._now()
        for table_id, (number, deadline) in list(self._drawing.items()):
            if now < deadline:
                continue
            try:
                await loop.run_in_executor(self._executor, self.deal_draw, table_id, number)
            except (RuleError, ServiceError) as error:  # dealt, closed or voided meanwhile
                log.info("turn clock: %s", error, extra={"table_id": table_id})
                self._drawing.pop(table_id, None)
                continue
            except Exception:  # the store may be briefly unreachable; keep the clock
                log.exception("turn clock: dealing a draw failed", extra={"table_id": table_id})
                continue
            if self._on_change is not None:
                self._on_change()

    def deal_draw(self, table_id: str, number: int) -> None:
        """Deal a seat-entropy draw whose window has closed (once, whichever process asks)."""
        self._app.close_draw(table_id, number, self._now(),
                             request_id=f"draw:{table_id}:{number}")
        self._drawing.pop(table_id, None)

    def sweep_one(self, table_id: str, hand_id: str) -> bool:
        """Time out the hand's current turn if it has expired; True when something was done."""
        hand = self._app.get_hand(hand_id)
        if hand.is_over or not hand.rules.turn_timeout:
            self._clocked.pop(hand_id, None)
            return False
        deadline = hand.turn_deadline()
        now = self._now()
        if deadline is None or hand.to_act is None or now < deadline:
            return False
        self._app.time_out(table_id, hand_id, hand.to_act, now,
                           request_id=f"timeout:{hand_id}:{hand.version}")
        return True
