"""Stored topics of earlier versions, resolved to today's classes.

The event store records each event's class as a topic (`module:Class.Event`). Version 0.1.0
kept its packages at the top level (`domain.hand:Hand.CardsPlayed`); they now live under
`fiftyk_referee`, and the 五十K modules in the `fiftyk` game package. Registering the old
aggregate topics lets the library resolve every event and snapshot of such a store (the
event classes are found as attributes of their aggregate). Topics are never removed from
this list: a store keeps its events forever.
"""

from __future__ import annotations

from eventsourcing.utils import get_topic, register_topic

from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.aggregates import AggregateSnapshot
from fiftyk_referee.service.trust.receipts import CommandReceipt

LEGACY_TOPICS: dict[str, type] = {
    "domain.hand:Hand": Hand,
    "domain.table:Table": Table,
    "service.application:CommandReceipt": CommandReceipt,
    # Before the service's modules were put in folders by concern (core/, trust/, ...).
    "fiftyk_referee.service.receipts:CommandReceipt": CommandReceipt,
    "fiftyk_referee.service.aggregates:AggregateSnapshot": AggregateSnapshot,
}


def register_legacy_topics() -> None:
    """Make every topic of LEGACY_TOPICS resolve (idempotent)."""
    for topic, cls in LEGACY_TOPICS.items():
        register_topic(topic, cls)


def stored_topics(event_class: type) -> list[str]:
    """Every topic an event class may be stored under: today's, then those of old versions.

    A stored event's topic is its aggregate's topic plus the event's name, so the old
    aggregate topics of LEGACY_TOPICS give the old event topics.
    """
    current = get_topic(event_class)
    aggregate_topic, _, event = current.rpartition(".")
    topics = [current]
    for old, cls in LEGACY_TOPICS.items():
        if get_topic(cls) == aggregate_topic:
            topics.append(f"{old}.{event}")
    return topics
