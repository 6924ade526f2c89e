"""The `fiftyk` command line."""

import importlib.util

import pytest

from fiftyk_referee.service.cli.main import main


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
    assert "Not installed: health, serve, migrate (pip install 'fiftyk-referee[server]')" in (
        " ".join(shown.split()))
    assert main(["serve"]) == 2
    assert capsys.readouterr().err.startswith("fiftyk serve: needs the server extra"
                                              " (eventsourcing is not installed)")
