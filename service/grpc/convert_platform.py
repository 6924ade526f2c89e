"""Conversions at the gRPC edge for platforms: lobby rows, webhook endpoints, dead letters."""

from __future__ import annotations

from collections.abc import Mapping

from fiftyk_referee.domain.table import CLOSED, FINISHED, PLAYING, WAITING
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.paging import shown_name
from fiftyk_referee.service.platform.lobby import LobbyTable
from fiftyk_referee.service.platform.webhook_store import DeadLetter, Endpoint

TABLE_STATES: Mapping[str, pb.TableState.ValueType] = {
    WAITING: pb.TABLE_STATE_WAITING, PLAYING: pb.TABLE_STATE_PLAYING,
    FINISHED: pb.TABLE_STATE_FINISHED, CLOSED: pb.TABLE_STATE_CLOSED,
}
STATE_NAMES: Mapping[int, str] = {number: name for name, number in TABLE_STATES.items()}


def summary_to_proto(table: LobbyTable) -> pb.TableSummary:
    """A lobby row as TableSummary."""
    message = pb.TableSummary(
        table_id=table.table_id, game=table.game, preset=table.preset,
        name=shown_name(table.name),
        players=table.players, state=TABLE_STATES[table.state],
        hands_played=table.hands_played, last_position=table.last_position)
    for seat, player in enumerate(table.seats):
        info = message.seats.add(seat=seat)
        if player is not None:
            info.player_id = player
    if table.current_hand is not None:
        message.current_hand_id = table.current_hand
    message.last_activity.FromDatetime(table.last_activity)
    message.created_at.FromDatetime(table.created_at)
    return message


def webhook_to_proto(endpoint: Endpoint, dead_letters: int) -> pb.Webhook:
    """A registered endpoint as Webhook (never its secret)."""
    message = pb.Webhook(webhook_id=endpoint.endpoint_id, url=endpoint.url,
                         events=endpoint.events, description=endpoint.description,
                         key_id=endpoint.key_id, position=endpoint.position,
                         dead_letters=dead_letters)
    message.created_at.FromDatetime(endpoint.created_at)
    return message


def dead_letter_to_proto(letter: DeadLetter) -> pb.WebhookDeadLetter:
    """A dead letter as WebhookDeadLetter."""
    message = pb.WebhookDeadLetter(event_id=letter.event_id, name=letter.event_name,
                                   position=letter.position, attempts=letter.attempts,
                                   last_error=letter.last_error,
                                   redelivering=letter.redeliver)
    message.failed_at.FromDatetime(letter.failed_at)
    return message


__all__ = ["STATE_NAMES", "TABLE_STATES", "dead_letter_to_proto", "summary_to_proto",
           "webhook_to_proto"]
