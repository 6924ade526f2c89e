"""What each seat may see of a hand's stored events (for watch streams and histories).

Only two hand events carry hidden cards: the deal (the whole deck, and the secret seed) and
cards drawn from the stock. A seat sees its own cards and, of everyone else, counts.
Everything else a hand records is public at the table. Auditors (viewer None) see all.
"""

from __future__ import annotations

from typing import Any

from fiftyk_referee.domain.deal import deal
from fiftyk_referee.domain.fiftyk.hand import ruleset_of
from fiftyk_referee.domain.observer import Viewer, seat_of, sees_cards_of, sees_everything

DEALT, CARDS_DRAWN = "Dealt", "CardsDrawn"
HIDDEN_EVENTS = frozenset({DEALT, CARDS_DRAWN})


def redact_event(name: str, payload: dict[str, Any], viewer: Viewer) -> dict[str, Any]:
    """The event payload as `viewer` may see it."""
    if sees_everything(viewer) or name not in HIDDEN_EVENTS:
        return payload
    if name == CARDS_DRAWN:
        if sees_cards_of(viewer, payload.get("seat", -1)):
            return payload
        return {"seat": payload.get("seat"), "count": len(payload.get("cards", []))}
    own = seat_of(viewer)
    return _redact_deal(payload, -1 if own is None else own)


def _redact_deal(payload: dict[str, Any], viewer: int) -> dict[str, Any]:
    rules = ruleset_of(payload["ruleset"])
    players = int(payload["players"])
    hands, stock, _ = deal(payload["deck"], players, int(payload["dealer"]), rules.hand_size)
    visible = {k: v for k, v in payload.items() if k not in ("deck", "seed")}
    visible["cards"] = [str(c) for c in hands[viewer]] if 0 <= viewer < players else []
    visible["counts"] = [len(h) for h in hands]
    visible["stock_count"] = len(stock)
    return visible
