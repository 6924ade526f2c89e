"""Witnesses against a referee whose database someone else can write, on SQLite and PostgreSQL.

A real referee (configured with one witness key) and the real `fiftyk witness` command line:
the witness cosigns the ledger's checkpoints as hands of every hosted game finish, and evidence
exported afterwards carries the cosignature, which `fiftyk verify --witness-key` requires.
Then someone with the database's password rolls the ledger back (or replaces a finished
hand with a consistently re-chained one) and deletes the stored checkpoints and
cosignatures, and the referee is restarted: the referee's own checks pass, the witness
refuses to cosign — with a message naming both checkpoints — also after its own restart,
and evidence of the rewritten ledger fails `--witness-key`. A key the operator did not list
is refused.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import pytest

from fiftyk_referee.domain.chain import GENESIS, event_hash, seal, unseal
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY
from fiftyk_referee.service.trust.ledger import CHECKPOINTS_ID
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, Signer, public_pem
from fiftyk_referee.service.trust.witness import (
    WitnessKeys,
    cosignature_body,
    public_key_line,
    witness_stream,
)
from tests.e2e.every_game import GAMES as HOSTED
from tests.e2e.harness import LiveServer, Seated, server_config
from tests.integration.test_fairness import Database

CLI = [sys.executable, "-m", "fiftyk_referee.service.cli"]
CLI_TIMEOUT_SECONDS = 120
WAIT_SECONDS = 120  # a generous bound on a loaded machine, not a speed requirement
GAMES = {"fiftyk": ("qq3", 3), "shengji": ("tractor", 4), "doudizhu": ("classic", 3)}
WITNESS = Signer.from_text("a1" * 32)
STRANGER = Signer.from_text("b2" * 32)  # a witness key the referee's operator never listed
REFEREE = Signer.from_text(DEV_SIGNING_KEY)


@dataclass
class Keys:
    """The key files: the referee's public key, the witness's pair, a stranger's pair."""

    referee: Path
    witness: Path
    witness_public: Path
    stranger: Path
    stranger_public: Path


@pytest.fixture
def keys(tmp_path: Path) -> Keys:
    folder = tmp_path / "keys"
    folder.mkdir()
    files = Keys(folder / "referee.pub", folder / "witness.key", folder / "witness.pub",
                 folder / "stranger.key", folder / "stranger.pub")
    files.referee.write_text(public_pem(REFEREE.public))
    for signer, private, public in ((WITNESS, files.witness, files.witness_public),
                                    (STRANGER, files.stranger, files.stranger_public)):
        private.write_text(signer.key.private_bytes_raw().hex())
        public.write_text(public_pem(signer.public))
    return files


class WitnessCases:
    """The cases every backend must pass; subclasses provide `database_url`."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        raise NotImplementedError

    @pytest.fixture
    def referee(self, database_url: str | None, tmp_path: Path) -> Iterator[LiveReferee]:
        referee = LiveReferee(database_url, tmp_path)
        yield referee
        referee.stop()

    def test_a_witness_cosigns_as_hands_of_every_game_finish_and_verify_requires_it(
            self, referee: LiveReferee, keys: Keys, tmp_path: Path) -> None:
        state = tmp_path / "witness"
        rng = random.Random(29)
        follower = subprocess.Popen(
            [*CLI, "witness", *witness_args(referee.server, keys, state), "--interval",
             "0.2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            hands = {game: referee.play(game, rng) for game in GAMES}
            # The running witness cosigns the hands' tree and gives it to the referee.
            evidence = referee.wait_for_cosigned(hands[list(GAMES)[-1]], size=len(GAMES))
        finally:
            follower.terminate()
            out, err = follower.communicate(timeout=CLI_TIMEOUT_SECONDS)
        assert f"cosigned {len(GAMES)} hands" in out, (out, err)
        assert "the referee keeps it as witness alice" in out, err
        (entry,) = evidence["ledger"]["cosignatures"]
        assert entry["witness"] == "alice" and entry["cosignature"]["size"] == len(GAMES)
        assert sorted(p.name for p in (state / "cosigned").iterdir())[-1] \
            == f"{len(GAMES):012d}.json"
        for game, hand_id in hands.items():
            done = verify_cli(referee.export(hand_id, tmp_path), keys, keys.witness_public)
            assert done.returncode == 0, (game, done.stdout, done.stderr)
            assert "ok  witnesses: hand" in done.stdout and "alice (ed25519:" in done.stdout
        # The stranger's key never cosigned: requiring it fails, with the reason.
        done = verify_cli(referee.export(hands["fiftyk"], tmp_path), keys, keys.stranger_public)
        assert done.returncode == 1
        assert f"no cosignature by witness key {STRANGER.key_id} covers this hand" in done.stderr
        # A hand finished after the witness's last round is not covered until the next one.
        later = referee.play("fiftyk", rng)
        done = verify_cli(referee.export(later, tmp_path), keys, keys.witness_public)
        assert done.returncode == 1 and "FAILED  witnesses:" in done.stdout
        assert f"cosigned only earlier trees: alice ({len(GAMES)} hands, before this hand)" \
            in done.stdout
        once = run_witness(referee.server, keys, state)
        assert once.returncode == 0, once.stderr
        assert f"cosigned {len(GAMES) + 1} hands" in once.stdout, once.stdout
        done = verify_cli(referee.export(later, tmp_path), keys, keys.witness_public)
        assert done.returncode == 0, done.stdout + done.stderr
        # Without --witness-key the cosignatures are checked for what they are, not required.
        done = verify_cli(referee.export(later, tmp_path), keys)
        assert done.returncode == 0 and "witness keys not given" in done.stdout
        # The referee keeps them in its store: a restarted referee still carries them.
        referee.stop()
        referee.start()
        done = verify_cli(referee.export(later, tmp_path), keys, keys.witness_public)
        assert done.returncode == 0, done.stdout + done.stderr

    def test_the_seats_stream_and_scores_carry_the_checkpoint_that_includes_their_hand(
            self, referee: LiveReferee, keys: Keys) -> None:
        rng = random.Random(7)
        for game in GAMES:
            table = referee.table(game)
            watch = table.seats[0].watch(table.table_id, timeout=WAIT_SECONDS)
            try:
                hand_id = referee.play(game, rng, table)
                recorded = next(m for m in watch if m.event.name == "table.hand_recorded")
            finally:
                watch.cancel()  # type: ignore[attr-defined]
            checkpoint = json.loads(recorded.checkpoint_json)
            assert recorded.ledger_index < checkpoint["size"]
            assert checkpoint["signature"]["key_id"] == REFEREE.key_id
            scores = table.seats[1].scores(table.table_id)
            (row,) = [h for h in scores.hands if h.hand_id == hand_id]
            assert row.HasField("ledger_index") and row.ledger_index == recorded.ledger_index
            assert json.loads(scores.checkpoint_json)["size"] >= checkpoint["size"]
        # Anyone may fetch the checkpoint, with the consistency proof from an earlier one.
        answer = referee.server.client().checkpoint(1)
        assert json.loads(answer.checkpoint_json)["size"] == len(GAMES)
        assert (answer.consistency.from_size, answer.consistency.to_size) == (1, len(GAMES))
        # From a tree of one hand: one hash per level above the first leaf.
        assert len(answer.consistency.hashes) == (len(GAMES) - 1).bit_length()

    def test_an_unknown_witness_key_and_a_bad_cosignature_are_refused(
            self, referee: LiveReferee, keys: Keys, tmp_path: Path) -> None:
        referee.play("fiftyk", random.Random(3))
        stranger = run_witness(referee.server, keys, tmp_path / "stranger", key=keys.stranger)
        assert stranger.returncode == 2
        assert "PERMISSION_DENIED" in stranger.stderr and "UNKNOWN_WITNESS" in stranger.stderr
        client = referee.server.client()
        checkpoint = json.loads(client.checkpoint().checkpoint_json)
        body = cosignature_body(checkpoint, datetime.now(UTC))
        refusals = {
            "stranger": STRANGER.sign(body),
            "forged": {**WITNESS.sign(body), "size": 1 + checkpoint["size"]},
            "other tree": WITNESS.sign({**body, "root": "ab" * 32}),
            "larger tree": WITNESS.sign({**body, "size": 1 + checkpoint["size"]}),
            "not json": "{",
        }
        found = {}
        for name, document in refusals.items():
            with pytest.raises(grpc.RpcError) as refused:
                client.add_cosignature(document)
            details = error_details(refused.value)
            found[name] = (details.code, details.reason)
        denied = (grpc.StatusCode.PERMISSION_DENIED, "UNKNOWN_WITNESS")
        invalid = (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_COSIGNATURE")
        assert found == {"stranger": denied, "forged": invalid, "other tree": invalid,
                         "larger tree": invalid, "not json": invalid}
        # The listed witness's own cosignature is kept once per size.
        assert client.add_cosignature(WITNESS.sign(body)).stored
        again = client.add_cosignature(WITNESS.sign(body))
        assert again.witness == "alice" and not again.stored

    def test_cosignatures_deleted_from_the_database_are_given_again_by_the_witness(
            self, referee: LiveReferee, keys: Keys, tmp_path: Path) -> None:
        hand_id = referee.play("shengji", random.Random(5))
        state = tmp_path / "witness"
        assert run_witness(referee.server, keys, state).returncode == 0
        referee.stop()
        referee.database().delete(str(witness_stream(WITNESS.key_id)))
        referee.start()
        done = verify_cli(referee.export(hand_id, tmp_path), keys, keys.witness_public)
        assert done.returncode == 1 and "no cosignature by witness key" in done.stderr
        again = run_witness(referee.server, keys, state)
        assert again.returncode == 0, again.stderr
        assert "nothing new since the checkpoint cosigned last; the referee had lost its" \
            " cosignature, given again" in again.stdout
        done = verify_cli(referee.export(hand_id, tmp_path), keys, keys.witness_public)
        assert done.returncode == 0, done.stdout + done.stderr
        held = run_witness(referee.server, keys, state)
        assert held.returncode == 0 and "the referee holds it (witness alice)" in held.stdout

    @pytest.mark.parametrize("game", sorted(GAMES))
    def test_a_rolled_back_ledger_with_its_checkpoints_deleted_is_caught_by_the_witness(
            self, referee: LiveReferee, keys: Keys, tmp_path: Path, game: str) -> None:
        rng = random.Random(41)
        table = referee.table(game)
        first = referee.play(game, rng, table)
        second = referee.play(game, rng, table)
        state = tmp_path / "witness"
        cosigned = run_witness(referee.server, keys, state)
        assert cosigned.returncode == 0 and "cosigned 2 hands" in cosigned.stdout
        assert referee.server.audit().verify_hand(first).ok
        referee.audit_once()  # the referee signs and stores its own checkpoint of two hands
        referee.stop()
        # Someone with the database's password: the second hand, the table's record of it,
        # the stored checkpoints and the witness's cosignatures, gone.
        database = referee.database()
        rows = database.rows(table.table_id)
        started = next(v for v, t, s in rows if t.endswith("HandStarted") and second.encode() in s)
        database.delete(second)
        database.delete(table.table_id, range(started, rows[-1][0] + 1))
        database.delete(str(CHECKPOINTS_ID))
        database.delete(str(witness_stream(WITNESS.key_id)))
        referee.start()
        # The referee cannot tell: its own checks of the first hand pass.
        assert referee.server.audit().verify_hand(first).ok
        assert referee.audit_once() == []
        for attempt in ("first", "after the witness's restart"):
            refused = run_witness(referee.server, keys, state)
            assert refused.returncode == 1, (attempt, refused.stdout, refused.stderr)
            assert "REFUSED to cosign" in refused.stderr
            assert ("ROLLED BACK: the referee's ledger holds 1 hands, fewer than the 2 of the"
                    " checkpoint this witness cosigned") in refused.stderr
            shown = checkpoints_shown(refused.stderr)
            assert (shown["cosigned before"]["size"], shown["offered now"]["size"]) == (2, 1)
        assert json.loads((state / "refused.json").read_text())["cosigned"]["size"] == 2
        assert json.loads((state / "latest.json").read_text())["checkpoint"]["size"] == 2
        done = verify_cli(referee.export(first, tmp_path), keys, keys.witness_public)
        assert done.returncode == 1
        assert f"no cosignature by witness key {WITNESS.key_id} covers" in done.stderr

    @pytest.mark.parametrize("game", sorted(GAMES))
    def test_a_finished_hand_replaced_and_re_chained_is_caught_by_the_witness_as_a_fork(
            self, referee: LiveReferee, keys: Keys, tmp_path: Path, game: str) -> None:
        rng = random.Random(43)
        table = referee.table(game)
        hand_id = referee.play(game, rng, table)
        state = tmp_path / "witness"
        assert run_witness(referee.server, keys, state).returncode == 0
        referee.stop()
        database = referee.database()
        head = replace_hand(database, hand_id)
        rechain_table_record(database, table.table_id, hand_id, head)
        database.delete(str(CHECKPOINTS_ID))
        database.delete(str(witness_stream(WITNESS.key_id)))
        referee.start()
        for _ in range(2):  # the second run is a restarted witness
            refused = run_witness(referee.server, keys, state)
            assert refused.returncode == 1, refused.stdout + refused.stderr
            assert "FORKED: the referee's tree of 1 hands has root" in refused.stderr
            shown = checkpoints_shown(refused.stderr)
            assert shown["cosigned before"]["root"] != shown["offered now"]["root"]
        # A later hand does not make the rewritten ledger acceptable: it still does not
        # extend the tree the witness cosigned.
        referee.play(game, rng, referee.reconnect(table))
        refused = run_witness(referee.server, keys, state)
        assert refused.returncode == 1 and "FORKED: the referee's tree of 2 hands does not" \
            " extend the 1 this witness cosigned" in refused.stderr


class LiveReferee:
    """The live referee over one database, which the test can stop, tamper and restart."""

    def __init__(self, database_url: str | None, tmp_path: Path) -> None:
        self.database_url = database_url
        self.tmp_path = tmp_path
        witnesses = tmp_path / "witnesses.txt"
        witnesses.write_text(f"# name public key\n{public_key_line('alice', WITNESS.public)}\n")
        self.witnesses = WitnessKeys.parse(witnesses.read_text())
        self.server = self._live()

    def _live(self) -> LiveServer:
        settings: dict[str, Any] = {"witness_keys": self.witnesses,
                                    "integrity_check_seconds": 0}
        if self.database_url:
            settings["database_url"] = self.database_url
        return LiveServer(server_config(self.tmp_path, **settings))

    def start(self) -> None:
        """Start the referee again on the same database."""
        self.server = self._live()

    def stop(self) -> None:
        self.server.stop()

    def database(self) -> Database:
        return Database(self.database_url, self.tmp_path)

    def audit_once(self) -> list[str]:
        """One integrity audit run in the live referee; its problems."""
        app = self.server.running.app
        return list(app.audit.run().problems)

    def table(self, game: str) -> Seated:
        preset, players = GAMES[game]
        platform = self.server.platform()
        table_id = platform.create_table(preset, players, options={"hands": 5},
                                         game="" if game == "fiftyk" else game).table.table_id
        tokens = [platform.join_table(table_id, f"w-{table_id[:8]}-{s}", s).seat_token
                  for s in range(players)]
        return Seated(table_id, players, tokens,
                      [self.server.client(token=t) for t in tokens], platform)

    def reconnect(self, table: Seated) -> Seated:
        """The table's seats and platform on clients of the restarted referee."""
        return Seated(table.table_id, table.players, table.tokens,
                      [self.server.client(token=t) for t in table.tokens],
                      self.server.platform())

    def play(self, game: str, rng: random.Random, table: Seated | None = None) -> str:
        """One whole hand of `game` (at a new table unless one is given); its id."""
        table = table or self.table(game)
        view = table.platform.start_hand(table.table_id).hand
        return HOSTED[game].play_out(table, view, rng).hand_id

    def export(self, hand_id: str, folder: Path) -> Path:
        """`fiftyk export` of the hand into a file."""
        path = folder / f"{hand_id}-{time.monotonic_ns()}.json"
        done = subprocess.run(
            [*CLI, "export", hand_id, "--server", self.server.target, "--audit-key",
             DEV_AUDIT_KEY, "-o", str(path)], capture_output=True, text=True,
            timeout=CLI_TIMEOUT_SECONDS, check=False)
        assert done.returncode == 0, done.stderr
        return path

    def wait_for_cosigned(self, hand_id: str, *, size: int) -> dict[str, Any]:
        """The hand's evidence once it carries a cosignature of `size` hands (polled)."""
        deadline = time.monotonic() + WAIT_SECONDS
        audit = self.server.audit()
        while True:
            evidence = audit.export_evidence(hand_id)
            entries = evidence["ledger"].get("cosignatures") or []
            if any(e["cosignature"]["size"] >= size for e in entries):
                return evidence
            assert time.monotonic() < deadline, "the witness cosigned nothing in time"
            time.sleep(0.1)


def witness_args(server: LiveServer, keys: Keys, state: Path, key: Path | None = None
                 ) -> list[str]:
    return ["--referee", server.target, "--key", str(key or keys.witness), "--referee-key",
            str(keys.referee), "--state", str(state)]


def run_witness(server: LiveServer, keys: Keys, state: Path, *, key: Path | None = None
                ) -> subprocess.CompletedProcess[str]:
    """One round of `fiftyk witness --once` (a new process each time: a restarted witness)."""
    return subprocess.run([*CLI, "witness", *witness_args(server, keys, state, key), "--once"],
                          capture_output=True, text=True, timeout=CLI_TIMEOUT_SECONDS,
                          check=False)


def verify_cli(evidence: Path, keys: Keys, *witness_keys: Path
               ) -> subprocess.CompletedProcess[str]:
    """`fiftyk verify --key` with the referee's key and each witness key given."""
    flags = [arg for key in witness_keys for arg in ("--witness-key", str(key))]
    return subprocess.run([*CLI, "verify", str(evidence), "--key", str(keys.referee), *flags],
                          capture_output=True, text=True, timeout=CLI_TIMEOUT_SECONDS,
                          check=False)


def checkpoints_shown(stderr: str) -> dict[str, Any]:
    """The two checkpoints a refusal names, by their labels."""
    shown = {}
    for line in stderr.splitlines():
        label, _, text = line.strip().partition(":")
        if label in ("cosigned before", "offered now"):
            shown[label] = json.loads(text)
    return shown


def replace_hand(database: Database, hand_id: str) -> str:
    """Edit a finished hand's last event (its time) and re-chain the hand: its new head."""
    rows = database.rows(hand_id)
    version, topic, state = rows[-1]
    rows[-1] = (version, topic, state.replace(b'"_data_":"20', b'"_data_":"19', 1))
    assert rows[-1][2] != state
    return rewrite(database, hand_id, rows)


def rechain_table_record(database: Database, table_id: str, hand_id: str, head: str) -> None:
    """Point the table's record of the hand at its new head and re-chain the table."""
    rows = database.rows(table_id)
    for index, (version, topic, state) in enumerate(rows):
        if topic.endswith("HandRecorded") and hand_id.encode() in state:
            old = json.loads(unseal(state)[1])["hand_head"]
            rows[index] = (version, topic, state.replace(old.encode(), head.encode()))
    rewrite(database, table_id, rows)


def rewrite(database: Database, stream: str, rows: list[tuple[int, str, bytes]]) -> str:
    """Store the rows sealed again from scratch (a forger's consistent chain); the head."""
    prev = GENESIS
    for version, topic, state in rows:
        plain = unseal(state)[1]
        own = event_hash(prev, stream, version, topic, plain)
        database.set_state(stream, version, seal(prev, own, plain))
        prev = own
    return prev


class TestSQLite(WitnessCases):
    """The referee on SQLite in a temporary directory."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        return None


@pytest.mark.postgres
class TestPostgreSQL(WitnessCases):
    """The referee on a fresh database of the throwaway PostgreSQL server."""

    @pytest.fixture
    def database_url(self, fresh_postgres_db: str) -> str | None:
        return fresh_postgres_db
