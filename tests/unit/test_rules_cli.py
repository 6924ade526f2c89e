"""`fiftyk rules classify|beats` through `service.cli.main`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fiftyk_referee.service.cli.main import main

FIFTYK = str(Path(sys.executable).with_name("fiftyk"))
RUN_TIMEOUT_SECONDS = 60


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    """Run `fiftyk rules ...`; return the exit code, the parsed stdout JSON and stderr."""
    code = main(["rules", *argv])
    captured = capsys.readouterr()
    out = json.loads(captured.out) if captured.out else None
    if out is not None:
        assert captured.out.count("\n") == 1, "exactly one JSON object on one line"
    return code, out, captured.err


# -- classify ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--preset", "classic", "5H", "10H", "KH"],
         {"type": "pure_fifty_k", "cards": ["5H", "10H", "KH"], "points": 25}),
        (["--preset", "classic", "kh", "th", "5♥"],
         {"type": "pure_fifty_k", "cards": ["5H", "10H", "KH"], "points": 25}),
        (["--preset", "classic", "7S 3H 5C 4D 6S"],
         {"type": "straight", "cards": ["3H", "4D", "5C", "6S", "7S"], "points": 5}),
        (["--preset", "jiaodong", "BJ", "SJ"],
         {"type": "pair", "cards": ["SJ", "BJ"], "points": 20}),
        (["--preset", "classic", "BJ", "SJ"],
         {"type": "joker_pair_mixed", "cards": ["SJ", "BJ"], "points": 0}),
        (["--preset", "jinzhou", "KS", "KH", "KC"],
         {"type": "bomb", "cards": ["KS", "KH", "KC"], "points": 30}),
        (["--preset", "six_card_two_packs", "5S", "5S", "10S", "10S", "KS", "KS"],
         {"type": "pure_double_fifty_k", "cards": ["5S", "5S", "10S", "10S", "KS", "KS"],
          "points": 50}),
        (["--preset", "classic", "--option", "sequence_order=ace_two_low", "AS", "2S", "3S",
          "4S", "5S"],
         {"type": "straight", "cards": ["3S", "4S", "5S", "AS", "2S"], "points": 5}),
        (["--preset", "jiaodong", "-o", "joker_points=false", "SJ", "BJ"],
         {"type": "pair", "cards": ["SJ", "BJ"], "points": 0}),
        (["--preset", "classic", "--option", "min_straight=3", "--option", "kickers=true",
          "3S", "4S", "5S"],
         {"type": "straight", "cards": ["3S", "4S", "5S"], "points": 5}),
    ],
)
def test_classify_prints_type_canonical_cards_and_points(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: dict[str, Any]
) -> None:
    assert run(capsys, "classify", *argv) == (0, expected, "")


def test_classify_reports_cards_forming_no_combination_as_a_ruling_and_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for argv in (["3S", "4S"], ["QS", "KS", "AS", "2S", "3S"]):
        code, out, err = run(capsys, "classify", "--preset", "classic", *argv)
        assert (code, err) == (0, "")
        assert set(out) == {"error", "message"}
        assert out["error"] == "INVALID_COMBINATION"
        assert argv[0] in out["message"]


@pytest.mark.parametrize(
    ("argv", "reason", "fragment"),
    [
        (["--preset", "classic", "3S", "1X"], "UNKNOWN_CARD", "'1X'"),
        (["--preset", "classic", "1OH"], "UNKNOWN_CARD", "'1OH'"),
        (["--preset", "fuzhou", "SJ"], "CARD_NOT_IN_DECK",
         "not in the 104-card deck of preset 'fuzhou': SJ (the deck has none)"),
        (["--preset", "five_card", "3S", "3S"], "CARD_NOT_IN_DECK", "3S ×2 (the deck has 1)"),
        (["--preset", "classic"] + ["9H"] * 3, "CARD_NOT_IN_DECK", "9H ×3 (the deck has 2)"),
        (["--preset", "qq4", "BJ"], "CARD_NOT_IN_DECK", "BJ (the deck has none)"),
    ],
)
def test_classify_exits_2_for_cards_it_cannot_rule_on(
    capsys: pytest.CaptureFixture[str], argv: list[str], reason: str, fragment: str
) -> None:
    code, out, err = run(capsys, "classify", *argv)
    assert code == 2
    assert set(out) == {"error", "message"}
    assert out["error"] == reason
    assert fragment in out["message"]
    assert err == f"fiftyk rules classify: {reason}: {out['message']}\n"


def test_the_installed_classify_exits_2_for_an_unknown_card() -> None:
    done = subprocess.run([FIFTYK, "rules", "classify", "--preset", "classic", "1OH"],
                          capture_output=True, text=True, timeout=RUN_TIMEOUT_SECONDS,
                          check=False)
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"] == "UNKNOWN_CARD"
    assert "'1OH'" in done.stderr


# -- beats -------------------------------------------------------------------------------------


def test_beats_prints_the_ruling_and_both_classifications(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "beats", "--preset", "classic", "--top", "9S", "9H", "9C", "9D",
                       "--play", "SJ", "SJ", "BJ")
    assert code == 0
    assert out == {
        "beats": True,
        "top": {"type": "bomb", "cards": ["9S", "9H", "9C", "9D"], "points": 0},
        "play": {"type": "joker_triple", "cards": ["SJ", "SJ", "BJ"], "points": 0},
    }


@pytest.mark.parametrize(
    ("argv", "beats"),
    [
        (["--preset", "jinzhou", "--top", "3S", "3H", "4S", "4H", "5S", "5H",
          "--play", "9S", "9H", "9C"], False),
        (["--preset", "jinzhou", "--top", "3S", "3H", "4S", "4H", "5S", "5H",
          "--play", "9S", "9H", "9C", "9D"], True),
        (["--preset", "jinzhou", "--option", "bomb_reach=standard",
          "--top", "3S", "3H", "4S", "4H", "5S", "5H", "--play", "9S", "9H", "9C"], True),
        (["--preset", "classic", "--top", "4S", "--play", "4H"], False),
        (["--preset", "jiaodong", "--top", "2S", "--play", "3D"], True),
        (["--preset", "jinzhou", "--top", "5D", "10D", "KD", "--play", "5S", "10S", "KS"],
         True),
        (["--preset", "classic", "--top", "5D", "10D", "KD", "--play", "5S", "10S", "KS"],
         False),
        (["--preset", "classic", "--top", "3S", "4S", "5S", "6S", "7S",
          "--play", "4S", "5S", "6S", "7S", "8S", "9S"], False),
    ],
)
def test_beats_exits_0_for_positive_and_negative_rulings(
    capsys: pytest.CaptureFixture[str], argv: list[str], beats: bool
) -> None:
    code, out, err = run(capsys, "beats", *argv)
    assert (code, out["beats"], err) == (0, beats, "")
    assert set(out) == {"beats", "top", "play"}


@pytest.mark.parametrize(
    ("argv", "reason", "side", "exit_code"),
    [
        (["--top", "3S", "4S", "--play", "5S", "5H"], "INVALID_COMBINATION", "top: ", 0),
        (["--top", "3S", "--play", "5S", "6S"], "INVALID_COMBINATION", "play: ", 0),
        (["--top", "3S", "--play", "XX"], "UNKNOWN_CARD", "play: ", 2),
        (["--top", "3S", "--play", "4S", "4S", "4S"], "CARD_NOT_IN_DECK", "play: ", 2),
        (["--top", "1OH", "--play", "4S"], "UNKNOWN_CARD", "top: ", 2),
    ],
)
def test_beats_reports_which_side_is_not_a_combination(
    capsys: pytest.CaptureFixture[str], argv: list[str], reason: str, side: str,
    exit_code: int,
) -> None:
    code, out, err = run(capsys, "beats", "--preset", "classic", *argv)
    assert code == exit_code
    assert out["error"] == reason
    assert out["message"].startswith(side)
    assert (err != "") == (exit_code == 2)


# -- unusable command lines ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["classify", "--preset", "shanghai", "3S"], "unknown preset 'shanghai'; allowed:"
                                                     " classic, jinzhou"),
        (["classify", "--preset", "classic", "--option", "colour=red", "3S"],
         "unknown option 'colour'"),
        (["classify", "--preset", "classic", "--option", "wind=left", "3S"],
         'allowed: "next", "partner"'),
        (["classify", "--preset", "classic", "--option", "min_straight=2", "3S"],
         "an integer from 3 to 12"),
        (["classify", "--preset", "classic", "--option", "kickers", "3S"], "NAME=VALUE"),
        (["classify", "--preset", "classic", "--option", "jokers=false", "3S"],
         "inconsistent options"),
        (["beats", "--preset", "qq4", "-o", "min_bomb=9", "--top", "3S", "--play", "4S"],
         "min_bomb=9 is not allowed"),
    ],
)
def test_unusable_ruleset_exits_2_with_the_message_on_stderr(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, None)
    assert err.startswith("fiftyk rules: error: ")
    assert fragment in err


@pytest.mark.parametrize(
    "argv",
    [["classify", "3S"], ["classify", "--preset", "classic"],
     ["beats", "--preset", "classic", "--top", "3S"], ["rules-typo"], []],
)
def test_missing_arguments_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["rules", *argv])
    assert exited.value.code == 2
    assert "usage: fiftyk rules" in capsys.readouterr().err


# -- ask -----------------------------------------------------------------------------------------

ASKED = [
    ({"game": "fiftyk", "kind": "classify", "preset": "classic", "options": {},
      "input": {"cards": ["5H", "10H", "KH"]}}, {"type": "pure_fifty_k", "points": 25}),
    ({"game": "shengji", "kind": "classify", "preset": "tractor", "options": {},
      "input": {"level": "10", "trump": "H", "cards": ["KS", "KS", "QS", "QS"]}},
     {"type": "tractor", "components": [["KS", "KS", "QS", "QS"]]}),
]


def test_ask_reads_the_questions_of_a_file_named_on_the_command_line(tmp_path: Path) -> None:
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q, _ in ASKED), encoding="utf-8")
    done = subprocess.run([FIFTYK, "rules", "ask", str(questions)], capture_output=True,
                          text=True, timeout=RUN_TIMEOUT_SECONDS, check=False,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [a for _, a in ASKED]


def test_ask_of_a_missing_file_exits_1_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nothing.jsonl"
    done = subprocess.run([FIFTYK, "rules", "ask", str(missing)], capture_output=True,
                          text=True, timeout=RUN_TIMEOUT_SECONDS, check=False)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"fiftyk rules ask: cannot read {missing}:"
                           " No such file or directory\n")


def test_ask_help_says_it_reads_standard_input_or_a_file(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["rules", "ask", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "usage: fiftyk rules ask [-h] [FILE]" in shown
    assert "standard input" in shown and "fiftyk rules ask < questions.jsonl" in shown
