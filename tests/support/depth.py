"""How deep the random playout tests go: a quick default for the suite, deeper on demand.

The suite plays a fixed, seeded sample of random hands per preset (the same hands on every
run, so a failure reproduces). `FIFTYK_PLAYOUT_HANDS=N` plays N hands per preset instead —
e.g. `FIFTYK_PLAYOUT_HANDS=1000 ./scripts/test tests/unit -k playouts` before a release or
after a change to the rules engine.
"""

from __future__ import annotations

import os

PLAYOUT_HANDS_VARIABLE = "FIFTYK_PLAYOUT_HANDS"


def playout_hands(default: int) -> int:
    """Hands per preset: `FIFTYK_PLAYOUT_HANDS` if set (a positive integer), else `default`."""
    text = os.environ.get(PLAYOUT_HANDS_VARIABLE, "").strip()
    if not text:
        return default
    hands = int(text)
    if hands < 1:
        raise ValueError(f"{PLAYOUT_HANDS_VARIABLE} must be a positive integer, not {text!r}")
    return hands
