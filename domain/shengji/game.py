"""Shengji behind the game boundary: the `Game` the referee's core calls (`domain/game.py`)."""


from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from fiftyk_referee.domain.cards import make_deck
from fiftyk_referee.domain.errors import InvalidRuleset, Reason, RuleError
from fiftyk_referee.domain.events import EventCatalog, PublicEvent
from fiftyk_referee.domain.game import (
    PLAY,
    RESIGN,
    ActionSpec,
    Game,
    GameHand,
    Observation,
    ObservationSpec,
    Rules,
)
from fiftyk_referee.domain.observer import Viewer
from fiftyk_referee.domain.shengji import oracle
from fiftyk_referee.domain.shengji.cards import LEVELS, TOP_LEVEL
from fiftyk_referee.domain.shengji.events import SHENGJI_EVENTS, TrickWon
from fiftyk_referee.domain.shengji.hand import BURY, DECLARE, GAME_NAME, NEXT_DEALER, ShengjiHand
from fiftyk_referee.domain.shengji.rulesets import PRESETS, ShengjiRules
from fiftyk_referee.domain.shengji.scoring import seats_of
from fiftyk_referee.domain.shengji.transcript import adjudicate, replay, result_of

TEAMS = 2
TRICKS = "tricks"
ACTION_KINDS = (
    ActionSpec(DECLARE, "show trump cards in the open declaration window (no cards: declare"
               " nothing); the value may name that window's round", takes_value=True),
    ActionSpec(BURY, "the dealer returns as many cards as the kitty holds"),
    ActionSpec(PLAY, "lead or follow to a trick"),
    ActionSpec(RESIGN, "resign the hand", takes_cards=False),
)
OBSERVATIONS = (ObservationSpec(TRICKS, "Tricks won, by game and preset."),)


def _shengji_rules(rules: Rules) -> ShengjiRules:
    if not isinstance(rules, ShengjiRules):
        raise InvalidRuleset("these rules are not Shengji rules")
    return rules


class ShengjiGame:
    """The Shengji game behind the boundary of `domain/game.py`."""

    name = GAME_NAME
    presets = tuple(PRESETS)
    action_kinds = ACTION_KINDS
    observations = OBSERVATIONS
    value_codecs = ()  # its hands are replayed from their events, never snapshotted

    def observe(self, hand: Any, events: Sequence[object]) -> list[Observation]:
        """Tricks won among these events."""
        return [Observation(TRICKS) for event in events
                if SHENGJI_EVENTS.name_of(event) == TrickWon.NAME]

    def answer(self, question: Mapping[str, Any]) -> Any:
        """The rules oracle's answer (`oracle.py`)."""
        return oracle.answer(question)

    def rules(self, preset: str, options: Mapping[str, Any] | None = None) -> ShengjiRules:
        """Resolve a preset plus options (`INVALID_RULESET` when they are not valid)."""
        return ShengjiRules.from_spec(preset, options)

    def rules_from_json(self, spec: Mapping[str, Any]) -> ShengjiRules:
        """The rules a stored `to_json()` spec describes."""
        return ShengjiRules.from_json(spec)

    def side_seats(self, rules: Rules, players: int) -> dict[str, tuple[int, ...]]:
        """Two teams: `team:0` (seats 0, 2) and `team:1` (seats 1, 3)."""
        _shengji_rules(rules).check_players(players)
        return {f"team:{t}": tuple(seats_of(t)) for t in range(TEAMS)}

    def deal(self, *, table_id: str, number: int, rules: Rules, players: int, dealer: int,
             seat_players: Sequence[str | None], carry: Mapping[str, Any],
             deck: Sequence[str] | None, seed: bytes | None,
             contributions: Sequence[str] | None = None,
             draw: Mapping[str, Any] | None = None) -> ShengjiHand:
        """Deal a table's next hand; the dealer, levels and room points come from `carry`.

        An empty carry is the match's first hand (dealer from the declarations); the table's
        `dealer` argument is not used (Shengji's dealer comes from the declarations, then the
        rotation: docs/shengji.md#the-deal-and-declarations).
        """
        del dealer
        resolved = _shengji_rules(rules)
        resolved.check_players(players)
        return ShengjiHand.deal_new(
            table_id=table_id, number=number, rules=resolved, dealer=carry.get(NEXT_DEALER),
            levels=carry.get("levels"), room_points=carry.get("room_points"), deck=deck,
            seed=seed, seat_players=seat_players, contributions=contributions, draw=draw)

    def match_end(self, rules: Rules, hands_played: int,
                  scores: Mapping[str, Decimal]) -> str | None:
        """A team's level past A (it won the match), or the `hands` limit reached."""
        resolved = _shengji_rules(rules)
        start = LEVELS.index(resolved.start_level)
        for team in range(TEAMS):
            if start + scores.get(f"team:{team}", Decimal(0)) > TOP_LEVEL:
                return f"team {team} won the match"
        if resolved.hands is not None and hands_played >= resolved.hands:
            return f"{resolved.hands} hands played"
        return None

    def adjudicate(self, transcript: Any) -> dict[str, Any]:
        """Rule on a Shengji transcript: the result JSON (docs/transcript.md#shengji-result)."""
        return adjudicate(transcript)

    def replay(self, transcript: Any) -> tuple[ShengjiHand, dict[str, Any]]:
        """Replay a Shengji transcript: the hand and the ruling."""
        return replay(transcript)

    def ruling(self, hand: Any) -> dict[str, Any]:
        """The Shengji result JSON of a stored hand after all its transcript's actions."""
        if not isinstance(hand, ShengjiHand):
            raise RuleError(Reason.INVALID_ACTION, "not a Shengji hand")
        return result_of(hand, len(hand.transcript()["actions"]), None)

    def base_deck(self, rules: Rules) -> list[str]:
        """The ruleset's packs, jokers included, in `make_deck` order."""
        return [str(card) for card in make_deck(_shengji_rules(rules).packs, jokers=True)]

    def export_transcript(self, hand: Any) -> dict[str, Any]:
        """A Shengji hand as its transcript (docs/transcript.md#shengji-transcript)."""
        if not isinstance(hand, ShengjiHand):
            raise RuleError(Reason.INVALID_ACTION, "not a Shengji hand")
        return hand.transcript()

    def owns(self, hand: object) -> bool:
        """Whether `hand` is a Shengji hand."""
        return isinstance(hand, ShengjiHand)

    @property
    def events(self) -> EventCatalog:
        """The `shengji.*` public events (`domain/shengji/events.py`)."""
        return SHENGJI_EVENTS

    def public_event(self, stored: object, viewer: Viewer) -> PublicEvent | None:
        """A stored Shengji hand event as `viewer` may see it."""
        return SHENGJI_EVENTS.public_event(stored, viewer)


GAME = ShengjiGame()
_GAME_CHECK: Game = GAME  # mypy checks that the object satisfies the protocol
_HAND_CHECK: type[GameHand] = ShengjiHand

__all__ = ["GAME", "ShengjiGame"]
