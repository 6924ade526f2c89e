"""docs/examples/platform.py, a platform built only from proto/, against a live referee: a
lobby of both games, a seat recovered mid-hand, tables aborted and closed, and the webhook
deliveries of those changes, signed and checked with the documented function."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fiftyk_referee.service.ops import config_keys as keys
from tests.e2e.harness import LiveServer
from tests.e2e.test_first_hand_example import RUNNER

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "docs" / "examples" / "platform.py"
DOCS = REPOSITORY / "docs" / "integrating.md"
PROCESS_TIMEOUT = 180
EXPECTED_LINES = [
    # Most recently active first: the Shengji table's players sat down last.
    "lobby: shengji tractor TABLE_STATE_WAITING [bo-0, bo-1, bo-2, bo-3]",
    "lobby: fiftyk classic TABLE_STATE_WAITING [ann-0, ann-1, ann-2, ann-3]",
    "old token: UNAUTHENTICATED TOKEN_REVOKED",
    "new token: seat 1 holds 27 cards",
    "aborted: voided hand True",
    "closed tables: 2",
    "webhook: table.seat_token_reissued (fiftyk)",
    "webhook: table.hand_voided (fiftyk)",
    "webhook: table.closed (fiftyk)",
    "webhook: table.closed (shengji)",
]


def test_example_source_imports_nothing_of_the_referee() -> None:
    assert "fiftyk_referee" not in EXAMPLE.read_text(encoding="utf-8")


def test_the_examples_verifier_is_the_documented_one() -> None:
    source = EXAMPLE.read_text(encoding="utf-8")
    start = source.index("def verify_fiftyk_signature")
    function = source[start:source.index("\n\n\n", start)]
    assert function in DOCS.read_text(encoding="utf-8")


@pytest.mark.timeout(PROCESS_TIMEOUT + 30)
def test_a_platform_runs_its_lobby_from_the_protos_alone(server: LiveServer) -> None:
    env = {k: v for k, v in os.environ.items() if k not in (keys.PLATFORM_KEY, keys.AUDIT_KEY)}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(EXAMPLE), "--server", server.target],
        capture_output=True, text=True, timeout=PROCESS_TIMEOUT, env=env, cwd=REPOSITORY,
        check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line for line in lines if not line.startswith("webhook ")] == EXPECTED_LINES
