"""Who is looking: the viewers of a hand, and the one question every view asks of them.

Every view, event and stream the referee hands out is built for exactly one viewer:

- `SeatViewer(seat)` — a player: its own cards, and of every other seat only what the
  table may see (counts where the rules show them);
- `SPECTATOR` — anyone at the table without a seat (the platform, a watcher): no cards;
- `AUDITOR` — the audit role: everything, including the deck, the seed and the kitty.

Games decide what each viewer sees by asking `sees_cards_of(viewer, seat)`; they never
compare viewers by hand, so a new viewer kind is added here and nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SeatViewer:
    """A player looking at the hand from its seat."""

    seat: int


@dataclass(frozen=True, slots=True)
class Spectator:
    """Someone at the table without a seat: sees what is public, no cards."""


@dataclass(frozen=True, slots=True)
class Auditor:
    """The audit role: sees every card, the deck and the seed."""


Viewer = SeatViewer | Spectator | Auditor
SPECTATOR = Spectator()
AUDITOR = Auditor()


def seat_of(viewer: Viewer) -> int | None:
    """The viewer's own seat (None for spectators and auditors)."""
    return viewer.seat if isinstance(viewer, SeatViewer) else None


def sees_cards_of(viewer: Viewer, seat: int) -> bool:
    """Whether `viewer` may see the cards `seat` holds (its own, or everything for audit)."""
    if isinstance(viewer, Auditor):
        return True
    return isinstance(viewer, SeatViewer) and viewer.seat == seat


def sees_everything(viewer: Viewer) -> bool:
    """Whether `viewer` sees hidden state (the deck, the seed, the stock, a buried kitty)."""
    return isinstance(viewer, Auditor)


__all__ = [
    "AUDITOR", "SPECTATOR", "Auditor", "SeatViewer", "Spectator", "Viewer", "seat_of",
    "sees_cards_of", "sees_everything",
]
