"""Scoring a finished hand (docs/rules.md#scoring): full-deal teams, QQ rules, 5/6-card games.

`score_hand(ruleset, facts)` is a pure function of what happened in the hand (`HandFacts`).
Every mode first works out one running total per *side* (a team in team games, else a seat)
and then settles it the same way:

1. the mode's own parts (trick points, finishing penalty or payments, ±20, leftover points),
2. `bomb_bonus=extra`: +50/+100/+300/+1000 for each unbeaten 5/6/7/8-card bomb, to the side
   of the seat that played it,
3. `final`: `raw`, or `diff_tenth` — each side gets the sum over every other side of
   (own total − that side's total) / 10, which for two teams is exactly the traditional
   "(own total − other total) / 10" of full-deal team games,
4. `bomb_bonus=multiplier`: every side's final score × 2/4/8 for each unbeaten 6/7/8-card
   bomb, several multiplying together (it raises the stakes of the whole hand).

The traditional rules give steps 2–4 for full-deal team games only, but a table may set them
with any scoring mode (options are never silently ignored), so they apply everywhere. Numbers
are exact `Decimal`s throughout: `diff_tenth` may end in .5 and QQ seat ratings are halves.

Places: the seats that went out, in order, then the seats still holding cards in the given
order (then, defensively, any seat the facts left out, by seat number). Only a seat that
actually went out earns what a finisher earns (a catch, the QQ +20, a 5/6-card payment, the
leftover as winner), so a hand that ended with nobody out (everyone resigned) pays none of
those.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from math import prod

from fiftyk_referee.domain.fiftyk.rulesets import Ruleset

# Section 6, bomb bonus (福州): card count of an unbeaten `bomb` -> extra points / multiplier.
BOMB_EXTRA_POINTS = {5: 50, 6: 100, 7: 300, 8: 1000}
BOMB_MULTIPLIERS = {6: 2, 7: 4, 8: 8}
# Section 7 (QQ rules).
QQ_FIRST_OUT_BONUS = 20
QQ_STILL_IN_PENALTY = 20
QQ_DOUBLING = 2
TEAM_COUNT = 2  # two teams, so partners sit TEAM_COUNT seats apart

DOUBLE_CATCH = "double"
SINGLE_CATCH = "single"

ZERO = Decimal(0)

SideOf = Callable[[int], int]  # seat -> index of its side (its team, or the seat itself)


def decimal_to_json(value: Decimal) -> int | float:
    """A score as a JSON number: an int when integral, else the exact decimal as a float."""
    if value == value.to_integral_value():
        return int(value)
    return float(value)


def _optional_json(value: Decimal | None) -> int | float | None:
    return None if value is None else decimal_to_json(value)


def _tidy(value: Decimal) -> Decimal:
    """Drop a zero fraction (`25.0` -> `25`) so stored and printed scores read naturally."""
    integral = value.to_integral_value()
    return integral if value == integral else value


@dataclass(frozen=True)
class HandFacts:
    """What happened in a hand, as scoring needs it."""

    players: int
    finish_order: tuple[int, ...]  # seats that went out, in the order they went out
    still_in: tuple[int, ...]  # seats still holding cards at the end, best placed first
    collected: tuple[int, ...]  # trick points collected per seat (index = seat)
    # point value of the cards left in each seat's hand (0 if out); joker_points applied
    leftover_points: tuple[int, ...]
    # (seat, card count) of every `bomb`-type play (N cards of one rank) that won its trick
    unbeaten_bombs: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        problems: list[str] = []
        seats = range(self.players)
        if self.players < 1:
            problems.append(f"players={self.players}")
        if len(self.collected) != self.players or len(self.leftover_points) != self.players:
            problems.append("collected and leftover_points need one entry per seat")
        placed = self.finish_order + self.still_in
        if len(set(placed)) != len(placed) or not set(placed) <= set(seats):
            problems.append(f"finish_order {self.finish_order} and still_in {self.still_in}"
                            " must be distinct seats")
        if any(seat not in seats for seat, _ in self.unbeaten_bombs):
            problems.append(f"unbeaten_bombs {self.unbeaten_bombs} name unknown seats")
        if problems:
            raise ValueError("inconsistent hand facts: " + "; ".join(problems))

    @property
    def places(self) -> tuple[int, ...]:
        """Every seat by finishing place: out in order, then still in, then any left out."""
        placed = self.finish_order + self.still_in
        return placed + tuple(seat for seat in range(self.players) if seat not in placed)

    @property
    def first_out(self) -> int | None:
        """The seat that went out first, if any did."""
        return self.finish_order[0] if self.finish_order else None


@dataclass(frozen=True)
class TeamScore:
    """One team's part of a hand score."""

    seats: tuple[int, ...]
    collected: int
    score: Decimal
    rating: Decimal | None


@dataclass(frozen=True)
class SeatScore:
    """One seat's part of a hand score (in team games: its team's score, half its rating)."""

    seat: int
    score: Decimal
    rating: Decimal | None


@dataclass(frozen=True)
class HandScore:
    """The scored hand: per team and per seat, the winner, the places."""

    teams: tuple[TeamScore, ...]  # empty when the ruleset has no teams
    seats: tuple[SeatScore, ...]  # every seat, index = seat
    winner_team: int | None  # team games; None for a draw
    winner_seat: int | None  # non-team games; None for a draw
    places: tuple[int, ...]  # seats from 1st to last place
    doubled: bool  # QQ rating doubling applied

    def to_json(self) -> dict[str, object]:
        """The "teams", "seats" and "winner" parts of a result (docs/transcript.md)."""
        return {
            "teams": [
                {"seats": list(team.seats), "collected": team.collected,
                 "score": decimal_to_json(team.score), "rating": _optional_json(team.rating)}
                for team in self.teams
            ],
            "seats": [
                {"seat": seat.seat, "score": decimal_to_json(seat.score),
                 "rating": _optional_json(seat.rating)}
                for seat in self.seats
            ],
            "winner": {"team": self.winner_team, "seat": self.winner_seat},
        }

    def side_totals(self) -> dict[str, Decimal]:
        """What a table adds to its cumulative scores: "team:T" keys, or "seat:N" without teams."""
        if self.teams:
            return {f"team:{index}": team.score for index, team in enumerate(self.teams)}
        return {f"seat:{seat.seat}": seat.score for seat in self.seats}


def teams_of(ruleset: Ruleset, players: int) -> tuple[tuple[int, ...], ...]:
    """The teams, partners opposite (`((0, 2), (1, 3))` for 4 players), or `()` without teams."""
    if not ruleset.teams:
        return ()
    return tuple(tuple(range(first, players, TEAM_COUNT)) for first in range(TEAM_COUNT))


def score_hand(ruleset: Ruleset, facts: HandFacts) -> HandScore:
    """Score a finished hand under the ruleset's scoring mode (`team`, `qq` or `stock`)."""
    teams = teams_of(ruleset, facts.players)
    if ruleset.scoring == "team":
        return _score_team_hand(ruleset, facts, teams)
    if ruleset.scoring == "qq":
        if teams:
            return _score_qq_teams(ruleset, facts, teams)
        return _score_qq_three(ruleset, facts)
    if ruleset.scoring == "stock":
        return _score_stock(ruleset, facts)
    raise ValueError(f"unknown scoring mode {ruleset.scoring!r}")


# -- full-deal teams (docs/rules.md#full-deal-team-games-scoringteam) -----------------------


def catch_of(facts: HandFacts, teams: Sequence[Sequence[int]]) -> tuple[int, str] | None:
    """The catching team and `"double"`/`"single"`, judged only from seats that went out.

    The team of the first player out catches double when its partner went out 2nd (双抓) and
    single when the partner went out 3rd (单抓). Otherwise — the other team went out 2nd and
    3rd (1st and 4th vs 2nd and 3rd, 平), or the hand ended before a partner went out — nobody
    pays. A partner only implied to be 2nd or 3rd by `still_in` never catches.
    """
    order = facts.finish_order
    if not order:
        return None
    team = _team_index(teams, order[0])
    if len(order) > 1 and _team_index(teams, order[1]) == team:
        return team, DOUBLE_CATCH
    if len(order) > 2 and _team_index(teams, order[2]) == team:
        return team, SINGLE_CATCH
    return None


def _score_team_hand(ruleset: Ruleset, facts: HandFacts,
                     teams: tuple[tuple[int, ...], ...]) -> HandScore:
    """Section 6: trick points, finishing penalty, leftover, bomb bonus, final score.

    Leftover points are those in the hands of the `still_in` seats: `to_winners` gives them
    to the other team, `deduct` subtracts them from the holder's team, `void` drops them.
    The team with the higher final score wins; equal is a draw.
    """
    totals = [Decimal(sum(facts.collected[seat] for seat in team)) for team in teams]
    catch = catch_of(facts, teams)
    if catch is not None:
        catcher, kind = catch
        penalty = ruleset.double_catch if kind == DOUBLE_CATCH else ruleset.single_catch
        totals[catcher] += penalty
        totals[_other_team(catcher)] -= penalty
    for seat in facts.still_in:
        holder = _team_index(teams, seat)
        _move_leftover(ruleset, totals, facts.leftover_points[seat], holder,
                       _other_team(holder))
    scores = _settle(ruleset, facts, totals, lambda seat: _team_index(teams, seat))
    return _team_result(facts, teams, scores, _unique_best(scores), ratings=None)


# -- QQ rules (docs/rules.md#the-qq-rules-scoringqq) ----------------------------------------


def _qq_totals(facts: HandFacts, sides: Sequence[Decimal], side_of: SideOf) -> list[Decimal]:
    """Section 7 parts: +20 to the first out; −20 and their hand's points off each player left."""
    totals = list(sides)
    first = facts.first_out
    if first is not None:
        totals[side_of(first)] += QQ_FIRST_OUT_BONUS
    for seat in facts.still_in:
        totals[side_of(seat)] -= QQ_STILL_IN_PENALTY + facts.leftover_points[seat]
    return totals


def _score_qq_teams(ruleset: Ruleset, facts: HandFacts,
                    teams: tuple[tuple[int, ...], ...]) -> HandScore:
    """Section 7, 4 players in teams.

    The first player out earns +20 for the team; every player still holding cards loses 20
    plus the points in their hand (the `leftover` option plays no part: the QQ rules fix
    this). Higher total wins; a tie goes to the first player out's team (a draw only if
    nobody went out). Rating = team total, × 2 when the losing team collected no trick
    points and did not have the first player out; each player gets half their team's rating.
    """

    def side_of(seat: int) -> int:
        return _team_index(teams, seat)

    collected = [Decimal(sum(facts.collected[seat] for seat in team)) for team in teams]
    scores = _settle(ruleset, facts, _qq_totals(facts, collected, side_of), side_of)
    winner = _unique_best(scores)
    first = facts.first_out
    if winner is None and first is not None:
        winner = side_of(first)
    doubled = False
    if winner is not None:
        loser = _other_team(winner)
        loser_had_first = first is not None and side_of(first) == loser
        doubled = collected[loser] == 0 and not loser_had_first
    ratings = [score * (QQ_DOUBLING if doubled else 1) for score in scores]
    return _team_result(facts, teams, scores, winner, ratings=ratings, doubled=doubled)


def _score_qq_three(ruleset: Ruleset, facts: HandFacts) -> HandScore:
    """Section 7, 3 players: +20 first out, −20 and the hand's points for the player left.

    Places go by score, high to low; a tie goes to the player who went out earlier (seats
    still holding cards rank after every seat that went out, in the given order). When the
    2nd and 3rd placed both collected no trick points every rating doubles; otherwise a
    player's rating is their score (decision). The 1st placed player wins.
    """
    totals = _qq_totals(facts, [Decimal(points) for points in facts.collected], _same_seat)
    scores = _settle(ruleset, facts, totals, _same_seat)
    finishing = facts.places
    places = tuple(sorted(finishing, key=lambda seat: (-scores[seat], finishing.index(seat))))
    doubled = all(facts.collected[seat] == 0 for seat in places[1:])
    factor = QQ_DOUBLING if doubled else 1
    seats = tuple(SeatScore(seat, scores[seat], _tidy(scores[seat] * factor))
                  for seat in range(facts.players))
    return HandScore(teams=(), seats=seats, winner_team=None, winner_seat=places[0],
                     places=places, doubled=doubled)


# -- 5/6-card games (docs/rules.md#56-card-games-scoringstock) ------------------------------


def _score_stock(ruleset: Ruleset, facts: HandFacts) -> HandScore:
    """Section 8: trick points, loser payments and leftover points, plain total.

    `end=first_out`: every other player pays `loser_payment` to the first player out.
    `end=last_standing`: every player pays `loser_payment` to each player who went out
    before them (players still holding cards pay every player who went out, not each
    other). Leftover `to_winners` goes to the first player out, `void` to nobody. The
    highest score wins the hand; a tie goes to the better-placed seat.
    """
    totals = [Decimal(points) for points in facts.collected]
    payment = ruleset.loser_payment
    first = facts.first_out
    if ruleset.end == "first_out":
        if first is not None:
            for seat in range(facts.players):
                if seat != first:
                    totals[seat] -= payment
                    totals[first] += payment
    else:
        for seat in facts.places:
            for earlier in _went_out_before(facts, seat):
                totals[seat] -= payment
                totals[earlier] += payment
    for seat in facts.still_in:
        _move_leftover(ruleset, totals, facts.leftover_points[seat], seat, first)
    scores = _settle(ruleset, facts, totals, _same_seat)
    places = facts.places
    winner = min(places, key=lambda seat: (-scores[seat], places.index(seat)))
    seats = tuple(SeatScore(seat, scores[seat], None) for seat in range(facts.players))
    return HandScore(teams=(), seats=seats, winner_team=None, winner_seat=winner,
                     places=places, doubled=False)


def _went_out_before(facts: HandFacts, seat: int) -> tuple[int, ...]:
    if seat in facts.finish_order:
        return facts.finish_order[: facts.finish_order.index(seat)]
    return facts.finish_order


# -- shared steps ---------------------------------------------------------------------------


def _same_seat(seat: int) -> int:
    return seat


def _team_index(teams: Sequence[Sequence[int]], seat: int) -> int:
    for index, team in enumerate(teams):
        if seat in team:
            return index
    raise ValueError(f"seat {seat} is in no team")


def _other_team(team: int) -> int:
    return 1 - team


def _move_leftover(ruleset: Ruleset, totals: list[Decimal], points: int, holder: int,
                   recipient: int | None) -> None:
    """Apply `leftover` to one holder's points; `to_winners` without a recipient is void."""
    if ruleset.leftover == "deduct":
        totals[holder] -= points
    elif ruleset.leftover == "to_winners" and recipient is not None:
        totals[recipient] += points


def _settle(ruleset: Ruleset, facts: HandFacts, totals: Sequence[Decimal],
            side_of: SideOf) -> list[Decimal]:
    """Bomb extra points, then the `final` transform, then the bomb multiplier."""
    totals = list(totals)
    if ruleset.bomb_bonus == "extra":
        for seat, size in facts.unbeaten_bombs:
            totals[side_of(seat)] += BOMB_EXTRA_POINTS.get(size, 0)
    if ruleset.final == "diff_tenth":
        grand = sum(totals, ZERO)
        sides = len(totals)
        totals = [(sides * total - grand).scaleb(-1) for total in totals]
    if ruleset.bomb_bonus == "multiplier":
        factor = bomb_multiplier(size for _, size in facts.unbeaten_bombs)
        totals = [total * factor for total in totals]
    return [_tidy(total) for total in totals]


def bomb_multiplier(sizes: Iterable[int]) -> int:
    """The product of ×2/×4/×8 over unbeaten 6/7/8-card bombs (1 when there are none)."""
    return prod(BOMB_MULTIPLIERS.get(size, 1) for size in sizes)


def _unique_best(scores: Sequence[Decimal]) -> int | None:
    """The index of the single highest score, or None when the top is shared."""
    best = max(scores)
    leaders = [index for index, score in enumerate(scores) if score == best]
    return leaders[0] if len(leaders) == 1 else None


def _team_result(facts: HandFacts, teams: tuple[tuple[int, ...], ...], scores: list[Decimal],
                 winner: int | None, *, ratings: list[Decimal] | None,
                 doubled: bool = False) -> HandScore:
    team_scores = tuple(
        TeamScore(seats=team, collected=sum(facts.collected[seat] for seat in team),
                  score=scores[index],
                  rating=None if ratings is None else _tidy(ratings[index]))
        for index, team in enumerate(teams)
    )
    seats = []
    for seat in range(facts.players):
        team = team_scores[_team_index(teams, seat)]
        share = None if team.rating is None else _tidy(team.rating / len(team.seats))
        seats.append(SeatScore(seat, team.score, share))
    return HandScore(teams=team_scores, seats=tuple(seats), winner_team=winner,
                     winner_seat=None, places=facts.places, doubled=doubled)
