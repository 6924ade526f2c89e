"""A Shengji hand view as the common HandView plus its ShengjiState (proto `shengji`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from fiftyk_referee.domain.shengji.hand import OVER, ShengjiView
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb


def _result(result: Mapping[str, Any]) -> pb.ShengjiResult:
    outcome = result["outcome"]
    message = pb.ShengjiResult(
        attacker_points=int(result["attackers"]["points"]),
        kitty_bonus=int(result["attackers"]["kitty_bonus"]),
        side=outcome["side"], levels=int(outcome["levels"]),
        levels_after=result["levels"]["after"], next_dealer=int(result["next_dealer"]),
        game_over=bool(result["game_over"]),
        result_json=json.dumps(result, ensure_ascii=False, sort_keys=True))
    if result["game_winner"] is not None:
        message.game_winner = int(result["game_winner"])
    return message


def shengji_hand_to_proto(view: ShengjiView) -> pb.HandView:
    """A Shengji hand as one viewer sees it."""
    over = view.phase == OVER
    message = pb.HandView(
        hand_id=view.hand_id, table_id=view.table_id, hand_number=view.number,
        full_view=view.hands is not None, dealer=view.dealer or 0,
        deal_commitment=view.commitment, version=view.version,
        status=pb.HAND_STATUS_COMPLETED if over else pb.HAND_STATUS_IN_PROGRESS,
    )
    if view.seat is not None:
        message.viewer_seat = view.seat
        message.own_cards.extend(view.cards)
    for seat, count in enumerate(view.counts):
        state = message.seats.add(seat=seat, card_count=count,
                                  collected=view.collected[seat])
        if view.hands is not None:
            state.cards.extend(view.hands[seat])
    message.trick.extend(pb.TrickAction(seat=seat, kind=pb.ACTION_KIND_PLAY, cards=cards)
                         for seat, cards in view.trick)
    if view.leader is not None:
        message.leader = view.leader
    if view.to_act is not None:
        message.turn_seat = view.to_act
    if view.turn_deadline is not None:
        message.turn_deadline.FromDatetime(datetime.fromisoformat(view.turn_deadline))
    if view.seed:
        message.deal_seed = view.seed
    message.shengji.CopyFrom(_state(view))
    return message


def _state(view: ShengjiView) -> pb.ShengjiState:
    state = pb.ShengjiState(
        phase=view.phase, levels=view.levels, trump_rank=view.trump_rank,
        round=view.round, spoken=view.spoken, kitty_size=view.kitty_count,
        kitty_visible=view.kitty is not None, tricks_played=view.tricks_played,
        counts=view.counts)
    if view.trump_suit is not None:
        state.trump_suit = view.trump_suit
    if view.declaration is not None:
        declared = state.declaration
        declared.seat = view.declaration.seat
        declared.cards.extend(view.declaration.cards)
        declared.round = view.declaration.round
        if view.declaration.suit is not None:
            declared.suit = view.declaration.suit
    if view.kitty is not None:
        state.kitty.extend(view.kitty)
    if view.dealer is not None:
        state.dealer = view.dealer
    if view.winning is not None:
        state.winning_seat = view.winning
    for failed in view.throws_failed:
        state.failed_throws.add(seat=int(failed["seat"]), forced=list(failed["forced"]))
    if view.result is not None:
        state.result.CopyFrom(_result(view.result))
    return state


__all__ = ["shengji_hand_to_proto"]
