"""The hash chain over stored event streams: each event names its predecessor's hash.

Every stored event of a stream carries two hashes in its stored JSON, as the first key:
`"_chain": [PREV, HASH]`. `HASH` is the SHA-256 (hex) of the event's canonical form::

    "fiftyk-event/1\\n" PREV "\\n" STREAM_ID "\\n" VERSION "\\n" TOPIC "\\n" STATE

where `PREV` is the hash of the stream's previous event (64 zeros for version 1),
`STREAM_ID` the stream's UUID in its dashed form, `VERSION` the event's version in decimal,
`TOPIC` the stored event class and `STATE` the stored JSON *without* the `_chain` key (the
bytes exactly as stored after it, re-opened with `{`). Changing, dropping, inserting or
reordering an event therefore breaks the link of the event after it, and the last hash (the
stream's *head*) commits to the whole stream.

Events stored before the chain existed have no `_chain` key. They verify as "no chain",
never as tampered; the first chained event after one names, as its `PREV`, the hash that
event would have had with a zero `PREV`, so a stream moved across the upgrade stays linked.

Pure standard library: the offline verifier uses this module without the server extra.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

CHAIN_FORMAT = "fiftyk-event/1"
GENESIS = "0" * 64
HASH_HEX_LENGTH = 64
_OPEN = b'{"_chain":["'
_MIDDLE = b'","'
_CLOSE = b'"]'
# `{"_chain":["` PREV `","` HASH `"]` then `,` and the rest of the object, or `}`.
_HEADER_LENGTH = len(_OPEN) + HASH_HEX_LENGTH + len(_MIDDLE) + HASH_HEX_LENGTH + len(_CLOSE)
_HEX_HASH = rb"([0-9a-f]{%d})" % HASH_HEX_LENGTH
_SEALED = re.compile(re.escape(_OPEN) + _HEX_HASH + re.escape(_MIDDLE) + _HEX_HASH
                     + re.escape(_CLOSE) + rb"[,}]")


def canonical_form(prev: str, stream_id: str, version: int, topic: str, state: bytes) -> bytes:
    """The bytes an event's hash covers (see the module docstring)."""
    head = f"{CHAIN_FORMAT}\n{prev}\n{stream_id}\n{version}\n{topic}\n"
    return head.encode() + state


def event_hash(prev: str, stream_id: str, version: int, topic: str, state: bytes) -> str:
    """The hex SHA-256 of an event's canonical form."""
    return hashlib.sha256(canonical_form(prev, stream_id, version, topic, state)).hexdigest()


def seal(prev: str, hash_hex: str, state: bytes) -> bytes:
    """The stored JSON: `state` (a JSON object) with `"_chain": [prev, hash]` as first key."""
    if not state.startswith(b"{"):
        raise ValueError("only a JSON object can carry a chain link")
    rest = state[1:]
    joint = b"" if rest.lstrip() == b"}" else b","
    return _OPEN + prev.encode() + _MIDDLE + hash_hex.encode() + _CLOSE + joint + rest


@dataclass(frozen=True, slots=True)
class Link:
    """A stored event's chain link: its predecessor's hash and its own."""

    prev: str
    hash: str


def unseal(stored: bytes) -> tuple[Link | None, bytes]:
    """(the link, the state without it) of stored JSON; (None, stored) when unchained."""
    if not stored.startswith(_OPEN):
        return None, stored
    found = _SEALED.match(stored)
    if found is None:
        return None, stored
    rest = stored[_HEADER_LENGTH:]
    body = rest[1:] if rest.startswith(b",") else rest
    return Link(found[1].decode(), found[2].decode()), b"{" + body


@dataclass(frozen=True, slots=True)
class ChainedEvent:
    """One event of a stream as evidence carries it: its place, its stored form, its link."""

    version: int
    topic: str
    state: bytes  # the stored JSON without the link
    link: Link | None


@dataclass(frozen=True, slots=True)
class ChainCheck:
    """What checking a stream's chain found."""

    ok: bool
    head: str | None  # the last event's hash (None when no event is chained)
    chained: int  # how many events carry a link
    unchained: int  # events stored before the chain existed
    problem: str = ""


def anchor_of(stream_id: str, event: ChainedEvent) -> str:
    """The hash an unchained event passes to a chained successor (its hash with a zero PREV)."""
    return event_hash(GENESIS, stream_id, event.version, event.topic, event.state)


def check_stream(stream_id: str, events: Iterable[ChainedEvent]) -> ChainCheck:
    """Check a whole stream from version 1: gapless versions, every hash, every link."""
    expected_prev = GENESIS
    head: str | None = None
    chained = unchained = 0
    version = 0
    for event in events:
        version += 1
        if event.version != version:
            return ChainCheck(False, head, chained, unchained,
                              f"version {event.version} where version {version} should be")
        if event.link is None:
            if chained:
                return ChainCheck(False, head, chained, unchained,
                                  f"version {version} has no chain link after chained events")
            unchained += 1
            expected_prev = anchor_of(stream_id, event)
            continue
        if event.link.prev != expected_prev:
            return ChainCheck(False, head, chained, unchained,
                              f"version {version} names {event.link.prev[:16]}… as its"
                              f" predecessor's hash; the predecessor hashes to"
                              f" {expected_prev[:16]}…")
        actual = event_hash(event.link.prev, stream_id, version, event.topic, event.state)
        if actual != event.link.hash:
            return ChainCheck(False, head, chained, unchained,
                              f"version {version} hashes to {actual[:16]}…, not to its"
                              f" stored hash {event.link.hash[:16]}…")
        chained += 1
        head = expected_prev = actual
    return ChainCheck(True, head, chained, unchained)


__all__ = [
    "CHAIN_FORMAT",
    "GENESIS",
    "ChainCheck",
    "ChainedEvent",
    "Link",
    "anchor_of",
    "canonical_form",
    "check_stream",
    "event_hash",
    "seal",
    "unseal",
]
