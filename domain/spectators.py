"""Who may watch a table without a seat, and how late they see it: the spectator policy.

A table is opened with a policy (plain values, stored with the table's `Opened` event):

- `ranked` — the table's hands count for something, so watching live could help a player
  (someone relays what the table shows). A ranked table always delays its spectators: by
  the delay it names, else by one round of actions (as many hand events as seats);
- `delay_actions` — a spectator sees a hand event only once this many later events of the
  same hand were recorded;
- `delay_seconds` — ... or once this many seconds passed since it was recorded;
  with both set, whichever comes first releases it; the end of a hand releases all of it
  (nothing is hidden once it is over);
- `max_spectators` — the most spectator streams open at once on the table (0: only the
  server's watch limits apply).

Spectators never see a hidden card whatever the delay (`domain/observer.py`: they watch with
the `SPECTATOR` viewer); the delay only keeps them behind the table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

MAX_DELAY_ACTIONS = 1000
MAX_DELAY_SECONDS = 3600
MAX_SPECTATORS = 100_000


@dataclass(frozen=True, slots=True)
class SpectatorPolicy:
    """How a table's spectators watch it (see the module docstring)."""

    ranked: bool = False
    delay_actions: int = 0
    delay_seconds: int = 0
    max_spectators: int = 0

    @classmethod
    def for_table(cls, players: int, *, ranked: bool = False, delay_actions: int = 0,
                  delay_seconds: int = 0, max_spectators: int = 0) -> SpectatorPolicy:
        """The policy a table is opened with (ValueError for a value out of range: the edge
        refuses those first); a ranked table without a delay gets one round of actions."""
        values = {"delay_actions": delay_actions, "delay_seconds": delay_seconds,
                  "max_spectators": max_spectators}
        for name, value in values.items():
            top = LIMITS[name]
            if not 0 <= value <= top:
                raise ValueError(f"{name} must be 0..{top}, not {value}")
        if ranked and not delay_actions and not delay_seconds:
            delay_actions = players
        return cls(ranked, delay_actions, delay_seconds, max_spectators)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> SpectatorPolicy:
        """A stored policy (None, for tables opened before policies: no delay, no limit)."""
        if not data:
            return cls()
        return cls(bool(data.get("ranked", False)), int(data.get("delay_actions", 0)),
                   int(data.get("delay_seconds", 0)), int(data.get("max_spectators", 0)))

    def to_json(self) -> dict[str, Any]:
        """The policy as plain values, as the table's event stores it."""
        return asdict(self)

    @property
    def delayed(self) -> bool:
        """Whether spectators watch behind the table."""
        return self.delay_actions > 0 or self.delay_seconds > 0


LIMITS = {"delay_actions": MAX_DELAY_ACTIONS, "delay_seconds": MAX_DELAY_SECONDS,
          "max_spectators": MAX_SPECTATORS}

__all__ = ["LIMITS", "MAX_DELAY_ACTIONS", "MAX_DELAY_SECONDS", "MAX_SPECTATORS",
           "SpectatorPolicy"]
