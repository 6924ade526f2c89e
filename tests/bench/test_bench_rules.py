"""`fiftyk bench rules` runs, prints its table and writes its JSON report."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench.__main__ import main
from bench.rules import HAND_SIZE, WORST_HAND, deal_hands
from fiftyk_referee.domain.cards import make_deck, parse_cards
from fiftyk_referee.domain.fiftyk.legal import legal_plays
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset

pytestmark = pytest.mark.bench

ROWS = [
    "classify+beats: typical play",
    "legal plays: lead",
    "legal plays: follow a single",
    "legal plays: follow a pair straight",
    "legal plays: follow a bomb",
    "worst hand: lead",
    "worst hand: follow a single",
    "worst hand: follow a pair straight",
    "worst hand: follow a bomb",
    "classify+beats: first reading",
]


def test_bench_rules_prints_a_table_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / "rules.json"
    assert main(["rules", "--repeat", "1", "--json", str(out_file)]) == 0
    table = capsys.readouterr().out
    for name in ROWS:
        assert name in table
    report = json.loads(out_file.read_text())
    assert (report["benchmark"], report["preset"], report["repeat"]) == ("rules", "classic", 1)
    rows = report["results"]
    assert [row["name"] for row in rows] == ROWS
    for row in rows:
        assert 0 < row["median_us"] <= row["p95_us"] <= row["max_us"]
        if row["target_us"] is None:
            assert row["met"] is None
        else:
            assert row["met"] is (row["median_us"] <= row["target_us"])
    assert rows[5]["plays"] == len(legal_plays(parse_cards(WORST_HAND), None,
                                               Ruleset.from_spec("classic")))


def test_bench_rules_refuses_a_repeat_below_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["rules", "--repeat", "0"])
    assert exited.value.code == 2
    assert "must be at least 1" in capsys.readouterr().err


def test_benchmark_hands_are_real_27_card_hands_of_the_two_pack_deck() -> None:
    ruleset = Ruleset.from_spec("classic")
    deck = Counter(make_deck(2, jokers=True))
    worst = parse_cards(WORST_HAND)
    for hand in [*deal_hands(ruleset), worst]:
        assert len(hand) == HAND_SIZE
        assert not Counter(hand) - deck
    assert deal_hands(ruleset) == deal_hands(ruleset)  # seeded: the same hands every run
    assert len(legal_plays(worst, None, ruleset)) == 122
