"""Shengji's bundle: the object its entry point names (`fiftyk_referee.games`,
pyproject.toml)."""

from __future__ import annotations

from fiftyk_referee.domain import shengji
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.service.core.bundles import GameBundle, LegacyRpc, Renderer, loaded

BUNDLE = GameBundle(
    game=shengji.GAME,
    title="升级/拖拉机",
    docs_page="docs/shengji.md",
    reasons=ShengjiReason,
    # 0.2's RPCs for its two phases before play; `Act` takes them as "declare" and "bury".
    legacy_rpcs=(LegacyRpc("Declare", "declare", value_field="window"),
                 LegacyRpc("Bury", "bury", cards_required=True)),
    edge=loaded("fiftyk_referee.service.games.shengji.edge:EDGE"),
    proto=loaded("fiftyk_referee.service.games.shengji.shengji_pb2:DESCRIPTOR"),
    cli=loaded("fiftyk_referee.service.games.shengji.cli:SHENGJI_CLI"),
    renderer=Renderer("fiftyk_referee.service.games.shengji"),
)

__all__ = ["BUNDLE"]
