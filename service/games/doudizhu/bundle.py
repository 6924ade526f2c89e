"""斗地主's bundle: the object its entry point names (`fiftyk_referee.games`,
pyproject.toml)."""

from __future__ import annotations

from fiftyk_referee.domain import doudizhu
from fiftyk_referee.domain.doudizhu.reasons import DoudizhuReason
from fiftyk_referee.service.core.bundles import GameBundle, Renderer, loaded

BUNDLE = GameBundle(
    game=doudizhu.GAME,
    title="斗地主",
    docs_page="docs/doudizhu.md",
    reasons=DoudizhuReason,
    # Newer than the 0.2 API: no legacy RPCs; its bids and plays go through `Act`.
    edge=loaded("fiftyk_referee.service.games.doudizhu.edge:EDGE"),
    proto=loaded("fiftyk_referee.service.games.doudizhu.doudizhu_pb2:DESCRIPTOR"),
    cli=loaded("fiftyk_referee.service.games.doudizhu.cli:DOUDIZHU_CLI"),
    rules_commands=loaded(
        "fiftyk_referee.service.games.doudizhu.rules_cli:add_rules_commands"),
    renderer=Renderer("fiftyk_referee.service.games.doudizhu"),
)

__all__ = ["BUNDLE"]
