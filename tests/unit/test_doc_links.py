"""Every reference to the documentation leads somewhere: no dangling link, no outside source.

The proto's comments, the code's comments and help texts, the tests, the docs and the
deployment files point readers at `docs/<page>.md#<anchor>` and at each other. A reference
must name a file of the repository and, for a page, a heading that exists (anchors as GitHub
makes them). The project's own pages are the reference: nothing may cite the rule books the
team worked from, nor their numbered sections.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Where references are read: the contract, the code, the tests, the docs and the deployment.
SCANNED = ("proto", "service", "domain", "tests", "docs", "deploy", "scripts", "bench",
           "README.md", "pyproject.toml")
# This file's own examples are broken on purpose.
NOT_SCANNED = {Path(__file__).resolve()}
SKIPPED_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # https:, mailto:, ...

# `docs/<path>` in any text (comments, help, YAML), optionally with `#anchor`: repository-relative.
DOCS_PATH = re.compile(r"(?<![\w./-])(docs/[\w./-]*\w)(#[\w-]+)?")
# Markdown links `[text](target)` and reference definitions `[label]: target`.
MD_LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
MD_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$",
                           re.MULTILINE)
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"", re.IGNORECASE)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")

# The team's source documents live outside the repository; the docs retell them. The names are
# split so that this file does not cite them itself.
SOURCE_BOOKS = ("RULES", "TRANSCRIPT", "SHENGJI", "ORACLE")
FORBIDDEN = (
    (re.compile(r"\b(?:" + "|".join(SOURCE_BOOKS) + r")\.md\b"), "an outside rule book"),
    (re.compile(r"(?<![\w-])shared/|\.\./shared\b"), "the outside shared/ folder"),
    (re.compile("\u00a7"), "a numbered section of an outside rule book"),
    (re.compile(r"\bsections? \d"), "a numbered section of an outside rule book"),
)
# The one deliberate use of an outside source: the oracle test checks its copy of the oracle
# contract's examples against the contract itself when a copy of it sits beside the checkout.
ALLOWED_CITATIONS = {("tests/unit/test_rules_oracle.py", SOURCE_BOOKS[3] + ".md"),
                     ("tests/unit/test_rules_oracle.py", "shared/")}


@dataclass(frozen=True)
class Reference:
    """One reference found in a file: where it is and what it names."""

    source: Path
    line: int
    path: Path
    anchor: str | None


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = INLINE_CODE.sub(lambda match: match.group(0).strip("`"), heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link keeps its text
    kept = []
    for char in text.lower():
        category = unicodedata.category(char)
        if char in " -_" or category[0] in "LMN":
            kept.append(char)
    return "".join(kept).replace(" ", "-")


def _prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """A markdown file's lines outside fenced code blocks, numbered from 1."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = FENCE.match(line)
        if match is not None:
            marker = match.group(1)
            if fence is None:
                fence = marker
                continue
            if marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
                continue
        if fence is None:
            yield number, line


def anchors(page: Path) -> set[str]:
    """Every anchor of a markdown page: its headings (duplicates numbered) and HTML anchors."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in _prose_lines(page.read_text(encoding="utf-8")):
        found.update(HTML_ANCHOR.findall(line))
        match = HEADING.match(line)
        if match is None:
            continue
        anchor = github_anchor(match.group(2))
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        found.add(anchor if count == 0 else f"{anchor}-{count}")
    return found


def scanned_files() -> Iterator[Path]:
    """The text files references are read from."""
    for name in SCANNED:
        top = ROOT / name
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        for path in candidates:
            if not path.is_file() or SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts):
                continue
            if path.resolve() in NOT_SCANNED:
                continue
            data = path.read_bytes()
            if b"\0" in data:
                continue  # a binary file names nothing
            yield path


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def _split_target(source: Path, target: str) -> tuple[Path, str | None]:
    path_part, _, anchor = target.partition("#")
    path = source if not path_part else (source.parent / path_part)
    return path.resolve(), anchor or None


def references(path: Path, root: Path) -> Iterator[Reference]:
    """The documentation references of one file: `docs/...` paths and, in markdown, links."""
    text = _text(path)
    for number, line in enumerate(text.splitlines(), start=1):
        for match in DOCS_PATH.finditer(line):
            anchor = match.group(2)[1:] if match.group(2) else None
            yield Reference(path, number, (root / match.group(1)).resolve(), anchor)
    if path.suffix != ".md":
        return
    for number, line in _prose_lines(text):
        prose = INLINE_CODE.sub("", line)
        targets = [m.group(1) for m in MD_LINK.finditer(prose)]
        targets += [m.group(1) for m in MD_DEFINITION.finditer(prose)]
        for target in targets:
            if EXTERNAL.match(target):
                continue
            target_path, anchor = _split_target(path, target)
            yield Reference(path, number, target_path, anchor)


def dangling(reference: Reference, anchor_cache: dict[Path, set[str]]) -> str | None:
    """Why a reference leads nowhere, or None when it names an existing file and heading."""
    if not reference.path.exists():
        return "no such file"
    if reference.anchor is None or reference.path.suffix != ".md":
        return None
    if reference.path not in anchor_cache:
        anchor_cache[reference.path] = anchors(reference.path)
    if reference.anchor not in anchor_cache[reference.path]:
        return "no such heading"
    return None


def dangling_references(files: list[Path], root: Path = ROOT) -> list[str]:
    """Every reference in `files` that leads nowhere, as `file:line: target (why)`."""
    cache: dict[Path, set[str]] = {}
    problems = []
    for path in files:
        for reference in references(path, root):
            why = dangling(reference, cache)
            if why is not None:
                target = reference.path.relative_to(root.resolve())
                anchor = f"#{reference.anchor}" if reference.anchor else ""
                problems.append(f"{path.relative_to(root)}:{reference.line}: "
                                f"{target}{anchor} ({why})")
    return problems


def outside_citations(files: list[Path], root: Path = ROOT) -> list[str]:
    """Every place in `files` that cites the team's outside sources."""
    problems = []
    for path in files:
        where = path.relative_to(root).as_posix()
        for number, line in enumerate(_text(path).splitlines(), start=1):
            for pattern, what in FORBIDDEN:
                match = pattern.search(line)
                if match is not None and (where, match.group(0)) not in ALLOWED_CITATIONS:
                    problems.append(f"{where}:{number}: {match.group(0)!r} cites {what}")
    return problems


# -- the anchors --------------------------------------------------------------------------


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Who beats what", "who-beats-what"),
    ("The QQ rules (`scoring=qq`)", "the-qq-rules-scoringqq"),
    ("Result: `fiftyk-result/1`", "result-fiftyk-result1"),
    ("升级 / 拖拉机", "升级--拖拉机"),
    ("五十K hand events", "五十k-hand-events"),
    ("`shengji.declared_nothing`, `shengji.declared`, `shengji.window_closed`",
     "shengjideclared_nothing-shengjideclared-shengjiwindow_closed"),
    ("Announcements and card counts (报牌)", "announcements-and-card-counts-报牌"),
])
def test_anchors_are_made_as_github_makes_them(heading: str, anchor: str) -> None:
    assert github_anchor(heading) == anchor


def test_headings_in_code_blocks_are_not_anchors_and_repeated_headings_are_numbered(
        tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n```sh\n# not a heading\n```\n\n## Notes\n\n## Notes\n",
                    encoding="utf-8")
    assert anchors(page) == {"title", "notes", "notes-1"}


# -- the repository ---------------------------------------------------------------------------


def test_every_docs_reference_names_an_existing_page_and_heading() -> None:
    problems = dangling_references(list(scanned_files()))
    assert not problems, "dangling references:\n" + "\n".join(problems)


def test_nothing_cites_the_outside_rule_books_or_their_sections() -> None:
    problems = outside_citations(list(scanned_files()))
    assert not problems, "cite docs/*.md instead:\n" + "\n".join(problems)


def test_the_check_finds_a_missing_page_a_missing_heading_and_a_bad_relative_link(
        tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rules.md").write_text("# Rules\n\n## Cards\n\n## Who beats what\n",
                                   encoding="utf-8")
    page = docs / "page.md"
    page.write_text("# Page\n\n"
                    "See docs/rules.md#cards and docs/rules.md#no-such-rule, docs/nothing.md.\n"
                    "[this](rules.md#who-beats-what), [that](rules.md#nowhere), [up](#page),\n"
                    "[away](#nowhere), `[in code](nowhere.md)`, [web](https://example.org/x).\n"
                    "```sh\n[in a block](nowhere.md)\n```\n", encoding="utf-8")
    code = tmp_path / "module.py"
    code.write_text('"""See docs/rules.md#who-beats-what and docs/rules.md#scoring."""\n',
                    encoding="utf-8")
    assert dangling_references([page, code], root=tmp_path) == [
        "docs/page.md:3: docs/rules.md#no-such-rule (no such heading)",
        "docs/page.md:3: docs/nothing.md (no such file)",
        "docs/page.md:4: docs/rules.md#nowhere (no such heading)",
        "docs/page.md:5: docs/page.md#nowhere (no such heading)",
        "module.py:1: docs/rules.md#scoring (no such heading)",
    ]


def test_the_check_finds_citations_of_the_outside_sources(tmp_path: Path) -> None:
    book = SOURCE_BOOKS[0] + ".md"
    bad = tmp_path / "bad.py"
    bad.write_text(f'"""Cards ({book} section 1)."""\n# see ../shared/ and \u00a74\n',
                   encoding="utf-8")
    assert outside_citations([bad], root=tmp_path) == [
        f"bad.py:1: '{book}' cites an outside rule book",
        "bad.py:1: 'section 1' cites a numbered section of an outside rule book",
        "bad.py:2: '../shared' cites the outside shared/ folder",
        "bad.py:2: '\u00a7' cites a numbered section of an outside rule book",
    ]
