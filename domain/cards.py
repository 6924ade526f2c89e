"""Cards, their text notation (docs/rules.md#cards), point values and decks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from fiftyk_referee.domain.errors import UnknownCard

# Natural rank codes: 3..10 as themselves, J=11, Q=12, K=13, A=14, 2=15, jokers above.
JACK, QUEEN, KING, ACE, TWO = 11, 12, 13, 14, 15
SMALL_JOKER, BIG_JOKER = 16, 17
THREE, FIVE, TEN = 3, 5, 10
NORMAL_RANKS: tuple[int, ...] = tuple(range(THREE, TWO + 1))

SUITS = "SHCD"  # spades, hearts, clubs, diamonds: also the pure-50K suit order, high to low
JOKER_SUIT = ""

_RANK_NAMES: dict[int, str] = {r: str(r) for r in range(THREE, TEN + 1)}
_RANK_NAMES.update({JACK: "J", QUEEN: "Q", KING: "K", ACE: "A", TWO: "2"})
_RANK_BY_NAME: dict[str, int] = {name: rank for rank, name in _RANK_NAMES.items()}
_RANK_BY_NAME["T"] = TEN
_SUIT_SYMBOLS = {"♠": "S", "♥": "H", "♣": "C", "♦": "D", "♤": "S", "♡": "H", "♧": "C", "♢": "D"}
_SUIT_INDEX = {suit: i for i, suit in enumerate(SUITS)}

FIVE_POINTS, TEN_POINTS = 5, 10
JOKER_POINTS = 10


class Card(NamedTuple):
    """One card: a natural rank code and a suit letter ('' for jokers)."""

    rank: int
    suit: str

    def __str__(self) -> str:
        if self.rank == SMALL_JOKER:
            return "SJ"
        if self.rank == BIG_JOKER:
            return "BJ"
        return _RANK_NAMES[self.rank] + self.suit

    @property
    def is_joker(self) -> bool:
        """True for the small and the big joker."""
        return self.rank >= SMALL_JOKER


SJ = Card(SMALL_JOKER, JOKER_SUIT)
BJ = Card(BIG_JOKER, JOKER_SUIT)


def rank_name(rank: int) -> str:
    """The notation of a rank ('10', 'A', 'SJ')."""
    if rank == SMALL_JOKER:
        return "SJ"
    if rank == BIG_JOKER:
        return "BJ"
    return _RANK_NAMES[rank]


def _parse(token: str) -> Card:
    text = token.strip().upper()
    if text in ("SJ", "BJ"):
        return SJ if text == "SJ" else BJ
    if len(text) < 2:
        raise UnknownCard(token)
    suit = _SUIT_SYMBOLS.get(text[-1], text[-1])
    rank = _RANK_BY_NAME.get(text[:-1])
    if rank is None or suit not in _SUIT_INDEX:
        raise UnknownCard(token)
    return Card(rank, suit)


_PARSE_CACHE: dict[str, Card] = {}


def parse_card(token: str) -> Card:
    """Parse one card token; accepts T for 10, lower case and ♠♥♣♦. Raises UnknownCard."""
    if not isinstance(token, str):
        raise UnknownCard(repr(token))
    card = _PARSE_CACHE.get(token)
    if card is None:
        card = _parse(token)
        if len(_PARSE_CACHE) < 4096:
            _PARSE_CACHE[token] = card
    return card


def parse_cards(tokens: Iterable[str] | str) -> list[Card]:
    """Parse several tokens (an iterable, or one string separated by spaces or commas)."""
    if isinstance(tokens, str):
        tokens = tokens.replace(",", " ").split()
    return [parse_card(token) for token in tokens]


def sort_key(card: Card) -> tuple[int, int]:
    """Canonical order: natural rank, then suit S H C D."""
    return (card.rank, _SUIT_INDEX.get(card.suit, 0))


def sort_cards(cards: Iterable[Card]) -> list[Card]:
    """Cards in canonical order."""
    return sorted(cards, key=sort_key)


def format_cards(cards: Iterable[Card]) -> list[str]:
    """Canonical notation of cards, in canonical order."""
    return [str(card) for card in sort_cards(cards)]


def card_points(card: Card, *, joker_points: bool = False) -> int:
    """Point value of a card: 5 → 5, 10 and K → 10, jokers 10 with joker_points."""
    if card.rank == FIVE:
        return FIVE_POINTS
    if card.rank in (TEN, KING):
        return TEN_POINTS
    if joker_points and card.rank >= SMALL_JOKER:
        return JOKER_POINTS
    return 0


def make_deck(packs: int, *, jokers: bool) -> list[Card]:
    """The full deck as a multiset in canonical order: 108, 104, 54 or 52 cards."""
    one_pack = [Card(rank, suit) for rank in NORMAL_RANKS for suit in SUITS]
    if jokers:
        one_pack += [SJ, BJ]
    return sort_cards(one_pack * packs)


# Canonical sort keys of every card, looked up rather than computed (sorting plays and hands is
# a hot path of both games): each card's place in canonical order, so `canonical_key` orders
# real cards exactly as `sort_key` does, and a sort compares small ints, not tuples.
_CANONICAL_KEYS: dict[Card, int] = {
    card: place for place, card in enumerate(sorted(make_deck(1, jokers=True), key=sort_key))
}
canonical_key = _CANONICAL_KEYS.__getitem__
