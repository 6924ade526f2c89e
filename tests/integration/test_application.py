"""The referee application over a real event store: the same cases on SQLite and PostgreSQL."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from eventsourcing.application import project_aggregate

from fiftyk_referee.domain.cards import make_deck
from fiftyk_referee.domain.deal import shuffle_deck
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.fiftyk.events import CardsPlayed, HandDealt, HandEnded
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.reasons import FiftykReason
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.fiftyk.transcript import adjudicate
from fiftyk_referee.domain.observer import AUDITOR, SPECTATOR, SeatViewer
from fiftyk_referee.domain.table_events import SeatTaken, TableOpened
from fiftyk_referee.service.core.application import TABLE_SNAPSHOT_INTERVAL, Referee
from fiftyk_referee.service.core.runner import Outcome
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.errors import (
    AlreadyExists,
    Conflict,
    InvalidArgument,
    NotFound,
    ServiceReason,
)
from fiftyk_referee.service.ops.config import parse_database_url
from fiftyk_referee.service.ops.metrics import Metrics

PRESET = "qq4"
PLAYERS = 4
RACERS = 6
GATE_TIMEOUT_SECONDS = 20
# A loser of a race sees the winner's move: the turn moved on, the hand ended or the seat left.
RACE_LOSER_REASONS = {Reason.NOT_YOUR_TURN, Reason.HAND_OVER, FiftykReason.PLAYER_OUT}
ENTROPY_WINDOW = 300  # the seats contribute well within it, however loaded the machine
VOLATILE_KEYS = {"hand_id", "table_id", "turn_deadline", "current_hand", "hand_ids"}


def preset_deck(seed: int, preset: str = PRESET) -> list[str]:
    """A reproducible deck order for a preset."""
    rules = Ruleset.from_spec(preset)
    base = make_deck(rules.packs, jokers=rules.jokers)
    return [str(card) for card in shuffle_deck(seed.to_bytes(32, "big"), base)]


def stable(view: Any) -> dict[str, Any]:
    """A view without the values that differ between two runs of the same game (ids, clock)."""
    return {k: v for k, v in asdict(view).items() if k not in VOLATILE_KEYS}


class Game:
    """One table played through the application by a seeded random player."""

    def __init__(self, app: Referee, *, seed: int = 7, preset: str = PRESET,
                 options: dict[str, Any] | None = None) -> None:
        self.app = app
        self.rng = random.Random(seed)
        self.preset = preset
        outcome = app.create_table(preset, options or {}, PLAYERS, allow_preset_deck=True)
        self.table_id = outcome.table_id
        for seat in range(PLAYERS):
            app.join_table(self.table_id, f"player-{seed}-{seat}", seat)
        self.hand_id = ""

    def deal(self, deck_seed: int) -> Hand:
        """Start the next hand with a reproducible deck."""
        outcome = self.app.start_hand(self.table_id, deck=preset_deck(deck_seed, self.preset))
        assert outcome.hand is not None
        self.hand_id = str(outcome.hand.id)
        return outcome.hand

    def step(self) -> Outcome:
        """Make one random legal move for the seat whose turn it is."""
        hand = self.app.get_hand(self.hand_id)
        seat = hand.turn
        assert seat is not None
        legal = self.app.legal_actions(self.table_id, self.hand_id, seat)[0]
        if legal.may_pass and (not legal.plays or self.rng.random() < 0.3):
            return self.app.pass_turn(self.table_id, self.hand_id, seat)
        play = self.rng.choice(legal.plays)
        return self.app.play(self.table_id, self.hand_id, seat, play.cards)

    def finish(self, max_steps: int = 1_000) -> Hand:
        """Play until the hand is over."""
        for _ in range(max_steps):
            hand = self.app.get_hand(self.hand_id)
            if hand.is_over:
                return hand
            self.step()
        raise AssertionError("the hand did not end")


class PausingReferee(Referee):
    """The real application, made to hold appends so that racing commands decide together.

    After `hold_next_appends()`, the next `parties` appends each wait until all of them have
    decided (on the same versions), then go ahead at once: one wins, the others conflict.
    """

    def __init__(self, env: dict[str, str], *, parties: int, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self._gate = threading.Barrier(parties)
        self._held = 0
        self._parties = parties
        self._lock = threading.Lock()

    def hold_next_appends(self) -> None:
        """Hold the next `parties` appends at the gate."""
        self._held = self._parties

    def save(self, *objs: Any, **kwargs: Any) -> Any:
        """Wait at the gate if held, then append."""
        with self._lock:
            hold = self._held > 0
            self._held -= int(hold)
        if hold:
            self._gate.wait(timeout=GATE_TIMEOUT_SECONDS)
        return super().save(*objs, **kwargs)


class ApplicationCases:
    """The cases every backend must pass; subclasses provide `database_url`."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        raise NotImplementedError

    @pytest.fixture
    def env(self, database_url: str | None, tmp_path: Path) -> dict[str, str]:
        database = parse_database_url(database_url or "", tmp_path)
        return persistence_env(database, pool_size=4, max_overflow=8, lock_timeout_ms=5_000,
                               cache_size=100)

    @pytest.fixture
    def open_app(self, env: dict[str, str]) -> Iterator[Callable[..., Referee]]:
        opened: list[Referee] = []

        def open_app(**kwargs: Any) -> Referee:
            app = Referee(env, **kwargs)
            opened.append(app)
            return app

        yield open_app
        for app in opened:
            app.close()

    # -- full hands -------------------------------------------------------------------------

    def test_a_full_hand_is_scored_and_recorded_on_its_table(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        game = Game(app)
        game.deal(1)
        hand = game.finish()
        table = app.get_table(game.table_id)
        assert hand.result is not None
        assert table.hands_played == 1 and table.current_hand is None
        assert {k: str(v) for k, v in table.scores.items()} == hand.result["side_totals"]
        assert app.rebuild_scores(game.table_id) == table.scores
        sheet = app.scores(game.table_id)
        assert [(row.hand_id, row.number) for row in sheet.hands] == [(str(hand.id), 1)]
        assert sheet.totals == table.scores

    def test_a_hand_history_is_gapless_and_replays_to_the_live_state(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        game = Game(app)
        game.deal(2)
        hand = game.finish()
        page = app.hand_history(hand.id, limit=1_000)
        assert [e.aggregate_version for e in page.events] == list(range(1, hand.version + 1))
        assert page.events[0].name == HandDealt.NAME and page.events[-1].name == HandEnded.NAME
        assert not page.has_more
        first = app.hand_history(hand.id, limit=10)
        rest = app.hand_history(hand.id, after_version=10, limit=1_000)
        assert first.has_more and first.events + rest.events == page.events
        replayed = project_aggregate(None, app.events.get(hand.id))
        assert isinstance(replayed, Hand)
        assert replayed.view(AUDITOR) == hand.view(AUDITOR)

    def test_the_state_at_any_version_is_the_replay_of_that_prefix(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        game = Game(app)
        dealt = game.deal(3)
        for _ in range(12):
            game.step()
        middle = app.get_hand(game.hand_id)
        hand = game.finish()
        assert app.hand_at(hand.id, 1).view(AUDITOR) == dealt.view(AUDITOR)
        assert app.hand_at(hand.id, middle.version).view(AUDITOR) == middle.view(AUDITOR)
        assert app.hand_at(hand.id, hand.version).view(AUDITOR) == hand.view(AUDITOR)
        for version in (0, hand.version + 1):
            with pytest.raises(NotFound) as missing:
                app.hand_at(hand.id, version)
            assert missing.value.reason == ServiceReason.VERSION_NOT_FOUND

    def test_an_exported_transcript_adjudicates_to_the_live_result(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        game = Game(app)
        game.deal(4)
        hand = game.finish()
        assert hand.result is not None
        ruling = adjudicate(app.export_transcript(hand.id))
        assert ruling["status"] == "completed"
        assert {k: ruling[k] for k in ("teams", "seats", "winner")} == {
            k: hand.result[k] for k in ("teams", "seats", "winner")}

    def test_views_show_a_seat_only_its_own_cards(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        game = Game(app)
        game.deal(5)
        audit = app.hand_view(game.table_id, None, AUDITOR)
        for seat in range(PLAYERS):
            view = app.hand_view(game.table_id, None, SeatViewer(seat))
            assert view.own_cards == audit.seats[seat].cards
            assert view.stock is None and all(s.cards is None for s in view.seats)

    def test_a_timed_out_turn_is_ruled_by_the_referee_only_after_the_deadline(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        game = Game(app, options={"turn_timeout": 30})
        hand = game.deal(6)
        deadline = hand.turn_deadline()
        assert deadline is not None and hand.turn is not None
        with pytest.raises(RuleError) as early:
            app.time_out(game.table_id, game.hand_id, hand.turn, deadline - timedelta(seconds=1))
        assert early.value.reason == Reason.TURN_NOT_EXPIRED
        outcome = app.time_out(game.table_id, game.hand_id, hand.turn, deadline)
        assert outcome.detail == "play" and outcome.version > hand.version

    def test_unknown_and_malformed_ids_are_refused(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        game = Game(app)
        hand = game.deal(7)
        with pytest.raises(NotFound) as table_missing:
            app.get_table(hand.id)  # a hand is not a table
        assert table_missing.value.reason == ServiceReason.TABLE_NOT_FOUND
        with pytest.raises(InvalidArgument) as malformed:
            app.play("not-a-uuid", hand.id, 0, ["3H"])
        assert malformed.value.reason == ServiceReason.INVALID_ID
        other = Game(app, seed=8)
        with pytest.raises(NotFound) as foreign:
            app.pass_turn(other.table_id, hand.id, 0)
        assert foreign.value.reason == ServiceReason.HAND_NOT_FOUND

    # -- restarts ---------------------------------------------------------------------------

    def test_a_restart_in_the_middle_of_a_hand_ends_like_an_uninterrupted_run(
            self, open_app: Callable[..., Referee]) -> None:
        steady = Game(open_app(), seed=11)
        steady.deal(9)
        steady_hand = steady.finish()

        first = open_app()
        interrupted = Game(first, seed=11)
        interrupted.deal(9)
        for _ in range(25):
            interrupted.step()
        first.close()
        second = open_app()  # a new process: empty cache, same database
        interrupted.app = second
        hand = interrupted.finish()

        assert stable(hand.view(AUDITOR)) == stable(steady_hand.view(AUDITOR))
        assert hand.version == steady_hand.version
        for seat in range(PLAYERS):
            assert (stable(second.hand_view(interrupted.table_id, None, SeatViewer(seat)))
                    == stable(steady.app.hand_view(steady.table_id, None, SeatViewer(seat))))
        assert second.scores(interrupted.table_id).totals == steady.app.scores(
            steady.table_id).totals
        assert stable(second.get_table(interrupted.table_id).view()) == stable(
            steady.app.get_table(steady.table_id).view())

    def test_long_table_streams_are_snapshotted_and_read_back_identically(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        table_id = app.create_table(PRESET, {}, PLAYERS).table_id
        for turn in range(TABLE_SNAPSHOT_INTERVAL // 2):
            app.join_table(table_id, f"guest-{turn}", 0)
            app.leave_table(table_id, 0)
        assert app.snapshots is not None
        snapshots = list(app.snapshots.get(app.get_table(table_id).id))
        assert [s.originator_version for s in snapshots] == [TABLE_SNAPSHOT_INTERVAL]
        fresh = open_app()
        assert fresh.get_table(table_id).view() == app.rebuild_table(table_id).view()

    # -- seat entropy (docs/fairness.md#seat-entropy) ----------------------------------------

    @pytest.mark.parametrize(("game", "preset", "players"), [
        ("fiftyk", PRESET, PLAYERS), ("shengji", "tractor", 4), ("doudizhu", "classic", 3)])
    def test_a_seat_entropy_deal_is_stored_and_read_back_on_any_process(
            self, open_app: Callable[..., Referee], game: str, preset: str, players: int
            ) -> None:
        app = open_app()
        table_id = app.create_table(preset, {}, players, game=game,
                                    entropy_window=ENTROPY_WINDOW,
                                    entropy_direct=True).table_id
        for seat in range(players):
            app.join_table(table_id, f"{game}-{seat}", seat)
        opened = app.start_hand(table_id)
        assert opened.hand is None
        commitment = app.get_table(table_id).view().draw.commitment  # type: ignore[union-attr]
        app.contribute_entropy(table_id, 0, b"\x01" * 16)
        # Another process sees the draw as stored, and its contribution counts the same.
        other = open_app()
        draw = other.get_table(table_id).view().draw
        assert draw is not None and draw.contributed == (0,) and draw.commitment == commitment
        for seat in range(1, players - 1):
            other.contribute_entropy(table_id, seat, bytes([seat + 1]) * 16)
        with pytest.raises(RuleError) as refused:
            app.contribute_entropy(table_id, 0, b"\x09" * 16)
        assert refused.value.reason == Reason.ENTROPY_ALREADY_SENT
        dealt = app.contribute_entropy(table_id, players - 1, b"\x05" * 64)
        assert dealt.hand is not None and dealt.table is not None
        hand = open_app().get_hand(dealt.hand.id)
        assert hand.contributions == (
            *(bytes([seat + 1]).hex() * 16 for seat in range(players - 1)), "05" * 64)
        assert hand.commitment == commitment and hand.deck == dealt.hand.deck
        assert app.rebuild_table(table_id).view() == other.get_table(table_id).view()

    def test_a_table_snapshot_taken_during_a_draw_keeps_the_draw(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        table_id = app.create_table(PRESET, {}, PLAYERS,
                                    entropy_window=ENTROPY_WINDOW,
                                    entropy_direct=True).table_id
        for turn in range(TABLE_SNAPSHOT_INTERVAL // 2 - 4):
            app.join_table(table_id, f"guest-{turn}", 0)
            app.leave_table(table_id, 0)
        for seat in range(PLAYERS):
            app.join_table(table_id, f"sitter-{seat}", seat)
        app.start_hand(table_id)
        app.contribute_entropy(table_id, 2, b"\x02" * 16)
        app.contribute_entropy(table_id, 1, b"\x03" * 16)
        assert app.snapshots is not None
        snapshots = list(app.snapshots.get(app.get_table(table_id).id))
        assert [s.originator_version for s in snapshots] == [TABLE_SNAPSHOT_INTERVAL]
        fresh = open_app()
        assert fresh.get_table(table_id).draw == app.rebuild_table(table_id).draw
        assert fresh.get_table(table_id).view().draw.contributed == (1, 2)  # type: ignore[union-attr]

    # -- concurrency ------------------------------------------------------------------------

    def test_commands_racing_on_one_hand_apply_exactly_once_each_race(
            self, open_app: Callable[..., Referee]) -> None:
        metrics = Metrics()
        apps = [open_app(metrics=metrics), open_app(metrics=metrics)]  # two "processes"
        game = Game(apps[0], seed=21)
        game.deal(21)
        races = 0
        while not apps[0].get_hand(game.hand_id).is_over and races < 15:
            races += 1
            hand = apps[0].get_hand(game.hand_id)
            seat = hand.turn
            assert seat is not None
            legal = apps[0].legal_actions(game.table_id, game.hand_id, seat)[0]
            options: list[list[str] | None] = [p.cards for p in legal.plays]
            if legal.may_pass:
                options.append(None)
            choices = [options[i % len(options)] for i in range(RACERS)]
            won, lost = _race(apps, game, seat, choices)
            assert len(won) == 1, f"race {races}: {len(won)} winners"
            assert all(isinstance(e, RuleError) and e.reason in RACE_LOSER_REASONS
                       for e in lost), lost
        hand = apps[1].get_hand(game.hand_id)
        history = apps[1].hand_history(hand.id, limit=1_000)
        assert [e.aggregate_version for e in history.events] == list(
            range(1, hand.version + 1))
        replayed = project_aggregate(None, apps[1].events.get(hand.id))
        assert isinstance(replayed, Hand) and replayed.view(AUDITOR) == hand.view(AUDITOR)
        assert len(hand.actions) == races
        assert _sample(metrics, "fiftyk_command_retries_total") == _sample(
            metrics, "fiftyk_event_store_conflicts_total")

    def test_a_command_that_lost_a_race_is_retried_and_still_applies(
            self, env: dict[str, str]) -> None:
        metrics = Metrics()
        app = PausingReferee(env, parties=PLAYERS, metrics=metrics)
        try:
            table_id = app.create_table(PRESET, {}, PLAYERS).table_id
            app.hold_next_appends()
            outcomes, errors = _concurrently(
                [lambda i=i: app.join_table(table_id, f"racer-{i}") for i in range(PLAYERS)])
            assert errors == []
            table = app.get_table(table_id)
            assert sorted(o.seat for o in outcomes if o.seat is not None) == list(range(PLAYERS))
            assert sorted(p for p in table.seats if p) == sorted(
                f"racer-{i}" for i in range(PLAYERS))
            assert table.version == 1 + PLAYERS
            conflicts = _sample(metrics, "fiftyk_event_store_conflicts_total")
            assert conflicts >= PLAYERS - 1  # all decided on one version; one append won
            assert _sample(metrics, "fiftyk_command_retries_total") == conflicts
        finally:
            app.close()

    def test_a_command_that_loses_every_attempt_fails_with_a_conflict(
            self, env: dict[str, str]) -> None:
        app = PausingReferee(env, parties=PLAYERS, max_attempts=1)
        try:
            table_id = app.create_table(PRESET, {}, PLAYERS).table_id
            app.hold_next_appends()
            outcomes, errors = _concurrently(
                [lambda i=i: app.join_table(table_id, f"racer-{i}") for i in range(PLAYERS)])
            assert len(outcomes) == 1 and len(errors) == PLAYERS - 1
            assert all(isinstance(e, Conflict) and e.reason == ServiceReason.CONCURRENT_UPDATE
                       for e in errors), errors
            table = app.get_table(table_id)
            assert table.version == 2 and table.seats[0] is not None
        finally:
            app.close()

    # -- idempotency ------------------------------------------------------------------------

    def test_a_retried_request_after_a_restart_returns_the_original_outcome(
            self, open_app: Callable[..., Referee]) -> None:
        first = open_app()
        created = first.create_table(PRESET, {}, PLAYERS, allow_preset_deck=True,
                                     request_id="create-1")
        table_id = created.table_id
        for seat in range(PLAYERS):
            first.join_table(table_id, f"p{seat}", seat, request_id=f"join-{seat}")
        started = first.start_hand(table_id, deck=preset_deck(31), request_id="deal-1")
        assert started.hand is not None
        seat = started.hand.turn
        assert seat is not None
        play = first.legal_actions(table_id, started.hand.id, seat)[0].plays[0].cards
        played = first.play(table_id, started.hand.id, seat, play, request_id="move-1")
        head = first.head_position()
        first.close()

        second = open_app()
        again = second.play(table_id, started.hand.id, seat, play, request_id="move-1")
        assert again.replayed and not played.replayed
        assert again.version == played.version
        assert again.hand is not None and played.hand is not None
        assert again.hand.view(SeatViewer(seat)) == played.hand.view(SeatViewer(seat))
        recreated = second.create_table(PRESET, {}, PLAYERS, allow_preset_deck=True,
                                        request_id="create-1")
        assert recreated.replayed and recreated.table_id == table_id
        assert second.start_hand(table_id, deck=preset_deck(31),
                                 request_id="deal-1").hand_id == started.hand_id
        assert second.head_position() == head

        with pytest.raises(AlreadyExists) as reused:
            second.pass_turn(table_id, started.hand.id, seat, request_id="move-1")
        assert reused.value.reason == ServiceReason.REQUEST_ID_REUSED
        assert second.head_position() == head

    def test_duplicate_requests_racing_apply_once(
            self, open_app: Callable[..., Referee]) -> None:
        metrics = Metrics()
        apps = [open_app(metrics=metrics), open_app(metrics=metrics)]
        game = Game(apps[0], seed=41)
        hand = game.deal(41)
        seat = hand.turn
        assert seat is not None
        play = apps[0].legal_actions(game.table_id, game.hand_id, seat)[0].plays[-1].cards
        outcomes, errors = _concurrently([
            lambda i=i: apps[i % 2].play(game.table_id, game.hand_id, seat, play,
                                         request_id="same")
            for i in range(RACERS)
        ])
        assert errors == []
        assert len({o.version for o in outcomes}) == 1
        assert [o.replayed for o in outcomes].count(False) == 1
        assert _sample(metrics, "fiftyk_idempotent_replays_total") == RACERS - 1
        after = apps[1].get_hand(game.hand_id)
        assert after.version == outcomes[0].version
        assert len(after.actions) == 1

    # -- the feed and the standings ----------------------------------------------------------

    def test_the_global_feed_returns_every_event_once_in_order(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        game = Game(app)
        game.deal(51)
        for _ in range(10):
            game.step()
        everything = app.read_events(0, limit=1_000)
        assert not everything.has_more
        positions = [e.position for e in everything.events]
        assert positions == sorted(set(positions)) and positions[-1] == app.head_position()
        paged, position = [], 0
        while True:
            page = app.read_events(position, limit=7)
            paged.extend(page.events)
            position = page.last_position
            if not page.has_more:
                break
        assert paged == everything.events
        names = [e.name for e in everything.events]
        assert names[:1 + PLAYERS] == [TableOpened.NAME] + [SeatTaken.NAME] * PLAYERS
        assert HandDealt.NAME in names and CardsPlayed.NAME in names
        per_stream: dict[str, list[int]] = {}
        for e in everything.events:
            per_stream.setdefault(e.aggregate_id, []).append(e.aggregate_version)
        assert all(v == list(range(1, len(v) + 1)) for v in per_stream.values())
        seats = app.read_events(0, limit=1_000, names=[SeatTaken.NAME])
        assert [e.public(SPECTATOR) for e in seats.events] == [
            SeatTaken(seat=seat, player_id=f"player-7-{seat}") for seat in range(PLAYERS)]

    def test_the_feed_publishes_no_command_receipt_and_refuses_unknown_names(
            self, open_app: Callable[..., Referee]) -> None:
        app = open_app()
        outcome = app.create_table("classic", None, PLAYERS, request_id="create-once")
        head = app.head_position()
        page = app.read_events(0, limit=1_000)
        assert [e.name for e in page.events] == [TableOpened.NAME]
        assert page.events[0].aggregate_id == outcome.table_id
        assert head > page.last_position  # the receipt is stored, after the table
        assert not app.read_events(page.last_position).events
        with pytest.raises(InvalidArgument):
            app.read_events(0, names=["fiftyk_referee.domain.table:Table.Opened"])


def _race(apps: list[Referee], game: Game, seat: int,
          choices: list[list[str] | None]) -> tuple[list[Outcome], list[BaseException]]:
    """Every choice submitted at once for the same seat, alternating between the apps."""

    def command(index: int, cards: list[str] | None) -> Callable[[], Outcome]:
        app = apps[index % len(apps)]
        if cards is None:
            return lambda: app.pass_turn(game.table_id, game.hand_id, seat)
        return lambda: app.play(game.table_id, game.hand_id, seat, cards)

    return _concurrently([command(i, c) for i, c in enumerate(choices)])


def _concurrently(calls: list[Callable[[], Outcome]]
                  ) -> tuple[list[Outcome], list[BaseException]]:
    """Run the calls on threads released together; collect outcomes and errors."""
    barrier = threading.Barrier(len(calls))
    outcomes: list[Outcome] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def run(call: Callable[[], Outcome]) -> None:
        barrier.wait()
        try:
            outcome = call()
        except (RuleError, Conflict, AlreadyExists) as error:
            with lock:
                errors.append(error)
        else:
            with lock:
                outcomes.append(outcome)

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes, errors


def _sample(metrics: Metrics, name: str) -> float:
    value = metrics.registry.get_sample_value(name)
    return value or 0.0


class TestSQLite(ApplicationCases):
    """The cases on SQLite, a file in a temporary directory."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        return None


@pytest.mark.postgres
class TestPostgreSQL(ApplicationCases):
    """The cases on a fresh database of the throwaway PostgreSQL server."""

    @pytest.fixture
    def database_url(self, fresh_postgres_db: str) -> str | None:
        return fresh_postgres_db
