"""What each viewer may see of a Shengji hand's stored events (watch streams, histories).

Events that carry hidden cards, and what a seat sees of them (auditors see everything):

- `Dealt`: the whole deck and the secret seed — removed (the commitment stays);
- `RoundDealt`: the cards each seat received — its own, and counts of the others';
- `KittyTaken`: the kitty's cards — the dealer who took it only, others a count;
- `KittyBuried`: the buried cards — the dealer only, others a count.

Everything else is public at the table: declarations show their cards (§4), plays are face
up, and `HandEnded` reveals the seed and the kitty with the result.
"""

from __future__ import annotations

from typing import Any

from fiftyk_referee.domain.observer import Viewer, sees_cards_of, sees_everything

DEALT, ROUND_DEALT, KITTY_TAKEN, KITTY_BURIED = "Dealt", "RoundDealt", "KittyTaken", "KittyBuried"
HIDDEN_EVENTS = frozenset({DEALT, ROUND_DEALT, KITTY_TAKEN, KITTY_BURIED})


def redact_event(name: str, payload: dict[str, Any], viewer: Viewer) -> dict[str, Any]:
    """The event payload as `viewer` may see it."""
    if sees_everything(viewer) or name not in HIDDEN_EVENTS:
        return payload
    if name == DEALT:
        return {k: v for k, v in payload.items() if k not in ("deck", "seed")}
    if name == ROUND_DEALT:
        dealt = payload.get("cards", [])
        visible = {k: v for k, v in payload.items() if k != "cards"}
        visible["cards"] = [list(cards) if sees_cards_of(viewer, seat) else []
                            for seat, cards in enumerate(dealt)]
        visible["counts"] = [len(cards) for cards in dealt]
        return visible
    seat = payload.get("dealer" if name == KITTY_TAKEN else "seat", -1)
    key = "kitty" if name == KITTY_TAKEN else "cards"
    if sees_cards_of(viewer, seat):
        return payload
    visible = {k: v for k, v in payload.items() if k != key}
    visible["count"] = len(payload.get(key, []))
    return visible


__all__ = ["HIDDEN_EVENTS", "redact_event"]
