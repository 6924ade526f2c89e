"""`scripts/bench compare REF`: the quick suite on REF and on the working tree, interleaved.

REF is any git ref (a commit, branch or tag). Its tree is exported with `git archive` into a
temporary directory; the working tree runs as it is, uncommitted changes included. Each side
runs `python -m bench suite --quick` (or `--only` some sections) from its own tree, with its
own tree first on PYTHONPATH, so the benchmark, the server it starts and the load clients all
run that side's code. REF runs in a virtualenv of its own, built as scripts/_venv.sh builds
one (`pip install -e '.[dev]'`, pip's cache reused) — unless its pyproject.toml is the
working tree's: then the dependencies are the same and the working tree's virtualenv serves
both (`--build-venv` builds one anyway; `--ref-python PY` names an interpreter to use).

The runs alternate between the two sides for `--rounds` rounds, against one PostgreSQL
server, so both see the same machine load: REF first in odd rounds, the working tree first in
even ones (REF, working tree, working tree, REF, …), so that whichever runs second in a round
(a machine whose load is falling, caches warmed by the first run) is not always the same side.
For every figure the two suites report, the ratio working tree ÷ REF is taken per round; the
table gives its median and its min–max over the rounds, and says whether every round agrees
on the direction. A benchmark a person reads, not a test: on a shared machine quote the
medians, the spread and the load average. Everything temporary (REF's tree, its virtualenv,
the reports unless `--out`) is removed afterwards, and when Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench import machine
from bench.arguments import positive, positive_float
from bench.suite import DEFAULT_SECTIONS, NEEDS_POSTGRES, SECTIONS, fmt

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ROUNDS = 3
WORKING = "working tree"
# Which way a figure improves, by its unit; counts (errors, rejections) have no direction.
HIGHER_IS_BETTER = frozenset({"cmd/s", "calls/s", "steps/s", "events/s", "tx/s", "×"})
# "× cost": a cost against another's (Shengji's server CPU per command ÷ 五十K's).
LOWER_IS_BETTER = frozenset({"µs", "ms", "s", "KiB", "MiB", "× cost"})
# Modules each side must import from its own tree (else the comparison would be a lie).
IMPORT_CHECK = ("import json, bench.suite, fiftyk_referee.service.cli.main, tests.support.pgserver"
                " as p; print(json.dumps([m.__file__ for m in (bench.suite,"
                " fiftyk_referee.service.cli.main, p)]))")
LOG_TAIL_LINES = 40


class CompareError(RuntimeError):
    """The comparison cannot go on; the message says why."""


@dataclass
class Side:
    """One of the two builds: where its tree is and which Python runs it."""

    label: str
    tree: Path
    python: str
    venv: str  # how the interpreter was chosen, for the report
    revision: str
    imports: list[str] = field(default_factory=list)

    def environment(self) -> dict[str, str]:
        """The environment of this side's runs: its own tree first on the import path."""
        env = dict(os.environ)
        env["PYTHONPATH"] = str(self.tree)
        env.pop("PYTHONHOME", None)
        return env

    def check_imports(self) -> None:
        """Refuse to run unless the suite, the server and the helpers load from this tree."""
        done = subprocess.run([self.python, "-c", IMPORT_CHECK], cwd=self.tree,
                              env=self.environment(), capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise CompareError(f"{self.label}: its Python cannot import the benchmark lab:\n"
                               f"{done.stderr.strip()}")
        self.imports = json.loads(done.stdout)
        root = self.tree.resolve()
        strays = [path for path in self.imports if not Path(path).resolve().is_relative_to(root)]
        if strays:
            raise CompareError(f"{self.label}: {', '.join(strays)} would load from outside"
                               f" {self.tree}: the comparison would not run this side's code")


@dataclass
class Run:
    """One suite run of one side in one round."""

    round: int
    side: str
    exit_code: int
    seconds: float
    out: str
    failed_sections: list[str]
    figures: dict[str, dict[str, Any]]


@dataclass
class Compared:
    """One figure over the rounds: each side's values and the per-round ratios."""

    key: str
    name: str
    unit: str
    better: str | None  # "higher", "lower" or None
    ref: list[float | None]
    working: list[float | None]
    ratios: list[float]

    @property
    def ratio_median(self) -> float | None:
        """The median of the per-round ratios (working tree ÷ REF)."""
        return statistics.median(self.ratios) if self.ratios else None

    @property
    def verdict(self) -> str:
        """Whether every round moved the same way, and which way that is."""
        if not self.ratios:
            return "no ratio"
        if self.better is None:
            return ""
        gains = [r > 1 if self.better == "higher" else r < 1 for r in self.ratios]
        losses = [r < 1 if self.better == "higher" else r > 1 for r in self.ratios]
        rounds = len(self.ratios)
        if all(gains):
            return f"better in {rounds}/{rounds}"
        if all(losses):
            return f"worse in {rounds}/{rounds}"
        return f"mixed ({sum(gains)} better, {sum(losses)} worse)"

    def as_json(self) -> dict[str, Any]:
        """The figure with its summary, for `--json`."""
        return {**asdict(self), "ratio_median": self.ratio_median,
                "ratio_min": min(self.ratios, default=None),
                "ratio_max": max(self.ratios, default=None), "verdict": self.verdict}


def round_order(number: int) -> tuple[str, str]:
    """Which side runs first in round `number` (from 1): REF in odd rounds, else the working
    tree, so that an order effect falls on both sides alike."""
    return ("ref", "working") if number % 2 else ("working", "ref")


def direction(unit: str) -> str | None:
    """Which way a figure in this unit improves."""
    if unit in HIGHER_IS_BETTER:
        return "higher"
    if unit in LOWER_IS_BETTER:
        return "lower"
    return None


def figures_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A suite report's figures by key, plus the e2e runs' server CPU per command."""
    found: dict[str, dict[str, Any]] = {}
    for section in report["sections"]:
        for figure in section["figures"]:
            found[figure["key"]] = {"name": figure["name"], "unit": figure["unit"],
                                    "value": figure["value"]}
        runs = section.get("details", {}).get("runs", {})
        if section["key"] != "e2e" or not isinstance(runs, dict):
            continue
        for kind, kind_runs in runs.items():
            per_command = [r["cpu_ms_per_command"]["server"] for r in kind_runs
                           if "server" in r.get("cpu_ms_per_command", {})]
            rate = found.get(f"e2e.{kind}.commands_per_second", {"name": kind})
            label = str(rate["name"]).split(":")[0]
            if per_command:
                found[f"e2e.{kind}.server_cpu_ms_per_command"] = {
                    "name": f"{label}: server CPU per {'call' if kind == 'echo' else 'command'}",
                    "unit": "ms", "value": statistics.median(per_command)}
    return found


def compare_runs(runs: Sequence[Run], rounds: int) -> list[Compared]:
    """Pair each round's REF and working-tree figures; keys in the order the suite reports."""
    by_round: dict[tuple[int, str], Run] = {(run.round, run.side): run for run in runs}
    keys: list[str] = []
    for run in runs:
        keys += [key for key in run.figures if key not in keys]
    compared: list[Compared] = []
    for key in keys:
        sides: dict[str, list[float | None]] = {"ref": [], "working": []}
        name, unit = key, ""
        for number in range(1, rounds + 1):
            for side in sides:
                paired = by_round.get((number, side))
                figure = paired.figures.get(key) if paired else None
                sides[side].append(figure["value"] if figure else None)
                if figure:
                    name, unit = figure["name"], figure["unit"]
        ratios = [w / r for r, w in zip(sides["ref"], sides["working"], strict=True)
                  if r is not None and w is not None and r != 0]
        compared.append(Compared(key=key, name=name, unit=unit, better=direction(unit),
                                 ref=sides["ref"], working=sides["working"], ratios=ratios))
    return compared


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def render(data: dict[str, Any]) -> str:
    """The comparison as Markdown: one row per figure."""
    ref, work = data["ref"], data["working_tree"]
    lines = [
        f"# `{data['command']}`", "",
        f"{data['rounds']} round{'s' if data['rounds'] != 1 else ''} of `{data['suite']}`,"
        " interleaved"
        f" (REF first in odd rounds, the working tree first in even ones);"
        f" {data['seconds']:.0f} s in all.", "",
        f"- REF `{ref['ref']}` = {ref['revision']} — Python: {ref['venv']}",
        f"- working tree = {work['revision']} — Python: {work['venv']}",
        f"- load average (1/5/15 min): before {_load(data['load_average_before'])},"
        f" after {_load(data['load_average_after'])}"
        " (a loaded machine widens the spread: read the medians)", "",
        "| Figure | Unit | REF | Working tree | Ratio (median) | Ratio min–max | Better |"
        " Rounds |", "|---|---|---|---|---|---|---|---|",
    ]
    for figure in data["figures"]:
        low, high = figure["ratio_min"], figure["ratio_max"]
        spread = f"{low:.2f}–{high:.2f}×" if low is not None and high is not None else "–"
        middle = figure["ratio_median"]
        better = {"higher": "↑", "lower": "↓"}.get(figure["better"] or "", "")
        lines.append(
            f"| {figure['name']} | {figure['unit']} | {fmt(_median(figure['ref']))} |"
            f" {fmt(_median(figure['working']))} |"
            f" {'–' if middle is None else f'{middle:.2f}×'} | {spread} | {better} |"
            f" {figure['verdict']} |")
    failed = [f"round {r['round']} {r['side']}: {', '.join(r['failed_sections'])}"
              for r in data["runs"] if r["failed_sections"]]
    chance = 2 ** (1 - data["rounds"])
    lines += ["", "Ratio = working tree ÷ REF per round (REF and working-tree columns: medians"
              " over the rounds); ↑ or ↓: the direction that is better. A figure the change"
              f" cannot touch still agrees in all {data['rounds']} rounds by chance with"
              f" probability {chance:.0%}: compare with the control rows (echo, pgbench)."]
    if failed:
        lines += ["", "**Failed sections** (their figures are missing; see the run logs): "
                  + "; ".join(failed)]
    return "\n".join(lines) + "\n"


def _load(values: Sequence[float]) -> str:
    return " / ".join(f"{v:.2f}" for v in values)


# -- building the two sides -------------------------------------------------------------------


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise CompareError(f"git {' '.join(args)}: {done.stderr.strip() or 'failed'}")
    return done.stdout.strip()


def resolve(ref: str) -> str:
    """REF's commit id; a clear error when git does not know it."""
    try:
        return _git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except CompareError:
        raise CompareError(f"{ref!r} is not a commit, branch or tag of this repository"
                           ) from None


def export_tree(commit: str, into: Path) -> None:
    """Write the files of `commit` into `into` (git archive; symlinks kept)."""
    into.mkdir(parents=True)
    with subprocess.Popen(["git", "archive", "--format=tar", commit], cwd=REPO_ROOT,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as archive:
        assert archive.stdout is not None
        with tarfile.open(fileobj=archive.stdout, mode="r|") as tar:
            tar.extractall(into, filter="tar")
        error = archive.stderr.read().decode() if archive.stderr else ""
    if archive.returncode != 0:
        raise CompareError(f"git archive {commit}: {error.strip()}")


def build_venv(tree: Path, venv: Path) -> str:
    """A virtualenv for `tree` made like scripts/_venv.sh's; returns its Python."""
    print(f"scripts/bench compare: building REF's virtualenv in {venv} (pip install -e"
          " '.[dev]', pip's cache reused) ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    done = subprocess.run([python, "-m", "pip", "install", "--quiet",
                           "--disable-pip-version-check", "-e", ".[dev]"], cwd=tree,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CompareError(f"pip install of REF failed:\n{done.stdout}{done.stderr}")
    return python


def ref_side(ref: str, commit: str, tree: Path, scratch: Path, *, ref_python: str | None,
             build: bool) -> Side:
    """REF's side: its exported tree and the interpreter chosen for it."""
    revision = _git("describe", "--always", commit)
    if ref_python is not None:
        return Side("REF", tree, ref_python, f"given: {ref_python}", revision)
    same_project = (tree / "pyproject.toml").read_bytes() == (
        REPO_ROOT / "pyproject.toml").read_bytes()
    if same_project and not build:
        return Side("REF", tree, sys.executable,
                    "the working tree's (its pyproject.toml is the same)", revision)
    python = build_venv(tree, scratch / "ref-venv")
    return Side("REF", tree, python, "its own, built for this run", revision)


@contextmanager
def postgres_for(sections: Sequence[str], url: str | None) -> Iterator[str | None]:
    """One PostgreSQL server for both sides' runs (a throwaway one unless `url`)."""
    if url is not None or not NEEDS_POSTGRES & set(sections):
        yield url
        return
    from tests.support.pgserver import ThrowawayPostgres

    server = ThrowawayPostgres()
    server.start()
    try:
        yield server.url("postgres")
    finally:
        server.stop()


def run_suite(side: Side, number: int, key: str, suite_args: Sequence[str], out: Path) -> Run:
    """One `bench suite` run of one side; its report read back."""
    out.mkdir(parents=True)
    log = out / "run.log"
    argv = [side.python, "-m", "bench", "suite", *suite_args, "--out", str(out)]
    print(f"scripts/bench compare: round {number}, {side.label} ...", file=sys.stderr,
          flush=True)
    started = time.perf_counter()
    with log.open("w") as sink:
        code = subprocess.run(argv, cwd=side.tree, env=side.environment(), stdout=sink,
                              stderr=subprocess.STDOUT, check=False).returncode
    seconds = time.perf_counter() - started
    report_file = out / "report.json"
    if code not in (0, 1) or not report_file.exists():
        tail = "".join(log.read_text().splitlines(keepends=True)[-LOG_TAIL_LINES:])
        raise CompareError(f"round {number}, {side.label}: `{shlex.join(argv)}` exited"
                           f" {code} without a report; the end of its output:\n{tail}")
    report = json.loads(report_file.read_text())
    return Run(round=number, side=key, exit_code=code, seconds=round(seconds, 1),
               out=str(out), failed_sections=[s["key"] for s in report["sections"]
                                              if s["error"]],
               figures=figures_of(report))


def suite_arguments(args: argparse.Namespace, sections: Sequence[str],
                    postgres_url: str | None) -> list[str]:
    """The `bench suite` flags both sides run with."""
    argv = [] if args.full else ["--quick"]
    argv += ["--only", ",".join(sections)]
    for flag in ("repeats", "seconds", "tables"):
        value = getattr(args, flag)
        if value is not None:
            argv += [f"--{flag}", str(value)]
    if postgres_url is not None:
        argv += ["--postgres-url", postgres_url]
    return argv


def compare(args: argparse.Namespace, commit: str, sections: Sequence[str]) -> dict[str, Any]:
    """Build both sides, run the rounds, return the comparison (cleaning up after itself)."""
    started = time.perf_counter()
    load_before = machine.load_average()
    with ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(
            prefix="fiftyk-compare-")))
        out = args.out or scratch / "runs"
        tree = scratch / "ref"
        export_tree(commit, tree)
        ref = ref_side(args.ref, commit, tree, scratch, ref_python=args.ref_python,
                       build=args.build_venv)
        work = Side(WORKING, REPO_ROOT, sys.executable, f"this one ({sys.executable})",
                    machine.git_revision() or "?")
        for side in (ref, work):
            side.check_imports()
        postgres_url = stack.enter_context(postgres_for(sections, args.postgres_url))
        suite_args = suite_arguments(args, sections, postgres_url)
        runs: list[Run] = []
        for number in range(1, args.rounds + 1):
            for key in round_order(number):
                side = ref if key == "ref" else work
                runs.append(run_suite(side, number, key, suite_args,
                                      out / f"round-{number}" / key))
    return {
        "command": shlex.join(["scripts/bench", "compare", *args.argv]),
        "suite": shlex.join(["bench", "suite", *suite_arguments(args, sections, None)]),
        "rounds": args.rounds,
        "order": [list(round_order(n)) for n in range(1, args.rounds + 1)],
        "seconds": round(time.perf_counter() - started, 1),
        "ref": {"ref": args.ref, "commit": commit, "revision": ref.revision,
                "venv": ref.venv, "imports": ref.imports},
        "working_tree": {"path": str(REPO_ROOT), "revision": work.revision,
                         "venv": work.venv, "imports": work.imports},
        "load_average_before": load_before,
        "load_average_after": machine.load_average(),
        "runs": [{k: v for k, v in asdict(run).items()
                  if k != "figures" and (k != "out" or args.out)} for run in runs],
        "figures": [figure.as_json() for figure in compare_runs(runs, args.rounds)],
        "reports_kept": str(args.out) if args.out else None,
    }


# -- command line -----------------------------------------------------------------------------


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench compare`."""
    parser = sub.add_parser("compare", help="REF against the working tree: the quick suite,"
                            " interleaved, ratios with their spread", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ref", metavar="REF", help="a commit, branch or tag (e.g. main)")
    parser.add_argument("--rounds", type=positive, default=DEFAULT_ROUNDS, metavar="N",
                        help=f"REF/working-tree pairs of suite runs (default {DEFAULT_ROUNDS})")
    parser.add_argument("--only", default=",".join(DEFAULT_SECTIONS),
                        help="comma-separated sections of the suite to run (default:"
                        f" {','.join(DEFAULT_SECTIONS)}; also: scaling)")
    parser.add_argument("--full", action="store_true",
                        help="the suite's full sizes instead of --quick (minutes per run)")
    parser.add_argument("--repeats", type=positive, metavar="N",
                        help="passed to `bench suite`: repeats of every load run")
    parser.add_argument("--seconds", type=positive_float, metavar="S",
                        help="passed to `bench suite`: measured seconds of each load run")
    parser.add_argument("--tables", type=positive, metavar="T",
                        help="passed to `bench suite`: e2e tables")
    parser.add_argument("--ref-python", metavar="PY",
                        help="run REF with this interpreter (its dependencies installed)"
                        " instead of choosing or building one")
    parser.add_argument("--build-venv", action="store_true",
                        help="build REF a virtualenv even when its pyproject.toml is the"
                        " working tree's")
    parser.add_argument("--postgres-url", metavar="URL",
                        help="a PostgreSQL server where both sides may create and drop"
                        " databases, instead of a throwaway one")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="keep every run's report and logs here (default: removed)")
    parser.add_argument("--json", type=Path, metavar="FILE",
                        help="also write the comparison as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run `scripts/bench compare`; exit 1 when a run failed, 2 on a bad REF or section."""
    sections = [part.strip() for part in str(args.only).split(",") if part.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown or not sections:
        print(f"scripts/bench compare: unknown section(s) {', '.join(unknown) or '(none)'};"
              f" choose from {', '.join(SECTIONS)}", file=sys.stderr)
        return 2
    if args.out is not None and args.out.exists() and any(args.out.iterdir()):
        print(f"scripts/bench compare: {args.out} is not empty", file=sys.stderr)
        return 2
    args.argv = _argv(args)
    try:
        commit = resolve(args.ref)
    except CompareError as error:
        print(f"scripts/bench compare: {error}", file=sys.stderr)
        return 2
    try:
        data = compare(args, commit, sections)
    except CompareError as error:
        print(f"scripts/bench compare: {error}", file=sys.stderr)
        return 1
    print(render(data), end="")
    if args.json is not None:
        args.json.write_text(json.dumps(data, indent=2) + "\n")
    return 1 if any(r["failed_sections"] for r in data["runs"]) else 0


def _argv(args: argparse.Namespace) -> list[str]:
    argv = [args.ref, "--rounds", str(args.rounds)]
    if args.only != ",".join(DEFAULT_SECTIONS):
        argv += ["--only", args.only]
    argv += ["--full"] if args.full else []
    argv += ["--build-venv"] if args.build_venv else []
    for flag in ("repeats", "seconds", "tables", "ref_python"):
        value = getattr(args, flag)
        if value is not None:
            argv += [f"--{flag.replace('_', '-')}", str(value)]
    if args.postgres_url is not None:
        argv += ["--postgres-url", "URL"]
    return argv


__all__ = ["Compared", "Run", "add_parser", "compare_runs", "direction", "figures_of",
           "render", "round_order", "run"]
