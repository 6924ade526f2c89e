"""Witnesses: other parties who cosign the referee's ledger checkpoints (docs/fairness.md).

A witness (`fiftyk witness`, run by someone other than the referee's operator) fetches the
referee's latest signed checkpoint, checks that it extends the last one it cosigned, and
signs a **cosignature** with a key of its own::

    {"format": "fiftyk-cosignature/1", "referee_key_id": ID, "size": N, "root": HEX,
     "time": ISO, "signature": {...}}

The signed bytes are those of every referee signature (`signing.py`): the canonical JSON of
the object without its `signature` member — keys sorted, no spaces, UTF-8 — e.g.
`{"format":"fiftyk-cosignature/1","referee_key_id":"ed25519:…","root":"…","size":3,
"time":"2026-12-02T10:00:00+00:00"}`, signed with Ed25519; the signature names the
witness's key (`key_id`, `public_key`). A cosignature covers a tree (`size`, `root`), not
the referee's signature or time: every later checkpoint that extends the tree (a
consistency proof shows it) and every hand among its first `size` leaves is covered.

The referee accepts cosignatures only from the keys its operator lists
(`FIFTYK_REFEREE_WITNESS_KEYS`: a file of `NAME PUBLIC_KEY` lines, the key as 64 hex digits)
and keeps them in its store, one stream per witness key (`WitnessCosignatures`), at most one
per witness per size and only ever larger sizes: the latest covers every hand the earlier
ones did.

Only the standard library and `cryptography`: the offline verifier checks cosignatures with
it on the client-only install.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import NAMESPACE_URL, UUID, uuid5

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fiftyk_referee.domain.aggregate import Aggregate, event
from fiftyk_referee.service.trust import signing
from fiftyk_referee.service.trust.signing import SignatureError, key_id, public_hex

COSIGNATURE_FORMAT = "fiftyk-cosignature/1"
COSIGNED_FIELDS = ("format", "referee_key_id", "root", "size", "time")
MAX_COSIGNATURE_CHARS = 4_096
MAX_WITNESSES = 64
MAX_TIME_CHARS = 64
WITNESS_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
ROOT_HEX = re.compile(r"[0-9a-f]{64}")


class CosignatureError(ValueError):
    """A cosignature that is malformed, or whose signature does not verify; says which."""


class UnknownWitness(ValueError):
    """A cosignature signed by a key the referee's operator did not list."""


@dataclass(frozen=True)
class Witness:
    """A witness the operator listed: its name and public key."""

    name: str
    key: Ed25519PublicKey

    @property
    def key_id(self) -> str:
        """The key's id (`ed25519:` and 16 hex digits)."""
        return key_id(self.key)


@dataclass(frozen=True)
class WitnessKeys:
    """The witnesses a referee accepts cosignatures from, by key id."""

    witnesses: tuple[Witness, ...] = ()

    def __iter__(self) -> Iterator[Witness]:
        return iter(self.witnesses)

    def __len__(self) -> int:
        return len(self.witnesses)

    def by_key_id(self, wanted: str) -> Witness | None:
        """The witness holding that key, if listed."""
        return next((w for w in self.witnesses if w.key_id == wanted), None)

    @classmethod
    def parse(cls, text: str) -> WitnessKeys:
        """`NAME PUBLIC_KEY_HEX` lines; blank lines and `#` comments are skipped. ValueError
        names the line that is not one (a bad name or key, a name or key listed twice)."""
        found: list[Witness] = []
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2 or not WITNESS_NAME.fullmatch(parts[0]):
                raise ValueError(f"line {number}: not `NAME PUBLIC_KEY` (a name of letters,"
                                 " digits, . _ -, up to 64 characters, then the key as 64 hex"
                                 " digits)")
            try:
                key = signing.load_public_key(parts[1])
            except SignatureError as error:
                raise ValueError(f"line {number}: {error}") from None
            witness = Witness(parts[0], key)
            if any(w.name == witness.name or w.key_id == witness.key_id for w in found):
                raise ValueError(f"line {number}: witness {witness.name} ({witness.key_id})"
                                 " is listed twice")
            found.append(witness)
        if len(found) > MAX_WITNESSES:
            raise ValueError(f"{len(found)} witnesses; at most {MAX_WITNESSES}")
        return cls(tuple(found))


def cosignature_body(checkpoint: Mapping[str, Any], time: datetime) -> dict[str, Any]:
    """What a witness signs for a referee's checkpoint (without the signature)."""
    referee = checkpoint.get(signing.SIGNATURE)
    return {"format": COSIGNATURE_FORMAT,
            "referee_key_id": str(referee.get("key_id")) if isinstance(referee, Mapping) else "",
            "size": int(checkpoint["size"]), "root": str(checkpoint["root"]),
            "time": time.isoformat()}


def check_cosignature(document: Any, trusted: list[Ed25519PublicKey] | None = None) -> str:
    """Check a cosignature's form and signature; the signing key's id. With `trusted` keys
    it must be signed by one of them (UnknownWitness otherwise)."""
    if not isinstance(document, Mapping):
        raise CosignatureError("a cosignature is a JSON object")
    if document.get("format") != COSIGNATURE_FORMAT:
        raise CosignatureError(f'the cosignature\'s format is not "{COSIGNATURE_FORMAT}"')
    if set(document) != {*COSIGNED_FIELDS, signing.SIGNATURE}:
        raise CosignatureError("a cosignature holds exactly " + ", ".join(
            (*COSIGNED_FIELDS, signing.SIGNATURE)))
    size = document.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise CosignatureError("the cosignature's size is not a positive integer")
    if not isinstance(document.get("root"), str) or not ROOT_HEX.fullmatch(document["root"]):
        raise CosignatureError("the cosignature's root is not 64 lower-case hex digits")
    for name in ("referee_key_id", "time"):
        if not isinstance(document.get(name), str) or len(document[name]) > MAX_TIME_CHARS:
            raise CosignatureError(f"the cosignature's {name} is not a short string")
    signature = document.get(signing.SIGNATURE)
    named = signature.get("key_id") if isinstance(signature, Mapping) else None
    if trusted is not None and named not in {key_id(k) for k in trusted}:
        raise UnknownWitness(f"the cosignature is signed by {named}, which is not a"
                             " witness key this referee accepts")
    try:
        return signing.verify(dict(document), trusted)
    except SignatureError as error:
        raise CosignatureError(f"the cosignature's signature: {error}") from None


def witness_stream(witness_key_id: str) -> UUID:
    """The stream of one witness key's cosignatures."""
    return uuid5(NAMESPACE_URL, f"https://fiftyk-referee/witness-cosignatures/{witness_key_id}")


class WitnessCosignatures(Aggregate):
    """The cosignatures of one witness key the referee accepted, stored and chained like
    every other stream; each is of a larger tree than the one before."""

    @staticmethod
    def create_id(key_id: str) -> UUID:
        """One stream per witness key."""
        return witness_stream(key_id)

    @event("Opened")
    def __init__(self, key_id: str) -> None:
        self.key_id = key_id
        self.latest: dict[str, Any] | None = None

    @event("Cosigned")
    def record(self, cosignature: dict[str, Any]) -> None:
        """Keep a cosignature of a larger tree than the latest kept."""
        self.latest = dict(cosignature)


def public_key_line(name: str, key: Ed25519PublicKey) -> str:
    """A witness's line for the referee's `FIFTYK_REFEREE_WITNESS_KEYS` file."""
    return f"{name} {public_hex(key)}"


__all__ = ["COSIGNATURE_FORMAT", "COSIGNED_FIELDS", "MAX_COSIGNATURE_CHARS", "MAX_WITNESSES",
           "CosignatureError", "UnknownWitness", "Witness", "WitnessCosignatures",
           "WitnessKeys", "check_cosignature", "cosignature_body", "public_key_line",
           "witness_stream"]
