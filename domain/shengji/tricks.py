"""A table's trick rules: the rule book's (play.py), or the house options of formats.py.

`TrickRules.of(rules)` reads the four trick options of a ruleset (`lead_reading`,
`follow_duty`, `failed_throw_play`, `throw_evaluation`); the hand asks it to read a lead,
force a failed throw, check a follow, judge who is winning and list example follows. With
every option at its default it is exactly play.py.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from fiftyk_referee.domain.cards import Card
from fiftyk_referee.domain.errors import AnyReason
from fiftyk_referee.domain.game import Constraint
from fiftyk_referee.domain.shengji import formats
from fiftyk_referee.domain.shengji.cards import TrumpOrder
from fiftyk_referee.domain.shengji.combinations import THROW, Component
from fiftyk_referee.domain.shengji.play import (
    CANDIDATES,
    EXAMPLE_LIMIT,
    SUIT_NAMES,
    Lead,
    complete_follows,
    failed_throw,
    follow_constraint,
    follow_error,
    follow_examples,
    lead_of,
    make_lead,
    play_key,
)
from fiftyk_referee.domain.shengji.reasons import ShengjiReason

RULE_BOOK = "rule_book"
LARGEST_UNIT = "largest_unit"
MOST_OWED = "most_owed"
FORMAT_ORDER = "format_order"
LOWEST_COMPONENT = "lowest_component"
FIRST_BLOCKER = "first_blocker"
KEY_COMPONENT = "key_component"
THROW_EVALUATIONS = (KEY_COMPONENT, "all", "highest", "unit_length")


@dataclass(frozen=True)
class TrickRules:
    """The trick options of one table."""

    lead_reading: str = RULE_BOOK
    follow_duty: str = MOST_OWED
    failed_throw_play: str = LOWEST_COMPONENT
    throw_evaluation: str = KEY_COMPONENT

    @classmethod
    def of(cls, rules: object) -> TrickRules:
        """The trick options of a `ShengjiRules` (missing ones: the rule book's)."""
        return cls(**{name: getattr(rules, name) for name in
                      ("lead_reading", "follow_duty", "failed_throw_play", "throw_evaluation")
                      if hasattr(rules, name)})

    # -- leads ----------------------------------------------------------------------------

    def read(self, cards: Sequence[Card], order: TrumpOrder) -> Lead:
        """Read a lead (`INVALID_COMBINATION` when its cards span two suit groups)."""
        lead = make_lead(cards, order)  # checks the suit group whatever the reading
        if self.lead_reading == RULE_BOOK:
            return lead
        units = formats.read_units(cards, order)
        components = sorted((formats.to_component(u, order) for u in units),
                            key=lambda c: (-c.size, -c.width, -c.strength))
        kind = components[0].kind if len(components) == 1 else THROW
        return lead_of(kind, components, lead.group)

    def lead_constraint(self) -> str:
        """What a leader may play, in words."""
        forced = ("its lowest failed component" if self.failed_throw_play == LOWEST_COMPONENT
                  else "the first component the first seat able to beat one beats")
        return ("lead any cards of one suit group: one combination, or a throw (a throw that"
                f" another seat can beat plays {forced})")

    def forced(self, lead: Lead, others: Sequence[Sequence[Card]],
               order: TrumpOrder) -> Component | None:
        """The component a failed throw plays (None: the throw stands); `others` in play order."""
        if self.failed_throw_play == LOWEST_COMPONENT:
            return failed_throw(lead, others, order)
        units = [formats.to_unit(c) for c in lead.components]
        unit = formats.first_blocked(units, others, order)
        return None if unit is None else formats.to_component(unit, order)

    # -- following ------------------------------------------------------------------------

    def follow_error(self, hand: Sequence[Card], play: Sequence[Card], lead: Lead,
                     order: TrumpOrder, owed: formats.Format | None = None
                     ) -> tuple[AnyReason, str] | None:
        """Why `play` may not follow `lead`, or None (`owed`: the holding's owed format,
        when the caller has it already)."""
        if self.follow_duty == MOST_OWED:
            return follow_error(hand, play, lead, order)
        n = lead.size
        if len(play) != n:
            return ShengjiReason.WRONG_CARD_COUNT, f"the lead has {n} cards; play exactly {n}"
        held = order.in_group(hand, lead.group)
        in_suit = order.in_group(play, lead.group)
        name = SUIT_NAMES[lead.group]
        if len(held) >= n and len(in_suit) != n:
            return ShengjiReason.MUST_FOLLOW_SUIT, f"play {n} {name}: you hold {len(held)}"
        if len(held) < n and Counter(in_suit) != Counter(held):
            return ShengjiReason.MUST_FOLLOW_SUIT, f"play all your {len(held)} {name} first"
        if len(held) <= n:
            return None
        return formats.format_follow_error(held, in_suit, lead.components, order, owed)

    def constraints(self, hand: Sequence[Card], lead: Lead, order: TrumpOrder) -> tuple[str, ...]:
        """What a follower must play, in words."""
        words = follow_constraint(hand, lead, order).describe()
        if self.follow_duty == MOST_OWED:
            return words
        held = order.in_group(hand, lead.group)
        owed = formats.first_owed(held, lead.components, order) if len(held) > lead.size else None
        base = words[:2]
        if owed is None:
            return base
        return (*base, f"{SUIT_NAMES[lead.group]} making {formats.describe_format(owed)}"
                       " (the first format of the lead's sequence your hand can make)")

    def requirements(self, hand: Sequence[Card], lead: Lead,
                     order: TrumpOrder) -> tuple[Constraint, ...]:
        """What a follower must play, as records (kinds documented in docs/shengji.md)."""
        records = follow_constraint(hand, lead, order).requirements()
        if self.follow_duty == MOST_OWED:
            return records
        base = tuple(r for r in records if r.kind in ("count", "suit", "include"))
        held = order.in_group(hand, lead.group)
        owed = formats.first_owed(held, lead.components, order) if len(held) > lead.size else None
        if owed is None:
            return base
        shown = formats.witness(held, owed, order)
        return (*base, Constraint("format", count=len(shown), group=lead.group,
                                  cards=tuple(map(str, shown))))

    def examples(self, hand: Sequence[Card], lead: Lead,
                 order: TrumpOrder) -> tuple[list[list[Card]], bool]:
        """Bounded legal follows (each checked) and whether other legal follows exist."""
        if self.follow_duty == MOST_OWED:
            return follow_examples(hand, lead, order)
        held = sorted(order.in_group(hand, lead.group), key=order.sort_key)
        n = lead.size
        if len(held) <= n:
            return follow_examples(hand, lead, order)  # the suit rule alone decides
        owed = formats.first_owed(held, lead.components, order)
        base = formats.witness(held, owed, order) if owed is not None else []
        pool = sorted((Counter(held) - Counter(base)).elements(), key=order.sort_key)
        plays: list[list[Card]] = []
        seen: set[tuple[Card, ...]] = set()
        for extra in itertools.islice(itertools.combinations(pool, n - len(base)), CANDIDATES):
            cards = sorted([*base, *extra], key=order.sort_key)
            key = tuple(cards)
            if key in seen or self.follow_error(hand, cards, lead, order, owed) is not None:
                continue
            seen.add(key)
            plays.append(cards)
            if len(plays) == EXAMPLE_LIMIT:
                break
        others = order.not_in_group(hand, lead.group)
        return complete_follows(
            plays, held, others, n, order,
            lambda cards: self.follow_error(hand, cards, lead, order, owed) is None)

    # -- winning --------------------------------------------------------------------------

    def winner(self, plays: Sequence[Sequence[Card]], lead: Lead, order: TrumpOrder) -> int:
        """The index of the play winning so far; `plays[0]` is the lead (as played)."""
        if self.throw_evaluation == KEY_COMPONENT:
            best, best_key = 0, play_key(plays[0], lead, order)
            for index, play in enumerate(plays[1:], start=1):
                key = play_key(play, lead, order)
                if key is not None and (best_key is None or key > best_key):
                    best, best_key = index, key
            return best
        units = formats.engine_order([formats.to_unit(c) for c in lead.components], order)
        best, standing = 0, units
        for index, play in enumerate(plays[1:], start=1):
            beating = formats.beating_units(play, units, standing, lead.group,
                                            self.throw_evaluation, order)
            if beating is not None:
                best, standing = index, beating
        return best

    def key(self, play: Sequence[Card], lead: Lead, order: TrumpOrder) -> int | None:
        """The play's key under the rule book (recorded with a play that takes the lead)."""
        key = play_key(play, lead, order)
        if key is None:
            key = max(order.info[c].strength for c in play)
        return key


__all__ = ["THROW_EVALUATIONS", "TrickRules"]
