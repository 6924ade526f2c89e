"""The offline verifier of a hand's evidence (`fiftyk-evidence/1`, docs/fairness.md).

Checks, in order, each giving one line: the format; the referee's signature; the hash chain
of the hand's stored events; that the deal the evidence states is the one the hand's first
stored event recorded (for a seat-entropy deal, every seat's contribution too); the
commitment; the deck recomputed from the revealed inputs by the algorithm the deal names
(`fiftyk-shuffle/1` or `/2`, `domain/deal.py`); for a seat-entropy deal its draw (every
revealed contribution opens its seat's commitment, the withheld seats are those that
committed and did not reveal, and no earlier draw of the hand was abandoned: a re-draw);
the transcript's deal; the ledger (inclusion proof, signed checkpoint, and with an earlier
checkpoint its consistency); the witnesses' cosignatures (each intact and of a tree the
checkpoint extends; one covering the hand from each witness key given); each seat's
receipt given (`service/trust/entropy_receipts.py`: the deal holds what the referee
accepted); and the re-ruling of the whole transcript against
the ruling the live hand reached. The first failure stops the run with its reason.

Only the standard library, `cryptography` and the pure domain (the fairness modules and the
rules engine, for the canonical deck and the re-ruling) are imported, so it runs whole on
the client-only install. A verifier given no rules engine reports the checks it would do as
skipped, never as passed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, cast

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from fiftyk_referee.domain.chain import ChainedEvent, Link, check_stream
from fiftyk_referee.domain.deal import (
    ALGORITHM,
    DRAW_ALGORITHM,
    PRESET_DECK,
    commitment,
    draw_seed,
    entropy_commitment,
    seed_commitment,
    shuffle_deck,
    withheld_seats,
)
from fiftyk_referee.domain.games import adjudicate, game_named
from fiftyk_referee.domain.merkle import ProofError, leaf_hash, verify_consistency, verify_inclusion
from fiftyk_referee.service.trust import signing
from fiftyk_referee.service.trust.entropy_receipts import (
    SIGNED_BYTES,
    SIGNED_COMMITMENT,
    ReceiptMismatch,
    check_receipt,
    entropy_statement,
    seat_signed,
)
from fiftyk_referee.service.trust.signing import SignatureError
from fiftyk_referee.service.trust.witness import CosignatureError, check_cosignature

EVIDENCE_FORMAT = "fiftyk-evidence/1"
CHECKPOINT_FORMAT = "fiftyk-checkpoint/1"
LEAF_FORMAT = "fiftyk-leaf/1"
OK, SKIPPED, NO_CHAIN, FAILED = "ok", "skipped", "no chain", "FAILED"
# The signature is intact but no trusted key was given: the file is consistent with the key
# it names itself, which anyone can make. Not a failure of a check; the verdict is "unverified".
UNVERIFIED = "UNVERIFIED"


class CheckFailed(Exception):
    """A check that failed; its message is the reason."""


@dataclass(frozen=True)
class Line:
    """One check's outcome."""

    check: str
    status: str  # OK, SKIPPED, NO_CHAIN, UNVERIFIED or FAILED
    detail: str

    def __str__(self) -> str:
        return f"{self.status:>8}  {self.check}: {self.detail}"


@dataclass
class Report:
    """Every check's line; `ok` unless one failed."""

    lines: list[Line] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No check failed."""
        return all(line.status != FAILED for line in self.lines)

    @property
    def verified(self) -> bool:
        """No check failed and the signature was checked against a trusted key."""
        return self.ok and all(line.status != UNVERIFIED for line in self.lines)

    @property
    def failure(self) -> Line | None:
        """The failed check, if any."""
        return next((line for line in self.lines if line.status == FAILED), None)


@dataclass(frozen=True)
class Rules:
    """What the rules engine offers the verifier."""

    base_deck: Callable[[str, Mapping[str, Any]], list[str]]
    adjudicate: Callable[[Any], dict[str, Any]]


def rules_engine() -> Rules:
    """The referee's rules engine: every hosted game's, through the registry."""

    def base_deck(game: str, spec: Mapping[str, Any]) -> list[str]:
        chosen = game_named(game)
        return chosen.base_deck(chosen.rules_from_json(spec))

    return Rules(base_deck=base_deck, adjudicate=adjudicate)


def _get(document: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    value = document.get(key)
    if not isinstance(value, kind):
        raise CheckFailed(f'"{key}" is missing or not a {getattr(kind, "__name__", kind)}')
    return value


def _events(evidence: Mapping[str, Any]) -> list[ChainedEvent]:
    events = []
    for raw in _get(evidence, "events", list):
        if not isinstance(raw, Mapping):
            raise CheckFailed("an event is not an object")
        link = None
        if raw.get("hash") is not None:
            link = Link(str(raw.get("prev")), str(raw["hash"]))
        events.append(ChainedEvent(int(raw.get("version", 0)), str(raw.get("topic")),
                                   str(raw.get("state", "")).encode(), link))
    return events


class Verifier:
    """Runs the checks over one evidence document."""

    def __init__(self, evidence: Mapping[str, Any], *,
                 trusted: list[Ed25519PublicKey] | None = None,
                 since: Mapping[str, Any] | None = None,
                 rules: Rules | None = None,
                 receipts: list[Mapping[str, Any]] | None = None,
                 witnesses: list[Ed25519PublicKey] | None = None) -> None:
        self.evidence = evidence
        self.trusted = trusted
        self.since = since
        self.rules = rules
        self.receipts = receipts or []
        self.witnesses = witnesses or []

    def run(self) -> Report:
        """Every check in order, stopping at the first failure."""
        report = Report()
        for name, check in self._checks():
            try:
                status, detail = check()
            except CheckFailed as failure:
                report.lines.append(Line(name, FAILED, str(failure)))
                return report
            except (KeyError, TypeError, ValueError) as error:
                report.lines.append(Line(name, FAILED, f"malformed evidence: {error}"))
                return report
            report.lines.append(Line(name, status, detail))
        return report

    def _checks(self) -> Iterator[tuple[str, Callable[[], tuple[str, str]]]]:
        yield "format", self._format
        yield "signature", self._signature
        yield "chain", self._chain
        yield "deal", self._deal
        yield "commitment", self._commitment
        yield "deck", self._deck
        deal = self.evidence.get("deal")
        if isinstance(deal, Mapping) and deal.get("algorithm") == DRAW_ALGORITHM:
            yield "draw", self._draw
        yield "transcript deal", self._transcript_deal
        yield "ledger", self._ledger
        if self.since is not None:
            yield "consistency", self._consistency
        ledger = self.evidence.get("ledger")
        if self.witnesses or (isinstance(ledger, Mapping) and ledger.get("cosignatures")):
            yield "witnesses", self._witnesses
        for receipt in self.receipts:
            yield "receipt", partial(self._receipt, receipt)
        yield "re-rule", self._rerule

    # -- the checks ---------------------------------------------------------------------------

    def _format(self) -> tuple[str, str]:
        if self.evidence.get("format") != EVIDENCE_FORMAT:
            raise CheckFailed(f"not a {EVIDENCE_FORMAT} document")
        engine = _get(self.evidence, "engine", Mapping)
        return OK, (f"{EVIDENCE_FORMAT}, game {self.evidence.get('game')}, hand"
                    f" {self.evidence.get('hand_id')}, ruleset fingerprint"
                    f" {self.evidence.get('ruleset_fingerprint')}, engine"
                    f" {engine.get('name')} {engine.get('version')}")

    def _signature(self) -> tuple[str, str]:
        try:
            signer = signing.verify(dict(self.evidence), self.trusted)
        except SignatureError as error:
            raise CheckFailed(str(error)) from None
        if self.trusted is None:
            return UNVERIFIED, (f"intact, by {signer} as the file names it; no trusted key was"
                                " given, and anyone can sign a file with a key of their own:"
                                " pass --key with the referee's published key")
        return OK, f"valid, by {signer}, a trusted key"

    def _chain(self) -> tuple[str, str]:
        events = _events(self.evidence)
        hand_id = str(self.evidence.get("hand_id"))
        found = check_stream(hand_id, events)
        if not found.ok:
            raise CheckFailed(found.problem)
        stated = _get(self.evidence, "chain", Mapping).get("head")
        if found.head != stated:
            raise CheckFailed(f"the events hash to head {found.head}, the evidence states"
                              f" {stated}")
        if found.chained == 0:
            return NO_CHAIN, (f"the hand's {found.unchained} events were stored before the"
                              " hash chain existed: their integrity rests on the signature"
                              " alone")
        legacy = f"; {found.unchained} earlier events unchained" if found.unchained else ""
        return OK, f"{found.chained} events linked, head {found.head}{legacy}"

    def _dealt_state(self) -> Mapping[str, Any]:
        events = _get(self.evidence, "events", list)
        if not events:
            raise CheckFailed("the evidence holds no events")
        state = json.loads(events[0]["state"])
        if not isinstance(state, Mapping):
            raise CheckFailed("the first event is not an object")
        return state

    def _deal(self) -> tuple[str, str]:
        deal = _get(self.evidence, "deal", Mapping)
        dealt = self._dealt_state()
        if dealt.get("commitment") != deal.get("commitment"):
            raise CheckFailed("the commitment stated differs from the one the deal recorded")
        if deal.get("deck") is not None and list(dealt.get("deck", ())) != deal["deck"]:
            raise CheckFailed("the deck stated differs from the one the deal recorded")
        if deal.get("seed") is not None and dealt.get("seed") != deal["seed"]:
            raise CheckFailed("the seed stated differs from the one the deal recorded")
        drawn = deal.get("algorithm") == DRAW_ALGORITHM
        if drawn != (dealt.get("contributions") is not None):
            raise CheckFailed(f"the deal states algorithm {deal.get('algorithm')!r}, the hand's"
                              " first event recorded another kind of deal")
        if drawn and deal.get("contributions") is not None \
                and list(dealt["contributions"]) != deal["contributions"]:
            raise CheckFailed("the contributions stated differ from those the deal recorded")
        if deal.get("draw") != dealt.get("draw"):
            raise CheckFailed("the draw's record stated differs from the one the deal recorded")
        what = " and every seat's contribution" if drawn else ""
        return OK, f"the hand's first event recorded commitment {deal['commitment']}{what}"

    def _commitment(self) -> tuple[str, str]:
        deal = _get(self.evidence, "deal", Mapping)
        if deal.get("deck") is None:
            return SKIPPED, "the hand is not over: the seed is not revealed yet"
        seed = bytes.fromhex(deal["seed"]) if deal.get("seed") is not None else None
        if deal.get("algorithm") == DRAW_ALGORITHM:
            if seed is None:
                raise CheckFailed("a seat-entropy deal without its seed")
            opened = seed_commitment(seed)
            if opened != deal["commitment"]:
                raise CheckFailed(f"SHA-256 of fiftyk-seed/2 and the seed is {opened}, not the"
                                  f" commitment {deal['commitment']}")
            return OK, ("the revealed seed opens the commitment published before the seats"
                        " contributed")
        opened = commitment(seed, deal["deck"])
        if opened != deal["commitment"]:
            raise CheckFailed(f"SHA-256 of the seed and deck is {opened}, not the commitment"
                              f" {deal['commitment']}")
        what = "the revealed seed and the deck" if seed else "the preset deck"
        return OK, f"{what} open the commitment"

    def _deck(self) -> tuple[str, str]:
        deal = _get(self.evidence, "deal", Mapping)
        if deal.get("algorithm") == PRESET_DECK:
            return SKIPPED, "a preset deck (a table that allows them): there is no shuffle"
        algorithm = deal.get("algorithm")
        if algorithm not in (ALGORITHM, DRAW_ALGORITHM):
            raise CheckFailed(f"unknown deal algorithm {algorithm!r}")
        if deal.get("seed") is None:
            return SKIPPED, "the hand is not over: the seed is not revealed yet"
        seed = bytes.fromhex(deal["seed"])
        inputs = "the seed"
        if algorithm == DRAW_ALGORITHM:
            contributions = [str(c) for c in _get(deal, "contributions", list)]
            seed = draw_seed(seed, str(self.evidence.get("hand_id")), contributions)
            sent = sum(1 for c in contributions if c)
            inputs = (f"the seed, the hand's id and {len(contributions)} seats' contributions"
                      f" ({sent} sent, {len(contributions) - sent} empty)")
        base = list(_get(deal, "base_deck", list))
        where = "the canonical deck the evidence names"
        if self.rules is not None:
            canonical = self.rules.base_deck(str(self.evidence.get("game")),
                                             _get(self.evidence, "ruleset", Mapping))
            if canonical != base:
                raise CheckFailed("the deck the shuffle permuted is not the ruleset's")
            where = "the ruleset's canonical deck"
        shuffled = shuffle_deck(seed, base)
        if [str(c) for c in shuffled] != deal["deck"]:
            raise CheckFailed(f"{algorithm} of the revealed inputs does not give the dealt deck")
        return OK, f"{algorithm} of {where} with {inputs} gives the dealt deck"

    def _draw(self) -> tuple[str, str]:
        deal = _get(self.evidence, "deal", Mapping)
        record = deal.get("draw")
        if record is None:
            return SKIPPED, "the hand was dealt before its draw's record was kept"
        if not isinstance(record, Mapping):
            raise CheckFailed("the draw's record is not an object")
        number = self.evidence.get("hand_number")
        abandoned = [d.get("commitment") for d in record.get("abandoned") or ()
                     if isinstance(d, Mapping)]
        if abandoned:
            raise CheckFailed(f"re-draw: hand {number} was dealt from draw {len(abandoned) + 1}"
                              f" of {len(abandoned) + 1}; the referee abandoned the draw(s)"
                              f" committed to {', '.join(map(str, abandoned))} after seats could"
                              " contribute to them")
        commitments = record.get("commitments")
        contributions = deal.get("contributions")
        keys = self._seat_signatures(record, contributions)
        if commitments is None:
            return OK, ("the seats sent their bytes directly, without committing first (a table"
                        " created with seat_entropy.direct): the referee saw them before it"
                        f" dealt{keys}")
        commitments = [str(c) for c in commitments]
        if not isinstance(contributions, list):
            committed = sum(1 for c in commitments if c)
            return OK, (f"{committed} of {len(commitments)} seats committed; their bytes are"
                        f" checked when the hand ends{keys}")
        for seat, (committed, sent) in enumerate(zip(commitments, contributions, strict=True)):
            if sent and not committed:
                raise CheckFailed(f"seat {seat}'s bytes are in the deal without a commitment")
            if sent and entropy_commitment(bytes.fromhex(str(sent))) != committed:
                raise CheckFailed(f"seat {seat}'s revealed bytes do not open its commitment")
        withheld = withheld_seats(commitments, [str(c) for c in contributions])
        if list(record.get("withheld") or ()) != withheld:
            raise CheckFailed(f"the record names seats {record.get('withheld')} as withheld,"
                              f" the commitments and contributions say {withheld}")
        revealed = sum(1 for c in contributions if c)
        detail = (f"every contribution opens its seat's commitment ({revealed} revealed, made"
                  f" after all {sum(1 for c in commitments if c)} commitments were fixed)")
        if withheld:
            detail += (f"; seat(s) {', '.join(map(str, withheld))} committed and withheld"
                       " their bytes: counted as empty")
        return OK, detail + keys

    def _seat_signatures(self, record: Mapping[str, Any], contributions: Any) -> str:
        """Check every commitment and contribution of a seat that bound a key of its own
        against its signature; what the detail line says of the seats' keys."""
        keys = record.get("seat_keys")
        if not isinstance(keys, list):
            return "; no seat bound a key of its own: each contribution rests on its seat token"
        signatures = _get(record, "signatures", Mapping)
        table_id, number = str(self.evidence.get("table_id")), int(record["number"])
        sent: dict[str, list[Any]] = {
            SIGNED_COMMITMENT: list(record.get("commitments") or []),
            SIGNED_BYTES: list(contributions) if isinstance(contributions, list) else []}
        for seat, key in enumerate(keys):
            if not key:
                continue
            for kind, field_name in ((SIGNED_COMMITMENT, "commitments"),
                                     (SIGNED_BYTES, "contributions")):
                value = sent[kind][seat] if seat < len(sent[kind]) else ""
                if not value:
                    continue
                digest = (str(value) if kind == SIGNED_COMMITMENT
                          else entropy_commitment(bytes.fromhex(str(value))))
                signature = list(signatures.get(field_name) or [])
                given = signature[seat] if seat < len(signature) else ""
                what = "commitment" if kind == SIGNED_COMMITMENT else "contribution"
                if not given:
                    raise CheckFailed(f"seat {seat}'s {what} is unsigned although the seat bound"
                                      f" key {key[:16]}…: it was made with the seat's token"
                                      " alone, not by the player (an impersonation)")
                statement = entropy_statement(table_id, number, str(record["commitment"]),
                                              kind, digest)
                if not seat_signed(str(key), str(given), statement):
                    raise CheckFailed(f"seat {seat}'s {what} signature is not its key's")
        bound = sum(1 for key in keys if key)
        return (f"; {bound} of {len(keys)} seats bound keys of their own and signed what they"
                " sent (the others' rest on their seat tokens)")

    def _receipt(self, receipt: Mapping[str, Any]) -> tuple[str, str]:
        try:
            signer = signing.verify(dict(receipt), self.trusted)
        except SignatureError as error:
            raise CheckFailed(f"the receipt: {error}") from None
        try:
            shown = check_receipt(receipt, self.evidence)
        except ReceiptMismatch as mismatch:
            raise CheckFailed(f"{mismatch} (the receipt is signed by {signer})") from None
        except ValueError as error:
            raise CheckFailed(f"the receipt: {error}") from None
        if self.trusted is None:
            return UNVERIFIED, f"{shown}; the receipt names {signer}, no trusted key was given"
        return OK, shown

    def _transcript_deal(self) -> tuple[str, str]:
        deal = _get(self.evidence, "deal", Mapping)
        transcript = _get(self.evidence, "transcript", Mapping)
        if deal.get("deck") is None:
            return SKIPPED, "the hand is not over"
        if transcript.get("deck") is not None and list(transcript["deck"]) != deal["deck"]:
            raise CheckFailed("the transcript's deck is not the dealt deck")
        if self.evidence.get("ruleset") != transcript.get("ruleset"):
            raise CheckFailed("the transcript's ruleset is not the hand's")
        stated = transcript.get("deal")
        if isinstance(stated, Mapping) and any(
                stated.get(key) != deal.get(key)
                for key in ("seed", "commitment", "contributions", "draw") if key in stated):
            raise CheckFailed("the transcript's deal inputs are not the hand's")
        return OK, "the transcript deals the committed deck under the hand's ruleset"

    def _ledger(self) -> tuple[str, str]:
        ledger = self.evidence.get("ledger")
        head = _get(self.evidence, "chain", Mapping).get("head")
        if ledger is None:
            if head is None or not self.evidence.get("over"):
                return SKIPPED, "the hand is not in the ledger (not over, or stored before it)"
            raise CheckFailed("a finished chained hand without its place in the ledger")
        checkpoint = _get(ledger, "checkpoint", Mapping)
        if checkpoint.get("format") != CHECKPOINT_FORMAT:
            raise CheckFailed("the checkpoint is not a fiftyk-checkpoint/1")
        try:
            signing.verify(dict(checkpoint), self.trusted)
        except SignatureError as error:
            raise CheckFailed(f"checkpoint: {error}") from None
        leaf = leaf_hash(f"{LEAF_FORMAT}\n{self.evidence['hand_id']}\n{head}".encode())
        if leaf.hex() != ledger.get("leaf_hash"):
            raise CheckFailed("the ledger's leaf is not this hand's head")
        if ledger.get("size") != checkpoint.get("size"):
            raise CheckFailed("the inclusion proof is not against the checkpoint's tree")
        try:
            verify_inclusion(leaf, int(ledger["index"]), int(checkpoint["size"]),
                             [bytes.fromhex(p) for p in ledger["proof"]],
                             bytes.fromhex(checkpoint["root"]))
        except ProofError as error:
            raise CheckFailed(f"inclusion: {error}") from None
        return OK, (f"hand {ledger['index']} of {checkpoint['size']} under the signed"
                    f" checkpoint root {checkpoint['root']}")

    def _consistency(self) -> tuple[str, str]:
        if self.since is None:
            return SKIPPED, "no earlier checkpoint given"
        earlier = self.since.get("ledger")
        old = earlier.get("checkpoint") if isinstance(earlier, Mapping) else self.since
        ledger = self.evidence.get("ledger")
        if not isinstance(old, Mapping) or not isinstance(ledger, Mapping):
            raise CheckFailed("both documents need a ledger checkpoint")
        new = ledger["checkpoint"]
        try:
            signing.verify(dict(old), self.trusted)
        except SignatureError as error:
            raise CheckFailed(f"the earlier checkpoint: {error}") from None
        if int(new["size"]) < int(old["size"]):
            raise CheckFailed(f"the ledger shrank from {old['size']} to {new['size']} hands:"
                              " it was rolled back")
        proof = ledger.get("consistency") or {}
        if int(old["size"]) != int(new["size"]) and proof.get("from_size") != old["size"]:
            raise CheckFailed(f"no consistency proof from size {old['size']} (export the"
                              f" hand again with --since)")
        try:
            verify_consistency(int(old["size"]), bytes.fromhex(old["root"]), int(new["size"]),
                               bytes.fromhex(new["root"]),
                               [bytes.fromhex(p) for p in proof.get("proof", [])])
        except ProofError as error:
            raise CheckFailed(f"the ledger was rewritten: {error}") from None
        return OK, f"the checkpoint of {old['size']} hands is a prefix of {new['size']}"

    def _witnesses(self) -> tuple[str, str]:
        """Every witness cosignature the evidence carries is intact and of a tree its
        checkpoint extends; each witness key given has one that covers the hand."""
        wanted = {signing.key_id(key) for key in self.witnesses}
        ledger = self.evidence.get("ledger")
        if not isinstance(ledger, Mapping):
            raise CheckFailed("the hand is not in the ledger, so no witness cosigned a tree"
                              f" that holds it (witness key(s) {', '.join(sorted(wanted))}"
                              " required)")
        checkpoint = _get(ledger, "checkpoint", Mapping)
        size, index = int(checkpoint["size"]), int(ledger["index"])
        root = bytes.fromhex(str(checkpoint["root"]))
        covering: dict[str, str] = {}
        earlier: list[str] = []
        for entry in _get(ledger, "cosignatures", list) if ledger.get("cosignatures") else []:
            if not isinstance(entry, Mapping):
                raise CheckFailed("a cosignature entry is not an object")
            name, document = str(entry.get("witness")), entry.get("cosignature")
            try:
                signer = check_cosignature(document)
            except CosignatureError as error:
                raise CheckFailed(f"witness {name}: {error}") from None
            document = cast(Mapping[str, Any], document)  # check_cosignature checked it
            cosigned = int(document["size"])
            who = f"witness {name} ({signer})"
            if cosigned > size:
                raise CheckFailed(f"{who} cosigned a tree of {cosigned} hands; this evidence's"
                                  f" ledger holds {size}: the ledger was rolled back after"
                                  " the witness saw it")
            proof = entry.get("consistency")
            if not isinstance(proof, list):
                raise CheckFailed(f"{who}: no consistency proof from its tree of {cosigned}"
                                  f" hands to the checkpoint's {size}")
            try:
                verify_consistency(cosigned, bytes.fromhex(str(document["root"])), size, root,
                                   [bytes.fromhex(str(p)) for p in proof])
            except ProofError as error:
                raise CheckFailed(f"{who} cosigned a tree of {cosigned} hands that this"
                                  f" ledger does not extend: the ledger was rewritten after"
                                  f" the witness saw it ({error})") from None
            if index < cosigned:
                covering.setdefault(signer, f"{name} ({signer}, {cosigned} hands)")
            else:
                earlier.append(f"{name} ({cosigned} hands, before this hand)")
        missing = sorted(wanted - set(covering))
        before = f"; cosigned only earlier trees: {', '.join(earlier)}" if earlier else ""
        if missing:
            raise CheckFailed(f"no cosignature by witness key {', '.join(missing)} covers"
                              f" this hand (hand {index} of the ledger's {size}): the"
                              " witness has not cosigned a tree that holds it, or the referee"
                              f" did not keep its cosignature{before}")
        shown = ("; ".join(covering.values()) or "none covers this hand yet") + before
        pinned = (f"every witness key given ({len(wanted)}) cosigned a tree that holds the hand"
                  if wanted else "witness keys not given (--witness-key requires them)")
        return OK, (f"hand {index} is in the trees cosigned by {shown}; each tree is a prefix"
                    f" of the checkpoint's; {pinned}")

    def _rerule(self) -> tuple[str, str]:
        if self.rules is None:
            return SKIPPED, "no rules engine was given to this verifier"
        ruling = self.rules.adjudicate(self.evidence["transcript"])
        if ruling != self.evidence.get("ruling"):
            differing = sorted(k for k in set(ruling) | set(self.evidence.get("ruling") or {})
                               if ruling.get(k) != (self.evidence.get("ruling") or {}).get(k))
            raise CheckFailed(f"re-ruling the transcript differs from the hand's result in"
                              f" {', '.join(differing)}")
        return OK, (f"replaying the transcript's actions gives the hand's result"
                    f" ({ruling.get('status')})")


def verify(evidence: Mapping[str, Any], *, trusted: list[Ed25519PublicKey] | None = None,
           since: Mapping[str, Any] | None = None,
           receipts: list[Mapping[str, Any]] | None = None,
           witnesses: list[Ed25519PublicKey] | None = None) -> Report:
    """Run every check over an evidence document, the rules engine's included, each
    seat-entropy receipt given against it, and a covering cosignature of each witness key
    given."""
    return Verifier(evidence, trusted=trusted, since=since, rules=rules_engine(),
                    receipts=receipts, witnesses=witnesses).run()


__all__ = ["FAILED", "NO_CHAIN", "OK", "SKIPPED", "UNVERIFIED", "CheckFailed", "Line", "Report",
           "Rules", "Verifier", "rules_engine", "verify"]
