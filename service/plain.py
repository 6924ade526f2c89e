"""Plain JSON data from domain values: decimals and ids as text, times in ISO 8601."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from enum import Enum
from typing import Any
from uuid import UUID

from fiftyk_referee.domain.fiftyk.combinations import Combination
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset


def plain_json(value: Any) -> Any:
    """A value as plain JSON data: decimals and ids as text, times in ISO 8601, sets sorted."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, Mapping):
        return {str(key): plain_json(item) for key, item in value.items()}
    if isinstance(value, set | frozenset):
        items = [plain_json(item) for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, list | tuple):
        return [plain_json(item) for item in value]
    if isinstance(value, Decimal | UUID | Enum):
        return str(value.value if isinstance(value, Enum) else value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Ruleset):
        return value.to_json()
    if isinstance(value, Combination):
        return {"type": value.type, "cards": value.card_strings()}
    raise TypeError(f"no plain JSON form for {type(value).__name__}")
