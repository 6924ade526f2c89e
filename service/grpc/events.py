"""Public events at the gRPC edge: a viewer's `PublicEvent` as a fiftyk.referee.v1.Event.

One builder per public payload class: a table event's fills its field of the `payload` oneof;
a game's event builds the game's own message, which goes in `game_event` (an Any) and, for
0.2 clients, in its field of `payload` where it has one. The envelope (name, position,
aggregate id and version, timestamp) is the same for all. Decimals travel as exact text,
cards in their canonical notation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf import timestamp_pb2
from google.protobuf.message import Message

from fiftyk_referee.domain import table_events as table
from fiftyk_referee.domain.events import PublicEvent
from fiftyk_referee.domain.table import rules_of
from fiftyk_referee.service.core.public_events import FeedEvent
from fiftyk_referee.service.grpc.convert import (
    ruleset_to_proto,
    side_totals,
    spectators_to_proto,
    struct_of,
)
from fiftyk_referee.service.grpc.games import Payloads, all_payloads, legacy_copy
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.paging import shown_name


def _opened(event: table.TableOpened) -> pb.TableOpened:
    rules = rules_of(event.game, event.ruleset)
    return pb.TableOpened(game=event.game,
                          ruleset=ruleset_to_proto(event.ruleset, rules, event.game),
                          players=event.players, allow_preset_deck=event.allow_preset_deck,
                          name=shown_name(event.table_name),
                          spectators=spectators_to_proto(event.spectators))


def _seat_taken(event: table.SeatTaken) -> pb.TableSeatTaken:
    return pb.TableSeatTaken(seat=event.seat, player_id=event.player_id,
                             public_key=event.public_key or "")


def _seat_left(event: table.SeatLeft) -> pb.TableSeatLeft:
    return pb.TableSeatLeft(seat=event.seat)


def _hand_started(event: table.HandStarted) -> pb.TableHandStarted:
    return pb.TableHandStarted(hand_id=event.hand_id, hand_number=event.hand_number,
                               dealer=event.dealer, contributions=event.contributions or (),
                               withheld=event.withheld)


def _hand_recorded(event: table.HandRecorded) -> pb.TableHandRecorded:
    return pb.TableHandRecorded(hand_id=event.hand_id, scores=side_totals(event.totals),
                                hand_head=event.hand_head)


def _match_ended(event: table.MatchEnded) -> pb.TableMatchEnded:
    return pb.TableMatchEnded(reason=event.reason)


def _seat_replaced(event: table.SeatReplaced) -> pb.TableSeatReplaced:
    return pb.TableSeatReplaced(seat=event.seat, previous_player_id=event.previous_player_id,
                                player_id=event.player_id)


def _token_reissued(event: table.SeatTokenReissued) -> pb.TableSeatTokenReissued:
    return pb.TableSeatTokenReissued(seat=event.seat, player_id=event.player_id)


def _closed(event: table.TableClosed) -> pb.TableClosed:
    return pb.TableClosed(reason=event.reason)


def _hand_voided(event: table.HandVoided) -> pb.TableHandVoided:
    return pb.TableHandVoided(hand_id=event.hand_id, reason=event.reason)


def _draw_opened(event: table.DrawOpened) -> pb.TableDrawOpened:
    message = pb.TableDrawOpened(hand_number=event.hand_number, commitment=event.commitment)
    message.deadline.FromDatetime(event.deadline)
    if event.commit_deadline is not None:
        message.commit_deadline.FromDatetime(event.commit_deadline)
    return message


def _entropy_committed(event: table.EntropyCommitted) -> pb.TableEntropyCommitted:
    return pb.TableEntropyCommitted(seat=event.seat, commitment=event.commitment)


def _entropy_contributed(event: table.EntropyContributed) -> pb.TableEntropyContributed:
    return pb.TableEntropyContributed(seat=event.seat, entropy_sha256=event.entropy_sha256)


# Public payload class -> (its field of Event's `payload` oneof, its message builder): the
# table's; each game's come from its converters at the edge (`service/games/<game>/`).
TABLE_PAYLOADS: dict[type[PublicEvent], tuple[str, Callable[[Any], Message]]] = {
    table.TableOpened: ("table_opened", _opened),
    table.SeatTaken: ("table_seat_taken", _seat_taken),
    table.SeatLeft: ("table_seat_left", _seat_left),
    table.HandStarted: ("table_hand_started", _hand_started),
    table.HandRecorded: ("table_hand_recorded", _hand_recorded),
    table.MatchEnded: ("table_match_ended", _match_ended),
    table.SeatReplaced: ("table_seat_replaced", _seat_replaced),
    table.SeatTokenReissued: ("table_seat_token_reissued", _token_reissued),
    table.TableClosed: ("table_closed", _closed),
    table.HandVoided: ("table_hand_voided", _hand_voided),
    table.DrawOpened: ("table_draw_opened", _draw_opened),
    table.EntropyContributed: ("table_entropy_contributed", _entropy_contributed),
    table.EntropyCommitted: ("table_entropy_committed", _entropy_committed),
}


def payloads() -> Payloads:
    """Every public payload class with a message of its own: the table's and each game's."""
    return {**TABLE_PAYLOADS, **all_payloads()}


def event_to_proto(event: FeedEvent, public: PublicEvent) -> pb.Event:
    """A feed event, as one viewer sees it (`public`), as the Event message."""
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(event.timestamp)
    message = pb.Event(position=event.position, aggregate_id=event.aggregate_id,
                       aggregate_version=event.aggregate_version, timestamp=stamp,
                       name=public.NAME)
    table_payload = TABLE_PAYLOADS.get(type(public))
    if table_payload is not None:
        field, build = table_payload
        getattr(message, field).CopyFrom(build(public))
        return message
    known = all_payloads().get(type(public))
    if known is None:  # a game without messages of its own: its payload as JSON values
        message.game_payload.CopyFrom(struct_of(public))
        message.game_event.Pack(message.game_payload)
        return message
    legacy_field, build = known
    own = build(public)
    message.game_event.Pack(own)
    if legacy_field is not None:
        legacy_copy(message.game_event.value, getattr(message, legacy_field))
    return message


__all__ = ["TABLE_PAYLOADS", "event_to_proto", "payloads"]
