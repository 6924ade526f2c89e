"""The referee's Ed25519 signatures over evidence, rulings and checkpoints.

What is signed is always a JSON object's canonical bytes (`canonical_json`: keys sorted, no
spaces, UTF-8) without its `signature` member; the signature is
`{"alg": "ed25519", "key_id": ID, "public_key": HEX, "value": HEX}`. `ID` is
`ed25519:` and the first 16 hex digits of the SHA-256 of the raw 32-byte public key, so a
verifier holding several published keys (one per rotation) picks the right one.

The private key comes from `FIFTYK_SIGNING_KEY` (64 hex digits: the raw 32-byte Ed25519
private key, or a PEM PKCS#8 text) or `FIFTYK_SIGNING_KEY_FILE` (a PEM file), read by
`service/ops/config.py`; the development default, accepted on loopback only like the other
development secrets, is derived from a public text. `fiftyk keygen` writes a new key pair.

This module needs only the `cryptography` package: the offline verifier uses it on the
client-only install.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

ALGORITHM = "ed25519"
SIGNATURE = "signature"
RAW_KEY_BYTES = 32
KEY_ID_HEX_DIGITS = 16
# The development key: anyone can derive it, so it proves nothing; loopback only.
DEV_SIGNING_KEY = hashlib.sha256(b"fiftyk-dev-signing-key-loopback-only").hexdigest()


class SignatureError(ValueError):
    """A key that cannot be read, or a signature that does not verify; says which."""


def canonical_json(value: Any) -> bytes:
    """The bytes a signature covers: sorted keys, no whitespace, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode()


def key_id(public: Ed25519PublicKey) -> str:
    """`ed25519:` and 16 hex digits naming a public key."""
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return f"{ALGORITHM}:{hashlib.sha256(raw).hexdigest()[:KEY_ID_HEX_DIGITS]}"


def public_hex(public: Ed25519PublicKey) -> str:
    """The raw public key as hex."""
    return public.public_bytes(serialization.Encoding.Raw,
                               serialization.PublicFormat.Raw).hex()


def load_private_key(text: str) -> Ed25519PrivateKey:
    """A private key from 64 hex digits or a PEM PKCS#8 text."""
    body = text.strip()
    if body.startswith("-----BEGIN"):
        try:
            key = serialization.load_pem_private_key(body.encode(), password=None)
        except (ValueError, TypeError) as error:
            raise SignatureError(f"the signing key is not a readable PEM key: {error}") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise SignatureError("the signing key is not an Ed25519 key")
        return key
    try:
        raw = bytes.fromhex(body)
    except ValueError:
        raise SignatureError("the signing key is neither PEM nor hex") from None
    if len(raw) != RAW_KEY_BYTES:
        raise SignatureError(f"a hex signing key is {RAW_KEY_BYTES} bytes, not {len(raw)}")
    return Ed25519PrivateKey.from_private_bytes(raw)


def load_public_key(text: str) -> Ed25519PublicKey:
    """A public key from 64 hex digits or a PEM SubjectPublicKeyInfo text."""
    body = text.strip()
    if body.startswith("-----BEGIN"):
        try:
            key = serialization.load_pem_public_key(body.encode())
        except ValueError as error:
            raise SignatureError(f"not a readable PEM public key: {error}") from None
        if not isinstance(key, Ed25519PublicKey):
            raise SignatureError("the public key is not an Ed25519 key")
        return key
    try:
        raw = bytes.fromhex(body)
    except ValueError:
        raise SignatureError("the public key is neither PEM nor hex") from None
    if len(raw) != RAW_KEY_BYTES:
        raise SignatureError(f"a hex public key is {RAW_KEY_BYTES} bytes, not {len(raw)}")
    return Ed25519PublicKey.from_public_bytes(raw)


def private_pem(key: Ed25519PrivateKey) -> str:
    """A private key as PEM PKCS#8 (unencrypted: protect the file)."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def public_pem(key: Ed25519PublicKey) -> str:
    """A public key as PEM SubjectPublicKeyInfo."""
    return key.public_bytes(serialization.Encoding.PEM,
                            serialization.PublicFormat.SubjectPublicKeyInfo).decode()


@dataclass(frozen=True)
class Signer:
    """Signs JSON objects with the referee's key."""

    key: Ed25519PrivateKey

    @classmethod
    def from_text(cls, text: str) -> Signer:
        """A signer for a key as configured (hex or PEM)."""
        return cls(load_private_key(text))

    @property
    def public(self) -> Ed25519PublicKey:
        """The public half."""
        return self.key.public_key()

    @property
    def key_id(self) -> str:
        """The key's id."""
        return key_id(self.public)

    def sign(self, document: dict[str, Any]) -> dict[str, Any]:
        """A copy of `document` with its `signature` member."""
        body = {k: v for k, v in document.items() if k != SIGNATURE}
        value = self.key.sign(canonical_json(body)).hex()
        return {**body, SIGNATURE: {"alg": ALGORITHM, "key_id": self.key_id,
                                    "public_key": public_hex(self.public), "value": value}}


def verify(document: dict[str, Any], trusted: list[Ed25519PublicKey] | None = None) -> str:
    """Check a signed document; return the key id that signed it.

    With `trusted` keys, the signing key must be one of them; without, the key the
    document names is used (which proves integrity, not who signed).
    """
    signature = document.get(SIGNATURE)
    if not isinstance(signature, dict) or signature.get("alg") != ALGORITHM:
        raise SignatureError("the document carries no ed25519 signature")
    try:
        named = load_public_key(str(signature.get("public_key", "")))
        value = bytes.fromhex(str(signature.get("value", "")))
    except ValueError:
        raise SignatureError("the signature's key or value is not hex") from None
    if key_id(named) != signature.get("key_id"):
        raise SignatureError("the signature's key id does not match its public key")
    if trusted is not None:
        by_id = {key_id(k): k for k in trusted}
        if key_id(named) not in by_id:
            raise SignatureError(f"signed by {key_id(named)}, which is not a trusted key"
                                 f" ({', '.join(sorted(by_id)) or 'none given'})")
        named = by_id[key_id(named)]
    body = {k: v for k, v in document.items() if k != SIGNATURE}
    try:
        named.verify(value, canonical_json(body))
    except InvalidSignature:
        raise SignatureError(f"the signature by {key_id(named)} does not match the"
                             " document: it was changed after signing") from None
    return key_id(named)


__all__ = [
    "DEV_SIGNING_KEY",
    "SIGNATURE",
    "SignatureError",
    "Signer",
    "canonical_json",
    "key_id",
    "load_private_key",
    "load_public_key",
    "private_pem",
    "public_hex",
    "public_pem",
    "verify",
]
