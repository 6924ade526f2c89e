"""Conversions at the gRPC edge: domain views (plain JSON dicts) ↔ fiftyk.referee.v1 messages."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from google.protobuf import struct_pb2

from fiftyk_referee.domain.errors import Reason, RuleError, shown
from fiftyk_referee.domain.fiftyk.views import HandResult, HandView, TrickEntry
from fiftyk_referee.domain.game import ActionKind, LegalPlay, Rules
from fiftyk_referee.domain.observer import seat_of
from fiftyk_referee.domain.shengji.hand import ShengjiView
from fiftyk_referee.domain.spectators import LIMITS as SPECTATOR_LIMITS
from fiftyk_referee.domain.spectators import SpectatorPolicy
from fiftyk_referee.domain.table import TableView, rules_of
from fiftyk_referee.service.errors import FieldViolation, InvalidArgument, ServiceReason
from fiftyk_referee.service.grpc.convert_shengji import shengji_hand_to_proto
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
            # The same code as any other value the ruleset refuses (`hands="four"`).
            raise RuleError(Reason.INVALID_RULESET,
                            f"option {shown(name)} must be a boolean, string, integer or null")
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


def ruleset_to_proto(spec: Mapping[str, Any], rules: Rules, game: str) -> pb.Ruleset:
    """A stored ruleset spec as the Ruleset message (spec, effective options, fingerprint)."""
    message = pb.Ruleset(fingerprint=rules.fingerprint)
    message.spec.preset = rules.preset
    message.spec.game = game
    for name, value in (spec.get("options") or {}).items():
        message.spec.options[name].CopyFrom(_value(value))
    for name, value in rules.options().items():
        message.effective_options[name].CopyFrom(_value(value))
    return message


def decimal_text(number: Decimal) -> str:
    """A score as exact decimal text, e.g. "220" or "-5.5"."""
    if number == 0:
        return "0"
    if number == number.to_integral():
        return str(number.quantize(Decimal(1)))
    return format(number.normalize(), "f")


def table_to_proto(view: TableView) -> pb.TableView:
    """A table's public view as TableView."""
    message = pb.TableView(
        table_id=view.table_id, name=view.name, players=view.players,
        allow_preset_deck=view.allow_preset_deck, hands_played=view.hands_played,
        hand_ids=view.hand_ids, next_dealer=view.next_dealer,
        match_over=view.match_over, version=view.version, game=view.game,
    )
    rules = rules_of(view.game, view.ruleset)
    message.ruleset.CopyFrom(ruleset_to_proto(view.ruleset, rules, view.game))
    for seat, player in enumerate(view.seats):
        info = message.seats.add(seat=seat)
        if player is not None:
            info.player_id = player
    for side in view.scores:
        message.scores.add(side=side.side, seats=side.seats, score=decimal_text(side.score))
    if view.current_hand is not None:
        message.current_hand_id = view.current_hand
    if view.match_end_reason is not None:
        message.match_end_reason = view.match_end_reason
    message.spectators.CopyFrom(spectators_to_proto(view.spectators))
    return message


def spectators_to_proto(policy: SpectatorPolicy) -> pb.SpectatorPolicy:
    """A table's spectator policy as SpectatorPolicy."""
    return pb.SpectatorPolicy(ranked=policy.ranked, delay_actions=policy.delay_actions,
                              delay_seconds=policy.delay_seconds,
                              max_spectators=policy.max_spectators)


def spectators_from_proto(message: pb.SpectatorPolicy, players: int) -> SpectatorPolicy:
    """A CreateTable request's spectator policy (INVALID_REQUEST naming a value out of
    range)."""
    values = {"delay_actions": message.delay_actions, "delay_seconds": message.delay_seconds,
              "max_spectators": message.max_spectators}
    for name, value in values.items():
        if value > SPECTATOR_LIMITS[name]:
            field = f"spectators.{name}"
            raise InvalidArgument(ServiceReason.INVALID_REQUEST,
                                  f"{field} must be at most {SPECTATOR_LIMITS[name]}",
                                  field_violations=[FieldViolation(field, "too large")])
    return SpectatorPolicy.for_table(players, ranked=message.ranked, **values)


def result_to_proto(result: HandResult) -> pb.HandResult:
    """A hand's result as HandResult."""
    message = pb.HandResult(places=result.places)
    for team in result.teams:
        entry = message.teams.add(seats=team.seats, collected=team.collected,
                                  score=decimal_text(team.score))
        if team.rating is not None:
            entry.rating = decimal_text(team.rating)
    for seat in result.seats:
        entry_s = message.seats.add(seat=seat.seat, score=decimal_text(seat.score))
        if seat.rating is not None:
            entry_s.rating = decimal_text(seat.rating)
    if result.winning_team is not None:
        message.winning_team = result.winning_team
    if result.winning_seat is not None:
        message.winning_seat = result.winning_seat
    return message


def _trick_action(entry: TrickEntry) -> pb.TrickAction:
    if entry.cards is None:
        return pb.TrickAction(seat=entry.seat, kind=pb.ACTION_KIND_PASS,
                              by_referee=entry.by_referee)
    return pb.TrickAction(seat=entry.seat, kind=pb.ACTION_KIND_PLAY, cards=entry.cards,
                          combination_type=entry.combination, by_referee=entry.by_referee)


ACTION_KINDS = {ActionKind.PLAY: pb.ACTION_KIND_PLAY, ActionKind.PASS: pb.ACTION_KIND_PASS,
                ActionKind.DECLARE: pb.ACTION_KIND_DECLARE, ActionKind.BURY: pb.ACTION_KIND_BURY}


def action_kinds_to_proto(kinds: Iterable[ActionKind]) -> list[pb.ActionKind.ValueType]:
    """Action kinds as ActionKind values, in a stable order (resigning is always allowed)."""
    return [ACTION_KINDS[k] for k in sorted(kinds) if k in ACTION_KINDS]


def legal_play_to_proto(play: LegalPlay) -> pb.LegalPlay:
    """One legal play as LegalPlay."""
    return pb.LegalPlay(cards=play.cards, combination_type=play.kind)


def hand_to_proto(view: Any) -> pb.HandView:
    """Any game's hand view as HandView (each game's view has its converter)."""
    if isinstance(view, ShengjiView):
        return shengji_hand_to_proto(view)
    return fiftyk_hand_to_proto(view)


def fiftyk_hand_to_proto(view: HandView) -> pb.HandView:
    """A 五十K hand as one viewer sees it, as HandView."""
    message = pb.HandView(
        hand_id=view.hand_id, table_id=view.table_id, hand_number=view.number,
        full_view=view.full, dealer=view.dealer, trick_points=view.trick_points,
        finish_order=view.finish_order, deal_commitment=view.commitment,
        version=view.version,
        status=pb.HAND_STATUS_COMPLETED if view.is_over else pb.HAND_STATUS_IN_PROGRESS,
    )
    own = seat_of(view.viewer)
    if own is not None:
        message.viewer_seat = own
        message.own_cards.extend(view.own_cards)
    for seat in view.seats:
        state = message.seats.add(seat=seat.seat, collected=seat.collected,
                                  resigned=seat.resigned)
        if seat.card_count is not None:
            state.card_count = seat.card_count
        if seat.cards is not None:
            state.cards.extend(seat.cards)
        if seat.finish_place is not None:
            state.finish_place = seat.finish_place
    if view.stock_count is not None:
        message.stock_count = view.stock_count
    if view.stock is not None:
        message.stock.extend(view.stock)
    for announcement in view.announcements:
        message.announcements.add(seat=announcement.seat, cards=announcement.cards)
    message.trick.extend(_trick_action(entry) for entry in view.trick)
    if view.top is not None:
        message.top_play.CopyFrom(pb.TrickAction(
            seat=view.top.seat, kind=pb.ACTION_KIND_PLAY, cards=view.top.cards,
            combination_type=view.top.combination))
    if view.leader is not None:
        message.leader = view.leader
    if view.turn is not None:
        message.turn_seat = view.turn
    if view.turn_deadline is not None:
        message.turn_deadline.FromDatetime(view.turn_deadline)
    if view.seed:
        message.deal_seed = view.seed
    if view.result is not None:
        message.result.CopyFrom(result_to_proto(view.result))
    return message
