"""Who is calling: signed seat tokens for players, shared keys for the audit and platform roles.

A seat token is compact base64url text, `fk1.<payload>.<signature>`:

- `payload` is the JSON object `{"tid": table id, "seat": n, "pid": player id,
  "iat": issued-at, "exp": expiry}` (Unix seconds), base64url without padding, plus
  `"gen": n` once the seat's token has been reissued (absent means generation 0);
- `signature` is HMAC-SHA256, keyed with the configured token secret, over the domain tag
  `fiftyk-seat-token` and the text `fk1.<payload>`, base64url without padding.

A spectator token (`IssueSpectatorToken`) is the same shape with its own version and MAC
tag, `fks1.<payload>.<signature>`: payload `{"tid": table id, "sid": spectator id, "iat",
"exp"}`, MAC over `fiftyk-spectator-token` and `fks1.<payload>`. It names no seat: its holder
watches one table as a spectator (no hidden card) and acts for nobody.

Verification recomputes the MAC and compares it in constant time before reading the payload,
so a forged payload is never parsed. Credentials travel in request metadata:

- player:   `authorization: Bearer <seat token>`
- spectator: `authorization: Bearer <spectator token>`
- audit:    `x-fiftyk-audit-key: <key>`
- platform: `x-fiftyk-platform-key: <key>`

A caller may present several (e.g. a platform tool holding both keys); each one presented
must be valid, and the principal holds every role they prove. No credential at all gives the
anonymous principal, which the `require_*` helpers turn away as unauthenticated.

A token stays valid for its seat until it expires, even after the player leaves the table:
callers that act for a seat also check, against the table's stream, that the token's player
still holds the seat and that its generation is the seat's current one
(`Referee.check_seat_token`): `ReissueSeatToken` and `ReplaceSeat` move the generation on,
so older tokens stop working at once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import time
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

from fiftyk_referee.service.errors import PermissionDenied, ServiceReason, Unauthenticated

TOKEN_VERSION = "fk1"
_MAC_TAG = b"fiftyk-seat-token\n"
SPECTATOR_TOKEN_VERSION = "fks1"
_SPECTATOR_MAC_TAG = b"fiftyk-spectator-token\n"
SPECTATOR_ID_BYTES = 8
DEFAULT_TOKEN_TTL_SECONDS = 7 * 24 * 3600
CLOCK_SKEW_SECONDS = 60  # tolerated difference between the issuing and verifying clocks
MAX_TOKEN_LENGTH = 2048
MAX_ID_LENGTH = 128

AUTHORIZATION_HEADER = "authorization"
AUDIT_KEY_HEADER = "x-fiftyk-audit-key"
PLATFORM_KEY_HEADER = "x-fiftyk-platform-key"
BEARER_SCHEME = "bearer"
_B64URL = re.compile(r"[A-Za-z0-9_-]+")

MetadataPairs = Iterable[tuple[str, str | bytes]]
# Set for the current call by `PlatformCertificateInterceptor` when the caller's verified
# TLS client certificate names a platform (`FIFTYK_TLS_PLATFORM_NAMES`): the platform role
# without the key.
CERTIFIED_PLATFORM: ContextVar[bool] = ContextVar("certified_platform", default=False)


class AuthSettings(Protocol):
    """The secrets authentication needs (`service.ops.config.Config` provides them)."""

    @property
    def token_secret(self) -> str:
        """HMAC key for seat tokens."""
        ...

    @property
    def audit_key(self) -> str:
        """Shared key of the audit role; empty disables the role."""
        ...

    @property
    def platform_key(self) -> str:
        """Shared key of the platform role; empty disables the role."""
        ...


class Role(StrEnum):
    """What a principal may be."""

    PLAYER = "player"
    SPECTATOR = "spectator"
    AUDIT = "audit"
    PLATFORM = "platform"


@dataclass(frozen=True)
class SeatClaim:
    """What a valid seat token says: this player holds this seat at this table until expiry."""

    table_id: str
    seat: int
    player_id: str
    issued_at: int
    expires_at: int
    generation: int = 0

    @property
    def expires(self) -> datetime:
        """The expiry as an aware UTC datetime."""
        return datetime.fromtimestamp(self.expires_at, tz=UTC)


@dataclass(frozen=True)
class SpectatorClaim:
    """What a valid spectator token says: someone may watch this table until expiry."""

    table_id: str
    spectator_id: str
    issued_at: int
    expires_at: int

    @property
    def expires(self) -> datetime:
        """The expiry as an aware UTC datetime."""
        return datetime.fromtimestamp(self.expires_at, tz=UTC)


@dataclass(frozen=True)
class Principal:
    """The authenticated caller: an optional seat or spectator claim plus the roles proven
    by keys."""

    seat: SeatClaim | None = None
    audit: bool = False
    platform: bool = False
    spectator: SpectatorClaim | None = None

    @property
    def roles(self) -> frozenset[Role]:
        """Every role this principal holds."""
        held = {Role.PLAYER} if self.seat is not None else set()
        if self.spectator is not None:
            held.add(Role.SPECTATOR)
        if self.audit:
            held.add(Role.AUDIT)
        if self.platform:
            held.add(Role.PLATFORM)
        return frozenset(held)

    @property
    def is_anonymous(self) -> bool:
        """No credential was presented."""
        return not self.roles

    @property
    def label(self) -> str:
        """A short, secret-free description for logs and metrics, e.g. `audit+platform`."""
        return "+".join(sorted(self.roles)) or "anonymous"


ANONYMOUS = Principal()


# -- tokens ----------------------------------------------------------------------------------


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    """Strict unpadded base64url: only the canonical encoding of some bytes is accepted."""
    if not _B64URL.fullmatch(text):
        raise ValueError("not unpadded base64url")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64encode(data) != text:
        raise ValueError("not the canonical base64url encoding")
    return data


def _mac(secret: str, signed_text: str, tag: bytes = _MAC_TAG) -> bytes:
    if not secret:
        raise ValueError("the token secret is empty")
    return hmac.new(secret.encode("utf-8"), tag + signed_text.encode("ascii"),
                    hashlib.sha256).digest()


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= MAX_ID_LENGTH


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def issue_seat_token(
    secret: str,
    table_id: str,
    seat: int,
    player_id: str,
    *,
    ttl_seconds: int = DEFAULT_TOKEN_TTL_SECONDS,
    now: float | None = None,
    generation: int = 0,
) -> str:
    """Sign a token saying `player_id` holds `seat` at `table_id` for `ttl_seconds`
    (`generation`: which of the seat's reissued tokens this is)."""
    if not _valid_id(table_id) or not _valid_id(player_id):
        raise ValueError(f"table and player ids are 1..{MAX_ID_LENGTH} characters")
    if not _is_int(seat) or seat < 0:
        raise ValueError("a seat is a non-negative integer")
    if ttl_seconds <= 0:
        raise ValueError("a token needs a positive lifetime")
    if not _is_int(generation) or generation < 0:
        raise ValueError("a token generation is a non-negative integer")
    issued = int(time.time() if now is None else now)
    payload: dict[str, Any] = {"tid": table_id, "seat": seat, "pid": player_id, "iat": issued,
                               "exp": issued + ttl_seconds}
    if generation:  # generation 0 keeps the token of 0.1.0's shape
        payload["gen"] = generation
    return _sign(secret, TOKEN_VERSION, _MAC_TAG, payload)


def issue_spectator_token(secret: str, table_id: str, *,
                          ttl_seconds: int = DEFAULT_TOKEN_TTL_SECONDS,
                          now: float | None = None) -> str:
    """Sign a token letting its holder watch `table_id` as a spectator for `ttl_seconds`."""
    if not _valid_id(table_id):
        raise ValueError(f"a table id is 1..{MAX_ID_LENGTH} characters")
    if ttl_seconds <= 0:
        raise ValueError("a token needs a positive lifetime")
    issued = int(time.time() if now is None else now)
    payload = {"tid": table_id, "sid": secrets.token_hex(SPECTATOR_ID_BYTES), "iat": issued,
               "exp": issued + ttl_seconds}
    return _sign(secret, SPECTATOR_TOKEN_VERSION, _SPECTATOR_MAC_TAG, payload)


def _sign(secret: str, version: str, tag: bytes, payload: dict[str, Any]) -> str:
    body = _b64encode(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    signed = f"{version}.{body}"
    return f"{signed}.{_b64encode(_mac(secret, signed, tag))}"


def _invalid(why: str, what: str = "seat token") -> Unauthenticated:
    return Unauthenticated(ServiceReason.INVALID_TOKEN, f"invalid {what}: {why}")


def _opened(secret: str, token: str, version: str, tag: bytes, what: str) -> Any:
    """A token's payload once its form and signature are checked (not yet its fields)."""
    if not isinstance(token, str) or not token.isascii() or len(token) > MAX_TOKEN_LENGTH:
        raise _invalid("not a token", what)
    parts = token.split(".")
    if len(parts) != 3 or parts[0] != version:
        raise _invalid(f"expected {version}.<payload>.<signature>", what)
    signed = f"{parts[0]}.{parts[1]}"
    try:
        signature = _b64decode(parts[2])
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        raise _invalid("malformed signature", what) from None
    if not hmac.compare_digest(signature, _mac(secret, signed, tag)):
        raise _invalid("bad signature", what)
    try:
        return json.loads(_b64decode(parts[1]))
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        raise _invalid("malformed payload", what) from None


def _check_times(issued_at: int, expires: datetime, now: float | None, what: str) -> None:
    current = time.time() if now is None else now
    if issued_at > current + CLOCK_SKEW_SECONDS:
        raise _invalid("issued in the future", what)
    if current >= expires.timestamp():
        raise Unauthenticated(ServiceReason.TOKEN_EXPIRED,
                              f"the {what} expired at {expires.isoformat()}")


def verify_seat_token(secret: str, token: str, *, now: float | None = None) -> SeatClaim:
    """Check a token's signature and expiry; raise Unauthenticated (why in the reason) if bad."""
    payload = _opened(secret, token, TOKEN_VERSION, _MAC_TAG, "seat token")
    if not (isinstance(payload, dict) and _valid_id(payload.get("tid"))
            and _valid_id(payload.get("pid")) and _is_int(payload.get("seat"))
            and payload["seat"] >= 0 and _is_int(payload.get("iat"))
            and _is_int(payload.get("exp")) and _is_int(payload.get("gen", 0))
            and payload.get("gen", 0) >= 0):
        raise _invalid("malformed payload")
    claim = SeatClaim(table_id=payload["tid"], seat=payload["seat"], player_id=payload["pid"],
                      issued_at=payload["iat"], expires_at=payload["exp"],
                      generation=payload.get("gen", 0))
    _check_times(claim.issued_at, claim.expires, now, "seat token")
    return claim


def verify_spectator_token(secret: str, token: str, *, now: float | None = None
                           ) -> SpectatorClaim:
    """Check a spectator token's signature and expiry (Unauthenticated if bad)."""
    what = "spectator token"
    payload = _opened(secret, token, SPECTATOR_TOKEN_VERSION, _SPECTATOR_MAC_TAG, what)
    if not (isinstance(payload, dict) and _valid_id(payload.get("tid"))
            and _valid_id(payload.get("sid")) and _is_int(payload.get("iat"))
            and _is_int(payload.get("exp"))):
        raise _invalid("malformed payload", what)
    claim = SpectatorClaim(table_id=payload["tid"], spectator_id=payload["sid"],
                           issued_at=payload["iat"], expires_at=payload["exp"])
    _check_times(claim.issued_at, claim.expires, now, what)
    return claim


# -- metadata --------------------------------------------------------------------------------


def _text(value: str | bytes) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _single(metadata: list[tuple[str, str]], header: str, reason: ServiceReason) -> str | None:
    values = [value for key, value in metadata if key == header]
    if len(values) > 1:
        raise Unauthenticated(reason, f"more than one {header} header")
    return values[0] if values else None


def _key_matches(presented: str, configured: str) -> bool:
    # An empty configured key disables the role: nothing matches it.
    return bool(configured) and hmac.compare_digest(
        presented.encode("utf-8"), configured.encode("utf-8"))


def authenticate(
    metadata: MetadataPairs | None, settings: AuthSettings, *, now: float | None = None
) -> Principal:
    """The caller proven by the request metadata; raise Unauthenticated for any bad credential."""
    pairs = [(key.lower(), _text(value)) for key, value in (metadata or ())]
    seat: SeatClaim | None = None
    spectator: SpectatorClaim | None = None
    authorization = _single(pairs, AUTHORIZATION_HEADER, ServiceReason.INVALID_TOKEN)
    if authorization is not None:
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != BEARER_SCHEME or not token.strip():
            raise _invalid("send `authorization: Bearer <seat token>`")
        if token.strip().startswith(f"{SPECTATOR_TOKEN_VERSION}."):
            spectator = verify_spectator_token(settings.token_secret, token.strip(), now=now)
        else:
            seat = verify_seat_token(settings.token_secret, token.strip(), now=now)
    audit_key = _single(pairs, AUDIT_KEY_HEADER, ServiceReason.INVALID_AUDIT_KEY)
    if audit_key is not None and not _key_matches(audit_key, settings.audit_key):
        raise Unauthenticated(ServiceReason.INVALID_AUDIT_KEY, "the audit key is not valid")
    platform_key = _single(pairs, PLATFORM_KEY_HEADER, ServiceReason.INVALID_PLATFORM_KEY)
    if platform_key is not None and not _key_matches(platform_key, settings.platform_key):
        raise Unauthenticated(ServiceReason.INVALID_PLATFORM_KEY,
                              "the platform key is not valid")
    return Principal(seat=seat, audit=audit_key is not None,
                     platform=platform_key is not None or CERTIFIED_PLATFORM.get(),
                     spectator=spectator)


# -- authorization ---------------------------------------------------------------------------


def _require_credentials(principal: Principal, what: str) -> None:
    if principal.is_anonymous:
        raise Unauthenticated(ServiceReason.MISSING_CREDENTIALS, f"{what} needs a credential")


def require_seat(principal: Principal, table_id: str, seat: int | None = None) -> int:
    """The seat the caller acts for at `table_id`; PermissionDenied for another table or seat.

    `seat` is the seat a request names, if any; without one, the token's seat is used.
    """
    _require_credentials(principal, "acting for a seat")
    claim = principal.seat
    if claim is None:
        raise PermissionDenied(ServiceReason.SEAT_TOKEN_REQUIRED,
                               "acting for a seat needs that seat's token; the platform and"
                               " audit keys act for no seat")
    if claim.table_id != table_id:
        raise PermissionDenied(ServiceReason.WRONG_TABLE,
                               "the seat token belongs to another table")
    if seat is not None and seat != claim.seat:
        raise PermissionDenied(ServiceReason.WRONG_SEAT,
                               f"the seat token is for seat {claim.seat}, not seat {seat}")
    return claim.seat


def require_current_holder(principal: Principal, player_at_seat: str | None) -> None:
    """PermissionDenied unless the token's player still holds its seat (tokens outlive leaving)."""
    claim = principal.seat
    if claim is None or claim.player_id != player_at_seat:
        raise PermissionDenied(ServiceReason.WRONG_SEAT,
                               "the seat token's player no longer holds that seat")


def require_audit(principal: Principal) -> None:
    """PermissionDenied unless the caller holds the audit role."""
    _require_credentials(principal, "this call")
    if not principal.audit:
        raise PermissionDenied(ServiceReason.AUDIT_REQUIRED, "only the audit role may do this")


def require_platform(principal: Principal) -> None:
    """PermissionDenied unless the caller holds the platform credential."""
    _require_credentials(principal, "this call")
    if not principal.platform:
        raise PermissionDenied(ServiceReason.PLATFORM_REQUIRED,
                               "only the platform credential may do this")


def require_deck_dealer(principal: Principal, preset_deck: bool) -> None:
    """PermissionDenied unless the platform deals a preset deck: a seat that chose the deck
    would know every hand (even at a table created with `allow_preset_deck`)."""
    if preset_deck:
        _require_credentials(principal, "dealing a preset deck")
        if not principal.platform:
            raise PermissionDenied(ServiceReason.PLATFORM_REQUIRED,
                                   "only the platform credential may deal a preset deck")


def require_table_access(principal: Principal, table_id: str) -> None:
    """Any credential for the table: its seat token, the audit role or the platform."""
    _require_credentials(principal, "this call")
    if principal.audit or principal.platform:
        return
    if principal.spectator is not None:
        if principal.spectator.table_id != table_id:
            raise PermissionDenied(ServiceReason.WRONG_TABLE,
                                   "the spectator token belongs to another table")
        return
    if principal.seat is None or principal.seat.table_id != table_id:
        raise PermissionDenied(ServiceReason.WRONG_TABLE,
                               "the seat token belongs to another table")


__all__ = [
    "ANONYMOUS",
    "AUDIT_KEY_HEADER",
    "AUTHORIZATION_HEADER",
    "CERTIFIED_PLATFORM",
    "DEFAULT_TOKEN_TTL_SECONDS",
    "PLATFORM_KEY_HEADER",
    "AuthSettings",
    "Principal",
    "Role",
    "SeatClaim",
    "SpectatorClaim",
    "authenticate",
    "issue_seat_token",
    "issue_spectator_token",
    "require_audit",
    "require_current_holder",
    "require_deck_dealer",
    "require_platform",
    "require_seat",
    "require_table_access",
    "verify_seat_token",
    "verify_spectator_token",
]
