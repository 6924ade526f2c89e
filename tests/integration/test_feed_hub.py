"""The feed hub's memory: it holds only a few pages of the newest events, however long the
feed grows, and a watcher further behind reads the older events from the store — every
event once, in order, for tables of every hosted game."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.feed import PAGE, FeedHub
from fiftyk_referee.service.core.public_events import PUBLIC_EVENTS
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.ops.config import parse_database_url

WAIT_SECONDS = 120.0
NEVER_SECONDS = 3_600.0  # the hub's poll interval: it reads when poked
POLL_SECONDS = 0.02
HELD_AT_MOST = 4 * PAGE  # a few pages: what watchers near the head need
EVENTS_WRITTEN = HELD_AT_MOST + PAGE  # more than the hub may hold
GAMES = (("fiftyk", "classic", 4), ("shengji", "tractor", 4), ("doudizhu", "classic", 3))


def _write_tables(app: Referee, events: int) -> None:
    """Tables of every hosted game, seated, until at least `events` events were recorded."""
    start = app.head_position()
    number = 0
    while app.head_position() - start < events:
        game, preset, players = GAMES[number % len(GAMES)]
        table_id = app.create_table(preset, {}, players, game=game).table_id
        for seat in range(players):
            app.join_table(table_id, f"held-{number}-{seat}", seat)
        number += 1


def test_the_hub_holds_a_few_pages_and_a_watcher_behind_them_reads_the_store(
        tmp_path: Path) -> None:
    app = Referee(persistence_env(parse_database_url("", tmp_path)))
    executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="test-hub")

    async def scenario() -> tuple[int, list[int]]:
        loop = asyncio.get_running_loop()
        hub = FeedHub(app, executor, poll_seconds=NEVER_SECONDS)
        await hub.start()
        try:
            await loop.run_in_executor(executor, _write_tables, app, EVENTS_WRITTEN)
            head = await loop.run_in_executor(executor, app.head_position)
            deadline = loop.time() + WAIT_SECONDS
            while hub.head < head:
                assert loop.time() < deadline, "the hub did not read the feed"
                hub.poke()
                await asyncio.sleep(POLL_SECONDS)
            # A watcher from the very start: the older part from the store, then memory.
            seen: list[int] = []
            position = 0
            while position < hub.head:
                page = await hub.after(position)
                assert page, f"nothing after {position} below the head {hub.head}"
                seen.extend(event.position for event in page)
                position = page[-1].position
            return hub.held, seen
        finally:
            await hub.stop()

    try:
        held, seen = asyncio.run(scenario())
        every = [n.id for n in app.recorder.select_notifications(
            start=None, limit=10 * EVENTS_WRITTEN, topics=PUBLIC_EVENTS.topics())]
    finally:
        executor.shutdown(wait=True)
        app.close()
    assert len(every) >= EVENTS_WRITTEN
    assert 0 < held <= HELD_AT_MOST
    assert seen == every  # every event once, in order
