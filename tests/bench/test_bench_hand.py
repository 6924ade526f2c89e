"""`fiftyk bench hand` runs, prints its table and writes its JSON report."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from bench import hand as bench
from bench.__main__ import main
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset

pytestmark = pytest.mark.bench


def test_bench_hand_prints_a_table_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "hand.json"
    assert main(["hand", "--repeat", "2", "--json", str(out_file)]) == 0
    table = capsys.readouterr().out
    assert "classic hand, dealt and played out at random" in table
    assert "rebuild a finished hand from its events" in table
    assert "random playout steps/s: fiftyk classic" in table
    report = json.loads(out_file.read_text())
    assert (report["benchmark"], report["preset"], report["repeat"]) == ("hand", "classic", 2)
    rows = {row["name"]: row for row in report["results"]}
    hand_row = rows["classic hand, dealt and played out at random"]
    assert hand_row["median"] > 0 and hand_row["samples"] == 2
    assert rows["random playout steps/s: fiftyk classic"]["median"] > 0
    if bench.rlcard_game(1) is None:
        assert bench.RLCARD_MISSING in table
    else:
        assert rows["random playout steps/s: RLCard Dou Dizhu"]["median"] > 0


def test_a_benchmark_hand_is_a_complete_random_hand_rebuilt_from_its_events() -> None:
    rules = Ruleset.from_spec("classic")
    hand = bench.deal_hand(rules, random.Random(1))
    steps = bench.play_random_hand(hand, random.Random(2))
    assert hand.is_over and steps == len(hand.actions)
    rebuilt = bench.rebuild(list(hand.collect_events()))
    assert rebuilt.result == hand.result and rebuilt.version == hand.version


def test_the_repeat_count_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["hand", "--repeat", "0"])
    assert "must be at least 1" in capsys.readouterr().err
