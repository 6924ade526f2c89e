"""A store written by version 0.1.0 still loads and answers as 0.1.0 answered.

`tests/integration/legacy/` holds a SQLite store written by 0.1.0 (how: its README) and the
answers 0.1.0 gave through the public API. The store is opened by today's server: every
table and hand must answer the same, and the hand 0.1.0 left in progress must play on.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict

from tests.e2e.harness import LiveServer, Seated, play_out, server_config

LEGACY = Path(__file__).parent.parent / "integration" / "legacy"
STORE = LEGACY / "store-0.1.0.sqlite.gz"
ANSWERS = LEGACY / "expected-0.1.0.json.gz"
PLAYERS = 4


def assert_answers(now: Any, then: Any, where: str = "") -> None:
    """`now` answers everything `then` did, the same way (fields added since are allowed)."""
    if isinstance(then, dict):
        assert isinstance(now, dict), where
        for key, value in then.items():
            assert key in now, f"{where}.{key} is gone"
            assert_answers(now[key], value, f"{where}.{key}")
    elif isinstance(then, list):
        assert isinstance(now, list) and len(now) == len(then), where
        for index, (item_now, item_then) in enumerate(zip(now, then, strict=True)):
            assert_answers(item_now, item_then, f"{where}[{index}]")
    else:
        assert now == then, where


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    """What 0.1.0 answered."""
    with gzip.open(ANSWERS, "rt", encoding="utf-8") as file:
        answers: dict[str, Any] = json.load(file)
    return answers


@pytest.fixture(scope="module")
def legacy_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Today's server on a copy of the 0.1.0 store."""
    folder = tmp_path_factory.mktemp("legacy")
    store = folder / "store.sqlite"
    with gzip.open(STORE, "rb") as source, store.open("wb") as target:
        shutil.copyfileobj(source, target)
    live = LiveServer(server_config(folder, database_url=str(store)))
    yield live
    live.stop()


def test_every_table_of_a_0_1_0_store_answers_as_before(
        legacy_server: LiveServer, expected: dict[str, Any]) -> None:
    audit = legacy_server.audit()
    for table_id, answer in expected["tables"].items():
        assert_answers(MessageToDict(audit.get_table(table_id)), answer["table"])
        assert_answers(MessageToDict(audit.scores(table_id)), answer["scores"])


def test_every_hand_of_a_0_1_0_store_exports_the_same_transcript(
        legacy_server: LiveServer, expected: dict[str, Any]) -> None:
    audit = legacy_server.audit()
    for hand_id, answer in expected["hands"].items():
        assert audit.export_transcript(hand_id) == answer["transcript"], hand_id
        assert len(audit.all_hand_events(hand_id)) == answer["events"], hand_id


def test_a_hand_left_in_progress_by_0_1_0_plays_to_its_end(
        legacy_server: LiveServer, expected: dict[str, Any]) -> None:
    live = expected["live"]
    tokens: list[str] = live["seat_tokens"]
    seated = Seated(live["table_id"], PLAYERS, tokens,
                    [legacy_server.client(token=token) for token in tokens],
                    legacy_server.platform())
    view = seated.platform.hand_view(seated.table_id, live["hand_id"])
    final, commands = play_out(seated, view, random.Random(3))
    assert commands > 0
    assert final.HasField("result") and final.result.places
    table = seated.platform.get_table(seated.table_id)
    assert table.hands_played == 1 and not table.HasField("current_hand_id")
