"""The worker pool that runs the use cases for the event loop: every call answered once, on
the loop, with its result or its exception; at most its threads at work; a call whose caller
left while it waited is not run; a shutdown runs or cancels what is queued and takes no
more. The same for `loop.run_in_executor`, which everything off the command path uses."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import CancelledError

import pytest

from fiftyk_referee.service.core.workers import Workers

WAIT_SECONDS = 60.0  # bounds for a hang, never for speed
CALLS = 200
THREADS = 3


class Refused(Exception):
    """What a use case raised."""


def test_every_call_is_answered_on_the_loop_with_its_result_or_its_error() -> None:
    workers = Workers(THREADS, name="test-pool")
    threads: set[str] = set()
    guard = threading.Lock()

    def call(number: int) -> int:
        with guard:
            threads.add(threading.current_thread().name)
        if number % 7 == 0:
            raise Refused(number)
        return number * 2

    async def scenario() -> list[int | str]:
        loop = asyncio.get_running_loop()

        async def one(number: int) -> int | str:
            try:
                if number % 2:
                    return await workers.run(lambda: call(number))
                return await loop.run_in_executor(workers, call, number)
            except Refused as refused:
                return f"refused {refused.args[0]}"

        return await asyncio.wait_for(asyncio.gather(*(one(n) for n in range(CALLS))),
                                      WAIT_SECONDS)

    try:
        answers = asyncio.run(scenario())
    finally:
        workers.shutdown()
    assert answers == [f"refused {n}" if n % 7 == 0 else n * 2 for n in range(CALLS)]
    assert threads <= {f"test-pool_{n}" for n in range(THREADS)}


def test_a_call_whose_caller_left_while_it_waited_is_not_run() -> None:
    workers = Workers(1)
    release = threading.Event()
    ran: list[str] = []

    async def scenario() -> None:
        busy = workers.run(lambda: release.wait(WAIT_SECONDS))
        waiting = workers.run(lambda: ran.append("left"))
        waiting.cancel()  # the client gave up while the only worker was busy
        release.set()
        await asyncio.wait_for(busy, WAIT_SECONDS)
        await asyncio.wait_for(workers.run(lambda: ran.append("next")), WAIT_SECONDS)

    try:
        asyncio.run(scenario())
    finally:
        workers.shutdown()
    assert ran == ["next"]


def test_a_shutdown_runs_the_queued_calls_then_takes_no_more() -> None:
    workers = Workers(1)
    release = threading.Event()
    busy = workers.submit(release.wait, WAIT_SECONDS)
    queued = workers.submit(lambda: "queued ran")
    release.set()
    workers.shutdown(wait=True)
    assert busy.result(WAIT_SECONDS) and queued.result(WAIT_SECONDS) == "queued ran"
    with pytest.raises(RuntimeError):
        workers.submit(lambda: None)


def test_a_shutdown_that_cancels_answers_every_queued_call_cancelled() -> None:
    workers = Workers(1)
    started, release = threading.Event(), threading.Event()

    def hold() -> bool:
        started.set()
        return release.wait(WAIT_SECONDS)

    async def scenario() -> tuple[bool, bool]:
        busy = workers.submit(hold)
        assert started.wait(WAIT_SECONDS)  # the only worker is busy: the rest stay queued
        queued = workers.submit(lambda: "never")
        awaited = workers.run(lambda: "never")
        workers.shutdown(wait=False, cancel_futures=True)
        release.set()
        with pytest.raises(CancelledError):
            queued.result(WAIT_SECONDS)
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(awaited, WAIT_SECONDS)
        return busy.result(WAIT_SECONDS), queued.cancelled()

    try:
        assert asyncio.run(scenario()) == (True, True)
    finally:
        workers.shutdown(wait=True)
