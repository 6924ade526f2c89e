"""docs/examples/first_hand.py, the client built only from proto/, against a live referee.

The example runs as its own process with the referee's package made unimportable, so it
proves what docs/integrating.md promises: `proto/` plus grpcio, protobuf, grpcio-status and
grpcio-tools are enough to play a hand.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fiftyk_referee.service.cli.hand_text import result_lines, side_text
from fiftyk_referee.service.ops import config_keys as keys
from tests.e2e.harness import LiveServer

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "docs" / "examples" / "first_hand.py"
PROCESS_TIMEOUT = 120
# Runs the example with every `fiftyk_referee` import failing (a None entry in sys.modules
# makes `import` raise ImportError), so a stray import of the referee cannot go unnoticed.
RUNNER = (
    "import runpy, sys\n"
    "sys.modules['fiftyk_referee'] = None\n"
    "sys.argv = [sys.argv[1], *sys.argv[2:]]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)
TABLE_LINE = re.compile(r"^table (\S+) preset classic fingerprint [0-9a-f]{12}$", re.MULTILINE)
REFUSAL_LINE = re.compile(r"^refused: FAILED_PRECONDITION NOT_YOUR_TURN: .+$", re.MULTILINE)
OVER_LINE = re.compile(r"^hand over after (\d+) actions; finishing order \[[\d, ]+\]$",
                       re.MULTILINE)
RULING_LINE = re.compile(r"^transcript re-ruled: completed, (\d+) actions, scores \[.+\]$",
                         re.MULTILINE)
TOTALS_LINE = re.compile(r"^table totals: (.+)$", re.MULTILINE)


def _run_example(server: LiveServer) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (keys.PLATFORM_KEY, keys.AUDIT_KEY)}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, "-c", RUNNER, str(EXAMPLE), "--server", server.target],
        capture_output=True, text=True, timeout=PROCESS_TIMEOUT, env=env, cwd=REPOSITORY,
        check=False,
    )


def test_example_source_imports_nothing_of_the_referee() -> None:
    assert "fiftyk_referee" not in EXAMPLE.read_text(encoding="utf-8")


@pytest.mark.timeout(PROCESS_TIMEOUT + 30)
def test_first_hand_example_plays_a_whole_hand_from_the_protos_alone(
        server: LiveServer) -> None:
    done = _run_example(server)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    table = TABLE_LINE.search(out)
    over = OVER_LINE.search(out)
    ruling = RULING_LINE.search(out)
    totals = TOTALS_LINE.search(out)
    assert table and over and ruling and totals, out
    assert REFUSAL_LINE.search(out), out
    # The hand the example printed is the table's one completed hand on the server, and the
    # referee's re-ruling of the exported transcript applied every action the example sent.
    sheet = server.platform().scores(table.group(1))
    assert len(sheet.hands) == 1 and sheet.match_over is False
    assert ruling.group(1) == over.group(1)
    assert totals.group(1) == ", ".join(f"{t.side} {t.score}" for t in sheet.totals)
    result = sheet.hands[0].result
    for seat in result.seats:
        assert f"seat {seat.seat}: score {seat.score}" in out
    # Sides and the winner read as `fiftyk demo` prints them ("winner: team 1+3").
    demo_lines = result_lines(result)
    assert [line for line in out.splitlines() if line.startswith("winner: ")] == [
        line for line in demo_lines if line.startswith("winner: ")]
    for team in result.teams:
        assert f"{side_text(list(team.seats))}: collected {team.collected}, score {team.score}" in (
            out)
