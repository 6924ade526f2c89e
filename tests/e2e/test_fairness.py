"""Fairness end to end: the real server on SQLite and PostgreSQL, bots playing both games.

Each finished hand is exported through `ExportTranscript` and checked by `fiftyk verify`
(the real command line, with the referee's public key) and by the `VerifyHand` RPC; then the
database under the running server is tampered with and all three — the command line on a new
export, the RPC and the background integrity audit's metric — report it.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY
from fiftyk_referee.service.trust.signing import DEV_SIGNING_KEY, Signer, public_pem
from tests.e2e.harness import LiveServer, play_out, seat_bots, server_config
from tests.e2e.test_doudizhu import doudizhu_table
from tests.e2e.test_doudizhu import play_out as play_out_doudizhu
from tests.e2e.test_shengji import play_out as play_out_shengji
from tests.e2e.test_shengji import shengji_table
from tests.integration.test_fairness import Database

AUDIT_SECONDS = 1
WAIT_SECONDS = 120  # a generous bound on a loaded machine, not a speed requirement
CLI_TIMEOUT_SECONDS = 120


class FairnessCases:
    """The cases every backend must pass; subclasses provide `database_url`."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        raise NotImplementedError

    @pytest.fixture
    def server(self, database_url: str | None, tmp_path: Path) -> Iterator[LiveServer]:
        settings: dict[str, Any] = {"integrity_check_seconds": AUDIT_SECONDS}
        if database_url:
            settings["database_url"] = database_url
        live = LiveServer(server_config(tmp_path, **settings))
        yield live
        live.stop()

    @pytest.fixture
    def hands(self, server: LiveServer) -> dict[str, str]:
        """One finished hand of each game, played by bots: game -> hand id."""
        rng = random.Random(18)
        fiftyk = seat_bots(server, "qq3", 3)
        view = fiftyk.platform.start_hand(fiftyk.table_id).hand
        fiftyk_hand = play_out(fiftyk, view, rng)[0].hand_id
        shengji = shengji_table(server)
        view = shengji.platform.start_hand(shengji.table_id).hand
        shengji_hand = play_out_shengji(shengji, view, rng).hand_id
        doudizhu = doudizhu_table(server, "rob", prefix="fair")
        view = doudizhu.platform.start_hand(doudizhu.table_id).hand
        doudizhu_hand = play_out_doudizhu(doudizhu, view, rng).hand_id
        return {"fiftyk": fiftyk_hand, "shengji": shengji_hand, "doudizhu": doudizhu_hand}

    def verify_cli(self, server: LiveServer, hand_id: str, tmp_path: Path
                   ) -> subprocess.CompletedProcess[str]:
        """`fiftyk export` then `fiftyk verify --key` on the referee's public key."""
        key = tmp_path / "referee.pub"
        key.write_text(public_pem(Signer.from_text(DEV_SIGNING_KEY).public))
        evidence = tmp_path / f"{hand_id}.json"
        cli = [sys.executable, "-m", "fiftyk_referee.service.cli"]
        exported = subprocess.run(
            [*cli, "export", hand_id, "--server", server.target, "--audit-key", DEV_AUDIT_KEY,
             "-o", str(evidence)], capture_output=True, text=True,
            timeout=CLI_TIMEOUT_SECONDS, check=False)
        assert exported.returncode == 0, exported.stderr
        return subprocess.run([*cli, "verify", str(evidence), "--key", str(key)],
                              capture_output=True, text=True, timeout=CLI_TIMEOUT_SECONDS,
                              check=False)

    def test_hands_of_every_game_verify_and_tampering_is_reported_everywhere(
            self, server: LiveServer, hands: dict[str, str], database_url: str | None,
            tmp_path: Path) -> None:
        audit = server.audit()
        for game, hand_id in hands.items():
            done = self.verify_cli(server, hand_id, tmp_path)
            assert done.returncode == 0, done.stdout + done.stderr
            lines = done.stdout.splitlines()
            assert [line.split(":")[0].strip() for line in lines[:-1]] == [
                "ok  format", "ok  signature", "ok  chain", "ok  deal", "ok  commitment",
                "ok  deck", "ok  transcript deal", "ok  ledger", "ok  re-rule"], game
            assert "a trusted key" in lines[1]
            checked = audit.verify_hand(hand_id)
            assert checked.ok and checked.checks[-1].check == "ledger history"
            # The table's public event publishes the head: a watcher can hold the referee to it.
            recorded = [e.table_hand_recorded for e in
                        audit.read_events(topics=["table.hand_recorded"], limit=100).events
                        if e.table_hand_recorded.hand_id == hand_id]
            evidence = audit.export_evidence(hand_id)
            assert [r.hand_head for r in recorded] == [evidence["chain"]["head"]]
        self.wait_for_audit(server, clean=True)

        tampered = hands["shengji"]
        database = Database(database_url, tmp_path)
        version, _, state = database.rows(tampered)[4]
        database.set_state(tampered, version,
                           state.replace(b'"_data_":"20', b'"_data_":"19', 1))

        checked = audit.verify_hand(tampered)
        assert not checked.ok and checked.checks[-1].check == "chain"
        assert checked.checks[-1].status == "FAILED"
        assert f"version {version} hashes to" in checked.checks[-1].detail
        done = self.verify_cli(server, tampered, tmp_path)
        assert done.returncode == 1
        assert done.stdout.splitlines()[-1].strip().startswith("FAILED  chain:")
        assert "chain FAILED" in done.stderr
        assert audit.verify_hand(hands["fiftyk"]).ok  # the other hand is untouched
        self.wait_for_audit(server, clean=False)

    def test_a_hand_whose_events_no_longer_replay_is_refused_data_loss(
            self, server: LiveServer, hands: dict[str, str], database_url: str | None,
            tmp_path: Path) -> None:
        hand_id = hands["fiftyk"]
        Database(database_url, tmp_path).delete(hand_id, range(3, 4))
        with pytest.raises(grpc.RpcError) as refused:
            server.audit().export_evidence(hand_id)
        assert refused.value.code() == grpc.StatusCode.DATA_LOSS
        checked = server.audit().verify_hand(hand_id)
        assert not checked.ok and "version 4 where version 3" in checked.checks[-1].detail

    def test_verify_hand_needs_the_audit_key(self, server: LiveServer,
                                             hands: dict[str, str]) -> None:
        with pytest.raises(grpc.RpcError) as refused:
            server.platform().verify_hand(hands["fiftyk"])
        assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED

    def test_adjudicate_returns_a_ruling_signed_over_the_transcript(
            self, server: LiveServer, hands: dict[str, str]) -> None:
        evidence = server.audit().export_evidence(hands["shengji"])
        text = json.dumps(evidence["transcript"])
        response = server.platform().stub.Adjudicate(
            pb.AdjudicateRequest(transcript_json=text),
            metadata=(("x-fiftyk-platform-key", server.config.platform_key),))
        ruling = json.loads(response.signed_ruling_json)
        assert ruling["format"] == "fiftyk-ruling/1"
        assert ruling["result"] == json.loads(response.result_json) == evidence["ruling"]
        assert ruling["signature"]["key_id"] == Signer.from_text(DEV_SIGNING_KEY).key_id

    def wait_for_audit(self, server: LiveServer, *, clean: bool) -> None:
        """Poll the integrity metric until an audit run reports `clean` (or the bound ends)."""
        registry = server.running.metrics.registry
        result = "clean" if clean else "problems"
        for _ in range(WAIT_SECONDS // AUDIT_SECONDS):
            runs = registry.get_sample_value("fiftyk_integrity_audits_total",
                                             {"result": result}) or 0
            problems = registry.get_sample_value("fiftyk_integrity_problems") or 0
            if runs and (problems == 0) == clean:
                return
            time.sleep(AUDIT_SECONDS)
        raise AssertionError(f"no {result} integrity audit reported")


class TestSQLite(FairnessCases):
    """The server on SQLite in a temporary directory."""

    @pytest.fixture
    def database_url(self, tmp_path: Path) -> str | None:
        return None


@pytest.mark.postgres
class TestPostgreSQL(FairnessCases):
    """The server on a fresh database of the throwaway PostgreSQL server."""

    @pytest.fixture
    def database_url(self, fresh_postgres_db: str) -> str | None:
        return fresh_postgres_db
