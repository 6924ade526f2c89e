"""Scripted hands: build the deck that deals chosen hands, then drive the Hand aggregate.

Card specs are the notation of docs/rules.md#cards plus one shorthand, `R*N`: N cards of rank
R (a bare rank `R` is one card of it). When building a deck the shorthand takes suits in the
order S H C D from the cards nobody named explicitly; when playing it takes the seat's own
cards of that rank (canonical order).
So `"3H 3*2 4*3"` is the ♥3, two more 3s and three 4s.

A script is one action per line, `seat: cards`, `seat: pass` or `seat: resign`; `#` starts a
comment.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from fiftyk_referee.domain.cards import SUITS, Card, make_deck, parse_card, sort_cards
from fiftyk_referee.domain.deal import deck_from_hands
from fiftyk_referee.domain.errors import RuleError
from fiftyk_referee.domain.fiftyk.hand import FIRST_LEAD_FALLBACK, Hand, lead_card_of
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset

TABLE_ID = "scripted"
REST = "..."  # last token of a spec: then every card nobody named, in canonical order


def _tokens(spec: str) -> list[str]:
    return spec.replace(",", " ").split()


def _rank_of(token: str) -> int:
    return parse_card(token + "S").rank if token not in ("SJ", "BJ") else parse_card(token).rank


def _wildcard(token: str) -> tuple[int, int] | None:
    """(rank, count) for `R*N` (a bare rank `R` is `R*1`), else None for a card."""
    if "*" not in token:
        try:
            parse_card(token)
        except RuleError:
            return _rank_of(token.upper()), 1
        return None
    rank, _, count = token.partition("*")
    return _rank_of(rank.upper()), int(count)


def _take_rank(pool: Counter[Card], rank: int, count: int, what: str) -> list[Card]:
    taken: list[Card] = []
    candidates = [c for c in sort_cards(pool.elements()) if c.rank == rank]
    by_suit = sorted(candidates, key=lambda c: SUITS.index(c.suit) if c.suit else 0)
    for card in by_suit[:count]:
        pool[card] -= 1
        taken.append(card)
    if len(taken) != count:
        raise ValueError(f"{what}: only {len(taken)} cards of rank {rank} left, not {count}")
    return taken


def _take_card(pool: Counter[Card], card: Card, what: str) -> Card:
    if pool[card] <= 0:
        raise ValueError(f"{what}: {card} is not (or no longer) available")
    pool[card] -= 1
    return card


def build_deck(ruleset: Ruleset, hands: Sequence[str | None], stock: str | None = None, *,
               dealer: int | None = None) -> list[str]:
    """The preset deck that deals `hands` (and, in 5/6-card games, the stock in order).

    One hand (or the stock) may be None, or end with `...`: it receives every card the others
    did not name, in canonical order. Explicit cards are reserved first, then the `R*N`
    shorthands in order.
    """
    players = len(hands)
    dealer = players - 1 if dealer is None else dealer
    pool: Counter[Card] = Counter(make_deck(ruleset.packs, jokers=ruleset.jokers))
    specs = [*hands, stock if ruleset.has_stock else ""]
    if not ruleset.has_stock and stock:
        raise ValueError("only 5/6-card games have a stock")
    resolved: list[list[Card | tuple[int, int] | None]] = []
    for index, spec in enumerate(specs):
        row: list[Card | tuple[int, int] | None] = []
        for token in _tokens(spec or ""):
            if token == REST:
                continue
            wild = _wildcard(token)
            row.append(wild if wild is not None else _take_card(pool, parse_card(token),
                                                                f"spec {index}"))
        resolved.append(row)
    cards: list[list[Card] | None] = []
    for index, (spec, row) in enumerate(zip(specs, resolved, strict=True)):
        if spec is None:
            cards.append(None)
            continue
        out: list[Card] = []
        for item in row:
            if isinstance(item, Card):
                out.append(item)
            elif item is not None:
                out.extend(_take_rank(pool, item[0], item[1], f"spec {index}"))
        cards.append(out)
    rest = sort_cards(pool.elements())
    takers = [i for i, spec in enumerate(specs) if spec is None or _tokens(spec)[-1:] == [REST]]
    if len(takers) > 1:
        raise ValueError("at most one hand (or the stock) may take the rest")
    if not takers and rest:
        raise ValueError(f"cards left over: {' '.join(str(c) for c in rest)}")
    filled = [(c or []) + (rest if i in takers else []) for i, c in enumerate(cards)]
    lead = lead_card_of(ruleset.first_lead if ruleset.first_lead.startswith("holder")
                        else FIRST_LEAD_FALLBACK)
    deck = deck_from_hands(filled[:players], filled[players], dealer, lead)
    return [str(c) for c in deck]


def ruleset_for(preset: str, **options: Any) -> Ruleset:
    """A preset with option overrides."""
    return Ruleset.from_spec(preset, options)


def deal(preset: str, hands: Sequence[str | None], stock: str | None = None, *,
         dealer: int | None = None, **options: Any) -> Hand:
    """A hand dealt from the deck that gives each seat the named cards."""
    ruleset = ruleset_for(preset, **options)
    players = len(hands)
    dealer = players - 1 if dealer is None else dealer
    deck = build_deck(ruleset, hands, stock, dealer=dealer)
    return Hand.deal_new(table_id=TABLE_ID, number=1, ruleset=ruleset, players=players,
                         dealer=dealer, deck=deck)


def resolve(cards: Sequence[Card], spec: str) -> list[str]:
    """The cards a play spec names from a seat's hand (`R*N` takes that seat's cards)."""
    pool: Counter[Card] = Counter(cards)
    chosen: list[Card] = []
    for token in _tokens(spec):
        wild = _wildcard(token)
        if wild is None:
            chosen.append(parse_card(token))
        else:
            chosen.extend(_take_rank(pool, wild[0], wild[1], f"play {spec!r}"))
    return [str(c) for c in chosen]


def act(hand: Hand, seat: int, action: str) -> None:
    """One action: `pass`, `resign`, or a play spec resolved against the seat's hand."""
    action = action.strip()
    if action == "pass":
        hand.pass_turn(seat)
    elif action == "resign":
        hand.resign(seat)
    else:
        hand.play(seat, resolve(hand.hands[seat], action))


def _lines(script: str) -> list[tuple[int, str]]:
    """(seat, action) for every line of a script."""
    steps = []
    for number, raw in enumerate(script.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        seat_text, sep, action = line.partition(":")
        if not sep:
            raise ValueError(f"script line {number}: {raw!r} is not `seat: action`")
        steps.append((int(seat_text), action.strip()))
    return steps


def run(hand: Hand, script: str) -> None:
    """Apply every line of a script (see the module docstring)."""
    for seat, action in _lines(script):
        act(hand, seat, action)


def transcript_actions(hand: Hand, script: str) -> list[dict[str, Any]]:
    """A script's actions in transcript form, playing them on `hand` to resolve card specs."""
    actions: list[dict[str, Any]] = []
    for seat, action in _lines(script):
        if action in ("pass", "resign"):
            actions.append({"seat": seat, action: True})
        else:
            actions.append({"seat": seat, "play": resolve(hand.hands[seat], action)})
        act(hand, seat, action)
    return actions


def bomb_train(seat: int, ranks: str, passers: Sequence[int], size: int = 4) -> str:
    """Script lines: `seat` leads a bomb of each rank in turn and `passers` pass each time."""
    lines = []
    for rank in ranks.split():
        lines.append(f"{seat}: {rank}*{size}")
        lines.extend(f"{p}: pass" for p in passers)
    return "\n".join(lines)
