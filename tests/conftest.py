"""Shared fixtures: a throwaway PostgreSQL 15 server for the whole test session.

Also the rule that keeps tests where they belong: a test that needs PostgreSQL or promtool
carries its marker, and `tests/unit` holds none of them (nor benchmark or install tests).
"""

from __future__ import annotations

import atexit
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

# The installed games (entry points) fill the domain's registry, as in the server and the
# command line: a test of the pure domain finds them too.
import fiftyk_referee.service.core.bundles  # noqa: F401
from tests.support.pgserver import (
    TEST_DATABASE,
    PostgresStartError,
    ThrowawayPostgres,
    create_database,
    drop_database,
)

# A fixture that needs something besides Python, and the marker its tests must carry.
FIXTURE_MARKERS = {"postgres_server": "postgres", "promtool": "promtool"}
# Markers of tests that need a server, a tool or the network: never in tests/unit.
NOT_UNIT_MARKERS = frozenset({"postgres", "promtool", "bench", "slow_install", "failover",
                              "npm"})
UNIT_TESTS = Path(__file__).resolve().parent / "unit"
# The slowest files, slowest first (`--durations` of a full run). The suite runs on parallel
# workers, one file per worker at a time (`--dist loadfile`, in this order): a long file
# started last would keep one worker busy while the others have long finished.
SLOWEST_FIRST = (
    "e2e/test_failover.py",
    "bench/test_bench_suite.py",
    "e2e/test_web_table.py",
    "e2e/test_commit_reveal.py",
    "e2e/test_store_outage.py",
    "bench/test_bench_webhooks.py",
    "integration/test_fairness.py",
    "e2e/test_rpc_matrix.py",
    "unit/test_legal_plays.py",
    "e2e/test_fairness.py",
    "e2e/test_crash_consistency.py",
    "e2e/test_client_only_install.py",
    "e2e/test_transport_limits.py",
    "e2e/test_webhook_process.py",
    "e2e/test_demo_and_replay.py",
    "e2e/test_ipv6.py",
    "e2e/test_processes.py",
    "e2e/test_webhooks_off_loopback.py",
    "e2e/test_table_lifecycle.py",
    "e2e/test_tls.py",
    "integration/test_shards.py",
    "e2e/test_full_hands.py",
    "unit/test_hand_playouts.py",
    "integration/test_application.py",
    "e2e/test_sizes_and_paging.py",
)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under a mutation run (scripts/mutation), forget every result the code has cached.

    mutmut runs each mutant's tests in a process forked from one that imported and collected
    the tests with the code unmutated: an answer cached then (a trump order, a lead's
    reading, the formats a follower owes) would hide the mutant."""
    del session
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", ""):
        return
    for name, module in list(sys.modules.items()):
        if not name.startswith("fiftyk_referee."):
            continue
        for value in list(vars(module).values()):
            found = [value, *(vars(value).values() if isinstance(value, type) else ())]
            for item in found:
                clear = getattr(getattr(item, "__func__", item), "cache_clear", None)
                if callable(clear):
                    clear()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a PostgreSQL or promtool test without its marker, and any such test in unit/;
    then put the slowest files first."""
    problems: list[str] = [f"tests/conftest.py: SLOWEST_FIRST names {name}, which is gone"
                           for name in SLOWEST_FIRST if not (UNIT_TESTS.parent / name).is_file()]
    for item in items:
        marks = {mark.name for mark in item.iter_markers()}
        needed = getattr(item, "fixturenames", ())
        problems.extend(
            f"{item.nodeid}: uses the {fixture} fixture but is not marked `{marker}`"
            for fixture, marker in FIXTURE_MARKERS.items()
            if fixture in needed and marker not in marks
        )
        if item.path.is_relative_to(UNIT_TESTS) and marks & NOT_UNIT_MARKERS:
            problems.append(f"{item.nodeid}: marked {sorted(marks & NOT_UNIT_MARKERS)}, so it"
                            " belongs in tests/integration, tests/e2e or tests/bench")
    if problems:
        raise pytest.UsageError("\n".join(problems))
    tests_root = UNIT_TESTS.parent
    rank = {name: position for position, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(
        item.path.relative_to(tests_root).as_posix() if item.path.is_relative_to(tests_root)
        else "", len(rank)))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[ThrowawayPostgres]:
    """A running throwaway PostgreSQL 15 server, shared by the whole session."""
    try:
        server = ThrowawayPostgres()
    except PostgresStartError as exc:
        pytest.fail(str(exc), pytrace=False)
    # Stops the server even if the session dies without running fixture teardown.
    atexit.register(server.stop)
    try:
        server.start()
    except PostgresStartError as exc:
        server.stop()
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres_url(postgres_server: ThrowawayPostgres) -> str:
    """URL of the session's `fiftyk_test` database."""
    return postgres_server.url(TEST_DATABASE)


def _new_database(postgres_server: ThrowawayPostgres) -> Iterator[str]:
    name = f"fiftyk_{uuid.uuid4().hex[:16]}"
    admin_url = postgres_server.url("postgres")
    create_database(admin_url, name)
    yield postgres_server.url(name)
    drop_database(admin_url, name)


@pytest.fixture
def fresh_postgres_db(postgres_server: ThrowawayPostgres) -> Iterator[str]:
    """URL of a brand-new empty database, dropped after the test."""
    yield from _new_database(postgres_server)


@pytest.fixture(scope="class")
def class_postgres_db(postgres_server: ThrowawayPostgres) -> Iterator[str]:
    """URL of a brand-new empty database shared by one test class (a server the class's
    tests share runs on it), dropped after the class."""
    yield from _new_database(postgres_server)


@pytest.fixture
def own_postgres() -> Iterator[ThrowawayPostgres]:
    """A PostgreSQL server of this test's own, which the test may stop and start again
    (`pause`/`resume`) without disturbing the session's shared server."""
    try:
        server = ThrowawayPostgres()
    except PostgresStartError as exc:
        pytest.fail(str(exc), pytrace=False)
    atexit.register(server.stop)
    try:
        server.start()
    except PostgresStartError as exc:
        server.stop()
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.stop()
