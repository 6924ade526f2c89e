"""Webhook signatures: the `Fiftyk-Signature` header, made and checked.

Like Stripe's: `Fiftyk-Signature: t=<unix seconds>,kid=<key id>,v1=<hex>` where `v1` is
HMAC-SHA256 keyed with the endpoint's secret over `<t>.<body>`. Receivers check it against
the raw body and refuse a `t` outside their replay window; `verify_signature` is the
reference, and docs/integrating.md has a standalone copy.
"""

from __future__ import annotations

import hashlib
import hmac
import time

SIGNATURE_HEADER = "Fiftyk-Signature"
EVENT_ID_HEADER = "Fiftyk-Event-Id"
EVENT_NAME_HEADER = "Fiftyk-Event-Name"
SIGNATURE_SCHEME = "v1"
DEFAULT_REPLAY_WINDOW_SECONDS = 300


def signature_header(secret: str, key_id: str, timestamp: int, body: bytes) -> str:
    """The `Fiftyk-Signature` header value for a body sent at `timestamp`."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},kid={key_id},{SIGNATURE_SCHEME}={mac.hexdigest()}"


def verify_signature(secrets_by_key: dict[str, str], header: str, body: bytes, *,
                     now: float | None = None,
                     window_seconds: int = DEFAULT_REPLAY_WINDOW_SECONDS) -> bool:
    """Whether `header` signs `body` with one of the receiver's secrets, within the window."""
    fields: dict[str, str] = {}
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        fields.setdefault(name, value)
    secret = secrets_by_key.get(fields.get("kid", ""))
    if secret is None or not fields.get("t", "").isdigit():
        return False
    timestamp = int(fields["t"])
    if abs((time.time() if now is None else now) - timestamp) > window_seconds:
        return False
    expected = signature_header(secret, fields["kid"], timestamp, body).rpartition("=")[2]
    return hmac.compare_digest(expected, fields.get(SIGNATURE_SCHEME, ""))
