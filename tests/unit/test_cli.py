"""The `fiftyk` command line."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fiftyk_referee.domain.games import hosted
from fiftyk_referee.service.cli.games import cli_games
from fiftyk_referee.service.cli.main import EXIT_OUTPUT_CLOSED, build_parser, main
from fiftyk_referee.service.cli.server_address import DEFAULT_SERVER, SERVER_ENVIRONMENT

FIFTYK = str(Path(sys.executable).with_name("fiftyk"))
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
RUN_TIMEOUT_SECONDS = 60
# Every command that calls a referee, with the arguments it needs besides --server.
CLIENT_COMMANDS = {
    "health": [], "demo": [], "replay": ["HAND"], "export": ["HAND"],
}


def test_version_flag_prints_distribution_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("fiftyk ")


def test_no_subcommand_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: fiftyk" in capsys.readouterr().out


def test_without_the_server_extra_help_names_exactly_the_commands_left_out(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *rest: None if name == "eventsourcing" else found(name, *rest))
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    shown = capsys.readouterr().out
    assert "Not installed: serve, migrate (pip install 'fiftyk-referee[server]')" in (
        " ".join(shown.split()))
    assert main(["serve"]) == 2
    assert capsys.readouterr().err.startswith("fiftyk serve: needs the server extra"
                                              " (eventsourcing is not installed)")


def test_help_names_every_game_the_command_line_plays(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert set(cli_games()) == set(hosted()) == {"doudizhu", "fiftyk", "shengji"}
    for name, game in cli_games().items():
        assert f"{game.title} ({name})" in shown
    assert "五十K referee service" not in shown


@pytest.mark.parametrize("command", sorted(CLIENT_COMMANDS))
def test_every_client_command_defaults_to_the_quickstart_server(
        monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    monkeypatch.delenv(SERVER_ENVIRONMENT, raising=False)
    args = build_parser().parse_args([command, *CLIENT_COMMANDS[command]])
    assert args.server == DEFAULT_SERVER == "127.0.0.1:50051"


@pytest.mark.parametrize("command", sorted(CLIENT_COMMANDS))
def test_every_client_command_takes_its_server_from_the_environment(
        monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    monkeypatch.setenv(SERVER_ENVIRONMENT, "[::1]:6000")
    assert build_parser().parse_args([command, *CLIENT_COMMANDS[command]]).server == (
        "[::1]:6000")
    named = build_parser().parse_args([command, *CLIENT_COMMANDS[command], "--server",
                                       "127.0.0.1:7000"])
    assert named.server == "127.0.0.1:7000"


def _closed_pipe_run(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run the installed `fiftyk` with standard output a pipe nobody reads: its read end is
    closed before the command writes, so every write fails as `... | head -0` would."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([FIFTYK, *argv], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=RUN_TIMEOUT_SECONDS, check=False)
    finally:
        os.close(write_end)


@pytest.mark.parametrize("argv", [
    ["rules", "classify", "--preset", "classic", "5H", "10H", "KH"],
    ["rules", "beats", "--preset", "classic", "--top", "3S", "--play", "4S"],
    ["adjudicate", str(EXAMPLES / "transcript-qq3.json")],
    ["adjudicate", "--pretty", str(EXAMPLES / "transcript-shengji.json")],
    ["verify", str(EXAMPLES / "evidence-qq3.json"), "--key",
     str(EXAMPLES / "dev-signing-key.pub")],
])
def test_a_closed_standard_output_ends_a_command_quietly(argv: list[str]) -> None:
    done = _closed_pipe_run(*argv)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.stderr == ""
    assert done.returncode == EXIT_OUTPUT_CLOSED
