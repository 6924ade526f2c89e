"""`fiftyk adjudicate FILE`: the result JSON on stdout, exit 0 for any readable transcript."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fiftyk_referee.domain.fiftyk.transcript import adjudicate
from fiftyk_referee.service.cli.main import main
from tests.support.scenarios import classic_transcript


def adjudicate_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes
                    ) -> tuple[int, str, str]:
    path = tmp_path / "transcript.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    code = main(["adjudicate", str(path)])
    out, err = capsys.readouterr()
    return code, out, err


def with_actions(actions: list[Any]) -> str:
    return json.dumps({**classic_transcript(), "actions": actions})


def test_a_completed_hand_prints_its_result(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    data = classic_transcript()
    code, out, err = adjudicate_file(tmp_path, capsys, json.dumps(data))
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result == adjudicate(data)
    assert result["status"] == "completed"
    assert [t["score"] for t in result["teams"]] == [270, -70]
    assert out.count("\n") == 1  # one JSON object on one line


def test_an_unfinished_hand_prints_in_progress(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = adjudicate_file(tmp_path, capsys,
                                   with_actions(classic_transcript()["actions"][:7]))
    assert code == 0
    result = json.loads(out)
    assert (result["status"], result["actions_applied"]) == ("in_progress", 7)
    assert result["winner"] == {"team": None, "seat": None}


@pytest.mark.parametrize(("action", "reason"), [
    ({"seat": 2, "play": ["5D"]}, "NOT_YOUR_TURN"),
    ({"seat": 0, "play": ["2S"]}, "CARDS_NOT_IN_HAND"),
    ({"seat": 0, "play": ["3S", "4S"]}, "INVALID_COMBINATION"),
    ({"seat": 0, "pass": True}, "MUST_LEAD"),
    ({"seat": 0, "play": ["11S"]}, "UNKNOWN_CARD"),
    ({"seat": 4, "pass": True}, "INVALID_SEAT"),
    ({"seat": 0, "fold": True}, "INVALID_ACTION"),
])
def test_a_refused_first_action_is_a_rejected_ruling_with_exit_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], action: dict[str, Any], reason: str
) -> None:
    code, out, err = adjudicate_file(tmp_path, capsys, with_actions([action]))
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["status"] == "rejected"
    assert result["rejected"]["action"] == 0
    assert result["rejected"]["reason"] == reason


@pytest.mark.parametrize(("index", "action", "reason"), [
    (11, {"seat": 2, "play": ["5D"]}, "DOES_NOT_BEAT"),
    (4, {"seat": 0, "play": ["3H"]}, "PLAYER_OUT"),
    (15, {"seat": 1, "play": ["3C"]}, "HAND_OVER"),
])
def test_a_refused_later_action_is_a_rejected_ruling_with_exit_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], index: int, action: dict[str, Any],
    reason: str,
) -> None:
    actions = classic_transcript()["actions"]
    code, out, _ = adjudicate_file(tmp_path, capsys,
                                   with_actions([*actions[:index], action, *actions[index:]]))
    assert code == 0
    result = json.loads(out)
    assert (result["status"], result["actions_applied"]) == ("rejected", index)
    assert result["rejected"]["reason"] == reason
    assert result["rejected"]["message"]


def test_standard_input_is_read_for_a_dash(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(classic_transcript())))
    assert main(["adjudicate", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "completed"


def broken(**changes: Any) -> str:
    data = classic_transcript()
    data.update(changes)
    return json.dumps(data)


@pytest.mark.parametrize(("content", "says"), [
    ("{not json", "is not JSON"),
    (b"\xff\xfe{}", "is not JSON"),
    ("[1, 2]", "not a valid transcript"),
    (broken(format="fiftyk-result/1"), "format"),
    (broken(ruleset={"preset": "whist"}), "unknown preset"),
    (broken(ruleset={"preset": "classic", "options": {"wind": "left"}}), "wind"),
    (broken(deck=["3H"] * 108), "deck"),
    (broken(deck=["XX"] * 108), "XX"),
    (broken(players=5), "players"),
    (broken(players=3), "players"),
])
def test_an_unreadable_file_exits_non_zero_with_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, says: str
) -> None:
    code, out, err = adjudicate_file(tmp_path, capsys, content)
    assert code != 0
    assert out == ""
    assert err.startswith("fiftyk adjudicate: ") and says in err


def test_a_missing_file_exits_non_zero(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["adjudicate", str(tmp_path / "nowhere.json")]) != 0
    out, err = capsys.readouterr()
    assert out == "" and "cannot read" in err


def test_the_installed_command_prints_the_ruling(tmp_path: Path) -> None:
    command = shutil.which("fiftyk") or str(Path(".venv/bin/fiftyk").resolve())
    good = tmp_path / "good.json"
    good.write_text(json.dumps(classic_transcript()), encoding="utf-8")
    done = subprocess.run([command, "adjudicate", str(good)], capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["winner"] == {"team": 0, "seat": None}
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "fiftyk-transcript/1"}', encoding="utf-8")
    done = subprocess.run([command, "adjudicate", str(bad)], capture_output=True, text=True,
                          check=False, timeout=60)
    assert done.returncode != 0 and done.stdout == ""
    assert "not a valid transcript" in done.stderr


def test_a_deeply_nested_file_is_refused_without_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert main(["adjudicate", str(path)]) != 0
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err


@pytest.mark.parametrize("example", ["evidence-qq3.json", "evidence-entropy.json"])
def test_an_evidence_file_is_pointed_at_verify(
        capsys: pytest.CaptureFixture[str], example: str) -> None:
    path = Path(__file__).resolve().parents[2] / "docs" / "examples" / example
    assert main(["adjudicate", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"fiftyk adjudicate: {path} is a hand's signed evidence"
                          " (fiftyk-evidence/1), not a transcript:")
    assert f"`fiftyk verify {path}`" in err
