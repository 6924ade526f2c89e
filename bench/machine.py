"""What a benchmark report needs from the machine: facts, /proc readings, a server process.

`machine_facts()` collects what makes figures comparable (CPU, memory, kernel, Python,
package versions, load average); `ServerProcess` runs `fiftyk serve` on port 0 as a child
process, the way a deployment runs it, and reads its memory and CPU time from /proc.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO, Any

import psycopg

PACKAGES = ("grpcio", "protobuf", "eventsourcing", "psycopg", "psycopg-binary", "psycopg-pool",
            "prometheus-client", "rlcard", "numpy")
SERVING_PREFIX = "fiftyk serving grpc="
START_TIMEOUT_SECONDS = 60.0
STOP_TIMEOUT_SECONDS = 30.0
KIB = 1024
PG_SETTINGS = ("fsync", "synchronous_commit", "full_page_writes", "shared_buffers",
               "max_connections")
# utime and stime are fields 14 and 15 of /proc/PID/stat; after the ")" that ends the
# command name they are the 12th and 13th.
STAT_UTIME_AFTER_COMM = 11
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
REPO_ROOT = Path(__file__).resolve().parents[1]


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (or the platform's processor string)."""
    for line in _read(Path("/proc/cpuinfo")).splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def memory_total_mib() -> int | None:
    """Total memory in MiB from /proc/meminfo."""
    for line in _read(Path("/proc/meminfo")).splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // KIB
    return None


def load_average() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def package_versions(names: Sequence[str] = PACKAGES) -> dict[str, str | None]:
    """Installed versions of the packages whose speed the figures depend on."""
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def git_revision() -> str | None:
    """`git describe --always --dirty` of the working tree, if it is one."""
    try:
        done = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=REPO_ROOT,
                              capture_output=True, text=True, check=False, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def machine_facts() -> dict[str, Any]:
    """Everything about the machine and the software that the figures depend on."""
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": affinity,
        "memory_mib": memory_total_mib(),
        "kernel": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "packages": package_versions(),
        "git": git_revision(),
    }


def postgres_facts(url: str) -> dict[str, str]:
    """The PostgreSQL server's version and the settings that change write speed."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT version()").fetchone()
        facts = {"version": str(row[0]) if row else "unknown"}
        for name in PG_SETTINGS:
            setting = conn.execute(f"SHOW {name}").fetchone()
            facts[name] = str(setting[0]) if setting else "unknown"
    return facts


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (0 when it is gone)."""
    text = _read(Path(f"/proc/{pid}/stat"))
    if not text:
        return 0.0
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[STAT_UTIME_AFTER_COMM]) + int(fields[STAT_UTIME_AFTER_COMM + 1])
            ) / CLOCK_TICKS


def children_of(pid: int) -> list[int]:
    """Pids whose parent is `pid` (e.g. the backends of a PostgreSQL postmaster)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        text = _read(entry / "stat")
        if text and int(text.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def postmaster_pid(datadir: Path) -> int | None:
    """The postmaster's pid from its data directory's postmaster.pid."""
    lines = _read(datadir / "postmaster.pid").splitlines()
    return int(lines[0]) if lines and lines[0].strip().isdigit() else None


def reaped_children_cpu_seconds(pid: int) -> float:
    """CPU time of a process's children that ended and were waited for (cutime + cstime):
    a postmaster's backends whose connections closed."""
    text = _read(Path(f"/proc/{pid}/stat"))
    if not text:
        return 0.0
    fields = text.rsplit(")", 1)[1].split()
    return (int(fields[STAT_UTIME_AFTER_COMM + 2]) + int(fields[STAT_UTIME_AFTER_COMM + 3])
            ) / CLOCK_TICKS


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of a process and its direct children (a postmaster and its backends), the
    ended ones included: a run whose connections closed before the reading still counts."""
    return (process_cpu_seconds(pid) + reaped_children_cpu_seconds(pid)
            + sum(process_cpu_seconds(c) for c in children_of(pid)))


def rss_kib(pid: int) -> int:
    """A process's resident set size (VmRSS) in KiB."""
    for line in _read(Path(f"/proc/{pid}/status")).splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"process {pid} has no VmRSS (has it exited?)")


def fiftyk_command() -> list[str]:
    """How to run the `fiftyk` console script of this environment."""
    script = Path(sys.executable).with_name("fiftyk")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", "fiftyk_referee.service.cli"]


@dataclass(frozen=True)
class Serving:
    """Where a started server listens."""

    target: str
    metrics_port: int | None


class ServerProcess:
    """`fiftyk serve --port 0 --metrics-port 0 ...` as a child process (a context manager).

    Its output goes to `log_path`; the first line names the ports.
    """

    def __init__(self, arguments: Sequence[str], log_path: Path, *,
                 start_timeout: float = START_TIMEOUT_SECONDS) -> None:
        # No rate limits: the lab measures the referee's capacity, which floods of tables
        # and bots at full speed would otherwise meet as RATE_LIMITED refusals.
        self.argv = [*fiftyk_command(), "serve", "--host", "127.0.0.1", "--port", "0",
                     "--metrics-port", "0", "--rate-limits", "off", *arguments]
        self.log_path = log_path
        # `--processes N` prints its first line once every process serves: N imports and
        # pools on a loaded machine can take minutes.
        self.start_timeout = start_timeout
        self._process: subprocess.Popen[str] | None = None
        self._log: IO[str] | None = None
        self._drain: threading.Thread | None = None

    @property
    def pid(self) -> int:
        """The server's process id."""
        if self._process is None:
            raise RuntimeError("the server is not running")
        return self._process.pid

    def __enter__(self) -> Serving:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("w")
        self._process = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=self._log,
                                         text=True, cwd=REPO_ROOT)
        first = self._first_line()
        self._drain = threading.Thread(target=self._copy_output, daemon=True)
        self._drain.start()
        if not first.startswith(SERVING_PREFIX):
            self.__exit__()
            raise RuntimeError(f"fiftyk serve did not start: {first!r}; see {self.log_path}")
        grpc_part, _, metrics_part = first[len(SERVING_PREFIX):].partition(" metrics=")
        metrics = metrics_part.strip()
        return Serving(grpc_part.strip(), int(metrics) if metrics.isdigit() else None)

    def _first_line(self) -> str:
        process = self._process
        if process is None or process.stdout is None:
            return ""
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()
                                                              if process.stdout else ""),
                                  daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        return lines[0].strip() if lines else ""

    def _copy_output(self) -> None:
        process, log = self._process, self._log
        if process is None or process.stdout is None or log is None:
            return
        for line in process.stdout:
            log.write(line)

    def __exit__(self, *exc: object) -> None:
        process = self._process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._drain is not None:
            self._drain.join(STOP_TIMEOUT_SECONDS)
        if self._log is not None:
            self._log.close()
            self._log = None

    def rss_kib(self) -> int:
        """The server's VmRSS in KiB."""
        return rss_kib(self.pid)

    def cpu_seconds(self) -> float:
        """The server's CPU time so far, with its children's (`serve --processes N`)."""
        return process_cpu_seconds(self.pid) + sum(
            process_cpu_seconds(child) for child in children_of(self.pid))


__all__ = ["ServerProcess", "Serving", "children_of", "cpu_model", "fiftyk_command",
           "git_revision", "load_average", "machine_facts", "package_versions",
           "postgres_facts", "postmaster_pid", "process_cpu_seconds",
           "reaped_children_cpu_seconds", "rss_kib",
           "tree_cpu_seconds"]
