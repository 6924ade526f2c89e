"""The `fiftyk` command line."""

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
