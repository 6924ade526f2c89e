"""The web table as files: the page's static parts, and the whole page as one offline file.

The page lives in `static/` (package data); each installed game's renderer lives in its own
package (`GameBundle.renderer`), served as `games/<game>.js` and loaded by the page.
`offline_html` inlines its stylesheet, scripts and icon and embeds one replay document, so
the file opens from disk with no server and no network (`fiftyk replay HAND_ID --html
FILE`). Its Content-Security-Policy allows no inline code but its own: each inline script and
stylesheet is named by its SHA-256 hash.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from fiftyk_referee.service.core.bundles import bundle_named, installed

INDEX = "index.html"
_STYLESHEET = re.compile(r'<link rel="stylesheet" href="([\w./-]+)">')
_SCRIPT = re.compile(r'<script src="([\w./-]+)"></script>')
_ICON = re.compile(r'<link rel="icon" href="([\w./-]+)" type="([\w/+-]+)">')
_CSP = re.compile(r'(<meta http-equiv="Content-Security-Policy" content=")([^"]*)(">)')
ESCAPED_LT = "\\u003c"  # "<" inside the JSON data, as JSON writes it escaped
_DATA = '<script type="application/json" id="replay-data"></script>'


def static_root() -> Traversable:
    """The folder of the page's files."""
    return resources.files("fiftyk_referee.service.web").joinpath("static")


# Where index.html loads the games' renderers: replaced by one script element per game.
GAMES_MARKER = ("<!-- games: the installed games' renderers, one script each"
                " (service/web/page.py) -->")
_RENDERER = re.compile(r"games/([a-z][a-z0-9_]*)\.js")


def _renderer(game: str) -> Traversable | None:
    """The installed game's renderer (its bundle's `Renderer`), served as games/<game>.js."""
    bundle = bundle_named(game)
    if bundle is None or bundle.renderer is None:
        return None
    return resources.files(bundle.renderer.package).joinpath(bundle.renderer.file)


def _renderer_names() -> list[str]:
    return [name for name, bundle in sorted(installed().items()) if bundle.renderer is not None]


def _index(html: str) -> str:
    """The page with a script element for each installed game's renderer."""
    if GAMES_MARKER not in html:
        raise ValueError(f"{INDEX} has no place for the games' renderers")
    scripts = "\n".join(f'<script src="games/{name}.js"></script>' for name in _renderer_names())
    return html.replace(GAMES_MARKER, scripts)


def static_file(name: str) -> bytes:
    """One of the page's files by its path under `static/`, or an installed game's renderer
    (`games/<game>.js`); FileNotFoundError if absent."""
    game = _RENDERER.fullmatch(name)
    if game is not None:
        node = _renderer(game.group(1))
        if node is None or not node.is_file():
            raise FileNotFoundError(name)
        return node.read_bytes()
    node = static_root()
    for part in name.split("/"):
        node = node.joinpath(part)
    if not node.is_file():
        raise FileNotFoundError(name)
    if name == INDEX:
        return _index(node.read_text("utf-8")).encode("utf-8")
    return node.read_bytes()


def static_files() -> dict[str, bytes]:
    """Every file of the page, by its path under `static/` (and the installed games'
    renderers as `games/<game>.js`)."""
    found: dict[str, bytes] = {}

    def walk(node: Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, f"{prefix}{child.name}/")
            elif not child.name.startswith("."):
                found[prefix + child.name] = child.read_bytes()

    walk(static_root(), "")
    found[INDEX] = static_file(INDEX)
    for name in _renderer_names():
        found[f"games/{name}.js"] = static_file(f"games/{name}.js")
    return found


def _inline_text(text: str) -> str:
    # Inside an inline <script>, "</" could end the element early.
    return text.replace("</", "<\\/")


@dataclass(frozen=True, slots=True)
class InlinePage:
    """The page as one HTML document, and the CSP sources that allow its inline parts."""

    html: str
    script_sources: tuple[str, ...]  # 'sha256-...' of each inline script
    style_sources: tuple[str, ...]  # 'sha256-...' of each inline stylesheet


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def with_hashes(policy: str, scripts: Sequence[str], styles: Sequence[str]) -> str:
    """A Content-Security-Policy whose script-src and style-src also allow these hashes."""
    policy = policy.replace("script-src 'self'", " ".join(["script-src 'self'", *scripts]), 1)
    return policy.replace("style-src 'self'", " ".join(["style-src 'self'", *styles]), 1)


def inline_page(document: Mapping[str, Any] | None = None) -> InlinePage:
    """The page with its stylesheet and scripts inlined (one request instead of seven),
    showing `document` when one is given."""
    html = static_file(INDEX).decode("utf-8")
    scripts: list[str] = []
    styles: list[str] = []

    def style(match: re.Match[str]) -> str:
        body = f"\n{static_file(match.group(1)).decode('utf-8')}"
        styles.append(_csp_hash(body))
        return f"<style>{body}</style>"

    def script(match: re.Match[str]) -> str:
        body = f"\n{_inline_text(static_file(match.group(1)).decode('utf-8'))}"
        scripts.append(_csp_hash(body))
        return f"<script>{body}</script>"

    def icon(match: re.Match[str]) -> str:
        data = base64.b64encode(static_file(match.group(1))).decode("ascii")
        return f'<link rel="icon" href="data:{match.group(2)};base64,{data}">'

    html = _ICON.sub(icon, _SCRIPT.sub(script, _STYLESHEET.sub(style, html)))
    html = _CSP.sub(lambda m: m.group(1) + with_hashes(m.group(2), scripts, styles) + m.group(3),
                    html, count=1)
    if _DATA not in html:
        raise ValueError(f"{INDEX} has no replay-data element")
    if document is not None:
        # Every "<" of the data is escaped, so no text in it can end or reopen a script.
        data = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
        escaped = data.replace("<", ESCAPED_LT)
        html = html.replace(
            _DATA, f'<script type="application/json" id="replay-data">{escaped}</script>')
    return InlinePage(html, tuple(scripts), tuple(styles))


def offline_html(document: Mapping[str, Any]) -> str:
    """The page as one self-contained HTML file showing `document`."""
    return inline_page(document).html


__all__ = ["INDEX", "InlinePage", "inline_page", "offline_html", "static_file", "static_files",
           "static_root", "with_hashes"]
