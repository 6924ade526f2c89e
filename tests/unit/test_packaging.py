"""The distribution lists every package of domain/ and service/ under the one import root."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {"fiftyk_referee.domain": ROOT / "domain", "fiftyk_referee.service": ROOT / "service"}


def _packages_in_the_tree() -> set[str]:
    found = {"fiftyk_referee"}
    for name, folder in FOLDERS.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder)
            found.add(".".join([name, *relative.parts]) if relative.parts else name)
    return found


def test_every_package_of_the_tree_is_listed_for_the_wheel() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    assert listed == _packages_in_the_tree()


def test_the_import_root_maps_the_top_level_folders() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = config["tool"]["setuptools"]["package-dir"]
    assert mapping["fiftyk_referee.domain"] == "domain"
    assert mapping["fiftyk_referee.service"] == "service"
    for link in ("domain", "service"):
        assert (ROOT / "fiftyk_referee" / link).resolve() == (ROOT / link).resolve()
