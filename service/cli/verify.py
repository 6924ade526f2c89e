"""`fiftyk verify FILE`, `fiftyk export HAND_ID` and `fiftyk keygen` (docs/fairness.md).

`verify` checks a hand's evidence offline, one line per check, and exits 1 at the first
failure (2 when the file cannot be read, 3 when every check passed but no trusted key was
given: the file is then unverified, since anyone can sign a file with a key of their own).
`export` fetches a stored hand's signed evidence
with the audit key. `keygen` writes a new Ed25519 signing key pair. None needs the server
extra: the rules engine the checks use is pure domain code, on every install.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import grpc
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fiftyk_referee.service.cli.replay import table_hint
from fiftyk_referee.service.cli.server_address import add_server_argument, describe_rpc_error
from fiftyk_referee.service.errors import ServiceReason
from fiftyk_referee.service.grpc.client import RefereeClient, add_tls_arguments, tls_from_args
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.ops import config_keys as keys
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY
from fiftyk_referee.service.trust.signing import (
    SignatureError,
    Signer,
    key_id,
    load_public_key,
    private_pem,
    public_pem,
)
from fiftyk_referee.service.trust.verifier import verify

EXIT_FAILED = 1
EXIT_UNREADABLE = 2
EXIT_UNVERIFIED = 3
CALL_TIMEOUT_SECONDS = 60.0
PRIVATE_FILE_MODE = 0o600


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `verify`, `export` and `keygen`."""
    check = sub.add_parser(
        "verify", help="check a hand's signed evidence offline (docs/fairness.md)",
        description="Check a fiftyk-evidence/1 file: signature, hash chain, deal commitment,"
        " the deck recomputed from the revealed seed, a seat-entropy deal's draw (every"
        " revealed contribution opens its commitment, withheld seats, no re-draw, the"
        " signatures of seats with keys of their own), ledger inclusion and checkpoint, the"
        " witnesses' cosignatures (one from each --witness-key), each --receipt against the"
        " deal, and the re-ruling of the whole hand. One line per check; exit 1 at the"
        " first failure.",
    )
    check.add_argument("file", help="evidence JSON (from `fiftyk export`), or - for stdin")
    check.add_argument("--key", action="append", metavar="FILE",
                       help="the referee's public key (PEM or hex; repeat for rotated keys);"
                            f" default: the file ${keys.REFEREE_PUBLIC_KEY_FILE} names. Without"
                            " a key the file is UNVERIFIED (exit 3): its checks show it is"
                            " intact, not that the referee signed it")
    check.add_argument("--since", metavar="FILE",
                       help="an earlier evidence file: check that its ledger checkpoint is a"
                            " prefix of this one's (nothing was rolled back or rewritten)")
    check.add_argument("--witness-key", action="append", metavar="FILE",
                       help="a witness's public key (PEM or hex; repeat for several): require"
                            " a valid cosignature by it of a ledger tree that holds the hand"
                            " (`fiftyk witness`); without one the check fails")
    check.add_argument("--receipt", action="append", metavar="FILE",
                       help="a seat-entropy receipt the referee signed (ContributeEntropy's"
                            " receipt_json; repeat for several): check that the deal holds"
                            " the commitment or bytes it accepted, from the draw it accepted"
                            " them for")
    check.set_defaults(handler=run_verify)

    export = sub.add_parser(
        "export", help="fetch a stored hand's signed evidence (audit key)",
        description="Write a stored hand's fiftyk-evidence/1 JSON (ExportTranscript) to"
        " standard output or a file.",
    )
    export.add_argument("hand_id")
    add_server_argument(export)
    export.add_argument("--audit-key", help=f"audit key (default: ${keys.AUDIT_KEY}, else the"
                                            " development key)")
    export.add_argument("--since-size", type=int, metavar="N",
                        help="include a consistency proof from an earlier checkpoint of N"
                             " hands")
    export.add_argument("--out", "-o", metavar="FILE", help="write here instead of stdout")
    add_tls_arguments(export)
    export.set_defaults(handler=run_export)

    keygen = sub.add_parser(
        "keygen", help="write a new Ed25519 signing key pair for the referee",
        description="Write PREFIX.key (the private key, PEM, mode 600: give it to the referee"
        " as FIFTYK_SIGNING_KEY_FILE) and PREFIX.pub (the public key to publish).",
    )
    keygen.add_argument("prefix", help="path prefix of the two files")
    keygen.set_defaults(handler=run_keygen)


def _read_json(path: str) -> Any:
    if path == "-":
        return json.load(sys.stdin)
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def run_verify(args: argparse.Namespace) -> int:
    """Print one line per check; 0 when none failed."""
    try:
        evidence = _read_json(args.file)
        since = _read_json(args.since) if args.since else None
        receipts = [_read_json(path) for path in args.receipt or ()]
        trusted = _trusted_keys(args.key)
        witnesses = [load_public_key(Path(p).read_text(encoding="utf-8"))
                     for p in args.witness_key or ()]
    except OSError as error:
        print(f"fiftyk verify: cannot read {error.filename}: {error.strerror}",
              file=sys.stderr)
        return EXIT_UNREADABLE
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
        print(f"fiftyk verify: not a JSON evidence file: {error}", file=sys.stderr)
        return EXIT_UNREADABLE
    except SignatureError as error:
        print(f"fiftyk verify: --key or --witness-key: {error}", file=sys.stderr)
        return EXIT_UNREADABLE
    if not isinstance(evidence, dict) or (since is not None and not isinstance(since, dict)) \
            or not all(isinstance(receipt, dict) for receipt in receipts):
        print("fiftyk verify: the evidence is not a JSON object", file=sys.stderr)
        return EXIT_UNREADABLE
    report = verify(evidence, trusted=trusted, since=since, receipts=receipts,
                    witnesses=witnesses)
    for line in report.lines:
        print(line)
    failure = report.failure
    if failure is not None:
        print(f"fiftyk verify: {failure.check} FAILED: {failure.detail}", file=sys.stderr)
        return EXIT_FAILED
    if not report.verified:
        print("fiftyk verify: UNVERIFIED: every check passed, but no trusted key was given, so"
              " nothing shows that the referee signed this file (anyone can sign a file with a"
              f" key of their own): pass --key FILE or set ${keys.REFEREE_PUBLIC_KEY_FILE} to"
              " the referee's published public key", file=sys.stderr)
        return EXIT_UNVERIFIED
    print("verified: every check passed or was skipped as shown")
    return 0


def _trusted_keys(given: list[str] | None) -> list[Ed25519PublicKey] | None:
    """The keys named by --key, else by the pinned key file's variable, else none."""
    paths = given or [p for p in os.environ.get(keys.REFEREE_PUBLIC_KEY_FILE, "")
                      .split(os.pathsep) if p]
    return [load_public_key(Path(p).read_text(encoding="utf-8")) for p in paths] or None


def run_export(args: argparse.Namespace) -> int:
    """Write the evidence; a message and exit 1 when the referee refuses."""
    audit_key = args.audit_key or os.environ.get(keys.AUDIT_KEY) or DEV_AUDIT_KEY
    client = RefereeClient(args.server, audit_key=audit_key, timeout=CALL_TIMEOUT_SECONDS,
                           tls=tls_from_args(args))
    try:
        evidence = client.export_evidence(args.hand_id, args.since_size)
    except grpc.RpcError as error:
        print(f"fiftyk export: {describe_rpc_error(args.server, error)}", file=sys.stderr)
        hint = table_hint(client, args.hand_id) if (
            error_reason(error).reason == ServiceReason.HAND_NOT_FOUND) else None
        if hint is not None:
            print(f"fiftyk export: {hint}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        client.close()
    text = json.dumps(evidence, ensure_ascii=False, indent=1) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def run_keygen(args: argparse.Namespace) -> int:
    """Write PREFIX.key and PREFIX.pub; print the key id."""
    signer = Signer.from_text(os.urandom(32).hex())
    private, public = Path(f"{args.prefix}.key"), Path(f"{args.prefix}.pub")
    if private.exists():
        print(f"fiftyk keygen: {private} exists; not overwriting a key", file=sys.stderr)
        return EXIT_FAILED
    descriptor = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(private_pem(signer.key))
    public.write_text(public_pem(signer.public), encoding="utf-8")
    print(f"{key_id(signer.public)}: private key {private}, public key {public}")
    return 0


__all__ = ["add_parser", "run_export", "run_keygen", "run_verify"]
