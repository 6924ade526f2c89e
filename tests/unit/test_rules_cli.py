"""`fiftyk rules classify|beats` through `service.cli.main`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fiftyk_referee.service.cli.main import main


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


@pytest.mark.parametrize(
    ("argv", "reason", "fragment"),
    [
        (["--preset", "classic", "3S", "4S"], "INVALID_COMBINATION",
         "3S 4S is not a combination of preset 'classic'"),
        (["--preset", "classic", "QS", "KS", "AS", "2S", "3S"], "INVALID_COMBINATION", "QS"),
        (["--preset", "classic", "3S", "1X"], "UNKNOWN_CARD", "'1X'"),
        (["--preset", "fuzhou", "SJ"], "CARD_NOT_IN_DECK",
         "not in the 104-card deck of preset 'fuzhou': SJ (the deck has none)"),
        (["--preset", "five_card", "3S", "3S"], "CARD_NOT_IN_DECK", "3S ×2 (the deck has 1)"),
        (["--preset", "classic"] + ["9H"] * 3, "CARD_NOT_IN_DECK", "9H ×3 (the deck has 2)"),
        (["--preset", "qq4", "BJ"], "CARD_NOT_IN_DECK", "BJ (the deck has none)"),
    ],
)
def test_classify_reports_a_negative_ruling_as_json_and_exits_0(
    capsys: pytest.CaptureFixture[str], argv: list[str], reason: str, fragment: str
) -> None:
    code, out, err = run(capsys, "classify", *argv)
    assert (code, err) == (0, "")
    assert set(out) == {"error", "message"}
    assert out["error"] == reason
    assert fragment in out["message"]


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
    ("argv", "reason", "side"),
    [
        (["--top", "3S", "4S", "--play", "5S", "5H"], "INVALID_COMBINATION", "top: "),
        (["--top", "3S", "--play", "5S", "6S"], "INVALID_COMBINATION", "play: "),
        (["--top", "3S", "--play", "XX"], "UNKNOWN_CARD", "play: "),
        (["--top", "3S", "--play", "4S", "4S", "4S"], "CARD_NOT_IN_DECK", "play: "),
    ],
)
def test_beats_reports_which_side_is_not_a_combination(
    capsys: pytest.CaptureFixture[str], argv: list[str], reason: str, side: str
) -> None:
    code, out, _ = run(capsys, "beats", "--preset", "classic", *argv)
    assert code == 0
    assert out["error"] == reason
    assert out["message"].startswith(side)


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
