"""The installed games, each one a bundle found through Python entry points.

A game is one package that brings everything it needs: its rules (`domain/<game>/`), its
edge (`service/games/<game>/`: gRPC converters, command-line text and demo, web renderer),
its own reason codes and its docs page. Its `bundle.py` holds a `GameBundle`, which the
package names in the entry-point group `fiftyk_referee.games`:

    [project.entry-points."fiftyk_referee.games"]
    mygame = "mygame_package.bundle:BUNDLE"

The built-in games register exactly so (pyproject.toml), as a third-party game would; no
module, list or page of the core names a game. A game that is not installed is absent: the
referee refuses it as an unknown game. The parts of a bundle that belong to an edge (its
converters, its command-line side) are loaded by that edge when it first needs them, so
loading the bundles imports only the games' rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import import_module, metadata
from typing import Any

from fiftyk_referee.domain import games as registry
from fiftyk_referee.domain.errors import GameReason, Reason
from fiftyk_referee.domain.game import Game

ENTRY_POINT_GROUP = "fiftyk_referee.games"


@dataclass(frozen=True, slots=True)
class LegacyRpc:
    """An RPC of an earlier API version that stands for one of a game's action kinds (an RPC
    named after the action). The edge answers it as `Act` with that kind."""

    rpc: str  # the method's name in the Referee service
    kind: str  # the action kind it takes
    value_field: str = ""  # the request's optional field carried as the action's value
    cards_required: bool = False  # whether the request must name cards


@dataclass(frozen=True, slots=True)
class Renderer:
    """A game's web renderer: a JavaScript file in its package (served as
    `games/<game>.js`, loaded by the page after `cards.js`, before `app.js`)."""

    package: str
    file: str = "renderer.js"


@dataclass(frozen=True, slots=True)
class GameBundle:
    """Everything the referee needs of one game, found through its entry point."""

    game: Game  # its rules: the game protocol's object (domain/game.py)
    title: str  # its name for people (`fiftyk --help`, the web page)
    docs_page: str = ""  # its page, repository-relative, with a `## Reason codes` section
    reasons: type[GameReason] | None = None  # its own reason codes
    # 0.2 RPCs that stand for its action kinds: answered as `Act`.
    legacy_rpcs: tuple[LegacyRpc, ...] = ()
    # Its converters at the gRPC edge (an `EdgeGame` of service/grpc/games/), loaded when
    # the edge first needs them; without any, its values travel as JSON.
    edge: Callable[[], Any] | None = None
    # Its own proto file's descriptor (fiftyk.games.<game>.v1: the messages of the Any
    # payloads; its generated module beside its edge), loaded when first asked for: server
    # reflection serves it, clients decode the payloads with it. None: no messages of its own.
    proto: Callable[[], Any] | None = None
    # Its side at the command line (a `CliGame` of service/cli/games.py), loaded likewise.
    cli: Callable[[], Any] | None = None
    renderer: Renderer | None = None  # its web renderer
    # Its own `fiftyk rules` commands: a function adding them to the command's subparsers.
    rules_commands: Callable[[], Any] | None = None
    # The game of data that names none (0.1's tables, commands and transcripts).
    default: bool = False
    # Topics its aggregates were stored under by earlier versions (`module:Class`), resolved
    # to its classes of today (service/core/topics.py).
    legacy_topics: Mapping[str, type] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The game's name (its tables', transcripts' and events' `game`)."""
        return self.game.name

    def reason_codes(self) -> tuple[str, ...]:
        """Its own reason codes."""
        return tuple(str(reason) for reason in self.reasons) if self.reasons else ()


def loaded(target: str) -> Callable[[], Any]:
    """A loader of `module:attribute`, imported when first called (a bundle's edge parts)."""

    def load() -> Any:
        module, _, attribute = target.partition(":")
        return getattr(import_module(module), attribute)

    return load


_installed: dict[str, GameBundle] = {}
_legacy: dict[str, LegacyRpc] = {}
_loaded: list[bool] = []  # True once installed
_loading: list[bool] = []  # True while the entry points load


def entry_point_bundles() -> list[GameBundle]:
    """The bundles the installed packages name in `fiftyk_referee.games`, by name."""
    found: list[GameBundle] = []
    for entry in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            bundle = entry.load()
        except Exception as error:
            raise RuntimeError(f"the game bundle {entry.name!r} ({entry.value}) does not"
                               f" load: {error}") from error
        if not isinstance(bundle, GameBundle):
            raise RuntimeError(f"the entry point {entry.name!r} ({entry.value}) names a"
                               f" {type(bundle).__name__}, not a GameBundle")
        if bundle.name != entry.name:
            raise RuntimeError(f"the entry point {entry.name!r} names the game"
                               f" {bundle.name!r}")
        found.append(bundle)
    return found


def install(bundles: Iterable[GameBundle]) -> None:
    """Host exactly these games (the server and the command line host the entry points';
    a test may host others)."""
    chosen: dict[str, GameBundle] = {}
    core = {str(reason) for reason in Reason}
    for bundle in bundles:
        if bundle.name in chosen:
            raise ValueError(f"two game bundles are named {bundle.name!r}")
        # Two games may use one code (ErrorInfo.metadata names the game); the core's are
        # the core's.
        taken = core.intersection(bundle.reason_codes())
        if taken:
            raise ValueError(f"{bundle.name!r} reuses core reason codes: {sorted(taken)}")
        chosen[bundle.name] = bundle
    defaults = [bundle.name for bundle in chosen.values() if bundle.default]
    if len(defaults) > 1:
        raise ValueError(f"more than one default game: {', '.join(defaults)}")
    routes: dict[str, LegacyRpc] = {}
    for bundle in chosen.values():
        for route in bundle.legacy_rpcs:
            if routes.setdefault(route.rpc, route) != route:
                raise ValueError(f"the RPC {route.rpc} stands for two different actions")
    registry.host_games((bundle.game for bundle in chosen.values()),
                        default=defaults[0] if defaults else "",
                        reasons={code for bundle in chosen.values()
                                 for code in bundle.reason_codes()})
    _installed.clear()
    _installed.update(chosen)
    _legacy.clear()
    _legacy.update(routes)
    _loaded[:] = [True]


def _load() -> None:
    if _loaded or _loading:
        return
    _loading.append(True)
    try:
        install(entry_point_bundles())
    finally:
        _loading.clear()


registry.set_loader(_load)


def installed() -> Mapping[str, GameBundle]:
    """Every installed game's bundle, by name."""
    _load()
    return _installed


def bundle_named(name: str) -> GameBundle | None:
    """The installed bundle of the game called `name` (None when it is not installed)."""
    return installed().get(name)


def legacy_rpcs() -> Mapping[str, LegacyRpc]:
    """Every installed game's legacy RPCs, by method name (a name two games claim for
    different actions is refused when they are installed together)."""
    _load()
    return _legacy


__all__ = ["ENTRY_POINT_GROUP", "GameBundle", "LegacyRpc", "Renderer", "bundle_named",
           "entry_point_bundles", "install", "installed", "legacy_rpcs", "loaded"]
