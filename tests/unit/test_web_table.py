"""The web table without a browser: the replay document, the offline page, transcripts
replayed into public events, and one renderer per registered game."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
from pathlib import Path

import pytest

from fiftyk_referee.domain.deal import ALGORITHM, commitment
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.shengji import GAME as SHENGJI
from fiftyk_referee.service.core.bundles import installed
from fiftyk_referee.service.web.gateway import (
    MAX_JSON_DEPTH,
    SECURITY_HEADERS,
    json_depth,
    parse_json_body,
    transcript_document,
)
from fiftyk_referee.service.web.page import (
    INDEX,
    inline_page,
    offline_html,
    static_file,
    static_files,
    with_hashes,
)
from tests.unit.shengji.test_playouts import step

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = json.loads((ROOT / "docs" / "examples" / "transcript-qq3.json").read_text())


def _shengji_transcript(seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    hand = SHENGJI.deal(table_id="t", number=1, rules=SHENGJI.rules("tractor"), players=4,
                        dealer=0, seat_players=[None] * 4, carry={}, deck=None,
                        seed=rng.randbytes(32))
    while not hand.is_over:
        step(hand, rng)
    return SHENGJI.export_transcript(hand)


def test_a_transcript_becomes_its_public_events_every_card_shown() -> None:
    document = transcript_document(EXAMPLE)
    names = [e["name"] for e in document["events"]]
    assert document["format"] == "fiftyk-replay/1" and document["game"] == "fiftyk"
    assert names[0] == "fiftyk.hand_dealt" and names[-1] == "fiftyk.hand_ended"
    assert [e["aggregate_version"] for e in document["events"]] == list(range(1, len(names) + 1))
    dealt = document["events"][0]["fiftyk_hand_dealt"]
    assert dealt["deck"] == EXAMPLE["deck"]
    assert all(h["cards"] for h in dealt["hands"])
    assert document["result"]["status"] == "completed"
    # Seat 0's zero values are written out: the page reads every field it draws.
    assert document["events"][0]["fiftyk_hand_dealt"]["hands"][0]["seat"] == 0


def test_a_shengji_transcript_replays_through_its_own_game() -> None:
    transcript = _shengji_transcript(7)
    document = transcript_document(transcript)
    names = [e["name"] for e in document["events"]]
    assert document["game"] == "shengji"
    assert names[0] == "shengji.hand_dealt" and names[-1] == "shengji.hand_ended"
    assert "shengji.kitty_buried" in names and "shengji.trick_won" in names


def test_an_unreadable_transcript_is_refused_with_its_reason() -> None:
    with pytest.raises(RuleError) as refused:
        transcript_document({"format": "fiftyk-transcript/1", "game": "chess"})
    assert refused.value.reason.value == "INVALID_TRANSCRIPT"


def test_a_finished_hands_transcript_carries_its_deal_inputs() -> None:
    transcript = _shengji_transcript(11)
    deal = transcript["deal"]
    assert isinstance(deal, dict) and deal["algorithm"] == ALGORITHM
    assert deal["commitment"] == commitment(bytes.fromhex(deal["seed"]), transcript["deck"])


def test_the_offline_page_inlines_everything_and_embeds_the_hand() -> None:
    document = transcript_document(EXAMPLE)
    document["hand_id"] = "</script><script>alert(1)</script>"
    html = offline_html(document)
    assert not re.search(r'<script src=|<link rel="stylesheet"', html)
    assert not re.search(r'(src|href)="https?:', html)
    assert html.count("</script>") == html.count("<script")  # the data cannot end its element
    assert "<script>alert" not in html
    data = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html,
                     re.S)
    assert data is not None
    assert json.loads(data.group(1))["hand_id"] == document["hand_id"]
    for name in static_files():
        if name.endswith(".js"):
            assert static_file(name).decode().splitlines()[0] in html


def test_every_installed_game_has_a_renderer_the_page_loads() -> None:
    index = static_file(INDEX).decode()
    shipped = sorted(installed())
    assert shipped == ["doudizhu", "fiftyk", "shengji"]
    for name in shipped:
        script = f"games/{name}.js"
        assert script in static_files(), f"no renderer for {name}"
        assert f'<script src="{script}">' in index
        assert f'FK.registerGame("{name}"' in static_file(script).decode()


def _inline_hashes(html: str, tag: str) -> set[str]:
    found = set()
    for body in re.findall(rf"<{tag}>(.*?)</{tag}>", html, re.S):
        digest = hashlib.sha256(body.encode("utf-8")).digest()
        found.add(f"'sha256-{base64.b64encode(digest).decode('ascii')}'")
    return found


def test_the_offline_pages_policy_allows_its_own_inline_code_by_hash_and_nothing_inline_else(
        ) -> None:
    html = offline_html(transcript_document(EXAMPLE))
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
    assert policy is not None
    directives = {d.split()[0]: d.split()[1:] for d in policy.group(1).split(";") if d.strip()}
    assert "'unsafe-inline'" not in policy.group(1)
    scripts, styles = _inline_hashes(html, "script"), _inline_hashes(html, "style")
    assert scripts and styles
    assert set(directives["script-src"]) == {"'self'", *scripts}
    assert set(directives["style-src"]) == {"'self'", *styles}
    # The data element is not code: it is no <script> without a type, so it needs no hash.
    assert '<script type="application/json" id="replay-data">' in html


def test_the_served_pages_header_policy_names_the_same_hashes() -> None:
    page = inline_page()
    policy = with_hashes(SECURITY_HEADERS["Content-Security-Policy"], page.script_sources,
                         page.style_sources)
    assert "'unsafe-inline'" not in policy
    assert all(source in policy for source in (*page.script_sources, *page.style_sources))


def test_json_nesting_is_measured_without_recursion_and_bounded() -> None:
    assert json_depth(1) == 0 and json_depth([]) == 1 and json_depth({"a": [{"b": []}]}) == 4
    deep = "[" * 200_000 + "]" * 200_000
    with pytest.raises(ValueError, match=f"deeper than {MAX_JSON_DEPTH} levels"):
        parse_json_body(deep.encode())
    nested: list[object] = []
    for _ in range(MAX_JSON_DEPTH - 1):
        nested = [nested]
    assert parse_json_body(json.dumps(nested).encode()) == nested
    with pytest.raises(ValueError, match="deeper"):
        parse_json_body(json.dumps([nested]).encode())
    with pytest.raises(ValueError, match="not JSON"):
        parse_json_body(b"\xff{")
