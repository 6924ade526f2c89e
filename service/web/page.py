"""The web table as files: the page's static parts, and the whole page as one offline file.

The page lives in `static/` (package data). `offline_html` inlines its stylesheet and
scripts and embeds one replay document, so the file opens from disk with no server and no
network (`fiftyk replay HAND_ID --html FILE`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

INDEX = "index.html"
_STYLESHEET = re.compile(r'<link rel="stylesheet" href="([\w./-]+)">')
_SCRIPT = re.compile(r'<script src="([\w./-]+)"></script>')
_DATA = '<script type="application/json" id="replay-data"></script>'


def static_root() -> Traversable:
    """The folder of the page's files."""
    return resources.files("fiftyk_referee.service.web").joinpath("static")


def static_file(name: str) -> bytes:
    """One of the page's files by its path under `static/` (FileNotFoundError if absent)."""
    node = static_root()
    for part in name.split("/"):
        node = node.joinpath(part)
    if not node.is_file():
        raise FileNotFoundError(name)
    return node.read_bytes()


def static_files() -> dict[str, bytes]:
    """Every file of the page, by its path under `static/`."""
    found: dict[str, bytes] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif not child.name.startswith("."):
                found[prefix + child.name] = child.read_bytes()

    walk(static_root(), "")
    return found


def _inline_text(text: str) -> str:
    # Inside an inline <script>, "</" could end the element early.
    return text.replace("</", "<\\/")


def offline_html(document: Mapping[str, Any]) -> str:
    """The page as one self-contained HTML file showing `document`."""
    html = static_file(INDEX).decode("utf-8")
    html = _STYLESHEET.sub(
        lambda m: f"<style>\n{static_file(m.group(1)).decode('utf-8')}</style>", html)
    html = _SCRIPT.sub(
        lambda m: f"<script>\n{_inline_text(static_file(m.group(1)).decode('utf-8'))}</script>",
        html)
    # Every "<" of the data is escaped, so no text in it can end or reopen a script element.
    data = json.dumps(document, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    if _DATA not in html:
        raise ValueError(f"{INDEX} has no replay-data element")
    return html.replace(_DATA, f'<script type="application/json" id="replay-data">{data}</script>')


__all__ = ["INDEX", "offline_html", "static_file", "static_files", "static_root"]
