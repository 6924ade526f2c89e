"""The lobby read model and the table lifecycle over a real store, on SQLite and PostgreSQL:
rebuilt from history, kept across restarts, each event applied once by racing replicas."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.table import CLOSED, PLAYING, WAITING
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.errors import ServiceError, ServiceReason, Unauthenticated
from fiftyk_referee.service.ops.config import parse_database_url
from fiftyk_referee.service.platform.lobby import Lobby, LobbyFollower, TableQuery

RACERS = 3
JOIN_TIMEOUT_SECONDS = 60
POLL_SECONDS = 0.02


def seated(app: Referee, game: str, preset: str, prefix: str, players: int = 4) -> str:
    table_id = app.create_table(preset, {}, players, game=game).table_id
    for seat in range(players):
        app.join_table(table_id, f"{prefix}-{seat}", seat)
    return table_id


def resign_out(app: Referee, table_id: str) -> None:
    """Deal a hand and end it by resignations (its result is counted on the table)."""
    hand_id = app.start_hand(table_id).hand_id
    for seat in range(4):
        outcome = app.resign(table_id, hand_id, seat)
        if outcome.hand is not None and outcome.hand.is_over:
            return
    raise AssertionError("the hand did not end")


class LobbyCases:
    """The cases every store must pass; subclasses provide `database_url`."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        raise NotImplementedError

    @pytest.fixture
    def open_app(self, database_url: str | None, tmp_path: Path
                 ) -> Iterator[Callable[[], Referee]]:
        database = parse_database_url(database_url or "", tmp_path)
        env = persistence_env(database, pool_size=4, max_overflow=8, lock_timeout_ms=5_000)
        opened: list[Referee] = []

        def open_app() -> Referee:
            app = Referee(env)
            opened.append(app)
            return app

        yield open_app
        for app in opened:
            app.close()

    def test_the_lobby_rebuilds_from_history_and_follows_the_lifecycle(
            self, open_app: Callable[[], Referee]) -> None:
        app = open_app()
        fiftyk = seated(app, "fiftyk", "classic", "f")
        doudizhu = seated(app, "doudizhu", "classic", "d", 3)
        shengji = seated(app, "shengji", "tractor", "s")
        hand = app.start_hand(shengji).hand_id
        idle = app.create_table("qq3", {}, 3).table_id
        app.close_table(idle, "nobody came")
        # A lobby started over an existing store catches up from the beginning.
        lobby = Lobby(app)
        page = lobby.list_tables(TableQuery())
        assert [t.table_id for t in page.tables] == [idle, shengji, doudizhu, fiftyk]
        states = {t.table_id: t.state for t in page.tables}
        assert states == {idle: CLOSED, shengji: PLAYING, doudizhu: WAITING, fiftyk: WAITING}
        assert page.as_of_position == app.head_position()

        app.replace_seat(fiftyk, 3, "bot-3")
        app.reissue_seat_token(shengji, 1)
        aborted = app.abort_table(shengji, "maintenance")
        assert aborted.detail == hand
        # A second lobby (a restart) continues from the recorded position.
        again = Lobby(open_app())
        listed = {t.table_id: t for t in again.list_tables(TableQuery()).tables}
        assert listed[shengji].state == CLOSED and listed[shengji].current_hand is None
        assert listed[fiftyk].seats[3] == "bot-3"
        assert [t.table_id for t in again.list_tables(TableQuery(player_id="bot-3")).tables] \
            == [fiftyk]
        assert again.list_tables(TableQuery(states=(CLOSED,), game="shengji")).tables[0] \
            .table_id == shengji
        assert [t.table_id for t in again.list_tables(TableQuery(game="doudizhu")).tables] \
            == [doudizhu]
        with pytest.raises(RuleError) as refused:
            app.start_hand(shengji)
        assert refused.value.reason == Reason.TABLE_CLOSED

    # A seat's action that reaches the game after the table checks: 五十K's resign (any
    # seat, any time) is accepted; Shengji has no pass and nobody resigns in 斗地主, so the
    # game itself refuses those.
    @pytest.mark.parametrize(("game", "preset", "players", "kind", "game_says"), [
        ("fiftyk", "classic", 4, "resign", None),
        ("shengji", "tractor", 4, "pass", ShengjiReason.PASS_NOT_ALLOWED),
        ("doudizhu", "classic", 3, "resign", Reason.INVALID_ACTION),
    ])
    def test_what_another_replica_changed_on_the_table_counts_at_once(
            self, open_app: Callable[[], Referee], game: str, preset: str, players: int,
            kind: str, game_says: Reason | None) -> None:
        """A hand command decides on the replica's cached table (no read of the store) and
        names it as a guard: a token reissued, or the table aborted, through another replica
        since is still honoured — the append is refused and the retry reads the table."""
        first, second = open_app(), open_app()
        table_id = seated(first, game, preset, f"guard-{game}", players)
        hand_id = first.start_hand(table_id).hand_id
        generation = first.get_table(table_id).token_generation(1)  # cached by `first`

        def act(seat: int, token_generation: int | None = None) -> None:
            try:
                first.act(table_id, hand_id, seat, Action(kind), names_cards=False,
                          token_generation=token_generation)
            except RuleError as refused:
                if refused.reason != game_says:
                    raise

        second.reissue_seat_token(table_id, 1)
        with pytest.raises(Unauthenticated) as revoked:
            act(1, generation)
        assert revoked.value.reason == ServiceReason.TOKEN_REVOKED
        act(1, generation + 1)  # the new token passes the table's checks
        second.abort_table(table_id, "maintenance")
        with pytest.raises(RuleError) as voided:
            act(2)
        assert voided.value.reason == Reason.HAND_VOIDED

    def test_racing_lobbies_apply_every_event_once(self, open_app: Callable[[], Referee]
                                                   ) -> None:
        writer = open_app()
        tables = [seated(writer, "fiftyk", "classic", f"r{i}") for i in range(3)]
        for table_id in tables:
            resign_out(writer, table_id)
            resign_out(writer, table_id)
            writer.close_table(table_id)
        lobbies = [Lobby(open_app(), batch_size=7) for _ in range(RACERS)]
        errors: list[BaseException] = []
        gate = threading.Barrier(RACERS)

        def race(lobby: Lobby) -> None:
            try:
                gate.wait(JOIN_TIMEOUT_SECONDS)
                lobby.catch_up()
            except (ServiceError, OSError, threading.BrokenBarrierError) as error:
                errors.append(error)

        threads = [threading.Thread(target=race, args=(lobby,)) for lobby in lobbies]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(JOIN_TIMEOUT_SECONDS)
        assert not errors
        rows: dict[str, Any] = {t.table_id: t for t in
                                lobbies[0].list_tables(TableQuery()).tables}
        assert set(rows) == set(tables)
        # An event applied twice would count a hand twice.
        assert all(rows[t].state == CLOSED and rows[t].hands_played == 2 for t in tables)
        assert {lobby.position() for lobby in lobbies} == {writer.head_position()}


    def test_the_follower_applies_the_hubs_batches_without_reading_them_back(
            self, open_app: Callable[[], Referee], monkeypatch: pytest.MonkeyPatch) -> None:
        app = open_app()
        before = seated(app, "fiftyk", "classic", "early")
        lobby = Lobby(app)
        after = lobby.catch_up()
        follower = LobbyFollower(lobby, after)
        reads = _reads_by_thread(app, monkeypatch)
        fiftyk = seated(app, "fiftyk", "classic", "fed-f")
        shengji = seated(app, "shengji", "tractor", "fed-s")
        resign_out(app, fiftyk)
        app.start_hand(shengji)
        # What the hub hands over: its pages, decoded once, in order.
        offered = app.read_events(after, 500).events
        for start in range(0, len(offered), 3):
            follower.offer(offered[start:start + 3])
        follower.start()
        try:
            _until(lambda: lobby.position() == app.head_position(), "the lobby to follow")
        finally:
            follower.stop()
        assert "lobby" not in reads  # nothing read back from the store
        listed = {t.table_id: t for t in lobby.list_tables(TableQuery()).tables}
        assert set(listed) == {before, fiftyk, shengji}
        assert (listed[fiftyk].state, listed[fiftyk].hands_played) == (WAITING, 1)
        assert listed[shengji].state == PLAYING and listed[shengji].seats == [
            f"fed-s-{seat}" for seat in range(4)]

    def test_the_follower_reads_back_what_the_hubs_batches_missed(
            self, open_app: Callable[[], Referee]) -> None:
        """Events before the hub's first batch, and a backlog beyond `max_pending` (the
        oldest offered ones are dropped), are read from the store: nothing is missed, nothing
        applied twice."""
        app = open_app()
        before = seated(app, "shengji", "tractor", "old")  # before the follower: not offered
        after = app.head_position()
        follower = LobbyFollower(Lobby(app), after, max_pending=4)
        fiftyk = seated(app, "fiftyk", "classic", "late-f")
        resign_out(app, fiftyk)
        resign_out(app, fiftyk)
        offered = app.read_events(after, 500).events
        assert len(offered) > 4
        follower.offer(offered)  # more than it keeps: the oldest are dropped
        follower.start()
        try:
            _until(lambda: follower.lobby.position() == app.head_position(),
                   "the lobby to follow")
        finally:
            follower.stop()
        listed = {t.table_id: t for t in follower.lobby.list_tables(TableQuery()).tables}
        assert set(listed) == {before, fiftyk}
        assert listed[fiftyk].hands_played == 2  # each HandRecorded applied once
        assert listed[before].seats == [f"old-{seat}" for seat in range(4)]


def _reads_by_thread(app: Referee, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads that read the feed from the store from now on."""
    names: list[str] = []
    real = app.recorder.select_notifications

    def counted(*args: Any, **kwargs: Any) -> Any:
        names.append(threading.current_thread().name)
        return real(*args, **kwargs)

    monkeypatch.setattr(app.recorder, "select_notifications", counted)
    return names


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + JOIN_TIMEOUT_SECONDS
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(POLL_SECONDS)


class TestSQLite(LobbyCases):
    """The cases on SQLite."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        return None


@pytest.mark.postgres
class TestPostgreSQL(LobbyCases):
    """The cases on a fresh PostgreSQL database."""

    @pytest.fixture
    def database_url(self, fresh_postgres_db: str) -> str | None:
        return fresh_postgres_db
