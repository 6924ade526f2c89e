"""`fiftyk witness`: cosign a referee's ledger checkpoints, and refuse a rolled-back or forked one.

A witness is run by someone other than the referee's operator (docs/fairness.md#witnesses).
Each round it fetches the referee's latest signed checkpoint (`GetCheckpoint`, with the
consistency proof from the last tree it cosigned), checks the referee's signature against
the key it was given and that the new tree extends the one it cosigned, signs a
`fiftyk-cosignature/1` (`service/trust/witness.py` states the bytes), keeps its own copy of
every checkpoint it cosigned, and gives the cosignature back (`AddCosignature`).

A checkpoint of fewer hands than the last one cosigned (rolled back), or one the last one
is not a prefix of (forked, rewritten), is refused: said on standard error with both
checkpoints, kept in `STATE/refused.json`, exit 1 under `--once`. What it cosigned is on
disk (`STATE/latest.json`, written atomically: a temporary file, fsync, rename), so a
restarted witness refuses the same referee again.

Exit status under `--once`: 0 cosigned, or nothing new; 1 refused; 2 an unusable command
line or state, a referee that does not answer, or a cosignature it did not take.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fiftyk_referee.domain.merkle import ProofError, verify_consistency
from fiftyk_referee.service.cli.server_address import describe_rpc_error
from fiftyk_referee.service.grpc.client import RefereeClient, add_tls_arguments, tls_from_args
from fiftyk_referee.service.trust import signing
from fiftyk_referee.service.trust.signing import (
    SignatureError,
    Signer,
    load_private_key,
    load_public_key,
    private_pem,
    public_pem,
)
from fiftyk_referee.service.trust.witness import cosignature_body, public_key_line

EXIT_REFUSED = 1
EXIT_UNUSABLE = 2
DEFAULT_INTERVAL_SECONDS = 30.0
MIN_INTERVAL_SECONDS = 0.1
CALL_TIMEOUT_SECONDS = 60.0
PRIVATE_FILE_MODE = 0o600
STATE_FORMAT = "fiftyk-witness-state/1"
CHECKPOINT_FORMAT = "fiftyk-checkpoint/1"
LATEST = "latest.json"
REFUSED = "refused.json"
COSIGNED = "cosigned"
LOCK = "lock"


class Refused(Exception):
    """A checkpoint this witness will not cosign; the message says why."""


class Unusable(Exception):
    """A state, key or answer the witness cannot work with; the message says which."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `witness` (and `witness keygen`)."""
    parser = sub.add_parser(
        "witness", help="cosign a referee's ledger checkpoints; refuse a rolled-back one",
        description="Fetch the referee's signed ledger checkpoint, check its signature and"
        " that it extends the last checkpoint this witness cosigned, cosign it with the"
        " witness's key, keep a copy in --state and give the cosignature to the referee."
        " A rolled-back or forked checkpoint is refused (standard error, exit 1 under"
        " --once), also after a restart. `fiftyk witness keygen PREFIX` writes a key pair."
        " docs/fairness.md#witnesses.",
    )
    parser.add_argument("--referee", metavar="HOST:PORT", help="the referee's gRPC address")
    parser.add_argument("--key", metavar="FILE",
                        help="the witness's private key (PEM or hex: `fiftyk witness keygen`)")
    parser.add_argument("--referee-key", action="append", metavar="FILE",
                        help="the referee's published public key (PEM or hex; repeat for"
                             " rotated keys): a checkpoint signed by another is refused")
    parser.add_argument("--state", metavar="DIR",
                        help="the witness's own directory: the last checkpoint cosigned, a"
                             " copy of each, the last refusal")
    parser.add_argument("--once", action="store_true",
                        help="one round, then exit: 0 cosigned or nothing new, 1 refused,"
                             " 2 unusable or not delivered")
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL_SECONDS,
                        metavar="S", help="seconds between rounds (default"
                                          f" {DEFAULT_INTERVAL_SECONDS:g})")
    add_tls_arguments(parser)
    parser.set_defaults(handler=run_witness)
    commands = parser.add_subparsers(dest="witness_command", metavar="keygen")
    keygen = commands.add_parser(
        "keygen", help="write a witness key pair",
        description="Write PREFIX.key (the witness's private key, PEM, mode 600) and PREFIX.pub"
        " (its public key), and print the line the referee's operator adds to the file"
        " FIFTYK_REFEREE_WITNESS_KEYS names.")
    keygen.add_argument("prefix", help="path prefix of the two files")
    keygen.add_argument("--name", help="the witness's name in that line (default: the"
                                       " prefix's file name)")
    keygen.set_defaults(handler=run_keygen)


def run_keygen(args: argparse.Namespace) -> int:
    """Write PREFIX.key and PREFIX.pub; print the referee operator's line."""
    private, public = Path(f"{args.prefix}.key"), Path(f"{args.prefix}.pub")
    if private.exists():
        print(f"fiftyk witness keygen: {private} exists; not overwriting a key", file=sys.stderr)
        return EXIT_REFUSED
    name = args.name or Path(args.prefix).name
    signer = Signer.from_text(os.urandom(32).hex())
    descriptor = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(private_pem(signer.key))
    public.write_text(public_pem(signer.public), encoding="utf-8")
    print(f"{signer.key_id}: private key {private}, public key {public}")
    print("for the referee's FIFTYK_REFEREE_WITNESS_KEYS file:")
    print(public_key_line(name, signer.public))
    return 0


def run_witness(args: argparse.Namespace) -> int:
    """Rounds until interrupted (one with --once)."""
    missing = [flag for flag, value in (("--referee", args.referee), ("--key", args.key),
                                        ("--referee-key", args.referee_key),
                                        ("--state", args.state)) if not value]
    if missing:
        print(f"fiftyk witness: {', '.join(missing)} required (or `fiftyk witness keygen"
              " PREFIX`)", file=sys.stderr)
        return EXIT_UNUSABLE
    if not args.interval >= MIN_INTERVAL_SECONDS:
        print(f"fiftyk witness: --interval is at least {MIN_INTERVAL_SECONDS:g}",
              file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        signer = Signer(load_private_key(Path(args.key).read_text(encoding="utf-8")))
        referee_keys = [load_public_key(Path(p).read_text(encoding="utf-8"))
                        for p in args.referee_key]
        state = WitnessState(Path(args.state))
    except OSError as error:
        print(f"fiftyk witness: cannot read {error.filename}: {error.strerror}",
              file=sys.stderr)
        return EXIT_UNUSABLE
    except SignatureError as error:
        print(f"fiftyk witness: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    client = RefereeClient(args.referee, timeout=CALL_TIMEOUT_SECONDS, tls=tls_from_args(args))
    try:
        with state.locked():
            witness = Witness(client, args.referee, signer, referee_keys, state)
            while True:
                code = witness.round()
                if args.once:
                    return code
                time.sleep(args.interval)
    except Unusable as error:
        print(f"fiftyk witness: {error}", file=sys.stderr)
        return EXIT_UNUSABLE
    except KeyboardInterrupt:
        return 0
    finally:
        client.close()


class WitnessState:
    """The witness's directory: what it cosigned last, a copy of each, the last refusal."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        (root / COSIGNED).mkdir(exist_ok=True)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the directory: two witnesses on one state would undo each other."""
        with open(self.root / LOCK, "a", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise Unusable(f"another witness holds {self.root}") from None
            yield

    def latest(self) -> dict[str, Any] | None:
        """The last checkpoint cosigned, with the cosignature (None: none yet)."""
        path = self.root / LATEST
        try:
            held = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            raise Unusable(f"{path} is unreadable ({error}): restore it from"
                           f" {self.root / COSIGNED}, never delete it") from None
        if not isinstance(held, dict) or held.get("format") != STATE_FORMAT:
            raise Unusable(f"{path} is not a {STATE_FORMAT} file")
        return held

    def keep(self, checkpoint: dict[str, Any], cosignature: dict[str, Any], *,
             delivered: bool) -> None:
        """Record a cosigned checkpoint: its own copy, then the latest (each atomically)."""
        held = {"format": STATE_FORMAT, "checkpoint": checkpoint,
                "cosignature": cosignature, "delivered": delivered}
        self.write(Path(COSIGNED) / f"{int(checkpoint['size']):012d}.json", held)
        self.write(Path(LATEST), held)

    def write(self, name: Path, document: dict[str, Any]) -> None:
        """Write a JSON file atomically: a temporary file, fsync, rename, fsync the folder."""
        path = self.root / name
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(document, handle, ensure_ascii=False, indent=1)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


class Witness:
    """One referee, one witness key, one state directory."""

    def __init__(self, client: RefereeClient, address: str, signer: Signer,
                 referee_keys: list[Ed25519PublicKey], state: WitnessState) -> None:
        self.client = client
        self.address = address
        self.signer = signer
        self.referee_keys = referee_keys
        self.state = state

    def round(self) -> int:
        """Fetch, check, cosign and deliver once; the exit status of this round."""
        held = self.state.latest()
        since = int(held["checkpoint"]["size"]) if held else None
        try:
            answer = self.client.checkpoint(since or None)
        except grpc.RpcError as error:
            print(f"fiftyk witness: {describe_rpc_error(self.address, error)}",
                  file=sys.stderr)
            return EXIT_UNUSABLE
        try:
            checkpoint = extending(json.loads(answer.checkpoint_json), held, answer,
                                   self.referee_keys)
        except Refused as refusal:
            return self.refuse(str(refusal), held, answer.checkpoint_json)
        except (ValueError, KeyError, TypeError) as error:
            return self.refuse(f"the referee's answer is not a checkpoint: {error!r}", held,
                               answer.checkpoint_json)
        size = int(checkpoint["size"])
        if held is not None and size == int(held["checkpoint"]["size"]):
            # Nothing new: give the last cosignature again (the referee keeps one per size,
            # so it changes nothing there, and it restores one the referee lost).
            return self.deliver(held["checkpoint"], held["cosignature"], again=True)
        if size == 0:
            print("fiftyk witness: the referee's ledger is empty: nothing to cosign")
            return 0
        cosignature = self.signer.sign(cosignature_body(checkpoint, datetime.now(UTC)))
        self.state.keep(checkpoint, cosignature, delivered=False)
        return self.deliver(checkpoint, cosignature)

    def refuse(self, problem: str, held: dict[str, Any] | None, offered: str) -> int:
        """Say so with both checkpoints, keep the refusal, exit 1."""
        cosigned = held["checkpoint"] if held else None
        print(f"fiftyk witness: REFUSED to cosign {self.address}: {problem}\n"
              f"  cosigned before: {json.dumps(cosigned, sort_keys=True)}\n"
              f"  offered now:     {offered}", file=sys.stderr)
        self.state.write(Path(REFUSED), {
            "time": datetime.now(UTC).isoformat(), "referee": self.address,
            "problem": problem, "cosigned": cosigned, "offered": offered})
        return EXIT_REFUSED

    def deliver(self, checkpoint: dict[str, Any], cosignature: dict[str, Any], *,
                again: bool = False) -> int:
        """Give the cosignature to the referee; note in the state that it took it."""
        try:
            answer = self.client.add_cosignature(cosignature)
        except grpc.RpcError as error:
            print(f"fiftyk witness: cosigned {checkpoint['size']} hands, root"
                  f" {checkpoint['root']}, but the referee did not take the cosignature:"
                  f" {describe_rpc_error(self.address, error)}", file=sys.stderr)
            return EXIT_UNUSABLE
        if again:
            print(f"fiftyk witness: {checkpoint['size']} hands, root {checkpoint['root']}:"
                  " nothing new since the checkpoint cosigned last; the referee"
                  f" {'had lost its cosignature, given again' if answer.stored else 'holds it'}"
                  f" (witness {answer.witness})")
            return 0
        self.state.keep(checkpoint, cosignature, delivered=True)
        print(f"fiftyk witness: cosigned {checkpoint['size']} hands, root {checkpoint['root']};"
              f" the referee keeps it as witness {answer.witness}"
              f"{'' if answer.stored else ' (it held it already)'}")
        return 0



def extending(checkpoint: Any, held: dict[str, Any] | None, answer: Any,
            referee_keys: list[Ed25519PublicKey]) -> dict[str, Any]:
    """The referee's checkpoint if it is signed by one of its keys and extends the one held
    (`answer`: GetCheckpoint's, with the consistency proof); Refused says why not."""
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != CHECKPOINT_FORMAT:
        raise Refused(f"the referee's answer is not a {CHECKPOINT_FORMAT}")
    try:
        signing.verify(checkpoint, referee_keys)
    except SignatureError as error:
        raise Refused(f"the checkpoint's signature: {error}") from None
    size, root = int(checkpoint["size"]), str(checkpoint["root"])
    if held is None:
        return checkpoint
    old = held["checkpoint"]
    old_size, old_root = int(old["size"]), str(old["root"])
    if size < old_size:
        raise Refused(f"ROLLED BACK: the referee's ledger holds {size} hands, fewer than"
                      f" the {old_size} of the checkpoint this witness cosigned")
    if size == old_size:
        if root != old_root:
            raise Refused(f"FORKED: the referee's tree of {size} hands has root {root},"
                          f" the one this witness cosigned has root {old_root}")
        return checkpoint
    proof = answer.consistency if answer.HasField("consistency") else None
    if proof is None or proof.from_size != old_size or proof.to_size != size:
        raise Refused(f"FORKED: the referee gave no consistency proof from the {old_size}"
                      f" hands this witness cosigned to its {size}")
    try:
        verify_consistency(old_size, bytes.fromhex(old_root), size, bytes.fromhex(root),
                           [bytes.fromhex(h) for h in proof.hashes])
    except (ProofError, ValueError) as error:
        raise Refused(f"FORKED: the referee's tree of {size} hands does not extend the"
                      f" {old_size} this witness cosigned ({error}): the ledger was"
                      " rewritten") from None
    return checkpoint


__all__ = ["Refused", "add_parser", "extending", "run_keygen", "run_witness"]
