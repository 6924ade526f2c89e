"""The server's background tasks end when stopped, even when the stop arrives together with
the answer the task was waiting for (a probe's result, a poke, a new event); and a shutdown
step that fails or never ends is logged and left behind.

On a loaded machine the event loop runs late, and a stop request and an answer land in the
same turn of the loop. On Python 3.11 `asyncio.wait_for` then returned the answer and
dropped the cancellation: the store probe went on probing, and `RunningServer.stop` waited
for it for ever. These tests make the two arrive together on purpose, with the real parts
(a real PostgreSQL for the probe, a real SQLite store for the feed hub), and give each stop
a generous bound so that a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from grpc_health.v1 import health

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.feed import FeedHub, cancel
from fiftyk_referee.service.core.public_events import FeedEvent
from fiftyk_referee.service.core.store import OneCallPostgresRecorder, persistence_env
from fiftyk_referee.service.ops.config import parse_database_url
from fiftyk_referee.service.ops.metrics import Metrics
from fiftyk_referee.service.server import SHUTDOWN_STEP_SECONDS, ShutdownSteps, StoreHealth

STOP_BOUND_SECONDS = 60.0  # a stop takes milliseconds; this only turns a hang into a failure
WAIT_SECONDS = 60.0
NEVER_SECONDS = 3_600.0  # a poll or probe interval that never comes round during a test
POLL_SECONDS = 0.02


async def _ends_within_bound(work: Awaitable[None], leftover: str) -> bool:
    """Run `work` (a stop); True if it ended within the bound. If not, cancel the task named
    `leftover` (the one the stop failed to end) once more, so that nothing outlives the test."""
    stopping = asyncio.ensure_future(work)
    done, _ = await asyncio.wait({stopping}, timeout=STOP_BOUND_SECONDS)
    if done:
        stopping.result()
        return True
    for task in asyncio.all_tasks():
        if task.get_name() == leftover:
            task.cancel()
    await asyncio.wait({stopping}, timeout=STOP_BOUND_SECONDS)
    return False


async def _until(check: object, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_SECONDS
    while not check():  # type: ignore[operator]
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(POLL_SECONDS)


@pytest.mark.postgres
def test_the_store_probe_stops_when_the_stop_arrives_with_a_probe_answer(
        fresh_postgres_db: str) -> None:
    app = Referee(persistence_env(parse_database_url(fresh_postgres_db, Path()), pool_size=2,
                                  timeout_seconds=2))
    recorder = app.recorder
    assert isinstance(recorder, OneCallPostgresRecorder)
    probe_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="test-probe")

    async def scenario() -> bool:
        store_health = StoreHealth(recorder.availability, health.aio.HealthServicer(),
                                   Metrics(), NEVER_SECONDS, executor=probe_thread)
        await store_health.start()
        await asyncio.sleep(0)  # the probe task sends its first probe to the probe thread
        # Hold the event loop until the probe thread has answered (a job queued behind the
        # probe runs after it), as a busy loop does: the answer waits in the loop's queue.
        probe_thread.submit(lambda: None).result(WAIT_SECONDS)
        await asyncio.sleep(0)  # the loop takes the answer in; the probe task has not woken
        return await _ends_within_bound(store_health.stop(), "store-health")

    try:
        assert asyncio.run(scenario()), "StoreHealth.stop did not end the probe task"
        assert recorder.availability.up
    finally:
        probe_thread.shutdown(wait=True)
        app.close()


def _hub_and_app(tmp_path: Path) -> tuple[Referee, ThreadPoolExecutor]:
    return (Referee(persistence_env(parse_database_url("", tmp_path))),
            ThreadPoolExecutor(max_workers=2, thread_name_prefix="test-hub"))


async def _hub_has_seen_a_new_event(hub: FeedHub, app: Referee,
                                    executor: ThreadPoolExecutor) -> None:
    """Write an event and poke the hub until it has read it: the hub then waits for the
    next poke (its poll interval never comes round)."""
    loop = asyncio.get_running_loop()
    before = hub.head
    await loop.run_in_executor(executor, lambda: app.create_table("classic", None, 4))

    def seen() -> bool:
        hub.poke()  # a poke that lands while the hub reads is cleared with the read
        return hub.head > before

    await _until(seen, "the hub to read the new event")


def test_the_feed_hub_stops_when_the_stop_arrives_with_a_poke(tmp_path: Path) -> None:
    app, executor = _hub_and_app(tmp_path)

    async def scenario() -> bool:
        hub = FeedHub(app, executor, poll_seconds=NEVER_SECONDS)
        await hub.start()
        await _hub_has_seen_a_new_event(hub, app, executor)
        hub.poke()  # a write's poke, and the shutdown, in the same turn of the loop
        return await _ends_within_bound(hub.stop(), "feed-hub")

    try:
        assert asyncio.run(scenario()), "FeedHub.stop did not end the hub's task"
    finally:
        executor.shutdown(wait=True)
        app.close()


def test_a_watcher_cancelled_as_its_event_arrives_ends_cancelled(tmp_path: Path) -> None:
    app, executor = _hub_and_app(tmp_path)

    async def scenario() -> bool:
        loop = asyncio.get_running_loop()
        hub = FeedHub(app, executor, poll_seconds=NEVER_SECONDS)
        await hub.start()
        watcher = asyncio.create_task(hub.wait_beyond(hub.head, NEVER_SECONDS))

        def cancel_the_watcher(events: list[FeedEvent]) -> None:
            del events
            # Its stream is cancelled (the client left, or the server stops) in the turn in
            # which the hub wakes it with the new event.
            loop.call_soon(watcher.cancel)

        hub.add_listener(cancel_the_watcher)
        await _hub_has_seen_a_new_event(hub, app, executor)
        await asyncio.wait({watcher}, timeout=WAIT_SECONDS)
        await hub.stop()
        return watcher.cancelled()

    try:
        assert asyncio.run(scenario()), "the watcher's cancellation was dropped"
    finally:
        executor.shutdown(wait=True)
        app.close()


def test_a_stop_cancelled_while_it_waits_for_a_background_task_ends_cancelled() -> None:
    async def scenario() -> bool:
        cleaned_up = asyncio.Event()

        async def background() -> None:
            try:
                await asyncio.sleep(NEVER_SECONDS)
            finally:
                await cleaned_up.wait()  # its clean-up takes a moment

        task = asyncio.create_task(background())
        await asyncio.sleep(0)  # the task sleeps
        stopping = asyncio.create_task(cancel(task))
        await asyncio.sleep(0)  # the stop cancelled the task and waits for its clean-up
        stopping.cancel()  # the stop itself is cancelled (a shutdown step past its bound)
        cleaned_up.set()
        await asyncio.wait({stopping, task}, timeout=WAIT_SECONDS)
        return stopping.cancelled()

    assert asyncio.run(scenario()), "cancel() took its caller's cancellation for the task's"


def test_a_shutdown_step_that_fails_or_never_ends_is_logged_and_the_next_one_runs(
        caplog: pytest.LogCaptureFixture) -> None:
    ran: list[str] = []

    def fails() -> None:
        raise OSError("the metrics socket is gone")

    async def scenario() -> list[str]:
        steps = ShutdownSteps()
        await steps.run_blocking("failing call", fails)
        await steps.run("endless wait", asyncio.Event().wait())
        await steps.run_blocking("last call", lambda: ran.append("last call"))
        return steps.left_behind

    with caplog.at_level(logging.ERROR, logger="fiftyk_referee.service.server"):
        left_behind = asyncio.run(scenario())
    assert left_behind == ["failing call", "endless wait"]
    assert ran == ["last call"]
    failed, overran = caplog.records
    assert getattr(failed, "step") == "failing call"  # noqa: B009 - a field of `extra`
    assert failed.exc_info is not None and failed.exc_info[0] is OSError
    assert getattr(overran, "step") == "endless wait"  # noqa: B009
    assert getattr(overran, "bound_seconds") == SHUTDOWN_STEP_SECONDS  # noqa: B009
    assert "did not finish in" in overran.getMessage()
