"""The grpcurl walk-through of docs/integrating.md, run line for line against a live referee.

Needs the `grpcurl` and `jq` commands; without them the test is skipped (Debian does not
package grpcurl). The same calls are covered without them by the first-hand example test.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.harness import LiveServer

PAGE = Path(__file__).resolve().parents[2] / "docs" / "integrating.md"
SECTION = re.compile(r"^## Calling it with grpcurl\n(.*?)^## ", re.MULTILINE | re.DOTALL)
SHELL_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)
DOCUMENTED_TARGET = "localhost:50051"
RUN_TIMEOUT_SECONDS = 120


def walkthrough() -> str:
    """The shell lines of the page's grpcurl section, in page order."""
    section = SECTION.search(PAGE.read_text(encoding="utf-8"))
    assert section is not None, "docs/integrating.md lost its grpcurl section"
    return "\n".join(SHELL_BLOCK.findall(section.group(1)))


@pytest.mark.skipif(shutil.which("grpcurl") is None or shutil.which("jq") is None,
                    reason="grpcurl and jq are not installed")
@pytest.mark.timeout(RUN_TIMEOUT_SECONDS + 30)
def test_grpcurl_walkthrough_runs_as_written(server: LiveServer, tmp_path: Path) -> None:
    script = walkthrough()
    assert script.count(DOCUMENTED_TARGET) >= 10
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script.replace(DOCUMENTED_TARGET, server.target)],
        capture_output=True, text=True, cwd=tmp_path, timeout=RUN_TIMEOUT_SECONDS, check=False,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    # The outputs the page shows, in kind: a refusal decoded, an idempotent retry, the
    # audit role's re-ruling, the anonymous refusal and the health check.
    assert '"reason":"NOT_YOUR_TURN"' in out
    assert '"replayed": true' in out
    assert '{"status":"in_progress","actions_applied":1,"collected":[0,0,0,0]}' in out
    assert '"reason":"MISSING_CREDENTIALS"' in out
    assert '"status": "SERVING"' in out
