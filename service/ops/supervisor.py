"""`fiftyk serve --processes N`: several server processes on one gRPC port.

One Python process runs Python code on one core at a time (the GIL), so a host with several
cores runs one referee process per core. The processes share the gRPC port (SO_REUSEPORT:
the kernel spreads connections over them) and one PostgreSQL database — the same topology
as several replicas, which the event store keeps correct (optimistic concurrency, cache
fast-forward; see `service.core.application`). Each process has its own metrics port.

The supervisor starts the first process (which creates the schema if configured), then the
others without schema creation; relays SIGTERM/SIGINT to all of them for a graceful
shutdown; and stops the rest when one of them exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from types import FrameType

from fiftyk_referee.service.ops import config_keys as keys
from fiftyk_referee.service.ops.config import DATA_DIR_ENV, Config, host_port

READY_PREFIX = "fiftyk serving "
CHILD_MAIN = "import sys; from fiftyk_referee.service.cli.main import main; sys.exit(main())"


@dataclass
class Child:
    """One server process and the metrics port it reported."""

    process: subprocess.Popen[str]
    metrics_port: str


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


def _child_command(config: Config, port: int, index: int) -> list[str]:
    metrics = config.metrics_port + index if config.metrics_port else 0
    command = [
        sys.executable, "-c", CHILD_MAIN, "serve", "--processes", "1", "--reuse-port",
        "--host", config.host, "--port", str(port), "--metrics-port", str(metrics),
        "--log-level", config.log_level, "--workers", str(config.workers),
        "--db-pool-size", str(config.pool_size), "--lock-timeout-ms", str(config.lock_timeout_ms),
        "--max-message-bytes", str(config.max_message_bytes),
        "--turn-sweep-seconds", str(config.turn_sweep_seconds),
        "--db-timeout-seconds", str(config.db_timeout_seconds),
        "--db-startup-wait-seconds", str(config.db_startup_wait_seconds),
    ]
    for flag, path in (("--tls-cert-file", config.tls_cert_file),
                       ("--tls-key-file", config.tls_key_file),
                       ("--tls-client-ca-file", config.tls_client_ca_file)):
        if path is not None:
            command += [flag, str(path)]
    if config.trusted_network:
        command.append("--trusted-network")
    for flag, spec in (("--rate-limits", config.rate_limits),
                       ("--watch-limits", config.watch_limits),
                       ("--transport-limits", config.transport_limits)):
        if spec:
            command += [flag, spec]
    schema = config.create_schema and index == 0  # one creator: concurrent DDL can collide
    command.append("--create-schema" if schema else "--no-create-schema")
    return command


def _child_env(config: Config) -> dict[str, str]:
    env = dict(os.environ)
    env[keys.DATABASE_URL] = config.database_url  # by environment: not visible in `ps`
    env[DATA_DIR_ENV] = str(config.data_dir)
    env[keys.TOKEN_SECRET] = config.token_secret  # every process must verify every token
    env[keys.AUDIT_KEY] = config.audit_key
    env[keys.PLATFORM_KEY] = config.platform_key
    env.pop(keys.PROCESSES, None)
    return env


def _spawn(config: Config, port: int, index: int) -> subprocess.Popen[str]:
    return subprocess.Popen(_child_command(config, port, index), env=_child_env(config),
                            stdout=subprocess.PIPE, text=True)


def _ready(process: subprocess.Popen[str], index: int) -> Child:
    """Wait for a started process's ready line; its metrics port."""
    if process.stdout is None:  # pragma: no cover - stdout=PIPE always gives one
        raise RuntimeError("no stdout from the server process")
    line = process.stdout.readline()
    if not line.startswith(READY_PREFIX):
        process.wait()
        raise RuntimeError(f"server process {index} did not start (exit {process.returncode})")
    metrics = line.rsplit("metrics=", 1)[-1].strip()
    relay = threading.Thread(target=_relay, args=(process,), daemon=True)
    relay.start()
    return Child(process, metrics)


def _relay(process: subprocess.Popen[str]) -> None:
    if process.stdout is None:  # pragma: no cover
        return
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()


def _stop(processes: Sequence[subprocess.Popen[str]], sig: int = signal.SIGTERM) -> None:
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(sig)


def supervise(config: Config) -> int:
    """Run `config.processes` server processes on one port until signalled; exit status.

    A signal reaches every process started so far, also one still starting: a stop during
    start-up starts no more and leaves none behind."""
    port = config.port or _free_port(config.host)
    processes: list[subprocess.Popen[str]] = []  # every process started, ready or not
    children: list[Child] = []
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        del frame
        stopping.set()
        _stop(processes, signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    try:
        for index in range(config.processes):
            if stopping.is_set():
                break
            processes.append(_spawn(config, port, index))
            if stopping.is_set():  # the signal came between the start and the list
                _stop(processes[-1:])
            children.append(_ready(processes[-1], index))
    except RuntimeError as error:
        _stop(processes)
        codes = [process.wait() for process in processes]
        if stopping.is_set():  # stopped while starting: not a failure to start
            return max(codes, default=0)
        print(f"fiftyk serve: {error}", file=sys.stderr)
        return 1
    if stopping.is_set():
        return max((process.wait() for process in processes), default=0)
    metrics = ",".join(child.metrics_port for child in children)
    print(f"{READY_PREFIX}grpc={host_port(config.host, port)} metrics={metrics}"
          f" processes={len(children)}", flush=True)
    codes = []
    for process in processes:
        codes.append(process.wait())
        if not stopping.is_set():  # one process ended by itself: stop the others too
            stopping.set()
            _stop(processes)
    return max(codes, default=0)
