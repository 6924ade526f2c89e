"""A stored hand's evidence: what a sceptic needs to check it without trusting the referee.

`fiftyk-evidence/1` (docs/fairness.md) holds the hand's transcript, the ruling the live hand
reached, its ruleset and fingerprint, the engine version, the deal's inputs (the deck, the
commitment, the revealed seed and the canonical deck the shuffle permuted; seed and deck
only once the hand is over), every stored event of the hand exactly as stored with its
chain link, the chain head, the hand's place in the ledger with its inclusion proof and a
signed checkpoint — the whole signed by the referee. `service/trust/verifier.py` checks it.

It knows games only through the game protocol: the transcript, the ruling and the canonical
deck come from the hand's game.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from eventsourcing.persistence import StoredEvent

from fiftyk_referee.domain.chain import ChainCheck, check_stream, unseal
from fiftyk_referee.domain.deal import algorithm_of
from fiftyk_referee.domain.game import Game, GameHand
from fiftyk_referee.service.trust.chain_store import chained_event
from fiftyk_referee.service.trust.ledger import HandLog

EVIDENCE_FORMAT = "fiftyk-evidence/1"
DISTRIBUTION = "fiftyk-referee"


def engine_version() -> str:
    """The referee's installed version."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "unknown"


def stored_events_json(stored: list[StoredEvent]) -> list[dict[str, Any]]:
    """Each stored event as evidence carries it: its JSON text without the link, the link."""
    out = []
    for event in stored:
        link, state = unseal(event.state)
        out.append({
            "version": event.originator_version, "topic": event.topic,
            "state": state.decode(), "prev": link.prev if link else None,
            "hash": link.hash if link else None,
        })
    return out


def deal_inputs(game: Game, hand: GameHand) -> dict[str, Any]:
    """The deal's inputs: the algorithm and the commitment always (and the seats'
    contributions to a seat-entropy deal), the seed and deck once the hand is over."""
    over = hand.is_over
    contributions = hand.contributions  # None: a version 1 (or preset) deal
    inputs: dict[str, Any] = {
        "algorithm": algorithm_of(hand.seed, contributions),
        "commitment": hand.commitment,
        "seed": hand.seed if over else None,
        "deck": list(hand.deck) if over else None,
        "base_deck": game.base_deck(hand.rules) if over and hand.seed is not None else None,
    }
    if contributions is not None:
        inputs["contributions"] = list(contributions) if over else None
    if hand.draw_record is not None:  # public from the deal on: digests, windows, seats
        inputs["draw"] = dict(hand.draw_record)
    return inputs


def build_evidence(game: Game, hand: GameHand, stored: list[StoredEvent], ledger: HandLog, *,
                   chain: ChainCheck | None = None,
                   cosignatures: Sequence[tuple[str, Mapping[str, Any]]] = ()
                   ) -> dict[str, Any]:
    """The unsigned evidence of a hand (the caller signs it); `chain`: the check of these
    very events, when the caller already made it; `cosignatures`: each witness's latest
    (its name, the cosignature), read before the ledger so that none is of a larger tree
    than the one the evidence states."""
    hand_id = str(hand.id)
    if chain is None:
        chain = check_stream(hand_id, [chained_event(e) for e in stored])
    evidence: dict[str, Any] = {
        "format": EVIDENCE_FORMAT,
        "game": game.name,
        "engine": {"name": DISTRIBUTION, "version": engine_version()},
        "table_id": hand.table_id,
        "hand_id": hand_id,
        "hand_number": hand.number,
        "ruleset": hand.rules.to_json(),
        "ruleset_fingerprint": hand.rules.fingerprint,
        "over": hand.is_over,
        "transcript": game.export_transcript(hand),
        "ruling": game.ruling(hand),
        "deal": deal_inputs(game, hand),
        "events": stored_events_json(stored),
        "chain": {"head": chain.head, "chained": chain.chained, "unchained": chain.unchained,
                  "intact": chain.ok, "problem": chain.problem},
        "ledger": None,
    }
    inclusion = ledger.inclusion(hand_id) if hand.is_over else None
    if inclusion is not None:
        evidence["ledger"] = {
            "index": inclusion.index, "leaf_hash": inclusion.leaf_hash,
            "size": inclusion.size, "proof": inclusion.proof,
            "checkpoint": ledger.checkpoint(inclusion.size),
        }
        if cosignatures:
            evidence["ledger"]["cosignatures"] = [
                witnessed(name, cosignature, ledger, inclusion.size)
                for name, cosignature in cosignatures]
    return evidence


def witnessed(name: str, cosignature: Mapping[str, Any], ledger: HandLog, size: int
              ) -> dict[str, Any]:
    """A witness's cosignature as evidence carries it: with the consistency proof from its
    tree to the evidence's (None when it is of a larger tree than the ledger holds now)."""
    cosigned = int(cosignature["size"])
    proof = ledger.consistency(cosigned, size) if 0 < cosigned <= size else None
    return {"witness": name, "cosignature": dict(cosignature), "consistency": proof}


__all__ = ["DISTRIBUTION", "EVIDENCE_FORMAT", "build_evidence", "deal_inputs", "engine_version",
           "stored_events_json", "witnessed"]
