"""Dealing: the verifiable shuffle, the fairness commitment, and who gets which card.

The shuffle is a deterministic function of a 32-byte server seed, so anyone holding the
revealed seed can recompute the deck: a Fisher–Yates shuffle of the ruleset's canonical deck
(`cards.make_deck`) whose random indices come from SHA-256 in counter mode::

    block(i) = SHA-256(b"fiftyk-shuffle/1" || seed || i as 8-byte big-endian)

read as consecutive 8-byte big-endian integers; an index below `k` is drawn by rejection
sampling (values at or above the largest multiple of `k` below 2**64 are skipped). For
`i` from `n-1` down to `1`, swap position `i` with position `index(i + 1)`.

The commitment published with the deal is
`SHA-256(b"fiftyk-commit/1" || seed || " ".join(deck))` as hex; the hand's final event
reveals the seed. For preset decks (tests, duplicate tournaments) there is no seed and the
commitment covers the deck alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import Any

from fiftyk_referee.domain.cards import Card, parse_card

SEED_BYTES = 32
# The name of this module's algorithm, as transcripts write it (`deal.algorithm`).
ALGORITHM = "fiftyk-shuffle/1"
_SHUFFLE_TAG = b"fiftyk-shuffle/1"
_COMMIT_TAG = b"fiftyk-commit/1"
_WORD = 8
_SPACE = 1 << 64


def _random_words(seed: bytes) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(_SHUFFLE_TAG + seed + counter.to_bytes(_WORD, "big")).digest()
        for offset in range(0, len(block), _WORD):
            yield int.from_bytes(block[offset:offset + _WORD], "big")
        counter += 1


def shuffle_deck(seed: bytes, deck: Sequence[Card]) -> list[Card]:
    """The deck order a seed produces (see the module docstring for the exact algorithm)."""
    words = _random_words(seed)
    cards = list(deck)
    for i in range(len(cards) - 1, 0, -1):
        bound = i + 1
        limit = _SPACE - _SPACE % bound
        word = next(words)
        while word >= limit:
            word = next(words)
        j = word % bound
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def commitment(seed: bytes | None, deck: Sequence[str]) -> str:
    """Hex SHA-256 commitment to the seed (if any) and the deck it produced."""
    digest = hashlib.sha256(_COMMIT_TAG + (seed or b"") + " ".join(deck).encode())
    return digest.hexdigest()


def deal_inputs(seed: str | None, digest: str) -> dict[str, Any]:
    """What a transcript carries to let anyone check its deal: the algorithm, the revealed
    seed (hex; None for a preset deck) and the commitment published with the deal."""
    return {"algorithm": ALGORITHM, "seed": seed, "commitment": digest}


def deal_order(players: int, dealer: int, cards: int) -> list[int]:
    """The seat receiving each card dealt, one at a time from the seat after the dealer."""
    return [(dealer + 1 + i) % players for i in range(cards)]


def deal(deck: Sequence[str], players: int, dealer: int, hand_size: int | None
         ) -> tuple[list[list[Card]], list[Card], list[tuple[int, Card]]]:
    """Deal a deck: (hands per seat, the stock, every (seat, card) in deal order)."""
    cards = [parse_card(c) for c in deck]
    dealt_count = len(cards) if hand_size is None else hand_size * players
    hands: list[list[Card]] = [[] for _ in range(players)]
    order = deal_order(players, dealer, dealt_count)
    for seat, card in zip(order, cards, strict=False):
        hands[seat].append(card)
    return hands, cards[dealt_count:], list(zip(order, cards, strict=False))


def deck_from_hands(hands: Sequence[Sequence[Card]], stock: Sequence[Card], dealer: int,
                    lead_card: Card | None) -> list[Card]:
    """Interleave hands into the deck that deals them (each hand's `lead_card` dealt first).

    Returns the deck, or raises ValueError when the hand sizes are not those of a deal.
    """
    players = len(hands)
    total = sum(len(h) for h in hands)
    order = deal_order(players, dealer, total)
    expected = [order.count(seat) for seat in range(players)]
    if [len(h) for h in hands] != expected:
        raise ValueError(f"hand sizes {[len(h) for h in hands]} are not a deal's {expected}")
    queues = []
    for hand in hands:
        cards = list(hand)
        if lead_card is not None and lead_card in cards:
            cards.remove(lead_card)
            cards.insert(0, lead_card)
        queues.append(iter(cards))
    return [next(queues[seat]) for seat in order] + list(stock)
