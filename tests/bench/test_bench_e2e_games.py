"""`bench e2e --game`: each game's bot plays whole hands through the real server; `bench echo
--structure`: each serving structure of the echo ceiling answers.

No timing is asserted: a bot is driven step by step to the end of a hand, and what must hold
is that every command it sent was accepted (its choices are legal in its game), that every
kind of command the game has was sent, and that the server's own view agrees the hand is over.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

import grpc
import pytest

from bench.__main__ import main
from bench.e2e import (
    BOTS,
    DEFAULT_PRESETS,
    ECHO_METHOD,
    ECHO_STRUCTURES,
    EXECUTOR,
    DoudizhuBot,
    EchoServerProcess,
    LoopStats,
    ShengjiBot,
    TableBot,
    Window,
    setup_tables,
)
from fiftyk_referee.domain.games import game_named, hosted
from fiftyk_referee.service.games.doudizhu import doudizhu_pb2 as ddz_pb
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_PLATFORM_KEY
from tests.e2e.harness import LiveServer, server_config

pytestmark = pytest.mark.bench

MAX_COMMANDS = 2_000  # a hand of either game takes a few hundred
ALWAYS = Window(0.0, math.inf)  # every call counts: the test reads the stats, not the time


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    live = LiveServer(server_config(tmp_path_factory.mktemp("bench-e2e")))
    try:
        yield live
    finally:
        live.stop()


def _bot(server: LiveServer, game: str, seed: int, preset: str | None = None) -> TableBot:
    (table,) = setup_tables(server.target, 1, preset or DEFAULT_PRESETS[game],
                            DEV_PLATFORM_KEY, game)
    rules = game_named(game).rules_from_json(table["ruleset"])
    bot = BOTS[game](server.client(), table["table_id"], table["tokens"], rules, seed)
    bot.window = ALWAYS
    return bot


def _play_hand(bot: TableBot) -> tuple[LoopStats, list[str]]:
    """Deal and play one hand to its end; the stats and the RPC name of every command."""
    stats = LoopStats()
    bot.deal(stats)
    sent = ["StartHand"]
    for _ in range(MAX_COMMANDS):
        seat = bot.turn
        if seat is None:
            break
        name, _ = bot.next_command(seat)
        sent.append(name)
        if not bot.step(stats):
            break
    return stats, sent


@pytest.mark.parametrize("game", sorted(BOTS))
def test_a_bot_plays_whole_hands_of_its_game_with_every_command_accepted(
    server: LiveServer, game: str,
) -> None:
    bot = _bot(server, game, seed=7)
    for _ in range(2):
        stats, sent = _play_hand(bot)
        assert stats.errors == {} and stats.rejected == {}
        assert len(stats.latencies_ms) == len(sent)  # every command answered, and timed
        view = bot.seats[0].hand_view(bot.table_id, seat=0)
        assert view.hand_id == bot.hand_id and view.status == pb.HAND_STATUS_COMPLETED
        assert bot.turn is None
    expected = {"fiftyk": {"StartHand", "Play", "Pass"},
                "shengji": {"StartHand", "Act", "Play"},
                "doudizhu": {"StartHand", "Act"}}[game]
    assert set(sent) == expected


def test_a_shengji_bot_knows_every_seats_cards_once_the_deal_is_over(
    server: LiveServer,
) -> None:
    bot = _bot(server, "shengji", seed=11)
    assert isinstance(bot, ShengjiBot)
    stats = LoopStats()
    bot.deal(stats)
    while bot.phase == "declaring":
        assert bot.step(stats)
    for seat, client in enumerate(bot.seats):
        view = client.hand_view(bot.table_id, seat=seat)
        assert sorted(bot.cards[seat]) == sorted(view.own_cards)
    assert stats.errors == {}


@pytest.mark.parametrize("preset", ["classic", "rob"])
def test_a_doudizhu_bot_plays_every_hand_and_knows_the_landlords_cards_after_the_bidding(
    server: LiveServer, preset: str,
) -> None:
    bot = _bot(server, "doudizhu", seed=13, preset=preset)
    assert isinstance(bot, DoudizhuBot)
    stats = LoopStats()
    bot.deal(stats)
    while bot.phase == "bidding":
        assert bot.step(stats)
    for seat, client in enumerate(bot.seats):
        view = client.hand_view(bot.table_id, seat=seat)
        assert sorted(bot.cards[seat]) == sorted(view.own_cards)
    assert sorted(len(cards) for cards in bot.cards) == [17, 17, 20]  # the landlord took 3
    while bot.step(stats):
        pass
    final = bot.seats[0].hand_view(bot.table_id, seat=0)
    state = ddz_pb.HandView()
    assert final.game_view.Unpack(state)
    assert state.phase == "over" and not state.redeal  # played, never redealt
    assert stats.errors == {} and stats.rejected == {}


def test_bench_e2e_refuses_a_game_it_has_no_bot_for(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["e2e", "--server", "127.0.0.1:1", "--game", "tiny"])
    assert stopped.value.code == 2
    assert "invalid choice: 'tiny'" in capsys.readouterr().err


def test_every_built_in_game_has_a_bot_and_a_default_preset() -> None:
    assert set(BOTS) == set(DEFAULT_PRESETS) == set(hosted())


@pytest.mark.parametrize("structure", ECHO_STRUCTURES)
def test_each_echo_structure_answers_with_the_request(structure: str) -> None:
    with EchoServerProcess(structure) as target, grpc.insecure_channel(target) as channel:
        call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
            ECHO_METHOD, request_serializer=None, response_deserializer=None)
        assert call(b"ping " + structure.encode(), timeout=30) == b"ping " + structure.encode()


def test_echo_compare_reports_every_structure_against_the_referees(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["echo", "--compare", "--rounds", "1", "--loops", "1", "--seconds", "0.3",
                 "--warmup", "0.1", "--processes", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rounds"] == 1
    for structure in ECHO_STRUCTURES:
        row = report[structure]
        assert len(row["per_round_calls_per_second"]) == 1
        if report[EXECUTOR]["calls_per_second"]:
            assert row["ratio_to_executor"] == round(
                row["calls_per_second"] / report[EXECUTOR]["calls_per_second"], 3)


def test_an_unknown_echo_structure_is_refused() -> None:
    with pytest.raises(ValueError, match="no echo structure 'fork'"):
        EchoServerProcess("fork")
