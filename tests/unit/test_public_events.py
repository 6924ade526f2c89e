"""Public events: every stored event has a stable name and a typed message, and no viewer's
copy of any event of random hands shows a card that viewer may not see."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import (
    any_pb2,
    descriptor_pb2,
    descriptor_pool,
    message_factory,
    timestamp_pb2,
)
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fiftyk_referee.domain.aggregate import AggregateEvent
from fiftyk_referee.domain.deal import commitment
from fiftyk_referee.domain.events import EventCatalog, EventKind, PublicEvent
from fiftyk_referee.domain.fiftyk import GAME
from fiftyk_referee.domain.fiftyk.events import FIFTYK_EVENTS, HandDealt
from fiftyk_referee.domain.fiftyk.hand import Hand
from fiftyk_referee.domain.fiftyk.rulesets import PRESETS, Ruleset
from fiftyk_referee.domain.games import hosted
from fiftyk_referee.domain.observer import AUDITOR, SPECTATOR, SeatViewer, Viewer
from fiftyk_referee.domain.shengji import GAME as SHENGJI
from fiftyk_referee.domain.shengji.events import SHENGJI_EVENTS
from fiftyk_referee.domain.shengji.hand import ShengjiHand
from fiftyk_referee.domain.shengji.rulesets import PRESETS as SHENGJI_PRESETS
from fiftyk_referee.domain.table import Table
from fiftyk_referee.domain.table_events import TABLE_EVENTS, HandRecorded, SeatTaken
from fiftyk_referee.service.core.public_events import PUBLIC_EVENTS, feed_event
from fiftyk_referee.service.core.topics import stored_topics
from fiftyk_referee.service.errors import InvalidArgument, ServiceReason
from fiftyk_referee.service.grpc.events import event_to_proto, payloads
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.unit.shengji.test_playouts import VARIANTS as SHENGJI_VARIANTS
from tests.unit.shengji.test_playouts import step as shengji_step
from tests.unit.test_hand_playouts import step, variants

DOCS = Path(__file__).resolve().parents[2] / "docs" / "events.md"
CARD_FIELDS = ("cards", "deck")
STEP_LIMIT = 5_000
CHECKED_HANDS = 120
SHENGJI_HANDS = 30
SHENGJI_PLAYERS = 4
DECIMAL_TEXT = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?")  # "255", "-5.5"; no exponent


def stored_classes(aggregate: type) -> list[type]:
    """Every event class an aggregate may store."""
    return [value for value in vars(aggregate).values()
            if isinstance(value, type) and issubclass(value, AggregateEvent)]


@pytest.mark.parametrize(("aggregate", "catalog"), [(Table, TABLE_EVENTS),
                                                    (Hand, FIFTYK_EVENTS),
                                                    (ShengjiHand, SHENGJI_EVENTS)])
def test_every_stored_event_class_has_a_public_name_in_its_namespace(
        aggregate: type, catalog: EventCatalog) -> None:
    assert {kind.stored for kind in catalog} == set(stored_classes(aggregate))
    for kind in catalog:
        assert kind.name.startswith(f"{catalog.namespace}.")


def test_public_names_are_lower_snake_case_and_never_a_class_path() -> None:
    for name in PUBLIC_EVENTS.names:
        namespace, _, event = name.partition(".")
        assert namespace.isidentifier() and event.isidentifier(), name
        assert name == name.lower() and ":" not in name


# Every catalog with a field of its own in Event's `payload` oneof (0.2's): a game newer
# than 0.2 (斗地主) has its events' messages in `game_event` alone.
CATALOGS = (TABLE_EVENTS, FIFTYK_EVENTS, SHENGJI_EVENTS)


def _kinds() -> list[EventKind]:
    return [kind for catalog in CATALOGS for kind in catalog]


def _all_kinds() -> list[EventKind]:
    """Every public event: the table's and every hosted game's."""
    return [kind for catalog in (TABLE_EVENTS, *(game.events for game in hosted().values()))
            for kind in catalog]


@pytest.mark.parametrize("kind", _kinds(), ids=lambda kind: kind.name)
def test_each_public_event_fills_the_oneof_field_named_after_it(kind: EventKind) -> None:
    field, _ = payloads()[kind.public]
    assert field == kind.name.replace(".", "_")
    assert pb.Event.DESCRIPTOR.fields_by_name[field].containing_oneof.name == "payload"


def test_the_proto_has_no_payload_without_a_public_event() -> None:
    oneof = pb.Event.DESCRIPTOR.oneofs_by_name["payload"]
    # `game_payload` carries the events of a game without messages of its own (JSON values).
    assert {f.name for f in oneof.fields} == {
        field for field, _ in payloads().values() if field is not None} | {"game_payload"}
    assert {field for field, _ in payloads().values() if field is not None} == {
        kind.name.replace(".", "_") for kind in _kinds()}
    assert set(payloads()) == {kind.public for kind in _all_kinds()}


def test_docs_describe_every_public_event_and_every_field() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for kind in _kinds():
        assert f"`{kind.name}`" in text, kind.name
        field, _ = payloads()[kind.public]
        message = pb.Event.DESCRIPTOR.fields_by_name[field].message_type
        for payload_field in message.fields:
            assert f"`{payload_field.name}`" in text, (kind.name, payload_field.name)


def test_an_event_of_0_1_0_is_found_under_its_old_topic_too() -> None:
    dealt = next(kind.stored for kind in FIFTYK_EVENTS if kind.public is HandDealt)
    assert stored_topics(dealt) == ["fiftyk_referee.domain.fiftyk.hand:Hand.Dealt",
                                    "domain.hand:Hand.Dealt"]
    topics = PUBLIC_EVENTS.topics([SeatTaken.NAME])
    assert topics == ["fiftyk_referee.domain.table:Table.SeatTaken",
                      "domain.table:Table.SeatTaken"]


def test_all_published_topics_leave_out_command_receipts() -> None:
    topics = PUBLIC_EVENTS.topics()
    assert len(topics) == sum(len(stored_topics(kind.stored)) for kind in _all_kinds())
    assert set(PUBLIC_EVENTS.names) == {kind.name for kind in _all_kinds()}
    assert not [t for t in topics if "Receipt" in t]


def test_an_unknown_event_name_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidArgument) as raised:
        PUBLIC_EVENTS.topics([SeatTaken.NAME, "domain.table:Table.SeatTaken"])
    assert raised.value.reason == ServiceReason.INVALID_REQUEST
    assert [v.field for v in raised.value.field_violations] == ["topics[1]"]


# -- every event of random hands, for every viewer ------------------------------------------


def unpacked(payload: any_pb2.Any) -> Message:
    """The message in an Any (a game's own message), by the type its URL names."""
    name = payload.type_url.rpartition("/")[2]
    message: Message = message_factory.GetMessageClass(
        descriptor_pool.Default().FindMessageTypeByName(name))()
    assert payload.Unpack(message)
    return message


def card_values(message: Message) -> Iterator[str]:
    """Every card anywhere in a message: the values of its `cards` and `deck` fields."""
    for field, value in message.ListFields():
        if field.name in CARD_FIELDS:
            yield from value
        elif field.message_type is not None:
            items = value if field.is_repeated else [value]
            for item in items:
                if isinstance(item, Message):
                    yield from card_values(item)


def check_game_event(message: pb.Event, game: str) -> None:
    """A game's event: its 0.2 payload field is the one its name names, and the game's own
    message in `game_event` (fiftyk.games.<game>.v1.<Event>) holds the same fields."""
    field = message.WhichOneof("payload")
    assert field == message.name.replace(".", "_")
    event = message.name.partition(".")[2]
    camel = "".join(part.capitalize() for part in event.split("_"))
    assert message.game_event.type_url == (
        f"type.googleapis.com/fiftyk.games.{game}.v1.{camel}")
    own = unpacked(message.game_event)
    assert (own.SerializeToString(deterministic=True)
            == getattr(message, field).SerializeToString(deterministic=True))


def viewers(players: int) -> list[Viewer]:
    """Every seat, a spectator and the audit role."""
    return [*(SeatViewer(seat) for seat in range(players)), SPECTATOR, AUDITOR]


def check_event(stored: Any, holdings: list[Counter[str]], players: int) -> None:
    """One stored hand event, as every viewer sees it."""
    event = feed_event(stored)
    assert event is not None and event.name == FIFTYK_EVENTS.name_of(stored)
    audit = event_to_proto(event, event.public(AUDITOR))
    _update(holdings, audit)
    for viewer in viewers(players):
        public: PublicEvent = event.public(viewer)
        message = event_to_proto(event, public)
        assert message.name == audit.name == event.name
        check_game_event(message, "fiftyk")
        if message.HasField("fiftyk_cards_played"):
            assert message == audit  # a play is made face up
            continue
        if viewer == AUDITOR:
            continue
        # The 0.2 payload and the game's own message in `game_event`, each on its own.
        for part in (getattr(message, message.WhichOneof("payload") or ""),
                     unpacked(message.game_event)):
            shown = Counter(card_values(part))
            if isinstance(viewer, SeatViewer):
                assert shown <= holdings[viewer.seat], (viewer, message)
            else:
                assert not shown, message
        if message.HasField("fiftyk_hand_dealt"):
            dealt = message.fiftyk_hand_dealt
            assert not dealt.deck and not dealt.HasField("deal_seed")
            assert [h.card_count for h in dealt.hands] == [
                h.card_count for h in audit.fiftyk_hand_dealt.hands]
            if isinstance(viewer, SeatViewer):  # its own cards, all of them
                assert Counter(dealt.hands[viewer.seat].cards) == holdings[viewer.seat]


def _update(holdings: list[Counter[str]], audit: pb.Event) -> None:
    """Follow every seat's cards from the audit copy of each event."""
    kind = audit.WhichOneof("payload")
    if kind == "fiftyk_hand_dealt":
        for dealt in audit.fiftyk_hand_dealt.hands:
            holdings[dealt.seat] = Counter(dealt.cards)
    elif kind == "fiftyk_cards_drawn":
        holdings[audit.fiftyk_cards_drawn.seat].update(audit.fiftyk_cards_drawn.cards)
    elif kind == "fiftyk_cards_played":
        holdings[audit.fiftyk_cards_played.seat].subtract(audit.fiftyk_cards_played.cards)
        holdings[audit.fiftyk_cards_played.seat] += Counter()  # drop zero counts


def check_hand_end(stored: Any, hand: Hand) -> None:
    """The end of the hand reads the same for every viewer, scores as exact decimal text."""
    event = feed_event(stored)
    assert event is not None
    copies = {event_to_proto(event, event.public(v)).SerializeToString()
              for v in viewers(hand.players)}
    assert len(copies) == 1
    ended = event_to_proto(event, event.public(SPECTATOR)).fiftyk_hand_ended
    assert hand.result is not None
    assert [Decimal(s.score) for s in ended.result.seats] == [
        Decimal(str(s["score"])) for s in hand.result["seats"]]
    assert {t.side: Decimal(t.score) for t in ended.scores} == {
        side: Decimal(value) for side, value in hand.result["side_totals"].items()}
    assert ended.deal_seed == (hand.seed or "")
    texts = [s.score for s in ended.result.seats] + [t.score for t in ended.scores]
    assert all(DECIMAL_TEXT.fullmatch(text) for text in texts), texts


@settings(max_examples=CHECKED_HANDS, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(preset=st.sampled_from(sorted(PRESETS)), variant=st.integers(0, 3),
       seed=st.binary(min_size=32, max_size=32), choices=st.randoms(use_true_random=False))
def test_no_viewer_ever_sees_a_card_it_may_not_see(
        preset: str, variant: int, seed: bytes, choices: random.Random) -> None:
    options = variants(preset)
    ruleset = Ruleset.from_spec(preset, options[variant % len(options)])
    players = choices.choice(ruleset.player_counts())
    table = Table.open(GAME, ruleset, players)
    for seat in range(players):
        table.join(seat, f"player-{seat}")
    hand = table.start_hand(seed=seed)
    assert isinstance(hand, Hand)
    holdings: list[Counter[str]] = [Counter() for _ in range(players)]
    clocked = hand.rules.turn_timeout > 0
    pending = list(hand.collect_events())
    steps = 0
    while True:
        for stored in pending:
            check_event(stored, holdings, players)
        if hand.is_over:
            check_hand_end(pending[-1], hand)
            break
        step(hand, choices, clocked)
        pending = list(hand.collect_events())
        steps += 1
        assert steps < STEP_LIMIT
    table.record_hand(hand)
    for stored in table.collect_events():
        event = feed_event(stored)
        assert event is not None
        public = event.public(SeatViewer(0))
        assert public == event.public(SPECTATOR) == event.public(AUDITOR)  # no secrets
        if isinstance(public, HandRecorded):
            assert public.hand_id == str(hand.id)


def test_every_registered_game_publishes_its_hand_events_through_the_core() -> None:
    for game in hosted().values():
        for kind in game.events:
            assert PUBLIC_EVENTS.topics([kind.name]) == stored_topics(kind.stored)
    table = Table.open(GAME, Ruleset.from_spec("classic"), 4)
    [opened] = table.collect_events()
    assert GAME.public_event(opened, AUDITOR) is None  # a table's event is not the game's
    assert PUBLIC_EVENTS.name_of(opened) == "table.opened"


@pytest.mark.parametrize(("name", "preset", "players"), [
    ("fiftyk", "classic", 4), ("shengji", "tractor", 4), ("doudizhu", "classic", 3)])
def test_the_dealt_event_shows_every_viewer_the_deal_s_commitment_and_who_sits_where(
        name: str, preset: str, players: int) -> None:
    """The commitment a client checks the revealed deck against, and the players seated for
    the hand, are in the deal's event, for seats, spectators and auditors alike."""
    game = hosted()[name]
    rules = game.rules(preset)
    deck = game.base_deck(rules)
    seated = tuple(f"p{s}" for s in range(players))
    hand = game.deal(table_id="t", number=1, rules=rules, players=players, dealer=0,
                     seat_players=list(seated), carry={}, deck=deck, seed=None)
    event = feed_event(next(iter(hand.collect_events())))
    assert event is not None and event.name.endswith(".hand_dealt")
    for viewer in viewers(players):
        public = event.public(viewer)
        assert public.deal_commitment == commitment(None, deck), viewer  # type: ignore[attr-defined]
        assert tuple(public.player_ids) == seated, viewer  # type: ignore[attr-defined]


# -- Shengji ---------------------------------------------------------------------------------


def shengji_hidden(event: pb.Event) -> list[tuple[int | None, list[str]]]:
    """The cards a Shengji event may hide, each with the seat that owns them (None: nobody)."""
    kind = event.WhichOneof("payload")
    if kind == "shengji_hand_dealt":
        return [(None, list(event.shengji_hand_dealt.deck))]
    if kind == "shengji_round_dealt":
        return [(h.seat, list(h.cards)) for h in event.shengji_round_dealt.hands]
    if kind == "shengji_kitty_taken":
        taken = event.shengji_kitty_taken
        return [(taken.dealer, list(taken.kitty))]
    if kind == "shengji_kitty_buried":
        buried = event.shengji_kitty_buried
        return [(buried.seat, list(buried.cards))]
    return []


def check_shengji_event(stored: Any) -> None:
    """One stored Shengji event as every viewer sees it: only its own hidden cards."""
    event = feed_event(stored)
    assert event is not None
    audit = event_to_proto(event, event.public(AUDITOR))
    for viewer in viewers(SHENGJI_PLAYERS):
        message = event_to_proto(event, event.public(viewer))
        check_game_event(message, "shengji")
        hidden = shengji_hidden(message)
        if not hidden:
            assert message == audit  # nothing hidden: the same for everyone
            continue
        own = viewer.seat if isinstance(viewer, SeatViewer) else None
        for (owner, cards), (_, everything) in zip(hidden, shengji_hidden(audit),
                                                   strict=True):
            if viewer == AUDITOR or (owner is not None and owner == own):
                assert cards == everything
            else:
                assert not cards, (viewer, message)
        if message.HasField("shengji_hand_dealt"):
            assert message.shengji_hand_dealt.HasField("deal_seed") == (viewer == AUDITOR)


@settings(max_examples=SHENGJI_HANDS, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(preset=st.sampled_from(sorted(SHENGJI_PRESETS)), variant=st.integers(0, 3),
       seed=st.binary(min_size=32, max_size=32), choices=st.randoms(use_true_random=False))
def test_no_viewer_ever_sees_a_shengji_card_it_may_not_see(
        preset: str, variant: int, seed: bytes, choices: random.Random) -> None:
    rules = SHENGJI.rules(preset, SHENGJI_VARIANTS[variant % len(SHENGJI_VARIANTS)])
    hand = SHENGJI.deal(table_id="table", number=1, rules=rules, players=SHENGJI_PLAYERS,
                        dealer=0, seat_players=[f"p{s}" for s in range(SHENGJI_PLAYERS)],
                        carry={}, deck=None, seed=seed)
    assert isinstance(hand, ShengjiHand)
    steps = 0
    while True:
        for stored in hand.collect_events():
            check_shengji_event(stored)
        if hand.is_over:
            break
        shengji_step(hand, choices)
        steps += 1
        assert steps < STEP_LIMIT


def _old_feed_event_class() -> Any:
    """The FeedEvent message of version 0.1.0, built from its field list (as a 0.1.0 client
    has it compiled in)."""
    file = descriptor_pb2.FileDescriptorProto(name="old_feed_event.proto", package="old.v1",
                                              syntax="proto3")
    file.dependency.append("google/protobuf/timestamp.proto")
    message = file.message_type.add(name="FeedEvent")
    scalar = descriptor_pb2.FieldDescriptorProto
    for number, name, kind in ((1, "position", scalar.TYPE_UINT64),
                               (2, "originator_id", scalar.TYPE_STRING),
                               (3, "originator_version", scalar.TYPE_UINT64),
                               (4, "topic", scalar.TYPE_STRING),
                               (6, "payload_json", scalar.TYPE_STRING)):
        message.field.add(name=name, number=number, type=kind, label=scalar.LABEL_OPTIONAL)
    message.field.add(name="timestamp", number=5, type=scalar.TYPE_MESSAGE,
                      type_name=".google.protobuf.Timestamp", label=scalar.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(timestamp_pb2.DESCRIPTOR.serialized_pb)
    pool.AddSerializedFile(file.SerializeToString())
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("old.v1.FeedEvent"))


def test_a_0_1_0_client_still_reads_the_envelope_of_a_new_event() -> None:
    table = Table.open(GAME, Ruleset.from_spec("classic"), 4)
    table.join(0, "alice")
    event = feed_event(table.collect_events()[-1], position=42)
    assert event is not None
    new = event_to_proto(event, event.public(SPECTATOR))
    old = _old_feed_event_class().FromString(new.SerializeToString())
    assert (old.position, old.originator_id, old.originator_version) == (
        42, new.aggregate_id, 2)
    assert (old.timestamp.seconds, old.timestamp.nanos) == (new.timestamp.seconds,
                                                            new.timestamp.nanos)
    assert old.topic == "" and old.payload_json == ""  # reserved: never sent again
