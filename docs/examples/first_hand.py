"""Your first hand from your own code: a client of the 五十K referee built only from proto/.

Nothing here imports the referee's Python package. The script compiles the `.proto` files of
the repository's `proto/` folder with `grpc_tools.protoc` into a temporary directory, imports
the generated modules from there, and then talks to a running referee over gRPC:

1. the platform key creates a table and seats four players (each gets a seat token),
2. the platform key deals the first hand,
3. each player acts with its own seat token: it asks for its legal plays and plays the
   first one, or passes when nothing beats the trick, until the hand is over,
4. a deliberately wrong play shows how a refusal's `google.rpc.ErrorInfo` reason is read,
5. the audit key exports the hand as a transcript, and the referee re-rules it,
6. the result is printed.

Run it against a referee on loopback (`./scripts/serve`), which accepts the development keys:

    .venv/bin/python docs/examples/first_hand.py --server 127.0.0.1:50051

Needs grpcio, protobuf, grpcio-status (for the error details) and grpcio-tools (to compile
the protos at run time); the project's dev extra has all four.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

# The development keys a referee bound to a loopback address accepts. A real deployment
# sets its own secrets; pass them with --platform-key/--audit-key or the environment.
DEV_PLATFORM_KEY = "fiftyk-dev-platform-key-loopback-only"
DEV_AUDIT_KEY = "fiftyk-dev-audit-key-loopback-only"
PLATFORM_KEY_HEADER = "x-fiftyk-platform-key"
AUDIT_KEY_HEADER = "x-fiftyk-audit-key"
AUTHORIZATION_HEADER = "authorization"

REPOSITORY = Path(__file__).resolve().parents[2]
CALL_TIMEOUT_SECONDS = 10.0
MAX_ACTIONS = 2_000  # a hand of 五十K ends long before this; a bound keeps a bug from looping
PLAYERS = 4


def compile_protos(proto_dir: Path, out_dir: Path) -> None:
    """Generate the Python messages and gRPC stubs of every .proto under `proto_dir`."""
    from grpc_tools import protoc  # type: ignore[import-untyped]  # needed only here

    # `python -m grpc_tools.protoc` adds the well-known types (google/protobuf/*.proto) to
    # the include path itself; calling `protoc.main` directly, we add them.
    well_known = resources.files("grpc_tools") / "_proto"
    protos = sorted(str(p.relative_to(proto_dir)) for p in proto_dir.rglob("*.proto"))
    status = protoc.main([
        "grpc_tools.protoc", f"-I{proto_dir}", f"-I{well_known}",
        f"--python_out={out_dir}", f"--grpc_python_out={out_dir}", *protos,
    ])
    if status != 0:
        raise SystemExit(f"protoc failed on {proto_dir} (exit {status})")


def load_stubs(proto_dir: Path, out_dir: Path) -> tuple[ModuleType, ModuleType]:
    """Compile the protos into `out_dir` and import `referee_pb2` and `referee_pb2_grpc`."""
    compile_protos(proto_dir, out_dir)
    sys.path.insert(0, str(out_dir))
    pb = importlib.import_module("fiftyk.referee.v1.referee_pb2")
    pb_grpc = importlib.import_module("fiftyk.referee.v1.referee_pb2_grpc")
    return pb, pb_grpc


def side(seats: Any) -> str:
    """A side as `fiftyk demo` names it: `team 1+3` for a team, `seat 2` for one seat."""
    seats = list(seats)
    if len(seats) == 1:
        return f"seat {seats[0]}"
    return "team " + "+".join(str(seat) for seat in seats)


def error_reason(error: grpc.RpcError) -> tuple[str, str, str]:
    """A refusal as (status code, ErrorInfo reason, message) from its google.rpc.Status."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    if status is None:  # errors raised by gRPC itself (deadline, unreachable) carry none
        return error.code().name, "", error.details() or ""
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return error.code().name, info.reason, status.message
    return error.code().name, "", status.message


class Referee:
    """The service stub plus the metadata of one credential."""

    def __init__(self, stub: Any, metadata: tuple[tuple[str, str], ...]) -> None:
        self.stub = stub
        self.metadata = metadata

    def call(self, method: str, request: Any) -> Any:
        """Call one RPC with this credential."""
        rpc = getattr(self.stub, method)
        return rpc(request, metadata=self.metadata, timeout=CALL_TIMEOUT_SECONDS)


def play_first_hand(server: str, preset: str, platform_key: str, audit_key: str,
                    proto_dir: Path) -> int:
    """Play one hand at a new table and print what happened; 0 when the hand completed."""
    with tempfile.TemporaryDirectory(prefix="fiftyk-stubs-") as out:
        pb, pb_grpc = load_stubs(proto_dir, Path(out))
        with grpc.insecure_channel(server) as channel:
            stub = pb_grpc.RefereeServiceStub(channel)
            return _play(pb, stub, preset, platform_key, audit_key)


def _play(pb: Any, stub: Any, preset: str, platform_key: str, audit_key: str) -> int:
    platform = Referee(stub, ((PLATFORM_KEY_HEADER, platform_key),))
    audit = Referee(stub, ((AUDIT_KEY_HEADER, audit_key),))

    # 1. A table with four seats, then one player per seat; each gets its seat token.
    table = platform.call("CreateTable", pb.CreateTableRequest(
        ruleset=pb.RulesetSpec(preset=preset), players=PLAYERS, name="first hand",
        request_id="first-hand-create-table-" + os.urandom(4).hex(),
    )).table
    print(f"table {table.table_id} preset {preset} fingerprint {table.ruleset.fingerprint[:12]}")
    seats: list[Referee] = []
    for seat in range(PLAYERS):
        joined = platform.call("JoinTable", pb.JoinTableRequest(
            table_id=table.table_id, player_id=f"player-{seat}", seat=seat))
        seats.append(Referee(stub, ((AUTHORIZATION_HEADER, f"Bearer {joined.seat_token}"),)))
        print(f"seat {joined.seat}: player-{seat}")

    # 2. Deal. The platform sees the public view: counts, the turn, no cards.
    hand = platform.call("StartHand", pb.StartHandRequest(table_id=table.table_id)).hand
    hand_id = hand.hand_id
    print(f"hand {hand_id}: dealer {hand.dealer}, seat {hand.turn_seat} leads,"
          f" commitment {hand.deal_commitment[:16]}...")

    # 3. A refusal, decoded: a seat that is not on turn tries to play its lowest card.
    idle = (hand.turn_seat + 1) % PLAYERS
    own = seats[idle].call("GetHandView", pb.GetHandViewRequest(
        table_id=table.table_id, hand_id=hand_id)).hand.own_cards
    try:
        seats[idle].call("Play", pb.PlayRequest(table_id=table.table_id, hand_id=hand_id,
                                                cards=[own[0]]))
    except grpc.RpcError as error:
        code, reason, message = error_reason(error)
        print(f"refused: {code} {reason}: {message}")

    # 4. Play the hand out: the seat on turn plays its first legal play, or passes.
    actions = 0
    while hand.status != pb.HAND_STATUS_COMPLETED:
        if actions >= MAX_ACTIONS:
            print(f"the hand did not end within {MAX_ACTIONS} actions", file=sys.stderr)
            return 1
        seat = hand.turn_seat
        player = seats[seat]
        legal = player.call("ListLegalPlays", pb.ListLegalPlaysRequest(
            table_id=table.table_id, hand_id=hand_id))
        if legal.plays:
            cards = list(legal.plays[0].cards)
            hand = player.call("Play", pb.PlayRequest(
                table_id=table.table_id, hand_id=hand_id, cards=cards)).hand
        else:  # nothing beats the trick: a seat may then always pass
            hand = player.call("Pass", pb.PassRequest(
                table_id=table.table_id, hand_id=hand_id)).hand
        actions += 1
    print(f"hand over after {actions} actions; finishing order {list(hand.finish_order)}")

    # 5. The result, then the audit role's transcript and the referee's ruling on it.
    # Sides are named as `fiftyk demo` names them: "team 1+3" (the seats), "seat 2". A
    # HandResult's winning_team is an index into its teams, not a name.
    result = hand.result
    for team in result.teams:
        print(f"{side(team.seats)}: collected {team.collected}, score {team.score}")
    for seat_result in result.seats:
        print(f"seat {seat_result.seat}: score {seat_result.score}")
    if result.HasField("winning_team"):
        print(f"winner: {side(result.teams[result.winning_team].seats)}")
    elif result.HasField("winning_seat"):
        print(f"winner: seat {result.winning_seat}")
    else:
        print("winner: none (a draw)")
    transcript = audit.call("ExportTranscript", pb.ExportTranscriptRequest(hand_id=hand_id))
    ruling = json.loads(audit.call("Adjudicate", pb.AdjudicateRequest(
        transcript_json=transcript.transcript_json)).result_json)
    print(f"transcript re-ruled: {ruling['status']}, {ruling['actions_applied']} actions,"
          f" scores {[s['score'] for s in ruling['seats']]}")
    scores = platform.call("GetScores", pb.GetScoresRequest(table_id=table.table_id))
    print("table totals: " + ", ".join(f"{t.side} {t.score}" for t in scores.totals))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and play one hand."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--server", default="127.0.0.1:50051", help="HOST:PORT of the referee")
    parser.add_argument("--preset", default="classic", help="a four-player preset")
    parser.add_argument("--proto", type=Path, default=REPOSITORY / "proto",
                        help="the proto/ folder to compile (default: the repository's)")
    parser.add_argument("--platform-key", default=os.environ.get("FIFTYK_PLATFORM_KEY",
                                                                 DEV_PLATFORM_KEY))
    parser.add_argument("--audit-key", default=os.environ.get("FIFTYK_AUDIT_KEY",
                                                              DEV_AUDIT_KEY))
    args = parser.parse_args(argv)
    try:
        return play_first_hand(args.server, args.preset, args.platform_key, args.audit_key,
                               args.proto)
    except grpc.RpcError as error:
        code, reason, message = error_reason(error)
        print(f"first_hand: {code} {reason}: {message}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
