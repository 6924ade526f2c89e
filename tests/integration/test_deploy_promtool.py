"""deploy/prometheus/: promtool accepts the Prometheus config and alert rules, and their
unit tests pass. Needs the promtool executable (scripts/install-promtool): marked `promtool`."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.promtool

PROMETHEUS = Path(__file__).resolve().parents[2] / "deploy" / "prometheus"
PROMTOOL_TIMEOUT_SECONDS = 60
PROMTOOL_MISSING = (
    "promtool is not installed: run scripts/install-promtool (Debian package `prometheus`)"
)


@pytest.fixture(scope="module")
def promtool() -> str:
    """The promtool executable; the tests fail (never skip) without it."""
    path = shutil.which("promtool")
    if path is None:
        pytest.fail(PROMTOOL_MISSING)
    return path


def test_promtool_accepts_the_prometheus_config_and_its_rule_files(promtool: str) -> None:
    result = subprocess.run([promtool, "check", "config", "prometheus.yml"], cwd=PROMETHEUS,
                            capture_output=True, text=True, timeout=PROMTOOL_TIMEOUT_SECONDS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_accepts_the_alert_rules(promtool: str) -> None:
    result = subprocess.run([promtool, "check", "rules", "alerts.yml"], cwd=PROMETHEUS,
                            capture_output=True, text=True, timeout=PROMTOOL_TIMEOUT_SECONDS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_alert_rule_unit_tests_pass(promtool: str) -> None:
    result = subprocess.run([promtool, "test", "rules", "alerts.test.yml"], cwd=PROMETHEUS,
                            capture_output=True, text=True, timeout=PROMTOOL_TIMEOUT_SECONDS)
    assert result.returncode == 0, result.stdout + result.stderr
