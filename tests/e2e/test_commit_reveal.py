"""Commit, then reveal, and the attacks it exposes: the real server on SQLite and PostgreSQL.

A new seat-entropy table's seats commit to their bytes, then reveal them; every accepted
commitment and reveal is answered with a receipt the referee signed. Then the operator
attacks, as someone who runs the referee's code with changes of their own against the real
store would (a second referee process on the same database, `Referee`, whose table
aggregate is tampered with in memory before it saves — no command of the service does
this):

- a seat withholds its reveal: every watcher sees it in `table.hand_started.withheld`, and
  `fiftyk verify` names the seat;
- the operator deals ignoring a seat's accepted commitment and bytes: the evidence alone is
  consistent, the seat's receipts make `fiftyk verify --receipt` fail;
- the operator re-draws after seeing the commitments: `fiftyk verify` fails the `draw`
  check; when the operator also hides the first draw, the seat's receipt for it fails;
- the operator commits and reveals for a seat whose player bound a key of its own: the edge
  refuses it without the key's signature, and when the operator's code goes around the
  edge, `fiftyk verify` and `VerifyHand` fail the `draw` check (an impersonation).

Each detection is the real command line's output on an exported file, with the referee's
published key.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from fiftyk_referee.domain.deal import DRAW_ALGORITHM
from fiftyk_referee.domain.table import Table
from fiftyk_referee.service.core.application import Referee
from fiftyk_referee.service.core.store import persistence_env
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.trust import signing
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, Signer, public_pem
from tests.e2e.harness import COMPLETED, LiveServer, Seated, server_config
from tests.e2e.test_seat_entropy import GAMES, PLAY_OUT, entropy_table, reason

LONG_WINDOW = 300  # the seats commit and reveal well within it, however loaded the machine
CLI_TIMEOUT_SECONDS = 120
REFEREE = Signer.from_text(DEV_SIGNING_KEY)


def secret(table: Seated, seat: int) -> bytes:
    return hashlib.sha256(f"{table.table_id}/{seat}".encode()).digest()


def commit(table: Seated, seats: range | list[int]) -> dict[int, dict[str, Any]]:
    """Commit the seats; their signed receipts."""
    receipts = {}
    for seat in seats:
        answer = table.seats[seat].commit_entropy(table.table_id, secret(table, seat))
        receipts[seat] = json.loads(answer.receipt_json)
    return receipts


def reveal(table: Seated, seats: range | list[int]) -> tuple[dict[int, dict[str, Any]],
                                                              pb.ContributeEntropyResponse]:
    """Reveal the seats' bytes; their signed receipts and the last answer."""
    receipts, answer = {}, pb.ContributeEntropyResponse()
    for seat in seats:
        answer = table.seats[seat].reveal_entropy(table.table_id, secret(table, seat))
        receipts[seat] = json.loads(answer.receipt_json)
    return receipts, answer


def events(table: Seated, name: str) -> list[pb.Event]:
    return [e for e in table.platform.read_events(topics=[name], limit=1000).events
            if e.aggregate_id == table.table_id]


class CommitRevealCases:
    """The cases every backend must pass; subclasses provide `database_url`. The class's
    tests share one referee: each plays tables of its own, and the operator's tampering
    touches only the table it is given."""

    @pytest.fixture(scope="class")
    @classmethod
    def database_url(cls) -> str | None:
        raise NotImplementedError

    @pytest.fixture(scope="class")
    @classmethod
    def server(cls, database_url: str | None,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
        settings: dict[str, Any] = {}
        if database_url:
            settings["database_url"] = database_url
        live = LiveServer(server_config(tmp_path_factory.mktemp("commit-reveal"), **settings))
        yield live
        live.stop()

    @pytest.fixture
    def operator(self, server: LiveServer) -> Iterator[Referee]:
        """A second referee process on the same store, run by a dishonest operator."""
        referee = Referee(persistence_env(server.config.database))
        yield referee
        referee.close()

    def verify_cli(self, server: LiveServer, hand_id: str, tmp_path: Path,
                   receipts: list[dict[str, Any]] = ()) -> subprocess.CompletedProcess[str]:
        """The exported evidence through `fiftyk verify --key`, with each receipt given."""
        key = tmp_path / "referee.pub"
        key.write_text(public_pem(REFEREE.public))
        evidence = tmp_path / f"{hand_id}.json"
        evidence.write_text(json.dumps(server.audit().export_evidence(hand_id)))
        given = []
        for n, receipt in enumerate(receipts):
            path = tmp_path / f"receipt-{n}.json"
            path.write_text(json.dumps(receipt))
            given += ["--receipt", str(path)]
        return subprocess.run(
            [sys.executable, "-m", "fiftyk_referee.service.cli", "verify", str(evidence),
             "--key", str(key), *given],
            capture_output=True, text=True, timeout=CLI_TIMEOUT_SECONDS, check=False)

    def play(self, table: Seated, game: str, hand_id: str) -> None:
        view = table.platform.hand_view(table.table_id, hand_id)
        assert PLAY_OUT[game](table, view, random.Random(29)).status == COMPLETED

    def operator_deals(self, operator: Referee, table_id: str,
                       tamper: Any = None) -> str:
        """The operator's process deals the open draw as if its window had closed, after
        `tamper` changed the table in memory; the hand's id."""
        table: Table = operator.get_table(table_id)
        assert table.draw is not None
        if tamper is not None:
            tamper(table)
        hand = table.close_draw(table.draw["number"],
                                datetime.fromisoformat(table.draw["deadline"]))
        operator.save(table, hand)
        return str(hand.id)

    # -- the protocol ---------------------------------------------------------------------

    @pytest.mark.parametrize("game", sorted(GAMES))
    def test_seats_commit_then_reveal_and_their_receipts_verify(
            self, server: LiveServer, game: str, tmp_path: Path) -> None:
        table = entropy_table(server, game, LONG_WINDOW, direct=False)
        opened = table.platform.start_hand(table.table_id).table
        assert not opened.seat_entropy.direct and opened.draw.HasField("commit_deadline")
        assert opened.draw.deadline.ToDatetime() > opened.draw.commit_deadline.ToDatetime()
        [draw_opened] = events(table, "table.draw_opened")
        assert draw_opened.table_draw_opened.HasField("commit_deadline")
        # Bytes before every seat committed are refused: nobody's count before that.
        assert reason(lambda: table.seats[0].reveal_entropy(table.table_id,
                                                            secret(table, 0))) \
            == "ENTROPY_COMMIT_FIRST"
        commits = commit(table, range(table.players))
        assert [(e.table_entropy_committed.seat, e.table_entropy_committed.commitment)
                for e in events(table, "table.entropy_committed")] == [
            (seat, hashlib.sha256(secret(table, seat)).hexdigest())
            for seat in range(table.players)]
        assert reason(lambda: table.seats[0].reveal_entropy(table.table_id, b"\x01" * 32)) \
            == "ENTROPY_MISMATCH"
        reveals, last = reveal(table, range(table.players))
        assert last.HasField("hand")
        for receipt in [*commits.values(), *reveals.values()]:
            assert signing.verify(receipt, [REFEREE.public]) == REFEREE.key_id
            assert receipt["draw_commitment"] == opened.draw.commitment
        hand_id = last.hand.hand_id
        self.play(table, game, hand_id)
        evidence = server.audit().export_evidence(hand_id)
        assert evidence["deal"]["algorithm"] == DRAW_ALGORITHM
        assert evidence["deal"]["draw"]["withheld"] == []
        assert evidence["transcript"]["deal"]["draw"] == evidence["deal"]["draw"]
        checked = server.audit().verify_hand(hand_id)
        assert checked.ok, [(c.check, c.status, c.detail) for c in checked.checks]
        verified = self.verify_cli(server, hand_id, tmp_path,
                                   [commits[0], reveals[0], reveals[table.players - 1]])
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert "every contribution opens its seat's commitment" in verified.stdout
        assert verified.stdout.count("      ok  receipt: ") == 3

    # -- the attacks ----------------------------------------------------------------------

    @pytest.mark.parametrize("game", sorted(GAMES))
    def test_a_withheld_reveal_is_public_and_named_by_the_verifier(
            self, server: LiveServer, operator: Referee, game: str, tmp_path: Path) -> None:
        table = entropy_table(server, game, LONG_WINDOW, direct=False)
        table.platform.start_hand(table.table_id)
        commits = commit(table, range(table.players))
        withholding = table.players - 1
        _, last = reveal(table, range(withholding))
        assert not last.HasField("hand")  # the deal waits for the last reveal, or the deadline
        # The window closes (the operator's process plays the referee's clock here: the
        # same close_draw the clock runs, at the deadline).
        hand_id = self.operator_deals(operator, table.table_id)
        [started] = events(table, "table.hand_started")
        assert list(started.table_hand_started.withheld) == [withholding]
        assert started.table_hand_started.contributions[withholding] == ""
        self.play(table, game, hand_id)
        verified = self.verify_cli(server, hand_id, tmp_path, [commits[withholding]])
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert (f"seat(s) {withholding} committed and withheld their bytes: counted as empty"
                in verified.stdout)
        assert (f"seat {withholding}'s commitment is in the deal; the seat did not reveal in"
                " time" in verified.stdout)

    @pytest.mark.parametrize("game", sorted(GAMES))
    def test_a_contribution_ignored_despite_its_receipt_is_proven_by_the_receipt(
            self, server: LiveServer, operator: Referee, game: str, tmp_path: Path) -> None:
        table = entropy_table(server, game, LONG_WINDOW, direct=False)
        table.platform.start_hand(table.table_id)
        commits = commit(table, range(table.players))
        reveals, _ = reveal(table, range(table.players - 1))

        def drop_seat_0(drawing: Table) -> None:  # as if seat 0 had never sent anything
            assert drawing.draw is not None
            drawing.draw["commitments"][0] = None
            drawing.draw["contributions"][0] = None

        hand_id = self.operator_deals(operator, table.table_id, drop_seat_0)
        self.play(table, game, hand_id)
        # The referee's own evidence is consistent: alone, it passes.
        alone = self.verify_cli(server, hand_id, tmp_path)
        assert alone.returncode == 0, alone.stdout + alone.stderr
        # Seat 0's receipts prove the referee accepted what the deal left out.
        for receipt, said in ((commits[0], "the deal ignored seat 0's commitment"),
                              (reveals[0], "the deal counted seat 0's contribution as"
                                           " empty although the referee accepted its bytes")):
            caught = self.verify_cli(server, hand_id, tmp_path, [receipt])
            assert caught.returncode == 1, caught.stdout
            assert "receipt FAILED: " + said in caught.stderr, caught.stderr
            assert f"signed by {REFEREE.key_id}" in caught.stderr

    @pytest.mark.parametrize("game", sorted(GAMES))
    def test_a_re_draw_is_reported_and_a_quiet_one_is_proven_by_a_receipt(
            self, server: LiveServer, operator: Referee, game: str, tmp_path: Path) -> None:
        table = entropy_table(server, game, LONG_WINDOW, direct=False)
        first = table.platform.start_hand(table.table_id).table.draw.commitment
        commit(table, [0])

        # The operator saw seat 0's commitment and draws again (its own seed, new windows).
        redrawn: Table = operator.get_table(table.table_id)
        redrawn._open_draw(datetime.now(UTC), None)
        operator.save(redrawn)
        opened = events(table, "table.draw_opened")
        assert [e.table_draw_opened.hand_number for e in opened] == [1, 1]  # public to all
        assert table.platform.get_table(table.table_id).draw.abandoned == 1
        commit(table, range(table.players))
        _, last = reveal(table, range(table.players))
        hand_id = last.hand.hand_id
        assert last.hand.deal_commitment != first
        self.play(table, game, hand_id)
        reported = self.verify_cli(server, hand_id, tmp_path)
        assert reported.returncode == 1
        assert (f"draw FAILED: re-draw: hand 1 was dealt from draw 2 of 2; the referee"
                f" abandoned the draw(s) committed to {first}" in reported.stderr), \
            reported.stderr

        # A quiet re-draw: the operator also leaves the first draw out of the record.
        table.platform.start_hand(table.table_id)  # hand 2's draw
        early = commit(table, [0])[0]
        assert early["hand_number"] == 2
        second = self.operator_deals(operator, table.table_id, quietly_redraw)
        self.play(table, game, second)
        alone = self.verify_cli(server, second, tmp_path)
        assert alone.returncode == 0, alone.stdout + alone.stderr
        caught = self.verify_cli(server, second, tmp_path, [early])
        assert caught.returncode == 1
        assert (f"receipt FAILED: re-draw: the referee accepted seat 0's commitment for the"
                f" draw committed to {early['draw_commitment']}" in caught.stderr)
        assert "the evidence does not mention that draw: a quiet re-draw" in caught.stderr


    @pytest.mark.parametrize("game", sorted(GAMES))
    def test_an_impersonated_contribution_of_a_seat_with_its_own_key_is_caught(
            self, server: LiveServer, operator: Referee, game: str, tmp_path: Path) -> None:
        preset, players = GAMES[game]
        platform = server.platform()
        key = Ed25519PrivateKey.generate()  # the player's; the referee sees the public half
        public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        table_id = platform.create_table(preset, players,
                                         game="" if game == "fiftyk" else game,
                                         entropy_window=LONG_WINDOW).table.table_id
        tokens = [platform.join_table(table_id, f"sk-{table_id[:8]}-{seat}", seat,
                                      public_key=public if seat == 0 else b"").seat_token
                  for seat in range(players)]
        table = Seated(table_id, players, tokens,
                       [server.client(token=token) for token in tokens], platform)
        assert platform.get_table(table_id).seats[0].public_key == public.hex()
        [taken] = [e for e in events(table, "table.seat_taken")
                   if e.table_seat_taken.seat == 0]
        assert taken.table_seat_taken.public_key == public.hex()
        platform.start_hand(table_id)
        # With the seat's token alone (what the operator holds), the referee refuses.
        assert reason(lambda: table.seats[0].commit_entropy(table_id, secret(table, 0))) \
            == "ENTROPY_SIGNATURE_REQUIRED"
        assert reason(lambda: table.seats[0].commit_entropy(
            table_id, secret(table, 0), key=Ed25519PrivateKey.generate())) \
            == "ENTROPY_SIGNATURE_INVALID"
        # The player signs; a hand played so verifies, naming the signed seat.
        table.seats[0].commit_entropy(table_id, secret(table, 0), key=key)
        commit(table, range(1, players))
        table.seats[0].reveal_entropy(table_id, secret(table, 0), key=key)
        _, last = reveal(table, range(1, players))
        self.play(table, game, last.hand.hand_id)
        honest = self.verify_cli(server, last.hand.hand_id, tmp_path)
        assert honest.returncode == 0, honest.stdout + honest.stderr
        assert f"1 of {players} seats bound keys of their own and signed what they sent" \
            in honest.stdout

        # The operator's own code commits and reveals for seat 0, past the edge's check.
        table.platform.start_hand(table_id)
        commit(table, range(1, players))

        def impersonate(drawing: Table) -> None:
            now = datetime.now(UTC)
            bytes_ = b"\x42" * 32
            drawing._entropy_committed(seat=0, commitment=hashlib.sha256(bytes_).hexdigest())
            assert drawing.draw is not None and drawing._reveal_open(now)
            drawing._entropy_contributed(seat=0, entropy=bytes_.hex())

        hand_id = self.operator_deals(operator, table_id, impersonate)
        self.play(table, game, hand_id)
        caught = self.verify_cli(server, hand_id, tmp_path)
        assert caught.returncode == 1
        assert ("draw FAILED: seat 0's commitment is unsigned although the seat bound key"
                f" {public.hex()[:16]}…: it was made with the seat's token alone, not by the"
                " player (an impersonation)") in caught.stderr, caught.stderr
        checked = server.audit().verify_hand(hand_id)
        assert not checked.ok
        assert [c.check for c in checked.checks if c.status == "FAILED"] == ["draw"]


def quietly_redraw(table: Table) -> None:
    """Open another draw for the same hand and forget the one abandoned."""
    table._open_draw(datetime.now(UTC), None)
    table.abandoned_draws = ()


class TestSQLite(CommitRevealCases):
    """The server on SQLite in a temporary directory."""

    @pytest.fixture(scope="class")
    @classmethod
    def database_url(cls) -> str | None:
        return None


@pytest.mark.postgres
class TestPostgreSQL(CommitRevealCases):
    """The server on a fresh database of the throwaway PostgreSQL server."""

    @pytest.fixture(scope="class")
    @classmethod
    def database_url(cls, class_postgres_db: str) -> str | None:
        return class_postgres_db
