"""Stored topics of earlier versions, resolved to today's classes.

The event store records each event's class as a topic (`module:Class.Event`). Version 0.1.0
kept its packages at the top level (`domain.table:Table`); they now live under
`fiftyk_referee`, and a game's modules in its own package. Registering the old aggregate
topics lets the library resolve every event and snapshot of such a store (the event classes
are found as attributes of their aggregate). The core's are listed here, a game's by its
bundle (`GameBundle.legacy_topics`). Topics are never removed: a store keeps its events
forever.
"""

from __future__ import annotations

from eventsourcing.utils import get_topic, register_topic

from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.aggregates import AggregateSnapshot
from fiftyk_referee.service.core.bundles import installed
from fiftyk_referee.service.trust.receipts import CommandReceipt

CORE_LEGACY_TOPICS: dict[str, type] = {
    "domain.table:Table": Table,
    "service.application:CommandReceipt": CommandReceipt,
    # Before the service's modules were put in folders by concern (core/, trust/, ...).
    "fiftyk_referee.service.receipts:CommandReceipt": CommandReceipt,
    "fiftyk_referee.service.aggregates:AggregateSnapshot": AggregateSnapshot,
}


def legacy_topics() -> dict[str, type]:
    """Every old aggregate topic: the core's and the installed games'."""
    topics = dict(CORE_LEGACY_TOPICS)
    for bundle in installed().values():
        topics.update(bundle.legacy_topics)
    return topics


def register_legacy_topics() -> None:
    """Make every old topic resolve (idempotent)."""
    for topic, cls in legacy_topics().items():
        register_topic(topic, cls)


def stored_topics(event_class: type) -> list[str]:
    """Every topic an event class may be stored under: today's, then those of old versions.

    A stored event's topic is its aggregate's topic plus the event's name, so the old
    aggregate topics give the old event topics.
    """
    current = get_topic(event_class)
    aggregate_topic, _, event = current.rpartition(".")
    topics = [current]
    for old, cls in legacy_topics().items():
        if get_topic(cls) == aggregate_topic:
            topics.append(f"{old}.{event}")
    return topics
