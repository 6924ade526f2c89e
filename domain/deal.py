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

`fiftyk-shuffle/2` (seat entropy, docs/fairness.md) lets every seat contribute to the deal.
Before it, the referee publishes `SHA-256(b"fiftyk-seed/2" || seed)` (hex) for its secret
32-byte seed; each seat may then send 16 to 64 bytes, and a seat that sent nothing counts
as the empty contribution. The deck is the `fiftyk-shuffle/1` shuffle above driven by the
32-byte *draw seed*::

    draw = HMAC-SHA256(key=seed,
                       message="fiftyk-shuffle/2" LF hand_id LF n LF c_0 LF ... LF c_{n-1})

where `hand_id` is the hand's id as text, `n` the number of seats in decimal and `c_i`
seat i's contribution in lower-case hex (empty for none), all UTF-8, LF a newline. The
seed is revealed when the hand ends.

With **commit, then reveal** (the default for new seat-entropy tables) a seat first sends
the commitment `SHA-256(bytes)` (32 bytes) and its bytes only once every seat has committed
or the commit window has closed; bytes that do not open the seat's commitment are refused,
and a seat that committed and did not reveal in time counts as the empty contribution,
recorded as *withheld* (`draw_record`).
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from fiftyk_referee.domain.cards import Card, make_deck, parse_card

SEED_BYTES = 32
# The name of this module's algorithm, as transcripts write it (`deal.algorithm`).
ALGORITHM = "fiftyk-shuffle/1"
_SHUFFLE_TAG = b"fiftyk-shuffle/1"
_COMMIT_TAG = b"fiftyk-commit/1"
# Seat entropy: the algorithm's name, the tag of its seed commitment, the contributions'
# bounds (enough room for a strong random value, not a payload) and what a preset deck is.
DRAW_ALGORITHM = "fiftyk-shuffle/2"
_SEED_COMMIT_TAG = b"fiftyk-seed/2"
MIN_CONTRIBUTION_BYTES = 16
MAX_CONTRIBUTION_BYTES = 64
PRESET_DECK = "preset"
# Commit, then reveal: a seat's commitment is the SHA-256 of its bytes (32 bytes).
ENTROPY_COMMITMENT_BYTES = 32
# How long the seats have to contribute to a deal, in seconds: by default, and at most.
DEFAULT_ENTROPY_WINDOW = 10
MAX_ENTROPY_WINDOW = 300
_WORD = 8
_SPACE = 1 << 64
_TEXT = {card: str(card) for card in make_deck(1, jokers=True)}  # notation, looked up
# (a deck given in notation, as a game's `base_deck` gives it, is its own notation)
_BLOCK_WORDS = struct.Struct(">4Q")  # a SHA-256 block as its four 8-byte big-endian words


def _random_words(seed: bytes) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(_SHUFFLE_TAG + seed + counter.to_bytes(_WORD, "big")).digest()
        yield from _BLOCK_WORDS.unpack(block)
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


def seed_commitment(seed: bytes) -> str:
    """Hex SHA-256 commitment to a seat-entropy deal's server seed, published before the
    seats contribute."""
    return hashlib.sha256(_SEED_COMMIT_TAG + seed).hexdigest()


def entropy_commitment(entropy: bytes) -> str:
    """A seat's commitment to its contribution: the hex SHA-256 of its bytes (the digest
    `table.entropy_contributed` has always published)."""
    return hashlib.sha256(entropy).hexdigest()


def withheld_seats(commitments: Sequence[str] | None, contributions: Sequence[str]
                   ) -> list[int]:
    """The seats that committed and did not reveal: counted as the empty contribution."""
    if commitments is None:
        return []
    return [seat for seat, (committed, sent) in enumerate(zip(commitments, contributions,
                                                              strict=True))
            if committed and not sent]


def draw_message(hand_id: str, contributions: Sequence[str]) -> bytes:
    """The HMAC message of a `fiftyk-shuffle/2` draw: the algorithm, the hand and every
    seat's contribution (hex, empty for none), one per line."""
    return "\n".join([DRAW_ALGORITHM, hand_id, str(len(contributions)),
                      *contributions]).encode()


def draw_seed(seed: bytes, hand_id: str, contributions: Sequence[str]) -> bytes:
    """The 32-byte seed a `fiftyk-shuffle/2` deck is shuffled with."""
    return hmac.new(seed, draw_message(hand_id, contributions), hashlib.sha256).digest()


def algorithm_of(seed: str | bytes | None, contributions: Sequence[str] | None) -> str:
    """The name of the algorithm a deal used: preset (no seed), seat entropy or the seed's."""
    if seed is None:
        return PRESET_DECK
    return DRAW_ALGORITHM if contributions is not None else ALGORITHM


def shuffled(seed: bytes, base: Sequence[Card], *, hand_id: str,
             contributions: Sequence[str] | None) -> tuple[list[Card], str]:
    """A shuffled deck and the commitment published with it: `fiftyk-shuffle/1` of the seed
    (commitment over seed and deck), or with `contributions` `fiftyk-shuffle/2` (the seed's
    commitment, published before the seats contributed)."""
    if contributions is None:
        cards = shuffle_deck(seed, base)
        return cards, commitment(seed, [_TEXT.get(card) or str(card) for card in cards])
    return (shuffle_deck(draw_seed(seed, hand_id, contributions), base),
            seed_commitment(seed))


def deal_inputs(seed: str | None, digest: str, *, hand_id: str | None = None,
                contributions: Sequence[str] | None = None,
                draw: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What a transcript carries to let anyone check its deal: the algorithm, the revealed
    seed (hex; None for a preset deck) and the commitment published with the deal; for a
    seat-entropy deal also the hand's id, every seat's contribution and (for hands dealt
    since it is kept) the record of its draw."""
    # A preset deck's transcripts have always named fiftyk-shuffle/1 with a null seed.
    algorithm = DRAW_ALGORITHM if contributions is not None else ALGORITHM
    inputs: dict[str, Any] = {"algorithm": algorithm, "seed": seed, "commitment": digest}
    if contributions is not None:
        inputs["hand_id"] = hand_id
        inputs["contributions"] = list(contributions)
        if draw is not None:
            inputs["draw"] = dict(draw)
    return inputs


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
