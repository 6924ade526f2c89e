"""Rulesets: every option (docs/rules.md#options) as data, the presets, validation.

A ruleset is a preset name plus option overrides. It is resolved into one frozen `Ruleset`
holding every option, validated as a whole, and round-trips through plain JSON.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fiftyk_referee.domain.errors import InvalidRuleset, shown
from fiftyk_referee.domain.options import OptionSpec, OptionValue
from fiftyk_referee.domain.options import choice as _choice
from fiftyk_referee.domain.options import flag as _flag
from fiftyk_referee.domain.options import integer as _int

FULL_DEAL_PACKS = 2
MAX_SEQUENCE = 12  # 3..A is the longest run of ranks
MAX_POINTS_SETTING = 100_000
MAX_TIMEOUT_SECONDS = 86_400
MAX_HANDS = 10_000


OPTIONS: tuple[OptionSpec, ...] = (
    # Deck and seats
    OptionSpec("packs", int, 2, choices=(1, 2), doc="number of 54-card packs"),
    _flag("jokers", True, "the packs include the two jokers"),
    _flag("teams", True, "4 players in two teams, partners opposite: {0,2} and {1,3}"),
    _choice("scoring", "team", "team", "qq", "stock",
            doc="team: full-deal teams, qq: the QQ rules, stock: 5/6-card games"),
    OptionSpec("hand_size", int, None, choices=(None, 5, 6, 8, 10), nullable=True,
               doc="cards per hand in 5/6-card games (with a stock); null deals every card"),
    _choice("end", "first_out", "first_out", "last_standing", doc="5/6-card end condition"),
    # Card order and combinations
    _flag("three_high", False, "带3: 3 ranks above 2"),
    _flag("joker_points", False, "jokers are worth 10 points each"),
    _flag("joker_pair_mixed", False, "SJ+BJ is the top pair (one-pack games)"),
    _flag("joker_bombs", True, "joker combos are bomb-class rungs (two-pack full-deal games)"),
    OptionSpec("min_bomb", int, 4, choices=(3, 4), doc="smallest bomb; 3 makes triples 炮"),
    _flag("sequences", True, "straights, pair straights and triple straights exist"),
    _int("min_straight", 5, 3, MAX_SEQUENCE, doc="shortest straight"),
    _int("min_pair_straight", 3, 2, MAX_SEQUENCE, doc="fewest pairs in a pair straight"),
    _int("min_triple_straight", 3, 2, MAX_SEQUENCE, doc="fewest triples in a triple straight"),
    _choice("sequence_order", "ace_high", "ace_high", "ace_two_low", "ace_two_low_singles_only"),
    _flag("kickers", False, "三带一, 三带二 and triple straights with kickers"),
    _flag("four_with_two", False, "四带二"),
    _flag("double_fifty_k", False, "双五十K (two-pack 5/6-card)"),
    _flag("pure_fifty_k_suit_order", False, "pure 50Ks rank spades > hearts > clubs > diamonds"),
    _choice("bomb_reach", "standard", "standard", "jinzhou"),
    # Play
    _choice("first_lead", "holder:3H", "holder:3H", "holder:3S", "holder:AH",
            "previous_first_out"),
    _choice("wind", "next", "next", "partner", doc="接风: who leads after a player went out"),
    _int("announce_at", 0, 0, 54, doc="报牌 at this many cards or fewer; 0 = never"),
    _choice("hand_counts", "public", "public", "announced"),
    _int("turn_timeout", 0, 0, MAX_TIMEOUT_SECONDS, doc="seconds per turn; 0 = no clock"),
    # Scoring
    _int("double_catch", 100, 0, MAX_POINTS_SETTING),
    _int("single_catch", 50, 0, MAX_POINTS_SETTING),
    _choice("leftover", "to_winners", "void", "to_winners", "deduct"),
    _choice("bomb_bonus", "none", "none", "multiplier", "extra"),
    _choice("final", "raw", "raw", "diff_tenth"),
    _int("loser_payment", 20, 0, MAX_POINTS_SETTING),
    # Match
    _int("hands", None, 1, MAX_HANDS, nullable=True, doc="match length in hands"),
    _int("target_score", None, 1, MAX_POINTS_SETTING * 100, nullable=True,
         doc="the match ends when a side reaches this cumulative score"),
)
OPTION_SPECS: dict[str, OptionSpec] = {spec.name: spec for spec in OPTIONS}
DEFAULTS: dict[str, OptionValue] = {spec.name: spec.default for spec in OPTIONS}

_ONE_PACK_NO_SEQUENCE_GAME: dict[str, OptionValue] = {
    "packs": 1, "jokers": True, "teams": False, "scoring": "stock", "joker_bombs": False,
    "sequences": False, "leftover": "void",
}
_QQ: dict[str, OptionValue] = {
    "packs": 1, "jokers": False, "joker_bombs": False, "scoring": "qq", "kickers": True,
    "min_pair_straight": 2, "min_triple_straight": 2, "pure_fifty_k_suit_order": True,
    "leftover": "void",
}

PRESETS: dict[str, dict[str, OptionValue]] = {
    "classic": {"leftover": "to_winners"},
    "jinzhou": {
        "min_bomb": 3, "bomb_reach": "jinzhou", "pure_fifty_k_suit_order": True,
        "double_catch": 50, "single_catch": 30, "leftover": "deduct", "final": "diff_tenth",
    },
    "fuzhou": {"jokers": False, "joker_bombs": False, "bomb_bonus": "extra", "leftover": "void"},
    "jiaodong": {
        "packs": 1, "joker_bombs": False, "double_catch": 0, "single_catch": 0,
        "leftover": "void", "joker_points": True, "three_high": True, "joker_pair_mixed": True,
        "kickers": True, "four_with_two": True,
    },
    "qq4": {**_QQ, "teams": True},
    "qq3": {**_QQ, "teams": False},
    "five_card": {**_ONE_PACK_NO_SEQUENCE_GAME, "hand_size": 5},
    "six_card": {**_ONE_PACK_NO_SEQUENCE_GAME, "hand_size": 6},
    "six_card_two_packs": {**_ONE_PACK_NO_SEQUENCE_GAME, "packs": 2, "hand_size": 6,
                           "double_fifty_k": True},
}

MAX_PLAYERS_STOCK = {1: 4, 2: 6}
MIN_PLAYERS_STOCK = 2
TEAM_PLAYERS = 4
QQ_PLAYERS = (3, 4)
CARDS_PER_PACK = 54
JOKERS_PER_PACK = 2


@dataclass(frozen=True)
class Ruleset:
    """A fully resolved, validated set of options. Build with `Ruleset.from_spec`."""

    preset: str
    packs: int
    jokers: bool
    teams: bool
    scoring: str
    hand_size: int | None
    end: str
    three_high: bool
    joker_points: bool
    joker_pair_mixed: bool
    joker_bombs: bool
    min_bomb: int
    sequences: bool
    min_straight: int
    min_pair_straight: int
    min_triple_straight: int
    sequence_order: str
    kickers: bool
    four_with_two: bool
    double_fifty_k: bool
    pure_fifty_k_suit_order: bool
    bomb_reach: str
    first_lead: str
    wind: str
    announce_at: int
    hand_counts: str
    turn_timeout: int
    double_catch: int
    single_catch: int
    leftover: str
    bomb_bonus: str
    final: str
    loser_payment: int
    hands: int | None
    target_score: int | None

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_spec(cls, preset: str, options: Mapping[str, Any] | None = None) -> Ruleset:
        """Resolve a preset plus overrides, validating every option and their combination."""
        if not isinstance(preset, str) or preset not in PRESETS:
            raise InvalidRuleset(
                f"unknown preset {shown(preset)}; allowed: {', '.join(PRESETS)}"
            )
        values: dict[str, Any] = {**DEFAULTS, **PRESETS[preset]}
        for name, value in (options or {}).items():
            spec = OPTION_SPECS.get(name)
            if spec is None:
                raise InvalidRuleset(
                    f"unknown option {shown(name)}; allowed: {', '.join(sorted(OPTION_SPECS))}"
                )
            values[name] = spec.check(value)
        ruleset = cls(preset=preset, **values)
        ruleset._check_consistency()
        return ruleset

    @classmethod
    def preset_named(cls, preset: str) -> Ruleset:
        """A preset with no overrides."""
        return cls.from_spec(preset)

    @classmethod
    def from_json(cls, data: Any) -> Ruleset:
        """Read `{"preset": P, "options": {...}}` (options optional)."""
        if not isinstance(data, Mapping) or "preset" not in data:
            raise InvalidRuleset('a ruleset is an object {"preset": NAME, "options": {...}}')
        unknown = set(data) - {"preset", "options"}
        if unknown:
            raise InvalidRuleset(f"unknown ruleset field(s): {', '.join(sorted(unknown))}")
        options = data.get("options")
        if options is None:
            options = {}
        if not isinstance(options, Mapping):
            raise InvalidRuleset("ruleset options must be an object of name: value")
        return cls.from_spec(data["preset"], options)

    @classmethod
    def from_cli(cls, preset: str, assignments: list[str]) -> Ruleset:
        """Build from `NAME=VALUE` strings typed by the option schema."""
        options: dict[str, OptionValue] = {}
        for assignment in assignments:
            name, sep, text = assignment.partition("=")
            name = name.strip()
            if not sep:
                raise InvalidRuleset(f"option {shown(assignment)} must be written NAME=VALUE")
            spec = OPTION_SPECS.get(name)
            if spec is None:
                raise InvalidRuleset(
                    f"unknown option {shown(name)}; allowed: {', '.join(sorted(OPTION_SPECS))}"
                )
            options[name] = spec.parse(text)
        return cls.from_spec(preset, options)

    # -- serialisation ------------------------------------------------------------------

    def options(self) -> dict[str, OptionValue]:
        """Every option's resolved value."""
        values = dataclasses.asdict(self)
        del values["preset"]
        return values

    def overrides(self) -> dict[str, OptionValue]:
        """Options that differ from the preset."""
        base = {**DEFAULTS, **PRESETS[self.preset]}
        return {k: v for k, v in self.options().items() if base[k] != v}

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: the preset and the overrides that differ from it."""
        return {"preset": self.preset, "options": self.overrides()}

    @property
    def fingerprint(self) -> str:
        """Stable SHA-256 of the resolved options: equal rules, equal fingerprint."""
        text = json.dumps(self.options(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(("fiftyk-ruleset/1:" + text).encode()).hexdigest()

    # -- derived facts ------------------------------------------------------------------

    @property
    def deck_size(self) -> int:
        """Cards in the full deck."""
        per_pack = CARDS_PER_PACK - (0 if self.jokers else JOKERS_PER_PACK)
        return per_pack * self.packs

    @property
    def has_stock(self) -> bool:
        """5/6-card games: hands of `hand_size` and a stock to draw from."""
        return self.hand_size is not None

    def player_counts(self) -> tuple[int, ...]:
        """The seat counts this ruleset can be played with."""
        if self.scoring == "team":
            return (TEAM_PLAYERS,)
        if self.scoring == "qq":
            return (TEAM_PLAYERS,) if self.teams else (QQ_PLAYERS[0],)
        hand_size = self.hand_size or 0  # scoring=stock always has one (_check_consistency)
        top = MAX_PLAYERS_STOCK[self.packs]
        return tuple(
            n for n in range(MIN_PLAYERS_STOCK, top + 1) if n * hand_size <= self.deck_size
        )

    def check_players(self, players: Any) -> int:
        """Validate a seat count for this ruleset; returns it."""
        allowed = self.player_counts()
        if isinstance(players, bool) or not isinstance(players, int) or players not in allowed:
            raise InvalidRuleset(
                f"{shown(players)} players cannot play preset {self.preset!r} with these options;"
                f" allowed: {', '.join(map(str, allowed))}"
            )
        return players

    def _check_consistency(self) -> None:
        problems: list[str] = []

        def need(condition: bool, text: str) -> None:
            if not condition:
                problems.append(text)

        need(not (self.joker_points or self.joker_pair_mixed or self.joker_bombs)
             or self.jokers, "joker_points, joker_pair_mixed and joker_bombs need jokers=true")
        need(not self.joker_bombs or (self.packs == FULL_DEAL_PACKS and self.hand_size is None),
             "joker_bombs needs packs=2 and a full deal (hand_size=null)")
        need(not self.joker_pair_mixed or self.packs == 1, "joker_pair_mixed needs packs=1")
        need(not self.double_fifty_k or self.packs == FULL_DEAL_PACKS,
             "double_fifty_k needs packs=2")
        need((self.scoring == "stock") == (self.hand_size is not None),
             "scoring=stock goes with a hand_size; team and qq scoring deal every card"
             " (hand_size=null)")
        need(self.scoring != "team" or self.teams, "scoring=team needs teams=true")
        need(self.scoring != "stock" or not self.teams, "scoring=stock plays without teams")
        need(self.scoring != "stock" or self.leftover in ("void", "to_winners"),
             "scoring=stock allows leftover=void or to_winners")
        need(self.wind != "partner" or self.teams, "wind=partner needs teams=true")
        need(not (self.min_bomb == 3 and (self.kickers or self.four_with_two)),
             "min_bomb=3 (triples are bombs) cannot be combined with kickers or four_with_two")
        need(not self.three_high or self.sequence_order == "ace_high",
             "three_high needs sequence_order=ace_high")
        if problems:
            raise InvalidRuleset("inconsistent options: " + "; ".join(problems))


def describe_options() -> list[dict[str, Any]]:
    """The option schema as plain data (for docs, CLI help and the API)."""
    return [
        {"name": s.name, "default": s.default, "allowed": s.allowed(), "doc": s.doc}
        for s in OPTIONS
    ]
