"""Shengji at the gRPC edge: its views, results and public events as its own messages
(fiftyk.games.shengji.v1, `shengji_pb2` beside this module) in the fiftyk.referee.v1 ones,
and the fields 0.2 clients read (HandView.shengji, HandScore.shengji, the `shengji_*`
payloads), which hold the same values."""

from __future__ import annotations

import json
from typing import Any

from fiftyk_referee.domain.shengji import events as shengji
from fiftyk_referee.domain.shengji.hand import rules_of as shengji_rules
from fiftyk_referee.domain.shengji.views import GAME_NAME as SHENGJI
from fiftyk_referee.domain.shengji.views import ShengjiResult, ShengjiView
from fiftyk_referee.service.games.shengji import shengji_pb2 as spb
from fiftyk_referee.service.grpc.convert import ruleset_to_proto
from fiftyk_referee.service.grpc.games import EdgeGame, Payloads, TypedEdge
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb


def result_to_proto(result: ShengjiResult) -> spb.HandResult:
    """A Shengji hand's result as its HandResult."""
    message = spb.HandResult(
        attacker_points=result.attacker_points, kitty_bonus=result.kitty_bonus,
        side=result.side, levels=result.levels, levels_after=result.levels_after,
        next_dealer=result.next_dealer, game_over=result.game_over,
        result_json=json.dumps(result.to_json(), ensure_ascii=False, sort_keys=True))
    if result.game_winner is not None:
        message.game_winner = result.game_winner
    return message


def shengji_hand_to_proto(view: ShengjiView, own: spb.HandView) -> pb.HandView:
    """A Shengji hand as one viewer sees it: the common fields (`own`, its own view message,
    goes in `game_view` and, for 0.2 clients, in `shengji`)."""
    over = view.is_over
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
        message.turn_deadline.FromDatetime(view.turn_deadline)
    if view.seed:
        message.deal_seed = view.seed
    return message


def view_message(view: ShengjiView) -> spb.HandView:
    """What a Shengji hand shows beyond the common HandView, as its HandView (`game_view`)."""
    state = spb.HandView(
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
        state.failed_throws.add(seat=failed.seat, forced=failed.forced)
    if view.result is not None:
        state.result.CopyFrom(result_to_proto(view.result))
    return state


def _optional(message: Any, field: str, value: Any) -> None:
    if value is not None:
        setattr(message, field, value)


def _sj_dealt(event: shengji.HandDealt) -> spb.HandDealt:
    message = spb.HandDealt(
        table_id=event.table_id, hand_number=event.hand_number,
        ruleset=ruleset_to_proto(event.ruleset, shengji_rules(event.ruleset), SHENGJI),
        levels=event.levels, room_points=event.room_points,
        player_ids=[player or "" for player in event.player_ids],
        deal_commitment=event.deal_commitment, deck=event.deck)
    _optional(message, "dealer", event.dealer)
    _optional(message, "deal_seed", event.deal_seed)
    return message


def _sj_round(event: shengji.RoundDealt) -> spb.RoundDealt:
    return spb.RoundDealt(round=event.round, hands=[
        pb.DealtCards(seat=h.seat, card_count=h.count, cards=h.cards) for h in event.hands])


def _sj_nothing(event: shengji.DeclaredNothing) -> spb.DeclaredNothing:
    return spb.DeclaredNothing(seat=event.seat)


def _sj_declared(event: shengji.Declared) -> spb.Declared:
    message = spb.Declared(seat=event.seat, cards=event.cards, round=event.round)
    _optional(message, "suit", event.suit)
    return message


def _sj_window(event: shengji.WindowClosed) -> spb.WindowClosed:
    return spb.WindowClosed(round=event.round, by=event.by)


def _sj_kitty_taken(event: shengji.KittyTaken) -> spb.KittyTaken:
    message = spb.KittyTaken(dealer=event.dealer, kitty_count=event.kitty.count,
                                   kitty=event.kitty.cards)
    _optional(message, "trump_suit", event.trump_suit)
    return message


def _sj_buried(event: shengji.KittyBuried) -> spb.KittyBuried:
    buried = event.buried
    return spb.KittyBuried(seat=buried.seat, count=buried.count, cards=buried.cards,
                                 by_referee=event.by_referee)


def _sj_throw(event: shengji.ThrowFailed) -> spb.ThrowFailed:
    return spb.ThrowFailed(seat=event.seat, attempted=event.attempted,
                                 forced=event.forced, action=event.action)


def _sj_played(event: shengji.CardsPlayed) -> spb.CardsPlayed:
    return spb.CardsPlayed(seat=event.seat, cards=event.cards,
                                 by_referee=event.by_referee)


def _sj_trick(event: shengji.TrickWon) -> spb.TrickWon:
    message = spb.TrickWon(seat=event.seat, points=event.points)
    _optional(message, "next_leader", event.next_leader)
    return message


def _sj_ended(event: shengji.HandEnded) -> spb.HandEnded:
    result = event.result
    trump, kitty, last = result["trump"], result["kitty"], result["last_trick"]
    attackers, outcome, levels = result["attackers"], result["outcome"], result["levels"]
    message = spb.HandEnded(
        dealer=result["dealer"],
        trump=spb.Trump(rank=trump["rank"], cards=trump["cards"] or []),
        kitty=spb.Kitty(dealt=kitty["dealt"], buried=kitty["buried"],
                              points=kitty["points"]),
        throws_failed=[spb.FailedThrow(seat=t["seat"], forced=t["forced"])
                       for t in result["throws_failed"]],
        collected=result["collected"], last_trick_winner=last["winner"],
        last_trick_side=last["side"], kitty_multiplier=last["multiplier"],
        attacker_seats=attackers["seats"], attacker_trick_points=attackers["trick_points"],
        kitty_bonus=attackers["kitty_bonus"], penalty=attackers["penalty"],
        attacker_points=attackers["points"], outcome_side=outcome["side"],
        levels_gained=outcome["levels"], levels_before=levels["before"],
        levels_after=levels["after"], next_dealer=result["next_dealer"],
        game_over=result["game_over"])
    _optional(message.trump, "suit", trump["suit"])
    _optional(message.trump, "declared_by", trump["declared_by"])
    _optional(message, "game_winner", result["game_winner"])
    _optional(message, "deal_seed", event.deal_seed)
    room = result.get("room_points")
    if room is not None:
        message.room_points.CopyFrom(spb.RoomPoints(
            multiplier=room["multiplier"], base=room["base"], delta=room["delta"],
            after=room["after"]))
    return message


PAYLOADS: Payloads = {
    shengji.HandDealt: ("shengji_hand_dealt", _sj_dealt),
    shengji.RoundDealt: ("shengji_round_dealt", _sj_round),
    shengji.DeclaredNothing: ("shengji_declared_nothing", _sj_nothing),
    shengji.Declared: ("shengji_declared", _sj_declared),
    shengji.WindowClosed: ("shengji_window_closed", _sj_window),
    shengji.KittyTaken: ("shengji_kitty_taken", _sj_kitty_taken),
    shengji.KittyBuried: ("shengji_kitty_buried", _sj_buried),
    shengji.ThrowFailed: ("shengji_throw_failed", _sj_throw),
    shengji.CardsPlayed: ("shengji_cards_played", _sj_played),
    shengji.TrickWon: ("shengji_trick_won", _sj_trick),
    shengji.HandEnded: ("shengji_hand_ended", _sj_ended),
}


EDGE = TypedEdge(SHENGJI, PAYLOADS, ShengjiView, view_message,
                 shengji_hand_to_proto, "shengji", ShengjiResult, "shengji", result_to_proto)
_EDGE_CHECK: EdgeGame = EDGE

__all__ = ["EDGE", "PAYLOADS", "result_to_proto", "shengji_hand_to_proto", "view_message"]
