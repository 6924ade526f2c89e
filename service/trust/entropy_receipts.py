"""Receipts for seat entropy: the referee's signed word that it accepted a seat's
commitment or bytes in time, and their check against a hand's evidence.

A receipt (`fiftyk-entropy-receipt/1`, docs/fairness.md#receipts) names the table, the hand
number, the draw (by the commitment to the referee's seed), the seat, what was accepted
(`commitment`, `reveal`, or `contribution` at a table whose seats send their bytes
directly), the SHA-256 it was accepted with, when that window closed and the table event
that recorded it. The referee signs it like evidence (`service/trust/signing.py`). A seat
keeps it: if the hand was then dealt from another draw, or without the seat's commitment
or bytes, the receipt and the hand's evidence together prove it — `fiftyk verify
--receipt` says so.

Only the standard library and the pure fairness modules: it runs on the client-only
install.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from fiftyk_referee.domain.deal import DRAW_ALGORITHM

RECEIPT_FORMAT = "fiftyk-entropy-receipt/1"
COMMITMENT, REVEAL, CONTRIBUTION = "commitment", "reveal", "contribution"
# Seat keys (docs/fairness.md#seat-keys): what a seat signs, and how much of it.
STATEMENT_TAG = "fiftyk-entropy/1"
SIGNED_COMMITMENT, SIGNED_BYTES = "commitment", "bytes"
SIGNATURE_BYTES = 64


def entropy_statement(table_id: str, hand_number: int, draw_commitment: str, kind: str,
                      digest: str) -> bytes:
    """What a seat with a key of its own signs: its commitment (`kind` "commitment",
    `digest` the commitment) or its bytes ("bytes", their SHA-256), for one draw."""
    return "\n".join([STATEMENT_TAG, table_id, str(hand_number), draw_commitment, kind,
                      digest]).encode()


def sign_entropy(key: Ed25519PrivateKey, table_id: str, hand_number: int,
                 draw_commitment: str, kind: str, digest: str) -> bytes:
    """A seat's signature of its commitment or bytes (the client's side)."""
    return key.sign(entropy_statement(table_id, hand_number, draw_commitment, kind, digest))


def seat_signed(public_key: str, signature: str, statement: bytes) -> bool:
    """Whether `signature` (hex) is the seat key's (hex) over `statement`."""
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(public_key)).verify(
            bytes.fromhex(signature), statement)
    except (InvalidSignature, ValueError):
        return False
    return True


def entropy_receipt_body(table_id: str, draw: Mapping[str, Any], *, seat: int,
                         entropy: bytes, commitment: bytes | None,
                         table_version: int) -> dict[str, Any]:
    """The unsigned receipt of a commitment (`commitment` given) or of bytes accepted for
    `draw` (the table's draw as it stood when they were accepted)."""
    if commitment is not None:
        kind, digest, closes = COMMITMENT, commitment.hex(), draw.get("commit_deadline")
    else:
        kind = REVEAL if draw.get("commit_deadline") else CONTRIBUTION
        digest, closes = hashlib.sha256(entropy).hexdigest(), draw["deadline"]
    return {
        "format": RECEIPT_FORMAT, "table_id": table_id, "hand_number": draw["number"],
        "draw_commitment": draw["commitment"], "seat": seat, "kind": kind, "sha256": digest,
        "window_closes": closes, "table_version": table_version,
    }


class ReceiptMismatch(Exception):
    """The receipt and the evidence disagree: the referee ignored what it accepted."""


def check_receipt(receipt: Mapping[str, Any], evidence: Mapping[str, Any]) -> str:
    """Check a (signature-checked) receipt against a hand's evidence: what it shows, or
    `ReceiptMismatch` with what the referee did to the accepted commitment or bytes. A
    `ValueError` when the receipt is not one."""
    if receipt.get("format") != RECEIPT_FORMAT:
        raise ValueError(f"not a {RECEIPT_FORMAT} document")
    seat, kind, digest = receipt.get("seat"), receipt.get("kind"), receipt.get("sha256")
    if not isinstance(seat, int) or kind not in (COMMITMENT, REVEAL, CONTRIBUTION) \
            or not isinstance(digest, str):
        raise ValueError("the receipt's seat, kind or sha256 is missing")
    where = (f"table {receipt.get('table_id')} hand {receipt.get('hand_number')}")
    if (receipt.get("table_id"), receipt.get("hand_number")) != (
            evidence.get("table_id"), evidence.get("hand_number")):
        raise ValueError(f"the receipt is for {where}, the evidence is of table"
                         f" {evidence.get('table_id')} hand {evidence.get('hand_number')}")
    deal = evidence.get("deal")
    if not isinstance(deal, Mapping) or deal.get("algorithm") != DRAW_ALGORITHM:
        raise ReceiptMismatch(f"the referee accepted seat {seat}'s {kind} for {where}, then"
                              " dealt the hand without seat entropy")
    accepted_draw = receipt.get("draw_commitment")
    if accepted_draw != deal.get("commitment"):
        stated = deal.get("draw")
        earlier = stated.get("abandoned") if isinstance(stated, Mapping) else None
        abandoned = [d.get("commitment") for d in earlier or () if isinstance(d, Mapping)]
        how = ("the evidence records that draw as abandoned" if accepted_draw in abandoned
               else "the evidence does not mention that draw: a quiet re-draw")
        raise ReceiptMismatch(f"re-draw: the referee accepted seat {seat}'s {kind} for the"
                              f" draw committed to {accepted_draw} and dealt {where} from the"
                              f" draw committed to {deal.get('commitment')} ({how})")
    record = deal.get("draw")
    if kind == COMMITMENT:
        commitments = record.get("commitments") if isinstance(record, Mapping) else None
        held = commitments[seat] if isinstance(commitments, list) \
            and 0 <= seat < len(commitments) else None
        if held != digest:
            raise ReceiptMismatch(f"the deal ignored seat {seat}'s commitment {digest}, which"
                                  f" the referee accepted before {receipt.get('window_closes')}"
                                  f" (the deal's record holds {held or 'none'})")
        withheld = record.get("withheld") or () if isinstance(record, Mapping) else ()
        if seat in withheld:
            return (f"seat {seat}'s commitment is in the deal; the seat did not reveal in"
                    " time, so its contribution counted as empty (withheld)")
        return f"seat {seat}'s commitment {digest[:16]}… is in the deal of {where}"
    contributions = deal.get("contributions")
    if not isinstance(contributions, list):
        return (f"the draw is the one seat {seat} contributed to; its bytes are revealed when"
                " the hand ends")
    sent = contributions[seat] if 0 <= seat < len(contributions) else ""
    if not sent or hashlib.sha256(bytes.fromhex(str(sent))).hexdigest() != digest:
        what = "as empty" if not sent else "as other bytes"
        raise ReceiptMismatch(f"the deal counted seat {seat}'s contribution {what} although the"
                              f" referee accepted its bytes (SHA-256 {digest}) before"
                              f" {receipt.get('window_closes')}")
    return f"seat {seat}'s bytes (SHA-256 {digest[:16]}…) are in the deal of {where}"


__all__ = ["COMMITMENT", "CONTRIBUTION", "RECEIPT_FORMAT", "REVEAL", "SIGNATURE_BYTES",
           "SIGNED_BYTES", "SIGNED_COMMITMENT", "ReceiptMismatch", "check_receipt",
           "entropy_receipt_body", "entropy_statement", "seat_signed", "sign_entropy"]
