"""The distribution finds every package of domain/ and service/ under the one import root."""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_packages

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"fiftyk_referee.domain": ROOT / "domain", "fiftyk_referee.service": ROOT / "service"}


def _packages_in_the_tree() -> set[str]:
    found = {"fiftyk_referee"}
    for name, folder in FOLDERS.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder)
            found.add(".".join([name, *relative.parts]) if relative.parts else name)
    return found


def test_setuptools_finds_every_package_of_the_tree() -> None:
    # Found through fiftyk_referee/'s links, as the wheel and editable installs find them:
    # a new package (a new game's) needs no line in pyproject.toml.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    find = config["tool"]["setuptools"]["packages"]["find"]
    found = set(find_packages(where=str(ROOT / find["where"][0]), include=find["include"]))
    assert found == _packages_in_the_tree()


def test_the_import_root_links_the_top_level_folders() -> None:
    for link in ("domain", "service"):
        assert (ROOT / "fiftyk_referee" / link).is_symlink()
        assert (ROOT / "fiftyk_referee" / link).resolve() == (ROOT / link).resolve()
