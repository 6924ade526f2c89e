"""Shengji rulesets: every option (docs/shengji.md#options) as data, the presets, validation.

A ruleset is a preset name plus option overrides, resolved into one frozen `ShengjiRules`
holding every option (the "by packs" defaults of `kitty_size` and `band` resolved from the
final `packs`), validated as a whole; it round-trips through plain JSON and has a stable
fingerprint. It satisfies the game boundary's `Rules` protocol.

Two options beyond the traditional ones (**decision**, as 五十K has them): `hands` (the match
length in hands, null for no limit) and `turn_timeout` (seconds per turn, 0 for no clock).
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
from fiftyk_referee.domain.shengji.cards import LEVELS, POINTS_PER_PACK
from fiftyk_referee.domain.shengji.tricks import (
    FIRST_BLOCKER,
    FORMAT_ORDER,
    KEY_COMPONENT,
    LARGEST_UNIT,
    LOWEST_COMPONENT,
    MOST_OWED,
    RULE_BOOK,
    THROW_EVALUATIONS,
)

PLAYERS = 4
CARDS_PER_PACK = 54
KITTY_BY_PACKS = {1: 6, 2: 8, 3: 6}
BAND_BY_PACKS = {1: 20, 2: 40, 3: 60}
POINT_STEP = 5  # every point total is a multiple of 5
POINT_CARDS_PER_PACK = 12  # four each of 5, 10 and K
MAX_TIMEOUT_SECONDS = 86_400
MAX_HANDS = 10_000
MAX_ROOM_POINTS = 1_000_000


def _flag(name: str, default: bool, doc: str) -> OptionSpec:
    return OptionSpec(name, bool, default, doc=doc)


def _int(name: str, default: int | None, lo: int, hi: int, doc: str, *,
         nullable: bool = False) -> OptionSpec:
    return OptionSpec(name, int, default, minimum=lo, maximum=hi, nullable=nullable, doc=doc)


OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("packs", int, 2, choices=(1, 2, 3), doc="number of 54-card packs"),
    _flag("permanent_two", False, "常主 2: every 2 is a trump"),
    _int("kitty_size", None, 2, 12, "cards in the kitty (null: 6 / 8 / 6 by packs)",
         nullable=True),
    OptionSpec("start_level", str, "2", choices=LEVELS, doc="both teams' level at the start"),
    OptionSpec("declare_pacing", str, "rounds", choices=("rounds", "final"),
               doc="a declaration window after every round of the deal, or only the last"),
    OptionSpec("first_hand_dealer", str, "first_declarer",
               choices=("first_declarer", "final_declarer"),
               doc="who deals the first hand: the first or the standing declarer"),
    _flag("bury_points", True, "point cards may be buried in the kitty"),
    _int("throw_penalty", 0, 0, 100, "points per failed throw (multiple of 5)"),
    OptionSpec("kitty_multiplier", str, "power", choices=("power", "times", "double"),
               doc="抠底: 2^cards of the last lead's largest component, 2 × its cards,"
                   " or always 2"),
    OptionSpec("kitty_cap", int, 64, choices=(2, 4, 8, 16, 32, 64), doc="largest multiplier"),
    _int("band", None, 5, 100, "points per level band (null: 20 / 40 / 60 by packs)",
         nullable=True),
    _flag("must_defend_a", True, "a team at A must win a hand as dealer side to win"),
    _flag("qq_points", False, "QQ room points move between the players each hand"),
    _int("qq_max", 4, 2, 20, "largest base of a hand's room points"),
    _int("qq_da_guang", None, 2, 50, "base when the attackers score 0 (null: the usual base)",
         nullable=True),
    _int("qq_double_at", 80, 0, MAX_ROOM_POINTS, "room points doubled when all have this many"),
    _int("qq_triple_at", 300, 0, MAX_ROOM_POINTS, "room points tripled when all have this many"),
    OptionSpec("lead_reading", str, RULE_BOOK, choices=(RULE_BOOK, LARGEST_UNIT),
               doc="a lead's components: whole tuples, longest runs first; or the reading"
                   " with the largest unit (tractors may split triples)"),
    OptionSpec("follow_duty", str, MOST_OWED, choices=(MOST_OWED, FORMAT_ORDER),
               doc="what a follower owes: the most the holding allows; or the first format"
                   " of the lead's sequence the holding can make"),
    OptionSpec("failed_throw_play", str, LOWEST_COMPONENT,
               choices=(LOWEST_COMPONENT, FIRST_BLOCKER),
               doc="a failed throw plays its lowest failed component; or the first component"
                   " the first seat able to beat one beats"),
    OptionSpec("throw_evaluation", str, KEY_COMPONENT, choices=THROW_EVALUATIONS,
               doc="how a later play beats the best: by its key component; or every unit,"
                   " the highest card, the longest units"),
    _int("hands", None, 1, MAX_HANDS, "match length in hands (null: until a team wins)",
         nullable=True),
    _int("turn_timeout", 0, 0, MAX_TIMEOUT_SECONDS, "seconds per turn; 0 = no clock"),
)
OPTION_SPECS: dict[str, OptionSpec] = {spec.name: spec for spec in OPTIONS}
DEFAULTS: dict[str, OptionValue] = {spec.name: spec.default for spec in OPTIONS}

_TRACTOR: dict[str, OptionValue] = {"packs": 2, "kitty_size": 8, "band": 40}
PRESETS: dict[str, dict[str, OptionValue]] = {
    "shengji_one_pack": {"packs": 1, "kitty_size": 6, "band": 20, "bury_points": False},
    "tractor": dict(_TRACTOR),
    "tractor_changzhu": {**_TRACTOR, "permanent_two": True},
    "titanic": {"packs": 3, "kitty_size": 6, "band": 60},
    "tractor_qq": {**_TRACTOR, "qq_points": True},
    # The defaults of shengji.io (rbtying/shengji) for four players: docs/shengji.md.
    "shengji_io": {**_TRACTOR, "first_hand_dealer": "final_declarer",
                   "kitty_multiplier": "times", "lead_reading": LARGEST_UNIT,
                   "follow_duty": FORMAT_ORDER, "failed_throw_play": FIRST_BLOCKER,
                   "throw_evaluation": "all"},
}
# Options added after tables were stored: left out of the fingerprint at their default, so
# the fingerprint of every ruleset that does not use them stays what it was.
_ADDED_LATER: dict[str, OptionValue] = {
    name: DEFAULTS[name]
    for name in ("lead_reading", "follow_duty", "failed_throw_play", "throw_evaluation")}
_KEEP = object()  # not a value of any option
# Options whose default follows `packs` (when neither the preset nor the caller sets them).
_BY_PACKS: dict[str, dict[int, int]] = {"kitty_size": KITTY_BY_PACKS, "band": BAND_BY_PACKS}


@dataclass(frozen=True)
class ShengjiRules:
    """A fully resolved, validated Shengji ruleset. Build with `ShengjiRules.from_spec`."""

    preset: str
    packs: int
    permanent_two: bool
    kitty_size: int
    start_level: str
    declare_pacing: str
    first_hand_dealer: str
    bury_points: bool
    throw_penalty: int
    kitty_multiplier: str
    kitty_cap: int
    band: int
    must_defend_a: bool
    qq_points: bool
    qq_max: int
    qq_da_guang: int | None
    qq_double_at: int
    qq_triple_at: int
    lead_reading: str
    follow_duty: str
    failed_throw_play: str
    throw_evaluation: str
    hands: int | None
    turn_timeout: int

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_spec(cls, preset: str, options: Mapping[str, Any] | None = None) -> ShengjiRules:
        """Resolve a preset plus overrides, validating every option and their combination."""
        if not isinstance(preset, str) or preset not in PRESETS:
            raise InvalidRuleset(f"unknown preset {shown(preset)}; allowed: {', '.join(PRESETS)}")
        given: dict[str, Any] = {}
        for name, value in (options or {}).items():
            spec = OPTION_SPECS.get(name)
            if spec is None:
                raise InvalidRuleset(
                    f"unknown option {shown(name)}; allowed: {', '.join(sorted(OPTION_SPECS))}")
            given[name] = spec.check(value)
        values: dict[str, Any] = {**DEFAULTS, **PRESETS[preset], **given}
        for name, table in _BY_PACKS.items():
            set_by_caller = given.get(name) is not None
            # An explicit null asks for the "by packs" default, also over the preset's value.
            set_by_preset = name in PRESETS[preset] and "packs" not in given and name not in given
            if not set_by_caller and not set_by_preset:
                values[name] = table[values["packs"]]
        rules = cls(preset=preset, **values)
        rules._check_consistency()
        return rules

    @classmethod
    def from_json(cls, data: Any) -> ShengjiRules:
        """Read `{"preset": P, "options": {...}}` (options optional)."""
        if not isinstance(data, Mapping) or "preset" not in data:
            raise InvalidRuleset('a ruleset is an object {"preset": NAME, "options": {...}}')
        unknown = set(data) - {"preset", "options"}
        if unknown:
            raise InvalidRuleset(f"unknown ruleset field(s): {', '.join(sorted(unknown))}")
        options = data.get("options") or {}
        if not isinstance(options, Mapping):
            raise InvalidRuleset("ruleset options must be an object of name: value")
        return cls.from_spec(data["preset"], options)

    # -- serialisation ------------------------------------------------------------------

    def options(self) -> dict[str, OptionValue]:
        """Every option's resolved value."""
        values = dataclasses.asdict(self)
        del values["preset"]
        return values

    def overrides(self) -> dict[str, OptionValue]:
        """Options that differ from the preset (its "by packs" defaults resolved)."""
        base = ShengjiRules.from_spec(self.preset).options()
        return {k: v for k, v in self.options().items() if base[k] != v}

    def to_json(self) -> dict[str, Any]:
        """`{"preset": P, "options": {...}}`: the preset and the options that differ from it."""
        return {"preset": self.preset, "options": self.overrides()}

    @property
    def fingerprint(self) -> str:
        """Stable SHA-256 of the resolved options: equal rules, equal fingerprint."""
        values = {name: value for name, value in self.options().items()
                  if _ADDED_LATER.get(name, _KEEP) != value}
        text = json.dumps(values, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(("shengji-ruleset/1:" + text).encode()).hexdigest()

    # -- derived facts ------------------------------------------------------------------

    @property
    def deck_size(self) -> int:
        """Cards in the deck (54 per pack)."""
        return CARDS_PER_PACK * self.packs

    @property
    def hand_size(self) -> int:
        """Cards each seat is dealt (also the number of deal rounds)."""
        return (self.deck_size - self.kitty_size) // PLAYERS

    @property
    def total_points(self) -> int:
        """Card points in the deck: 100 per pack."""
        return POINTS_PER_PACK * self.packs

    def check_players(self, players: Any) -> int:
        """Shengji is played by exactly four (`INVALID_RULESET` otherwise)."""
        if isinstance(players, bool) or players != PLAYERS:
            raise InvalidRuleset(
                f"{shown(players)} players cannot play Shengji; it needs exactly 4")
        return PLAYERS

    def _check_consistency(self) -> None:
        problems: list[str] = []
        if (self.deck_size - self.kitty_size) % PLAYERS:
            dealt = self.deck_size - self.kitty_size
            problems.append(f"kitty_size={self.kitty_size} leaves {dealt} cards,"
                            " not divisible among 4 seats")
        if self.throw_penalty % POINT_STEP:
            problems.append("throw_penalty must be a multiple of 5")
        if self.band % POINT_STEP:
            problems.append("band must be a multiple of 5")
        if not self.bury_points and self.hand_size < POINT_CARDS_PER_PACK * self.packs:
            # A dealer holding every point card must still find kitty_size others to bury.
            least = POINT_CARDS_PER_PACK * self.packs
            problems.append(f"bury_points=false needs at least {least} cards per hand"
                            " (kitty_size too large)")
        if self.qq_double_at >= self.qq_triple_at:
            problems.append("qq_double_at must be below qq_triple_at")
        if problems:
            raise InvalidRuleset("inconsistent options: " + "; ".join(problems))


def describe_options() -> list[dict[str, Any]]:
    """The option schema as plain data (for docs, CLI help and the API)."""
    return [{"name": s.name, "default": s.default, "allowed": s.allowed(), "doc": s.doc}
            for s in OPTIONS]


__all__ = ["OPTIONS", "PLAYERS", "PRESETS", "ShengjiRules", "describe_options"]
