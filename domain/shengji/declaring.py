"""Shengji's declaring phase: the paced deal and the declaration windows that fix trump.

The deal comes round by round, with a declaration window after each round under
`declare_pacing=rounds` (or one final window). In a window any seat may declare trump with
cards it holds (an overcall must be strictly stronger: the declaration ladder `RUNGS`) or
declare nothing; the window closes when every seat has spoken, or at the table's timer.
When the last window closes the declaration standing fixes the trump suit and the dealer
(a match's first hand: `first_hand_dealer`), who takes the kitty: the burying phase.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from fiftyk_referee.domain.cards import BJ, SJ, Card, make_deck, parse_card
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.game import Constraint, LegalActions, LegalPlay
from fiftyk_referee.domain.shengji.hand_state import DECLARE, DECLARING, HandState, rank_name
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import PLAYERS, ShengjiRules
from fiftyk_referee.domain.shengji.views import Declaration

MAX_WINDOW_DIGITS = 3  # rounds are at most a hand's size
BY_PASSES, BY_TIMER, BY_TRANSCRIPT = "passes", "timer", "transcript"
DEFAULT_FIRST_DEALER = 0  # nobody declared in a first hand: seat 0 deals (a decision)
# Declaration forms, weakest first: (copies, what) -> rung; what is "R" (trump rank) or a joker.
RUNGS: dict[tuple[int, str], int] = {(1, "R"): 1, (2, "R"): 2, (2, "SJ"): 3, (2, "BJ"): 4,
                                     (3, "R"): 5, (3, "SJ"): 6, (3, "BJ"): 7}


@lru_cache(maxsize=4)
def base_deck(packs: int) -> tuple[Card, ...]:
    """The cards of `packs` packs with their jokers, in their canonical order."""
    return tuple(make_deck(packs, jokers=True))


def check_deck(rules: ShengjiRules, deck: Sequence[str]) -> list[str]:
    """The deck in notation, if it is exactly the ruleset's multiset (else INVALID_DEAL)."""
    try:
        cards = [parse_card(c) for c in deck]
    except RuleError as error:
        raise RuleError(Reason.INVALID_DEAL, f"deck: {error.message}") from error
    if Counter(cards) != Counter(base_deck(rules.packs)):
        raise RuleError(Reason.INVALID_DEAL,
                        f"the deck must be exactly the {rules.deck_size} cards of"
                        f" {rules.packs} pack(s)")
    return [str(c) for c in cards]


def declaration_rung(cards: Sequence[Card], rank: int, packs: int) -> tuple[int, str | None]:
    """(rung, suit or None for no-trump) of a declaration (`INVALID_DECLARATION` if none)."""
    if not cards or len(set(cards)) != 1 or len(cards) > packs:
        raise RuleError(ShengjiReason.INVALID_DECLARATION,
                        f"declare 1 to {packs} identical trump-rank cards or identical jokers")
    card = cards[0]
    if card in (SJ, BJ):
        rung = RUNGS.get((len(cards), str(card)))
        if rung is None:
            raise RuleError(ShengjiReason.INVALID_DECLARATION,
                            "a joker declaration needs ≥ 2 jokers")
        return rung, None
    if card.rank != rank:
        raise RuleError(ShengjiReason.INVALID_DECLARATION,
                        f"{card} is not of the trump rank {rank_name(rank)}")
    return RUNGS[(len(cards), "R")], card.suit


def window_of(value: str | None) -> int | None:
    """The declaration window a DECLARE action's value names (its round, decimal text)."""
    if value is None:
        return None
    if not value.isdigit() or len(value) > MAX_WINDOW_DIGITS:
        raise RuleError(Reason.INVALID_ACTION,
                        f"a declaration's value names its window: a round number, not {value!r}")
    return int(value)


def overcall(cards: Sequence[Card], rank: int, packs: int,
             standing: Declaration | None) -> tuple[int, str | None]:
    """(rung, suit) of a declaration strictly stronger than `standing`.

    `INVALID_DECLARATION` when the cards are no form of the ladder, `DECLARATION_TOO_WEAK`
    when they do not overcall the standing declaration (among equals the first stands).
    """
    rung, suit = declaration_rung(cards, rank, packs)
    if standing is not None and rung <= standing.rung:
        raise RuleError(ShengjiReason.DECLARATION_TOO_WEAK,
                        f"{' '.join(map(str, cards))} does not overcall"
                        f" {' '.join(standing.cards)}")
    return rung, suit


def first_hand_dealer(rules: ShengjiRules, first_declarer: int | None,
                      standing: Declaration | None) -> int:
    """The dealer of a match's first hand once the windows close (`first_hand_dealer`)."""
    if rules.first_hand_dealer == "first_declarer" and first_declarer is not None:
        return first_declarer
    if standing is not None:
        return standing.seat
    return DEFAULT_FIRST_DEALER


@dataclass(frozen=True)
class DeclarationOutcome:
    """A sequence of declarations judged in order: each one's fate, the trump, the dealer."""

    results: tuple[RuleError | None, ...]  # None: accepted
    standing: Declaration | None  # the declaration that fixes the trump suit
    dealer: int


def judge_declarations(rules: ShengjiRules, rank: int, dealer: int | None,
                       declarations: Sequence[tuple[int, Sequence[Card]]]) -> DeclarationOutcome:
    """Judge (seat, cards) declarations in the referee's order of acceptance, cards as held.

    The same checks as a live hand's `declare` (form, then strength) without the deal: every
    declaration is taken as made in one window with cards the seat holds. `dealer` None is a
    match's first hand, whose dealer then follows `first_hand_dealer`.
    """
    standing: Declaration | None = None
    first_declarer: int | None = None
    results: list[RuleError | None] = []
    for seat, cards in declarations:
        try:
            rung, suit = overcall(cards, rank, rules.packs, standing)
        except RuleError as refused:
            results.append(refused)
            continue
        # Round 0: the sequence is judged outside a deal, so no round is named.
        standing = Declaration(seat, tuple(map(str, cards)), 0, rung, suit)
        if first_declarer is None:
            first_declarer = seat
        results.append(None)
    if dealer is None:
        dealer = first_hand_dealer(rules, first_declarer, standing)
    return DeclarationOutcome(tuple(results), standing, dealer)


class Declaring(HandState):
    """The declaring phase of a hand: declarations, windows, the paced deal."""

    def declare(self, seat: int, cards: Sequence[Card], round: int | None = None, *,
                window: int | None = None) -> None:
        """Declare trump with cards held (none: declare nothing in this window).

        `round` (transcripts) first closes windows until the one after that round is open;
        `window` (clients) names the window the seat saw open, and is refused
        `WRONG_WINDOW` when another one is open now."""
        self._check_declaring(seat)
        if round is not None:
            self._advance_to_round(round)
        rung_suit = self._checked_declaration(seat, cards, window)
        if rung_suit is None:
            self._spoke(seat=seat)
            if len(self.spoken) == PLAYERS:
                self._close_window(BY_PASSES)
            return
        rung, suit = rung_suit
        self._declared(seat=seat, cards=[str(c) for c in cards], round=self.round, rung=rung,
                       suit=suit)

    def _check_declaring(self, seat: int) -> None:
        if self.is_over:
            raise RuleError(Reason.HAND_OVER, "the hand is over")
        self._check_seat(seat)
        if self.phase != DECLARING:
            raise RuleError(ShengjiReason.NOT_DECLARATION_PHASE,
                            "the declaration windows are closed")

    def _checked_declaration(self, seat: int, cards: Sequence[Card], window: int | None
                             ) -> tuple[int, str | None] | None:
        """The declaration's rung and suit (None: it declares nothing), or its refusal."""
        self._check_declaring(seat)
        if window is not None and window != self.round:
            raise RuleError(ShengjiReason.WRONG_WINDOW,
                            f"the window after round {window} is not open (now: after round"
                            f" {self.round})")
        if not cards:
            if seat in self.spoken:
                raise RuleError(Reason.NOT_YOUR_TURN,
                                f"seat {seat} already declared nothing in this window")
            return None
        missing = self._missing(self.hands[seat], cards)
        if missing:
            raise RuleError(Reason.CARDS_NOT_IN_HAND,
                            f"seat {seat} does not hold {' '.join(map(str, missing))}"
                            f" after round {self.round}")
        return overcall(cards, self.rank, self.rules.packs, self.declaration)

    def _advance_to_round(self, round: int) -> None:
        """Transcripts: close windows until the one after `round` is open."""
        pacing_final = self.rules.declare_pacing == "final"
        if isinstance(round, bool) or not isinstance(round, int) or round < self.round or (
                round > self.rules.hand_size) or (pacing_final and round != self.rules.hand_size):
            raise RuleError(ShengjiReason.NOT_DECLARATION_PHASE,
                            f"no declaration window after round {round!r} is open"
                            f" (now: after round {self.round})")
        while self.round < round:
            self._window_closed(round=self.round, by=BY_TRANSCRIPT)
            self._deal_next()

    def close_declarations(self) -> None:
        """Transcripts: close every remaining window (at the first non-declaration action)."""
        while self.phase == DECLARING:
            self._close_window(BY_TRANSCRIPT)

    def _close_window(self, by: str) -> None:
        self._window_closed(round=self.round, by=by)
        if self.round < self.rules.hand_size:
            self._deal_next()
        else:
            self._fix_trump()

    def _deal_next(self) -> None:
        last = self.rules.hand_size
        through = self.round + 1 if self.rules.declare_pacing == "rounds" else last
        cards: list[list[str]] = [[] for _ in range(PLAYERS)]
        for index in range(self.round * PLAYERS, through * PLAYERS):
            cards[(self.first_seat + index) % PLAYERS].append(self.deck[index])
        self._round_dealt(round=through, cards=cards)

    def _fix_trump(self) -> None:
        standing = self.declaration
        dealer = self.dealer
        if not self.dealer_fixed:
            dealer = first_hand_dealer(self.rules, self.first_declarer, standing)
        self._kitty_taken(dealer=dealer, suit=standing.suit if standing else None,
                          kitty=[str(c) for c in self.kitty_dealt])

    def _declare_actions(self, seat: int) -> LegalActions:
        counts = Counter(self.hands[seat])
        standing = self.declaration.rung if self.declaration else 0
        plays = []
        for card, count in sorted(counts.items(), key=lambda kv: str(kv[0])):
            if card.rank != self.rank and card not in (SJ, BJ):
                continue
            for k in range(1, min(count, self.rules.packs) + 1):
                try:
                    rung, _ = declaration_rung([card] * k, self.rank, self.rules.packs)
                except RuleError:
                    continue
                if rung > standing:
                    plays.append(LegalPlay((str(card),) * k, "declaration"))
        words = "declare one of the listed card sets with a DECLARE action"
        if seat not in self.spoken:
            words += ", or declare nothing (a DECLARE naming no cards)"
        return LegalActions(seat=seat, plays=tuple(plays),
                            kinds=frozenset({DECLARE}), constraints=(words,),
                            requirements=(Constraint("listed"),))


__all__ = ["DeclarationOutcome", "Declaring", "base_deck", "check_deck", "declaration_rung",
           "first_hand_dealer", "judge_declarations", "overcall", "window_of"]
