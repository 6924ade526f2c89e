"""A throwaway pg_auto_failover formation on loopback: a monitor and PostgreSQL 15 nodes with
synchronous replication, each node run by its own `pg_autoctl`, for the failover test.

As root, every `pg_autoctl` runs as the `postgres` OS user (PostgreSQL refuses root), and the
referee, which connects as the OS user running the tests (the URI `pg_autoctl show uri`
prints names no user), gets a login role of that name owning the database.

The monitor's failure detection is tuned from its defaults (a node is declared failed after
20 s, and a primary that stops reporting is waited for 30 s before its standby takes writes)
to about a second each: the test measures the referee, not pg_auto_failover's patience. The
keepers' `network_partition_timeout` (after which a primary that sees neither the monitor
nor its standby demotes itself) stays below the monitor's demote timeout, the order
pg_auto_failover needs to never have two primaries.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from getpass import getuser
from pathlib import Path

import psutil
import psycopg
import psycopg.errors
from psycopg import sql

from tests.support.pgserver import SERVER_OS_USER, PostgresStartError, _find_bindir, _free_port

DATABASE = "fiftyk"
HOST = "127.0.0.1"
FORMATION = "default"
INSTALL_HINT = ("pg_auto_failover is not installed: apt-get install postgresql-15-auto-failover"
                " (.ci/run installs it), or put pg_autoctl on PATH")
STATE_WAIT_SECONDS = 120.0
POLL_SECONDS = 0.2
DROP_WAIT_SECONDS = 10
DEADLOCK_ATTEMPTS = 5
COMMAND_TIMEOUT_SECONDS = 120.0
# Monitor settings (milliseconds): how fast a dead primary is noticed and replaced.
MONITOR_SETTINGS = {
    "pgautofailover.health_check_period": 1000,
    "pgautofailover.health_check_timeout": 1000,
    "pgautofailover.health_check_max_retries": 1,
    "pgautofailover.health_check_retry_delay": 500,
    "pgautofailover.node_considered_unhealthy_timeout": 2000,
    "pgautofailover.primary_demote_timeout": 4000,
}
# Keeper settings (seconds): below the monitor's primary_demote_timeout.
KEEPER_SETTINGS = {
    "timeout.network_partition_timeout": "2",
    "timeout.prepare_promotion_walreceiver": "1",
}
# The monitor's states of a node that takes writes (apply_settings: a primary changing its
# synchronous standbys).
WRITABLE_STATES = frozenset({"primary", "wait_primary", "single", "apply_settings",
                             "join_primary"})


class ClusterError(RuntimeError):
    """The formation could not be set up or did not reach a state; the message says why."""


@dataclass
class Node:
    """One pg_auto_failover node: its name, port, data directory and `pg_autoctl run`."""

    name: str
    port: int
    pgdata: Path
    process: subprocess.Popen[bytes]
    log: Path


class AutoFailoverCluster:
    """A monitor and nodes under a temp directory; `stop` ends every process and deletes it."""

    def __init__(self) -> None:
        self.pg_autoctl = shutil.which("pg_autoctl")
        if self.pg_autoctl is None:
            raise ClusterError(INSTALL_HINT)
        try:
            self.bindir = _find_bindir()
        except PostgresStartError as error:
            raise ClusterError(str(error)) from None
        self._as_root = os.geteuid() == 0
        self.base = Path(tempfile.mkdtemp(prefix="fiftyk-paf-", dir="/tmp"))
        if self._as_root:
            shutil.chown(self.base, SERVER_OS_USER, SERVER_OS_USER)
        self.base.chmod(0o755)
        self.env = {
            # The server user may not read the caller's PATH entries (root's home).
            "PATH": f"{self.bindir}:/usr/local/bin:/usr/bin:/bin",
            "XDG_CONFIG_HOME": str(self.base / "config"),
            "XDG_DATA_HOME": str(self.base / "share"),
            "XDG_RUNTIME_DIR": str(self.base / "run"),
            "LANG": "C.UTF-8",
        }
        self.monitor_port = 0
        self.monitor: Node | None = None
        self.nodes: dict[str, Node] = {}
        self._killed: set[str] = set()

    # -- processes -----------------------------------------------------------------------

    def _argv(self, argv: Sequence[str]) -> list[str]:
        command = ["env", *(f"{key}={value}" for key, value in self.env.items()), *argv]
        if self._as_root:
            return ["runuser", "-u", SERVER_OS_USER, "--", *command]
        return command

    def _run(self, *argv: str, log: Path | None = None) -> str:
        """Run a pg_autoctl command to its end; its output is appended to `log` if given."""
        assert self.pg_autoctl is not None
        done = subprocess.run(self._argv([self.pg_autoctl, *argv]), cwd=self.base,
                              capture_output=True, text=True, errors="replace", check=False,
                              timeout=COMMAND_TIMEOUT_SECONDS)
        if log is not None:
            with log.open("a") as out:
                out.write(done.stdout + done.stderr)
        if done.returncode != 0:
            raise ClusterError(f"pg_autoctl {' '.join(argv)} failed ({done.returncode}):\n"
                               f"{done.stdout}\n{done.stderr}")
        return done.stdout

    def _spawn(self, name: str, create: Sequence[str], port: int | None = None,
               settings: dict[str, str] | None = None) -> Node:
        """Create the instance with `pg_autoctl create` (which returns once it is initialised:
        a standby has its base backup), write its settings while nothing reads the
        configuration, then run it with `pg_autoctl run`.

        Never `create --run`: its supervisor restarts a failed service through the init
        path, which in pg_auto_failover 2.0 then asks the local server instead of the monitor
        whether the node was dropped, and gives up after five restarts (CI met this once)."""
        assert self.pg_autoctl is not None
        log = self.base / f"{name}.log"
        pgdata = self.base / name
        port = port or _free_port()
        self._run(*create, "--pgdata", str(pgdata), "--pgport", str(port),
                  "--pgctl", str(self.bindir / "pg_ctl"), "--hostname", HOST,
                  "--auth", "trust", "--no-ssl", log=log)
        for key, value in (settings or {}).items():
            self._run("config", "set", "--pgdata", str(pgdata), key, value)
        with log.open("ab") as out:
            process = subprocess.Popen(
                self._argv([self.pg_autoctl, "run", "--pgdata", str(pgdata)]),
                cwd=self.base, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True)
        return Node(name, port, pgdata, process, log)

    def log_tail(self, lines: int = 30) -> str:
        """The last lines of every pg_autoctl log, for a failure message."""
        parts = []
        for path in sorted(self.base.glob("*.log")):
            text = path.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {path.name} ---\n" + "\n".join(text))
        return "\n".join(parts)

    # -- the formation -------------------------------------------------------------------

    @property
    def monitor_uri(self) -> str:
        """The monitor's connection URI (its database `pg_auto_failover`)."""
        return f"postgres://autoctl_node@{HOST}:{self.monitor_port}/pg_auto_failover"

    def start_monitor(self) -> None:
        """Create and run the monitor, with fast failure detection."""
        self.monitor = self._spawn("monitor", ["create", "monitor"])
        self.monitor_port = self.monitor.port
        admin = self._monitor_admin
        self._wait(lambda: self._answers(admin), "the monitor to accept connections")
        with psycopg.connect(admin, autocommit=True) as conn:
            for name, value in MONITOR_SETTINGS.items():
                conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(
                    sql.Identifier(*name.split(".")), sql.Literal(str(value))))
            conn.execute("SELECT pg_reload_conf()")

    @property
    def _primary_url(self) -> str:
        """The superuser's URL of whichever node takes writes."""
        hosts = ",".join(f"{HOST}:{node.port}" for node in self.nodes.values())
        return (f"postgres://{self._superuser}@{hosts}/{DATABASE}"
                "?target_session_attrs=read-write")

    @property
    def _monitor_admin(self) -> str:
        return f"postgres://{self._superuser}@{HOST}:{self.monitor_port}/pg_auto_failover"

    @property
    def _superuser(self) -> str:
        return SERVER_OS_USER if self._as_root else getuser()

    def add_node(self, name: str, *, port: int | None = None) -> Node:
        """Create and run a node (the first becomes the primary, the others its standbys) on
        a free port or the given one (a replacement taking a lost node's address); return
        once the monitor reports it primary or secondary."""
        node = self._spawn(name, ["create", "postgres", "--name", name, "--dbname", DATABASE,
                                  "--listen", HOST, "--monitor", self.monitor_uri], port,
                           KEEPER_SETTINGS)
        self.nodes[name] = node
        self._wait(lambda: self.state(name) in {"primary", "secondary", "single"},
                   f"node {name} to join the formation")
        return node

    def states(self) -> dict[str, tuple[str, str]]:
        """Every node's reported and assigned state, as the monitor has them."""
        text = self._run("show", "state", "--pgdata", str(self.base / "monitor"), "--json")
        return {row["nodename"]: (row["current_group_state"], row["assigned_group_state"])
                for row in json.loads(text)}

    def state(self, name: str) -> str:
        """A node's reported state ("" while the monitor does not know it)."""
        try:
            reported, assigned = self.states().get(name, ("", ""))
        except (ClusterError, json.JSONDecodeError):
            return ""
        return reported if reported == assigned else ""

    def uri(self) -> str:
        """The formation's URI, as `pg_autoctl show uri` prints it for applications."""
        text = self._run("show", "uri", "--pgdata", str(self.base / "monitor"),
                         "--formation", FORMATION)
        return text.strip()

    def grant_referee_role(self) -> str:
        """A login role for the OS user running the tests, owning the database (schema
        rights); returns its name."""
        role = getuser()
        if role == self._superuser:
            return role
        with psycopg.connect(self._primary_url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
            conn.execute(sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                sql.Identifier(DATABASE), sql.Identifier(role)))
        return role

    def primary(self) -> Node:
        """The node the monitor has as the (writable) primary."""
        for name, (reported, assigned) in self.states().items():
            # A dead primary keeps its last reported state; the monitor assigns it another.
            if reported == assigned and reported in WRITABLE_STATES and name in self.nodes:
                return self.nodes[name]
        raise ClusterError(f"no primary: {self.states()}")

    def wait_writable(self, name: str) -> float:
        """Wait until the node takes writes; return the monotonic time it was first seen to."""
        url = f"postgres://{self._superuser}@{HOST}:{self.nodes[name].port}/{DATABASE}"
        self._wait(lambda: self._writable(url), f"node {name} to take writes",
                   poll=POLL_SECONDS / 4)
        return time.monotonic()

    def wait_state(self, name: str, wanted: set[str]) -> None:
        """Wait until the monitor reports the node in one of the wanted states."""
        self._wait(lambda: self.state(name) in wanted, f"node {name} to reach {wanted}")

    def set_synchronous(self, name: str, synchronous: bool) -> None:
        """Make a standby part of the write quorum (synchronous) or not (asynchronous), by
        the monitor's own function (what `pg_autoctl set node replication-quorum` calls)."""
        for attempt in range(1, DEADLOCK_ATTEMPTS + 1):
            try:
                with psycopg.connect(self._monitor_admin, autocommit=True) as conn:
                    conn.execute("SELECT pgautofailover.set_node_replication_quorum(%s, %s, %s)",
                                 (FORMATION, name, synchronous))
                return
            except psycopg.errors.DeadlockDetected:
                # The function and a keeper's state report lock the node row in opposite
                # orders (pg_auto_failover 2.0): the monitor aborts one, try again.
                if attempt == DEADLOCK_ATTEMPTS:
                    raise
                time.sleep(POLL_SECONDS)

    def synchronous_standby_names(self) -> str:
        """The primary's `synchronous_standby_names` ('' means asynchronous replication)."""
        with psycopg.connect(self._primary_url, autocommit=True) as conn:
            row = conn.execute("SHOW synchronous_standby_names").fetchone()
        return str(row[0]) if row else ""

    # -- failures ------------------------------------------------------------------------

    def kill(self, name: str) -> None:
        """kill -9 the node's pg_autoctl (every process of it) and its postgres."""
        node = self.nodes[name]
        self._killed.add(name)
        victims: list[psutil.Process] = []
        pidfile = node.pgdata / "postmaster.pid"
        if pidfile.is_file():
            victims.append(psutil.Process(int(pidfile.read_text().split()[0])))
        # Popen's process is runuser (as root) or pg_autoctl itself; its descendants are
        # pg_autoctl's supervisor and services, and postgres with its backends.
        root = psutil.Process(node.process.pid)
        victims += [root, *root.children(recursive=True)]
        # Freeze them all first: pg_autoctl's supervisor restarts a service it sees die, and
        # would fork a new one between two kills.
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for victim in victims:
                with contextlib.suppress(psutil.NoSuchProcess):
                    victim.send_signal(sig)
        node.process.wait(COMMAND_TIMEOUT_SECONDS)

    def destroy(self, name: str) -> int:
        """The node is lost for good: delete its data directory and drop it from the
        monitor (after `kill`); returns the port it had."""
        node = self.nodes.pop(name)
        shutil.rmtree(node.pgdata)
        # The monitor may still be moving the group through the failover: drop again until
        # the node is gone from its list (only then may another node take its address).
        deadline = time.monotonic() + STATE_WAIT_SECONDS
        while name in self.states():
            if time.monotonic() > deadline:
                raise ClusterError(f"node {name} was not dropped: {self.states()}")
            with contextlib.suppress(ClusterError):
                self._run("drop", "node", "--monitor", self.monitor_uri, "--name", name,
                          "--force", "--wait", str(DROP_WAIT_SECONDS))
        return node.port

    # -- helpers -------------------------------------------------------------------------

    @staticmethod
    def _answers(url: str) -> bool:
        try:
            with psycopg.connect(url, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    @staticmethod
    def _writable(url: str) -> bool:
        try:
            with psycopg.connect(url, connect_timeout=2, autocommit=True) as conn:
                row = conn.execute("SELECT pg_is_in_recovery() OR current_setting("
                                   "'transaction_read_only')::boolean").fetchone()
            return bool(row is not None and not row[0])
        except psycopg.Error:
            return False

    def _wait(self, ready: object, what: str, *, poll: float = POLL_SECONDS) -> None:
        assert callable(ready)
        deadline = time.monotonic() + STATE_WAIT_SECONDS
        while not ready():
            ended = [node.name for node in self._started() if node.process.poll() is not None]
            if time.monotonic() > deadline or ended:
                if ended:
                    what += f" (pg_autoctl of {', '.join(ended)} exited)"
                raise ClusterError(f"timed out waiting for {what}:\n{self.log_tail()}")
            time.sleep(poll)

    def _started(self) -> list[Node]:
        """Every node still meant to run (a killed node has left `nodes` or is waited for)."""
        running = [node for node in self.nodes.values() if node.name not in self._killed]
        return [*running, *([self.monitor] if self.monitor else [])]

    def stop(self) -> None:
        """End every pg_autoctl and postgres of the formation and delete its files."""
        for node in [*self.nodes.values(), *([self.monitor] if self.monitor else [])]:
            if node.process.poll() is None:
                try:
                    os.killpg(node.process.pid, signal.SIGTERM)
                    node.process.wait(COMMAND_TIMEOUT_SECONDS / 4)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    self.kill_quietly(node)
            pidfile = node.pgdata / "postmaster.pid"
            if pidfile.is_file():
                with contextlib.suppress(psutil.NoSuchProcess, ValueError, IndexError):
                    psutil.Process(int(pidfile.read_text().split()[0])).kill()
        self.nodes.clear()
        self.monitor = None
        self._kill_strays()
        shutil.rmtree(self.base, ignore_errors=True)

    def _kill_strays(self) -> None:
        """SIGKILL any process still working in the formation's directory (a service that a
        supervisor restarted while it was being killed)."""
        for process in psutil.process_iter(["cwd"]):
            cwd = process.info.get("cwd")
            if cwd and Path(cwd).is_relative_to(self.base):
                with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
                    process.kill()

    @staticmethod
    def kill_quietly(node: Node) -> None:
        """SIGKILL a node's whole process group (a stop that timed out)."""
        try:
            os.killpg(node.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
