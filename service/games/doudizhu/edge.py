"""斗地主 at the gRPC edge: its views, results and public events as its own messages
(fiftyk.games.doudizhu.v1, `doudizhu_pb2` beside this module) inside the fiftyk.referee.v1
ones (`HandView.game_view`, `HandScore.game_outcome`, `Event.game_event`).

斗地主 is newer than the 0.2 API, so it fills no 0.2 field: no `HandView.doudizhu`, no
`Event.doudizhu_*` (there are none); clients read its messages from the Any payloads.
"""

from __future__ import annotations

import json

from fiftyk_referee.domain.doudizhu import events as ddz
from fiftyk_referee.domain.doudizhu.bidding import BID, BidEntry
from fiftyk_referee.domain.doudizhu.rulesets import GAME_NAME as DOUDIZHU
from fiftyk_referee.domain.doudizhu.rulesets import DoudizhuRules
from fiftyk_referee.domain.doudizhu.views import DoudizhuResult, DoudizhuView, Phase
from fiftyk_referee.domain.observer import seat_of
from fiftyk_referee.service.games.doudizhu import doudizhu_pb2 as dpb
from fiftyk_referee.service.grpc.convert import ruleset_to_proto
from fiftyk_referee.service.grpc.games import EdgeGame, Payloads, TypedEdge
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb


def bid_to_proto(entry: BidEntry) -> dpb.Bid:
    """One word of the bidding."""
    return dpb.Bid(seat=entry.seat, action=entry.kind,
                   points=entry.value if entry.kind == BID and entry.value else 0,
                   by_referee=entry.by_referee)


def result_to_proto(result: DoudizhuResult) -> dpb.HandResult:
    """A 斗地主 hand's result as its HandResult."""
    message = dpb.HandResult(
        winner=result.winner or "", base=result.base_score, scores=result.scores,
        redeal=result.redeal, unit=result.unit, kitty=result.kitty,
        multiplier=dpb.Multiplier(
            bid=result.bid, robs=result.robs, bombs=result.bombs, rockets=result.rockets,
            spring=result.spring, anti_spring=result.anti_spring, total=result.multiplier,
            uncapped=result.uncapped_multiplier),
        result_json=json.dumps(result_json(result), ensure_ascii=False, sort_keys=True))
    if result.landlord is not None:
        message.landlord = result.landlord
    if result.winning_seat is not None:
        message.winning_seat = result.winning_seat
    return message


def result_json(result: DoudizhuResult) -> dict[str, object]:
    """The result as plain JSON (the same document the hand recorded)."""
    return {
        "redeal": result.redeal, "landlord": result.landlord, "bid": result.bid,
        "robs": result.robs, "winner": result.winner, "winning_seat": result.winning_seat,
        "bombs": result.bombs, "rockets": result.rockets, "spring": result.spring,
        "anti_spring": result.anti_spring, "uncapped_multiplier": result.uncapped_multiplier,
        "multiplier": result.multiplier, "base_score": result.base_score, "unit": result.unit,
        "scores": list(result.scores), "kitty": list(result.kitty),
        "side_totals": {side: str(total) for side, total in result.side_totals.items()},
    }


def view_message(view: DoudizhuView) -> dpb.HandView:
    """What a 斗地主 hand shows beyond the common HandView, as its HandView (`game_view`)."""
    state = dpb.HandView(
        phase=str(view.phase), bids=[bid_to_proto(entry) for entry in view.bids],
        kitty=view.kitty or (), kitty_shown=view.kitty is not None and view.landlord is not None,
        counts=[seat.card_count for seat in view.seats], redeal=_redeal(view),
        bidding=view.bidding, first_bidder=view.first_bidder,
        multiplier=dpb.Multiplier(bid=view.highest_bid, robs=view.robs, bombs=view.bombs,
                                  rockets=view.rockets, total=view.multiplier,
                                  uncapped=view.uncapped_multiplier))
    if view.landlord is not None:
        state.landlord = view.landlord
    if view.top is not None:
        state.top.CopyFrom(dpb.Play(seat=view.top.seat, cards=view.top.cards,
                                    combination_type=view.top.combination))
    if view.leader is not None and view.phase != Phase.BIDDING:
        state.leader = view.leader
    if view.result is not None:
        state.result.CopyFrom(result_to_proto(view.result))
        state.multiplier.CopyFrom(state.result.multiplier)
    return state


def _redeal(view: DoudizhuView) -> bool:
    return view.result is not None and view.result.redeal


def hand_to_proto(view: DoudizhuView, own: dpb.HandView) -> pb.HandView:
    """A 斗地主 hand as one viewer sees it: the common fields (`own`, its own view message,
    goes in `game_view`)."""
    message = pb.HandView(
        hand_id=view.hand_id, table_id=view.table_id, hand_number=view.number,
        full_view=view.full, dealer=view.dealer, deal_commitment=view.commitment,
        version=view.version,
        status=pb.HAND_STATUS_COMPLETED if view.is_over else pb.HAND_STATUS_IN_PROGRESS)
    seat = seat_of(view.viewer)
    if seat is not None:
        message.viewer_seat = seat
        message.own_cards.extend(view.own_cards)
    for state in view.seats:
        shown = message.seats.add(seat=state.seat, card_count=state.card_count)
        if state.cards is not None:
            shown.cards.extend(state.cards)
    for entry in view.trick:
        if entry.cards is None:
            message.trick.add(seat=entry.seat, kind=pb.ACTION_KIND_PASS,
                              by_referee=entry.by_referee)
        else:
            message.trick.add(seat=entry.seat, kind=pb.ACTION_KIND_PLAY, cards=entry.cards,
                              combination_type=entry.combination, by_referee=entry.by_referee)
    if view.leader is not None and view.phase != Phase.BIDDING:
        message.leader = view.leader
    if view.to_act is not None:
        message.turn_seat = view.to_act
    if view.turn_deadline is not None:
        message.turn_deadline.FromDatetime(view.turn_deadline)
    if view.seed:
        message.deal_seed = view.seed
    return message


def _dealt(event: ddz.HandDealt) -> dpb.HandDealt:
    message = dpb.HandDealt(
        table_id=event.table_id, hand_number=event.hand_number,
        ruleset=ruleset_to_proto(event.ruleset, DoudizhuRules.from_json(event.ruleset),
                                 DOUDIZHU),
        dealer=event.dealer, first_bidder=event.first_bidder,
        player_ids=[player or "" for player in event.player_ids],
        deal_commitment=event.deal_commitment,
        hands=[pb.DealtCards(seat=h.seat, card_count=h.card_count, cards=h.cards)
               for h in event.hands],
        kitty_count=event.kitty_count, kitty=event.kitty, deck=event.deck)
    if event.deal_seed is not None:
        message.deal_seed = event.deal_seed
    return message


def _bid(event: ddz.Bid) -> dpb.Bid:
    return dpb.Bid(seat=event.seat, action=event.kind, points=event.points,
                   by_referee=event.by_referee)


def _landlord(event: ddz.LandlordChosen) -> dpb.LandlordChosen:
    return dpb.LandlordChosen(landlord=event.seat, kitty=event.kitty, bid=event.bid,
                              robs=event.robs)


def _played(event: ddz.CardsPlayed) -> dpb.CardsPlayed:
    return dpb.CardsPlayed(seat=event.seat, cards=event.cards,
                           combination_type=event.combination_type,
                           by_referee=event.by_referee)


def _passed(event: ddz.Passed) -> dpb.Passed:
    return dpb.Passed(seat=event.seat, by_referee=event.by_referee)


def _trick_ended(event: ddz.TrickEnded) -> dpb.TrickEnded:
    return dpb.TrickEnded(next_leader=event.next_leader)


def _ended(event: ddz.HandEnded) -> dpb.HandEnded:
    message = dpb.HandEnded(result=result_to_proto(event.result))
    if event.deal_seed is not None:
        message.deal_seed = event.deal_seed
    return message


# No 0.2 field (None): every payload travels in `Event.game_event` alone.
PAYLOADS: Payloads = {
    ddz.HandDealt: (None, _dealt),
    ddz.Bid: (None, _bid),
    ddz.LandlordChosen: (None, _landlord),
    ddz.CardsPlayed: (None, _played),
    ddz.Passed: (None, _passed),
    ddz.TrickEnded: (None, _trick_ended),
    ddz.HandEnded: (None, _ended),
}


EDGE = TypedEdge(DOUDIZHU, PAYLOADS, DoudizhuView, view_message, hand_to_proto, None,
                 DoudizhuResult, None, result_to_proto)
_EDGE_CHECK: EdgeGame = EDGE

__all__ = ["EDGE", "PAYLOADS", "bid_to_proto", "hand_to_proto", "result_json",
           "result_to_proto", "view_message"]
