"""The shard map and the feed's resume token across shards (service/core/shards.py), no store."""

from __future__ import annotations

import uuid
from collections import Counter

import pytest

from fiftyk_referee.service.core.shards import MAX_SHARDS, ShardPositions, shard_of
from fiftyk_referee.service.errors import InvalidArgument, ServiceReason

# Where these ids live, for ever: a change here moves every stored table to another shard.
PLACED = {
    "00000000-0000-0000-0000-000000000000": [0, 1, 1, 3, 3],
    "ffffffff-ffff-ffff-ffff-ffffffffffff": [0, 1, 2, 1, 5],
    "6f9619ff-8b86-d011-b42d-00c04fc964ff": [0, 1, 0, 1, 5],
}
COUNTS = (1, 2, 3, 4, 8)
SPREAD_IDS = 4_000


@pytest.mark.parametrize(("table_id", "shards"), PLACED.items())
def test_a_tables_shard_never_changes(table_id: str, shards: list[int]) -> None:
    assert [shard_of(uuid.UUID(table_id), count) for count in COUNTS] == shards


@pytest.mark.parametrize("count", [2, 3, 8])
def test_tables_spread_evenly_over_the_shards(count: int) -> None:
    ids = (uuid.uuid5(uuid.NAMESPACE_URL, f"table/{n}") for n in range(SPREAD_IDS))
    spread = Counter(shard_of(table_id, count) for table_id in ids)
    assert sorted(spread) == list(range(count))
    fair = SPREAD_IDS / count
    assert all(0.8 * fair <= n <= 1.2 * fair for n in spread.values()), spread


@pytest.mark.parametrize("count", [0, MAX_SHARDS + 1])
def test_a_shard_count_out_of_range_is_refused(count: int) -> None:
    with pytest.raises(ValueError, match="shards"):
        shard_of(uuid.uuid4(), count)


def test_one_shard_keeps_todays_plain_feed_position() -> None:
    assert ShardPositions((12,)).token == "12"
    assert ShardPositions.parse("12", 1) == ShardPositions((12,))
    assert ShardPositions.parse("", 1) == ShardPositions.start(1)


def test_a_token_of_several_shards_reads_back_as_it_was_written() -> None:
    place = ShardPositions.start(3).advanced(1, 40).advanced(2, 7)
    assert place.token == "shards1.0.40.7"
    assert ShardPositions.parse(place.token, 3) == place


@pytest.mark.parametrize("token", ["12", "shards1.3", "shards1.3.-5", "shards1.3.x",
                                   "shards1.1.2.3", "shards2.1.2", "1.2"])
def test_a_feed_token_of_another_shape_is_refused(token: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        ShardPositions.parse(token, 2)
    assert refused.value.reason == ServiceReason.INVALID_REQUEST
