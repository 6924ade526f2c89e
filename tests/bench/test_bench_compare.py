"""`scripts/bench compare REF` runs REF's suite and the working tree's, interleaved, and divides.

No timing is asserted (the quick figures mean little). What must hold: each side runs its own
code (REF from an exported tree that is removed afterwards), the runs alternate REF, working
tree, the table and the JSON give every figure both sides' values and the ratio of each round,
and a REF or section that does not exist gets a clear error before anything runs.
"""

from __future__ import annotations

import io
import json
import math
import statistics
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from bench.__main__ import main
from bench.compare import REPO_ROOT, Run, compare_runs, direction, figures_of, round_order

# One round of the rules section on each side: two suite runs of a few seconds each. REF is
# HEAD, whose pyproject.toml is the working tree's, so REF reuses this virtualenv: no pip.
pytestmark = [pytest.mark.bench, pytest.mark.timeout(300)]

RULES_FIGURES = {"classify+beats: typical play", "legal plays: lead",
                 "random playout steps/s: fiftyk classic"}


@pytest.fixture(scope="module")
def head_against_working_tree(tmp_path_factory: pytest.TempPathFactory
                              ) -> tuple[int, str, dict[str, Any], Path]:
    """`bench compare HEAD --only rules --rounds 1`, its table, its JSON and its reports."""
    where = tmp_path_factory.mktemp("compare")
    out_file, kept = where / "compare.json", where / "runs"
    table = io.StringIO()
    with redirect_stdout(table):
        code = main(["compare", "HEAD", "--only", "rules", "--rounds", "1",
                     "--json", str(out_file), "--out", str(kept)])
    return code, table.getvalue(), json.loads(out_file.read_text()), kept


def test_compare_runs_ref_then_the_working_tree_and_keeps_their_reports(
    head_against_working_tree: tuple[int, str, dict[str, Any], Path],
) -> None:
    code, _, data, kept = head_against_working_tree
    assert code == 0
    assert [(r["round"], r["side"], r["exit_code"], r["failed_sections"]) for r in data["runs"]
            ] == [(1, "ref", 0, []), (1, "working", 0, [])]
    for side in ("ref", "working"):
        report = json.loads((kept / "round-1" / side / "report.json").read_text())
        assert report["command"].startswith("scripts/bench suite --out ")
        assert [s["key"] for s in report["sections"]] == ["rules"]
        assert report["settings"]["quick"] is True
    assert data["suite"] == "bench suite --quick --only rules"
    assert data["order"] == [["ref", "working"]]


def test_compare_puts_each_side_first_in_every_other_round() -> None:
    assert [round_order(n) for n in (1, 2, 3, 4)] == [
        ("ref", "working"), ("working", "ref"), ("ref", "working"), ("working", "ref")]


def test_compare_runs_ref_from_its_own_exported_tree_and_removes_it(
    head_against_working_tree: tuple[int, str, dict[str, Any], Path],
) -> None:
    data = head_against_working_tree[2]
    head = data["ref"]
    assert head["ref"] == "HEAD" and len(head["commit"]) == 40
    assert "pyproject.toml is the same" in head["venv"]
    ref_files = [Path(p) for p in head["imports"]]
    ref_root = ref_files[0].parents[1]  # <scratch>/ref/bench/suite.py
    assert all(p.is_relative_to(ref_root) for p in ref_files)
    assert not ref_root.is_relative_to(REPO_ROOT.resolve())
    assert not ref_root.exists() and not ref_root.parent.exists()
    work_files = [Path(p).resolve() for p in data["working_tree"]["imports"]]
    assert all(p.is_relative_to(REPO_ROOT.resolve()) for p in work_files)


def test_compare_gives_each_figure_both_sides_and_their_ratio(
    head_against_working_tree: tuple[int, str, dict[str, Any], Path],
) -> None:
    _, table, data, _ = head_against_working_tree
    figures = {f["name"]: f for f in data["figures"]}
    assert set(figures) >= RULES_FIGURES
    for figure in figures.values():
        (ref,), (work,) = figure["ref"], figure["working"]
        assert ref > 0 and work > 0
        assert figure["ratios"] == [pytest.approx(work / ref)]
        assert figure["ratio_median"] == figure["ratio_min"] == figure["ratio_max"]
        assert figure["verdict"].endswith(" in 1/1")
        assert f"| {figure['name']} | {figure['unit']} |" in table
        assert f"| {figure['ratio_median']:.2f}× |" in table
    assert figures["legal plays: lead"]["better"] == "lower"
    assert figures["random playout steps/s: fiftyk classic"]["better"] == "higher"
    assert "REF `HEAD` = " in table and "load average" in table


def test_compare_refuses_a_ref_that_is_not_a_commit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compare", "no-such-branch-xyz", "--only", "rules"]) == 2
    assert "'no-such-branch-xyz' is not a commit, branch or tag" in capsys.readouterr().err


def test_compare_refuses_an_unknown_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "HEAD", "--only", "rules,speed"]) == 2
    assert "unknown section(s) speed" in capsys.readouterr().err


def _run(number: int, side: str, values: dict[str, float]) -> Run:
    units = {"e2e.rate": "cmd/s", "rules.lead": "µs", "e2e.errors": "calls"}
    return Run(round=number, side=side, exit_code=0, seconds=1.0, out="", failed_sections=[],
               figures={k: {"name": k, "unit": units[k], "value": v} for k, v in values.items()})


def test_compare_takes_the_median_and_spread_of_per_round_ratios() -> None:
    runs = [_run(1, "ref", {"e2e.rate": 100, "rules.lead": 10, "e2e.errors": 0}),
            _run(1, "working", {"e2e.rate": 150, "rules.lead": 12, "e2e.errors": 0}),
            _run(2, "ref", {"e2e.rate": 200, "rules.lead": 10, "e2e.errors": 2}),
            _run(2, "working", {"e2e.rate": 220, "rules.lead": 8, "e2e.errors": 1}),
            _run(3, "ref", {"e2e.rate": 100, "rules.lead": 10}),
            _run(3, "working", {"e2e.rate": 130, "rules.lead": 11, "e2e.errors": 3})]
    rate, lead, errors = compare_runs(runs, rounds=3)
    assert rate.ratios == pytest.approx([1.5, 1.1, 1.3])
    assert rate.ratio_median == pytest.approx(1.3)
    assert rate.verdict == "better in 3/3"
    assert lead.better == "lower" and lead.verdict == "mixed (1 better, 2 worse)"
    assert lead.as_json()["ratio_min"] == pytest.approx(0.8)
    assert lead.as_json()["ratio_max"] == pytest.approx(1.2)
    # A round where REF counted zero, or one side has no figure, has no ratio.
    assert errors.ref == [0, 2, None] and errors.working == [0, 1, 3]
    assert errors.ratios == [0.5] and errors.better is None and errors.verdict == ""
    assert math.isclose(statistics.median(rate.ratios), rate.ratio_median or 0)


def test_compare_reads_the_server_cpu_per_command_from_the_e2e_runs() -> None:
    run = {"cpu_ms_per_command": {"server": 1.2, "postgres": 0.4, "load clients": 0.9}}
    rate = {"key": "e2e.postgresql.commands_per_second", "unit": "cmd/s", "value": 500.0,
            "name": "referee on PostgreSQL: accepted commands/s"}
    report = {"sections": [{"key": "e2e", "figures": [rate], "details": {"runs": {
        "postgresql": [run, {**run, "cpu_ms_per_command": {"server": 1.6}}],
        "echo": [{"cpu_ms_per_command": {"server": 0.3}}]}}}]}
    found = figures_of(report)
    assert found["e2e.postgresql.server_cpu_ms_per_command"] == {
        "name": "referee on PostgreSQL: server CPU per command", "unit": "ms",
        "value": pytest.approx(1.4)}
    assert found["e2e.echo.server_cpu_ms_per_command"]["unit"] == "ms"
    assert direction("ms") == "lower" and direction("calls") is None


def test_a_cost_ratio_is_better_lower_and_a_rate_ratio_higher() -> None:
    # Shengji's server CPU per command ÷ 五十K's is a cost; the referee ÷ its echo ceiling a rate.
    assert direction("× cost") == "lower"
    assert direction("×") == "higher"
