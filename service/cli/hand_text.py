"""Plain-text accounts of hands for the command line (`fiftyk demo`, `fiftyk replay`).

What every game shares: fiftyk.referee.v1 views, results and trick lines (a game tells its
own events in its package, `service/games/<game>/text.py`); nothing calls the server.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

ORDINALS = {1: "1st", 2: "2nd", 3: "3rd"}


def place_text(place: int) -> str:
    """1st, 2nd, 3rd, 4th, ..."""
    return ORDINALS.get(place, f"{place}th")


def cards_text(cards: Iterable[str]) -> str:
    """Cards separated by spaces, or `-` for none."""
    return " ".join(cards) or "-"


def play_text(seat: int, combination_type: str, cards: Sequence[str], *,
              by_referee: bool = False) -> str:
    """`seat 2 pair 5S 5H`, marked when the referee played for a timed-out seat."""
    text = f"seat {seat} {combination_type or 'play'} {cards_text(cards)}"
    return text + " (timed out)" if by_referee else text


def pass_text(seat: int, *, by_referee: bool = False) -> str:
    """`seat 3 pass`, marked when the referee passed for a timed-out seat."""
    return f"seat {seat} pass" + (" (timed out)" if by_referee else "")


def action_text(action: pb.TrickAction) -> str:
    """One action of a trick."""
    if action.kind == pb.ACTION_KIND_PASS:
        return pass_text(action.seat, by_referee=action.by_referee)
    return play_text(action.seat, action.combination_type, list(action.cards),
                     by_referee=action.by_referee)


def trick_text(number: int, actions: Iterable[str], winner: int | None,
               points: int | None) -> str:
    """`trick 3: seat 0 single 9S · seat 1 pass · ... → seat 0 takes 10 points`."""
    text = f"trick {number}: " + " · ".join(actions)
    if winner is not None:
        text += f" → seat {winner} takes {points or 0} points"
    return text


def side_text(seats: Sequence[int]) -> str:
    """`team 0+2` for a team, `seat 1` for a single seat."""
    if len(seats) == 1:
        return f"seat {seats[0]}"
    return "team " + "+".join(str(s) for s in seats)


def totals_text(totals: Iterable[pb.SideScore]) -> str:
    """`team 0+2 170, team 1+3 230`."""
    return ", ".join(f"{side_text(list(t.seats))} {t.score}" for t in totals) or "-"


def result_lines(result: pb.HandResult) -> list[str]:
    """The scoring of a completed hand."""
    lines: list[str] = []
    for team in result.teams:
        rating = f", rating {team.rating}" if team.HasField("rating") else ""
        lines.append(f"{side_text(list(team.seats))}: collected {team.collected},"
                     f" score {team.score}{rating}")
    if not result.teams:
        for seat in result.seats:
            rating = f", rating {seat.rating}" if seat.HasField("rating") else ""
            lines.append(f"seat {seat.seat}: score {seat.score}{rating}")
    if result.HasField("winning_team"):
        lines.append(f"winner: {side_text(list(result.teams[result.winning_team].seats))}")
    elif result.HasField("winning_seat"):
        lines.append(f"winner: seat {result.winning_seat}")
    else:
        lines.append("winner: none (a draw)")
    lines.append("places: " + " ".join(f"{place_text(i + 1)} seat {seat}"
                                       for i, seat in enumerate(result.places)))
    return lines


def seat_line(state: pb.SeatState) -> str:
    """One seat of a full (audit) view: its cards, what it collected, whether it is out."""
    status = ""
    if state.HasField("finish_place"):
        status = f", out {place_text(state.finish_place)}"
    if state.resigned:
        status += ", resigned"
    return (f"seat {state.seat}: {len(state.cards)} cards {cards_text(state.cards)};"
            f" collected {state.collected}{status}")


def state_lines(view: pb.HandView) -> list[str]:
    """A hand as it stands in one view: seats, the trick so far, whose turn it is."""
    lines = [seat_line(state) for state in view.seats]
    if view.HasField("stock_count"):
        lines.append(f"stock: {view.stock_count} cards {cards_text(view.stock)}")
    if view.trick:
        lines.append("current trick: " + " · ".join(action_text(a) for a in view.trick)
                     + f" ({view.trick_points} points on the table)")
    if view.status == pb.HAND_STATUS_COMPLETED:
        lines.append("the hand is over")
        if view.HasField("result"):
            lines.extend(result_lines(view.result))
    elif view.HasField("turn_seat"):
        leads = " and leads" if not view.trick else ""
        lines.append(f"to act: seat {view.turn_seat}{leads}")
    return lines


__all__ = [
    "action_text",
    "cards_text",
    "pass_text",
    "place_text",
    "play_text",
    "result_lines",
    "seat_line",
    "side_text",
    "state_lines",
    "totals_text",
    "trick_text",
]
