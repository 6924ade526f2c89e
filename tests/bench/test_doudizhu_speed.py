"""`scripts/bench ddz-speed`: 斗地主 playouts and leads, ours beside RLCard's and DouZero's.

The other engines are installed by `scripts/lab-engines` (the module fixture), as
`scripts/bench ddz-speed` does; the tests fail, never skip, when that cannot be done.
"""

from __future__ import annotations

import importlib
import json
import random
import subprocess
from pathlib import Path

import pytest

from bench import doudizhu_speed as bench
from bench.__main__ import main
from fiftyk_referee.domain.doudizhu.rulesets import DoudizhuRules

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT_S = 900


@pytest.fixture(scope="module", autouse=True)
def lab_engines() -> None:
    """RLCard and DouZero, installed by the lab's own script when missing."""
    subprocess.run([str(ROOT / "scripts" / "lab-engines")], cwd=ROOT, check=True,
                   timeout=INSTALL_TIMEOUT_S)
    importlib.invalidate_caches()


def test_ddz_speed_prints_every_row_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "speed.json"
    assert main(["ddz-speed", "--hands", "2", "--leads", "4", "--json", str(out_file)]) == 0
    table = capsys.readouterr().out
    names = [f"random playout steps/s: {engine}" for engine in
             ("ours: aggregate", "ours: legal_plays", "RLCard", "DouZero")]
    names += [f"20-card lead, legal plays: {engine}" for engine in
              ("ours (classic)", "ours (douzero preset)", "RLCard playable_cards_from_hand",
               "DouZero MovesGener.gen_moves")]
    for name in names:
        assert name in table
    report = json.loads(out_file.read_text())
    rows = {row["name"]: row for row in report["results"]}
    assert set(rows) == set(names)
    assert all(rows[name]["median"] > 0 for name in names)
    assert rows[names[0]]["samples"] == 2 and rows[names[4]]["samples"] == 4
    assert rows[names[0]]["target"] == "≥ 3× RLCard"
    assert rows[names[4]]["target"] == "≤ 100 µs"


def test_a_playout_through_the_aggregate_is_a_whole_hand() -> None:
    rules = DoudizhuRules.from_spec("classic")
    for seed in range(3):
        hand, bids, steps = bench.random_aggregate_hand(rules, random.Random(seed))
        assert hand.is_over and hand.result is not None and hand.landlord is not None
        assert len(hand.action_log) == bids + steps
        assert min(len(cards) for cards in hand.hands) == 0


def test_a_playout_through_legal_plays_plays_out_a_whole_deal() -> None:
    rules = DoudizhuRules.from_spec("classic")
    for seed in range(5):
        hands, steps = bench.random_legal_plays_hand(rules.combos, random.Random(seed))
        assert sorted(len(cards) for cards in hands)[0] == 0 and steps >= 1
        assert sum(len(cards) for cards in hands) < 54


def test_a_douzero_game_is_played_out() -> None:
    rng = random.Random(3)
    env = bench.douzero_game(rng)
    steps = bench.play_douzero_game(env, rng)
    assert env.game_over and steps >= 1
