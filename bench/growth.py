"""How the referee's costs grow: memory per idle table, store size, hand length, the feed.

The measurements of `scripts/bench suite` figures 3 (memory) and 4:

- `idle_table_memory`: a server's VmRSS before and after creating tables through the gRPC
  API (four seated players and a dealt hand each), divided by the tables created.
- `fill_store` grows a store to a number of events: a template table plays complete hands
  through the application, then copies of the template (fresh table and hand ids written
  into the stored events, hand ids derived as the domain derives them) are appended in bulk
  through the application's recorder, so the store holds consistent, replayable streams.
- `command_latency`: per-command latency of one fresh table playing through the application
  in-process (the client's move choice is not timed) — on a small and a large store.
- `rebuild_by_length`: a long hand replayed from the store at increasing versions.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from uuid import UUID, uuid4

from eventsourcing.persistence import StoredEvent

from bench.store import TablePlayer, fiftyk_hand, store_env
from fiftyk_referee.domain.chain import GENESIS, event_hash, seal, unseal
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.grpc.client import RefereeClient

PRESET = "classic"
PLAYERS = 4
PASS_PROBABILITY = 0.4
MS = 1_000.0
US = 1_000_000.0
TEMPLATE_HANDS_MAX = 8
INSERT_BATCH_EVENTS = 5_000
MEMORY_WARMUP_TABLES = 20
MEMORY_CHECKPOINTS = 4
MEMORY_CLIENT_THREADS = 4
PERCENT_95 = 0.95
REBUILD_VERSIONS = (25, 50, 100, 200, 400, 800)


# -- memory per idle table --------------------------------------------------------------------


@dataclass
class MemoryGrowth:
    """VmRSS of a server before and after creating idle tables with a dealt hand."""

    tables: int
    rss_before_kib: int
    rss_after_kib: int
    per_table_kib: float
    checkpoints: list[tuple[int, int]]  # (tables created so far, VmRSS KiB)
    seconds: float


def open_dealt_table(platform: RefereeClient, index: int) -> None:
    """One table through the API: created, four players seated, a hand dealt (then idle)."""
    table_id = platform.create_table(PRESET, PLAYERS, name=f"idle-{index}").table.table_id
    tokens = [platform.join_table(table_id, f"idle-{index}-{seat}").seat_token
              for seat in range(PLAYERS)]
    platform.as_seat(tokens[0]).start_hand(table_id)


def idle_table_memory(target: str, read_rss_kib: Callable[[], int], tables: int,
                      platform_key: str) -> MemoryGrowth:
    """Create `tables` idle tables with a dealt hand; the server's RSS growth per table."""
    client = RefereeClient(target)
    platform = client.as_platform(platform_key)
    try:
        with ThreadPoolExecutor(max_workers=MEMORY_CLIENT_THREADS) as pool:
            # Warm-up: first-call allocations (imports, pools, caches) are not per table.
            list(pool.map(lambda i: open_dealt_table(platform, -1 - i),
                          range(MEMORY_WARMUP_TABLES)))
            before = read_rss_kib()
            started = time.perf_counter()
            checkpoints: list[tuple[int, int]] = []
            step = max(1, tables // MEMORY_CHECKPOINTS)
            done = 0
            while done < tables:
                batch = min(step, tables - done)
                list(pool.map(lambda i: open_dealt_table(platform, i),
                              range(done, done + batch)))
                done += batch
                checkpoints.append((done, read_rss_kib()))
            seconds = time.perf_counter() - started
    finally:
        client.close()
    after = checkpoints[-1][1]
    return MemoryGrowth(tables=tables, rss_before_kib=before, rss_after_kib=after,
                        per_table_kib=(after - before) / tables, checkpoints=checkpoints,
                        seconds=seconds)


# -- growing a store --------------------------------------------------------------------------


@dataclass
class Filled:
    """A store grown to a size: how, and how long it took."""

    events: int
    template_events: int
    template_hands: int
    copies: int
    seconds: float


def _move(app: Referee, table_id: UUID, hand: Hand, rng: random.Random) -> Hand | None:
    seat = hand.turn
    if seat is None:
        raise RuntimeError("a hand in progress has nobody to play")
    if hand.top is None:
        return fiftyk_hand(app.play(table_id, hand.id, seat, [str(rng.choice(hand.hands[seat]))]))
    plays = hand.legal_plays(seat)
    if plays and rng.random() >= PASS_PROBABILITY:
        return fiftyk_hand(app.play(table_id, hand.id, seat, rng.choice(plays).card_strings()))
    return fiftyk_hand(app.pass_turn(table_id, hand.id, seat))


def open_table(app: Referee, prefix: str) -> UUID:
    """A classic table with four seated players."""
    table_id = app.create_table(PRESET, {}, PLAYERS).table_id
    for seat in range(PLAYERS):
        app.join_table(table_id, f"{prefix}-{seat}", seat)
    return UUID(str(table_id))


def play_hand(app: Referee, table_id: UUID, rng: random.Random) -> Hand:
    """Deal and play one complete hand of random legal moves through the application."""
    hand: Hand | None = fiftyk_hand(app.start_hand(table_id))
    while hand is not None and not hand.is_over:
        hand = _move(app, table_id, hand, rng)
    if hand is None:
        raise RuntimeError("a command returned no hand")
    return hand


def _stream(app: Referee, aggregate_id: UUID) -> list[StoredEvent]:
    return list(app.recorder.select_events(aggregate_id))


def copy_table(template: list[tuple[UUID, list[StoredEvent]]], table_id: UUID,
               hand_numbers: dict[UUID, int]) -> list[StoredEvent]:
    """The template's streams under a new table id (hand ids derived from it and the number)."""
    new_hand_ids = {old: Hand.create_id(str(table_id), number)
                    for old, number in hand_numbers.items()}
    renames = {template[0][0]: table_id, **new_hand_ids}
    replacements = [(old_form, new_form) for old, new in renames.items()
                    for old_form, new_form in ((str(old).encode(), str(new).encode()),
                                               (old.hex.encode(), new.hex.encode()))]
    copied = []
    # The copies are sealed again (their ids are in the chain's hashes), the hands first so
    # that the table's copy records their new heads.
    for old_id, events in [*template[1:], template[0]]:
        prev = GENESIS
        for stored in events:
            state = unseal(stored.state)[1]
            for old_form, new_form in replacements:
                state = state.replace(old_form, new_form)
            own = event_hash(prev, str(renames[old_id]), stored.originator_version,
                             stored.topic, state)
            copied.append(StoredEvent(originator_id=renames[old_id],
                                      originator_version=stored.originator_version,
                                      topic=stored.topic, state=seal(prev, own, state)))
            prev = own
        old_head = unseal(events[-1].state)[0] if events else None
        if old_head is not None and old_id != template[0][0]:
            replacements.append((old_head.hash.encode(), prev.encode()))
    return copied


def fill_store(app: Referee, events: int, seed: int = 7,
               template_hands: int = TEMPLATE_HANDS_MAX) -> Filled:
    """Grow the store to at least `events` events (template hands, then bulk copies)."""
    if app.mapper.cipher is not None or app.mapper.compressor is not None:
        raise RuntimeError("copying stored events needs plain JSON state")
    started = time.perf_counter()
    rng = random.Random(seed)
    table_id = open_table(app, f"fill-{seed}")
    hand_numbers: dict[UUID, int] = {}
    while app.head_position() < events and len(hand_numbers) < template_hands:
        hand = play_hand(app, table_id, rng)
        hand_numbers[hand.id] = hand.number
    template_events = app.head_position()
    template = [(table_id, _stream(app, table_id))]
    template += [(hand_id, _stream(app, hand_id)) for hand_id in hand_numbers]
    copies = 0
    batch: list[StoredEvent] = []
    head = template_events
    while head + len(batch) < events:
        batch += copy_table(template, uuid4(), hand_numbers)
        copies += 1
        if len(batch) >= INSERT_BATCH_EVENTS:
            app.recorder.insert_events(batch)
            head += len(batch)
            batch = []
    if batch:
        app.recorder.insert_events(batch)
    return Filled(events=app.head_position(), template_events=template_events,
                  template_hands=len(hand_numbers), copies=copies,
                  seconds=time.perf_counter() - started)


# -- command latency on a fresh table ----------------------------------------------------------


def command_latency(app: Referee, seconds: float, seed: int) -> list[float]:
    """Latencies (ms) of one fresh table's commands through the application for `seconds`."""
    player = TablePlayer(app, seed, (0.0, 0.0))
    # The window opens once the table is set up: on a loaded machine, creating it and seating
    # its players can take longer than the window itself, which then measured nothing.
    now = time.time()
    player.start_at, player.stop_at = now, now + seconds
    player.run()  # in this thread: one table, no concurrency, nothing but the store's growth
    if player.error is not None:
        raise player.error
    return [x * MS for x in player.latencies]


@dataclass
class SizeSample:
    """One latency sample on a store of some size."""

    store: str  # "small" or "big"
    events_before: int
    events_after: int
    median_ms: float
    p95_ms: float
    commands: int


def latency_by_store_size(fresh_small: Callable[[], Referee], big: Referee, small_events: int,
                          repeats: int, seconds: float) -> list[SizeSample]:
    """Alternate latency samples on the big store and on small ones.

    Each small sample gets a fresh store filled to `small_events` (its fill warms the
    application), since the sample's own commands would soon make a reused one large; the
    big store is warmed once and reused (a sample barely changes its size).
    """
    command_latency(big, seconds, seed=999)
    samples = []
    for repeat in range(repeats):
        small = fresh_small()
        try:
            fill_store(small, small_events, seed=repeat + 1)
            order = [("small", small), ("big", big)]
            if repeat % 2:
                order.reverse()
            for name, app in order:
                before = app.head_position()
                values = sorted(command_latency(app, seconds, seed=1_000 + repeat))
                samples.append(SizeSample(
                    store=name, events_before=before, events_after=app.head_position(),
                    median_ms=statistics.median(values),
                    p95_ms=values[min(len(values) - 1, int(len(values) * PERCENT_95))],
                    commands=len(values)))
        finally:
            small.close()
    return samples


# -- rebuild time by hand length --------------------------------------------------------------


@dataclass
class RebuildPoint:
    """Replaying one hand from the store up to a version."""

    version: int
    median_ms: float
    us_per_event: float
    samples: int


def play_long_hand(app: Referee) -> Hand:
    """A hand as long as the rules allow: every trick is one single and three passes."""
    table_id = open_table(app, "long")
    hand: Hand | None = fiftyk_hand(app.start_hand(table_id))
    while hand is not None and not hand.is_over:
        seat = hand.turn
        if seat is None:
            raise RuntimeError("a hand in progress has nobody to play")
        if hand.top is None:
            lowest = min(hand.hands[seat], key=lambda card: card.rank)
            hand = fiftyk_hand(app.play(table_id, hand.id, seat, [str(lowest)]))
        else:
            hand = fiftyk_hand(app.pass_turn(table_id, hand.id, seat))
    if hand is None:
        raise RuntimeError("a command returned no hand")
    return hand


def rebuild_by_length(app: Referee, hand: Hand, repeats: int,
                      versions: Sequence[int] = REBUILD_VERSIONS) -> list[RebuildPoint]:
    """Median time of `hand_at` (read + replay, no cache) at each version up to the last."""
    chosen = [v for v in versions if v < hand.version] + [hand.version]
    points = []
    for version in chosen:
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            app.hand_at(hand.id, version)
            times.append((time.perf_counter() - started) * MS)
        median = statistics.median(times)
        points.append(RebuildPoint(version=version, median_ms=median,
                                   us_per_event=median * (US / MS) / version,
                                   samples=repeats))
    return points


def linear_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares intercept and slope of ys over xs (slope 0 for fewer than two points)."""
    if len(xs) < 2 or len(set(xs)) < 2:
        return (statistics.fmean(ys) if ys else 0.0), 0.0
    slope, intercept = statistics.linear_regression(xs, ys)
    return intercept, slope


def application(database_url: str, *, cache: bool = True) -> Referee:
    """An in-process application on a database, sized for one thread."""
    return Referee(store_env(database_url, 1, cache=cache))


__all__ = ["Filled", "MemoryGrowth", "RebuildPoint",
           "SizeSample", "application", "command_latency", "copy_table", "fill_store",
           "idle_table_memory", "latency_by_store_size",
           "linear_fit",
           "open_dealt_table", "open_table", "play_hand", "play_long_hand",
           "rebuild_by_length"]
