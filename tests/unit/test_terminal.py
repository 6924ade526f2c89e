"""Text for people: suit symbols, colour only where wanted, lines wrapped at 100 columns,
and `fiftyk adjudicate --pretty`."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from fiftyk_referee.service.cli import main as cli
from fiftyk_referee.service.cli.terminal import (
    WIDTH,
    for_people,
    for_people_wanted,
    outline,
    people_output,
    wants_colour,
    with_symbols,
)

ROOT = Path(__file__).resolve().parents[2]
ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def test_cards_get_their_suit_symbols_and_nothing_else_changes() -> None:
    line = "seat 0 plays 10H QS 5D 2C SJ BJ (hand 3f9e2a10c, table AC-milan 7H7)"
    assert with_symbols(line) == (
        "seat 0 plays 10♥ Q♠ 5♦ 2♣ SJ BJ (hand 3f9e2a10c, table AC-milan 7H7)")


def test_long_lines_wrap_under_their_indentation_and_colour_takes_no_column() -> None:
    line = "  trick 4: " + " ".join(["seat 1 plays 10H 10D KH"] * 12)
    text = for_people(line, colour=True)
    pieces = text.split("\n")
    assert len(pieces) > 1
    assert all(len(ESCAPE.sub("", piece)) <= WIDTH for piece in pieces)
    assert all(piece.startswith("      ") for piece in pieces[1:])
    assert "\x1b[31m10♥\x1b[0m" in text and "\x1b[31mK♥\x1b[0m" in text
    assert "\x1b" not in for_people(line, colour=False)


def test_colour_follows_the_terminal_and_the_usual_variables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert wants_colour(Terminal()) and not wants_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_colour(Terminal())
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not wants_colour(Terminal())
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert wants_colour(io.StringIO())
    assert for_people_wanted("auto", Terminal()) and not for_people_wanted("auto", io.StringIO())
    assert for_people_wanted("people", io.StringIO()) and not for_people_wanted("plain")


def test_people_output_formats_what_is_printed_meanwhile(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    with people_output():
        print("seat 2 buries 5H 10D")
        print("partial QS", end="")
    with people_output(enabled=False):
        print("seat 2 buries 5H")
    assert capsys.readouterr().out == "seat 2 buries 5♥ 10♦\npartial Q♠seat 2 buries 5H\n"


def test_an_outline_nests_objects_and_keeps_flat_lists_on_one_line() -> None:
    lines = outline({"status": "completed", "rejected": None, "collected": [55, 35, 10],
                     "seats": [{"seat": 0, "score": 55}], "winner": {"team": None, "seat": 1},
                     "over": True})
    assert lines == ["status: completed", "rejected: —", "collected: 55 35 10", "seats:",
                     "  - seat 0, score 55", "winner:", "  team: —", "  seat: 1", "over: yes"]


def test_adjudicate_pretty_prints_the_ruling_for_people(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    example = ROOT / "docs" / "examples" / "transcript-shengji.json"
    assert cli.main(["adjudicate", "--pretty", str(example)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("format: fiftyk-result/1\ngame: shengji\nstatus: completed\n")
    assert "kitty:\n  dealt: " in out and "♦" in out
    assert all(len(line) <= WIDTH for line in out.splitlines())
