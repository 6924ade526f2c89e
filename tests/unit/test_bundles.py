"""Games as bundles: found through entry points, absent when not installed, owning their
reason codes and their docs (service/core/bundles.py)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2

from fiftyk_referee.domain import games as registry
from fiftyk_referee.domain.doudizhu.reasons import DoudizhuReason
from fiftyk_referee.domain.errors import GameReason, Reason, RuleError
from fiftyk_referee.domain.fiftyk.reasons import FiftykReason
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.service.core import bundles
from fiftyk_referee.service.core.bundles import ENTRY_POINT_GROUP, GameBundle
from fiftyk_referee.service.grpc.errors import GAME_KEY, rich_status, status_code_for
from fiftyk_referee.service.grpc.games import GenericEdge, edge_for

ROOT = Path(__file__).resolve().parents[2]
BUILT_IN = ("doudizhu", "fiftyk", "shengji")


@pytest.fixture
def only_shengji() -> Iterator[GameBundle]:
    """The registry with Shengji's bundle alone (the installed ones again afterwards)."""
    shengji = bundles.installed()["shengji"]
    bundles.install([shengji])
    try:
        yield shengji
    finally:
        bundles.install(bundles.entry_point_bundles())


def test_the_built_in_games_register_through_entry_points_like_any_other() -> None:
    found = bundles.entry_point_bundles()
    assert [bundle.name for bundle in found] == list(BUILT_IN)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = project["project"]["entry-points"][ENTRY_POINT_GROUP]
    assert declared == {name: f"fiftyk_referee.service.games.{name}.bundle:BUNDLE"
                        for name in BUILT_IN}
    assert sorted(registry.hosted()) == list(BUILT_IN)


def test_a_registry_with_one_bundle_hosts_that_game_and_refuses_the_other(
        only_shengji: GameBundle) -> None:
    assert registry.hosted() == {"shengji": only_shengji.game}
    assert registry.game_named("shengji") is only_shengji.game
    with pytest.raises(RuleError) as absent:
        registry.game_named("fiftyk")
    assert absent.value.reason == Reason.INVALID_RULESET
    assert "'fiftyk' (not installed); allowed: shengji" in absent.value.message
    # 五十K is the default game by its bundle's word: without it, none is.
    assert registry.default_game() == ""
    with pytest.raises(RuleError) as unnamed:
        registry.game_named("")
    assert unnamed.value.reason == Reason.INVALID_RULESET
    with pytest.raises(RuleError) as transcript:
        registry.game_of_transcript({"format": "fiftyk-transcript/1"})
    assert transcript.value.reason == Reason.INVALID_TRANSCRIPT
    assert isinstance(edge_for("fiftyk"), GenericEdge)  # no converters for an absent game
    assert list(bundles.legacy_rpcs()) == ["Declare", "Bury"]


def test_without_shengji_its_legacy_rpcs_are_claimed_by_no_game() -> None:
    fiftyk = bundles.installed()["fiftyk"]
    bundles.install([fiftyk])
    try:
        assert bundles.legacy_rpcs() == {}
        assert registry.default_game() == "fiftyk"
    finally:
        bundles.install(bundles.entry_point_bundles())


def test_two_default_games_or_a_games_reuse_of_a_core_code_are_refused() -> None:
    fiftyk = bundles.installed()["fiftyk"]

    class Stolen(GameReason, game="thief"):
        NOT_YOUR_TURN = "NOT_YOUR_TURN"

    thief = GameBundle(game=fiftyk.game, title="thief", reasons=Stolen)
    with pytest.raises(ValueError, match="reuses core reason codes"):
        bundles.install([thief])
    with pytest.raises(ValueError, match="two game bundles are named 'fiftyk'"):
        bundles.install([fiftyk, fiftyk])
    assert sorted(registry.hosted()) == list(BUILT_IN)  # a refused set changes nothing


def test_the_cores_reasons_name_no_games_own_code() -> None:
    core = {str(reason) for reason in Reason}
    for bundle in bundles.installed().values():
        assert core.isdisjoint(bundle.reason_codes()), bundle.name
    assert {str(r) for r in ShengjiReason} == set(bundles.installed()["shengji"].reason_codes())
    assert {str(r) for r in FiftykReason} == {"DOES_NOT_BEAT", "MUST_LEAD", "PLAYER_OUT"}


@pytest.mark.parametrize(("reason", "game"), [(ShengjiReason.WRONG_WINDOW, "shengji"),
                                              (FiftykReason.DOES_NOT_BEAT, "fiftyk"),
                                              (DoudizhuReason.BIDDING_OPEN, "doudizhu")])
def test_a_games_own_refusal_names_the_game_in_its_error_info(reason: Reason,
                                                              game: str) -> None:
    status = rich_status(RuleError(reason, "refused"))
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert (info.reason, dict(info.metadata)) == (str(reason), {GAME_KEY: game})
    assert status_code_for(RuleError(reason, "x")) == grpc.StatusCode.FAILED_PRECONDITION


def test_a_core_refusal_names_no_game() -> None:
    info = error_details_pb2.ErrorInfo()
    assert rich_status(RuleError(Reason.NOT_YOUR_TURN, "wait")).details[0].Unpack(info)
    assert GAME_KEY not in info.metadata


# -- the docs list each game's reasons from its bundle ----------------------------------------

TABLE_CODES = re.compile(r"`([A-Z][A-Z0-9_]+)`")


def _reason_table(page: str, heading: str) -> set[str]:
    """The codes in the first column of the table under `heading` of a docs page."""
    text = (ROOT / page).read_text(encoding="utf-8")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {code for row in rows for code in TABLE_CODES.findall(row.split("|")[1])}


@pytest.mark.parametrize("name", BUILT_IN)
def test_each_games_page_lists_the_reason_codes_of_its_bundle(name: str) -> None:
    bundle = bundles.installed()[name]
    assert bundle.docs_page.startswith("docs/")
    listed = _reason_table(bundle.docs_page, "## Reason codes")
    own = set(bundle.reason_codes())
    assert own <= listed, f"{bundle.docs_page} misses {sorted(own - listed)}"
    core = {str(reason) for reason in Reason}
    assert listed <= own | core, f"{bundle.docs_page} lists {sorted(listed - own - core)}"


def test_the_error_table_of_integrating_md_holds_the_core_codes_and_no_games() -> None:
    listed = _reason_table("docs/integrating.md", "## Errors")
    assert {str(reason) for reason in Reason} <= listed
    for bundle in bundles.installed().values():
        assert listed.isdisjoint(bundle.reason_codes()), bundle.name


@pytest.mark.parametrize(("target", "message"), [
    ("no_such_module_anywhere:BUNDLE", "the game bundle 'broken' (no_such_module_anywhere:BUNDLE)"
                                       " does not load"),
    ("json:dumps", "the entry point 'broken' (json:dumps) names a function, not a GameBundle"),
    ("fiftyk_referee.service.games.shengji.bundle:BUNDLE",
     "the entry point 'broken' names the game 'shengji'"),
])
def test_an_entry_point_that_names_no_bundle_of_its_game_is_refused_by_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, message: str) -> None:
    info = tmp_path / "broken_game-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-game\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nbroken = {target}\n",
                                           encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(RuntimeError) as refused:
        bundles.entry_point_bundles()
    assert message in str(refused.value)
