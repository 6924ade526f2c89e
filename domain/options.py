"""Options as data, shared by every game's rulesets: a named option's type, default and
allowed values, checked and parsed the same way for each game (OpenSpiel's parameters)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fiftyk_referee.domain.errors import InvalidRuleset, shown

OptionValue = bool | int | str | None


@dataclass(frozen=True)
class OptionSpec:
    """One named option: its type, default and allowed values (a choice list or a range)."""

    name: str
    kind: type
    default: OptionValue
    choices: tuple[OptionValue, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False
    doc: str = ""

    def allowed(self) -> str:
        """Human-readable description of the allowed values."""
        if self.choices:
            text = ", ".join(json.dumps(c) for c in self.choices)
        elif self.kind is bool:
            text = "true, false"
        else:
            text = f"an integer from {self.minimum} to {self.maximum}"
        return text + (", or null" if self.nullable and None not in self.choices else "")

    def check(self, value: Any) -> OptionValue:
        """Return the value if allowed, else raise InvalidRuleset naming what is allowed."""
        ok: bool
        if value is None:
            ok = self.nullable
        elif self.kind is bool:
            ok = isinstance(value, bool)
        elif self.kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
            if ok and self.choices:
                ok = value in self.choices
            elif ok:
                ok = (self.minimum is None or value >= self.minimum) and (
                    self.maximum is None or value <= self.maximum
                )
        else:
            ok = isinstance(value, str) and value in self.choices
        if not ok:
            raise InvalidRuleset(
                f"option {self.name}={shown(value, as_json=True)} is not allowed;"
                f" allowed: {self.allowed()}"
            )
        return value  # type: ignore[no-any-return]

    def parse(self, text: str) -> OptionValue:
        """Parse a command-line value (`true`, `3`, `partner`, `none`) by this option's type."""
        lowered = text.strip().lower()
        if self.nullable and lowered in ("none", "null"):
            return self.check(None)
        if self.kind is bool:
            if lowered in ("true", "1", "yes", "on"):
                return True
            if lowered in ("false", "0", "no", "off"):
                return False
            return self.check(text)
        if self.kind is int:
            try:
                return self.check(int(lowered))
            except ValueError:
                return self.check(text)
        return self.check(text.strip())


def choice(name: str, default: str, *choices: str, doc: str = "") -> OptionSpec:
    """An option that takes one of a few words."""
    return OptionSpec(name, str, default, choices=tuple(choices), doc=doc)


def flag(name: str, default: bool, doc: str = "") -> OptionSpec:
    """An option that is on or off."""
    return OptionSpec(name, bool, default, doc=doc)


def integer(name: str, default: int | None, lo: int, hi: int, *, nullable: bool = False,
            doc: str = "") -> OptionSpec:
    """An option that takes a whole number in a range (or null, when `nullable`)."""
    return OptionSpec(name, int, default, minimum=lo, maximum=hi, nullable=nullable, doc=doc)


__all__ = ["OptionSpec", "OptionValue", "choice", "flag", "integer"]
