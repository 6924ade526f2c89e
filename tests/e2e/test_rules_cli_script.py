"""The installed `fiftyk` console script answers `rules` questions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("fiftyk")


@pytest.fixture(scope="module")
def fiftyk() -> Path:
    """Path of the console script installed next to the running interpreter."""
    if not SCRIPT.exists():
        pytest.fail(f"console script {SCRIPT} is not installed (pip install -e .)")
    return SCRIPT


def test_installed_script_classifies_and_compares_plays(fiftyk: Path) -> None:
    classified = subprocess.run(
        [str(fiftyk), "rules", "classify", "--preset", "jiaodong", "sj", "BJ"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert classified.returncode == 0, classified.stderr
    assert json.loads(classified.stdout) == {"type": "pair", "cards": ["SJ", "BJ"],
                                             "points": 20}

    compared = subprocess.run(
        [str(fiftyk), "rules", "beats", "--preset", "jinzhou", "--top", "3S", "3H", "4S", "4H",
         "5S", "5H", "--play", "9S", "9H", "9C"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert compared.returncode == 0, compared.stderr
    assert json.loads(compared.stdout)["beats"] is False


def test_installed_script_exits_2_for_an_unknown_option(fiftyk: Path) -> None:
    result = subprocess.run(
        [str(fiftyk), "rules", "classify", "--preset", "classic", "--option", "nope=1", "3S"],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "unknown option 'nope'" in result.stderr
