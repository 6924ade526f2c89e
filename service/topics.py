"""Stored topics of earlier versions, resolved to today's classes.

The event store records each event's class as a topic (`module:Class.Event`). Version 0.1.0
kept its packages at the top level (`domain.hand:Hand.CardsPlayed`); they now live under
`fiftyk_referee`, and the 五十K modules in the `fiftyk` game package. Registering the old
aggregate topics lets the library resolve every event and snapshot of such a store (the
event classes are found as attributes of their aggregate). Topics are never removed from
this list: a store keeps its events forever.
"""

from __future__ import annotations

from eventsourcing.utils import register_topic

from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.receipts import CommandReceipt

LEGACY_TOPICS: dict[str, type] = {
    "domain.hand:Hand": Hand,
    "domain.table:Table": Table,
    "service.application:CommandReceipt": CommandReceipt,
}


def register_legacy_topics() -> None:
    """Make every topic of LEGACY_TOPICS resolve (idempotent)."""
    for topic, cls in LEGACY_TOPICS.items():
        register_topic(topic, cls)
