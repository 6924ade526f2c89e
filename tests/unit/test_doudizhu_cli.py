"""斗地主 at the command line without a server: `fiftyk rules doudizhu classify|beats|legal`
answer as the rules oracle does, and refuse cards or rulesets they cannot rule on with exit
2; the account's text helpers sort and name what they tell."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fiftyk_referee.domain.doudizhu import GAME
from fiftyk_referee.service.cli.main import main
from fiftyk_referee.service.games.doudizhu import doudizhu_pb2 as dpb
from fiftyk_referee.service.games.doudizhu.text import (
    bid_text,
    multiplier_text,
    result_lines,
    sorted_cards,
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = main(["rules", "doudizhu", *argv])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else None, captured.err


def oracle(kind: str, given: dict[str, Any], preset: str = "classic",
           options: dict[str, Any] | None = None) -> Any:
    return GAME.answer({"game": "doudizhu", "kind": kind, "preset": preset,
                        "options": options or {}, "input": given})


@pytest.mark.parametrize(("argv", "kind", "given", "preset", "options"), [
    (["classify", "3S", "3H", "3C", "4D"], "classify", {"cards": ["3S", "3H", "3C", "4D"]},
     "classic", {}),
    (["classify", "--preset", "douzero", "6S", "6H", "6C", "6D", "SJ", "BJ"], "classify",
     {"cards": ["6S", "6H", "6C", "6D", "SJ", "BJ"]}, "douzero", {}),
    (["classify", "--preset", "douzero", "-o", "kickers_rocket=false", "6S", "6H", "6C", "6D",
      "SJ", "BJ"], "classify", {"cards": ["6S", "6H", "6C", "6D", "SJ", "BJ"]}, "douzero",
     {"kickers_rocket": False}),
    (["beats", "--top", "2S", "2H", "2C", "AD", "--play", "3S", "3H", "3C", "3D"], "beats",
     {"top": ["2S", "2H", "2C", "AD"], "play": ["3S", "3H", "3C", "3D"]}, "classic", {}),
    (["legal", "9H", "9D", "10S", "2C", "SJ", "BJ", "--top", "8S", "8C"], "legal_plays",
     {"hand": ["9H", "9D", "10S", "2C", "SJ", "BJ"], "top": ["8S", "8C"]}, "classic", {}),
    (["legal", "3S", "4S", "5S", "6S", "7S"], "legal_plays",
     {"hand": ["3S", "4S", "5S", "6S", "7S"], "top": []}, "classic", {}),
])
def test_the_rules_commands_answer_as_the_oracle(
        capsys: pytest.CaptureFixture[str], argv: list[str], kind: str, given: dict[str, Any],
        preset: str, options: dict[str, Any]) -> None:
    code, answer, err = run(capsys, *argv)
    assert (code, err) == (0, "")
    assert answer == oracle(kind, given, preset, options)


def test_a_combination_that_is_none_is_a_ruling_not_an_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "classify", "5S", "5H", "5C", "SJ", "BJ") == (
        0, {"type": "INVALID_COMBINATION"}, "")


@pytest.mark.parametrize(("argv", "reason"), [
    (["classify", "3S", "1X"], "UNKNOWN_CARD"),
    (["classify", "3S", "3S"], "CARD_NOT_IN_DECK"),
    (["beats", "--top", "3S", "--play", "3S"], "CARD_NOT_IN_DECK"),
])
def test_cards_it_cannot_rule_on_exit_2_with_the_reason(
        capsys: pytest.CaptureFixture[str], argv: list[str], reason: str) -> None:
    code, answer, err = run(capsys, *argv)
    assert code == 2 and answer["error"] == reason
    assert err.startswith(f"fiftyk rules doudizhu {argv[0]}: {reason}: ")


@pytest.mark.parametrize("argv", [["classify", "--preset", "tractor", "3S"],
                                  ["classify", "-o", "no_such_option=1", "3S"],
                                  ["classify", "-o", "kickers_rocket=maybe", "3S"]])
def test_a_ruleset_it_does_not_know_exits_2_on_stderr(
        capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, answer, err = run(capsys, *argv)
    assert (code, answer) == (2, None)
    assert err.startswith("fiftyk rules doudizhu classify: error: ")


def test_the_account_sorts_cards_as_a_player_holds_them_and_names_the_multiplier() -> None:
    assert sorted_cards(["BJ", "2S", "10H", "3D", "SJ", "3S", "AC"]) == [
        "3S", "3D", "10H", "AC", "2S", "SJ", "BJ"]
    assert bid_text(dpb.Bid(seat=1, action="bid", points=2)) == "seat 1 bids 2"
    assert bid_text(dpb.Bid(seat=0, action="rob", by_referee=True)) == (
        "seat 0 robs the landlord (timed out)")
    assert bid_text(dpb.Bid(seat=2, action="pass")) == "seat 2 passes"
    multiplier = dpb.Multiplier(bid=3, bombs=1, rockets=1, spring=True, total=24, uncapped=24)
    assert multiplier_text(multiplier) == "× 24 (bid 3, 1 bomb, the rocket, spring)"
    result = dpb.HandResult(landlord=0, winner="landlord", multiplier=multiplier, base=1,
                            unit=24, scores=[48, -24, -24])
    assert result_lines(result) == ["the landlord (seat 0) wins",
                                    "base 1 × 24 (bid 3, 1 bomb, the rocket, spring)"
                                    " = 24 per farmer, twice that for the landlord",
                                    "scores: seat 0 +48, seat 1 -24, seat 2 -24"]
    assert result_lines(dpb.HandResult(redeal=True)) == [
        "every seat passed: no landlord, no score; the table deals again"]
