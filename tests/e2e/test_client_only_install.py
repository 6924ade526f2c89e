"""The client side installs and works without the server extra, in a fresh virtualenv.

The checkout's sources (what `deploy/Dockerfile` copies) are installed with pip and their
real dependency set into a new virtualenv; the client then talks to a referee this test
process runs. Slow (a wheel build and a dependency install): marked `slow_install`.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from fiftyk_referee.domain.games import adjudicate
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.e2e.harness import LiveServer, server_config

pytestmark = pytest.mark.slow_install

ROOT = Path(__file__).resolve().parents[2]
# What a build needs from the checkout (the same list deploy/Dockerfile copies).
SOURCES = ("pyproject.toml", "README.md", "fiftyk_referee", "domain", "service")
SERVER_ONLY_MODULES = ("eventsourcing", "psycopg", "prometheus_client", "grpc_health",
                       "grpc_reflection")
INSTALL_TIMEOUT_SECONDS = 600
RUN_TIMEOUT_SECONDS = 120
EXAMPLES = ROOT / "docs" / "examples"
# What the plain install leaves out: the commands that run a server or its store.
SERVER_COMMANDS = {"serve", "migrate"}
CLIENT_COMMANDS = {"adjudicate", "health", "rules", "demo", "replay", "verify", "export",
                   "keygen", "witness"}
# The progress filter scripts/_venv.sh runs pip's output through (what `./scripts/serve`
# prints during a first install).
PIP_PROGRESS = ROOT / "scripts" / "_pip_progress"
PROGRESS_LINE = re.compile(r"^scripts: pip: (collecting the packages|\d+ packages collected"
                           r" \(now \S+\)|building fiftyk-referee|installing \d+"
                           r" packages? \(of \d+ collected\)|installed)$")
NOT_INSTALLED = re.compile(r"Not installed: (.*?) \(pip install 'fiftyk-referee\[server\]'\)",
                           re.DOTALL)
COMMAND_ROW = re.compile(r"^    (\w+)", re.MULTILINE)
# The first hand `fiftyk demo` prints, per game: its hand id.
DEMO_HAND = {"fiftyk": re.compile(r"^hand 1 (\S+): dealer seat", re.MULTILINE),
             "shengji": re.compile(r"^hand 1 (\S+): team 0\+2 at", re.MULTILINE),
             "doudizhu": re.compile(r"^hand 1 (\S+): dealer seat \d, seat \d bids first",
                                    re.MULTILINE)}
DEMO_PRESET = {"fiftyk": "classic", "shengji": "tractor", "doudizhu": "rob"}
# One oracle question per game and the answer docs/oracle.md gives for it.
QUESTIONS = [
    ({"game": "fiftyk", "kind": "classify", "preset": "classic", "options": {},
      "input": {"cards": ["5H", "10H", "KH"]}}, {"type": "pure_fifty_k", "points": 25}),
    ({"game": "shengji", "kind": "classify", "preset": "tractor", "options": {},
      "input": {"level": "10", "trump": "H", "cards": ["KS", "KS", "QS", "QS"]}},
     {"type": "tractor", "components": [["KS", "KS", "QS", "QS"]]}),
    ({"game": "doudizhu", "kind": "classify", "preset": "classic", "options": {},
      "input": {"cards": ["5S", "5H", "5C", "SJ", "BJ"]}}, {"type": "INVALID_COMBINATION"}),
]

# Runs inside the client-only virtualenv: create a table, then decode a refused call.
CLIENT_SCRIPT = """
import json, sys
import grpc
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.auth import (
    AUDIT_KEY_HEADER, AUTHORIZATION_HEADER, PLATFORM_KEY_HEADER)
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

target, platform_key = sys.argv[1], sys.argv[2]
platform = RefereeClient(target, platform_key=platform_key)
table = platform.create_table("classic", 4).table
seen = platform.get_table(table.table_id)
try:
    platform.get_table("00000000-0000-4000-8000-000000000000")
    refused = None
except grpc.RpcError as error:
    code, reason, _ = error_reason(error)
    refused = [code.name, reason]
platform.close()
print(json.dumps({
    "table_id": table.table_id, "seen_id": seen.table_id, "players": seen.players,
    "refused": refused,
    "headers": [AUTHORIZATION_HEADER, AUDIT_KEY_HEADER, PLATFORM_KEY_HEADER],
    "loaded": sorted(m.split(".")[0] for m in sys.modules),
}))
"""


def _run(command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                          check=False, cwd="/")


@pytest.fixture(scope="module")
def client_install(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The python of a fresh virtualenv holding `pip install <checkout>` (no extras), and
    what scripts/_pip_progress printed while pip installed it."""
    base = tmp_path_factory.mktemp("client-only")
    source = base / "source"
    source.mkdir()
    for name in SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            # symlinks=True keeps fiftyk_referee/domain and /service as links, as in a clone.
            shutil.copytree(origin, source / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(origin, source / name)
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    log = base / "pip.log"
    install = (f"set -o pipefail; {shlex.quote(str(python))} -m pip install"
               f" --disable-pip-version-check --progress-bar off {shlex.quote(str(source))} 2>&1"
               f" | {shlex.quote(str(PIP_PROGRESS))} {shlex.quote(str(log))}")
    done = _run(["bash", "-c", install], INSTALL_TIMEOUT_SECONDS)
    assert done.returncode == 0, done.stdout + done.stderr + log.read_text(encoding="utf-8")
    return python, done.stderr


@pytest.fixture(scope="module")
def client_python(client_install: tuple[Path, str]) -> Path:
    """The python of the client-only virtualenv."""
    return client_install[0]


@pytest.fixture(scope="module")
def referee(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A referee of this checkout, run by the test process (which has the server extra)."""
    live = LiveServer(server_config(tmp_path_factory.mktemp("client-only-server")))
    yield live
    live.stop()


def test_the_client_install_holds_none_of_the_server_packages(client_python: Path) -> None:
    probe = ("import importlib.util, json, sys; print(json.dumps([m for m in sys.argv[1:]"
             " if importlib.util.find_spec(m) is not None]))")
    done = _run([str(client_python), "-c", probe, *SERVER_ONLY_MODULES], RUN_TIMEOUT_SECONDS)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_the_client_install_has_the_client_dependency_set(client_python: Path) -> None:
    probe = ("import importlib.metadata as m, json;"
             " print(json.dumps(m.requires('fiftyk-referee')))")
    done = _run([str(client_python), "-c", probe], RUN_TIMEOUT_SECONDS)
    assert done.returncode == 0, done.stderr
    base = {requirement.split(">")[0] for requirement in json.loads(done.stdout)
            if "extra ==" not in requirement}
    assert base == {"grpcio", "grpcio-status", "protobuf", "googleapis-common-protos",
                    "cryptography"}


def test_the_client_creates_a_table_and_decodes_an_error_reason(
    client_python: Path, referee: LiveServer
) -> None:
    done = _run([str(client_python), "-c", CLIENT_SCRIPT, referee.target, DEV_PLATFORM_KEY],
                RUN_TIMEOUT_SECONDS)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["table_id"] and result["seen_id"] == result["table_id"]
    assert result["players"] == 4
    assert result["refused"] == ["NOT_FOUND", "TABLE_NOT_FOUND"]
    assert result["headers"] == ["authorization", "x-fiftyk-audit-key", "x-fiftyk-platform-key"]
    assert not set(result["loaded"]) & set(SERVER_ONLY_MODULES)
    # The server really recorded the table the client-only install created.
    assert referee.platform().get_table(result["table_id"]).players == 4


def test_fiftyk_serve_without_the_server_extra_says_what_to_install(
    client_python: Path,
) -> None:
    fiftyk = client_python.parent / "fiftyk"
    done = _run([str(fiftyk), "serve", "--port", "0"], RUN_TIMEOUT_SECONDS)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "pip install 'fiftyk-referee[server]'" in lines[0]
    assert lines[0].startswith("fiftyk serve: needs the server extra")


def test_fiftyk_help_names_exactly_the_commands_it_leaves_out(client_python: Path) -> None:
    shown = _run([str(client_python.parent / "fiftyk"), "--help"], RUN_TIMEOUT_SECONDS)
    assert shown.returncode == 0, shown.stderr
    listed, _, epilog = shown.stdout.partition("Not installed:")
    left_out = NOT_INSTALLED.search("Not installed:" + epilog)
    assert left_out is not None, shown.stdout
    assert {word.strip() for word in left_out.group(1).split(",")} == SERVER_COMMANDS
    assert set(COMMAND_ROW.findall(listed)) == CLIENT_COMMANDS


@pytest.mark.parametrize("command", sorted(SERVER_COMMANDS))
def test_a_command_left_out_without_the_server_extra_says_what_to_install(
    client_python: Path, command: str,
) -> None:
    done = _run([str(client_python.parent / "fiftyk"), command, "--help"], RUN_TIMEOUT_SECONDS)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [done.stderr.strip()]
    assert done.stderr.startswith(f"fiftyk {command}: needs the server extra")


def test_rules_ask_answers_every_game_on_the_client_install(client_python: Path) -> None:
    lines = "".join(json.dumps(question) + "\n" for question, _ in QUESTIONS)
    done = subprocess.run([str(client_python.parent / "fiftyk"), "rules", "ask"], input=lines,
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS,
                          check=False, cwd="/")
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers == [answer for _, answer in QUESTIONS]


@pytest.mark.parametrize("example", ["transcript-qq3.json", "transcript-shengji.json"])
def test_adjudicate_rules_on_both_games_on_the_client_install(
    client_python: Path, example: str,
) -> None:
    path = EXAMPLES / example
    done = _run([str(client_python.parent / "fiftyk"), "adjudicate", str(path)],
                RUN_TIMEOUT_SECONDS)
    assert done.returncode == 0, done.stderr
    # The same ruling as the server install's rules engine gives.
    assert json.loads(done.stdout) == adjudicate(json.loads(path.read_text()))


@pytest.mark.parametrize("game", ["fiftyk", "shengji", "doudizhu"])
def test_demo_and_replay_run_every_game_on_the_client_install(
    client_python: Path, referee: LiveServer, game: str,
) -> None:
    fiftyk = str(client_python.parent / "fiftyk")
    played = _run([fiftyk, "demo", "--server", referee.target, "--game", game, "--preset",
                   DEMO_PRESET[game], "--hands", "1", "--seed", "3"], RUN_TIMEOUT_SECONDS)
    assert played.returncode == 0, played.stdout + played.stderr
    assert played.stdout.rstrip().endswith("fiftyk demo: 1/1 hands completed")
    found = DEMO_HAND[game].search(played.stdout)
    assert found is not None, played.stdout
    hand_id = found.group(1)
    done = _run([fiftyk, "replay", hand_id, "--server", referee.target], RUN_TIMEOUT_SECONDS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"hand {hand_id} (table ")
    assert "\nresult:\n" in done.stdout
    # The stored hand the replay told is the one the server finished.
    events = referee.audit().all_hand_events(hand_id)
    assert f"{len(events)} events" in done.stdout.splitlines()[0]


def test_fiftyk_verify_runs_every_check_on_the_client_install(client_python: Path) -> None:
    fiftyk = str(client_python.parent / "fiftyk")
    done = _run([fiftyk, "verify", str(EXAMPLES / "evidence-qq3.json"), "--key",
                 str(EXAMPLES / "dev-signing-key.pub")], RUN_TIMEOUT_SECONDS)
    assert done.returncode == 0, done.stdout + done.stderr
    statuses = {line.split(":")[0].split()[-1]: line.split()[0]
                for line in done.stdout.splitlines()[:-1]}
    # signature, chain, commitment, deck, ledger... and the re-ruling by the rules engine.
    assert statuses["re-rule"] == "ok"
    assert statuses["deck"] == "ok"
    assert "server" not in done.stdout


def test_health_asks_a_referee_on_the_client_install(
    client_python: Path, referee: LiveServer
) -> None:
    done = _run([str(client_python.parent / "fiftyk"), "health", "--server", referee.target],
                RUN_TIMEOUT_SECONDS)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{referee.target}: SERVING\n", "")
    named = _run([str(client_python.parent / "fiftyk"), "health", "--server", referee.target,
                  "--service", "fiftyk.referee.v1.RefereeService"], RUN_TIMEOUT_SECONDS)
    assert (named.returncode, named.stdout) == (0, f"{referee.target}: SERVING\n")


def test_an_install_prints_progress_lines_while_pip_works(
        client_install: tuple[Path, str]) -> None:
    """What `./scripts/serve` prints on a first install (scripts/_venv.sh runs pip's output
    through scripts/_pip_progress): a few lines, none of pip's own."""
    lines = client_install[1].splitlines()
    assert lines, "no progress at all"
    assert all(PROGRESS_LINE.match(line) for line in lines), lines
    assert lines[0] == "scripts: pip: collecting the packages"
    installing = [line for line in lines if line.startswith("scripts: pip: installing ")]
    assert len(installing) == 1, lines
    count, collected = map(int, re.findall(r"\d+", installing[0]))
    # Every package installed was counted as collected (the project itself is built, not
    # collected).
    assert count - 1 <= collected, installing[0]
    assert "scripts: pip: building fiftyk-referee" in lines
    assert lines[-1] == "scripts: pip: installed"


def test_the_venv_script_runs_pip_through_the_progress_filter() -> None:
    venv_script = (ROOT / "scripts" / "_venv.sh").read_text(encoding="utf-8")
    assert '2>&1 | "$ROOT/scripts/_pip_progress" "$LOG"' in venv_script
    assert "--quiet" not in venv_script
