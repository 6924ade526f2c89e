"""Conversions at the gRPC edge that every game shares: options, rulesets, tables, scores,
legal plays, and JSON values for games without messages of their own (each game's own views,
results and events convert in `service/grpc/games/`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from google.protobuf import struct_pb2

from fiftyk_referee.domain.deal import DEFAULT_ENTROPY_WINDOW
from fiftyk_referee.domain.errors import Reason, RuleError, shown
from fiftyk_referee.domain.game import PASS, PLAY, LegalPlay, Rules
from fiftyk_referee.domain.spectators import LIMITS as SPECTATOR_LIMITS
from fiftyk_referee.domain.spectators import SpectatorPolicy
from fiftyk_referee.service.errors import FieldViolation, InvalidArgument, ServiceReason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.paging import shown_name

if TYPE_CHECKING:  # the table aggregate needs the server extra; option parsing does not
    from fiftyk_referee.domain.table import TableView

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
        table_id=view.table_id, name=shown_name(view.name), players=view.players,
        allow_preset_deck=view.allow_preset_deck, hands_played=view.hands_played,
        hand_ids=view.hand_ids, next_dealer=view.next_dealer,
        match_over=view.match_over, version=view.version, game=view.game,
    )
    from fiftyk_referee.domain.table import rules_of  # the server extra's (see above)
    from fiftyk_referee.service.grpc.convert_platform import TABLE_STATES  # the same

    rules = rules_of(view.game, view.ruleset)
    message.ruleset.CopyFrom(ruleset_to_proto(view.ruleset, rules, view.game))
    for seat, player in enumerate(view.seats):
        info = message.seats.add(seat=seat)
        if player is not None:
            info.player_id = player
        key = view.seat_keys[seat] if seat < len(view.seat_keys) else None
        if key is not None:
            info.public_key = key
    for side in view.scores:
        message.scores.add(side=side.side, seats=side.seats, score=decimal_text(side.score))
    if view.current_hand is not None:
        message.current_hand_id = view.current_hand
    if view.match_end_reason is not None:
        message.match_end_reason = view.match_end_reason
    message.spectators.CopyFrom(spectators_to_proto(view.spectators))
    message.state = TABLE_STATES[view.state]
    if view.close_reason is not None:
        message.close_reason = view.close_reason
    message.voided_hand_ids.extend(view.voided_hands)
    if view.entropy_window is not None:
        message.seat_entropy.window_seconds = view.entropy_window
        message.seat_entropy.direct = not view.entropy_commit_reveal
    if view.draw is not None:
        message.draw.hand_number = view.draw.hand_number
        message.draw.commitment = view.draw.commitment
        message.draw.deadline.FromDatetime(view.draw.deadline)
        message.draw.contributed.extend(view.draw.contributed)
        if view.draw.commit_deadline is not None:
            message.draw.commit_deadline.FromDatetime(view.draw.commit_deadline)
        message.draw.committed.extend(view.draw.committed)
        message.draw.abandoned = view.draw.abandoned
    return message


def entropy_window_from_proto(request: pb.CreateTableRequest) -> int | None:
    """A CreateTable request's seat-entropy window in seconds (None: no seat entropy; 0
    asks for the default)."""
    if not request.HasField("seat_entropy"):
        return None
    return request.seat_entropy.window_seconds or DEFAULT_ENTROPY_WINDOW


def entropy_direct_from_proto(request: pb.CreateTableRequest) -> bool:
    """Whether a CreateTable request's seat entropy takes the seats' bytes directly (0.2's
    protocol) instead of commit, then reveal."""
    return request.HasField("seat_entropy") and request.seat_entropy.direct


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


def action_kinds_to_proto(kinds: Iterable[str]) -> list[pb.ActionKind.ValueType]:
    """The kinds a 0.2 client knows as ActionKind values (`ListLegalPlays.actions`): those
    besides playing and passing that the enum names, in a stable order."""
    values = []
    for kind in sorted(kinds):
        name = f"ACTION_KIND_{kind.upper()}"
        if kind not in (PLAY, PASS) and name in pb.ActionKind.DESCRIPTOR.values_by_name:
            values.append(pb.ActionKind.Value(name))
    return values




def legal_play_to_proto(play: LegalPlay) -> pb.LegalPlay:
    """One legal play as LegalPlay."""
    return pb.LegalPlay(cards=play.cards, combination_type=play.kind)


def side_totals(totals: Iterable[tuple[str, Decimal]]) -> list[pb.SideTotal]:
    """Scores per side as SideTotal messages (exact decimal text)."""
    return [pb.SideTotal(side=side, score=decimal_text(score)) for side, score in totals]


def plain(value: Any) -> Any:
    """A dataclass, decimal, datetime or collection as JSON values (for `Struct`)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [plain(v) for v in value]
    if isinstance(value, Decimal):
        return decimal_text(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def struct_of(value: Any) -> struct_pb2.Struct:
    """A dataclass as a Struct of JSON values (games without messages of their own)."""
    message = struct_pb2.Struct()
    message.update(plain(value))
    return message
