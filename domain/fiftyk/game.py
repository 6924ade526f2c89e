"""五十K behind the game boundary: the `Game` the referee's core calls (`domain/game.py`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from fiftyk_referee.domain.cards import make_deck
from fiftyk_referee.domain.errors import Reason, RuleError
from fiftyk_referee.domain.events import EventCatalog, PublicEvent
from fiftyk_referee.domain.fiftyk import oracle
from fiftyk_referee.domain.fiftyk.combinations import (
    BIG_JOKER_PAIR,
    BOMB,
    DOUBLE_FIFTY_K,
    FIFTY_K,
    JOKER_PAIR_MIXED,
    JOKER_QUAD,
    JOKER_TRIPLE,
    NORMAL,
    PURE_DOUBLE_FIFTY_K,
    PURE_FIFTY_K,
    SMALL_JOKER_PAIR,
    Combination,
)
from fiftyk_referee.domain.fiftyk.events import FIFTYK_EVENTS, CardsPlayed, TrickWon
from fiftyk_referee.domain.fiftyk.hand import FIRST_OUT, Hand, ruleset_of
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.domain.fiftyk.scoring import teams_of
from fiftyk_referee.domain.fiftyk.transcript import (
    adjudicate,
    export_transcript,
    replay,
    result_of,
)
from fiftyk_referee.domain.fiftyk.views import NAME
from fiftyk_referee.domain.game import (
    PASS,
    PLAY,
    RESIGN,
    ActionSpec,
    Observation,
    ObservationSpec,
    Rules,
    ValueCodec,
)
from fiftyk_referee.domain.observer import Viewer

TRICKS = "tricks"
BOMBS = "bombs"
SMALLEST_BOMB, LARGEST_BOMB = 3, 8
OTHER_BOMB = "other"
BOMB_SIZES = frozenset({
    *(f"{BOMB}_{n}" for n in range(SMALLEST_BOMB, LARGEST_BOMB + 1)),
    FIFTY_K, PURE_FIFTY_K, DOUBLE_FIFTY_K, PURE_DOUBLE_FIFTY_K,
    JOKER_PAIR_MIXED, SMALL_JOKER_PAIR, BIG_JOKER_PAIR, JOKER_TRIPLE, JOKER_QUAD, OTHER_BOMB,
})
ACTION_KINDS = (
    ActionSpec(PLAY, "play cards: lead a combination or beat the trick's top play"),
    ActionSpec(PASS, "pass: play nothing to this trick", takes_cards=False),
    ActionSpec(RESIGN, "resign the hand", takes_cards=False),
)
OBSERVATIONS = (
    ObservationSpec(TRICKS, "Tricks won, by game and preset."),
    ObservationSpec(BOMBS, "Bombs played, by game, preset and size (`bomb_<n>` for n of a"
                    " kind, else the bomb's type code).", label="size", values=BOMB_SIZES),
)



def _combination(data: list[Any]) -> Combination:
    kind, cards, rank, rung = data
    return Combination(kind, tuple(cards), rank, rung)


# Snapshots keep a hand's combinations as `[type, cards, rank, rung]` and its ruleset as its
# spec (read back through a cache: many aggregates share a few rulesets).
VALUE_CODECS = (
    ValueCodec("combination", Combination,
               lambda c: [c.type, list(c.cards), c.rank, c.rung], _combination),
    ValueCodec("ruleset", Ruleset, lambda r: r.to_json(), ruleset_of),
)


def bomb_size_label(combination_type: str, cards: int) -> str:
    """The `size` label of a bomb: `bomb_<n>` for n of a kind, else its type code."""
    label = f"{BOMB}_{cards}" if combination_type == BOMB else combination_type
    return label if label in BOMB_SIZES else OTHER_BOMB


def _ruleset(rules: Rules) -> Ruleset:
    if not isinstance(rules, Ruleset):
        raise RuleError(Reason.INVALID_RULESET, f"not a 五十K ruleset: {rules.preset!r}")
    return rules


def _hand(hand: object) -> Hand:
    if not isinstance(hand, Hand):
        raise RuleError(Reason.INVALID_ACTION, "not a 五十K hand")
    return hand


class FiftyK:
    """五十K: rules of docs/rules.md, one hand aggregate, side scores summed over the match."""

    name = NAME
    presets = tuple(PRESETS)
    action_kinds = ACTION_KINDS
    observations = OBSERVATIONS
    value_codecs = VALUE_CODECS

    def observe(self, hand: Any, events: Sequence[object]) -> list[Observation]:
        """Tricks won and bombs played among these events."""
        seen: list[Observation] = []
        for event in events:
            name = FIFTYK_EVENTS.name_of(event)
            if name == TrickWon.NAME:
                seen.append(Observation(TRICKS))
            elif name == CardsPlayed.NAME and getattr(event, "rung", NORMAL) != NORMAL:
                played = event.cards  # type: ignore[attr-defined]  # the stored CardsPlayed
                kind = event.type  # type: ignore[attr-defined]
                seen.append(Observation(BOMBS, bomb_size_label(kind, len(played))))
        return seen

    def answer(self, question: Mapping[str, Any]) -> Any:
        """The rules oracle's answer (`oracle.py`)."""
        return oracle.answer(question)

    def rules(self, preset: str, options: Mapping[str, Any] | None = None) -> Ruleset:
        """Resolve a preset plus options."""
        return Ruleset.from_spec(preset, options)

    def rules_from_json(self, spec: Mapping[str, Any]) -> Ruleset:
        """The ruleset a stored spec describes."""
        return Ruleset.from_json(spec)

    def side_seats(self, rules: Rules, players: int) -> dict[str, tuple[int, ...]]:
        """`team:0`, `team:1` in team games, else `seat:N` per seat; the seats of each."""
        teams = teams_of(_ruleset(rules), players)
        if teams:
            return {f"team:{i}": tuple(team) for i, team in enumerate(teams)}
        return {f"seat:{s}": (s,) for s in range(players)}

    def deal(self, *, table_id: str, number: int, rules: Rules, players: int, dealer: int,
             seat_players: Sequence[str | None], carry: Mapping[str, Any],
             deck: Sequence[str] | None, seed: bytes | None,
             contributions: Sequence[str] | None = None,
             draw: Mapping[str, Any] | None = None) -> Hand:
        """Deal the next hand; the previous hand's first out may lead it (`first_lead`)."""
        return Hand.deal_new(
            table_id=table_id, number=number, ruleset=_ruleset(rules), players=players,
            dealer=dealer, deck=deck, seed=seed, previous_first_out=carry.get(FIRST_OUT),
            seat_players=seat_players, contributions=contributions, draw=draw,
        )

    def match_end(self, rules: Rules, hands_played: int,
                  scores: Mapping[str, Decimal]) -> str | None:
        """After `hands` hands, or once a side reaches `target_score`."""
        r = _ruleset(rules)
        if r.hands is not None and hands_played >= r.hands:
            return f"{r.hands} hands played"
        if r.target_score is not None and any(v >= r.target_score for v in scores.values()):
            return f"a side reached {r.target_score}"
        return None

    def adjudicate(self, transcript: Any) -> dict[str, Any]:
        """Rule on a `fiftyk-transcript/1`."""
        return adjudicate(transcript)

    def replay(self, transcript: Any) -> tuple[Hand, dict[str, Any]]:
        """Replay a `fiftyk-transcript/1`: the hand and the ruling."""
        return replay(transcript)

    def export_transcript(self, hand: Any) -> dict[str, Any]:
        """A 五十K hand as a `fiftyk-transcript/1`."""
        return export_transcript(_hand(hand))

    def ruling(self, hand: Any) -> dict[str, Any]:
        """The `fiftyk-result/1` of a stored hand after all its actions."""
        played = _hand(hand)
        return result_of(played, len(played.actions), None)

    def base_deck(self, rules: Rules) -> list[str]:
        """The packs (and jokers) the ruleset plays with, in `make_deck` order."""
        r = _ruleset(rules)
        return [str(card) for card in make_deck(r.packs, jokers=r.jokers)]

    def owns(self, hand: object) -> bool:
        """Whether `hand` is a 五十K hand."""
        return isinstance(hand, Hand)

    @property
    def events(self) -> EventCatalog:
        """The `fiftyk.*` public events (`domain/fiftyk/events.py`)."""
        return FIFTYK_EVENTS

    def public_event(self, stored: object, viewer: Viewer) -> PublicEvent | None:
        """A stored 五十K hand event as `viewer` may see it."""
        return FIFTYK_EVENTS.public_event(stored, viewer)


GAME = FiftyK()

__all__ = ["GAME", "NAME", "FiftyK", "bomb_size_label"]
