"""Webhook deliveries in a process of their own, which the server starts, watches and stops.

Why a process. Delivering is a chain of small blocking steps per event (read the page, build
and sign the body, write the request, read the answer, record the position). In the server's
process every one of them waits for the GIL behind the commands: under load an endpoint got
half the feed's rate and fell behind by seconds, and the commands paid for the switches. In
its own process delivery has an interpreter to itself, and the server's commands none of its
work. An operator may lower its priority (`FIFTYK_WEBHOOKS` `niceness`, 0 by default), so
that on a machine whose cores are all busy the commands get the larger share, at the price
of deliveries that lag more.

The parent (`DeliveryProcess`, in `fiftyk serve`) starts `python -c CHILD_MAIN` with the
delivery's settings on its stdin (one JSON line: the event store's settings, the retry
settings, the lease holder, the log level), then keeps the pipe open. The child
(`child_main`) opens the event store itself, follows the feed's head (`FOLLOW_SECONDS`) and
runs `WebhookDispatcher` — the same workers, leases, positions, dead letters, signatures and
address policy as described in `service.webhooks`. It writes to its stdout one JSON
line per `RELAY_SECONDS` with the metric calls and log records of that time; the parent applies them
to its own metrics and loggers, so `/metrics` and the server's log show deliveries as before.

Life cycle. The child stops when its stdin reaches its end: the parent closed it (a graceful
shutdown: an attempt in flight ends within the attempt timeout, the leases are given back)
or the parent died (even by SIGKILL: the kernel closes the pipe); stopped while still
starting (before it began delivering), it ends at once (`child.py`). If the child dies while
the server runs, the parent logs a warning, counts `fiftyk_webhook_process_restarts_total`
and starts another after a pause (`RESTART_PAUSE_SECONDS`, doubling while it keeps dying, up
to `MAX_RESTART_PAUSE_SECONDS`). The new child uses the same lease holder, so it takes the
endpoints over at once; it starts from the positions recorded, so an event whose delivery
was not recorded yet is sent again (at least once, same event id).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import IO, Any

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.ops.logs import QUIET_BELOW_DEBUG
from fiftyk_referee.service.ops.webhook_settings import WebhookSettings
from fiftyk_referee.service.platform.webhook_store import WebhookStore
from fiftyk_referee.service.webhooks.dispatcher import RETRIED_FAILURES, WebhookDispatcher

# The child starts in `child.py`, which imports nothing of the referee's until it watches
# its stdin (a stop before it begins delivering ends it at once), then calls `child_main`.
CHILD_MAIN = ("import sys; from fiftyk_referee.service.webhooks.child import main;"
              " sys.exit(main())")
RELAY_SECONDS = 0.2  # how often the child reports its metric calls and log records
FOLLOW_SECONDS = 0.1  # how often the child looks at the feed's head
RESTART_PAUSE_SECONDS = 1.0
MAX_RESTART_PAUSE_SECONDS = 30.0
STABLE_SECONDS = 60.0  # a child that ran this long restarts after the shortest pause again
# A stopping child has the attempt timeout and this much more to end, then it is killed: the
# whole stop stays within the server's bound for the step (service.server, 5 s more).
STOP_GRACE_SECONDS = 2.0
KILL_WAIT_SECONDS = 2.0
# The metric calls a child may relay: `service.webhooks.dispatcher.WebhookMetrics`, nothing else.
RELAYED_METRICS = frozenset({"serve_webhook", "webhook_delivered", "webhook_failed",
                             "webhook_retried", "webhook_dead_lettered", "set_webhook_lag",
                             "forget_webhook"})
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DeliverySpec:
    """What the child needs: the event store's settings (`store.persistence_env`, without
    schema creation), the delivery settings, the lease holder and the log level."""

    persistence: dict[str, str]
    settings: WebhookSettings
    holder: str
    log_level: str

    def to_line(self) -> bytes:
        """The spec as one JSON line (for the child's stdin: never on a command line)."""
        return (json.dumps({"persistence": self.persistence, "settings": asdict(self.settings),
                            "holder": self.holder, "log_level": self.log_level})
                + "\n").encode()

    @classmethod
    def from_line(cls, line: bytes) -> DeliverySpec:
        """A spec read back."""
        data = json.loads(line)
        return cls(persistence=dict(data["persistence"]),
                   settings=WebhookSettings(**data["settings"]), holder=str(data["holder"]),
                   log_level=str(data["log_level"]))


class RelayedMetricsSink:
    """What the parent does with a child's metric calls: only `RELAYED_METRICS`, applied to
    the server's metrics; remembers the endpoints the child serves, to drop their gauges if
    the child dies."""

    def __init__(self, metrics: Any) -> None:
        self.metrics = metrics
        self.served: set[str] = set()

    def apply(self, calls: list[Any]) -> None:
        """Apply `[[name, [args...]], ...]` in order."""
        for name, arguments in calls:
            if name not in RELAYED_METRICS or self.metrics is None:
                continue
            if name == "serve_webhook":
                self.served.add(str(arguments[0]))
            elif name == "forget_webhook":
                self.served.discard(str(arguments[0]))
            getattr(self.metrics, name)(*arguments)

    def forget_all(self) -> None:
        """The child is gone: its endpoints' gauges go too."""
        for endpoint in sorted(self.served):
            if self.metrics is not None:
                self.metrics.forget_webhook(endpoint)
        self.served.clear()


def relay_log_record(entry: dict[str, Any]) -> None:
    """Log a child's record in this process, under its own logger name and level."""
    record = logging.makeLogRecord({
        "name": str(entry["name"]), "levelno": int(entry["levelno"]),
        "levelname": logging.getLevelName(int(entry["levelno"])), "msg": str(entry["message"]),
        "created": float(entry["created"]), "delivery_pid": int(entry["pid"])})
    logger = logging.getLogger(record.name)
    if logger.isEnabledFor(record.levelno):
        logger.handle(record)


class DeliveryProcess:
    """The parent's side: starts the delivery process, relays what it reports, restarts it
    when it dies and stops it with the server."""

    def __init__(self, spec: DeliverySpec, *, metrics: Any = None,
                 command: list[str] | None = None) -> None:
        self.spec = spec
        self.settings = spec.settings
        self.metrics = metrics
        self._command = command or [sys.executable, "-c", CHILD_MAIN]
        self._sink = RelayedMetricsSink(metrics)
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self.restarts = 0
        self.exit_status: int | None = None  # the last child's, once it has ended

    @staticmethod
    def new_holder() -> str:
        """A lease holder for one server: every child of the server holds leases as it."""
        return str(uuid.uuid4())

    @property
    def pid(self) -> int | None:
        """The running child's process id (None between a death and its restart)."""
        with self._lock:
            child = self._child
        return child.pid if child is not None and child.poll() is None else None

    def start(self) -> None:
        """Start the child, and watch it until `stop`."""
        self._thread = threading.Thread(target=self._supervise, name="webhook-process",
                                        daemon=True)
        self._thread.start()

    def _spawn(self) -> subprocess.Popen[bytes] | None:
        with self._lock:
            if self._stopping.is_set():
                return None
            child = subprocess.Popen(self._command, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, close_fds=True)
            self._child = child
        if child.stdin is not None:
            # A child that died at once is seen below; one stopped meanwhile, by `stop`.
            with contextlib.suppress(OSError, ValueError):
                child.stdin.write(self.spec.to_line())
                child.stdin.flush()
        log.info("webhook delivery process %d started", child.pid,
                 extra={"delivery_pid": child.pid})
        return child

    def _supervise(self) -> None:
        pause = RESTART_PAUSE_SECONDS
        while not self._stopping.is_set():
            began = time.monotonic()
            try:
                child = self._spawn()
            except OSError as error:
                log.error("webhook delivery process could not start: %s", error)
                child = None
            if self._stopping.is_set():
                return
            if child is not None:
                self._relay(child.stdout)
                code = child.wait()
                self.exit_status = code
                self._sink.forget_all()
                if self._stopping.is_set():
                    return
                log.warning("webhook delivery process %d exited (status %s); restarting it",
                            child.pid, code, extra={"delivery_pid": child.pid,
                                                    "exit_status": code})
            if self.metrics is not None:
                self.metrics.webhook_process_restarted()
            self.restarts += 1
            if time.monotonic() - began >= STABLE_SECONDS:
                pause = RESTART_PAUSE_SECONDS
            if self._stopping.wait(pause):
                return
            pause = min(MAX_RESTART_PAUSE_SECONDS, pause * 2)

    def _relay(self, stream: IO[bytes] | None) -> None:
        """Apply the child's reports until its stdout ends (it exited)."""
        if stream is None:  # pragma: no cover - stdout=PIPE always gives one
            return
        with stream:
            for line in stream:
                try:
                    report = json.loads(line)
                    self._sink.apply(report.get("metrics", []))
                    for entry in report.get("logs", []):
                        relay_log_record(entry)
                except (ValueError, TypeError, KeyError, AttributeError) as error:
                    log.warning("webhook delivery process: unreadable report (%s)", error)

    def stop(self) -> None:
        """Stop the child (an attempt in flight finishes or times out, the leases are given
        back); kill it if it does not end within the attempt timeout and a grace period."""
        self._stopping.set()
        with self._lock:
            child = self._child
        if child is not None:
            if child.stdin is not None:
                with contextlib.suppress(OSError):
                    child.stdin.close()
            try:
                child.wait(self.settings.timeout + STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                log.error("webhook delivery process %d did not stop in time; killing it",
                          child.pid)
                child.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):  # stuck in the kernel
                    child.wait(KILL_WAIT_SECONDS)
            self.exit_status = child.returncode
        if self._thread is not None:
            self._thread.join(KILL_WAIT_SECONDS)
            self._thread = None


# -- the child ---------------------------------------------------------------------------------


class Relay:
    """The child's reports to the parent: metric calls and log records, one JSON line per
    `RELAY_SECONDS` on stdout (the only writer of stdout)."""

    def __init__(self, out: IO[bytes]) -> None:
        self._out = out
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        self._metrics: list[list[Any]] = []
        self._logs: list[dict[str, Any]] = []
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._run, name="relay", daemon=True)

    def start(self) -> None:
        """Report until `close`."""
        self._thread.start()

    def metric(self, name: str, *arguments: Any) -> None:
        """Queue a metric call."""
        with self._lock:
            self._metrics.append([name, list(arguments)])

    def log(self, entry: dict[str, Any]) -> None:
        """Queue a log record; a warning or worse is written at once."""
        with self._lock:
            self._logs.append(entry)
        if entry["levelno"] >= logging.WARNING:
            self.flush()

    def flush(self) -> None:
        """Write what is queued (one line at a time, in the order it was queued)."""
        with self._writing:
            with self._lock:
                metrics, logs = self._metrics, self._logs
                self._metrics, self._logs = [], []
            if not metrics and not logs:
                return
            line = json.dumps({"metrics": metrics, "logs": logs}).encode() + b"\n"
            with contextlib.suppress(OSError, ValueError):  # the parent is gone: nobody reads
                self._out.write(line)
                self._out.flush()

    def _run(self) -> None:
        while not self._closed.wait(RELAY_SECONDS):
            self.flush()

    def close(self) -> None:
        """Write the rest and stop."""
        self._closed.set()
        self._thread.join()
        self.flush()


class RelayedMetrics:
    """`service.webhooks.dispatcher.WebhookMetrics` in the child: each call queued for the
    parent."""

    def __init__(self, relay: Relay) -> None:
        self._relay = relay

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name not in RELAYED_METRICS:
            raise AttributeError(name)

        def call(*arguments: Any) -> None:
            self._relay.metric(name, *arguments)

        return call


class RelayLogHandler(logging.Handler):
    """Queues the child's log records for the parent's log."""

    def __init__(self, relay: Relay, pid: int) -> None:
        super().__init__()
        self._relay = relay
        self._pid = pid

    def emit(self, record: logging.LogRecord) -> None:
        """Queue the record (its message rendered, the exception's text after it)."""
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + logging.Formatter().formatException(record.exc_info)
        self._relay.log({"name": record.name, "levelno": record.levelno, "message": message,
                         "created": record.created, "pid": self._pid})


def _follow_head(app: Referee, dispatcher: WebhookDispatcher,
                 stopping: threading.Event) -> None:
    """Wake the workers when the feed's head moves (events of any replica)."""
    head = -1
    while not stopping.wait(FOLLOW_SECONDS):
        try:
            now = app.head_position()
        except RETRIED_FAILURES as error:  # the store did not answer: look again later
            log.debug("webhook delivery: the store did not answer (%s)", error)
            continue
        if now != head:
            head = now
            dispatcher.poke()


def child_main(line: bytes, begin: Callable[[], None], closed: threading.Event) -> int:
    """The delivery process, once `child.main` has read its spec (`line`) and watches its
    stdin: deliver from `begin` until stdin ends (`closed`)."""
    spec = DeliverySpec.from_line(line)
    os.nice(spec.settings.niceness)
    relay = Relay(sys.stdout.buffer)
    root = logging.getLogger()
    root.handlers[:] = [RelayLogHandler(relay, os.getpid())]
    root.setLevel(spec.log_level.upper())
    for quiet in QUIET_BELOW_DEBUG:
        logging.getLogger(quiet).setLevel(
            logging.DEBUG if spec.log_level.upper() == "DEBUG" else logging.WARNING)
    relay.start()
    try:
        _deliver(spec, relay, begin, closed)
    except Exception:  # the server logs it, then starts another process
        log.exception("webhook delivery process failed")
        return 1
    finally:
        relay.close()
    return 0


def _deliver(spec: DeliverySpec, relay: Relay, begin: Callable[[], None],
             closed: threading.Event) -> None:
    """Run the dispatcher on the event store until stdin ends, then stop it."""
    app = Referee(spec.persistence)
    stopping = threading.Event()
    try:
        settings = spec.settings
        store = WebhookStore(app, create=False, private=settings.private,
                             loopback=settings.loopback is not False)
        dispatcher = WebhookDispatcher(app, store, settings, metrics=RelayedMetrics(relay),
                                       holder=spec.holder)
        follower = threading.Thread(target=_follow_head, args=(app, dispatcher, stopping),
                                    name="follow-head", daemon=True)
        begin()  # from here on, the end of stdin stops the deliveries gracefully
        follower.start()
        dispatcher.start()
        closed.wait()  # until the server closes the pipe, or dies
        stopping.set()
        dispatcher.stop()
        follower.join()
    finally:
        stopping.set()
        app.close()


__all__ = ["CHILD_MAIN", "DeliveryProcess", "DeliverySpec", "child_main"]
