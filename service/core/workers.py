"""The worker threads that run the synchronous use cases for the event loop.

Every command crosses from the event loop to a worker thread and back. With the standard
`ThreadPoolExecutor` and `loop.run_in_executor` that crossing costs a `concurrent.futures`
future (a lock and a condition), the pool's idle-thread semaphore, contended by every
worker, and an asyncio future chained to the first one: a measurable share of the
server's CPU per command. `Workers` starts its threads once and hands them jobs through
one queue; `run` (the command path) settles an asyncio future directly from the worker,
with nothing in between. For everything else it is an ordinary `Executor`
(`loop.run_in_executor`, `submit`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from queue import Empty, SimpleQueue
from typing import Any, TypeVar

T = TypeVar("T")


class _Job:
    """One call for a worker; `cancel` answers it without running it (at shutdown)."""

    __slots__ = ("cancel", "run")

    def __init__(self, run: Callable[[], None], cancel: Callable[[], object]) -> None:
        self.run = run
        self.cancel = cancel


def _settle(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():  # the caller may have given up (cancelled) meanwhile
        future.set_result(result)


def _fail(future: asyncio.Future[Any], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


def _answer(loop: asyncio.AbstractEventLoop, settle: Callable[..., object], *args: Any
            ) -> None:
    # A closed loop raises RuntimeError: nobody waits for the answer any more.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(settle, *args)


class Workers(Executor):
    """A fixed number of worker threads, all started at once, taking jobs from one queue."""

    def __init__(self, count: int, name: str = "worker") -> None:
        if count < 1:
            raise ValueError("a pool needs at least one worker")
        self._jobs: SimpleQueue[_Job | None] = SimpleQueue()
        self._closed = False
        self._closing = threading.Lock()
        self._threads = [threading.Thread(target=self._work, name=f"{name}_{number}",
                                          daemon=True) for number in range(count)]
        for thread in self._threads:
            thread.start()

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            job.run()

    def _put(self, job: _Job) -> None:
        with self._closing:
            if self._closed:
                raise RuntimeError("cannot schedule new work after shutdown")
            self._jobs.put(job)

    def run(self, function: Callable[[], T]) -> asyncio.Future[T]:
        """Run `function` on a worker; its result (or exception) on the running event loop.
        Cancelling the returned future does not stop a call already running."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def run() -> None:
            if future.cancelled():  # the caller left while the job waited for a worker
                return
            try:
                result = function()
            except BaseException as error:
                _answer(loop, _fail, future, error)
            else:
                _answer(loop, _settle, future, result)

        def cancel() -> None:
            _answer(loop, future.cancel)

        self._put(_Job(run, cancel))
        return future

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """The `Executor` interface (for `loop.run_in_executor` and threads)."""
        future: Future[T] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(result)

        self._put(_Job(run, future.cancel))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No new work; the queued jobs still run (cancelled instead with
        `cancel_futures`), then the threads end; `wait`: until they have."""
        with self._closing:
            if not self._closed:
                self._closed = True
                if cancel_futures:
                    self._cancel_queued()
                for _ in self._threads:
                    self._jobs.put(None)
        if wait:
            for thread in self._threads:
                if thread is not threading.current_thread():
                    thread.join()

    def _cancel_queued(self) -> None:
        while True:
            try:
                job = self._jobs.get_nowait()
            except Empty:
                return
            if job is not None:
                job.cancel()


__all__ = ["Workers"]
