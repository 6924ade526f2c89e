"""`scripts/bench ddz-check`: our 斗地主 move generator against RLCard's and DouZero's, installed.

The two other engines are not dependencies of the referee: the module fixture installs them
into this environment with `scripts/lab-engines`, as `scripts/bench ddz-check` does, and the
tests fail (never skip) when that cannot be done. The check then runs on a few hundred
positions, and every disagreement it finds must be one the lab has ruled on (a room rule
where that engine differs, documented); a new one fails the test.
"""

from __future__ import annotations

import importlib
import re
import subprocess
from pathlib import Path

import pytest

from bench.__main__ import main
from bench.doudizhu_check import Position, check, generate, render
from bench.doudizhu_engines import (
    DouZeroEngine,
    Engine,
    RLCardEngine,
    load_engines,
    ranks_of,
)
from fiftyk_referee.domain.cards import make_deck, parse_cards

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 900

# Our rules with `RLCARD` options must answer as RLCard does. With `DOUZERO` options they
# answer as DouZero's generator does, except where DouZero's game contradicts its own
# generator (docs: "Checked against two engines"): its follow over a plane with single wings
# ranks the top and the plays by their highest triple, a triple among the wings included;
# its detector takes some plays its generator lists (a plane whose wings hold a bomb's four
# cards or another whole triple) for no play.
DOUZERO_DEFECTS = (
    r"^over plane_singles: only ours lists plane(_singles)? [-0-9+a-z ]+"
    r" \(douzero: plane(_singles)?\)$",
    r"^plane(_singles)? [-0-9+ ]+ over plane_singles [-0-9+ ]+: ours beats, douzero does not"
    r" beat$",
    r"the top [-0-9+ ]+ is no play for douzero$",
    r"ours (beats|does not beat), douzero no play$",
)
POSITIONS = 300
DENSE_POSITIONS = 100
@pytest.fixture(scope="module")
def engines() -> list[Engine]:
    """RLCard's, DouZero's (and ours), installed by the lab's own script when missing."""
    subprocess.run([str(ROOT / "scripts" / "lab-engines")], cwd=ROOT, check=True,
                   timeout=INSTALL_TIMEOUT_S)
    importlib.invalidate_caches()
    loaded, missing = load_engines(["ours", "ours-rlcard", "rlcard", "douzero"])
    assert not missing, missing
    return loaded


def test_the_engines_read_every_rank_of_the_pack_as_we_do(engines: list[Engine]) -> None:
    pack = make_deck(1, jokers=True)
    assert RLCardEngine.move(RLCardEngine.text(pack)) == ranks_of(pack)
    assert DouZeroEngine.move(DouZeroEngine.codes(pack)) == ranks_of(pack)
    hand = parse_cards("10H JH QH KH AH 2S 2H SJ BJ")
    for engine in engines:
        leads = engine.lead(hand)
        assert (10, 11, 12, 13, 14) in leads, engine.name  # 10 is 'T' in RLCard
        assert (15, 15) in leads and (16, 17) in leads, engine.name
        assert (11, 12, 13, 14, 15) not in leads, engine.name  # no 2 in a straight


def test_rlcard_and_douzero_differ_on_the_rocket_as_two_kickers(engines: list[Engine]) -> None:
    by_name = {engine.name: engine for engine in engines}
    hand = parse_cards("QS QH QC QD SJ BJ")
    four_with_rocket = (12, 12, 12, 12, 16, 17)
    assert four_with_rocket in by_name["douzero"].lead(hand)
    assert four_with_rocket not in by_name["rlcard"].lead(hand)


def test_a_position_is_the_same_alone_within_its_run_and_beside_other_engines(
    engines: list[Engine],
) -> None:
    within = [position for position, _ in generate(engines, 6, seed=7)]
    alone: Position = next(generate(engines, 1, seed=7, start=5))[0]
    assert alone == within[5]
    assert within[0] != within[1]
    three = [engine for engine in engines if engine.name != "ours-rlcard"]
    assert [position for position, _ in generate(three, 6, seed=7)] == within
    assert [position for position, _ in generate(three, 6, seed=7, dense=True)] == [
        position for position, _ in generate(engines, 6, seed=7, dense=True)]


@pytest.mark.parametrize(("dense", "positions"), [(False, POSITIONS), (True, DENSE_POSITIONS)])
def test_our_options_answer_as_each_engine_does(
    engines: list[Engine], dense: bool, positions: int
) -> None:
    by_name = {engine.name: engine for engine in engines}
    result = check([by_name["ours-rlcard"], by_name["rlcard"]], positions, seed=20_261_202,
                   dense=dense)
    for (question, _, _), tally in result.tallies.items():
        assert tally.compared == positions * (2 if question == "beats" else 1)
        assert tally.agreed == tally.compared, render(result)
    result = check([by_name["ours"], by_name["douzero"]], positions, seed=20_261_202,
                   dense=dense)
    unexplained = [f"{question}: {key}" for (question, _, _), tally in result.tallies.items()
                   for key in tally.classes
                   if not any(re.search(pattern, key) for pattern in DOUZERO_DEFECTS)]
    assert not unexplained, render(result)
    assert result.tallies["lead", "ours", "douzero"].agreed == positions


def test_the_command_appends_each_new_class_once(
    engines: list[Engine], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "disagreements.md"
    # Position 203 of the default seed: a hand with Q Q Q Q SJ BJ (DouZero leads the four
    # with the rocket as its kickers, RLCard does not).
    args = ["ddz-check", "--engines", "rlcard,douzero", "--start", "203", "--positions", "1",
            "--disagreements", str(notes)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert re.search(r"lead +rlcard vs douzero +1 +0 +0\.000 +1", out), out
    text = notes.read_text()
    assert "- class: lead: rlcard vs douzero: only douzero lists four_two_singles" in text
    assert "seed 20261202 position 203: hand [" in text
    assert main(args) == 0
    assert "0 new disagreement classes appended" in capsys.readouterr().out
    assert notes.read_text() == text


def test_the_command_refuses_an_unknown_engine(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ddz-check", "--engines", "ours,pokerstars"]) == 2
    refusal = "--engines names two or more of ours, ours-rlcard, rlcard, douzero"
    assert refusal in capsys.readouterr().err
