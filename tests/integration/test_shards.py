"""Tables spread over two PostgreSQL databases (service/core/shards.py), on the session's server.

What must hold: a table lives wholly in the shard its id names — its commands, hands,
receipts and feed events are there and nowhere else, and an unmodified single-database
referee opened on that database sees the very same table; request ids replay as on one
database, also after a restart; the feed across shards returns every event once, each
shard's in its own order, resumable from its token; the routing survives a restart; each
shard audits and signs its own ledger. Both games are played.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from fiftyk_referee.domain.observer import AUDITOR, SeatViewer
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.feed import FeedHub
from fiftyk_referee.service.core.shards import ShardedReferee, ShardPositions, shard_of
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.errors import AlreadyExists, NotFound, ServiceReason
from fiftyk_referee.service.ops.config import parse_database_url
from fiftyk_referee.service.trust.signing import Signer
from fiftyk_referee.service.trust.verifier import verify
from tests.integration.test_fairness import GAMES, open_table, play_hand
from tests.support.pgserver import ThrowawayPostgres, create_database, drop_database

pytestmark = pytest.mark.postgres

TABLES = 12
SIGNER = Signer.from_text("22" * 32)
FEED_PAGE = 7  # small pages: a read crosses many page boundaries on both shards
WAIT_SECONDS = 60.0  # a bound on waiting for the hub, never an expectation of speed


def env_of(url: str) -> dict[str, str]:
    """A shard's (or a plain referee's) store settings."""
    return persistence_env(parse_database_url(url, Path(".")), pool_size=2)


@pytest.fixture
def shard_urls(postgres_server: ThrowawayPostgres) -> Iterator[list[str]]:
    """Two brand-new databases on the session's server, dropped after the test."""
    admin = postgres_server.url("postgres")
    names = [f"fiftyk_shard{index}_{uuid.uuid4().hex[:12]}" for index in range(2)]
    for name in names:
        create_database(admin, name)
    yield [postgres_server.url(name) for name in names]
    for name in names:
        drop_database(admin, name)


@pytest.fixture
def open_router(shard_urls: list[str]) -> Iterator[Callable[..., ShardedReferee]]:
    """Open routers over the two shards (each closed after the test)."""
    opened: list[ShardedReferee] = []

    def open_router(urls: list[str] | None = None) -> ShardedReferee:
        router = ShardedReferee([env_of(url) for url in urls or shard_urls], signer=SIGNER)
        opened.append(router)
        return router

    yield open_router
    for router in opened:
        router.close()


@pytest.fixture
def open_plain(shard_urls: list[str]) -> Iterator[Callable[[int], Referee]]:
    """Open the single-database referee of today on one shard's database."""
    opened: list[Referee] = []

    def open_plain(index: int) -> Referee:
        app = Referee(env_of(shard_urls[index]), signer=SIGNER)
        opened.append(app)
        return app

    yield open_plain
    for app in opened:
        app.close()


def create_tables(router: ShardedReferee, count: int = TABLES) -> list[str]:
    """`count` four-seat 五十K tables, created without request ids."""
    return [router.create_table("qq4", {}, 4).table_id for _ in range(count)]


def test_tables_land_on_both_shards_and_only_on_the_one_their_id_names(
    open_router: Callable[..., ShardedReferee], open_plain: Callable[[int], Referee],
) -> None:
    router = open_router()
    tables = create_tables(router)
    homes = [shard_of(uuid.UUID(table_id), 2) for table_id in tables]
    assert sorted(set(homes)) == [0, 1], "every table went to one shard"
    plain = [open_plain(0), open_plain(1)]
    for table_id, home in zip(tables, homes, strict=True):
        assert router.shard_index(table_id) == home
        assert plain[home].get_table(table_id).id == uuid.UUID(table_id)
        with pytest.raises(NotFound) as missing:
            plain[1 - home].get_table(table_id)
        assert missing.value.reason == ServiceReason.TABLE_NOT_FOUND


@pytest.mark.parametrize(("game", "preset", "seats"), GAMES)
def test_a_tables_hands_are_played_on_its_shard_exactly_as_on_one_database(
    open_router: Callable[..., ShardedReferee], open_plain: Callable[[int], Referee],
    game: str, preset: str, seats: int,
) -> None:
    router = open_router()
    # Tables until both shards hold one, so that each shard plays a hand of the game.
    tables: dict[int, str] = {}
    while len(tables) < 2:
        table_id = open_table(router, game, preset, seats)  # type: ignore[arg-type]
        tables.setdefault(router.shard_index(table_id), table_id)
    for home, table_id in tables.items():
        hand_id = play_hand(router, table_id)  # type: ignore[arg-type]
        plain = open_plain(home)
        # Today's referee on the shard's database sees the same table, hand and history.
        assert asdict(plain.get_table(table_id).view()) == asdict(
            router.get_table(table_id).view())
        assert plain.scores(table_id) == router.scores(table_id)
        assert plain.hand_view(table_id, hand_id, SeatViewer(0)) == router.hand_view(
            table_id, hand_id, SeatViewer(0))
        assert plain.hand_view(table_id, hand_id, AUDITOR) == router.get_hand(hand_id).view(
            AUDITOR)
        history = router.hand_history(hand_id, limit=1_000)
        assert [(e.aggregate_version, e.name) for e in history.events] == [
            (e.aggregate_version, e.name)
            for e in plain.hand_history(hand_id, limit=1_000).events]
        assert router.hand_at(hand_id, 3).version == 3
        # The hand is nowhere else, and checks out on its shard's chain and ledger.
        with pytest.raises(NotFound):
            open_plain(1 - home).hand_history(hand_id)
        assert router.verify_hand(hand_id).ok
        evidence = router.export_evidence(hand_id)
        assert verify(evidence, trusted=[SIGNER.public]).ok
        assert evidence["ledger"]["size"] == 1, "each shard's ledger holds its own hands"


def test_request_ids_replay_on_the_tables_shard_also_after_a_restart(
    open_router: Callable[..., ShardedReferee],
) -> None:
    router = open_router()
    created = {request: router.create_table("qq4", {}, 4, request_id=request)
               for request in (f"create-{n}" for n in range(TABLES))}
    homes = {router.shard_index(outcome.table_id) for outcome in created.values()}
    assert homes == {0, 1}, "creations with request ids all went to one shard"
    first = created["create-0"]
    again = router.create_table("qq4", {}, 4, request_id="create-0")
    assert (again.replayed, again.table_id) == (True, first.table_id)
    joined = router.join_table(first.table_id, "alice", 0, request_id="join-alice")
    with pytest.raises(AlreadyExists) as reused:
        router.create_table("qq4", {}, 3, request_id="create-0")
    assert reused.value.reason == ServiceReason.REQUEST_ID_REUSED
    router.close()
    restarted = open_router()
    for request, outcome in created.items():
        replayed = restarted.create_table("qq4", {}, 4, request_id=request)
        assert (replayed.replayed, replayed.table_id) == (True, outcome.table_id)
    rejoined = restarted.join_table(first.table_id, "alice", 0, request_id="join-alice")
    assert rejoined.replayed
    assert rejoined.table is not None and joined.table is not None
    assert rejoined.table.version == joined.table.version
    assert restarted.get_table(first.table_id).seats[0] == "alice"


def test_the_feed_across_shards_returns_every_event_once_in_each_shards_order(
    open_router: Callable[..., ShardedReferee],
) -> None:
    router = open_router()
    for table_id in create_tables(router, 6):
        router.join_table(table_id, "alice", 0)
        router.join_table(table_id, "bob", 1)
    seen: list[tuple[int, int]] = []
    place = ShardPositions.start(router.count)
    while True:
        page = router.read_feed(ShardPositions.parse(place.token, router.count), FEED_PAGE)
        assert len(page.events) <= FEED_PAGE
        seen += [(shard, event.position) for shard, event in page.events]
        place = page.after
        if not page.has_more:
            break
    for index, shard in enumerate(router.shards):
        everything = shard.read_events(0, 1_000).events
        assert [p for s, p in seen if s == index] == [e.position for e in everything]
    assert place == router.head()
    assert router.read_feed(place).events == []
    # No limit: the page size of one store's feed (100 events), not one event.
    assert len(router.read_feed(ShardPositions.start(router.count), 0).events) == len(seen)


def test_a_restart_keeps_every_table_on_its_shard(
    open_router: Callable[..., ShardedReferee], shard_urls: list[str],
) -> None:
    router = open_router()
    tables = create_tables(router)
    for table_id in tables:
        for seat in range(4):
            router.join_table(table_id, f"p{seat}", seat)
    router.close()
    restarted = open_router()
    for table_id in tables:
        outcome = restarted.start_hand(table_id)
        assert outcome.hand_id is not None
        assert restarted.get_hand(outcome.hand_id).table_id == table_id
    # The order of the databases is part of the placement: listed the other way round,
    # a table is looked for on the wrong shard (docs/scaling.md: never reorder).
    swapped = open_router(list(reversed(shard_urls)))
    with pytest.raises(NotFound):
        swapped.get_table(tables[0])


def test_each_shard_audits_and_signs_its_own_ledger(
    open_router: Callable[..., ShardedReferee],
) -> None:
    router = open_router()
    per_shard: dict[int, int] = {0: 0, 1: 0}
    while min(per_shard.values()) < 1:
        table_id = open_table(router, "fiftyk", "qq3", 3)  # type: ignore[arg-type]
        play_hand(router, table_id)  # type: ignore[arg-type]
        per_shard[router.shard_index(table_id)] += 1
    results = router.audit()
    assert [result.problems for result in results] == [[], []]
    assert [result.hands for result in results] == [per_shard[0], per_shard[1]]
    checkpoints: list[dict[str, Any]] = [dict(r.checkpoint or {}) for r in results]
    assert [c.get("size") for c in checkpoints] == [per_shard[0], per_shard[1]]


def test_one_shard_is_the_single_database_referee(
    shard_urls: list[str], open_plain: Callable[[int], Referee],
) -> None:
    router = ShardedReferee([env_of(shard_urls[0])], signer=SIGNER)
    try:
        table_id = router.create_table("qq4", {}, 4).table_id
        router.join_table(table_id, "alice", 0)
        assert router.head().token == str(router.shards[0].head_position())
    finally:
        router.close()
    plain = open_plain(0)
    assert plain.get_table(table_id).seats[0] == "alice"
    assert plain.head_position() > 0


@pytest.mark.parametrize(("game", "preset", "seats"), GAMES)
def test_a_watch_on_the_tables_shard_sees_its_events_and_resumes_from_any_position(
    open_router: Callable[..., ShardedReferee], open_plain: Callable[[int], Referee],
    game: str, preset: str, seats: int,
) -> None:
    router = open_router()
    tables = {}
    while len(tables) < 2:  # a table on each shard, both written while one is watched
        table_id = open_table(router, game, preset, seats)  # type: ignore[arg-type]
        tables.setdefault(router.shard_index(table_id), table_id)
    watched_shard, watched = 1, tables[1]
    shard = router.shards[watched_shard]
    executor = ThreadPoolExecutor(max_workers=2)

    async def watch() -> tuple[int, list[tuple[str, int]], list[tuple[str, int]], set[str]]:
        hub = FeedHub(shard, executor)
        await hub.start()
        try:
            loop = asyncio.get_running_loop()
            start = hub.head
            hand_id = await loop.run_in_executor(
                executor, lambda: play_hand(router, watched))  # type: ignore[arg-type]
            await loop.run_in_executor(executor, lambda: play_hand(  # type: ignore[arg-type]
                router, tables[0]))
            ids = {watched, hand_id}
            head = shard.head_position()
            seen = await _follow(hub, start, ids, head)
            middle = seen[len(seen) // 2][1]  # a client that reconnects from there
            resumed = await _follow(hub, middle, ids, head)
            return start, seen, resumed, ids
        finally:
            await hub.stop()

    try:
        start, seen, resumed, ids = asyncio.run(watch())
    finally:
        executor.shutdown(wait=True)
    # What today's referee on that database would stream: the table's and its hand's events.
    feed = open_plain(watched_shard).read_events(start, 1_000).events
    assert seen == [(e.aggregate_id, e.position) for e in feed if e.aggregate_id in ids]
    assert len(seen) > seats
    assert resumed == [item for item in seen if item[1] > seen[len(seen) // 2][1]]
    assert tables[0] not in {e.aggregate_id for e in feed}, "another shard's table leaked"


async def _follow(hub: FeedHub, position: int, ids: set[str], until: int
                  ) -> list[tuple[str, int]]:
    """A watch stream's loop: the events of `ids` after `position`, until the hub has read
    past `until` (bounded: fails after WAIT_SECONDS)."""
    deadline = time.monotonic() + WAIT_SECONDS
    seen: list[tuple[str, int]] = []
    while position < until:
        assert time.monotonic() < deadline, "the hub did not reach the shard's head"
        events = await hub.after(position)
        if not events:
            hub.poke()
            await hub.wait_beyond(position, 1.0)
            continue
        for event in events:
            position = event.position
            if event.aggregate_id in ids:
                seen.append((event.aggregate_id, event.position))
    return seen
