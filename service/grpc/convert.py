"""Conversions at the gRPC edge: domain views (plain JSON dicts) ↔ fiftyk.referee.v1 messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from google.protobuf import struct_pb2, timestamp_pb2
from google.protobuf.json_format import MessageToDict

from fiftyk_referee.domain.fiftyk.combinations import Combination
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.service.errors import FieldViolation, InvalidArgument, ServiceReason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

OptionValue = bool | int | str | None


def options_from_proto(options: Mapping[str, struct_pb2.Value]) -> dict[str, OptionValue]:
    """Option overrides from protobuf Values; integral numbers become ints."""
    out: dict[str, OptionValue] = {}
    for name, value in options.items():
        kind = value.WhichOneof("kind")
        if kind == "null_value":
            out[name] = None
        elif kind == "bool_value":
            out[name] = value.bool_value
        elif kind == "string_value":
            out[name] = value.string_value
        elif kind == "number_value" and float(value.number_value).is_integer():
            out[name] = int(value.number_value)
        else:
            raise InvalidArgument(
                ServiceReason.INVALID_REQUEST,
                f"option {name!r} must be a boolean, string, integer or null",
                field_violations=[
                    FieldViolation(f"ruleset.options[{name}]", "unsupported value")
                ],
            )
    return out


def _value(value: OptionValue) -> struct_pb2.Value:
    result = struct_pb2.Value()
    if value is None:
        result.null_value = struct_pb2.NULL_VALUE
    elif isinstance(value, bool):
        result.bool_value = value
    elif isinstance(value, int):
        result.number_value = value
    else:
        result.string_value = value
    return result


def ruleset_to_proto(spec: Mapping[str, Any]) -> pb.Ruleset:
    """A stored ruleset spec as the Ruleset message (spec, effective options, fingerprint)."""
    rules = Ruleset.from_json(spec)
    message = pb.Ruleset(fingerprint=rules.fingerprint)
    message.spec.preset = rules.preset
    for name, value in (spec.get("options") or {}).items():
        message.spec.options[name].CopyFrom(_value(value))
    for name, value in rules.options().items():
        message.effective_options[name].CopyFrom(_value(value))
    return message


def _timestamp(value: datetime | str | None) -> timestamp_pb2.Timestamp | None:
    if value is None:
        return None
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(datetime.fromisoformat(value) if isinstance(value, str) else value)
    return stamp


def score_text(value: Any) -> str:
    """A JSON score number (or Decimal text) as exact decimal text, e.g. "220" or "-5.5"."""
    return _normalize(str(value)) if value is not None else ""


def _normalize(text: str) -> str:
    number = Decimal(text)
    if number == 0:
        return "0"
    if number == number.to_integral():
        return str(number.quantize(Decimal(1)))
    return format(number.normalize(), "f")


def table_to_proto(view: Mapping[str, Any], teams: Sequence[Sequence[int]]) -> pb.TableView:
    """A table's public view (`Table.view()`) as TableView."""
    message = pb.TableView(
        table_id=view["table_id"], name=view["name"], players=view["players"],
        allow_preset_deck=view["allow_preset_deck"], hands_played=view["hands_played"],
        hand_ids=view["hand_ids"], next_dealer=view["next_dealer"],
        match_over=view["match_over"], version=view["version"],
    )
    message.ruleset.CopyFrom(ruleset_to_proto(view["ruleset"]))
    for seat, player in enumerate(view["seats"]):
        info = message.seats.add(seat=seat)
        if player is not None:
            info.player_id = player
    for side, score in view["scores"].items():
        kind, _, index = side.partition(":")
        seats = list(teams[int(index)]) if kind == "team" else [int(index)]
        message.scores.add(side=side, seats=seats, score=_normalize(score))
    if view["current_hand"] is not None:
        message.current_hand_id = view["current_hand"]
    if view["match_end_reason"] is not None:
        message.match_end_reason = view["match_end_reason"]
    return message


def result_to_proto(result: Mapping[str, Any]) -> pb.HandResult:
    """A stored hand result as HandResult."""
    message = pb.HandResult(places=result.get("places", []))
    for team in result["teams"]:
        entry = message.teams.add(seats=team["seats"], collected=team["collected"],
                                  score=score_text(team["score"]))
        if team["rating"] is not None:
            entry.rating = score_text(team["rating"])
    for seat in result["seats"]:
        entry_s = message.seats.add(seat=seat["seat"], score=score_text(seat["score"]))
        if seat["rating"] is not None:
            entry_s.rating = score_text(seat["rating"])
    winner = result["winner"]
    if winner["team"] is not None:
        message.winning_team = winner["team"]
    if winner["seat"] is not None:
        message.winning_seat = winner["seat"]
    return message


def _trick_action(entry: Mapping[str, Any]) -> pb.TrickAction:
    if entry.get("pass"):
        return pb.TrickAction(seat=entry["seat"], kind=pb.ACTION_KIND_PASS,
                              by_referee=entry.get("by_referee", False))
    return pb.TrickAction(seat=entry["seat"], kind=pb.ACTION_KIND_PLAY, cards=entry["cards"],
                          combination_type=entry.get("type", ""),
                          by_referee=entry.get("by_referee", False))


def legal_play_to_proto(combo: Combination) -> pb.LegalPlay:
    """One legal play as LegalPlay."""
    return pb.LegalPlay(cards=combo.card_strings(), combination_type=combo.type)


def hand_to_proto(view: Mapping[str, Any]) -> pb.HandView:
    """A hand view (`Hand.view(seat)` or `Hand.audit_view()`) as HandView."""
    full = view.get("hands") is not None
    message = pb.HandView(
        hand_id=view["hand_id"], table_id=view["table_id"], hand_number=view["number"],
        full_view=full, dealer=view["dealer"], trick_points=view["table_points"],
        finish_order=view["finish_order"], deal_commitment=view["commitment"],
        version=view["version"],
        status=pb.HAND_STATUS_COMPLETED if view["status"] == "over"
        else pb.HAND_STATUS_IN_PROGRESS,
    )
    if view.get("seat") is not None:
        message.viewer_seat = view["seat"]
        message.own_cards.extend(view["cards"])
    resigned = set(view["resigned"])
    places = {seat: i + 1 for i, seat in enumerate(view["finish_order"])}
    for seat, count in enumerate(view["counts"]):
        state = message.seats.add(seat=seat, collected=view["collected"][seat],
                                  resigned=seat in resigned)
        if count is not None:
            state.card_count = count
        if full:
            state.cards.extend(view["hands"][seat])
        if seat in places:
            state.finish_place = places[seat]
    if view["stock_count"] is not None:
        message.stock_count = view["stock_count"]
    if full:
        message.stock.extend(view["stock"])
    for seat_text, count in view["announced"].items():
        message.announcements.add(seat=int(seat_text), cards=count)
    message.trick.extend(_trick_action(entry) for entry in view["trick"])
    top = view["top"]
    if top is not None:
        message.top_play.CopyFrom(pb.TrickAction(
            seat=top["seat"], kind=pb.ACTION_KIND_PLAY, cards=top["cards"],
            combination_type=top["type"]))
    if view["leader"] is not None:
        message.leader = view["leader"]
    if view["turn"] is not None:
        message.turn_seat = view["turn"]
    deadline = _timestamp(view.get("turn_deadline"))
    if deadline is not None:
        message.turn_deadline.CopyFrom(deadline)
    if view.get("seed"):
        message.deal_seed = view["seed"]
    if view["result"] is not None:
        message.result.CopyFrom(result_to_proto(view["result"]))
    return message


def message_to_json(message: Any) -> dict[str, Any]:
    """A message as a JSON-ready dict (for CLIs)."""
    return MessageToDict(message, preserving_proto_field_name=True)
