"""The proto contract lints clean, the committed generated code matches it, and it imports:
the core contract (fiftyk.referee.v1) and each game's own package (fiftyk.games.<game>.v1),
whose messages are field for field the 0.2 messages of the core that 0.2 clients still read."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from google.protobuf.descriptor import Descriptor, FieldDescriptor

ROOT = Path(__file__).resolve().parents[2]
PROTO_ROOT = ROOT / "proto"
GEN_DIR = ROOT / "service" / "grpc" / "gen"
GAMES_DIR = ROOT / "service" / "games"
GEN_SCRIPT = ROOT / "scripts" / "gen-proto"
GAME_PROTOS = sorted((PROTO_ROOT / "fiftyk" / "games").glob("*/v1/*.proto"))
# The contract as 0.2 shipped it: what 0.2 clients are built from.
PROTO_0_2 = ROOT / "tests" / "support" / "proto-0.2"
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
    """Every generated file under a repository root: the core's tree and the games' stubs."""
    core = root / "service" / "grpc" / "gen"
    paths = [*core.rglob("*"), *(root / "service" / "games").glob("*/*_pb2.py*")]
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(paths)
        if path.is_file() and "__pycache__" not in path.parts
    }


def _game_module(proto: Path) -> ModuleType:
    """The generated module of a game's proto file, in the game's edge folder."""
    game = proto.parts[-3]
    return importlib.import_module(f"fiftyk_referee.service.games.{game}.{proto.stem}_pb2")


def test_the_proto_passes_buf_lint_with_the_standard_and_comment_rules() -> None:
    result = subprocess.run(
        [_buf(), "lint", str(PROTO_ROOT)], cwd=ROOT, capture_output=True, text=True,
        timeout=TOOL_TIMEOUT_SECONDS, check=False,
    )
    assert result.returncode == 0, f"buf lint failed:\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize("path", ["fiftyk/referee/v1/referee.proto",
                                  "fiftyk/games/shengji/v1/shengji.proto"])
def test_buf_lint_rejects_an_undocumented_badly_named_field(tmp_path: Path, path: str) -> None:
    copy = tmp_path / "proto"
    shutil.copytree(PROTO_ROOT, copy)
    proto = copy / path
    proto.write_text(proto.read_text(encoding="utf-8")
                     + "\n// Lintbait exists to fail the lint.\nmessage Lintbait {\n"
                       "  string BadName = 1;\n}\n", encoding="utf-8")
    result = subprocess.run(
        [_buf(), "lint", str(copy)], capture_output=True, text=True,
        timeout=TOOL_TIMEOUT_SECONDS, check=False,
    )
    assert result.returncode != 0
    assert "BadName" in result.stdout


def _buf_breaking(proto_root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_buf(), "breaking", str(proto_root), "--against", str(PROTO_0_2)], cwd=ROOT,
        capture_output=True, text=True, timeout=TOOL_TIMEOUT_SECONDS, check=False,
    )


def test_the_contract_breaks_nothing_a_0_2_client_is_built_from() -> None:
    """buf's FILE rules against the 0.2 proto: no field, number, type or name a 0.2 client
    knows was removed or changed (new fields and the game packages only add)."""
    result = _buf_breaking(PROTO_ROOT)
    assert result.returncode == 0, f"buf breaking failed:\n{result.stdout}{result.stderr}"


def test_buf_breaking_finds_a_0_2_field_moved(tmp_path: Path) -> None:
    copy = tmp_path / "proto"
    shutil.copytree(PROTO_ROOT, copy)
    proto = copy / "fiftyk" / "referee" / "v1" / "referee.proto"
    text = proto.read_text(encoding="utf-8")
    assert "optional ShengjiState shengji = 26;" in text
    proto.write_text(text.replace("optional ShengjiState shengji = 26;",
                                  "optional ShengjiState shengji = 29;"), encoding="utf-8")
    result = _buf_breaking(copy)
    assert result.returncode != 0
    assert 'field "26" with name "shengji"' in result.stdout


def test_the_committed_generated_code_is_what_the_proto_generates(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(GEN_SCRIPT), str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
        timeout=TOOL_TIMEOUT_SECONDS, check=False,
    )
    assert result.returncode == 0, f"scripts/gen-proto failed:\n{result.stderr}"
    regenerated, committed = _files(tmp_path), _files(ROOT)
    assert any(name.startswith("service/games/") for name in regenerated)
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


def test_every_game_proto_is_a_package_of_its_own_with_its_stubs_in_its_edge_folder() -> None:
    assert {proto.parts[-3] for proto in GAME_PROTOS} >= {"fiftyk", "shengji", "doudizhu"}
    core = importlib.import_module(f"{GENERATED}.referee_pb2")
    for proto in GAME_PROTOS:
        game = proto.parts[-3]
        module = _game_module(proto)
        assert module.DESCRIPTOR.name == f"fiftyk/games/{game}/v1/{game}.proto"
        assert module.DESCRIPTOR.package == f"fiftyk.games.{game}.v1"
        assert not module.DESCRIPTOR.services_by_name  # its messages travel in the core's
        # It builds on the core and protobuf's own types only, never on another game.
        assert {dep.name for dep in module.DESCRIPTOR.dependencies} <= {
            "fiftyk/referee/v1/referee.proto", *(
                dep.name for dep in module.DESCRIPTOR.dependencies
                if dep.name.startswith("google/protobuf/"))}
        assert (GAMES_DIR / game / f"{game}_pb2.pyi").is_file()
        # Each game has its own view and result messages, the Any payloads of the core.
        assert {"HandView", "HandResult"} <= set(module.DESCRIPTOR.message_types_by_name)
    # The core names no game's proto: it carries them as google.protobuf.Any.
    assert [dep.name for dep in core.DESCRIPTOR.dependencies if "games" in dep.name] == []
    for message, field in (("HandView", "game_view"), ("HandScore", "game_outcome"),
                           ("Event", "game_event")):
        descriptor = core.DESCRIPTOR.message_types_by_name[message].fields_by_name[field]
        assert descriptor.message_type.full_name == "google.protobuf.Any"


def _same_shape(legacy: Descriptor, own: Descriptor, path: str) -> list[str]:
    """Where a game's message differs from the 0.2 message it was copied from (names,
    numbers, types, labels, presence), recursively; an empty list when their bytes agree."""
    if legacy.full_name == own.full_name:
        return []
    problems = []
    legacy_fields = {f.name: f for f in legacy.fields}
    own_fields = {f.name: f for f in own.fields}
    if set(legacy_fields) != set(own_fields):
        problems.append(f"{path}: fields {sorted(legacy_fields)} != {sorted(own_fields)}")
    for name in sorted(set(legacy_fields) & set(own_fields)):
        old, new = legacy_fields[name], own_fields[name]
        where = f"{path}.{name}"
        if (old.number, old.type, old.is_repeated, old.has_presence) != (
                new.number, new.type, new.is_repeated, new.has_presence):
            problems.append(f"{where}: number, type, repetition or presence differ")
        elif old.type == FieldDescriptor.TYPE_MESSAGE:
            problems.extend(_same_shape(old.message_type, new.message_type, where))
        elif old.type == FieldDescriptor.TYPE_ENUM:
            numbers = [v.number for v in old.enum_type.values]
            if numbers != [v.number for v in new.enum_type.values]:
                problems.append(f"{where}: enum values differ")
    return problems


def _camel(snake: str) -> str:
    return "".join(part.capitalize() for part in snake.split("_"))


def test_each_game_message_in_an_any_has_the_shape_of_the_0_2_message_it_copies() -> None:
    """The referee fills the 0.2 fields with the bytes of the game's own message, so each
    pair must agree field for field: the game's events (named `<game>.<event>` ->
    <Event> in fiftyk.games.<game>.v1), Shengji's view and both games' results."""
    core = importlib.import_module(f"{GENERATED}.referee_pb2")
    games = {proto.parts[-3]: _game_module(proto).DESCRIPTOR for proto in GAME_PROTOS}
    pairs: list[tuple[Descriptor, Descriptor]] = []
    for field in core.Event.DESCRIPTOR.oneofs_by_name["payload"].fields:
        game, _, event = field.name.partition("_")
        if game in games:
            pairs.append((field.message_type, games[game].message_types_by_name[_camel(event)]))
    assert len(pairs) == 9 + 11  # 五十K's events and Shengji's
    pairs.append((core.HandScore.DESCRIPTOR.fields_by_name["result"].message_type,
                  games["fiftyk"].message_types_by_name["HandResult"]))
    pairs.append((core.HandScore.DESCRIPTOR.fields_by_name["shengji"].message_type,
                  games["shengji"].message_types_by_name["HandResult"]))
    pairs.append((core.HandView.DESCRIPTOR.fields_by_name["shengji"].message_type,
                  games["shengji"].message_types_by_name["HandView"]))
    problems = [problem for legacy, own in pairs
                for problem in _same_shape(legacy, own, own.full_name)]
    assert problems == []


def test_the_shape_check_finds_a_renumbered_field() -> None:
    """The check above can fail: a copy of a game's message with one field renumbered."""
    from google.protobuf import descriptor_pb2, descriptor_pool

    shengji = _game_module(PROTO_ROOT / "fiftyk/games/shengji/v1/shengji.proto")
    core = importlib.import_module(f"{GENERATED}.referee_pb2")
    file = descriptor_pb2.FileDescriptorProto()
    shengji.DESCRIPTOR.CopyToProto(file)
    file.name, file.package = "renumbered.proto", "renumbered.v1"
    file.ClearField("dependency")
    nothing = next(m for m in file.message_type if m.name == "DeclaredNothing")
    nothing.field[0].number = 2
    kept = descriptor_pb2.FileDescriptorProto(name=file.name, package=file.package,
                                              syntax="proto3", message_type=[nothing])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(kept)
    renumbered = pool.FindMessageTypeByName("renumbered.v1.DeclaredNothing")
    assert _same_shape(core.ShengjiDeclaredNothing.DESCRIPTOR, renumbered, "x") == [
        "x.seat: number, type, repetition or presence differ"]
