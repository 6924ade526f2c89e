"""Every reason code and status code the API returns, and every kind of auth failure.

Each case provokes one error through a real channel and checks the rich status: the gRPC
code, exactly one `ErrorInfo` in the `fiftyk.referee.v1` domain with the expected reason,
and a `BadRequest` naming the field where the request field is known. A final check keeps
the case list complete: every reason code is provoked here or listed as unreachable through
the API, with the reason why.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from fiftyk_referee.domain.cards import parse_cards
from fiftyk_referee.domain.doudizhu.reasons import DoudizhuReason
from fiftyk_referee.domain.errors import Reason
from fiftyk_referee.domain.fiftyk.combinations import beats, classify
from fiftyk_referee.domain.fiftyk.reasons import FiftykReason
from fiftyk_referee.domain.fiftyk.rulesets import Ruleset
from fiftyk_referee.domain.shengji.reasons import ShengjiReason
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.service.core.bundles import installed
from fiftyk_referee.service.errors import ServiceReason
from fiftyk_referee.service.games.shengji import client as shengji_calls
from fiftyk_referee.service.grpc.auth import issue_seat_token
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.errors import ERROR_DOMAIN, error_details, error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_TOKEN_SECRET
from fiftyk_referee.service.trust.signing import Signer
from fiftyk_referee.service.trust.witness import cosignature_body
from tests.e2e.harness import LiveServer, Seated, seat_bots, seeded_deck
from tests.unit.shengji.helpers import deck_for

Code = grpc.StatusCode

# Reason codes no RPC can return, and why (the coverage check below holds the list to this).
UNREACHABLE: dict[str, str] = {
    Reason.INVALID_ACTION: "Adjudicate rules on a malformed action (result.rejected.reason),"
                           " checked in test_a_malformed_transcript_action_is_a_ruling",
    Reason.CARD_NOT_IN_DECK: "only `fiftyk rules` checks cards against a deck; a play of a"
                             " card the deck lacks is CARDS_NOT_IN_HAND",
    Reason.NO_TIMEOUT_CONFIGURED: "only the turn clock times turns out, and only clocked hands",
    Reason.TURN_NOT_EXPIRED: "only the turn clock times turns out, and only expired turns",
    ServiceReason.CONCURRENT_UPDATE: "needs racing writers: test_concurrency.py provokes it",
    ServiceReason.STALE_VERSION: "Act with an expected_version: test_act.py provokes it",
    ShengjiReason.WRONG_WINDOW: "a Shengji declaration naming a closed window: test_act.py",
    ServiceReason.EVENTS_TAMPERED: "needs stored events edited behind the referee's back:"
                                   " test_fairness.py tampers with them",
    ServiceReason.LIMIT_EXCEEDED: "needs open watch streams at a limit: test_limits.py",
    Reason.NO_DRAW_OPEN: "a contribution to a seat-entropy table with no draw open:"
                         " test_seat_entropy.py provokes it",
    Reason.INVALID_ENTROPY: "a contribution of the wrong size, or a window out of range:"
                            " test_seat_entropy.py provokes it",
    Reason.ENTROPY_ALREADY_SENT: "a seat's second contribution to one draw:"
                                 " test_seat_entropy.py provokes it",
    Reason.ENTROPY_WINDOW_CLOSED: "a contribution after the draw's deadline but before the"
                                  " turn clock deals: a race, pinned in"
                                  " tests/unit/test_seat_entropy.py",
    Reason.ENTROPY_COMMIT_FIRST: "bytes before a commitment at a commit-then-reveal table:"
                                 " test_commit_reveal.py and test_rpc_matrix.py provoke it",
    Reason.ENTROPY_REVEAL_NOT_OPEN: "a reveal while other seats may still commit:"
                                    " test_rpc_matrix.py provokes it",
    Reason.ENTROPY_MISMATCH: "bytes that do not open the seat's commitment:"
                             " test_commit_reveal.py provokes it",
    Reason.INVALID_SEAT_KEY: "a seat key that is not 32 bytes: test_rpc_matrix.py provokes it",
    Reason.ENTROPY_SIGNATURE_REQUIRED: "a keyed seat's commitment without its signature:"
                                       " test_rpc_matrix.py, test_commit_reveal.py",
    Reason.ENTROPY_SIGNATURE_INVALID: "a keyed seat's commitment signed by another key:"
                                      " test_rpc_matrix.py, test_commit_reveal.py",
    ServiceReason.RATE_LIMITED: "needs a credential over its rate: test_limits.py",
    ServiceReason.REQUEST_TIMEOUT: "needs a request that never arrives, which a gRPC client"
                                   " cannot send: test_transport_limits.py sends raw HTTP/2",
    ServiceReason.STORE_UNAVAILABLE: "needs the database down: test_store_outage.py",
    ServiceReason.SHUTTING_DOWN: "needs a server shutting down: test_server_lifecycle.py ends"
                                 " open watch streams with it",
}
# Every status code the API documents, besides ABORTED (test_concurrency.py).
STATUS_CODES = {Code.INVALID_ARGUMENT, Code.FAILED_PRECONDITION, Code.NOT_FOUND,
                Code.ALREADY_EXISTS, Code.UNAUTHENTICATED, Code.PERMISSION_DENIED,
                Code.RESOURCE_EXHAUSTED}
RULES = Ruleset.from_spec("classic")
SHENGJI = "shengji"
ONE_WINDOW = {"declare_pacing": "final"}  # one declaration window: fewer setup commands


@dataclass
class ShengjiTable:
    """A Shengji table (four bots, preset decks allowed) and its first hand's id."""

    seated: Seated
    hand_id: str

    def act(self, seat: int) -> tuple[RefereeClient, str, str]:
        """A seat's client, the table id and the hand id (for one command)."""
        return self.seated.seats[seat], self.seated.table_id, self.hand_id

    def cards(self, seat: int) -> list[str]:
        """The cards a seat holds now."""
        client, table_id, hand_id = self.act(seat)
        return list(client.hand_view(table_id, hand_id).own_cards)


@dataclass
class ShengjiTables:
    """Shengji hands in the states the Shengji reason codes need (the dealer is seat 0)."""

    declaring: ShengjiTable  # round 1 dealt: seat 0 declared 2S, seat 1 holds 2H, seat 2 3S
    burying: ShengjiTable  # `bury_points=false`: seat 0 took the kitty, holds 5S
    tractor_led: ShengjiTable  # seat 0 led 3S3S4S4S; seat 1 holds 7S7S8S8S9S10S and 5H
    pair_led: ShengjiTable  # seat 0 led 3S3S; seat 1 holds 7S7S9S
    triple_led: ShengjiTable  # titanic: seat 0 led 3S3S3S; seat 1 holds 7S7S7S9S


@dataclass(frozen=True)
class DoudizhuSpot:
    """A 斗地主 hand at a point of its bidding: the client of the seat to speak next."""

    client: RefereeClient
    table_id: str
    hand_id: str
    cards: list[str]  # that seat's cards

    def act(self, kind: str, value: str | None = None) -> Any:
        """The seat acts `kind` (`play`: its first card)."""
        cards = self.cards[:1] if kind == "play" else []
        return self.client.act(self.table_id, self.hand_id, kind, cards, value=value)


# 斗地主 hands, each after these words of the bidding (its preset, the words in turn).
DOUDIZHU_SPOTS: dict[str, tuple[str, list[tuple[str, str | None]]]] = {
    "dealt": ("classic", []), "bid_2": ("classic", [("bid", "2")]),
    "landlord": ("classic", [("bid", "3")]), "rob_dealt": ("rob", []),
    "called": ("rob", [("call", None)]),
}


def _doudizhu_spots(server: LiveServer, platform: RefereeClient) -> dict[str, DoudizhuSpot]:
    found: dict[str, DoudizhuSpot] = {}
    for name, (preset, words) in DOUDIZHU_SPOTS.items():
        table_id = platform.create_table(preset, 3, game="doudizhu").table.table_id
        seats = [server.client(token=platform.join_table(table_id, f"ddz-{name}-{s}",
                                                         s).seat_token) for s in range(3)]
        view = platform.start_hand(table_id).hand
        for word, points in words:
            view = seats[view.turn_seat].act(table_id, view.hand_id, word, value=points).hand
        seat = seats[view.turn_seat]
        found[name] = DoudizhuSpot(seat, table_id, view.hand_id,
                                   list(seat.hand_view(table_id, view.hand_id).own_cards))
    return found


@dataclass
class Arena:
    """Tables in the states the cases need (all classic, four seats)."""

    server: LiveServer
    platform: RefereeClient
    audit: RefereeClient
    anonymous: RefereeClient
    fresh: Seated  # a hand dealt, nobody acted yet
    fresh_hand: pb.HandView
    led: Seated  # the leader led its highest single; the seat after the next resigned
    led_hand: pb.HandView
    spare: Seated  # full, no hand yet, preset decks allowed
    partial: Seated  # three of four seats taken (seat 3 free)
    idle: Seated  # full, no hand yet, no preset decks
    over: Seated  # `hands: 1`, its hand ended by resignations; seat 2 left afterwards
    over_hand_id: str
    sj: ShengjiTables
    aborted: Seated  # a hand dealt, the next seat's token reissued, then aborted
    aborted_hand: pb.HandView
    # 斗地主 hands at the points its reason codes need, by name (`DOUDIZHU_SPOTS`).
    ddz: dict[str, DoudizhuSpot] = field(default_factory=dict)

    def seat(self, table: Seated, hand: pb.HandView, offset: int = 0) -> RefereeClient:
        """The client of the seat `offset` places after the seat to act."""
        return table.seats[(hand.turn_seat + offset) % table.players]

    def own_cards(self, table: Seated, hand: pb.HandView, offset: int = 0) -> list[str]:
        """The cards of that seat."""
        return list(self.seat(table, hand, offset).hand_view(table.table_id).own_cards)


def _spectator_at_a_ranked_table(a: Arena) -> object:
    table = a.platform.create_table("classic", 4,
                                    spectators=pb.SpectatorPolicy(ranked=True)).table
    token = a.platform.issue_spectator_token(table.table_id).spectator_token
    return a.server.client(token=token).hand_view(table.table_id)


def _rank(card: str) -> int:
    return classify(parse_cards([card]), RULES).rank


def _shengji_hand(server: LiveServer, preset: str, options: dict[str, Any],
                  hands: dict[int, str], prefix: str) -> ShengjiTable:
    """A first Shengji hand dealt from a deck giving `hands` their cards first."""
    platform = server.platform()
    table = platform.create_table(preset, 4, options=options, allow_preset_deck=True,
                                  game=SHENGJI).table
    tokens = [platform.join_table(table.table_id, f"{prefix}-{seat}", seat).seat_token
              for seat in range(4)]
    seated = Seated(table.table_id, 4, tokens, [server.client(token=t) for t in tokens],
                    platform)
    deck = deck_for(ShengjiRules.from_spec(preset, options), hands)
    return ShengjiTable(seated, platform.start_hand(table.table_id, deck=deck).hand.hand_id)


def _to_burying(table: ShengjiTable) -> ShengjiTable:
    """Every seat declares nothing in the one window: seat 0 deals and takes the kitty."""
    for seat in range(4):
        client, table_id, hand_id = table.act(seat)
        shengji_calls.declare(client, table_id, hand_id)
    return table


def _led(server: LiveServer, preset: str, dealer_cards: str, follower_cards: str,
         prefix: str) -> ShengjiTable:
    """Seat 0 buried cards it does not lead and led `dealer_cards`; seat 1 is to follow."""
    table = _to_burying(_shengji_hand(server, preset, ONE_WINDOW,
                                      {0: dealer_cards, 1: follower_cards}, prefix))
    rest = Counter(table.cards(0))
    rest.subtract(dealer_cards.split())
    dealer, table_id, hand_id = table.act(0)
    kitty = ShengjiRules.from_spec(preset, ONE_WINDOW).kitty_size
    shengji_calls.bury(dealer, table_id, hand_id, list(rest.elements())[:kitty])
    dealer.play(table_id, hand_id, dealer_cards.split())
    return table


def _shengji_tables(server: LiveServer) -> ShengjiTables:
    declaring = _shengji_hand(server, "tractor", {}, {0: "2S", 1: "2H", 2: "3S"}, "sj-declare")
    client, table_id, hand_id = declaring.act(0)
    shengji_calls.declare(client, table_id, hand_id, ["2S"])
    burying = _to_burying(_shengji_hand(server, "tractor", {**ONE_WINDOW, "bury_points": False},
                                        {0: "5S"}, "sj-bury"))
    return ShengjiTables(
        declaring, burying,
        _led(server, "tractor", "3S 3S 4S 4S", "7S 7S 8S 8S 9S 10S 5H", "sj-tractor"),
        _led(server, "tractor", "3S 3S", "7S 7S 9S", "sj-pair"),
        _led(server, "titanic", "3S 3S 3S", "7S 7S 7S 9S", "sj-triple"))


@pytest.fixture(scope="module")
def arena(server: LiveServer) -> Arena:
    """Set the tables up through the API."""
    platform = server.platform()
    fresh = seat_bots(server, "classic", 4, allow_preset_deck=True, prefix="fresh")
    fresh_hand = platform.start_hand(fresh.table_id, deck=seeded_deck("classic", 21)).hand
    led = seat_bots(server, "classic", 4, allow_preset_deck=True, prefix="led")
    led_hand = platform.start_hand(led.table_id, deck=seeded_deck("classic", 22)).hand
    leader = led.seats[led_hand.turn_seat]
    highest = max(leader.hand_view(led.table_id).own_cards, key=_rank)
    led_hand = leader.play(led.table_id, led_hand.hand_id, [highest]).hand
    led.seats[(led_hand.turn_seat + 1) % 4].resign(led.table_id, led_hand.hand_id)
    spare = seat_bots(server, "classic", 4, allow_preset_deck=True, prefix="spare")
    partial = seat_bots(server, "classic", 4, prefix="partial")
    platform.leave_table(partial.table_id, 3)
    idle = seat_bots(server, "classic", 4, prefix="idle")
    over = seat_bots(server, "classic", 4, options={"hands": 1}, prefix="over")
    over_hand = platform.start_hand(over.table_id).hand
    for seat in (1, 3):  # one whole team resigns: the hand ends
        over.seats[seat].resign(over.table_id, over_hand.hand_id)
    platform.leave_table(over.table_id, 2)
    aborted = seat_bots(server, "classic", 4, prefix="aborted")
    aborted_hand = platform.start_hand(aborted.table_id).hand
    platform.reissue_seat_token(aborted.table_id, (aborted_hand.turn_seat + 1) % 4)
    platform.abort_table(aborted.table_id, "test")
    return Arena(server, platform, server.audit(), server.client(), fresh, fresh_hand, led,
                 led_hand, spare, partial, idle, over, over_hand.hand_id,
                 _shengji_tables(server), aborted, aborted_hand,
                 _doudizhu_spots(server, platform))


@dataclass(frozen=True)
class Case:
    """One provoked error: the call, and the status code and reason it must fail with."""

    name: str
    code: grpc.StatusCode
    reason: str
    call: Callable[[Arena], Any]
    field: str | None = None  # the BadRequest field violation expected, if any


def _tampered(token: str) -> str:
    """The token with its payload's seat changed and the signature kept."""
    version, body, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["seat"] = (claims["seat"] + 1) % 4
    forged = base64.urlsafe_b64encode(json.dumps(claims, separators=(",", ":"),
                                                 sort_keys=True).encode()).rstrip(b"=")
    return f"{version}.{forged.decode()}.{signature}"


def _with_header(a: Arena, header: tuple[str, str]) -> Any:
    stub = a.platform.stub
    return stub.GetTable(pb.GetTableRequest(table_id=a.idle.table_id), metadata=(header,),
                         timeout=10)


def _first(stream: Iterator[pb.WatchTableResponse]) -> pb.WatchTableResponse:
    return next(iter(stream))


def _lowest_follow(a: Arena) -> Any:
    follower = a.seat(a.led, a.led_hand)
    low = min(a.own_cards(a.led, a.led_hand), key=_rank)
    top = a.led_hand.top_play
    if beats(classify(parse_cards([low]), RULES), classify(parse_cards(list(top.cards)), RULES),
             RULES):
        pytest.fail(f"the seeded deal lets {low} beat {list(top.cards)}")
    return follower.play(a.led.table_id, a.led_hand.hand_id, [low])


def _two_ranks(a: Arena) -> Any:
    cards = sorted((c for c in a.own_cards(a.fresh, a.fresh_hand) if c not in ("SJ", "BJ")),
                   key=_rank)
    return a.seat(a.fresh, a.fresh_hand).play(a.fresh.table_id, a.fresh_hand.hand_id,
                                              [cards[0], cards[-1]])


def _not_held(a: Arena) -> Any:
    held = set(a.own_cards(a.fresh, a.fresh_hand))
    other = next(c for c in a.own_cards(a.fresh, a.fresh_hand, 1) if c not in held)
    return a.seat(a.fresh, a.fresh_hand).play(a.fresh.table_id, a.fresh_hand.hand_id, [other])


def _out_of_turn(a: Arena) -> Any:
    card = a.own_cards(a.fresh, a.fresh_hand, 1)[0]
    return a.seat(a.fresh, a.fresh_hand, 1).play(a.fresh.table_id, a.fresh_hand.hand_id, [card])


def _oversize(a: Arena, size: int) -> Any:
    return a.platform.adjudicate(json.dumps({"padding": "x" * size}))


def _expired(a: Arena) -> Any:
    token = issue_seat_token(DEV_TOKEN_SECRET, a.idle.table_id, 0, "idle-0", ttl_seconds=60,
                             now=time.time() - 3600)
    return a.server.client(token=token).get_table(a.idle.table_id)


def _other_secret(a: Arena) -> Any:
    token = issue_seat_token("not-the-server-secret", a.idle.table_id, 0, "idle-0")
    return a.server.client(token=token).get_table(a.idle.table_id)


def _reused_request_id(a: Arena) -> Any:
    request_id = f"reuse-{uuid.uuid4()}"
    a.platform.create_table("classic", 4, request_id=request_id)
    return a.platform.create_table("fuzhou", 4, request_id=request_id)


def _left_player(a: Arena) -> Any:
    return a.over.seats[2].hand_view(a.over.table_id)


def _seat_taken_by_other(a: Arena) -> Any:
    return a.platform.join_table(a.partial.table_id, "intruder", 0)


def _declare(table: ShengjiTable, seat: int, cards: list[str]) -> Any:
    client, table_id, hand_id = table.act(seat)
    return shengji_calls.declare(client, table_id, hand_id, cards)


def _bury(table: ShengjiTable, cards: list[str]) -> Any:
    client, table_id, hand_id = table.act(0)
    return shengji_calls.bury(client, table_id, hand_id, cards)


def _bury_a_point_card(a: Arena) -> Any:
    held = a.sj.burying.cards(0)
    held.remove("5S")
    kitty = ShengjiRules.from_spec("tractor").kitty_size
    return _bury(a.sj.burying, ["5S", *held[:kitty - 1]])


def _pass(table: ShengjiTable, seat: int) -> Any:
    client, table_id, hand_id = table.act(seat)
    return client.pass_turn(table_id, hand_id)


def _play(table: ShengjiTable, seat: int, cards: list[str]) -> Any:
    client, table_id, hand_id = table.act(seat)
    return client.play(table_id, hand_id, cards)


def _follow(table: ShengjiTable, cards: str) -> Any:
    return _play(table, 1, cards.split())


SHENGJI_CASES = [
    Case("Shengji pass", Code.FAILED_PRECONDITION, ShengjiReason.PASS_NOT_ALLOWED,
         lambda a: _pass(a.sj.declaring, 1)),
    Case("Shengji declaration of a card not of the trump rank", Code.FAILED_PRECONDITION,
         ShengjiReason.INVALID_DECLARATION, lambda a: _declare(a.sj.declaring, 2, ["3S"])),
    Case("Shengji declaration that does not overcall", Code.FAILED_PRECONDITION,
         ShengjiReason.DECLARATION_TOO_WEAK, lambda a: _declare(a.sj.declaring, 1, ["2H"])),
    Case("Shengji declaration after the windows closed", Code.FAILED_PRECONDITION,
         ShengjiReason.NOT_DECLARATION_PHASE,
         lambda a: _declare(a.sj.burying, 1, a.sj.burying.cards(1)[:1])),
    Case("Shengji play while the declaration windows are open", Code.FAILED_PRECONDITION,
         ShengjiReason.DECLARATIONS_OPEN,
         lambda a: _play(a.sj.declaring, 2, a.sj.declaring.cards(2)[:1])),
    Case("Shengji dealer plays before burying", Code.FAILED_PRECONDITION, ShengjiReason.MUST_BURY,
         lambda a: _play(a.sj.burying, 0, a.sj.burying.cards(0)[:1])),
    Case("Shengji bury of too few cards", Code.FAILED_PRECONDITION, ShengjiReason.WRONG_BURY_COUNT,
         lambda a: _bury(a.sj.burying, a.sj.burying.cards(0)[:1])),
    Case("Shengji bury of a point card under bury_points=false", Code.FAILED_PRECONDITION,
         ShengjiReason.BURY_POINTS_FORBIDDEN, _bury_a_point_card),
    Case("Shengji follow of another size than the lead", Code.FAILED_PRECONDITION,
         ShengjiReason.WRONG_CARD_COUNT, lambda a: _follow(a.sj.tractor_led, "7S 7S 8S")),
    Case("Shengji follow off suit while holding the suit", Code.FAILED_PRECONDITION,
         ShengjiReason.MUST_FOLLOW_SUIT, lambda a: _follow(a.sj.tractor_led, "7S 7S 8S 5H")),
    Case("Shengji singles on a tractor while holding one", Code.FAILED_PRECONDITION,
         ShengjiReason.MUST_FOLLOW_TRACTOR, lambda a: _follow(a.sj.tractor_led, "7S 8S 9S 10S")),
    Case("Shengji singles on a pair while holding one", Code.FAILED_PRECONDITION,
         ShengjiReason.MUST_FOLLOW_PAIR, lambda a: _follow(a.sj.pair_led, "7S 9S")),
    Case("Shengji a pair on a triple while holding one", Code.FAILED_PRECONDITION,
         ShengjiReason.MUST_FOLLOW_TRIPLE, lambda a: _follow(a.sj.triple_led, "7S 7S 9S")),
]

def _cosigned(checkpoint: dict[str, Any]) -> str:
    """A well-formed cosignature of `checkpoint` by a witness key no referee lists."""
    return Signer.from_text("c3" * 32).sign(cosignature_body(checkpoint, datetime.now(UTC)))


DOUDIZHU_CASES = [
    Case("斗地主 play while the landlord is bid for", Code.FAILED_PRECONDITION,
         DoudizhuReason.BIDDING_OPEN, lambda a: a.ddz["dealt"].act("play")),
    Case("斗地主 bid of 4 points", Code.FAILED_PRECONDITION, DoudizhuReason.INVALID_BID,
         lambda a: a.ddz["dealt"].act("bid", "4")),
    Case("斗地主 bid not above the highest", Code.FAILED_PRECONDITION,
         DoudizhuReason.BID_TOO_LOW, lambda a: a.ddz["bid_2"].act("bid", "1")),
    Case("斗地主 call in a points room", Code.FAILED_PRECONDITION, DoudizhuReason.WRONG_BIDDING,
         lambda a: a.ddz["dealt"].act("call")),
    Case("斗地主 bid once the landlord is known", Code.FAILED_PRECONDITION,
         DoudizhuReason.NOT_BIDDING, lambda a: a.ddz["landlord"].act("bid", "3")),
    Case("斗地主 call after a call", Code.FAILED_PRECONDITION, DoudizhuReason.ALREADY_CALLED,
         lambda a: a.ddz["called"].act("call")),
    Case("斗地主 rob before a call", Code.FAILED_PRECONDITION, DoudizhuReason.CANNOT_ROB,
         lambda a: a.ddz["rob_dealt"].act("rob")),
]

CASES = [
    # INVALID_ARGUMENT: malformed input
    Case("unknown card", Code.INVALID_ARGUMENT, Reason.UNKNOWN_CARD,
         lambda a: a.seat(a.fresh, a.fresh_hand).play(a.fresh.table_id, a.fresh_hand.hand_id,
                                                      ["ZZ"]), field="cards"),
    Case("unknown preset", Code.INVALID_ARGUMENT, Reason.INVALID_RULESET,
         lambda a: a.platform.create_table("no-such-preset", 4), field="ruleset"),
    Case("option out of range", Code.INVALID_ARGUMENT, Reason.INVALID_RULESET,
         lambda a: a.platform.create_table("classic", 4, options={"hands": 0}),
         field="ruleset"),
    Case("players the preset does not allow", Code.INVALID_ARGUMENT, Reason.INVALID_RULESET,
         lambda a: a.platform.create_table("classic", 5)),
    Case("preset deck that is not the ruleset's deck", Code.INVALID_ARGUMENT,
         Reason.INVALID_DEAL,
         lambda a: a.platform.start_hand(a.spare.table_id, deck=["3S"] * 54), field="deck"),
    Case("seat number out of range", Code.INVALID_ARGUMENT, Reason.INVALID_SEAT,
         lambda a: a.platform.join_table(a.partial.table_id, "someone", 9)),
    Case("unreadable transcript", Code.INVALID_ARGUMENT, Reason.INVALID_TRANSCRIPT,
         lambda a: a.platform.adjudicate({"format": "nope"}), field="transcript_json"),
    Case("transcript that is not JSON", Code.INVALID_ARGUMENT, ServiceReason.INVALID_REQUEST,
         lambda a: a.platform.adjudicate("{not json"), field="transcript_json"),
    Case("feed filter with a stored class path", Code.INVALID_ARGUMENT,
         ServiceReason.INVALID_REQUEST,
         lambda a: a.platform.read_events(topics=["domain.hand:Hand.Dealt"]),
         field="topics[0]"),
    Case("fractional option value", Code.INVALID_ARGUMENT, Reason.INVALID_RULESET,
         lambda a: a.platform.create_table("classic", 4, options={"hands": 1.5}),
         field="ruleset"),
    Case("play without a hand id", Code.INVALID_ARGUMENT, ServiceReason.MISSING_FIELD,
         lambda a: a.seat(a.fresh, a.fresh_hand).play(a.fresh.table_id, "", ["3S"]),
         field="hand_id"),
    Case("pass without a hand id", Code.INVALID_ARGUMENT, ServiceReason.MISSING_FIELD,
         lambda a: a.seat(a.fresh, a.fresh_hand).pass_turn(a.fresh.table_id, ""),
         field="hand_id"),
    Case("a transcript nested too deeply", Code.INVALID_ARGUMENT,
         ServiceReason.INVALID_REQUEST,
         lambda a: a.platform.adjudicate("[" * 100_000 + "]" * 100_000),
         field="transcript_json"),
    Case("an empty table id", Code.INVALID_ARGUMENT, ServiceReason.MISSING_FIELD,
         lambda a: a.platform.get_table(""), field="table_id"),
    Case("an overlong request id", Code.INVALID_ARGUMENT, ServiceReason.INVALID_REQUEST,
         lambda a: a.platform.create_table("classic", 4, request_id="r" * 129),
         field="request_id"),
    Case("a position past the store's range", Code.INVALID_ARGUMENT,
         ServiceReason.INVALID_REQUEST,
         lambda a: a.platform.read_events(after_position=2**63), field="after_position"),
    Case("missing ruleset", Code.INVALID_ARGUMENT, ServiceReason.MISSING_FIELD,
         lambda a: a.platform.stub.CreateTable(pb.CreateTableRequest(players=4),
                                               metadata=a.platform.metadata, timeout=10),
         field="ruleset.preset"),
    Case("play without cards", Code.INVALID_ARGUMENT, ServiceReason.MISSING_FIELD,
         lambda a: a.seat(a.fresh, a.fresh_hand).play(a.fresh.table_id,
                                                      a.fresh_hand.hand_id, []),
         field="cards"),
    Case("malformed table id", Code.INVALID_ARGUMENT, ServiceReason.INVALID_ID,
         lambda a: a.platform.get_table("not-a-uuid")),
    # FAILED_PRECONDITION: the rules refuse it now
    Case("play out of turn", Code.FAILED_PRECONDITION, Reason.NOT_YOUR_TURN, _out_of_turn),
    Case("play that does not beat", Code.FAILED_PRECONDITION, FiftykReason.DOES_NOT_BEAT,
         _lowest_follow),
    Case("leader passes", Code.FAILED_PRECONDITION, FiftykReason.MUST_LEAD,
         lambda a: a.seat(a.fresh, a.fresh_hand).pass_turn(a.fresh.table_id,
                                                           a.fresh_hand.hand_id)),
    Case("play in a hand that is over", Code.FAILED_PRECONDITION, Reason.HAND_OVER,
         lambda a: a.over.seats[0].play(a.over.table_id, a.over_hand_id, ["3S"])),
    Case("cards the seat does not hold", Code.FAILED_PRECONDITION, Reason.CARDS_NOT_IN_HAND,
         _not_held),
    Case("cards that form no combination", Code.FAILED_PRECONDITION,
         Reason.INVALID_COMBINATION, _two_ranks),
    Case("seat already taken", Code.FAILED_PRECONDITION, Reason.SEAT_TAKEN,
         _seat_taken_by_other),
    Case("player already seated", Code.FAILED_PRECONDITION, Reason.PLAYER_ALREADY_SEATED,
         lambda a: a.platform.join_table(a.partial.table_id, "partial-0", 3)),
    Case("empty seat left", Code.FAILED_PRECONDITION, Reason.SEAT_EMPTY,
         lambda a: a.platform.leave_table(a.partial.table_id, 3)),
    Case("deal at a table with a free seat", Code.FAILED_PRECONDITION, Reason.TABLE_NOT_FULL,
         lambda a: a.platform.start_hand(a.partial.table_id)),
    Case("deal during a hand", Code.FAILED_PRECONDITION, Reason.HAND_IN_PROGRESS,
         lambda a: a.platform.start_hand(a.fresh.table_id)),
    Case("leave during a hand", Code.FAILED_PRECONDITION, Reason.HAND_IN_PROGRESS,
         lambda a: a.fresh.seats[0].leave_table(a.fresh.table_id)),
    Case("legal plays at a table before its first hand", Code.FAILED_PRECONDITION,
         Reason.NO_HAND_IN_PROGRESS, lambda a: a.idle.seats[0].legal_plays(a.idle.table_id)),
    Case("deal after the match ended", Code.FAILED_PRECONDITION, Reason.MATCH_OVER,
         lambda a: a.platform.start_hand(a.over.table_id)),
    Case("preset deck at a table that forbids it", Code.FAILED_PRECONDITION,
         Reason.PRESET_DECK_NOT_ALLOWED,
         lambda a: a.platform.start_hand(a.idle.table_id, deck=seeded_deck("classic", 1))),
    Case("resigned seat plays", Code.FAILED_PRECONDITION, FiftykReason.PLAYER_OUT,
         lambda a: a.seat(a.led, a.led_hand, 1).play(a.led.table_id, a.led_hand.hand_id,
                                                     a.own_cards(a.led, a.led_hand, 1)[:1])),
    # NOT_FOUND, ALREADY_EXISTS
    Case("unknown table", Code.NOT_FOUND, ServiceReason.TABLE_NOT_FOUND,
         lambda a: a.platform.get_table(str(uuid.uuid4()))),
    Case("unknown hand", Code.NOT_FOUND, ServiceReason.HAND_NOT_FOUND,
         lambda a: a.audit.hand_history(str(uuid.uuid4()))),
    Case("version beyond the hand", Code.NOT_FOUND, ServiceReason.VERSION_NOT_FOUND,
         lambda a: a.audit.hand_at(a.over_hand_id, 10_000)),
    Case("request id reused for another command", Code.ALREADY_EXISTS,
         ServiceReason.REQUEST_ID_REUSED, _reused_request_id),
    # RESOURCE_EXHAUSTED: over our limit (rich status) and over gRPC's own (no ErrorInfo)
    Case("oversize request", Code.RESOURCE_EXHAUSTED, ServiceReason.MESSAGE_TOO_LARGE,
         lambda a: _oversize(a, a.server.config.max_message_bytes + 1)),
    # UNAUTHENTICATED: no credential, or a bad one
    Case("no credential", Code.UNAUTHENTICATED, ServiceReason.MISSING_CREDENTIALS,
         lambda a: a.anonymous.get_table(a.idle.table_id)),
    Case("no credential on a stream", Code.UNAUTHENTICATED, ServiceReason.MISSING_CREDENTIALS,
         lambda a: _first(a.anonymous.watch(a.idle.table_id, timeout=10))),
    Case("no credential to adjudicate", Code.UNAUTHENTICATED,
         ServiceReason.MISSING_CREDENTIALS, lambda a: a.anonymous.adjudicate({})),
    Case("forged token", Code.UNAUTHENTICATED, ServiceReason.INVALID_TOKEN,
         lambda a: a.server.client(token=_tampered(a.idle.tokens[0])).get_table(
             a.idle.table_id)),
    Case("token signed with another secret", Code.UNAUTHENTICATED, ServiceReason.INVALID_TOKEN,
         _other_secret),
    Case("garbage token", Code.UNAUTHENTICATED, ServiceReason.INVALID_TOKEN,
         lambda a: a.server.client(token="garbage").get_table(a.idle.table_id)),
    Case("not a bearer token", Code.UNAUTHENTICATED, ServiceReason.INVALID_TOKEN,
         lambda a: _with_header(a, ("authorization", f"Basic {a.idle.tokens[0]}"))),
    Case("expired token", Code.UNAUTHENTICATED, ServiceReason.TOKEN_EXPIRED, _expired),
    Case("wrong audit key", Code.UNAUTHENTICATED, ServiceReason.INVALID_AUDIT_KEY,
         lambda a: a.server.client(audit_key="wrong").hand_history(a.over_hand_id)),
    Case("wrong platform key", Code.UNAUTHENTICATED, ServiceReason.INVALID_PLATFORM_KEY,
         lambda a: a.server.client(platform_key="wrong").create_table("classic", 4)),
    # PERMISSION_DENIED: a valid credential that does not allow this
    Case("token of another table", Code.PERMISSION_DENIED, ServiceReason.WRONG_TABLE,
         lambda a: a.idle.seats[0].get_table(a.fresh.table_id)),
    Case("token of another table plays", Code.PERMISSION_DENIED, ServiceReason.WRONG_TABLE,
         lambda a: a.idle.seats[0].play(a.fresh.table_id, a.fresh_hand.hand_id, ["3S"])),
    Case("token of another table watches", Code.PERMISSION_DENIED, ServiceReason.WRONG_TABLE,
         lambda a: _first(a.idle.seats[0].watch(a.fresh.table_id, timeout=10))),
    Case("token views another seat", Code.PERMISSION_DENIED, ServiceReason.WRONG_SEAT,
         lambda a: a.fresh.seats[0].hand_view(a.fresh.table_id, seat=1)),
    Case("token watches another seat", Code.PERMISSION_DENIED, ServiceReason.WRONG_SEAT,
         lambda a: _first(a.fresh.seats[0].watch(a.fresh.table_id, seat=1, timeout=10))),
    Case("token frees another seat", Code.PERMISSION_DENIED, ServiceReason.WRONG_SEAT,
         lambda a: a.idle.seats[0].leave_table(a.idle.table_id, 1)),
    Case("token of a player who left", Code.PERMISSION_DENIED, ServiceReason.WRONG_SEAT,
         _left_player),
    Case("platform acts for a seat", Code.PERMISSION_DENIED, ServiceReason.SEAT_TOKEN_REQUIRED,
         lambda a: a.platform.pass_turn(a.fresh.table_id, a.fresh_hand.hand_id)),
    Case("platform views a seat", Code.PERMISSION_DENIED, ServiceReason.AUDIT_REQUIRED,
         lambda a: a.platform.hand_view(a.fresh.table_id, seat=0)),
    Case("seat token reads history", Code.PERMISSION_DENIED, ServiceReason.AUDIT_REQUIRED,
         lambda a: a.over.seats[0].hand_history(a.over_hand_id)),
    Case("seat token replays a version", Code.PERMISSION_DENIED, ServiceReason.AUDIT_REQUIRED,
         lambda a: a.over.seats[0].hand_at(a.over_hand_id, 1)),
    Case("seat token exports", Code.PERMISSION_DENIED, ServiceReason.AUDIT_REQUIRED,
         lambda a: a.over.seats[0].export_transcript(a.over_hand_id)),
    Case("platform reads history", Code.PERMISSION_DENIED, ServiceReason.AUDIT_REQUIRED,
         lambda a: a.platform.hand_history(a.over_hand_id)),
    Case("seat token creates a table", Code.PERMISSION_DENIED, ServiceReason.PLATFORM_REQUIRED,
         lambda a: a.idle.seats[0].create_table("classic", 4)),
    Case("seat token seats a player", Code.PERMISSION_DENIED, ServiceReason.PLATFORM_REQUIRED,
         lambda a: a.partial.seats[0].join_table(a.partial.table_id, "friend", 3)),
    Case("seat token reads the feed", Code.PERMISSION_DENIED, ServiceReason.PLATFORM_REQUIRED,
         lambda a: a.idle.seats[0].read_events()),
    Case("audit creates a table", Code.PERMISSION_DENIED, ServiceReason.PLATFORM_REQUIRED,
         lambda a: a.audit.create_table("classic", 4)),
    Case("a spectator asks a delayed table's hand", Code.PERMISSION_DENIED,
         ServiceReason.SPECTATOR_DELAYED, _spectator_at_a_ranked_table),
    *SHENGJI_CASES,
    *DOUDIZHU_CASES,
    Case("deal at a closed table", Code.FAILED_PRECONDITION, Reason.TABLE_CLOSED,
         lambda a: a.platform.start_hand(a.aborted.table_id)),
    Case("act in a voided hand", Code.FAILED_PRECONDITION, Reason.HAND_VOIDED,
         lambda a: a.seat(a.aborted, a.aborted_hand).pass_turn(a.aborted.table_id,
                                                                 a.aborted_hand.hand_id)),
    Case("a reissued seat's old token", Code.UNAUTHENTICATED, ServiceReason.TOKEN_REVOKED,
         lambda a: a.seat(a.aborted, a.aborted_hand, 1).get_table(a.aborted.table_id)),
    Case("an overlong close reason", Code.INVALID_ARGUMENT, Reason.INVALID_REASON,
         lambda a: a.platform.close_table(a.idle.table_id, "x" * 513), field="reason"),
    Case("no such webhook", Code.NOT_FOUND, ServiceReason.WEBHOOK_NOT_FOUND,
         lambda a: a.platform.delete_webhook("6f1c1bbf-7d0e-4c1e-9d1a-3d2b8f1f0a11")),
    Case("a cosignature by a key the referee does not list", Code.PERMISSION_DENIED,
         ServiceReason.UNKNOWN_WITNESS, lambda a: a.platform.add_cosignature(
             _cosigned(json.loads(a.platform.checkpoint().checkpoint_json)))),
    Case("a cosignature that is not one", Code.INVALID_ARGUMENT,
         ServiceReason.INVALID_COSIGNATURE, lambda a: a.platform.add_cosignature("{}")),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_error_carries_its_status_code_and_one_error_info_with_its_reason(
        arena: Arena, case: Case) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        case.call(arena)
    details = error_details(caught.value)
    assert (details.code, details.reason) == (case.code, case.reason), details.message
    assert details.domain == ERROR_DOMAIN and details.message
    status = rpc_status.from_call(caught.value)
    assert status is not None
    infos = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    assert len(infos) == 1
    if case.field is not None:
        assert case.field in [v.field for v in details.field_violations]


def test_the_cases_provoke_every_reason_and_status_code_but_the_unreachable_ones() -> None:
    games = {code for bundle in installed().values() for code in bundle.reason_codes()}
    every = {str(r) for r in Reason} | {str(r) for r in ServiceReason} | games
    provoked = {str(case.reason) for case in CASES}
    assert every - provoked == set(UNREACHABLE)
    assert {case.code for case in CASES} == STATUS_CODES


def test_an_unknown_card_names_the_card(arena: Arena) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        arena.seat(arena.fresh, arena.fresh_hand).play(arena.fresh.table_id,
                                                       arena.fresh_hand.hand_id, ["3S", "1X"])
    assert error_details(caught.value).metadata == {"card": "1X"}


def test_a_request_over_the_transport_limit_is_refused_by_grpc_itself(arena: Arena) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        _oversize(arena, 3 * arena.server.config.max_message_bytes)
    details = error_details(caught.value)
    assert (details.code, details.reason) == (Code.RESOURCE_EXHAUSTED, None)


def test_a_malformed_transcript_action_is_a_ruling(arena: Arena) -> None:
    transcript = {"format": "fiftyk-transcript/1", "ruleset": {"preset": "classic"},
                  "players": 4, "dealer": 0, "deck": seeded_deck("classic", 3),
                  "actions": [{"seat": 0, "play": ["3S"], "pass": True}]}
    ruling = arena.platform.adjudicate(transcript)
    assert ruling["status"] == "rejected"
    assert ruling["rejected"]["reason"] == Reason.INVALID_ACTION


def test_errors_change_nothing(arena: Arena) -> None:
    before = arena.platform.read_events(limit=1000)
    position = before.last_position
    while before.has_more:
        before = arena.platform.read_events(after_position=position, limit=1000)
        position = before.last_position
    for case in CASES:
        if case.reason in (ServiceReason.REQUEST_ID_REUSED, ServiceReason.SPECTATOR_DELAYED):
            continue  # their setup creates a table on purpose
        with pytest.raises(grpc.RpcError):
            case.call(arena)
    assert not arena.platform.read_events(after_position=position).events


def test_a_players_watch_ends_when_the_player_leaves_the_seat(server: LiveServer) -> None:
    seated = seat_bots(server, "classic", 4, prefix="leaver")
    player = seated.seats[0].watch(seated.table_id, timeout=10)
    auditor = server.audit().watch(seated.table_id, seat=0, timeout=10)
    assert [next(player).event.name for _ in range(5)] == (
        ["table.opened"] + ["table.seat_taken"] * 4)
    seated.platform.leave_table(seated.table_id, 0)
    assert next(player).event.table_seat_left.seat == 0
    with pytest.raises(grpc.RpcError) as caught:
        next(player)  # a new player may sit down: the old token sees no more of seat 0
    assert error_reason(caught.value)[:2] == (Code.PERMISSION_DENIED, ServiceReason.WRONG_SEAT)
    # The audit role watching as seat 0 goes on.
    assert [next(auditor).event.name for _ in range(6)][-1] == "table.seat_left"
    seated.platform.join_table(seated.table_id, "newcomer", 0)
    assert next(auditor).event.table_seat_taken == pb.TableSeatTaken(seat=0,
                                                                     player_id="newcomer")
    auditor.cancel()  # type: ignore[attr-defined]
