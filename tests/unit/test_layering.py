"""The layering, checked over the import graph (grimp, the graph `lint-imports` reads).

pyproject.toml's contracts hold the service's layers (every module of service/, by its
folder, no indirect import allowed) and forbid every import cycle; `lint-imports` in
./scripts/test checks them. Here:

- each contract is shown failing on a deliberate violation, in a small package built in a
  temporary directory with the same contracts (a lower layer reaching a higher one through
  an import inside a function, a module outside every layer, a cycle hidden in functions);
- the games, as the entry points install them: no module outside a game's own packages
  reaches one, directly or through others, and no game reaches another. Games are found,
  not listed, so a new game is checked without anyone naming it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

import grimp
import pytest

from fiftyk_referee.service.core.bundles import ENTRY_POINT_GROUP

ROOT = "fiftyk_referee"
PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
LINT_TIMEOUT_SECONDS = 300


def game_packages() -> dict[str, set[str]]:
    """Each installed game -> its packages: its bundle's package and its rules' package."""
    games: dict[str, set[str]] = {}
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        bundle = entry.load()
        bundle_package = entry.module.rpartition(".")[0]
        rules_package = type(bundle.game).__module__.rpartition(".")[0]
        games[entry.name] = {bundle_package, rules_package}
    return games


def reaching(graph: grimp.ImportGraph, packages: Iterable[str],
             outside: Iterable[str]) -> list[tuple[str, ...]]:
    """Import chains from a module in none of `outside` into one of `packages`."""
    packages, outside = set(packages), set(outside)

    def inside(module: str, roots: set[str]) -> bool:
        return any(module == root or module.startswith(root + ".") for root in roots)

    chains = []
    for package in sorted(packages):
        importers = graph.find_downstream_modules(package, as_package=True)
        for importer in sorted(importers):
            if not inside(importer, outside):
                chain = graph.find_shortest_chain(importer=importer, imported=package,
                                                  as_packages=True)
                chains.append(tuple(chain or (importer, package)))
    return chains


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(ROOT, cache_dir=None)


def test_the_games_are_found_through_the_entry_points() -> None:
    games = game_packages()
    assert games, "no game is installed through the entry points"
    for packages in games.values():
        assert all(package.startswith(ROOT + ".") for package in packages)


def test_no_module_outside_a_game_reaches_a_game(graph: grimp.ImportGraph) -> None:
    games = game_packages()
    every_game = set().union(*games.values())
    assert reaching(graph, every_game, outside=every_game) == []


def test_no_game_reaches_another(graph: grimp.ImportGraph) -> None:
    games = game_packages()
    for name, packages in games.items():
        for other, theirs in games.items():
            if other == name:
                continue
            for package in packages:
                for their_package in theirs:
                    assert not graph.chain_exists(importer=package, imported=their_package,
                                                  as_packages=True), (name, other)


def test_the_game_check_fails_on_a_core_module_that_reaches_a_game_through_another() -> None:
    fake = grimp.ImportGraph()
    for module in ("app", "app.core", "app.core.use_cases", "app.core.helpers",
                   "app.games", "app.games.chess", "app.games.chess.rules"):
        fake.add_module(module)
    fake.add_import(importer="app.core.use_cases", imported="app.core.helpers")
    fake.add_import(importer="app.core.helpers", imported="app.games.chess.rules")
    chains = reaching(fake, {"app.games.chess"}, outside={"app.games.chess"})
    assert ("app.core.use_cases", "app.core.helpers", "app.games.chess.rules") in chains


# -- the contracts of pyproject.toml, on a package built to break them ------------------------

SERVICE_LAYERS = ("games", "cli", "web", "webhooks", "grpc", "platform", "core", "ops", "trust")


def fake_tree(base: Path, root: str, files: dict[str, str]) -> None:
    """A package `root` with service/'s folders (and server.py, errors.py), plus `files`."""
    package = base / root
    (package / "domain").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "domain" / "__init__.py").write_text("")
    (package / "service").mkdir()
    (package / "service" / "__init__.py").write_text("")
    for layer in SERVICE_LAYERS:
        (package / "service" / layer).mkdir()
        (package / "service" / layer / "__init__.py").write_text("")
    (package / "service" / "server.py").write_text("")
    (package / "service" / "errors.py").write_text("")
    for path, text in files.items():
        (package / path).write_text(text)


def lint(base: Path, root: str) -> subprocess.CompletedProcess[str]:
    """`lint-imports` with pyproject.toml's contracts, over package `root` in `base`."""
    settings = tomllib.loads(PYPROJECT.read_text())["tool"]["importlinter"]
    lines = [f'[tool.importlinter]\nroot_package = "{root}"\n'
             f'include_external_packages = {str(settings["include_external_packages"]).lower()}\n']
    for contract in settings["contracts"]:
        lines.append("[[tool.importlinter.contracts]]")
        # JSON's strings, booleans and arrays of strings are TOML's too.
        lines += [f"{key} = {json.dumps(_rooted(value, root))}" for key, value in contract.items()]
        lines.append("")
    config = base / "contracts.toml"
    config.write_text("\n".join(lines))
    environment = {**os.environ, "PYTHONPATH": str(base)}
    return subprocess.run([str(LINT_IMPORTS), str(config), "--no-cache"],
                          capture_output=True, text=True, env=environment, cwd=base,
                          timeout=LINT_TIMEOUT_SECONDS, check=False)


def _rooted(value: object, root: str) -> object:
    """A contract's value with this package's root for the real one."""
    if isinstance(value, str):
        return value.replace(ROOT + ".", root + ".") if value != ROOT else root
    if isinstance(value, list):
        return [_rooted(item, root) for item in value]
    return value


def test_the_contracts_keep_a_package_that_follows_them(tmp_path: Path) -> None:
    fake_tree(tmp_path, "layered", {
        "service/grpc/servicer.py": "from layered.service.core import use_cases\n",
        "service/core/use_cases.py": "from layered.service.trust import ledger\n",
        "service/trust/ledger.py": "",
    })
    done = lint(tmp_path, "layered")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("files", "broken"), [
    pytest.param({  # the core reaches the gRPC edge, through a helper, inside a function
        "service/core/use_cases.py": "def run():\n    from layered.service.core import helper\n",
        "service/core/helper.py": "def convert():\n    import layered.service.grpc.convert\n",
        "service/grpc/convert.py": "",
    }, "The service's layers", id="a-lower-layer-reaches-a-higher-one-indirectly"),
    pytest.param({  # a new top-level module of service/ that no layer names
        "service/newcomer.py": "",
    }, "The service's layers", id="a-module-outside-every-layer"),
    pytest.param({  # two modules of one folder import each other inside functions
        "service/grpc/convert.py": "def a():\n    from layered.service.grpc import events\n",
        "service/grpc/events.py": "def b():\n    from layered.service.grpc import convert\n",
    }, "No import cycles", id="a-cycle-hidden-in-functions"),
])
def test_each_contract_fails_on_its_violation(tmp_path: Path, files: dict[str, str],
                                              broken: str) -> None:
    fake_tree(tmp_path, "layered", files)
    done = lint(tmp_path, "layered")
    assert done.returncode != 0
    assert f"{broken}" in done.stdout
    assert "BROKEN" in done.stdout.split(broken, 1)[1].splitlines()[0], done.stdout
