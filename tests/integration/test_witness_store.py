"""Published checkpoints and kept cosignatures over a real event store (SQLite, PostgreSQL).

The application alone, hands of both games played by its turn clock: the checkpoint it
publishes is signed once per size, a stream replaying a table's history reads nothing more
once one covers its hands, and witnesses' cosignatures are kept as events — across a
reopened store and a second process, one per witness per size, only ever larger trees.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.errors import InvalidArgument, PermissionDenied
from fiftyk_referee.service.ops.config import parse_database_url
from fiftyk_referee.service.trust.signing import Signer
from fiftyk_referee.service.trust.witness import WitnessKeys, cosignature_body, public_key_line
from tests.integration.test_fairness import GAMES, SIGNER, StoreReads, open_table, play_hand

ALICE = Signer.from_text("a1" * 32)
BOB = Signer.from_text("b1" * 32)
WITNESSES = WitnessKeys.parse(f"{public_key_line('alice', ALICE.public)}\n"
                              f"{public_key_line('bob', BOB.public)}\n")


def cosign(app: Referee, signer: Signer = ALICE, size: int | None = None) -> str:
    """A cosignature of the app's latest checkpoint (or of its tree of `size` hands)."""
    checkpoint = app.ledger.published()
    if size is not None:
        checkpoint = app.ledger.checkpoint(size)
    return json.dumps(signer.sign(cosignature_body(checkpoint, datetime.now(UTC))))


class WitnessStoreCases:
    """The cases every backend must pass; subclasses provide `database_url`."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        raise NotImplementedError

    @pytest.fixture
    def open_app(self, database_url: str | None, tmp_path: Path
                 ) -> Iterator[Callable[[], Referee]]:
        opened: list[Referee] = []
        env = persistence_env(parse_database_url(database_url or "", tmp_path), pool_size=2,
                              cache_size=100)

        def open_app() -> Referee:
            app = Referee(env, signer=SIGNER, witnesses=WITNESSES)
            opened.append(app)
            return app

        yield open_app
        for app in opened:
            app.close()

    def test_the_published_checkpoint_is_signed_once_per_size_and_replays_read_nothing(
            self, open_app: Callable[[], Referee]) -> None:
        app = open_app()
        hands = []
        for game, preset, seats in GAMES:
            table_id = open_table(app, game, preset, seats)
            hands.append(play_hand(app, table_id))
        first = app.ledger.published()
        assert first["size"] == len(GAMES) and app.ledger.published() is first
        reads = StoreReads(app)
        for _ in range(20):  # a stream replaying the tables' history
            found = app.hands_checkpoint(hands, fresh=False)
            assert found is not None and found[0] is first
        assert reads.rows == 0
        checkpoint, indexes = app.hands_checkpoint(hands) or ({}, {})
        assert sorted(indexes.values()) == list(range(len(GAMES)))
        assert checkpoint["size"] == len(GAMES)

    def test_cosignatures_are_kept_once_per_size_and_survive_a_reopened_store(
            self, open_app: Callable[[], Referee]) -> None:
        app = open_app()
        table_id = open_table(app, *GAMES[0])
        first = play_hand(app, table_id)
        assert app.add_cosignature(cosign(app)) == ("alice", True)
        assert app.add_cosignature(cosign(app)) == ("alice", False)  # the same size again
        play_hand(app, table_id)
        larger = cosign(app)
        other = open_app()  # a second process on the same store
        assert other.add_cosignature(larger) == ("alice", True)
        assert app.add_cosignature(cosign(app, size=1)) == ("alice", False)  # smaller: kept
        assert other.add_cosignature(cosign(other, BOB, size=1)) == ("bob", True)
        reopened = open_app()
        kept = dict((name, c["size"]) for name, c in reopened.latest_cosignatures())
        assert kept == {"alice": 2, "bob": 1}
        evidence = reopened.export_evidence(first)
        assert [(c["witness"], c["cosignature"]["size"], len(c["consistency"]))
                for c in evidence["ledger"]["cosignatures"]] == [("alice", 2, 0),
                                                                 ("bob", 1, 1)]

    def test_a_cosignature_of_a_tree_the_store_does_not_hold_or_by_another_key_is_refused(
            self, open_app: Callable[[], Referee]) -> None:
        app = open_app()
        play_hand(app, open_table(app, *GAMES[1]))
        body = cosignature_body(app.ledger.published(), datetime.now(UTC))
        with pytest.raises(PermissionDenied) as denied:
            app.add_cosignature(json.dumps(Signer.from_text("c1" * 32).sign(body)))
        assert denied.value.reason == "UNKNOWN_WITNESS"
        for changed in ({"size": 2}, {"root": "00" * 32}):
            with pytest.raises(InvalidArgument) as refused:
                app.add_cosignature(json.dumps(ALICE.sign({**body, **changed})))
            assert refused.value.reason == "INVALID_COSIGNATURE"
        assert app.latest_cosignatures() == []


class TestSQLite(WitnessStoreCases):
    """SQLite in a temporary directory."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        return None


@pytest.mark.postgres
class TestPostgreSQL(WitnessStoreCases):
    """A fresh database of the throwaway PostgreSQL server."""

    @pytest.fixture
    def database_url(self, fresh_postgres_db: str) -> str | None:
        return fresh_postgres_db
