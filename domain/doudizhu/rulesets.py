"""斗地主 rulesets: every option as data, the presets, validation.

A ruleset is a preset name plus option overrides, resolved into one frozen `DoudizhuRules`
and validated as a whole; it round-trips through plain JSON and has a stable fingerprint.
It satisfies the game boundary's `Rules` protocol. The combination options (what a kicker
or a plane's wings may be) are `combinations.ComboOptions`' own keys, kept here beside the
bidding, scoring and match options.

Presets (data, below): `classic` (bid 1-3 points once around), `rob` (叫地主 then 抢地主,
each rob doubling) and `douzero` (classic bidding with the combinations DouZero's and
RLCard's move generators agree on).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fiftyk_referee.domain.doudizhu.combinations import DEFAULT as DEFAULT_COMBOS
from fiftyk_referee.domain.doudizhu.combinations import DOUZERO as DOUZERO_COMBOS
from fiftyk_referee.domain.doudizhu.combinations import OPTION_SPECS as COMBO_SPECS
from fiftyk_referee.domain.doudizhu.combinations import ComboOptions
from fiftyk_referee.domain.errors import InvalidRuleset, shown
from fiftyk_referee.domain.options import OptionSpec, OptionValue
from fiftyk_referee.domain.options import choice as _choice
from fiftyk_referee.domain.options import flag as _flag
from fiftyk_referee.domain.options import integer as _int

GAME_NAME = "doudizhu"  # the game's name on tables, transcripts and events
PLAYERS = 3
HAND_SIZE = 17
KITTY_SIZE = 3  # 底牌
POINTS, ROB = "points", "rob"  # the two ways of bidding
MAX_BID = 3
MAX_BASE_SCORE = 100_000
MAX_MULTIPLIER_CAP = 1 << 20  # far beyond any real hand's
MAX_TIMEOUT_SECONDS = 86_400
MAX_HANDS = 10_000

_OWN_OPTIONS: tuple[OptionSpec, ...] = (
    _choice("bidding", POINTS, POINTS, ROB,
            doc="points: bid 1-3 points once around, a 3 ends it; rob: 叫地主 then 抢地主,"
                " each rob doubling"),
    _int("base_score", 1, 1, MAX_BASE_SCORE, doc="the stake a multiplier of 1 is worth"),
    _flag("spring", True, "春天 and 反春 double the hand"),
    _flag("bomb_doubling", True, "every bomb and rocket played doubles the hand"),
    _int("multiplier_cap", 0, 0, MAX_MULTIPLIER_CAP,
         doc="the largest multiplier a hand is paid at; 0 = no cap"),
    _int("hands", None, 1, MAX_HANDS, nullable=True,
         doc="match length in hands (a redeal counts as a hand); null = no limit"),
    _int("turn_timeout", 0, 0, MAX_TIMEOUT_SECONDS, doc="seconds per turn; 0 = no clock"),
)


def _combo_options(options: ComboOptions) -> dict[str, OptionValue]:
    return dict(options.to_options())


COMBO_DEFAULTS: dict[str, OptionValue] = _combo_options(DEFAULT_COMBOS)
OPTIONS: tuple[OptionSpec, ...] = (*COMBO_SPECS, *_OWN_OPTIONS)
OPTION_SPECS: dict[str, OptionSpec] = {spec.name: spec for spec in OPTIONS}
DEFAULTS: dict[str, OptionValue] = {spec.name: spec.default for spec in OPTIONS}
COMBO_KEYS = frozenset(COMBO_DEFAULTS)

PRESETS: dict[str, dict[str, OptionValue]] = {
    "classic": {},
    "rob": {"bidding": ROB},
    "douzero": {name: value for name, value in _combo_options(DOUZERO_COMBOS).items()
                if COMBO_DEFAULTS[name] != value},
}


@dataclass(frozen=True)
class DoudizhuRules:
    """A fully resolved, validated 斗地主 ruleset. Build with `DoudizhuRules.from_spec`."""

    preset: str
    combos: ComboOptions
    bidding: str
    base_score: int
    spring: bool
    bomb_doubling: bool
    multiplier_cap: int
    hands: int | None
    turn_timeout: int

    # -- construction -------------------------------------------------------------------

    @classmethod
    def from_spec(cls, preset: str, options: Mapping[str, Any] | None = None) -> DoudizhuRules:
        """Resolve a preset plus overrides, validating every option."""
        if not isinstance(preset, str) or preset not in PRESETS:
            raise InvalidRuleset(f"unknown preset {shown(preset)}; allowed: {', '.join(PRESETS)}")
        if options is not None and not isinstance(options, Mapping):
            raise InvalidRuleset("ruleset options must be an object of name: value")
        values: dict[str, Any] = {**DEFAULTS, **PRESETS[preset]}
        for name, value in (options or {}).items():
            spec = OPTION_SPECS.get(name)
            if spec is None:
                raise InvalidRuleset(
                    f"unknown option {shown(name)}; allowed: {', '.join(sorted(OPTION_SPECS))}")
            values[name] = spec.check(value)
        combos = ComboOptions.from_options({k: values[k] for k in COMBO_KEYS})
        own = {spec.name: values[spec.name] for spec in _OWN_OPTIONS}
        return cls(preset=preset, combos=combos, **own)

    @classmethod
    def from_json(cls, data: Any) -> DoudizhuRules:
        """Read `{"preset": P, "options": {...}}` (options optional)."""
        if not isinstance(data, Mapping) or "preset" not in data:
            raise InvalidRuleset('a ruleset is an object {"preset": NAME, "options": {...}}')
        unknown = set(data) - {"preset", "options"}
        if unknown:
            raise InvalidRuleset(f"unknown ruleset field(s): {', '.join(sorted(unknown))}")
        return cls.from_spec(data["preset"], data.get("options") or {})

    @classmethod
    def from_cli(cls, preset: str, assignments: list[str]) -> DoudizhuRules:
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
                    f"unknown option {shown(name)}; allowed: {', '.join(sorted(OPTION_SPECS))}")
            options[name] = spec.parse(text)
        return cls.from_spec(preset, options)

    # -- serialisation ------------------------------------------------------------------

    def options(self) -> dict[str, OptionValue]:
        """Every option's resolved value."""
        own = {spec.name: getattr(self, spec.name) for spec in _OWN_OPTIONS}
        return {**_combo_options(self.combos), **own}

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
        return hashlib.sha256(f"{GAME_NAME}-ruleset/1:{text}".encode()).hexdigest()

    # -- derived facts ------------------------------------------------------------------

    def check_players(self, players: Any) -> int:
        """Three seats, always."""
        if isinstance(players, bool) or players != PLAYERS:
            raise InvalidRuleset(f"斗地主 is played by {PLAYERS} players, not {shown(players)}")
        return PLAYERS

    @property
    def robbing(self) -> bool:
        """Whether the landlord is called and robbed (叫地主 / 抢地主), not bid for in points."""
        return self.bidding == ROB


def describe_options() -> list[dict[str, Any]]:
    """The option schema as plain data (for docs, CLI help and the API)."""
    return [{"name": s.name, "default": s.default, "allowed": s.allowed(), "doc": s.doc}
            for s in OPTIONS]


__all__ = [
    "DEFAULTS", "GAME_NAME", "HAND_SIZE", "KITTY_SIZE", "MAX_BID", "OPTIONS", "OPTION_SPECS",
    "PLAYERS", "POINTS", "PRESETS", "ROB", "DoudizhuRules", "describe_options",
]
