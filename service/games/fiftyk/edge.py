"""五十K at the gRPC edge: its views, results and public events as its own messages
(fiftyk.games.fiftyk.v1, `fiftyk_pb2` beside this module) in the fiftyk.referee.v1 ones, and
the fields 0.2 clients read."""

from __future__ import annotations

from fiftyk_referee.domain.fiftyk import events as fiftyk
from fiftyk_referee.domain.fiftyk.hand import PASS_BY_PLAYER, PASS_EMPTY_HAND, PASS_TIMEOUT
from fiftyk_referee.domain.fiftyk.views import NAME as FIFTYK
from fiftyk_referee.domain.fiftyk.views import HandResult, HandView, TrickEntry
from fiftyk_referee.domain.observer import seat_of
from fiftyk_referee.domain.table import rules_of
from fiftyk_referee.service.games.fiftyk import fiftyk_pb2 as fpb
from fiftyk_referee.service.grpc.convert import decimal_text, ruleset_to_proto, side_totals
from fiftyk_referee.service.grpc.games import EdgeGame, Payloads, TypedEdge, legacy_copy
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

PASS_REASONS = {
    PASS_BY_PLAYER: fpb.PASS_REASON_PLAYER,
    PASS_TIMEOUT: fpb.PASS_REASON_TIMEOUT,
    PASS_EMPTY_HAND: fpb.PASS_REASON_EMPTY_HAND,
}


def result_to_proto(result: HandResult) -> fpb.HandResult:
    """A hand's result as its HandResult."""
    message = fpb.HandResult(places=result.places)
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


def view_message(view: HandView) -> fpb.HandView:
    """What only a 五十K hand shows, as its HandView (the core HandView's `game_view`)."""
    message = fpb.HandView(trick_points=view.trick_points, finish_order=view.finish_order,
                           stock=view.stock or ())
    if view.stock_count is not None:
        message.stock_count = view.stock_count
    for announcement in view.announcements:
        message.announcements.add(seat=announcement.seat, cards=announcement.cards)
    if view.top is not None:
        message.top_play.CopyFrom(pb.TrickAction(
            seat=view.top.seat, kind=pb.ACTION_KIND_PLAY, cards=view.top.cards,
            combination_type=view.top.combination))
    if view.result is not None:
        message.result.CopyFrom(result_to_proto(view.result))
    return message


def fiftyk_hand_to_proto(view: HandView, own: fpb.HandView) -> pb.HandView:
    """A 五十K hand as one viewer sees it, as HandView: the common fields, and the 0.2 fields
    copied from its own view message `own`."""
    message = pb.HandView(
        hand_id=view.hand_id, table_id=view.table_id, hand_number=view.number,
        full_view=view.full, dealer=view.dealer, trick_points=own.trick_points,
        finish_order=own.finish_order, deal_commitment=view.commitment,
        version=view.version, stock=own.stock,
        status=pb.HAND_STATUS_COMPLETED if view.is_over else pb.HAND_STATUS_IN_PROGRESS,
    )
    viewer_seat = seat_of(view.viewer)
    if viewer_seat is not None:
        message.viewer_seat = viewer_seat
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
    if own.HasField("stock_count"):
        message.stock_count = own.stock_count
    for announcement in own.announcements:
        message.announcements.add(seat=announcement.seat, cards=announcement.cards)
    message.trick.extend(_trick_action(entry) for entry in view.trick)
    if own.HasField("top_play"):
        message.top_play.CopyFrom(own.top_play)
    if view.leader is not None:
        message.leader = view.leader
    if view.turn is not None:
        message.turn_seat = view.turn
    if view.turn_deadline is not None:
        message.turn_deadline.FromDatetime(view.turn_deadline)
    if view.seed:
        message.deal_seed = view.seed
    if own.HasField("result"):
        legacy_copy(own.result.SerializeToString(), message.result)
    return message


def _dealt(event: fiftyk.HandDealt) -> fpb.HandDealt:
    message = fpb.HandDealt(
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


def _played(event: fiftyk.CardsPlayed) -> fpb.CardsPlayed:
    return fpb.CardsPlayed(seat=event.seat, cards=event.cards,
                           combination_type=event.combination_type, points=event.points,
                           by_referee=event.by_referee)


def _passed(event: fiftyk.Passed) -> fpb.Passed:
    return fpb.Passed(seat=event.seat, reason=PASS_REASONS[event.reason])


def _resigned(event: fiftyk.Resigned) -> fpb.Resigned:
    return fpb.Resigned(seat=event.seat)


def _trick_won(event: fiftyk.TrickWon) -> fpb.TrickWon:
    message = fpb.TrickWon(seat=event.seat, points=event.points)
    if event.next_leader is not None:
        message.next_leader = event.next_leader
    return message


def _drawn(event: fiftyk.CardsDrawn) -> fpb.CardsDrawn:
    return fpb.CardsDrawn(seat=event.seat, count=event.count, cards=event.cards)


def _announced(event: fiftyk.Announced) -> fpb.Announced:
    return fpb.Announced(seat=event.seat, cards_left=event.cards_left)


def _went_out(event: fiftyk.WentOut) -> fpb.WentOut:
    return fpb.WentOut(seat=event.seat, place=event.place)


def _ended(event: fiftyk.HandEnded) -> fpb.HandEnded:
    result = event.result
    message = fpb.HandEnded(result=result_to_proto(result), finish_order=result.finish_order,
                            collected=event.collected,
                            scores=side_totals(result.side_totals.items()))
    if event.deal_seed is not None:
        message.deal_seed = event.deal_seed
    return message


PAYLOADS: Payloads = {
    fiftyk.HandDealt: ("fiftyk_hand_dealt", _dealt),
    fiftyk.CardsPlayed: ("fiftyk_cards_played", _played),
    fiftyk.Passed: ("fiftyk_passed", _passed),
    fiftyk.Resigned: ("fiftyk_resigned", _resigned),
    fiftyk.TrickWon: ("fiftyk_trick_won", _trick_won),
    fiftyk.CardsDrawn: ("fiftyk_cards_drawn", _drawn),
    fiftyk.Announced: ("fiftyk_announced", _announced),
    fiftyk.WentOut: ("fiftyk_went_out", _went_out),
    fiftyk.HandEnded: ("fiftyk_hand_ended", _ended),
}


EDGE = TypedEdge(FIFTYK, PAYLOADS, HandView, view_message, fiftyk_hand_to_proto,
                 None, HandResult, "result", result_to_proto)
_EDGE_CHECK: EdgeGame = EDGE

__all__ = ["EDGE", "PAYLOADS", "fiftyk_hand_to_proto", "result_to_proto", "view_message"]
