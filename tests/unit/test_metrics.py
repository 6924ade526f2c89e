"""Metrics: bounded labels, exposition and the numbers each observation moves."""

from __future__ import annotations

import re

import pytest

from fiftyk_referee.domain.cards import SUITS, parse_cards
from fiftyk_referee.domain.fiftyk.combinations import classify
from fiftyk_referee.domain.fiftyk.game import bomb_size_label
from fiftyk_referee.domain.fiftyk.rulesets import OPTIONS, Ruleset
from fiftyk_referee.domain.game import Observation
from fiftyk_referee.service.errors import ServiceReason
from fiftyk_referee.service.ops.metrics import LATENCY_BUCKETS, Metrics

TRICK = Observation("tricks")


def bomb(size: str) -> Observation:
    """A bomb 五十K observed."""
    return Observation("bombs", size)


def value(metrics: Metrics, name: str, **labels: str) -> float:
    """The current value of one sample, 0 when it was never observed."""
    sample = metrics.registry.get_sample_value(name, labels)
    return 0.0 if sample is None else sample


# Domain and store metrics.


def test_every_games_action_kinds_are_command_labels() -> None:
    metrics = Metrics()
    metrics.command("declare", "accepted")
    metrics.command("bury", "WRONG_BURY_COUNT")
    assert value(metrics, "fiftyk_commands_total", command="declare", outcome="accepted") == 1
    assert value(metrics, "fiftyk_commands_total", command="bury",
                 outcome="WRONG_BURY_COUNT") == 1


def test_command_counts_kind_and_outcome_with_camel_case_kinds_normalised() -> None:
    metrics = Metrics()
    metrics.command("play", "accepted")
    metrics.command("Play", "accepted")
    metrics.command("StartHand", "TABLE_NOT_FULL")
    assert value(metrics, "fiftyk_commands_total", command="play", outcome="accepted") == 2
    assert value(
        metrics, "fiftyk_commands_total", command="start_hand", outcome="TABLE_NOT_FULL"
    ) == 1


def test_service_reason_codes_are_outcomes_too() -> None:
    metrics = Metrics()
    metrics.command("play", ServiceReason.CONCURRENT_UPDATE)
    assert value(
        metrics, "fiftyk_commands_total", command="play", outcome="CONCURRENT_UPDATE"
    ) == 1


def test_labels_from_outside_never_take_unbounded_values() -> None:
    metrics = Metrics()
    metrics.command("play", "table 1234 exploded")
    metrics.command("delete_everything", "accepted")
    metrics.hand_started("fiftyk", "preset-of-the-day")
    metrics.hand_started("chess", "classic")
    metrics.observe("fiftyk", "classic", bomb("bomb_99"))
    metrics.observe("fiftyk", "classic", Observation("no_such_counter"))
    assert value(metrics, "fiftyk_commands_total", command="play", outcome="OTHER") == 1
    assert value(metrics, "fiftyk_commands_total", command="other", outcome="accepted") == 1
    assert value(metrics, "fiftyk_hands_started_total", game="fiftyk", preset="other") == 1
    assert value(metrics, "fiftyk_hands_started_total", game="other", preset="other") == 1
    assert value(metrics, "fiftyk_bombs_total", game="fiftyk", preset="classic",
                 size="other") == 1
    assert b"exploded" not in metrics.render()
    assert b"no_such_counter" not in metrics.render()


def test_bomb_size_label_names_n_of_a_kind_by_count_and_special_bombs_by_type() -> None:
    classic = Ruleset.from_spec("classic")
    four = classify(parse_cards("7S 7H 7C 7D"), classic)
    fifty_k = classify(parse_cards("5S 10H KC"), classic)
    pure = classify(parse_cards("5S 10S KS"), classic)
    labels = [bomb_size_label(c.type, len(c.cards)) for c in (four, fifty_k, pure)]
    assert tuple(labels) == (
        "bomb_4", "fifty_k", "pure_fifty_k",
    )


def test_bomb_sizes_shown_at_zero_are_exactly_the_n_of_a_kind_a_ruleset_can_make() -> None:
    """Every n-of-a-kind bomb some ruleset can make shows from the first scrape, and no
    other: the smallest is `min_bomb`'s smallest choice (triples as bombs), the largest every
    card of a rank in the largest deal (eight, two packs)."""
    choices = {spec.name: [int(str(choice)) for choice in spec.choices] for spec in OPTIONS
               if spec.name in {"min_bomb", "packs"}}
    smallest, largest = min(choices["min_bomb"]), max(choices["packs"]) * len(SUITS)
    text = Metrics().render().decode()
    sizes = set(re.findall(r'fiftyk_bombs_total\{game="fiftyk",preset="classic",size="bomb_(\d+)"',
                           text))
    assert sorted(int(size) for size in sizes) == list(range(smallest, largest + 1))


def test_game_and_store_metrics_move_by_the_observed_amounts() -> None:
    metrics = Metrics()
    metrics.hand_started("fiftyk", "classic")
    metrics.hand_started("fiftyk", "classic")
    metrics.hand_completed("fiftyk", "classic")
    for _ in range(5):
        metrics.observe("fiftyk", "jinzhou", TRICK)
    metrics.observe("fiftyk", "jinzhou", bomb("bomb_4"))
    metrics.observe_append(0.002)
    metrics.observe_append(0.2)
    metrics.conflict()
    metrics.retry()
    metrics.retry()
    metrics.idempotent_replay()
    metrics.observe_rebuild(0.03)
    metrics.count_active_tables_with(lambda: 7)
    metrics.watch_opened()
    metrics.watch_opened()
    metrics.watch_closed()
    assert value(metrics, "fiftyk_hands_started_total", game="fiftyk", preset="classic") == 2
    assert value(metrics, "fiftyk_hands_completed_total", game="fiftyk", preset="classic") == 1
    assert value(metrics, "fiftyk_tricks_total", game="fiftyk", preset="jinzhou") == 5
    assert value(metrics, "fiftyk_bombs_total", game="fiftyk", preset="jinzhou",
                 size="bomb_4") == 1
    assert value(metrics, "fiftyk_event_store_append_seconds_count") == 2
    assert value(metrics, "fiftyk_event_store_append_seconds_sum") == pytest.approx(0.202)
    assert value(metrics, "fiftyk_event_store_append_seconds_bucket", le="0.0025") == 1
    assert value(metrics, "fiftyk_event_store_conflicts_total") == 1
    assert value(metrics, "fiftyk_command_retries_total") == 2
    assert value(metrics, "fiftyk_idempotent_replays_total") == 1
    assert value(metrics, "fiftyk_rebuild_seconds_count") == 1
    assert value(metrics, "fiftyk_active_tables") == 7
    assert value(metrics, "fiftyk_watch_streams_open") == 1


def test_latency_buckets_run_from_half_a_millisecond_to_ten_seconds() -> None:
    assert (LATENCY_BUCKETS[0], LATENCY_BUCKETS[-1]) == (0.0005, 10.0)
    assert list(LATENCY_BUCKETS) == sorted(LATENCY_BUCKETS)


def test_two_metrics_objects_in_one_process_keep_separate_numbers() -> None:
    first, second = Metrics(), Metrics()
    first.conflict()
    assert (value(first, "fiftyk_event_store_conflicts_total"),
            value(second, "fiftyk_event_store_conflicts_total")) == (1, 0)


def test_the_exposition_has_no_created_series() -> None:
    metrics = Metrics()
    metrics.command("play", "accepted")
    metrics.observe_append(0.001)
    metrics.rate_limited("player", "command")
    assert "_created" not in metrics.render().decode()


def test_shengji_hands_are_counted_under_their_game() -> None:
    metrics = Metrics()
    metrics.hand_started("shengji", "tractor")
    metrics.observe("shengji", "tractor", TRICK)
    metrics.observe("shengji", "no-such-preset", TRICK)
    assert value(metrics, "fiftyk_hands_started_total", game="shengji", preset="tractor") == 1
    assert value(metrics, "fiftyk_tricks_total", game="shengji", preset="tractor") == 1
    assert value(metrics, "fiftyk_tricks_total", game="shengji", preset="other") == 1


def test_the_default_process_and_python_collectors_are_exported() -> None:
    exposition = Metrics().render().decode()
    for name in ("process_resident_memory_bytes", "process_cpu_seconds_total",
                 "process_open_fds", "process_max_fds", "process_start_time_seconds",
                 "python_info", "python_gc_collections_total"):
        assert f"\n{name}" in exposition, name
