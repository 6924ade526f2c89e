"""`fiftyk demo` and `fiftyk replay` against a running referee, in-process and as processes."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from fiftyk_referee.service.cli.hand_text import totals_text
from fiftyk_referee.service.cli.main import EXIT_OUTPUT_CLOSED, main
from fiftyk_referee.service.cli.server_address import SERVER_ENVIRONMENT
from fiftyk_referee.service.games.shengji.text import order_of, sorted_cards
from fiftyk_referee.service.ops import config_keys as keys
from tests.e2e.harness import LiveServer

FIFTYK = str(Path(sys.executable).with_name("fiftyk"))
PROCESS_TIMEOUT = 60
STOP_TIMEOUT = 15
TABLE_LINE = re.compile(r"^fiftyk demo: table (\S+) at ")
HAND_LINE = re.compile(r"^hand (\d+) (\S+): dealer seat \d+, seat \d+ leads$", re.MULTILINE)
TRICK_LINE = re.compile(r"^  trick \d+: .* → seat \d+ takes \d+ points$", re.MULTILINE)
SHENGJI_HAND = re.compile(r"^hand (\d+) (\S+): team 0\+2 at \w+, team 1\+3 at \w+; ",
                          re.MULTILINE)
SHENGJI_TRICK = re.compile(r"^  trick \d+: .* → seat \d+ takes \d+ points$", re.MULTILINE)
SHENGJI_BURY = re.compile(r"^  seat (\d) takes the kitty and buries (.*)$", re.MULTILINE)
REPLAYED_TRICK = re.compile(
    r"^  \[v\d+-v\d+\] trick \d+: .* → seat \d+ takes \d+ points( and leads)?$", re.MULTILINE)
DEALT_SEAT = re.compile(r"^    seat (\d): 25 cards (.*)$", re.MULTILINE)
REPLAYED_PLAY = re.compile(
    r"^seat \d (leads (single|pair|tractor|throw \(.*\)) |throws .* fails: forced to play"
    r" |follows: |trumps: |discards )")
ROOM_POINTS = re.compile(r"^ *(room points: .*)$", re.MULTILINE)


@pytest.fixture(autouse=True)
def _no_key_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLIs fall back to the development keys the test server accepts."""
    monkeypatch.delenv(keys.PLATFORM_KEY, raising=False)
    monkeypatch.delenv(keys.AUDIT_KEY, raising=False)


def _tricks_won(server: LiveServer, hand_id: str) -> int:
    return sum(e.name == "fiftyk.trick_won" for e in server.audit().all_hand_events(hand_id))


@pytest.mark.parametrize(("preset", "players"), [("classic", "4"), ("qq3", "3"),
                                                 ("six_card_two_packs", "5")])
def test_demo_plays_every_hand_to_the_end_and_prints_tricks_and_scores(
        server: LiveServer, capsys: pytest.CaptureFixture[str], preset: str,
        players: str) -> None:
    code = main(["demo", "--server", server.target, "--preset", preset, "--players", players,
                 "--hands", "2", "--seed", "5"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.rstrip().endswith("fiftyk demo: 2/2 hands completed")
    match = TABLE_LINE.match(out)
    assert match is not None
    hands = HAND_LINE.findall(out)
    assert [number for number, _ in hands] == ["1", "2"]
    sections = re.split(HAND_LINE, out)
    for (_, hand_id), section in zip(hands, sections[3::3], strict=True):
        assert len(TRICK_LINE.findall(section)) == _tricks_won(server, hand_id)
        assert "result:" in section and "winner:" in section
    sheet = server.platform().scores(match.group(1))
    assert [h.hand_id for h in sheet.hands] == [hand_id for _, hand_id in hands]
    assert f"final scores after 2 hand(s): {totals_text(sheet.totals)}" in out


def test_shengji_demo_tells_declarations_trump_burial_tricks_levels_and_the_match(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--server", server.target, "--game", "shengji", "--preset", "tractor",
                 "--hands", "2", "--seed", "4"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.rstrip().endswith("fiftyk demo: 2/2 hands completed")
    match = TABLE_LINE.match(out)
    assert match is not None and "game shengji, preset tractor" in out.splitlines()[0]
    hands = SHENGJI_HAND.findall(out)
    assert [number for number, _ in hands] == ["1", "2"]
    audit = server.audit()
    sections = re.split(SHENGJI_HAND, out)[3::3]
    for (_, hand_id), section in zip(hands, sections, strict=True):
        final = audit.hand_view(match.group(1), hand_id).shengji
        assert len(SHENGJI_TRICK.findall(section)) == final.tricks_played
        transcript = audit.export_transcript(hand_id)
        for action in transcript["actions"]:
            if "declare" in action:
                declared = " ".join(action["declare"])
                assert (f"  round {action['round']}: seat {action['seat']} declares"
                        f" {declared}\n") in section
        # The burial is told by its size only: the buried cards are the dealer's secret.
        assert SHENGJI_BURY.findall(section) == [(str(final.dealer), "8 cards")]
        assert f"dealer seat {final.dealer}, trump: rank {final.trump_rank}," in section
        result = final.result
        changes = ", ".join(f"team {t} {before} → {after}" for t, before, after in
                            zip(("0+2", "1+3"), final.levels, result.levels_after,
                                strict=True))
        assert f"    levels: {changes}; next dealer seat {result.next_dealer}\n" in section
        assert f"= {result.attacker_points} points\n" in section
    table = server.platform().get_table(match.group(1))
    assert table.game == "shengji" and table.hands_played == 2
    team0, team1 = final.result.levels_after  # the last hand's levels are the match's
    assert (f"final match after 2 hand(s): team 0+2 at {team0}, team 1+3 at {team1}"
            in out)


def test_replay_tells_a_shengji_hand_trick_by_trick(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--server", server.target, "--game", "shengji", "--seed", "6"]) == 0
    out = capsys.readouterr().out
    table_id = TABLE_LINE.match(out)
    hand_id = SHENGJI_HAND.findall(out)[0][1]
    assert table_id is not None
    assert main(["replay", hand_id, "--server", server.target]) == 0
    out = capsys.readouterr().out
    audit = server.audit()
    events = audit.all_hand_events(hand_id)
    assert out.startswith(f"hand {hand_id} (table {table_id.group(1)}, hand 1): game shengji,"
                          f" preset tractor, 4 players, {len(events)} events\n")
    final = audit.hand_view(table_id.group(1), hand_id).shengji
    tricks = [line for line in out.splitlines() if REPLAYED_TRICK.match(line)]
    assert len(tricks) == final.tricks_played
    # Every play is named by its shape; every trick but the last says who leads next.
    for line in tricks:
        plays = line.split(": ", 1)[1].rsplit(" → ", 1)[0].split(" · ")
        assert len(plays) == 4 and all(REPLAYED_PLAY.match(p) for p in plays), line
    assert [line.endswith(" and leads") for line in tricks] == [True] * (len(tricks) - 1) + [
        False]
    # Every seat's cards as dealt, sorted as a player holds them: trumps first.
    rules = ShengjiRules.from_spec("tractor")
    order = order_of(rules, final.trump_rank,
                     final.trump_suit if final.HasField("trump_suit") else None)
    dealt = DEALT_SEAT.findall(out)
    assert [seat for seat, _ in dealt] == ["0", "1", "2", "3"]
    for _, cards in dealt:
        assert cards.split() == sorted_cards(cards.split(), order)
    transcript = audit.export_transcript(hand_id)
    for action in transcript["actions"]:
        if "declare" in action:
            assert (f"] round {action['round']}: seat {action['seat']} declares"
                    f" {' '.join(action['declare'])}\n") in out
        if "bury" in action:  # the audit role sees the buried cards (sorted)
            buried = " ".join(sorted_cards(action["bury"], order))
            assert f"] seat {action['seat']} buries {buried}; seat {action['seat']} leads\n" in out
    changes = ", ".join(f"team {t} {before} → {after}" for t, before, after in
                        zip(("0+2", "1+3"), final.levels, final.result.levels_after,
                            strict=True))
    assert "\nresult:\n" in out
    assert f"  levels: {changes}; next dealer seat {final.result.next_dealer}\n" in out
    before_end = len(events) - 1  # the last trick won, the result not yet recorded
    assert main(["replay", hand_id, "--version", str(before_end), "--server",
                 server.target]) == 0
    state = capsys.readouterr().out.splitlines()
    assert state[0].endswith(f"at version {before_end} (after shengji.trick_won):")
    assert state[1].startswith(f"  playing, team 0+2 at {final.levels[0]}, team 1+3 at"
                               f" {final.levels[1]}; dealer seat {final.dealer}; trump: rank")
    # The state at a version lists each seat's cards sorted too, and who is to act.
    assert main(["replay", hand_id, "--version", str(before_end - 8), "--server",
                 server.target]) == 0
    state_text = capsys.readouterr().out
    held = re.findall(r"^  seat \d: \d+ cards ([^;]*);", state_text, re.MULTILINE)
    assert held and all(c.split() == sorted_cards(c.split(), order) for c in held)
    assert re.search(r"^  to act: seat \d", state_text, re.MULTILINE)


def test_shengji_demo_prints_the_qq_room_points_as_the_replay_does(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--server", server.target, "--game", "shengji", "--preset",
                 "tractor_qq", "--hands", "2", "--seed", "7"]) == 0
    out = capsys.readouterr().out
    hands = SHENGJI_HAND.findall(out)
    demo_lines = ROOM_POINTS.findall(out)
    assert len(hands) == 2 and len(demo_lines) == 2
    for (_, hand_id), demo_line in zip(hands, demo_lines, strict=True):
        assert main(["replay", hand_id, "--server", server.target]) == 0
        assert ROOM_POINTS.findall(capsys.readouterr().out) == [demo_line]
    first, second = (re.search(r"after: (.*)$", line) for line in demo_lines)
    assert first is not None and second is not None
    assert sum(map(int, second.group(1).split())) == 0  # room points move between players


def test_demo_refuses_a_preset_of_another_game(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--server", server.target, "--game", "shengji", "--preset", "classic"])
    assert code == 2
    assert "unknown preset 'classic'" in capsys.readouterr().err


def test_replay_tells_a_stored_hand_trick_by_trick(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--server", server.target, "--preset", "five_card", "--seed", "8"]) == 0
    hand_id = HAND_LINE.findall(capsys.readouterr().out)[0][1]
    assert main(["replay", hand_id, "--server", server.target]) == 0
    out = capsys.readouterr().out
    audit = server.audit()
    events = audit.all_hand_events(hand_id)
    assert out.startswith(f"hand {hand_id} ")
    assert f"{len(events)} events" in out.splitlines()[0]
    assert len(REPLAYED_TRICK.findall(out)) == _tricks_won(server, hand_id)
    dealt = audit.hand_at(hand_id, 1)
    for state in dealt.seats:
        assert f"  seat {state.seat}: {len(state.cards)} cards {' '.join(state.cards)};" in out
    drawn = [e.fiftyk_cards_drawn for e in events if e.HasField("fiftyk_cards_drawn")]
    assert drawn and all(f"seat {d.seat} draws {' '.join(d.cards)}" in out for d in drawn)
    assert "result:" in out and "winner:" in out


def test_replay_shows_the_state_at_a_version(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--server", server.target, "--seed", "9"]) == 0
    hand_id = HAND_LINE.findall(capsys.readouterr().out)[0][1]
    assert main(["replay", hand_id, "--version", "3", "--server", server.target]) == 0
    out = capsys.readouterr().out
    at = server.audit().hand_at(hand_id, 3)
    assert re.search(r"at version 3 \(after fiftyk\.\w+\):$", out.splitlines()[0])
    for state in at.seats:
        assert f"  seat {state.seat}: {len(state.cards)} cards {' '.join(state.cards)};" in out
    assert f"  to act: seat {at.turn_seat}" in out


def test_replay_of_an_unknown_hand_fails_with_the_reason(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", "00000000-0000-0000-0000-000000000000", "--server",
                 server.target])
    assert code == 1
    assert "NOT_FOUND HAND_NOT_FOUND" in capsys.readouterr().err


def test_demo_with_a_wrong_platform_key_fails_with_the_reason(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["demo", "--server", server.target, "--platform-key", "wrong"])
    captured = capsys.readouterr()
    assert code == 1
    assert "UNAUTHENTICATED INVALID_PLATFORM_KEY" in captured.err
    assert "0/1 hands completed" in captured.out


@pytest.fixture
def serve_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`fiftyk serve --port 0` in a data directory; yields the process and its address."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIFTYK_")}
    process = subprocess.Popen(
        [FIFTYK, "serve", "--port", "0", "--metrics-port", "0", "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        match = re.match(r"fiftyk serving grpc=(\S+):(\d+) metrics=(\d+)$", first.strip())
        assert match is not None, first
        yield process, f"{match.group(1)}:{match.group(2)}"
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_the_installed_commands_serve_play_a_demo_and_replay_it(
        serve_process: tuple[subprocess.Popen[str], str]) -> None:
    process, target = serve_process
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIFTYK_")}
    demo = subprocess.run([FIFTYK, "demo", "--server", target, "--preset", "qq4"],
                          capture_output=True, text=True, timeout=PROCESS_TIMEOUT, env=env,
                          check=False)
    assert demo.returncode == 0, demo.stderr
    assert "1/1 hands completed" in demo.stdout
    hand_id = HAND_LINE.findall(demo.stdout)[0][1]
    replay = subprocess.run([FIFTYK, "replay", hand_id, "--server", target],
                            capture_output=True, text=True, timeout=PROCESS_TIMEOUT, env=env,
                            check=False)
    assert replay.returncode == 0, replay.stderr
    assert REPLAYED_TRICK.search(replay.stdout) and "winner:" in replay.stdout
    process.send_signal(signal.SIGTERM)
    assert process.wait(STOP_TIMEOUT) == 0


# -- the command line's edges: defaults, hints, a closed output ------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def _fiftyk(*argv: str, server: str | None = None,
            stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """Run the installed `fiftyk` with no FIFTYK_ variable but FIFTYK_SERVER=`server`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIFTYK_")}
    if server is not None:
        env[SERVER_ENVIRONMENT] = server
    return subprocess.run([FIFTYK, *argv], stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=PROCESS_TIMEOUT, env=env, check=False)


def _demo_hand(server: LiveServer, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """Play a one-hand demo in process; its (table id, hand id)."""
    assert main(["demo", "--server", server.target, "--preset", "five_card", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    table = TABLE_LINE.match(out)
    assert table is not None, out
    return table.group(1), HAND_LINE.findall(out)[0][1]


def test_the_client_commands_call_the_server_in_fiftyk_server(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    _, hand_id = _demo_hand(server, capsys)
    replay = _fiftyk("replay", hand_id, server=server.target)
    assert replay.returncode == 0, replay.stderr
    assert replay.stdout.startswith(f"hand {hand_id} ")
    health = _fiftyk("health", server=server.target)
    assert (health.returncode, health.stdout) == (0, f"{server.target}: SERVING\n")


def test_replay_of_a_table_id_says_it_is_a_table_and_names_its_hands(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    table_id, hand_id = _demo_hand(server, capsys)
    assert main(["replay", table_id, "--server", server.target]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("fiftyk replay: NOT_FOUND HAND_NOT_FOUND")
    assert err[1:] == [f"fiftyk replay: {table_id} is a table, not a hand; its hand: {hand_id}"]


def test_the_table_hint_names_the_latest_hands_first(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--server", server.target, "--preset", "five_card", "--hands", "6",
                 "--seed", "2"]) == 0
    out = capsys.readouterr().out
    table = TABLE_LINE.match(out)
    assert table is not None, out
    hands = [hand_id for _, hand_id in HAND_LINE.findall(out)]
    assert len(hands) == 6
    assert main(["replay", table.group(1), "--server", server.target]) == 1
    hint = capsys.readouterr().err.splitlines()[1]
    assert hint == (f"fiftyk replay: {table.group(1)} is a table, not a hand; its hands"
                    f" (latest first, 6 in all): {', '.join(reversed(hands[1:]))}")


def test_export_of_a_table_id_says_it_is_a_table_and_names_its_hands(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    table_id, hand_id = _demo_hand(server, capsys)
    assert main(["export", table_id, "--server", server.target]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("fiftyk export: NOT_FOUND HAND_NOT_FOUND")
    assert err[1:] == [f"fiftyk export: {table_id} is a table, not a hand; its hand: {hand_id}"]


def test_replay_of_a_table_id_gives_no_hint_to_a_credential_that_cannot_read_it(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    table_id, _ = _demo_hand(server, capsys)
    assert main(["replay", table_id, "--server", server.target, "--audit-key", "wrong"]) == 1
    err = capsys.readouterr().err
    assert "UNAUTHENTICATED INVALID_AUDIT_KEY" in err
    assert "is a table" not in err


@pytest.mark.parametrize("version", ["0", "-3"])
def test_replay_version_counts_from_one(version: str) -> None:
    done = _fiftyk("replay", "HAND", "--version", version, "--server", "127.0.0.1:1")
    assert done.returncode == 2
    assert done.stdout == ""
    assert (f"argument --version: {version}: versions start at 1, the hand's first event"
            " (its deal)") in done.stderr
    assert "MISSING_FIELD" not in done.stderr


def test_replay_version_1_is_the_deal(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    _, hand_id = _demo_hand(server, capsys)
    assert main(["replay", hand_id, "--version", "1", "--server", server.target]) == 0
    assert re.search(r"at version 1 \(after fiftyk\.hand_dealt\):$",
                     capsys.readouterr().out.splitlines()[0])


def test_replay_names_the_cause_when_no_server_answers() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    done = _fiftyk("replay", "HAND", server=address)
    assert done.returncode == 1
    assert done.stderr == f"fiftyk replay: no server at {address}: connection refused\n"


@pytest.mark.parametrize(("preset", "other", "suggestion"), [
    ("tractor", "fiftyk", "'tractor' is a preset of shengji: add --game shengji"),
    # A preset name two games share: both are named.
    ("classic", "shengji", "'classic' is a preset of doudizhu or fiftyk: add --game doudizhu"
                           " or --game fiftyk"),
])
def test_demo_of_another_games_preset_suggests_its_game(
        server: LiveServer, capsys: pytest.CaptureFixture[str], preset: str, other: str,
        suggestion: str) -> None:
    code = main(["demo", "--server", server.target, "--game", other, "--preset", preset])
    assert code == 2
    err = capsys.readouterr().err
    assert f"unknown preset '{preset}'" in err
    assert err.rstrip().endswith(suggestion)


def test_the_client_commands_into_a_closed_pipe_end_quietly(
        server: LiveServer, capsys: pytest.CaptureFixture[str]) -> None:
    """`fiftyk replay HAND | head -1`: the reader goes away; no BrokenPipeError traceback."""
    _, hand_id = _demo_hand(server, capsys)
    for argv in (["replay", hand_id], ["replay", hand_id, "--text", "people"],
                 ["export", hand_id], ["demo", "--preset", "five_card", "--text", "people"],
                 ["health"]):
        read_end, write_end = os.pipe()
        os.close(read_end)  # nobody reads: every write fails, as after `head -1` exits
        try:
            done = _fiftyk(*argv, server=server.target, stdout=write_end)
        finally:
            os.close(write_end)
        assert (done.returncode, done.stderr) == (EXIT_OUTPUT_CLOSED, ""), argv


def test_the_readmes_export_and_verify_commands_work_as_written(
        server: LiveServer, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """README: `export HAND_ID -o hand.json`, then `verify hand.json --key` with the key the
    quickstart's referee signs with (the development key's public half in docs/examples)."""
    _, hand_id = _demo_hand(server, capsys)
    exported = subprocess.run(
        [FIFTYK, "export", hand_id, "--server", server.target, "-o", "hand.json"],
        capture_output=True, text=True, timeout=PROCESS_TIMEOUT, check=False, cwd=tmp_path,
        env={k: v for k, v in os.environ.items() if not k.startswith("FIFTYK_")})
    assert exported.returncode == 0, exported.stderr
    verified = subprocess.run(
        [FIFTYK, "verify", "hand.json", "--key", str(EXAMPLES / "dev-signing-key.pub")],
        capture_output=True, text=True, timeout=PROCESS_TIMEOUT, check=False, cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "a trusted key" in verified.stdout
