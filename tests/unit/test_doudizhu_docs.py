"""docs/doudizhu.md says what the referee does: its transcript example rules to the result
shown, its combination table's examples are the kinds it names, every option and preset is
listed with its default, every example of who beats what and of scoring is the oracle's
answer, and every event of the game is in its events table."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from fiftyk_referee.domain.doudizhu import GAME
from fiftyk_referee.domain.doudizhu.rulesets import OPTIONS, PRESETS
from fiftyk_referee.service.games.doudizhu import doudizhu_pb2 as dpb

PAGE = Path(__file__).resolve().parents[2] / "docs" / "doudizhu.md"
TEXT = PAGE.read_text(encoding="utf-8")


def section(heading: str) -> str:
    """The text under a `## heading`, up to the next `## `."""
    return TEXT.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def table_rows(heading: str) -> list[list[str]]:
    """The cells of the first table under a heading (header and rule left out)."""
    rows = [line for line in section(heading).splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[1:]]


def ask(kind: str, given: dict[str, Any], preset: str = "classic",
        options: dict[str, Any] | None = None) -> Any:
    return GAME.answer({"game": "doudizhu", "kind": kind, "preset": preset,
                        "options": options or {}, "input": given})


def test_the_transcript_example_rules_to_the_result_shown() -> None:
    blocks = re.findall(r"```json\n(.*?)```", section("Transcripts and results"), re.S)
    transcript, result = (json.loads(block) for block in blocks)
    assert GAME.adjudicate(transcript) == result


def test_every_combination_example_is_the_kind_its_row_names() -> None:
    rows = table_rows("Combinations")
    assert len(rows) == 14
    for kind, _, example, _ in rows:
        cards = example.strip("`").split()
        assert ask("classify", {"cards": cards})["type"] == kind.strip("`"), example


def test_every_option_and_preset_is_listed_with_its_default() -> None:
    listed = {row[0].strip("`"): row[1] for row in table_rows("Options")}
    assert set(listed) == {spec.name for spec in OPTIONS}
    for spec in OPTIONS:
        default = (str(spec.default).lower() if isinstance(spec.default, bool)
                   else "null" if spec.default is None else str(spec.default))
        assert listed[spec.name].strip("`") == default, spec.name
    assert [row[0].strip("`") for row in table_rows("Presets")] == list(PRESETS)


@pytest.mark.parametrize(("play", "top", "beats"), [
    ("9H 9D", "8S 8C", True), ("4S 5S 6H 7D 8C", "3S 4H 5C 6D 7S", True),
    ("4S 5S 6H 7D 8C 9C", "3S 4H 5C 6D 7S", False), ("5S 5H 5C 9D", "4S 4H 4C AS", True),
    ("3S 3H 3C 3D", "2S 2H 2C AD", True), ("5S 5H 5C 5D", "4S 4H 4C 4D", True),
])
def test_the_examples_of_who_beats_what(play: str, top: str, beats: bool) -> None:
    assert f"`{play}`" in section("Who beats what")
    assert ask("beats", {"play": play.split(), "top": top.split()})["beats"] is beats


@pytest.mark.parametrize(("preset", "options", "given", "scores"), [
    ("classic", {}, {"bid": 2, "robs": 0, "bombs": 1, "rockets": 0, "winner": "farmers",
                     "spring": False}, [-8, 4, 4]),
    ("rob", {}, {"bid": 1, "robs": 2, "bombs": 0, "rockets": 0, "winner": "landlord",
                 "spring": False}, [8, -4, -4]),
    ("classic", {}, {"bid": 3, "robs": 0, "bombs": 1, "rockets": 1, "winner": "landlord",
                     "spring": True}, [48, -24, -24]),
    ("classic", {}, {"bid": 1, "robs": 0, "bombs": 0, "rockets": 0, "winner": "farmers",
                     "spring": True}, [-4, 2, 2]),
    ("classic", {"multiplier_cap": 16}, {"bid": 3, "robs": 0, "bombs": 1, "rockets": 1,
                                         "winner": "landlord", "spring": True}, [32, -16, -16]),
])
def test_the_scoring_examples(preset: str, options: dict[str, Any], given: dict[str, Any],
                              scores: list[int]) -> None:
    assert ask("score", given, preset, options)["scores"] == scores


@pytest.mark.parametrize(("preset", "cards", "kind"), [
    ("classic", "3S 3H 3C 4S 4H 4C 5S 5H", "plane_singles"),
    ("classic", "4S 4H 4C 4D 5S 5H", "four_two_singles"),
    ("classic", "3S 3H 3C 4S 4H 4C 5S 5H 5C 7S 7H 9S", "plane_singles"),
    ("classic", "5S 5H 5C SJ BJ", "INVALID_COMBINATION"),
    ("douzero", "6S 6H 6C 6D SJ BJ", "four_two_singles"),
    ("douzero", "3S 3H 3C 4S 4H 4C SJ BJ", "plane_singles"),
    ("douzero", "3S 3H 3C 4S 4H 4C 5S 5H 5C 6S 6H 6C", "plane"),
])
def test_the_examples_of_kickers_and_readings(preset: str, cards: str, kind: str) -> None:
    assert ask("classify", {"cards": cards.split()}, preset)["type"] == kind


def test_the_oracle_example_is_answered_as_shown() -> None:
    text = section("The rules oracle")
    question = json.loads(re.findall(r"```\n(.*?)```", text, re.S)[0])
    answer = json.loads(re.findall(r"answers `(\{.*?\})`", text, re.S)[0])
    assert GAME.answer(question) == answer


def test_every_event_is_in_the_events_table_with_its_message() -> None:
    rows = {row[0].strip("`"): row[1].strip("`") for row in table_rows("Events")}
    assert set(rows) == {kind.name for kind in GAME.events}
    for name, message in rows.items():
        descriptor = dpb.DESCRIPTOR.message_types_by_name[message]
        for field in descriptor.fields:
            assert f"`{field.name}`" in section("Events") or message == "HandEnded", (name,
                                                                                      field.name)


@pytest.mark.parametrize(("preset", "options", "cards", "kind"), [
    ("classic", {}, "3S 3H 3C 3D", "bomb"),
    ("classic", {}, "3S 3H 3C 4S 4H 4C 3D 4D", "INVALID_COMBINATION"),
    ("classic", {}, "3S 3H 3C SJ BJ", "INVALID_COMBINATION"),
    ("classic", {}, "8S 8H 8C 8D SJ BJ 3S 3H", "INVALID_COMBINATION"),
    ("classic", {}, "QS QH QC KS KH KC AS AH AC 2S 2H 2D", "plane_singles"),
    ("classic", {}, "3S 3H 3C 4S 4H 4C 5D", "INVALID_COMBINATION"),
    ("classic", {}, "3S 3H 3C 4S 4H 4C 5D 5H 6S", "INVALID_COMBINATION"),
    ("classic", {}, "8S 8H 8C 8D 5S 5H", "four_two_singles"),
    ("classic", {}, "3S 3H 3C 4S 4H 4C 5S 5H 5C 9S 9H 9C", "plane_singles"),
    ("classic", {"kickers_share_rank": False}, "3S 3H 3C 4S 4H 4C 5S 5H", "INVALID_COMBINATION"),
    ("douzero", {}, "3S 3H 3C 4S 4H 4C 5S 5H 5C 6S 6H 6C 9S 9H 9C 9D", "plane_singles"),
    ("classic", {}, "3S 3H 3C 4S 4H 4C 5S 5H 5C 6S 6H 6C 9S 9H 9C 9D", "INVALID_COMBINATION"),
    ("douzero", {}, "3S 3H 3C 3D SJ BJ", "four_two_singles"),
    ("classic", {"kickers_pairs_one_rank": True}, "3S 3H 3C 3D 5S 5H 5C 5D", "four_two_pairs"),
    ("classic", {}, "3S 3H 3C 3D 5S 5H 5C 5D", "INVALID_COMBINATION"),
    ("douzero", {}, "3S 3H 3C 4S 4H 4C 5S 5H 5C 6S 6H 6C 7S 7H 7C 8D", "plane_singles"),
    ("classic", {}, "3S 3H 3C 4S 4H 4C 5S 5H 5C 6S 6H 6C 7S 7H 7C 8D", "INVALID_COMBINATION"),
    ("classic", {"four_two_singles": False}, "8S 8H 8C 8D 3S KH", "INVALID_COMBINATION"),
    ("classic", {"four_two_pairs": False}, "8S 8H 8C 8D 3S 3H KS KH", "INVALID_COMBINATION"),
])
def test_the_kicker_examples(preset: str, options: dict[str, Any], cards: str,
                             kind: str) -> None:
    assert ask("classify", {"cards": cards.split()}, preset, options)["type"] == kind

