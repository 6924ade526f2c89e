"""Text for people at a terminal: suit symbols, colour where the terminal shows it, lines
wrapped at about 100 columns.

The command line's accounts (`fiftyk replay`, `fiftyk demo`) are written in the API's card
notation (`10H QS SJ`); `for_people` turns each printed line into what a person reads —
`10♥ Q♠ SJ`, hearts and diamonds in red when standard output is a terminal that shows
colour (not when `NO_COLOR` is set or `TERM=dumb`; `FORCE_COLOR` forces it), long lines
wrapped under their own indentation. `people_output()` applies it to everything a command
prints, so the code that composes the text stays plain. `outline` writes a JSON value (a
ruling) as an indented outline (`fiftyk adjudicate --pretty`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TextIO

WIDTH = 100
CONTINUATION_INDENT = 4
SUITS = {"S": "♠", "H": "♥", "C": "♣", "D": "♦"}
RED, RESET = "\x1b[31m", "\x1b[0m"
# A card in the API's notation, standing alone (not part of an id or a word).
CARD = re.compile(r"(?<![\w-])(10|[2-9JQKA])([SHCD])(?![\w-])")
RED_CARD = re.compile(r"(?<![\w-])((?:10|[2-9JQKA])[♥♦])")


def wants_colour(stream: TextIO) -> bool:
    """Whether `stream` should get colour: a terminal, unless NO_COLOR or TERM=dumb."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream.isatty() and os.environ.get("TERM", "") != "dumb"


def with_symbols(line: str) -> str:
    """A line with every card's suit as its symbol."""
    return CARD.sub(lambda m: m.group(1) + SUITS[m.group(2)], line)


def wrapped(line: str, width: int = WIDTH) -> list[str]:
    """A line cut at spaces to at most `width` columns, continuations indented under it."""
    if len(line) <= width:
        return [line]
    indent = line[:len(line) - len(line.lstrip(" "))]
    return textwrap.wrap(line, width=width, initial_indent="", subsequent_indent=indent
                         + " " * CONTINUATION_INDENT, break_long_words=False,
                         break_on_hyphens=False, drop_whitespace=True) or [line]


def for_people(text: str, *, colour: bool = False, width: int = WIDTH) -> str:
    """Text as a person reads it: symbols first (one column each), then wrapping, then
    colour (escape codes take no column)."""
    out: list[str] = []
    for line in text.split("\n"):
        for piece in wrapped(with_symbols(line), width):
            out.append(RED_CARD.sub(f"{RED}\\1{RESET}", piece) if colour else piece)
    return "\n".join(out)


class _PeopleWriter(io.TextIOBase):
    """A text stream that formats every complete line before passing it on."""

    def __init__(self, target: TextIO, colour: bool) -> None:
        self._target = target
        self._colour = colour
        self._pending = ""

    def write(self, text: str) -> int:
        """Format and forward every complete line; keep the rest for later."""
        self._pending += text
        *lines, self._pending = self._pending.split("\n")
        for line in lines:
            self._target.write(for_people(line, colour=self._colour) + "\n")
        return len(text)

    def flush(self) -> None:
        """Forward a partial line too, then flush the target."""
        pending, self._pending = self._pending, ""  # written once, even if the write fails
        if pending:
            self._target.write(for_people(pending, colour=self._colour))
        self._target.flush()


TEXT_CHOICES = ("auto", "people", "plain")


def add_text_argument(parser: argparse.ArgumentParser) -> None:
    """`--text auto|people|plain`: symbols, colour and wrapping, or the plain notation."""
    parser.add_argument("--text", choices=TEXT_CHOICES, default="auto",
                        help="people: suit symbols, colour on a terminal, lines wrapped at"
                             f" {WIDTH} columns; plain: the card notation, one line per"
                             " item (for scripts); auto (default): people on a terminal,"
                             " plain otherwise")


def for_people_wanted(choice: str, stream: TextIO | None = None) -> bool:
    """Whether `--text` asks for people's text on `stream` (standard output by default)."""
    if choice == "auto":
        return (stream or sys.stdout).isatty()
    return choice == "people"


@contextlib.contextmanager
def people_output(enabled: bool = True) -> Iterator[None]:
    """Format what is printed to standard output meanwhile (see the module docstring)."""
    if not enabled:
        yield
        return
    target = sys.stdout
    writer = _PeopleWriter(target, wants_colour(target))
    sys.stdout = writer
    try:
        yield
    finally:
        try:
            writer.flush()
        finally:  # also when the reader went away (BrokenPipeError)
            sys.stdout = target


def outline(value: Any, indent: int = 0) -> list[str]:
    """A JSON value as indented `key: value` lines: scalars inline, lists of scalars on one
    line, objects and lists of objects nested below their key."""
    pad = "  " * indent
    if isinstance(value, Mapping):
        lines: list[str] = []
        for key, item in value.items():
            if _is_flat(item):
                lines.append(f"{pad}{key}: {_flat(item)}")
            else:
                lines.append(f"{pad}{key}:")
                lines.extend(outline(item, indent + 1))
        return lines
    if isinstance(value, Sequence) and not isinstance(value, str):
        lines = []
        for item in value:
            if _is_flat(item):
                lines.append(f"{pad}- {_flat(item)}")
            elif isinstance(item, Mapping) and all(_is_flat(v) for v in item.values()):
                lines.append(f"{pad}- " + ", ".join(f"{k} {_flat(v)}" for k, v in item.items()))
            else:
                lines.append(f"{pad}-")
                lines.extend(outline(item, indent + 1))
        return lines
    return [f"{pad}{_flat(value)}"]


def _is_flat(value: Any) -> bool:
    if isinstance(value, Mapping):
        return not value
    if isinstance(value, Sequence) and not isinstance(value, str):
        return all(not isinstance(v, Mapping | list | tuple) for v in value)
    return True


def _flat(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Mapping):
        return "—"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return " ".join(_flat(v) for v in value) if value else "—"
    return str(value)


__all__ = ["TEXT_CHOICES", "WIDTH", "add_text_argument", "for_people", "for_people_wanted",
           "outline", "people_output", "wants_colour", "with_symbols", "wrapped"]
