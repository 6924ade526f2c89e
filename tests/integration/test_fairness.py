"""Evidence and tampering over a real event store: the same cases on SQLite and PostgreSQL.

Hands of every hosted game are played to the end through the application (the turn clock's own
decisions play every seat), exported as signed evidence and verified; then the database is
tampered with by hand — an event's payload edited, an event deleted, two reordered, a
finished hand replaced by a consistently re-chained one, the ledger rolled back — and the
offline verifier, the VerifyHand use case and the ledger audit each catch it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest

from fiftyk_referee.domain.chain import GENESIS, event_hash, seal, unseal
from fiftyk_referee.domain.game import PASS, Action
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.errors import DataLoss
from fiftyk_referee.service.ops.config import SQLITE_FILE_NAME, parse_database_url
from fiftyk_referee.service.trust.signing import Signer
from fiftyk_referee.service.trust.verifier import OK, Report, verify

# game, preset, seats: a hand of each game the referee hosts.
GAMES = [("fiftyk", "qq3", 3), ("shengji", "tractor", 4), ("doudizhu", "rob", 3)]
CLOCK_SECONDS = 30  # the tables run a turn clock so that timeouts can play every seat
LATER = timedelta(days=1)
MAX_STEPS = 2_000
SIGNER = Signer.from_text("11" * 32)


def play_hand(app: Referee, table_id: str) -> str:
    """Deal the table's next hand and let the referee's timeouts play it to the end; a seat
    that may speak up with an action naming neither cards nor a value (斗地主's `call` and
    `rob`) does so first, so that a hand whose clock would pass every bid is played out."""
    hand_id = app.start_hand(table_id).hand_id
    assert hand_id is not None
    specs = {spec.kind: spec for spec in app.get_table(table_id).game.action_kinds}
    for _ in range(MAX_STEPS):
        hand = app.get_hand(hand_id)
        if hand.is_over:
            return hand_id
        seat = hand.to_act or 0
        kinds = app.legal_actions(table_id, hand_id, seat)[0].kinds
        spoken = sorted(k for k in kinds if k != PASS
                        and not specs[k].takes_cards and not specs[k].takes_value)
        if spoken:
            app.act(table_id, hand_id, seat, Action(spoken[0]))
        else:
            app.time_out(table_id, hand_id, seat, datetime.now(UTC) + LATER)
    raise AssertionError("the hand did not end")


def open_table(app: Referee, game: str, preset: str, seats: int) -> str:
    """A full table of `game` with a turn clock."""
    table_id = app.create_table(preset, {"turn_timeout": CLOCK_SECONDS}, seats,
                                game=game).table_id
    for seat in range(seats):
        app.join_table(table_id, f"{game}-player-{seat}", seat)
    return table_id


def failed(report: Report) -> str:
    """The failed check's name (fails the test when every check passed)."""
    failure = report.failure
    assert failure is not None, "\n".join(str(line) for line in report.lines)
    return failure.check


class Database:
    """Raw SQL on the store's events table, as someone with the database's password."""

    def __init__(self, url: str | None, tmp_path: Path) -> None:
        self.url = url
        self.path = tmp_path / SQLITE_FILE_NAME
        # The library names PostgreSQL's table after the application; SQLite's is fixed.
        self.table = f"{Referee.name.lower()}_events" if url else "stored_events"

    def rows(self, stream: str) -> list[tuple[int, str, bytes]]:
        """(version, topic, state) of a stream, in version order."""
        return [(v, t, bytes(s)) for v, t, s in self._query(
            "SELECT originator_version, topic, state FROM stored_events"
            " WHERE originator_id = {} ORDER BY originator_version", (self._id(stream),))]

    def set_state(self, stream: str, version: int, state: bytes) -> None:
        """Overwrite one event's stored state."""
        self._execute("UPDATE stored_events SET state = {} WHERE originator_id = {}"
                      " AND originator_version = {}", (state, self._id(stream), version))

    def set_topic(self, stream: str, version: int, topic: str) -> None:
        """Overwrite one event's stored topic."""
        self._execute("UPDATE stored_events SET topic = {} WHERE originator_id = {}"
                      " AND originator_version = {}", (topic, self._id(stream), version))

    def delete(self, stream: str, versions: range | None = None) -> None:
        """Delete a stream's events (those versions, or all)."""
        if versions is None:
            self._execute("DELETE FROM stored_events WHERE originator_id = {}",
                          (self._id(stream),))
            return
        for version in versions:
            self._execute("DELETE FROM stored_events WHERE originator_id = {}"
                          " AND originator_version = {}", (self._id(stream), version))

    def _id(self, stream: str) -> Any:
        return UUID(stream) if self.url else UUID(stream).hex  # SQLite stores it as hex

    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        if self.url:
            with psycopg.connect(self.url) as conn:
                return list(conn.execute(self._sql(sql, "%s", params), params))
        with sqlite3.connect(self.path) as conn:
            return list(conn.execute(self._sql(sql, "?", params), params))

    def _execute(self, sql: str, params: tuple[Any, ...]) -> None:
        if self.url:
            with psycopg.connect(self.url) as conn:
                conn.execute(self._sql(sql, "%s", params), params)
            return
        with sqlite3.connect(self.path) as conn:
            conn.execute(self._sql(sql, "?", params), params)

    def _sql(self, template: str, marker: str, params: tuple[Any, ...]) -> Any:
        """The statement with this driver's parameter markers and the events table's name."""
        return template.replace("stored_events", self.table).format(*[marker] * len(params))


class StoreReads:
    """Counts the rows an application reads from the store, the feed's (the ledger's
    source) and the streams': the real recorder, its reads counted."""

    def __init__(self, app: Referee) -> None:
        self.rows = 0
        for name in ("select_notifications", "select_events"):
            setattr(app.recorder, name, self._counted(getattr(app.recorder, name)))

    def _counted(self, select: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            found = select(*args, **kwargs)
            self.rows += len(found)
            return found

        return counted

    def during(self, call: Callable[[], object]) -> int:
        """The rows read during one call."""
        before = self.rows
        call()
        return self.rows - before


def rechain(rows: list[tuple[int, str, bytes]], stream: str) -> list[bytes]:
    """The stored states of a stream sealed again from scratch (a forger's consistent chain)."""
    prev, sealed = GENESIS, []
    for version, topic, state in rows:
        plain = unseal(state)[1]
        own = event_hash(prev, stream, version, topic, plain)
        sealed.append(seal(prev, own, plain))
        prev = own
    return sealed


class FairnessCases:
    """The cases every backend must pass; subclasses provide `database_url`."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        raise NotImplementedError

    @pytest.fixture
    def database(self, database_url: str | None, tmp_path: Path) -> Database:
        return Database(database_url, tmp_path)

    @pytest.fixture
    def open_app(self, database_url: str | None, tmp_path: Path
                 ) -> Iterator[Callable[[], Referee]]:
        opened: list[Referee] = []
        env = persistence_env(parse_database_url(database_url or "", tmp_path), pool_size=2,
                              cache_size=100)

        def open_app() -> Referee:
            app = Referee(env, signer=SIGNER)
            opened.append(app)
            return app

        yield open_app
        for app in opened:
            app.close()

    @pytest.fixture(params=GAMES, ids=[game for game, _, _ in GAMES])
    def played(self, request: pytest.FixtureRequest, open_app: Callable[[], Referee]
               ) -> tuple[Referee, str, str]:
        """(app, table id, hand id) of one finished hand."""
        game, preset, seats = request.param
        app = open_app()
        table_id = open_table(app, game, preset, seats)
        return app, table_id, play_hand(app, table_id)

    def test_a_finished_hand_verifies_offline_and_through_the_audit(
            self, played: tuple[Referee, str, str]) -> None:
        app, _, hand_id = played
        evidence = json.loads(json.dumps(app.export_evidence(hand_id)))
        report = verify(evidence, trusted=[SIGNER.public])
        assert report.ok, "\n".join(str(line) for line in report.lines)
        assert [line.check for line in report.lines if line.status == OK] == [
            "format", "signature", "chain", "deal", "commitment", "deck", "transcript deal",
            "ledger", "re-rule"]
        audit = app.verify_hand(hand_id)
        assert audit.ok
        assert [line.check for line in audit.lines][-2:] == ["table link", "ledger history"]
        assert evidence["chain"]["chained"] == len(evidence["events"])

    def test_an_edited_payload_is_caught(self, played: tuple[Referee, str, str],
                                         database: Database,
                                         open_app: Callable[[], Referee]) -> None:
        app, _, hand_id = played
        version, _, state = database.rows(hand_id)[2]
        edited = state.replace(b'"_data_":"20', b'"_data_":"19', 1)
        assert edited != state
        database.set_state(hand_id, version, edited)
        fresh = open_app()
        assert failed(verify(fresh.export_evidence(hand_id))) == "chain"
        assert failed(fresh.verify_hand(hand_id)) == "chain"
        assert failed(app.verify_hand(hand_id)) == "chain"  # the cache does not hide it

    def test_a_deleted_event_is_caught(self, played: tuple[Referee, str, str],
                                       database: Database,
                                       open_app: Callable[[], Referee]) -> None:
        _, _, hand_id = played
        database.delete(hand_id, range(4, 5))
        fresh = open_app()
        report = fresh.verify_hand(hand_id)
        assert failed(report) == "chain" and "version 5 where version 4" in report.lines[-1].detail
        with pytest.raises(DataLoss):  # the stored events no longer replay
            fresh.export_evidence(hand_id)

    def test_two_reordered_events_are_caught(self, played: tuple[Referee, str, str],
                                             database: Database,
                                             open_app: Callable[[], Referee]) -> None:
        _, _, hand_id = played
        rows = database.rows(hand_id)
        (v1, t1, s1), (v2, t2, s2) = rows[5], rows[6]
        database.set_state(hand_id, v1, s2)
        database.set_topic(hand_id, v1, t2)
        database.set_state(hand_id, v2, s1)
        database.set_topic(hand_id, v2, t1)
        assert failed(open_app().verify_hand(hand_id)) == "chain"

    def test_a_finished_hand_replaced_by_a_re_chained_one_is_caught(
            self, played: tuple[Referee, str, str], database: Database,
            open_app: Callable[[], Referee]) -> None:
        _, _, hand_id = played
        rows = database.rows(hand_id)
        version, topic, state = rows[1]
        rows[1] = (version, topic, state.replace(b'"_data_":"20', b'"_data_":"19', 1))
        for (version, _, _), sealed in zip(rows, rechain(rows, hand_id), strict=True):
            database.set_state(hand_id, version, sealed)
        fresh = open_app()
        evidence = fresh.export_evidence(hand_id)
        report = verify(evidence, trusted=[SIGNER.public])
        assert failed(report) == "ledger"  # its chain holds, but the ledger knew another head
        assert "not this hand's head" in report.lines[-1].detail
        assert failed(fresh.verify_hand(hand_id)) == "ledger"

    def test_a_forged_signature_or_an_edited_evidence_file_is_caught(
            self, played: tuple[Referee, str, str]) -> None:
        app, _, hand_id = played
        evidence = app.export_evidence(hand_id)
        forged = Signer.from_text("22" * 32).sign(evidence)
        assert failed(verify(forged, trusted=[SIGNER.public])) == "signature"
        edited = json.loads(json.dumps(evidence))
        edited["ruling"]["status"] = "rejected"
        assert failed(verify(edited)) == "signature"
        resigned = SIGNER.sign(edited)  # even the referee's own key cannot make a lie pass
        assert failed(verify(resigned, trusted=[SIGNER.public])) == "re-rule"

    def test_a_rolled_back_ledger_is_caught_against_an_earlier_checkpoint(
            self, open_app: Callable[[], Referee], database: Database) -> None:
        app = open_app()
        table_id = open_table(app, "fiftyk", "qq3", 3)
        first = play_hand(app, table_id)
        second = play_hand(app, table_id)
        earlier = app.export_evidence(first)
        assert earlier["ledger"]["size"] == 2
        assert app.audit.run().problems == []  # signs and stores a checkpoint of two hands
        # Roll the database back to before the second hand: its events, and the table's.
        table_rows = database.rows(table_id)
        started = next(v for v, t, s in table_rows
                       if t.endswith("HandStarted") and second.encode() in s)
        database.delete(second)
        database.delete(table_id, range(started, table_rows[-1][0] + 1))
        fresh = open_app()
        later = fresh.export_evidence(first)
        assert later["ledger"]["size"] == 1
        assert verify(later, trusted=[SIGNER.public]).ok  # alone, the rolled back log is whole
        report = verify(later, trusted=[SIGNER.public], since=earlier)
        assert failed(report) == "consistency" and "rolled back" in report.lines[-1].detail
        audit = fresh.verify_hand(first)
        assert failed(audit) == "ledger history" and "rolled back" in audit.lines[-1].detail
        problems = fresh.audit.run().problems
        assert len(problems) == 1 and "rolled back" in problems[0]
        # The server that signed it sees its own log shrink too.
        assert app.ledger.refresh() == 1 and app.audit.run().problems

    def test_the_audit_finds_a_clean_store_clean_and_each_tampering(
            self, open_app: Callable[[], Referee], database: Database) -> None:
        app = open_app()
        hands = []
        for game, preset, seats in GAMES:
            table_id = open_table(app, game, preset, seats)
            hands.append(play_hand(app, table_id))
        clean = app.audit.run()
        assert clean.problems == [] and clean.hands == len(GAMES) and clean.tables == len(GAMES)
        assert clean.checkpoint is not None and clean.checkpoint["size"] == len(GAMES)
        version, _, state = database.rows(hands[1])[3]
        database.set_state(hands[1], version, state.replace(b'"_data_":"20', b'"_data_":"19', 1))
        problems = open_app().audit.run().problems
        assert len(problems) == 1 and problems[0].startswith(f"hand {hands[1]}: version 4")

    def test_consistency_with_an_earlier_checkpoint_is_proven(
            self, open_app: Callable[[], Referee]) -> None:
        app = open_app()
        table_id = open_table(app, "shengji", "tractor", 4)
        first = play_hand(app, table_id)
        earlier = app.export_evidence(first)
        play_hand(app, table_id)
        later = app.export_evidence(first, since_size=earlier["ledger"]["size"])
        report = verify(later, trusted=[SIGNER.public], since=earlier)
        assert report.ok and any(line.check == "consistency" for line in report.lines)


    def test_verify_hand_and_evidence_read_no_more_as_the_ledger_and_the_table_grow(
            self, open_app: Callable[[], Referee]) -> None:
        app = open_app()
        reads = StoreReads(app)
        fiftyk_table = open_table(app, "fiftyk", "qq3", 3)
        hands = [play_hand(app, fiftyk_table),
                 play_hand(app, open_table(app, "shengji", "tractor", 4))]
        small = {}
        for hand_id in hands:
            assert app.verify_hand(hand_id).ok  # this process has read the ledger
            small[hand_id] = (reads.during(lambda h=hand_id: app.verify_hand(h)),
                              reads.during(lambda h=hand_id: app.export_evidence(h)))
        play_hand(app, fiftyk_table)
        play_hand(app, fiftyk_table)
        audit = app.verify_hand(hands[1])  # reads the two hands recorded since
        assert audit.ok and "ledger of 4 hands" in audit.lines[-1].detail
        for hand_id in hands:
            grown = (reads.during(lambda h=hand_id: app.verify_hand(h)),
                     reads.during(lambda h=hand_id: app.export_evidence(h)))
            # The ledger's stored tail checked, the hand's events, one event of its table.
            assert grown == small[hand_id], hand_id

    def test_hands_another_process_finished_are_in_the_ledger(
            self, open_app: Callable[[], Referee]) -> None:
        serving, other = open_app(), open_app()
        mine = play_hand(serving, open_table(serving, "fiftyk", "qq3", 3))
        assert serving.verify_hand(mine).ok  # the serving process has read a ledger of one
        theirs = play_hand(other, open_table(other, "shengji", "tractor", 4))
        evidence = serving.export_evidence(theirs)
        assert (evidence["ledger"]["index"], evidence["ledger"]["size"]) == (1, 2)
        assert verify(evidence, trusted=[SIGNER.public]).ok
        audit = serving.verify_hand(theirs)
        assert audit.ok and "ledger of 2 hands" in audit.lines[-1].detail
        again = serving.export_evidence(mine)
        assert (again["ledger"]["index"], again["ledger"]["size"]) == (0, 2)
        assert again["ledger"]["checkpoint"]["root"] == evidence["ledger"]["checkpoint"]["root"]
        assert other.verify_hand(mine).ok

    def test_a_rewritten_ledger_the_audit_found_fails_verify_hands_ledger_history(
            self, open_app: Callable[[], Referee], database: Database) -> None:
        app = open_app()
        table_id = open_table(app, "fiftyk", "qq3", 3)
        first = play_hand(app, table_id)
        second = play_hand(app, table_id)
        assert app.audit.run().problems == []  # a checkpoint of two hands, signed and stored
        assert app.verify_hand(second).ok
        # Rewrite the table's record of the first hand (another head), consistently chained.
        head = app.export_evidence(first)["chain"]["head"]
        rows = database.rows(table_id)
        at = next(i for i, (_, topic, state) in enumerate(rows)
                  if topic.endswith("HandRecorded") and head.encode() in state)
        version, topic, state = rows[at]
        rows[at] = (version, topic, state.replace(head.encode(), b"0" * len(head)))
        for (version, _, _), sealed in zip(rows, rechain(rows, table_id), strict=True):
            database.set_state(table_id, version, sealed)
        problems = app.audit.run().history  # the audit reads the whole ledger again
        assert problems and all("no longer extends" in problem for problem in problems)
        report = app.verify_hand(second)  # the second hand itself is intact
        assert failed(report) == "ledger history" and "integrity audit" in report.lines[-1].detail
        report = open_app().verify_hand(second)  # a new process reads the rewritten ledger
        assert failed(report) == "ledger history" and "no longer extends" in \
            report.lines[-1].detail


class TestSQLite(FairnessCases):
    """The cases on SQLite, a file in a temporary directory."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        return None


@pytest.mark.postgres
class TestPostgreSQL(FairnessCases):
    """The cases on a fresh database of the throwaway PostgreSQL server."""

    @pytest.fixture
    def database_url(self, fresh_postgres_db: str) -> str | None:
        return fresh_postgres_db

