"""The replay document: what the web table draws for one hand (`fiftyk-replay/1`).

It holds the hand's public events exactly as the API publishes them (docs/events.md), in
the JSON form of `fiftyk.referee.v1.Event` with the proto's field names, in version order;
the last event of each hand of the match so far (for the score chart); and, for a replayed
transcript, the transcript itself (its deal inputs are what the fairness check verifies)
and the ruling. Built from gRPC messages only, so the client-only install writes it too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.games import game_protos
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

REPLAY_FORMAT = "fiftyk-replay/1"
HISTORY_PAGE = 1000  # the largest page GetHandHistory gives (docs/events.md)


@dataclass(frozen=True, slots=True)
class MatchHand:
    """One hand of the table's match: its id, number and last event (None: not over)."""

    hand_id: str
    hand_number: int
    ended: pb.Event | None


def event_json(event: pb.Event) -> dict[str, Any]:
    """An Event as JSON with the proto's field names, zero values and 64-bit ints as numbers
    (a game's `game_event` as its own message's fields, with its `@type`)."""
    game_protos()  # the installed games' messages, which the JSON printer looks up by name
    return json_format.MessageToDict(event, preserving_proto_field_name=True,
                                     always_print_fields_with_no_presence=True,
                                     unquote_int64_if_possible=True)


def game_of(events: Sequence[pb.Event]) -> str:
    """The game a hand's events belong to: their namespace (`<game>.*`)."""
    if not events:
        raise ValueError("a hand has at least its deal event")
    return events[0].name.partition(".")[0]


def is_final(event: pb.Event) -> bool:
    """Whether an event ends its hand (every game names it `<game>.hand_ended`)."""
    return event.name.endswith(".hand_ended")


def replay_document(events: Sequence[pb.Event], *, table_id: str = "", hand_id: str = "",
                    match: Sequence[MatchHand] = (), transcript: Mapping[str, Any] | None = None,
                    result: Mapping[str, Any] | None = None,
                    deal: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The document the page draws for one hand (`deal`: a finished stored hand's deal
    inputs, as its transcript states them)."""
    return {
        "format": REPLAY_FORMAT,
        "game": game_of(events),
        "table_id": table_id,
        "hand_id": hand_id,
        "events": [event_json(e) for e in events],
        "match": [{"hand_id": h.hand_id, "hand_number": h.hand_number,
                   "ended": event_json(h.ended) if h.ended is not None else None}
                  for h in match],
        "transcript": dict(transcript) if transcript is not None else None,
        "result": dict(result) if result is not None else None,
        "deal": dict(deal) if deal is not None else None,
    }


def _table_id(dealt: pb.Event) -> str:
    # Every game's deal event names its table (docs/events.md).
    payload = dealt.WhichOneof("payload")
    return str(getattr(getattr(dealt, payload), "table_id", "")) if payload else ""


def _ended(client: RefereeClient, table_id: str, hand_id: str) -> pb.Event | None:
    """A hand's last event if it ended it (two small calls, not the whole history)."""
    version = client.hand_view(table_id, hand_id).version
    last = client.hand_history(hand_id, after_version=version - 1, limit=1).events
    return last[0] if last and is_final(last[0]) else None


def _all_events(client: RefereeClient, hand_id: str) -> list[pb.Event]:
    """Every event of a hand, in pages as large as the server gives (one for most hands)."""
    events: list[pb.Event] = []
    while True:
        after = events[-1].aggregate_version if events else 0
        page = client.hand_history(hand_id, after_version=after, limit=HISTORY_PAGE)
        events.extend(page.events)
        if not page.has_more or not page.events:
            return events


def hand_document(client: RefereeClient, hand_id: str) -> dict[str, Any]:
    """A stored hand's document, with its table's match up to it (the client is audit)."""
    events = _all_events(client, hand_id)
    table_id = _table_id(events[0]) if events else ""
    match: list[MatchHand] = []
    if table_id:
        for number, other in enumerate(client.get_table(table_id).hand_ids, start=1):
            if other == hand_id:
                match.append(MatchHand(other, number, events[-1] if is_final(events[-1])
                                       else None))
                break
            match.append(MatchHand(other, number, _ended(client, table_id, other)))
    # A finished hand's deal inputs, for the fairness check: the algorithm and, for a
    # seat-entropy deal, the contributions are in no hand event.
    deal = client.export_transcript(hand_id).get("deal") if events and is_final(events[-1]) \
        else None
    return replay_document(events, table_id=table_id, hand_id=hand_id, match=match, deal=deal)


__all__ = ["REPLAY_FORMAT", "MatchHand", "event_json", "game_of", "hand_document", "is_final",
           "replay_document"]
