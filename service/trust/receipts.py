"""Command receipts: the stored proof that a command with a request id was accepted.

A receipt is an aggregate saved in the same transaction as the command's events; its id is
derived from a scope (the table id, or `tables` for creating one) and the request id, so two
racing identical requests collide on its first version. It holds the command's fingerprint
(kind and arguments) and its outcome (the ids and versions it produced).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from fiftyk_referee.domain.aggregate import Aggregate, event

RECEIPT_NAMESPACE = uuid5(NAMESPACE_URL, "https://fiftyk-referee/command-receipt")

class CommandReceipt(Aggregate):
    """The stored proof that a command with a request id was accepted, and what it produced."""

    @staticmethod
    def create_id(scope: str, request_id: str) -> UUID:
        """Receipts are identified by scope and request id."""
        return receipt_id(scope, request_id)

    @event("Recorded")
    def __init__(self, scope: str, request_id: str, kind: str, fingerprint: str,
                 result: dict[str, Any]) -> None:
        self.scope = scope
        self.request_id = request_id
        self.kind = kind
        self.fingerprint = fingerprint
        self.result = dict(result)


def receipt_id(scope: str, request_id: str) -> UUID:
    """The id of the receipt for a request id within a scope."""
    return uuid5(RECEIPT_NAMESPACE, f"{scope}:{request_id}")


def fingerprint_of(kind: str, arguments: Mapping[str, Any]) -> str:
    """A stable hash of a command's kind and arguments (plain JSON values: ids and cards as
    text, numbers, lists, option maps)."""
    text = json.dumps({"kind": kind, "arguments": dict(arguments)},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()
