"""Seat tokens, role keys and the permission checks of the gRPC edge."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass

import pytest

from fiftyk_referee.service.errors import PermissionDenied, ServiceReason, Unauthenticated
from fiftyk_referee.service.grpc.auth import (
    ANONYMOUS,
    AUDIT_KEY_HEADER,
    AUTHORIZATION_HEADER,
    CLOCK_SKEW_SECONDS,
    MAX_TOKEN_LENGTH,
    PLATFORM_KEY_HEADER,
    Principal,
    Role,
    authenticate,
    issue_seat_token,
    require_audit,
    require_current_holder,
    require_deck_dealer,
    require_platform,
    require_seat,
    require_table_access,
    verify_seat_token,
)

SECRET = "a-token-secret-of-reasonable-length"
NOW = 1_800_000_000.0
TTL = 3600
TABLE = "6f1c2a9e-0000-4000-8000-000000000001"
OTHER_TABLE = "6f1c2a9e-0000-4000-8000-000000000002"


@dataclass(frozen=True)
class Settings:
    token_secret: str = SECRET
    audit_key: str = "the-audit-key"
    platform_key: str = "the-platform-key"


SETTINGS = Settings()


def token(seat: int = 2, *, table: str = TABLE, player: str = "alice", now: float = NOW,
          secret: str = SECRET) -> str:
    return issue_seat_token(secret, table, seat, player, ttl_seconds=TTL, now=now)


def bearer(value: str) -> list[tuple[str, str]]:
    return [(AUTHORIZATION_HEADER, f"Bearer {value}")]


def reason_of(raised: pytest.ExceptionInfo[Unauthenticated] |
              pytest.ExceptionInfo[PermissionDenied]) -> str:
    return raised.value.reason


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# -- tokens ----------------------------------------------------------------------------------


def test_a_token_round_trips_to_the_claim_it_was_issued_for() -> None:
    claim = verify_seat_token(SECRET, token(), now=NOW + 10)
    assert (claim.table_id, claim.seat, claim.player_id) == (TABLE, 2, "alice")
    assert claim.issued_at == int(NOW)
    assert claim.expires_at == int(NOW) + TTL
    assert claim.expires.timestamp() == NOW + TTL


def test_a_token_is_compact_base64url_text() -> None:
    text = token()
    assert re.fullmatch(r"fk1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", text)
    assert len(text) < 300


def test_a_token_signed_with_another_secret_is_rejected() -> None:
    with pytest.raises(Unauthenticated) as raised:
        verify_seat_token(SECRET, token(secret="some-other-secret"), now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_TOKEN


def test_a_token_with_a_rewritten_payload_is_rejected_as_forged() -> None:
    version, _, signature = token(seat=2).split(".")
    forged_payload = {"tid": TABLE, "seat": 0, "pid": "alice", "iat": int(NOW),
                      "exp": int(NOW) + TTL}
    body = _b64(json.dumps(forged_payload, separators=(",", ":"), sort_keys=True).encode())
    with pytest.raises(Unauthenticated) as raised:
        verify_seat_token(SECRET, f"{version}.{body}.{signature}", now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_TOKEN
    assert "signature" in raised.value.message


def test_a_token_with_a_flipped_signature_byte_is_rejected() -> None:
    version, body, signature = token().split(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)))
    raw[0] ^= 1
    with pytest.raises(Unauthenticated) as raised:
        verify_seat_token(SECRET, f"{version}.{body}.{_b64(bytes(raw))}", now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_TOKEN


@pytest.mark.parametrize("bad", [
    "", "garbage", "fk1.abc", "fk2.abc.def", "fk1.abc.def.ghi", "fk1..", "fk1.a b.c",
    "fk1.abc.d=ef", "fk1.☃.abc", "x" * (MAX_TOKEN_LENGTH + 1),
])
def test_malformed_tokens_are_rejected_as_invalid(bad: str) -> None:
    with pytest.raises(Unauthenticated) as raised:
        verify_seat_token(SECRET, bad, now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_TOKEN


def test_a_validly_signed_token_with_a_malformed_payload_is_rejected() -> None:
    from fiftyk_referee.service.grpc.auth import (
        _mac,  # the signing primitive, to sign a bad payload
    )

    body = _b64(json.dumps({"tid": TABLE, "seat": "two", "pid": "alice", "iat": 1,
                            "exp": 2 ** 40}).encode())
    signed = f"fk1.{body}"
    with pytest.raises(Unauthenticated) as raised:
        verify_seat_token(SECRET, f"{signed}.{_b64(_mac(SECRET, signed))}", now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_TOKEN
    assert "payload" in raised.value.message


def test_an_expired_token_is_rejected_as_expired() -> None:
    with pytest.raises(Unauthenticated) as raised:
        verify_seat_token(SECRET, token(), now=NOW + TTL)
    assert reason_of(raised) == ServiceReason.TOKEN_EXPIRED


def test_a_token_is_accepted_until_the_second_before_expiry() -> None:
    assert verify_seat_token(SECRET, token(), now=NOW + TTL - 1).seat == 2


def test_a_token_issued_in_the_future_beyond_clock_skew_is_rejected() -> None:
    future = token(now=NOW + CLOCK_SKEW_SECONDS + 5)
    with pytest.raises(Unauthenticated) as raised:
        verify_seat_token(SECRET, future, now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_TOKEN
    assert verify_seat_token(SECRET, token(now=NOW + CLOCK_SKEW_SECONDS), now=NOW).seat == 2


@pytest.mark.parametrize(("table", "seat", "player"), [
    ("", 0, "alice"), (TABLE, -1, "alice"), (TABLE, 0, ""), (TABLE, 0, "p" * 129),
])
def test_issuing_refuses_malformed_claims(table: str, seat: int, player: str) -> None:
    with pytest.raises(ValueError):
        issue_seat_token(SECRET, table, seat, player)


def test_issuing_refuses_an_empty_secret() -> None:
    with pytest.raises(ValueError):
        issue_seat_token("", TABLE, 0, "alice")


# -- authenticate ----------------------------------------------------------------------------


def test_no_credentials_give_the_anonymous_principal() -> None:
    principal = authenticate([("user-agent", "grpc-python")], SETTINGS, now=NOW)
    assert principal == ANONYMOUS
    assert principal.is_anonymous
    assert principal.label == "anonymous"


def test_a_bearer_seat_token_gives_a_player() -> None:
    principal = authenticate(bearer(token()), SETTINGS, now=NOW)
    assert principal.roles == {Role.PLAYER}
    assert principal.seat is not None and principal.seat.seat == 2


def test_the_bearer_scheme_is_case_insensitive_and_bytes_values_are_read() -> None:
    metadata: list[tuple[str, str | bytes]] = [("Authorization", f"bearer {token()}".encode())]
    assert authenticate(metadata, SETTINGS, now=NOW).roles == {Role.PLAYER}


@pytest.mark.parametrize("header", ["Basic abc", "Bearer", "Bearer   ", token()])
def test_an_authorization_header_without_a_bearer_token_is_rejected(header: str) -> None:
    with pytest.raises(Unauthenticated) as raised:
        authenticate([(AUTHORIZATION_HEADER, header)], SETTINGS, now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_TOKEN


def test_an_expired_bearer_token_is_unauthenticated() -> None:
    with pytest.raises(Unauthenticated) as raised:
        authenticate(bearer(token()), SETTINGS, now=NOW + TTL + 1)
    assert reason_of(raised) == ServiceReason.TOKEN_EXPIRED


def test_two_authorization_headers_are_rejected() -> None:
    metadata = bearer(token(seat=1)) + bearer(token(seat=2))
    with pytest.raises(Unauthenticated) as raised:
        authenticate(metadata, SETTINGS, now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_TOKEN


def test_the_audit_key_gives_the_audit_role() -> None:
    principal = authenticate([(AUDIT_KEY_HEADER, "the-audit-key")], SETTINGS, now=NOW)
    assert principal.roles == {Role.AUDIT}


def test_the_platform_key_gives_the_platform_role() -> None:
    principal = authenticate([(PLATFORM_KEY_HEADER, "the-platform-key")], SETTINGS, now=NOW)
    assert principal.roles == {Role.PLATFORM}


def test_a_wrong_audit_key_is_unauthenticated() -> None:
    with pytest.raises(Unauthenticated) as raised:
        authenticate([(AUDIT_KEY_HEADER, "the-platform-key")], SETTINGS, now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_AUDIT_KEY


def test_a_wrong_platform_key_is_unauthenticated() -> None:
    with pytest.raises(Unauthenticated) as raised:
        authenticate([(PLATFORM_KEY_HEADER, "the-platform-key!")], SETTINGS, now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_PLATFORM_KEY


def test_an_empty_configured_key_disables_its_role() -> None:
    disabled = Settings(audit_key="")
    for presented in ("", "anything"):
        with pytest.raises(Unauthenticated) as raised:
            authenticate([(AUDIT_KEY_HEADER, presented)], disabled, now=NOW)
        assert reason_of(raised) == ServiceReason.INVALID_AUDIT_KEY


def test_every_presented_credential_must_be_valid() -> None:
    metadata = [(PLATFORM_KEY_HEADER, "the-platform-key"), (AUDIT_KEY_HEADER, "wrong")]
    with pytest.raises(Unauthenticated) as raised:
        authenticate(metadata, SETTINGS, now=NOW)
    assert reason_of(raised) == ServiceReason.INVALID_AUDIT_KEY


def test_several_valid_credentials_combine_their_roles() -> None:
    metadata = [(PLATFORM_KEY_HEADER, "the-platform-key"), (AUDIT_KEY_HEADER, "the-audit-key")]
    principal = authenticate(metadata, SETTINGS, now=NOW)
    assert principal.roles == {Role.AUDIT, Role.PLATFORM}
    assert principal.label == "audit+platform"


# -- authorization ---------------------------------------------------------------------------


def _player(seat: int = 2, table: str = TABLE) -> Principal:
    return authenticate(bearer(token(seat, table=table)), SETTINGS, now=NOW)


AUDIT = Principal(audit=True)
PLATFORM = Principal(platform=True)


def test_a_player_acts_for_the_seat_its_token_names() -> None:
    assert require_seat(_player(), TABLE) == 2
    assert require_seat(_player(), TABLE, 2) == 2


def test_a_player_may_not_act_for_another_seat() -> None:
    with pytest.raises(PermissionDenied) as raised:
        require_seat(_player(), TABLE, 1)
    assert reason_of(raised) == ServiceReason.WRONG_SEAT


def test_a_player_may_not_act_at_another_table() -> None:
    with pytest.raises(PermissionDenied) as raised:
        require_seat(_player(table=OTHER_TABLE), TABLE, 2)
    assert reason_of(raised) == ServiceReason.WRONG_TABLE


@pytest.mark.parametrize("principal", [AUDIT, PLATFORM])
def test_roles_without_a_seat_token_may_not_act_for_a_seat(principal: Principal) -> None:
    with pytest.raises(PermissionDenied) as raised:
        require_seat(principal, TABLE, 0)
    assert reason_of(raised) == ServiceReason.SEAT_TOKEN_REQUIRED


def test_anonymous_callers_are_unauthenticated_not_denied() -> None:
    checks = [lambda: require_seat(ANONYMOUS, TABLE), lambda: require_audit(ANONYMOUS),
              lambda: require_platform(ANONYMOUS),
              lambda: require_table_access(ANONYMOUS, TABLE)]
    for check in checks:
        with pytest.raises(Unauthenticated) as raised:
            check()
        assert reason_of(raised) == ServiceReason.MISSING_CREDENTIALS


@pytest.mark.parametrize("principal", [_player(), PLATFORM])
def test_only_the_audit_role_passes_require_audit(principal: Principal) -> None:
    require_audit(AUDIT)
    with pytest.raises(PermissionDenied) as raised:
        require_audit(principal)
    assert reason_of(raised) == ServiceReason.AUDIT_REQUIRED


@pytest.mark.parametrize("principal", [_player(), AUDIT])
def test_only_the_platform_passes_require_platform(principal: Principal) -> None:
    require_platform(PLATFORM)
    with pytest.raises(PermissionDenied) as raised:
        require_platform(principal)
    assert reason_of(raised) == ServiceReason.PLATFORM_REQUIRED


def test_table_access_needs_a_token_of_that_table_or_a_role() -> None:
    for principal in (_player(), AUDIT, PLATFORM):
        require_table_access(principal, TABLE)
    with pytest.raises(PermissionDenied) as raised:
        require_table_access(_player(table=OTHER_TABLE), TABLE)
    assert reason_of(raised) == ServiceReason.WRONG_TABLE


def test_a_token_of_a_player_who_left_the_seat_no_longer_acts() -> None:
    require_current_holder(_player(), "alice")
    for holder in ("bob", None):
        with pytest.raises(PermissionDenied) as raised:
            require_current_holder(_player(), holder)
        assert reason_of(raised) == ServiceReason.WRONG_SEAT


@pytest.mark.parametrize("principal", [_player(), AUDIT])
def test_only_the_platform_may_deal_a_preset_deck(principal: Principal) -> None:
    require_deck_dealer(PLATFORM, preset_deck=True)
    require_deck_dealer(principal, preset_deck=False)  # a shuffled deal is anyone's
    with pytest.raises(PermissionDenied) as raised:
        require_deck_dealer(principal, preset_deck=True)
    assert reason_of(raised) == ServiceReason.PLATFORM_REQUIRED
    with pytest.raises(Unauthenticated):
        require_deck_dealer(ANONYMOUS, preset_deck=True)
