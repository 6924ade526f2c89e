"""A throwaway PostgreSQL 15 server (initdb + pg_ctl on a free loopback port) for tests and
benchmarks. As root, the server runs as the `postgres` OS user: PostgreSQL refuses root."""

from __future__ import annotations

import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import psycopg
from psycopg import sql

REQUIRED_MAJOR = "15"
DEBIAN_DEFAULT_BINDIR = Path(f"/usr/lib/postgresql/{REQUIRED_MAJOR}/bin")
SERVER_OS_USER = "postgres"  # the server refuses to run as root, so root runs it as this user
SUPERUSER = "postgres"
TEST_DATABASE = "fiftyk_test"
START_TIMEOUT_SECONDS = 60
START_ATTEMPTS = 3  # the free port we pick can be taken by someone else before the server binds it
SERVER_OPTIONS = (
    "-F -c listen_addresses=127.0.0.1 -c max_connections=200"
    " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
)


class PostgresStartError(RuntimeError):
    """The throwaway server could not be set up; the message says why."""


def _find_bindir() -> Path:
    configured = os.environ.get("PG_BINDIR")
    if configured:
        return Path(configured)
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=True)
        return Path(out.stdout.strip())
    if DEBIAN_DEFAULT_BINDIR.is_dir():
        return DEBIAN_DEFAULT_BINDIR
    raise PostgresStartError(
        f"PostgreSQL {REQUIRED_MAJOR} server binaries not found: set PG_BINDIR, or put pg_config "
        f"on PATH (Debian: apt-get install postgresql-{REQUIRED_MAJOR} libpq-dev)"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ThrowawayPostgres:
    """An initdb'd cluster in a temp dir, started on a free loopback port, removed on stop."""

    def __init__(self) -> None:
        self.bindir = _find_bindir()
        for tool in ("initdb", "pg_ctl", "postgres"):
            if not (self.bindir / tool).is_file():
                raise PostgresStartError(f"{tool} not found in {self.bindir} (set PG_BINDIR)")
        self._as_root = os.geteuid() == 0
        self._base = Path(tempfile.mkdtemp(prefix="fiftyk-pg-", dir="/tmp"))
        self.datadir = self._base / "data"
        self.sockdir = self._base / "sock"
        self.logfile = self._base / "postgres.log"
        self.port = 0
        self._running = False
        self._frozen = False
        self._prepare_dirs()

    def _prepare_dirs(self) -> None:
        self.sockdir.mkdir()
        if not self._as_root:
            return
        try:
            owner = pwd.getpwnam(SERVER_OS_USER)
        except KeyError as exc:
            raise PostgresStartError(
                f"running as root, but there is no '{SERVER_OS_USER}' OS user to run the server"
            ) from exc
        # The server user must be able to traverse and write its own directories.
        for path in (self._base, self.sockdir):
            path.chmod(0o755)
            os.chown(path, owner.pw_uid, owner.pw_gid)

    def _command(self, argv: Sequence[str]) -> list[str]:
        if not self._as_root:
            return list(argv)
        runuser = shutil.which("runuser")
        if runuser:
            return [runuser, "-u", SERVER_OS_USER, "--", *argv]
        return ["su", SERVER_OS_USER, "-s", "/bin/sh", "-c", shlex.join(argv)]

    def _run(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        # cwd matters: the server user may not be able to read the caller's cwd (e.g. /root).
        return subprocess.run(
            self._command(argv), cwd=self._base, capture_output=True, text=True, check=False
        )

    def _log_text(self) -> str:
        try:
            return self.logfile.read_text(errors="replace")
        except OSError:
            return "(no server log)"

    def start(self) -> None:
        """Initialise the cluster, start the server and create the test database."""
        version = self._run([str(self.bindir / "postgres"), "--version"])
        if f"PostgreSQL) {REQUIRED_MAJOR}." not in version.stdout:
            raise PostgresStartError(
                f"need PostgreSQL {REQUIRED_MAJOR}, {self.bindir} has: {version.stdout.strip()}"
                f"{version.stderr.strip()} (set PG_BINDIR)"
            )
        init = self._run(
            [
                str(self.bindir / "initdb"),
                "-D", str(self.datadir),
                "-A", "trust",
                "-U", SUPERUSER,
                "--no-sync",
                "-E", "UTF8",
                "--no-locale",
            ]
        )
        if init.returncode != 0:
            raise PostgresStartError(f"initdb failed:\n{init.stdout}\n{init.stderr}")
        failures: list[str] = []
        for _ in range(START_ATTEMPTS):
            self.port = _free_port()
            options = f"{SERVER_OPTIONS} -p {self.port} -k {self.sockdir}"
            started = self._run(
                [
                    str(self.bindir / "pg_ctl"),
                    "-w", "-t", str(START_TIMEOUT_SECONDS),
                    "-D", str(self.datadir),
                    "-l", str(self.logfile),
                    "-o", options,
                    "start",
                ]
            )
            if started.returncode == 0:
                self._running = True
                break
            failures.append(
                f"{started.stdout}\n{started.stderr}\n--- server log ---\n{self._log_text()}"
            )
        else:
            raise PostgresStartError(
                "pg_ctl start failed:\n" + "\n=== next attempt ===\n".join(failures)
            )
        create_database(self.url("postgres"), TEST_DATABASE)

    def _pg_ctl_start(self) -> subprocess.CompletedProcess[str]:
        options = f"{SERVER_OPTIONS} -p {self.port} -k {self.sockdir}"
        return self._run([
            str(self.bindir / "pg_ctl"), "-w", "-t", str(START_TIMEOUT_SECONDS),
            "-D", str(self.datadir), "-l", str(self.logfile), "-o", options, "start",
        ])

    def pause(self) -> None:
        """Stop the server (an outage: every connection drops), keeping its data and port for
        `resume`. A fast stop, not an immediate one: the server runs with
        synchronous_commit=off, so a crash would lose its last commits, which a real
        database (synchronous commit on) never does."""
        if not self._running:
            raise PostgresStartError("the server is not running")
        stopped = self._run([str(self.bindir / "pg_ctl"), "-D", str(self.datadir),
                             "-m", "fast", "-w", "stop"])
        if stopped.returncode != 0:
            raise PostgresStartError(f"pg_ctl stop failed:\n{stopped.stdout}\n{stopped.stderr}")
        self._running = False

    def resume(self) -> None:
        """Start the paused server again on the same port."""
        started = self._pg_ctl_start()
        if started.returncode != 0:
            raise PostgresStartError(
                f"pg_ctl start failed:\n{started.stdout}\n{started.stderr}\n{self._log_text()}")
        self._running = True

    def _processes(self) -> list[int]:
        """This server's processes: its postmaster, then everything the postmaster started
        (backends, background workers)."""
        postmaster = int((self.datadir / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):  # the process ended meanwhile
                continue
            if parent == postmaster:
                children.append(int(stat.parent.name))
        return [postmaster, *children]

    def freeze(self) -> None:
        """Stop this server's processes (SIGSTOP) until `thaw`: a database that hangs. Its
        connections stay open and the kernel keeps them alive, but nothing answers."""
        os.kill(self._processes()[0], signal.SIGSTOP)  # first: no new backend after this
        for pid in self._processes()[1:]:
            os.kill(pid, signal.SIGSTOP)
        self._frozen = True

    def thaw(self) -> None:
        """Let a frozen server run again (SIGCONT)."""
        for pid in reversed(self._processes()):
            os.kill(pid, signal.SIGCONT)
        self._frozen = False

    def url(self, dbname: str) -> str:
        """Connection URL for one database on this server."""
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{dbname}"

    def stop(self) -> None:
        """Stop the server (if running) and delete its files; safe to call twice."""
        if self._frozen:
            self.thaw()
        if self._running:
            self._running = False
            self._run([str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", "fast", "stop"])
        shutil.rmtree(self._base, ignore_errors=True)


def create_database(admin_url: str, name: str) -> None:
    """CREATE DATABASE `name`, connecting through `admin_url`."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(admin_url: str, name: str) -> None:
    """DROP DATABASE `name`, closing any connections a test left open."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
