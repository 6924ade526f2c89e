"""The hash chain over stored event streams (domain/chain.py)."""

from __future__ import annotations

import json

from fiftyk_referee.domain.chain import (
    GENESIS,
    ChainedEvent,
    check_stream,
    event_hash,
    seal,
    unseal,
)

STREAM = "8d6b5c2e-0000-4000-8000-000000000001"
TOPIC = "fiftyk_referee.domain.fiftyk.hand:Hand.Passed"


def _stream(states: list[bytes], *, unchained: int = 0) -> list[ChainedEvent]:
    events: list[ChainedEvent] = []
    prev = GENESIS
    for version, state in enumerate(states, start=1):
        if version <= unchained:
            events.append(ChainedEvent(version, TOPIC, state, None))
            prev = event_hash(GENESIS, STREAM, version, TOPIC, state)
            continue
        own = event_hash(prev, STREAM, version, TOPIC, state)
        link = unseal(seal(prev, own, state))[0]
        events.append(ChainedEvent(version, TOPIC, state, link))
        prev = own
    return events


STATES = [json.dumps({"seat": i, "timestamp": "2026-12-01"}, separators=(",", ":")).encode()
          for i in range(5)]


def test_a_sealed_state_is_json_with_the_link_first_and_unseals_to_the_same_bytes() -> None:
    state = STATES[0]
    own = event_hash(GENESIS, STREAM, 1, TOPIC, state)
    sealed = seal(GENESIS, own, state)
    assert next(iter(json.loads(sealed))) == "_chain"
    assert json.loads(sealed)["_chain"] == [GENESIS, own]
    link, plain = unseal(sealed)
    assert plain == state and link is not None and link.hash == own
    assert unseal(seal(GENESIS, own, b"{}"))[1] == b"{}"


def test_an_unchained_state_unseals_to_itself() -> None:
    assert unseal(STATES[1]) == (None, STATES[1])
    assert unseal(b'{"_chain":"not a link"}') == (None, b'{"_chain":"not a link"}')


def test_an_intact_stream_verifies_to_its_last_hash() -> None:
    events = _stream(STATES)
    found = check_stream(STREAM, events)
    assert found.ok and found.chained == len(STATES)
    assert found.head == events[-1].link.hash  # type: ignore[union-attr]


def test_an_edited_payload_breaks_its_own_hash() -> None:
    events = _stream(STATES)
    edited = events[2]
    events[2] = ChainedEvent(3, TOPIC, edited.state.replace(b'"seat":2', b'"seat":3'),
                             edited.link)
    found = check_stream(STREAM, events)
    assert not found.ok and found.problem.startswith("version 3 hashes to")


def test_a_deleted_event_leaves_a_gap() -> None:
    events = _stream(STATES)
    found = check_stream(STREAM, [*events[:2], *events[3:]])
    assert not found.ok and "version 4 where version 3" in found.problem


def test_two_reordered_events_break_the_links() -> None:
    events = _stream(STATES)
    swapped = [ChainedEvent(e.version, e.topic, other.state, other.link)
               for e, other in zip(events, [events[0], events[2], events[1], *events[3:]],
                                   strict=True)]
    assert not check_stream(STREAM, swapped).ok


def test_a_re_sealed_deleted_tail_is_caught_by_the_head_it_no_longer_reaches() -> None:
    events = _stream(STATES)
    shorter = check_stream(STREAM, events[:-1])
    assert shorter.ok and shorter.head != check_stream(STREAM, events).head


def test_events_stored_before_the_chain_verify_as_unchained_and_anchor_the_rest() -> None:
    events = _stream(STATES, unchained=2)
    found = check_stream(STREAM, events)
    assert found.ok and (found.unchained, found.chained) == (2, 3)
    legacy_only = check_stream(STREAM, _stream(STATES, unchained=5))
    assert legacy_only.ok and legacy_only.head is None and legacy_only.unchained == 5


def test_an_unchained_event_after_chained_ones_is_tampering() -> None:
    events = _stream(STATES)
    events[3] = ChainedEvent(4, TOPIC, events[3].state, None)
    found = check_stream(STREAM, events)
    assert not found.ok and "no chain link after chained events" in found.problem
