"""五十K's bundle: the object its entry point names (`fiftyk_referee.games`, pyproject.toml)."""

from __future__ import annotations

from fiftyk_referee.domain import fiftyk
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.reasons import FiftykReason
from fiftyk_referee.service.core.bundles import GameBundle, Renderer, loaded

BUNDLE = GameBundle(
    game=fiftyk.GAME,
    title="五十K",
    docs_page="docs/rules.md",
    reasons=FiftykReason,
    edge=loaded("fiftyk_referee.service.games.fiftyk.edge:EDGE"),
    proto=loaded("fiftyk_referee.service.games.fiftyk.fiftyk_pb2:DESCRIPTOR"),
    cli=loaded("fiftyk_referee.service.games.fiftyk.cli:FIFTYK_CLI"),
    rules_commands=loaded("fiftyk_referee.service.games.fiftyk.rules_cli:add_rules_commands"),
    renderer=Renderer("fiftyk_referee.service.games.fiftyk"),
    default=True,  # the tables, commands and transcripts of 0.1 are 五十K's
    legacy_topics={"domain.hand:Hand": Hand},  # 0.1 kept the hand at the top level
)

__all__ = ["BUNDLE"]
