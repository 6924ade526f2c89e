"""Three 斗地主 move generators behind one small interface, for the lab's check and timings.

Our engine (`fiftyk_referee.domain.doudizhu`, with the `DOUZERO` options, or `RLCARD`), RLCard's
(`rlcard.games.doudizhu`: its judger lists a hand's plays as a lead, `get_gt_cards` the plays
that beat a top) and DouZero's (`douzero.env`: `MovesGener` and the game's own
`get_legal_card_play_actions`, which picks the generator for the top's type and filters it).
Every engine answers in one canonical form: a play is the sorted tuple of its ranks, in our
rank codes (3..10, J=11, Q=12, K=13, A=14, 2=15, small joker 16, big joker 17); suits never
matter in 斗地主. A pass is never a play here.

Each engine answers three questions: the plays of a hand as a lead, the plays of a hand that
follow a top (None when the engine does not take the top for a play at all), and whether one
play beats another (None when either is no play for the engine). The foreign engines are
imported when asked for: they are not dependencies of the referee (`scripts/lab-engines`
installs them into `.venv`).
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from fiftyk_referee.domain.cards import BIG_JOKER, SMALL_JOKER, TWO, Card
from fiftyk_referee.domain.doudizhu.combinations import (
    DOUZERO,
    RLCARD,
    ComboOptions,
    classify,
    read_play,
)
from fiftyk_referee.domain.doudizhu.legal import legal_plays

Move = tuple[int, ...]  # a play as the sorted ranks of its cards

# Our kind names; the other engines' types are mapped onto them.
KINDS = ("single", "pair", "triple", "triple_single", "triple_pair", "straight",
         "pair_straight", "plane", "plane_singles", "plane_pairs", "four_two_singles",
         "four_two_pairs", "bomb", "rocket")

# RLCard writes a rank as one character: 3..9, T, J, Q, K, A, 2, B (small joker), R (big).
_RLCARD_CHARS = "3456789TJQKA2BR"
_RANK_OF_RLCARD = {char: rank for rank, char in enumerate(_RLCARD_CHARS, start=3)}
_RLCARD_OF_RANK = {rank: char for char, rank in _RANK_OF_RLCARD.items()}
_RLCARD_KINDS = {
    "solo": "single", "pair": "pair", "trio": "triple", "trio_solo": "triple_single",
    "trio_pair": "triple_pair", "solo_chain": "straight", "pair_chain": "pair_straight",
    "trio_chain": "plane", "trio_solo_chain": "plane_singles",
    "trio_pair_chain": "plane_pairs", "four_two_solo": "four_two_singles",
    "four_two_pair": "four_two_pairs", "bomb": "bomb", "rocket": "rocket",
}

# DouZero's ranks: 3..14 as ours, 17 for the 2, 20 and 30 for the small and big joker.
_DOUZERO_OF_RANK = {rank: rank for rank in range(3, 15)}
_DOUZERO_OF_RANK.update({TWO: 17, SMALL_JOKER: 20, BIG_JOKER: 30})
_RANK_OF_DOUZERO = {code: rank for rank, code in _DOUZERO_OF_RANK.items()}
_DOUZERO_KINDS = {1: "single", 2: "pair", 3: "triple", 4: "bomb", 5: "rocket",
                  6: "triple_single", 7: "triple_pair", 8: "straight", 9: "pair_straight",
                  10: "plane", 11: "plane_singles", 12: "plane_pairs",
                  13: "four_two_singles", 14: "four_two_pairs"}
_DOUZERO_WRONG = 15


class EngineMissing(RuntimeError):
    """An engine's package is not installed."""


def ranks_of(cards: Iterable[Card]) -> Move:
    """The canonical form of a play or a hand: its ranks, sorted."""
    return tuple(sorted(card.rank for card in cards))


class Engine(Protocol):
    """A move generator seen through the lab's three questions."""

    name: str

    def lead(self, hand: Sequence[Card]) -> frozenset[Move]:
        """Every distinct play of the hand as a lead."""
        ...  # pragma: no cover - a protocol

    def follow(self, hand: Sequence[Card], top: Sequence[Card]) -> frozenset[Move] | None:
        """Every distinct play of the hand that beats the top; None if the top is no play."""
        ...  # pragma: no cover - a protocol

    def beats(self, play: Sequence[Card], top: Sequence[Card]) -> bool | None:
        """Whether the play beats the top; None if either is no play for this engine."""
        ...  # pragma: no cover - a protocol

    def kind(self, play: Sequence[Card]) -> str | None:
        """The play's kind in our names (the first reading), or None if it is no play."""
        ...  # pragma: no cover - a protocol


def _import(module: str, install_hint: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise EngineMissing(f"{module} cannot be imported ({error}); {install_hint}") from error


LAB_HINT = "run scripts/lab-engines to install the lab's engines into .venv"


class OurEngine:
    """fiftyk-referee's 斗地主 rules (`legal_plays`, `classify`, `read_play`) under options.

    `ours` runs with `DOUZERO` (the options where DouZero's generator and RLCard's agree, in
    DouZero's reading), `ours-rlcard` with `RLCARD`. A follow reads the top as a lead
    (`classify`) and lists the plays that beat it; a play beats a top when some reading of it
    does (`read_play`), as at a table.
    """

    name = "ours"

    def __init__(self, options: ComboOptions = DOUZERO) -> None:
        self.options = options

    def lead(self, hand: Sequence[Card]) -> frozenset[Move]:
        return frozenset(ranks_of(play.cards) for play in legal_plays(hand, None, self.options))

    def follow(self, hand: Sequence[Card], top: Sequence[Card]) -> frozenset[Move] | None:
        combination = classify(top, self.options)
        if combination is None:
            return None
        return frozenset(ranks_of(play.cards) for play in legal_plays(
            hand, combination, self.options))

    def beats(self, play: Sequence[Card], top: Sequence[Card]) -> bool | None:
        theirs = classify(top, self.options)
        if theirs is None or classify(play, self.options) is None:
            return None
        return read_play(play, theirs, self.options) is not None

    def kind(self, play: Sequence[Card]) -> str | None:
        combination = classify(play, self.options)
        return None if combination is None else combination.kind


class OurRLCardEngine(OurEngine):
    """Our rules with the `RLCARD` options, to compare with RLCard's generator."""

    name = "ours-rlcard"

    def __init__(self) -> None:
        super().__init__(RLCARD)


class RLCardEngine:
    """RLCard's Dou Dizhu: the judger's plays of a hand, and `get_gt_cards` for a follow.

    A lead is `DoudizhuJudger.playable_cards_from_hand` of the hand (what RLCard's game
    starts a hand with; during a game it keeps that set and drops what the hand no longer
    holds). A follow is `get_gt_cards(player, greater_player)` with real `DoudizhuPlayer`s
    holding real RLCard cards. A play is a play for RLCard when its table of card types
    (`CARD_TYPE`, its whole action space) has it.
    """

    name = "rlcard"

    def __init__(self) -> None:
        utils = _import("rlcard.games.doudizhu.utils", LAB_HINT)
        self._judger = _import("rlcard.games.doudizhu.judger", LAB_HINT).DoudizhuJudger
        self._player = _import("rlcard.games.doudizhu.player", LAB_HINT).DoudizhuPlayer
        self._card = _import("rlcard.games.base", LAB_HINT).Card
        self._card_type: dict[str, Any] = utils.CARD_TYPE[0]
        self._get_gt_cards = utils.get_gt_cards

    @staticmethod
    def text(cards: Iterable[Card]) -> str:
        """RLCard's text of cards: one character a card, in rank order ('33TJR')."""
        return "".join(_RLCARD_OF_RANK[rank] for rank in ranks_of(cards))

    @staticmethod
    def move(text: str) -> Move:
        """The canonical form of one of RLCard's plays."""
        return tuple(sorted(_RANK_OF_RLCARD[char] for char in text))

    def _rlcard_cards(self, cards: Sequence[Card]) -> list[Any]:
        made = []
        for rank in ranks_of(cards):
            if rank == SMALL_JOKER:
                made.append(self._card("BJ", ""))
            elif rank == BIG_JOKER:
                made.append(self._card("RJ", ""))
            else:
                made.append(self._card("S", _RLCARD_OF_RANK[rank]))
        return made

    def lead(self, hand: Sequence[Card]) -> frozenset[Move]:
        return frozenset(self.move(text) for text in self.lead_text_plays(hand))

    def lead_text_plays(self, hand: Sequence[Card]) -> set[str]:
        """The judger's own answer for a lead: a set of RLCard's texts of plays."""
        plays: set[str] = self._judger.playable_cards_from_hand(self.text(hand))
        return plays

    def _follow(self, hand: Sequence[Card], top: str) -> list[str]:
        player = self._player(0, None)
        player.set_current_hand(self._rlcard_cards(hand))
        leader = self._player(1, None)
        leader.played_cards = top
        plays: list[str] = self._get_gt_cards(player, leader)
        return [text for text in plays if text != "pass"]

    def follow(self, hand: Sequence[Card], top: Sequence[Card]) -> frozenset[Move] | None:
        text = self.text(top)
        if text not in self._card_type:
            return None
        return frozenset(self.move(play) for play in self._follow(hand, text))

    def beats(self, play: Sequence[Card], top: Sequence[Card]) -> bool | None:
        mine, theirs = self.text(play), self.text(top)
        if mine not in self._card_type or theirs not in self._card_type:
            return None
        return mine in self._follow(play, theirs)

    def kind(self, play: Sequence[Card]) -> str | None:
        readings = self._card_type.get(self.text(play))
        if not readings:
            return None
        name: str = readings[0][0]
        return _RLCARD_KINDS[name.rstrip("0123456789").rstrip("_")]


class DouZeroEngine:
    """DouZero's move generator and detector (`douzero.env`), as its game environment uses them.

    A lead and a follow are `GameEnv.get_legal_card_play_actions` for a seat holding the hand,
    with no play before it or with the top as the last play: the game's own choice of
    generator for the top's type (`move_detector.get_move_type`) and its filter
    (`move_selector`), bombs and the rocket added. A play is a play for DouZero when its
    detector gives it a type.
    """

    name = "douzero"
    _SEAT = "landlord"

    def __init__(self) -> None:
        self._game = _import("douzero.env.game", LAB_HINT)
        self._detector = _import("douzero.env.move_detector", LAB_HINT)
        self._generator = _import("douzero.env.move_generator", LAB_HINT).MovesGener
        self._env = self._game.GameEnv(players={})
        self._env.acting_player_position = self._SEAT

    def game_env(self, seats: dict[str, Any]) -> Any:
        """A new `GameEnv` of DouZero's whose seats (agents) are `seats`."""
        return self._game.GameEnv(seats)

    @staticmethod
    def codes(cards: Iterable[Card]) -> list[int]:
        """DouZero's rank codes of cards, sorted (3..14, 17 for a 2, 20 and 30 the jokers)."""
        return [_DOUZERO_OF_RANK[rank] for rank in ranks_of(cards)]

    @staticmethod
    def move(codes: Iterable[int]) -> Move:
        """The canonical form of one of DouZero's plays."""
        return tuple(sorted(_RANK_OF_DOUZERO[code] for code in codes))

    def _actions(self, hand: Sequence[Card], top: list[int] | None) -> list[list[int]]:
        self._env.info_sets[self._SEAT].player_hand_cards = self.codes(hand)
        self._env.card_play_action_seq = [] if top is None else [top]
        moves: list[list[int]] = self._env.get_legal_card_play_actions()
        return [move for move in moves if move]

    def is_play(self, codes: list[int]) -> bool:
        """Whether DouZero's detector takes these cards for a play."""
        return bool(self._detector.get_move_type(codes)["type"] != _DOUZERO_WRONG)

    def lead(self, hand: Sequence[Card]) -> frozenset[Move]:
        return frozenset(self.move(move) for move in self._actions(hand, None))

    def lead_moves(self, hand: Sequence[Card]) -> list[list[int]]:
        """The generator's own answer for a lead (a list of DouZero's plays, repeats kept)."""
        moves: list[list[int]] = self._generator(self.codes(hand)).gen_moves()
        return moves

    def follow(self, hand: Sequence[Card], top: Sequence[Card]) -> frozenset[Move] | None:
        codes = self.codes(top)
        if not self.is_play(codes):
            return None
        return frozenset(self.move(move) for move in self._actions(hand, codes))

    def beats(self, play: Sequence[Card], top: Sequence[Card]) -> bool | None:
        mine, theirs = self.codes(play), self.codes(top)
        if not self.is_play(mine) or not self.is_play(theirs):
            return None
        return mine in self._actions(play, theirs)

    def kind(self, play: Sequence[Card]) -> str | None:
        move_type = self._detector.get_move_type(self.codes(play))["type"]
        return _DOUZERO_KINDS.get(move_type)


ENGINE_CLASSES: dict[str, type[OurEngine] | type[RLCardEngine] | type[DouZeroEngine]] = {
    "ours": OurEngine, "ours-rlcard": OurRLCardEngine, "rlcard": RLCardEngine,
    "douzero": DouZeroEngine}


def load_engines(names: Sequence[str]) -> tuple[list[Engine], dict[str, str]]:
    """The engines that load, and why each of the others did not."""
    loaded: list[Engine] = []
    missing: dict[str, str] = {}
    for name in names:
        try:
            loaded.append(ENGINE_CLASSES[name]())
        except EngineMissing as error:
            missing[name] = str(error)
    return loaded, missing


def shape(move: Move) -> str:
    """A play's shape for grouping disagreements: its rank counts, high first, and features.

    `3-3-1-1` is two triples and two single cards; `+rocket` marks both jokers in a play
    bigger than the rocket, `+2` a 2 in the play, `+4` a rank held four times beside others.
    """
    counts = Counter(move)
    text = "-".join(str(n) for n in sorted(counts.values(), reverse=True))
    if SMALL_JOKER in counts and BIG_JOKER in counts and len(move) > 2:
        text += " +rocket"
    if TWO in counts:
        text += " +2"
    if 4 in counts.values() and len(counts) > 1:
        text += " +4"
    return text


def move_text(move: Move) -> str:
    """A play as people read it: ranks in order ('3 3 3 4 4 4 SJ BJ')."""
    names = {11: "J", 12: "Q", 13: "K", 14: "A", 15: "2", 16: "SJ", 17: "BJ"}
    return " ".join(names.get(rank, str(rank)) for rank in move)
