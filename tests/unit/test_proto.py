"""The proto contract lints clean, the committed generated code matches it, and it imports."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROTO_ROOT = ROOT / "proto"
GEN_DIR = ROOT / "service" / "grpc" / "gen"
GEN_SCRIPT = ROOT / "scripts" / "gen-proto"
BUF = Path(sys.executable).parent / "buf"
TOOL_TIMEOUT_SECONDS = 120
SERVICE_NAME = "fiftyk.referee.v1.RefereeService"
GENERATED = "fiftyk_referee.service.grpc.gen.fiftyk.referee.v1"


def _buf() -> str:
    found = str(BUF) if BUF.is_file() else shutil.which("buf")
    if found is None:
        pytest.fail("the `buf` binary is missing: install the dev extra (package buf-bin)")
    return found


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_the_proto_passes_buf_lint_with_the_standard_and_comment_rules() -> None:
    result = subprocess.run(
        [_buf(), "lint", str(PROTO_ROOT)], cwd=ROOT, capture_output=True, text=True,
        timeout=TOOL_TIMEOUT_SECONDS, check=False,
    )
    assert result.returncode == 0, f"buf lint failed:\n{result.stdout}{result.stderr}"


def test_buf_lint_rejects_an_undocumented_badly_named_field(tmp_path: Path) -> None:
    copy = tmp_path / "proto"
    shutil.copytree(PROTO_ROOT, copy)
    proto = copy / "fiftyk" / "referee" / "v1" / "referee.proto"
    proto.write_text(proto.read_text(encoding="utf-8")
                     + "\n// Lintbait exists to fail the lint.\nmessage Lintbait {\n"
                       "  string BadName = 1;\n}\n", encoding="utf-8")
    result = subprocess.run(
        [_buf(), "lint", str(copy)], capture_output=True, text=True,
        timeout=TOOL_TIMEOUT_SECONDS, check=False,
    )
    assert result.returncode != 0
    assert "BadName" in result.stdout


def test_the_committed_generated_code_is_what_the_proto_generates(tmp_path: Path) -> None:
    out = tmp_path / "gen"
    result = subprocess.run(
        [str(GEN_SCRIPT), str(out)], cwd=ROOT, capture_output=True, text=True,
        timeout=TOOL_TIMEOUT_SECONDS, check=False,
    )
    assert result.returncode == 0, f"scripts/gen-proto failed:\n{result.stderr}"
    regenerated, committed = _files(out), _files(GEN_DIR)
    assert sorted(regenerated) == sorted(committed), "generated file set drifted"
    drifted = [name for name in regenerated if regenerated[name] != committed[name]]
    assert not drifted, f"run scripts/gen-proto: {drifted} differ from proto/"


def test_the_generated_modules_import_as_the_service_grpc_gen_package() -> None:
    pb = importlib.import_module(f"{GENERATED}.referee_pb2")
    pb_grpc = importlib.import_module(f"{GENERATED}.referee_pb2_grpc")
    service = pb.DESCRIPTOR.services_by_name["RefereeService"]
    assert service.full_name == SERVICE_NAME
    assert pb.DESCRIPTOR.name == "fiftyk/referee/v1/referee.proto"
    assert pb.PlayRequest.__module__ == pb.__name__
    assert hasattr(pb_grpc, "RefereeServiceStub")
    assert hasattr(pb_grpc, "add_RefereeServiceServicer_to_server")


def test_every_rpc_has_its_own_request_and_response_messages() -> None:
    pb = importlib.import_module("fiftyk_referee.service.grpc.gen.fiftyk.referee.v1.referee_pb2")
    methods = pb.DESCRIPTOR.services_by_name["RefereeService"].methods
    for method in methods:
        assert method.input_type.name == f"{method.name}Request"
        assert method.output_type.name == f"{method.name}Response"
    streaming = {m.name for m in methods if m.server_streaming}
    assert streaming == {"WatchTable"}


def test_every_command_takes_a_request_id_and_returns_a_version() -> None:
    pb = importlib.import_module("fiftyk_referee.service.grpc.gen.fiftyk.referee.v1.referee_pb2")
    commands = ("CreateTable", "JoinTable", "LeaveTable", "StartHand", "Play", "Pass", "Resign",
                "CloseTable", "AbortTable", "ReplaceSeat", "ReissueSeatToken",
                "ContributeEntropy")
    for name in commands:
        request = getattr(pb, f"{name}Request").DESCRIPTOR
        response = getattr(pb, f"{name}Response").DESCRIPTOR
        assert "request_id" in request.fields_by_name, name
        assert "version" in response.fields_by_name, name
        assert "replayed" in response.fields_by_name, name


def test_cards_travel_as_notation_strings() -> None:
    pb = importlib.import_module("fiftyk_referee.service.grpc.gen.fiftyk.referee.v1.referee_pb2")
    request = pb.PlayRequest(table_id="t", hand_id="h", cards=["10H", "SJ"])
    decoded = pb.PlayRequest.FromString(request.SerializeToString())
    assert list(decoded.cards) == ["10H", "SJ"]
