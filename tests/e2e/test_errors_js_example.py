"""docs/examples/errors.js, the grpc-js example of reading rich error details, against a live
referee: Node.js with @grpc/grpc-js, @grpc/proto-loader and protobufjs, built from proto/ alone.

The packages are installed with npm once per test run into a temporary directory (a few
seconds with the registry reachable). Marked `npm`; without node or npm the tests fail with
what to install, they are never skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import grpc
import pytest

from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.ops import config_keys as keys
from tests.e2e.harness import LiveServer, seat_bots

pytestmark = pytest.mark.npm

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "errors.js"
# What the example's header tells a reader to install (majors it was written against).
PACKAGES = ("@grpc/grpc-js@^1.14", "@grpc/proto-loader@^0.8", "protobufjs@^7")
INSTALL_TIMEOUT_SECONDS = 300
RUN_TIMEOUT_SECONDS = 60
NO_SUCH_TABLE = "00000000-0000-4000-8000-000000000000"
# Decodes a status-details blob given in hex with the example's own function.
DECODE = ("const { decodeStatusDetails } = require(process.argv[1]);"
          " console.log(JSON.stringify(decodeStatusDetails(Buffer.from(process.argv[2], 'hex'))))")


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"`{name}` is missing: these tests run docs/examples/errors.js with"
                    " Node.js; install nodejs and npm (Debian: apt-get install nodejs npm)")
    return found


@pytest.fixture(scope="module")
def node_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A node_modules holding the example's packages, installed once for this run."""
    node, npm = _tool("node"), _tool("npm")
    del node
    prefix = tmp_path_factory.mktemp("errors-js")
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error",
         "--prefix", str(prefix), *PACKAGES],
        capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS, check=False,
        cwd=prefix, env={**os.environ, "npm_config_cache": str(prefix / "npm-cache")},
    )
    assert done.returncode == 0, f"npm install failed:\n{done.stdout}{done.stderr}"
    return prefix / "node_modules"


def _node(node_modules: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != keys.PLATFORM_KEY}
    env["NODE_PATH"] = str(node_modules)
    return subprocess.run([_tool("node"), *argv], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_SECONDS, check=False, cwd=ROOT, env=env)


def test_errors_js_prints_the_reason_of_a_live_refusal(
        node_modules: Path, server: LiveServer) -> None:
    done = _node(node_modules, str(EXAMPLE), "--server", server.target)
    assert done.returncode == 0, done.stdout + done.stderr
    decoded = json.loads(done.stdout)
    # The same refusal, decoded by the referee's own Python helper.
    try:
        server.platform().get_table(NO_SUCH_TABLE)
        pytest.fail("the referee found a table that does not exist")
    except grpc.RpcError as error:
        expected = error_details(error)
    assert decoded == {
        "codeName": "NOT_FOUND", "code": grpc.StatusCode.NOT_FOUND.value[0],
        "message": expected.message, "reason": "TABLE_NOT_FOUND",
        "domain": "fiftyk.referee.v1", "metadata": dict(expected.metadata),
    }


def test_errors_js_decodes_a_captured_details_blob_with_its_metadata(
        node_modules: Path, server: LiveServer) -> None:
    """A refusal whose ErrorInfo carries metadata (the unknown card), captured in Python."""
    seated = seat_bots(server, "classic", 4, prefix="errors-js")
    hand = seated.platform.start_hand(seated.table_id).hand
    try:
        seated.seats[hand.turn_seat].play(seated.table_id, hand.hand_id, ["1OH"])
        pytest.fail("the referee took a card that does not exist")
    except grpc.RpcError as error:
        trailers = dict(error.trailing_metadata() or ())  # type: ignore[attr-defined]
        blob = trailers["grpc-status-details-bin"]
        expected = error_details(error)
    assert expected.metadata == {"card": "1OH"}
    done = _node(node_modules, "-e", DECODE, str(EXAMPLE), blob.hex())
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == {
        "code": grpc.StatusCode.INVALID_ARGUMENT.value[0], "message": expected.message,
        "reason": "UNKNOWN_CARD", "domain": "fiftyk.referee.v1", "metadata": {"card": "1OH"},
    }
