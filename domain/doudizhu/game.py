"""斗地主 behind the game boundary: the `Game` the referee's core calls (`domain/game.py`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from fiftyk_referee.domain.cards import make_deck
from fiftyk_referee.domain.doudizhu import oracle
from fiftyk_referee.domain.doudizhu.bidding import BID, CALL, PASS, ROB_KIND
from fiftyk_referee.domain.doudizhu.combinations import BOMB, ROCKET
from fiftyk_referee.domain.doudizhu.events import (
    DOUDIZHU_EVENTS,
    CardsPlayed,
    HandEnded,
    TrickEnded,
)
from fiftyk_referee.domain.doudizhu.hand import DoudizhuHand
from fiftyk_referee.domain.doudizhu.rulesets import GAME_NAME, PLAYERS, PRESETS, DoudizhuRules
from fiftyk_referee.domain.doudizhu.transcript import (
    adjudicate,
    export_transcript,
    replay,
    result_of,
)
from fiftyk_referee.domain.errors import InvalidRuleset, Reason, RuleError
from fiftyk_referee.domain.events import EventCatalog, PublicEvent
from fiftyk_referee.domain.game import (
    PLAY,
    ActionSpec,
    Game,
    GameHand,
    Observation,
    ObservationSpec,
    Rules,
)
from fiftyk_referee.domain.observer import Viewer

TRICKS, BOMBS, SPRINGS, REDEALS = "tricks", "bombs", "springs", "redeals"
BOMB_4 = "bomb_4"  # a bomb's `size` label, as 五十K counts its four-card bombs
SPRING, ANTI_SPRING = "spring", "anti_spring"
ACTION_KINDS = (
    ActionSpec(BID, "bid for the landlord: 1, 2 or 3 points as the value, more than the"
               " highest bid so far (rooms that bid points)", takes_cards=False,
               takes_value=True),
    ActionSpec(CALL, "call the landlord, 叫地主 (rooms that call and rob)", takes_cards=False),
    ActionSpec(ROB_KIND, "rob the landlord, 抢地主: doubles the hand (rooms that call and rob)",
               takes_cards=False),
    ActionSpec(PASS, "pass: no bid, no call, no rob; or play nothing over the last play",
               takes_cards=False),
    ActionSpec(PLAY, "play cards: lead a combination or beat the last play"),
)
# The counters 五十K also feeds keep its help and label (one counter per name).
OBSERVATIONS = (
    ObservationSpec(TRICKS, "Tricks won, by game and preset."),
    ObservationSpec(BOMBS, "Bombs played, by game, preset and size (`bomb_<n>` for n of a"
                    " kind, else the bomb's type code).", label="size",
                    values=frozenset({BOMB_4, ROCKET})),
    ObservationSpec(SPRINGS, "Springs (春天) and anti-springs (反春), by game and preset.",
                    label="kind", values=frozenset({SPRING, ANTI_SPRING})),
    ObservationSpec(REDEALS, "Hands ended as a redeal (everybody passed in the bidding), by"
                    " game and preset."),
)


def _rules(rules: Rules) -> DoudizhuRules:
    if not isinstance(rules, DoudizhuRules):
        raise InvalidRuleset("these rules are not 斗地主 rules")
    return rules


def _hand(hand: object) -> DoudizhuHand:
    if not isinstance(hand, DoudizhuHand):
        raise RuleError(Reason.INVALID_ACTION, "not a 斗地主 hand")
    return hand


class Doudizhu:
    """斗地主: three seats, a landlord bid for, the landlord against two farmers."""

    name = GAME_NAME
    presets = tuple(PRESETS)
    action_kinds = ACTION_KINDS
    observations = OBSERVATIONS
    value_codecs = ()  # its hands are replayed from their events, never snapshotted

    def observe(self, hand: Any, events: Sequence[object]) -> list[Observation]:
        """Rounds of play won, bombs and rockets played, springs and redeals."""
        seen: list[Observation] = []
        for event in events:
            name = DOUDIZHU_EVENTS.name_of(event)
            if name == TrickEnded.NAME:
                seen.append(Observation(TRICKS))
            elif name == CardsPlayed.NAME:
                kind = event.kind  # type: ignore[attr-defined]  # the stored CardsPlayed
                if kind == BOMB:
                    seen.append(Observation(BOMBS, BOMB_4))
                elif kind == ROCKET:
                    seen.append(Observation(BOMBS, ROCKET))
            elif name == HandEnded.NAME:
                result: Mapping[str, Any] = event.result  # type: ignore[attr-defined]
                if result.get("redeal"):
                    seen.append(Observation(REDEALS))
                for flag in (SPRING, ANTI_SPRING):
                    if result.get(flag):
                        seen.append(Observation(SPRINGS, flag))
        return seen

    def answer(self, question: Mapping[str, Any]) -> Any:
        """The rules oracle's answer (`oracle.py`)."""
        return oracle.answer(question)

    def rules(self, preset: str, options: Mapping[str, Any] | None = None) -> DoudizhuRules:
        """Resolve a preset plus options (`INVALID_RULESET` when they are not valid)."""
        return DoudizhuRules.from_spec(preset, options)

    def rules_from_json(self, spec: Mapping[str, Any]) -> DoudizhuRules:
        """The rules a stored `to_json()` spec describes."""
        return DoudizhuRules.from_json(spec)

    def side_seats(self, rules: Rules, players: int) -> dict[str, tuple[int, ...]]:
        """Every seat scores for itself (the landlord changes from hand to hand)."""
        _rules(rules).check_players(players)
        return {f"seat:{seat}": (seat,) for seat in range(PLAYERS)}

    def deal(self, *, table_id: str, number: int, rules: Rules, players: int, dealer: int,
             seat_players: Sequence[str | None], carry: Mapping[str, Any],
             deck: Sequence[str] | None, seed: bytes | None,
             contributions: Sequence[str] | None = None,
             draw: Mapping[str, Any] | None = None) -> DoudizhuHand:
        """Deal a table's next hand (the deal passes round the table, redeals too)."""
        del carry  # nothing of a hand reaches the next one but the table's scores
        resolved = _rules(rules)
        resolved.check_players(players)
        return DoudizhuHand.deal_new(
            table_id=table_id, number=number, rules=resolved, dealer=dealer, deck=deck,
            seed=seed, seat_players=seat_players, contributions=contributions, draw=draw)

    def match_end(self, rules: Rules, hands_played: int,
                  scores: Mapping[str, Decimal]) -> str | None:
        """After the ruleset's `hands` (a redeal counts as a hand), if it has a limit."""
        del scores
        resolved = _rules(rules)
        if resolved.hands is not None and hands_played >= resolved.hands:
            return f"{resolved.hands} hands played"
        return None

    def adjudicate(self, transcript: Any) -> dict[str, Any]:
        """Rule on a 斗地主 transcript: the result JSON."""
        return adjudicate(transcript)

    def replay(self, transcript: Any) -> tuple[DoudizhuHand, dict[str, Any]]:
        """Replay a 斗地主 transcript: the hand and the ruling."""
        return replay(transcript)

    def export_transcript(self, hand: Any) -> dict[str, Any]:
        """A 斗地主 hand as its transcript."""
        return export_transcript(_hand(hand))

    def ruling(self, hand: Any) -> dict[str, Any]:
        """The result JSON of a stored hand after all its actions."""
        played = _hand(hand)
        return result_of(played, len(played.action_log), None)

    def base_deck(self, rules: Rules) -> list[str]:
        """One pack with both jokers, in `make_deck` order."""
        _rules(rules)
        return [str(card) for card in make_deck(1, jokers=True)]

    def owns(self, hand: object) -> bool:
        """Whether `hand` is a 斗地主 hand."""
        return isinstance(hand, DoudizhuHand)

    @property
    def events(self) -> EventCatalog:
        """The `doudizhu.*` public events (`domain/doudizhu/events.py`)."""
        return DOUDIZHU_EVENTS

    def public_event(self, stored: object, viewer: Viewer) -> PublicEvent | None:
        """A stored 斗地主 hand event as `viewer` may see it."""
        return DOUDIZHU_EVENTS.public_event(stored, viewer)


GAME = Doudizhu()
_GAME_CHECK: Game = GAME  # mypy checks that the object satisfies the protocol
_HAND_CHECK: type[GameHand] = DoudizhuHand

__all__ = ["ACTION_KINDS", "GAME", "OBSERVATIONS", "Doudizhu"]
