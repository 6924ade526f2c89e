"""`Act` with `validate_only` answers only what the caller may already see.

A dry run answers the refusal the action would get, or the caller's view of the hand as it
stands (never the view the action would leave: a hand-ending action's view holds the result
and the deal's seed, which opens the commitment and so every hidden card). The game judges
the action on the caller's own cards and the public state alone: a Shengji throw is checked
for its form, never against the other seats' cards. Tried for every kind of action of every
built-in game, at every moment of hands, hand-ending actions included.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from fiftyk_referee.domain.deal import shuffled
from fiftyk_referee.domain.games import hosted
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.service.games.shengji import client as shengji_calls
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import error_details, error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e.harness import LiveServer, Seated
from tests.unit.shengji.helpers import deck_for

COMPLETED = pb.HAND_STATUS_COMPLETED
MAX_STEPS = 400
HEX_64 = re.compile(rb"[0-9a-f]{64}")
CARD = re.compile(r"\b(?:10|[2-9JQKA])[SHCD]\b|\b[SB]J\b")


def seated(server: LiveServer, game: str, preset: str, players: int, *,
           options: dict[str, Any] | None = None, preset_deck: bool = False) -> Seated:
    """A table of `game` with a player in every seat."""
    platform = server.platform()
    table = platform.create_table(preset, players, game=game, options=options,
                                  allow_preset_deck=preset_deck).table
    tokens = [platform.join_table(table.table_id, f"dry-{table.table_id[:8]}-{seat}",
                                  seat).seat_token for seat in range(players)]
    return Seated(table.table_id, players, tokens,
                  [server.client(token=token) for token in tokens], platform)


def wire(message: Any) -> bytes:
    """A message's deterministic bytes."""
    data: bytes = message.SerializeToString(deterministic=True)
    return data


def opens_commitment(game: str, preset: str, view: pb.HandView, text: bytes) -> bool:
    """The attacker's try: does any hex seed found in `text` open the deal's commitment
    (shuffle the canonical deck with it and hash as the referee did)?"""
    chosen = hosted()[game]
    base = chosen.base_deck(chosen.rules(preset))
    for found in set(HEX_64.findall(text)):
        _, digest = shuffled(bytes.fromhex(found.decode()), base, hand_id=view.hand_id,
                             contributions=None)
        if digest == view.deal_commitment:
            return True
    return False


@dataclass
class DryRuns:
    """Every dry run's answer bytes and refusal texts, to search for the seed afterwards."""

    answers: list[bytes] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    accepted: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)

    def run(self, client: RefereeClient, before: pb.HandView, kind: str,
            cards: tuple[str, ...], value: str | None = None) -> None:
        """One dry run on the hand the caller sees as `before`: an accepted one answers that
        view (nothing more), a refused one names only cards the caller sees or sent."""
        table_id, hand_id = before.table_id, before.hand_id
        try:
            answer = client.act(table_id, hand_id, kind, cards, value=value,
                                validate_only=True)
        except grpc.RpcError as error:
            details = error_details(error)
            text = " ".join([details.message, *details.metadata.values()])
            self.refusals.append(text)
            self.refused.add(kind)
            allowed = set(CARD.findall(str(before))) | set(cards)
            assert set(CARD.findall(text)) <= allowed, (kind, cards, text)
        else:
            self.answers.append(wire(answer))
            self.accepted.add(kind)
            assert answer.validated and not answer.replayed
            assert wire(answer.hand) == wire(before), (kind, cards)  # the view as it stands
            assert answer.version == before.version
            assert answer.hand.status != COMPLETED and not answer.hand.HasField("deal_seed")
            assert not answer.hand.HasField("result")
            assert not answer.hand.shengji.HasField("result")

    def sweep(self, game: str, client: RefereeClient, table_id: str, hand_id: str) -> None:
        """Dry runs of every kind of the game, by one seat, at this moment."""
        before = client.hand_view(table_id, hand_id)
        for kind, cards, value in choices(game, client, before):
            self.run(client, before, kind, cards, value)
        assert wire(client.hand_view(table_id, hand_id)) == wire(before)  # nothing recorded


def choices(game: str, client: RefereeClient, view: pb.HandView
            ) -> Iterator[tuple[str, tuple[str, ...], str | None]]:
    """Every kind of the game, with cards the seat holds or may play (and none), and values
    in and out of range for a kind that takes one (斗地主's bid)."""
    legal = client.legal_plays(view.table_id, view.hand_id, max_plays=1)
    own = list(view.own_cards)
    for spec in hosted()[game].action_kinds:
        if spec.takes_value:
            for value in ("1", "3", "9"):
                yield spec.kind, (), value
        if not spec.takes_cards:
            yield spec.kind, (), None
            continue
        for play in legal.plays:
            yield spec.kind, tuple(play.cards), None
        yield spec.kind, tuple(own[:2]), None
        yield spec.kind, (), None


def step(game: str, table: Seated, hand_id: str, rng: random.Random) -> pb.HandView:
    """One real, legal action of the seat the hand waits for."""
    for seat in range(table.players):
        client = table.seats[seat]
        legal = client.legal_plays(table.table_id, hand_id)
        if pb.ACTION_KIND_DECLARE in legal.actions:
            if seat in client.hand_view(table.table_id, hand_id).shengji.spoken:
                continue
            return shengji_calls.declare(client, table.table_id, hand_id).hand
        if pb.ACTION_KIND_BURY in legal.actions:
            return shengji_calls.bury(client, table.table_id, hand_id, legal.plays[0].cards).hand
        spoken = sorted(set(legal.kinds) & {"bid", "call", "rob"})  # 斗地主's bidding
        if spoken:
            if rng.random() < 0.5:
                return client.act(table.table_id, hand_id, spoken[0],
                                  value="3" if spoken[0] == "bid" else None).hand
            return client.act(table.table_id, hand_id, "pass").hand
        if legal.may_pass and (not legal.plays or rng.random() < 0.3):
            return client.pass_turn(table.table_id, hand_id).hand
        if legal.plays:
            return client.play(table.table_id, hand_id, rng.choice(legal.plays).cards).hand
    raise AssertionError("nobody had anything to do in a hand in progress")


# (game, preset, players, options, real resigns first): a two-seat five-card hand (resigning,
# open to the seat not on turn, ends it), a four-seat hand after one seat resigned (its
# partner's resign would end it) and a Shengji hand; each played to its end.
SWEEPS = [("fiftyk", "five_card", 2, None, ()),
          ("fiftyk", "classic", 4, None, (0,)),
          ("shengji", "shengji_one_pack", 4, {"declare_pacing": "final"}, ()),
          ("doudizhu", "classic", 3, None, ()),
          ("doudizhu", "rob", 3, None, ())]
# The kinds no moment of a hand accepts: nobody resigns in Shengji (docs/shengji.md); a 斗地主
# room bids by points or by calls and robs, never both (docs/doudizhu.md#bidding).
NEVER_ACCEPTED = {("shengji", "shengji_one_pack"): {"resign"},
                  ("doudizhu", "classic"): {"call", "rob"}, ("doudizhu", "rob"): {"bid"}}


@pytest.mark.parametrize(("game", "preset", "players", "options", "resigns"), SWEEPS,
                         ids=["fiftyk-five_card", "fiftyk-classic", "shengji", "doudizhu-classic",
                              "doudizhu-rob"])
def test_every_dry_run_of_every_kind_answers_only_what_the_caller_sees(
        server: LiveServer, game: str, preset: str, players: int,
        options: dict[str, Any] | None, resigns: tuple[int, ...]) -> None:
    table = seated(server, game, preset, players, options=options)
    hand = table.platform.start_hand(table.table_id).hand
    for seat in resigns:
        table.seats[seat].resign(table.table_id, hand.hand_id)
    runs, rng, steps = DryRuns(), random.Random(24), 0
    while hand.status != COMPLETED:
        steps += 1
        assert steps < MAX_STEPS, "the hand did not end"
        turn = hand.turn_seat if hand.HasField("turn_seat") else 0
        for seat in {turn, (turn + 1) % players}:  # the seat on turn, and one that is not
            runs.sweep(game, table.seats[seat], table.table_id, hand.hand_id)
        if game == "fiftyk" and players == 4 and steps == 12:
            hand = table.seats[2].resign(table.table_id, hand.hand_id).hand  # ends it
        else:
            hand = step(game, table, hand.hand_id, rng)
    runs.sweep(game, table.seats[1], table.table_id, hand.hand_id)  # every kind: HAND_OVER
    # Every kind was tried both ways; then the seed, now revealed, is in no dry run's answer.
    kinds = {spec.kind for spec in hosted()[game].action_kinds}
    assert runs.refused == kinds
    assert runs.accepted == kinds - NEVER_ACCEPTED.get((game, preset), set())
    final = table.seats[0].hand_view(table.table_id, hand.hand_id)
    seed = final.deal_seed
    assert seed and opens_commitment(game, preset, final, seed.encode())  # the probe works
    everything = b"".join(runs.answers) + " ".join(runs.refusals).encode()
    assert seed.encode() not in everything
    assert not opens_commitment(game, preset, final, everything)


@pytest.mark.parametrize(("preset", "players", "first_resign"), [("classic", 4, 0),
                                                                 ("five_card", 2, None)])
def test_probe_a_dry_run_resign_does_not_open_the_deal_commitment(
        server: LiveServer, preset: str, players: int, first_resign: int | None) -> None:
    """The red-team probe of issue 24: after one seat resigns (classic), or right after the
    deal at a two-seat table (five_card), a seat's dry-run resign would end the hand. Its
    answer must not carry the seed that opens the commitment."""
    table = seated(server, "fiftyk", preset, players)
    dealt = table.platform.start_hand(table.table_id).hand
    if first_resign is not None:
        table.seats[first_resign].resign(table.table_id, dealt.hand_id)
    prober = (first_resign + 2) % players if first_resign is not None else (
        (dealt.turn_seat + 1) % players)  # the resigner's partner; the seat not on turn
    client = table.seats[prober]
    answer = client.act(table.table_id, dealt.hand_id, "resign", validate_only=True)
    assert answer.validated
    assert not opens_commitment("fiftyk", preset, answer.hand, wire(answer))
    assert not answer.hand.HasField("deal_seed") and not answer.hand.HasField("result")
    assert answer.hand.status != COMPLETED
    assert wire(answer.hand) == wire(client.hand_view(table.table_id, dealt.hand_id))
    # The real resign ends the hand, and only then does the seed open the commitment.
    ended = client.resign(table.table_id, dealt.hand_id).hand
    assert ended.status == COMPLETED
    assert opens_commitment("fiftyk", preset, ended, ended.deal_seed.encode())


THROW = ("AC", "QC", "QC")
LEADER = "AC AC QC QC 3S 4S 6S 7S 8S 9S JS 3H 4H 6H 7H 8H 9H JH 3D 4D 6D 7D 8D 9D JD"
KITTY = "5S 5S 5H 5H 5D 5D 5C 5C"


def throw_table(server: LiveServer, opponent_holds_kings: bool
                ) -> tuple[Seated, str, Callable[[], pb.ActResponse]]:
    """A Shengji table whose seat 0 deals and is about to lead `AC QC QC`, holding the other
    AC; seat 1 holds `KC KC` (the throw fails) or the kings are split (it stands). The
    leader's cards and the kitty are the same at both tables."""
    rules = ShengjiRules.from_spec("tractor")
    others = {1: "KC KC"} if opponent_holds_kings else {1: "2S 2S", 2: "KC", 3: "KC"}
    deck = deck_for(rules, {0: LEADER, **others}, kitty=KITTY, seed=11)
    table = seated(server, "shengji", "tractor", 4, options={"declare_pacing": "final"},
                   preset_deck=True)
    hand_id = table.platform.start_hand(table.table_id, deck=deck).hand.hand_id
    for seat in range(4):
        # nobody declares: seat 0 deals
        shengji_calls.declare(table.seats[seat], table.table_id, hand_id)
    shengji_calls.bury(table.seats[0], table.table_id, hand_id, KITTY.split())
    leader = table.seats[0]
    assert sorted(leader.hand_view(table.table_id, hand_id).own_cards) == sorted(LEADER.split())
    return table, hand_id, lambda: leader.act(table.table_id, hand_id, "play", THROW,
                                              validate_only=True)


def without_ids(answer: pb.ActResponse) -> bytes:
    """The answer's bytes, but for what differs between two tables anyway (their ids, the
    deal's commitment)."""
    copy = pb.ActResponse()
    copy.CopyFrom(answer)
    copy.hand.ClearField("hand_id")
    copy.hand.ClearField("table_id")
    copy.hand.ClearField("deal_commitment")
    return wire(copy)


def test_a_dry_run_throw_answers_alike_whatever_the_opponents_hold(
        server: LiveServer) -> None:
    standing, standing_hand, dry_standing = throw_table(server, opponent_holds_kings=False)
    failing, failing_hand, dry_failing = throw_table(server, opponent_holds_kings=True)
    first, second = dry_standing(), dry_failing()
    assert first.validated and second.validated
    assert without_ids(first) == without_ids(second)  # byte for byte
    assert dry_standing() == first  # and again: nothing to learn by repeating it
    assert not first.hand.trick  # the trick as it stands: nothing led yet
    # The real throws differ: one stands, the other fails on seat 1's KC KC.
    led = standing.seats[0].play(standing.table_id, standing_hand, THROW).hand
    forced = failing.seats[0].play(failing.table_id, failing_hand, THROW).hand
    assert sorted(led.trick[0].cards) == sorted(THROW)
    assert sorted(forced.trick[0].cards) != sorted(THROW)


@pytest.mark.parametrize(("game", "preset", "players", "kinds"), [
    ("fiftyk", "classic", 4, "play, pass, resign"),
    ("shengji", "tractor", 4, "declare, bury, play, resign")])
def test_an_unknown_kind_is_refused_naming_the_games_kinds(
        server: LiveServer, game: str, preset: str, players: int, kinds: str) -> None:
    table = seated(server, game, preset, players)
    hand = table.platform.start_hand(table.table_id).hand
    client = table.seats[hand.turn_seat]
    card = client.hand_view(table.table_id, hand.hand_id).own_cards[0]
    for validate_only in (False, True):
        with pytest.raises(grpc.RpcError) as refused:
            client.act(table.table_id, hand.hand_id, "Play", [card],
                       validate_only=validate_only)
        details = error_details(refused.value)
        assert (details.code, details.reason) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                  "INVALID_ACTION")
        assert kinds in details.message and "lower case" in details.message
        assert details.metadata["kinds"] == kinds and details.metadata["kind"] == "Play"


def test_a_shengji_play_during_the_declarations_names_the_phase(server: LiveServer) -> None:
    table = seated(server, "shengji", "tractor", 4)
    hand = table.platform.start_hand(table.table_id).hand
    assert hand.shengji.phase == "declaring"
    for seat in range(4):
        client = table.seats[seat]
        card = client.hand_view(table.table_id, hand.hand_id).own_cards[0]
        for validate_only in (False, True):
            with pytest.raises(grpc.RpcError) as refused:
                client.act(table.table_id, hand.hand_id, "play", [card],
                           validate_only=validate_only)
            code, reason, message = error_reason(refused.value)
            assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                      "DECLARATIONS_OPEN")
            assert "declaration" in message
