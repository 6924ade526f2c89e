"""Public events at the gRPC edge: a viewer's `PublicEvent` as a fiftyk.referee.v1.Event.

One builder per public payload class fills that event's field of the `payload` oneof; the
envelope (name, position, aggregate id and version, timestamp) is the same for all.
Decimals travel as exact text, cards in their canonical notation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import Any

from google.protobuf import timestamp_pb2

from fiftyk_referee.domain import table_events as table
from fiftyk_referee.domain.events import PublicEvent
from fiftyk_referee.domain.fiftyk import NAME as FIFTYK
from fiftyk_referee.domain.fiftyk import events as fiftyk
from fiftyk_referee.domain.fiftyk.hand import PASS_BY_PLAYER, PASS_EMPTY_HAND, PASS_TIMEOUT
from fiftyk_referee.domain.shengji import events as shengji
from fiftyk_referee.domain.shengji.hand import GAME_NAME as SHENGJI
from fiftyk_referee.domain.shengji.hand import rules_of as shengji_rules
from fiftyk_referee.domain.table import rules_of
from fiftyk_referee.service.grpc.convert import (
    decimal_text,
    result_to_proto,
    ruleset_to_proto,
    spectators_to_proto,
)
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.public_events import FeedEvent

PASS_REASONS = {
    PASS_BY_PLAYER: pb.FIFTYK_PASS_REASON_PLAYER,
    PASS_TIMEOUT: pb.FIFTYK_PASS_REASON_TIMEOUT,
    PASS_EMPTY_HAND: pb.FIFTYK_PASS_REASON_EMPTY_HAND,
}


def _totals(totals: Iterable[tuple[str, Decimal]]) -> list[pb.SideTotal]:
    return [pb.SideTotal(side=side, score=decimal_text(score)) for side, score in totals]


def _opened(event: table.TableOpened) -> pb.TableOpened:
    rules = rules_of(event.game, event.ruleset)
    return pb.TableOpened(game=event.game,
                          ruleset=ruleset_to_proto(event.ruleset, rules, event.game),
                          players=event.players, allow_preset_deck=event.allow_preset_deck,
                          name=event.table_name,
                          spectators=spectators_to_proto(event.spectators))


def _seat_taken(event: table.SeatTaken) -> pb.TableSeatTaken:
    return pb.TableSeatTaken(seat=event.seat, player_id=event.player_id)


def _seat_left(event: table.SeatLeft) -> pb.TableSeatLeft:
    return pb.TableSeatLeft(seat=event.seat)


def _hand_started(event: table.HandStarted) -> pb.TableHandStarted:
    return pb.TableHandStarted(hand_id=event.hand_id, hand_number=event.hand_number,
                               dealer=event.dealer)


def _hand_recorded(event: table.HandRecorded) -> pb.TableHandRecorded:
    return pb.TableHandRecorded(hand_id=event.hand_id, scores=_totals(event.totals),
                                hand_head=event.hand_head)


def _match_ended(event: table.MatchEnded) -> pb.TableMatchEnded:
    return pb.TableMatchEnded(reason=event.reason)


def _dealt(event: fiftyk.HandDealt) -> pb.FiftykHandDealt:
    message = pb.FiftykHandDealt(
        table_id=event.table_id, hand_number=event.hand_number,
        ruleset=ruleset_to_proto(event.ruleset, rules_of(FIFTYK, event.ruleset), FIFTYK),
        players=event.players, dealer=event.dealer,
        first_leader=event.first_leader,
        player_ids=[player or "" for player in event.player_ids],
        deal_commitment=event.deal_commitment,
        hands=[pb.DealtCards(seat=h.seat, card_count=h.card_count, cards=h.cards)
               for h in event.hands],
        deck=event.deck,
    )
    if event.stock_count is not None:
        message.stock_count = event.stock_count
    if event.deal_seed is not None:
        message.deal_seed = event.deal_seed
    return message


def _played(event: fiftyk.CardsPlayed) -> pb.FiftykCardsPlayed:
    return pb.FiftykCardsPlayed(seat=event.seat, cards=event.cards,
                                combination_type=event.combination_type,
                                points=event.points, by_referee=event.by_referee)


def _passed(event: fiftyk.Passed) -> pb.FiftykPassed:
    return pb.FiftykPassed(seat=event.seat, reason=PASS_REASONS[event.reason])


def _resigned(event: fiftyk.Resigned) -> pb.FiftykResigned:
    return pb.FiftykResigned(seat=event.seat)


def _trick_won(event: fiftyk.TrickWon) -> pb.FiftykTrickWon:
    message = pb.FiftykTrickWon(seat=event.seat, points=event.points)
    if event.next_leader is not None:
        message.next_leader = event.next_leader
    return message


def _drawn(event: fiftyk.CardsDrawn) -> pb.FiftykCardsDrawn:
    return pb.FiftykCardsDrawn(seat=event.seat, count=event.count, cards=event.cards)


def _announced(event: fiftyk.Announced) -> pb.FiftykAnnounced:
    return pb.FiftykAnnounced(seat=event.seat, cards_left=event.cards_left)


def _went_out(event: fiftyk.WentOut) -> pb.FiftykWentOut:
    return pb.FiftykWentOut(seat=event.seat, place=event.place)


def _ended(event: fiftyk.HandEnded) -> pb.FiftykHandEnded:
    result = event.result
    message = pb.FiftykHandEnded(result=result_to_proto(result),
                                 finish_order=result.finish_order, collected=event.collected,
                                 scores=_totals(result.side_totals.items()))
    if event.deal_seed is not None:
        message.deal_seed = event.deal_seed
    return message


def _optional(message: Any, field: str, value: Any) -> None:
    if value is not None:
        setattr(message, field, value)


def _sj_dealt(event: shengji.HandDealt) -> pb.ShengjiHandDealt:
    message = pb.ShengjiHandDealt(
        table_id=event.table_id, hand_number=event.hand_number,
        ruleset=ruleset_to_proto(event.ruleset, shengji_rules(event.ruleset), SHENGJI),
        levels=event.levels, room_points=event.room_points,
        player_ids=[player or "" for player in event.player_ids],
        deal_commitment=event.deal_commitment, deck=event.deck)
    _optional(message, "dealer", event.dealer)
    _optional(message, "deal_seed", event.deal_seed)
    return message


def _sj_round(event: shengji.RoundDealt) -> pb.ShengjiRoundDealt:
    return pb.ShengjiRoundDealt(round=event.round, hands=[
        pb.DealtCards(seat=h.seat, card_count=h.count, cards=h.cards) for h in event.hands])


def _sj_nothing(event: shengji.DeclaredNothing) -> pb.ShengjiDeclaredNothing:
    return pb.ShengjiDeclaredNothing(seat=event.seat)


def _sj_declared(event: shengji.Declared) -> pb.ShengjiDeclared:
    message = pb.ShengjiDeclared(seat=event.seat, cards=event.cards, round=event.round)
    _optional(message, "suit", event.suit)
    return message


def _sj_window(event: shengji.WindowClosed) -> pb.ShengjiWindowClosed:
    return pb.ShengjiWindowClosed(round=event.round, by=event.by)


def _sj_kitty_taken(event: shengji.KittyTaken) -> pb.ShengjiKittyTaken:
    message = pb.ShengjiKittyTaken(dealer=event.dealer, kitty_count=event.kitty.count,
                                   kitty=event.kitty.cards)
    _optional(message, "trump_suit", event.trump_suit)
    return message


def _sj_buried(event: shengji.KittyBuried) -> pb.ShengjiKittyBuried:
    buried = event.buried
    return pb.ShengjiKittyBuried(seat=buried.seat, count=buried.count, cards=buried.cards,
                                 by_referee=event.by_referee)


def _sj_throw(event: shengji.ThrowFailed) -> pb.ShengjiThrowFailed:
    return pb.ShengjiThrowFailed(seat=event.seat, attempted=event.attempted,
                                 forced=event.forced, action=event.action)


def _sj_played(event: shengji.CardsPlayed) -> pb.ShengjiCardsPlayed:
    return pb.ShengjiCardsPlayed(seat=event.seat, cards=event.cards,
                                 by_referee=event.by_referee)


def _sj_trick(event: shengji.TrickWon) -> pb.ShengjiTrickWon:
    message = pb.ShengjiTrickWon(seat=event.seat, points=event.points)
    _optional(message, "next_leader", event.next_leader)
    return message


def _sj_ended(event: shengji.HandEnded) -> pb.ShengjiHandEnded:
    result = event.result
    trump, kitty, last = result["trump"], result["kitty"], result["last_trick"]
    attackers, outcome, levels = result["attackers"], result["outcome"], result["levels"]
    message = pb.ShengjiHandEnded(
        dealer=result["dealer"],
        trump=pb.ShengjiTrump(rank=trump["rank"], cards=trump["cards"] or []),
        kitty=pb.ShengjiKitty(dealt=kitty["dealt"], buried=kitty["buried"],
                              points=kitty["points"]),
        throws_failed=[pb.ShengjiFailedThrow(seat=t["seat"], forced=t["forced"])
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
        message.room_points.CopyFrom(pb.ShengjiRoomPoints(
            multiplier=room["multiplier"], base=room["base"], delta=room["delta"],
            after=room["after"]))
    return message


# Public payload class -> (its field of Event's `payload` oneof, its message builder).
PAYLOADS: dict[type[PublicEvent], tuple[str, Callable[[Any], Any]]] = {
    table.TableOpened: ("table_opened", _opened),
    table.SeatTaken: ("table_seat_taken", _seat_taken),
    table.SeatLeft: ("table_seat_left", _seat_left),
    table.HandStarted: ("table_hand_started", _hand_started),
    table.HandRecorded: ("table_hand_recorded", _hand_recorded),
    table.MatchEnded: ("table_match_ended", _match_ended),
    fiftyk.HandDealt: ("fiftyk_hand_dealt", _dealt),
    fiftyk.CardsPlayed: ("fiftyk_cards_played", _played),
    fiftyk.Passed: ("fiftyk_passed", _passed),
    fiftyk.Resigned: ("fiftyk_resigned", _resigned),
    fiftyk.TrickWon: ("fiftyk_trick_won", _trick_won),
    fiftyk.CardsDrawn: ("fiftyk_cards_drawn", _drawn),
    fiftyk.Announced: ("fiftyk_announced", _announced),
    fiftyk.WentOut: ("fiftyk_went_out", _went_out),
    fiftyk.HandEnded: ("fiftyk_hand_ended", _ended),
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


def event_to_proto(event: FeedEvent, public: PublicEvent) -> pb.Event:
    """A feed event, as one viewer sees it (`public`), as the Event message."""
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(event.timestamp)
    message = pb.Event(position=event.position, aggregate_id=event.aggregate_id,
                       aggregate_version=event.aggregate_version, timestamp=stamp,
                       name=public.NAME)
    field, build = PAYLOADS[type(public)]
    getattr(message, field).CopyFrom(build(public))
    return message


__all__ = ["PAYLOADS", "event_to_proto"]
