"""`fiftyk bench suite --quick` writes a complete report; the store filler copies consistently.

No timing is asserted: the quick figures mean nothing. What must hold is the shape of the
report — machine facts, every section and figure, the issue 7 targets with a verdict, ratios
that are the quotient of the figures they compare — and that the run cleans up after itself.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench import growth
from bench.__main__ import main
from bench.suite import DEFAULT_SECTIONS, SHARD_TARGET, TITLES
from fiftyk_referee.domain.table_events import TableOpened
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.ops.config import parse_database_url
from tests.support.pgserver import ThrowawayPostgres

# The quick suite starts servers and a database of its own: minutes on a loaded machine.
pytestmark = [pytest.mark.bench, pytest.mark.postgres, pytest.mark.timeout(900)]

FIGURES = {
    "rules.classify_beats_typical_play", "rules.legal_plays_lead",
    "hand.classic_hand_dealt_and_played_out_at_random",
    "hand.random_playout_steps_s_fiftyk_classic",
    "shengji.follow_check_trump_tractor", "shengji.legal_actions_follow_a_trump_tractor_p95",
    "shengji.legal_actions_the_hand_playouts_p95", "shengji.random_playout_steps_per_second",
    "store.commands_per_second.1", "store.pgbench_insert.1", "store.pgbench_lock_insert.1",
    "store.cache_off", "store.rebuild_events_per_second", "store.snapshot_load_ms",
    "e2e.echo.commands_per_second", "e2e.sqlite.commands_per_second",
    "e2e.sqlite.p99_ms", "e2e.postgresql.commands_per_second", "e2e.postgresql.p50_ms",
    "e2e.postgresql.p99_ms", "e2e.postgresql.errors", "e2e.postgresql.rejected",
    "e2e.postgresql.echo_ratio", "e2e.memory_per_idle_table_kib",
    "e2e.postgresql_shengji.commands_per_second", "e2e.postgresql_shengji.errors",
    "e2e.shengji_cost_ratio", "e2e.shengji_rate_ratio",
    "e2e.postgresql_doudizhu.commands_per_second", "e2e.postgresql_doudizhu.errors",
    "e2e.doudizhu_cost_ratio", "e2e.doudizhu_rate_ratio",
    "growth.latency_small_store_ms", "growth.latency_big_store_ms",
}
ISSUE_7_TARGETS = {
    "e2e.postgresql.commands_per_second", "e2e.postgresql.p99_ms", "e2e.postgresql.errors",
    "e2e.postgresql.echo_ratio", "growth.latency_big_store_ms",
}


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory: pytest.TempPathFactory,
                 postgres_server: ThrowawayPostgres) -> tuple[int, Path, dict[str, Any]]:
    """One quick suite run on the session's PostgreSQL server."""
    out = tmp_path_factory.mktemp("suite") / "report"
    code = main(["suite", "--out", str(out), "--quick",
                 "--postgres-url", postgres_server.url("postgres")])
    return code, out, json.loads((out / "report.json").read_text())


def test_quick_suite_runs_every_section_without_an_error(
    quick_report: tuple[int, Path, dict[str, Any]],
) -> None:
    code, _, data = quick_report
    assert [(s["key"], s["error"]) for s in data["sections"]] == [
        (k, None) for k in DEFAULT_SECTIONS]
    assert code == 0
    assert data["settings"]["quick"] is True
    assert data["command"].startswith("scripts/bench suite --out ")


def test_quick_suite_records_the_machine_and_the_software_versions(
    quick_report: tuple[int, Path, dict[str, Any]],
) -> None:
    machine = quick_report[2]["machine"]
    assert machine["cpu_model"] and machine["cpu_count"] >= 1 and machine["memory_mib"] > 0
    assert machine["kernel"].startswith("Linux") and machine["python"].startswith("CPython 3.")
    for package in ("grpcio", "protobuf", "eventsourcing", "psycopg"):
        assert machine["packages"][package]
    assert len(machine["load_average_before"]) == len(machine["load_average_after"]) == 3
    assert machine["postgresql"]["version"].startswith("PostgreSQL 15")
    assert machine["postgresql"]["server"] == "external (--postgres-url)"


def test_quick_suite_reports_every_figure_as_a_median_over_its_samples(
    quick_report: tuple[int, Path, dict[str, Any]],
) -> None:
    figures = {f["key"]: f for s in quick_report[2]["sections"] for f in s["figures"]}
    assert set(figures) >= FIGURES
    for figure in figures.values():
        assert figure["value"] is not None and figure["repeats"] >= 1, figure
        if figure["samples"]:
            ordered = sorted(figure["samples"])
            assert ordered[0] <= figure["value"] <= ordered[-1], figure
        if figure["baseline"] is not None and figure["ratio"] is not None:
            assert math.isclose(figure["ratio"], figure["value"] / figure["baseline"])


def test_quick_suite_marks_each_issue_7_target_met_or_missed(
    quick_report: tuple[int, Path, dict[str, Any]],
) -> None:
    _, out, data = quick_report
    assert {t["key"] for t in data["targets"]} == ISSUE_7_TARGETS
    figures = {f["key"]: f for s in data["sections"] for f in s["figures"]}
    for target in data["targets"]:
        figure = figures[target["key"]]
        assert target["verdict"] == ("MET" if figure["met"] else "MISSED")
    markdown = (out / "report.md").read_text()
    for heading in ("## Machine", "## Targets (issue 7)",
                    *(f"## {TITLES[k]}" for k in DEFAULT_SECTIONS)):
        assert heading in markdown
    for target in data["targets"]:
        assert f"| {target['name']} |" in markdown and f"**{target['verdict']}**" in markdown


def test_quick_suite_names_rlcard_as_the_baseline_or_says_how_to_install_it(
    quick_report: tuple[int, Path, dict[str, Any]],
) -> None:
    rules = quick_report[2]["sections"][0]
    ours = next(f for f in rules["figures"]
                if f["key"] == "hand.random_playout_steps_s_fiftyk_classic")
    if ours["baseline"] is None:
        assert any("pip install rlcard" in note for note in rules["notes"])
    else:
        assert "RLCard" in ours["baseline_name"]


SCALING_FIGURES = {
    "e2e.writers_1.commands_per_second", "e2e.writers_2.commands_per_second",
    "scaling.pgbench_insert.1", "scaling.pgbench_lock_insert.2",
    "scaling.shards.one", "scaling.shards.same_server", "scaling.shards.two_servers",
}


@pytest.fixture(scope="module")
def scaling_report(tmp_path_factory: pytest.TempPathFactory,
                   postgres_server: ThrowawayPostgres) -> tuple[int, dict[str, Any]]:
    """One quick run of the scaling section alone (it starts a second server of its own)."""
    out = tmp_path_factory.mktemp("scaling") / "report"
    code = main(["suite", "--out", str(out), "--quick", "--only", "scaling",
                 "--postgres-url", postgres_server.url("postgres")])
    return code, json.loads((out / "report.json").read_text())


def test_the_scaling_section_compares_writer_processes_and_shards_in_one_run(
    scaling_report: tuple[int, dict[str, Any]],
) -> None:
    code, data = scaling_report
    assert [(s["key"], s["error"]) for s in data["sections"]] == [("scaling", None)]
    assert code == 0
    figures = {f["key"]: f for s in data["sections"] for f in s["figures"]}
    assert set(figures) >= SCALING_FIGURES
    one = figures["scaling.shards.one"]
    for key in ("scaling.shards.same_server", "scaling.shards.two_servers"):
        shards = figures[key]
        assert shards["baseline"] == one["value"] and shards["source"] == "issue 25"
        assert shards["met"] == ((shards["ratio"] or 0) >= SHARD_TARGET)
    more = figures["e2e.writers_2.commands_per_second"]
    assert more["baseline"] == figures["e2e.writers_1.commands_per_second"]["value"]
    assert "postgres" in more["note"] and "server" in more["note"]


def test_quick_suite_drops_the_databases_it_created(
    quick_report: tuple[int, Path, dict[str, Any]], postgres_server: ThrowawayPostgres,
) -> None:
    with psycopg.connect(postgres_server.url("postgres")) as conn:
        names = [row[0] for row in conn.execute("SELECT datname FROM pg_database")]
    assert not [name for name in names if name.startswith("bench_")]


def test_bench_suite_refuses_an_unknown_section(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["suite", "--out", str(tmp_path), "--only", "rules,speed"]) == 2
    assert "unknown section(s) speed" in capsys.readouterr().err


def test_filled_store_copies_tables_whose_hands_and_scores_replay(tmp_path: Path) -> None:
    database = parse_database_url(str(tmp_path / "fill.sqlite"), tmp_path)
    app = Referee(persistence_env(database))
    try:
        filled = growth.fill_store(app, 1_500, seed=3, template_hands=2)
        assert filled.events == app.head_position() >= 1_500
        assert filled.copies >= 1
        opened = app.read_events(limit=1_000, names=[TableOpened.NAME]).events
        template_id, copy_id = opened[0].aggregate_id, opened[-1].aggregate_id
        template, copy = app.get_table(template_id), app.get_table(copy_id)
        assert copy_id != template_id
        assert app.rebuild_scores(copy_id) == dict(template.scores)
        hands = [app.get_hand(hand_id, copy_id) for hand_id in copy.hand_ids]
        assert [h.number for h in hands] == list(range(1, len(template.hand_ids) + 1))
        assert all(h.is_over and h.table_id == copy_id for h in hands)
        assert app.audit.run().problems == []  # the copies' hash chains are whole
    finally:
        app.close()


def test_a_latency_sample_measures_a_command_however_long_its_table_takes_to_set_up(
        tmp_path: Path) -> None:
    """The window opens after the table is created and seated: a window shorter than that
    set-up (a loaded machine) still measures the command that starts in it."""
    database = parse_database_url(str(tmp_path / "latency.sqlite"), tmp_path)
    app = Referee(persistence_env(database))
    try:
        assert len(growth.command_latency(app, 1e-9, seed=5)) >= 1
    finally:
        app.close()
