"""A platform's side of the referee, built only from proto/: a lobby, a recovered seat, closed
tables, and events pushed to a webhook instead of polled.

Like first_hand.py, nothing here imports the referee's Python package: the script compiles
`proto/` at run time and talks to a running referee over gRPC. It:

1. starts a small HTTP endpoint on loopback and registers it as a webhook for the table
   events, keeping the secret the referee returns once;
2. opens a 五十K table and a Shengji table, seats players, and lists the lobby;
3. deals the 五十K hand; one player "loses" the seat token: the platform reissues it, the
   old token is refused (TOKEN_REVOKED) and the new one resumes the seat mid-hand;
4. aborts the 五十K table (the hand is voided) and closes the Shengji one, then lists the
   closed tables;
5. waits for the webhook deliveries of those changes, checks each signature with the
   verification function of docs/integrating.md, and prints them; then deletes the webhook.

Run it against a referee on loopback (`./scripts/serve`):

    .venv/bin/python docs/examples/platform.py --server 127.0.0.1:50051
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import queue
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc

# The stub loading and error decoding of first_hand.py, next to this file.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from first_hand import (
    AUTHORIZATION_HEADER,
    DEV_PLATFORM_KEY,
    PLATFORM_KEY_HEADER,
    REPOSITORY,
    Referee,
    error_reason,
    load_stubs,
)

PLAYERS = 4
WAIT_SECONDS = 60.0  # how long to wait for the webhook deliveries
WATCHED = ["table.closed", "table.hand_voided", "table.seat_token_reissued"]


def verify_fiftyk_signature(secrets: dict[str, str], header: str, body: bytes,
                            window_seconds: int = 300) -> bool:
    """True when `header` (Fiftyk-Signature) signs `body` with the secret of its key id."""
    fields = dict(part.strip().split("=", 1) for part in header.split(",") if "=" in part)
    secret = secrets.get(fields.get("kid", ""))
    timestamp = fields.get("t", "")
    if secret is None or not timestamp.isdigit():
        return False
    if abs(time.time() - int(timestamp)) > window_seconds:
        return False
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + body,
                        hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields.get("v1", ""))


class Endpoint:
    """A loopback HTTP endpoint that hands every signed delivery to a queue."""

    def __init__(self) -> None:
        self.secrets: dict[str, str] = {}
        self.received: queue.Queue[dict[str, Any]] = queue.Queue()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: one connection for many deliveries

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                signed = verify_fiftyk_signature(endpoint.secrets,
                                                 self.headers.get("Fiftyk-Signature", ""), body)
                # Refuse what is not signed: a forged POST must not change the lobby.
                self.send_response(200 if signed else 401)
                self.send_header("Content-Length", "0")
                self.end_headers()
                if signed:
                    endpoint.received.put(json.loads(body))

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/fiftyk"


def seat_players(pb: Any, platform: Referee, table_id: str, prefix: str) -> list[str]:
    """One player per seat; their seat tokens."""
    return [platform.call("JoinTable", pb.JoinTableRequest(
        table_id=table_id, player_id=f"{prefix}-{seat}", seat=seat)).seat_token
        for seat in range(PLAYERS)]


def run(pb: Any, stub: Any, platform_key: str) -> int:
    """The platform's day, printed; 0 when every step went as documented."""
    platform = Referee(stub, ((PLATFORM_KEY_HEADER, platform_key),))
    endpoint = Endpoint()

    # 1. A webhook for the table events that matter to a lobby.
    registered = platform.call("RegisterWebhook", pb.RegisterWebhookRequest(
        url=endpoint.url, events=WATCHED, description="example lobby",
        request_id="example-webhook-" + os.urandom(4).hex()))
    endpoint.secrets[registered.webhook.key_id] = registered.secret
    print(f"webhook {registered.webhook.webhook_id} key {registered.webhook.key_id}")

    # 2. Two tables, one per game, and the lobby.
    fiftyk = platform.call("CreateTable", pb.CreateTableRequest(
        ruleset=pb.RulesetSpec(preset="classic"), players=PLAYERS, name="五十K room")).table
    shengji = platform.call("CreateTable", pb.CreateTableRequest(
        ruleset=pb.RulesetSpec(preset="tractor", game="shengji"), players=PLAYERS,
        name="Tractor room")).table
    tokens = seat_players(pb, platform, fiftyk.table_id, "ann")
    seat_players(pb, platform, shengji.table_id, "bo")
    lobby = platform.call("ListTables", pb.ListTablesRequest(
        states=[pb.TABLE_STATE_WAITING], page_size=50))
    mine = {fiftyk.table_id, shengji.table_id}
    for summary in lobby.tables:
        if summary.table_id in mine:
            players = ", ".join(s.player_id for s in summary.seats)
            print(f"lobby: {summary.game} {summary.preset} {pb.TableState.Name(summary.state)}"
                  f" [{players}]")

    # 3. Deal; seat 1 loses its token and gets a new one in the middle of the hand.
    hand = platform.call("StartHand", pb.StartHandRequest(table_id=fiftyk.table_id)).hand
    reissued = platform.call("ReissueSeatToken", pb.ReissueSeatTokenRequest(
        table_id=fiftyk.table_id, seat=1))
    old = Referee(stub, ((AUTHORIZATION_HEADER, f"Bearer {tokens[1]}"),))
    new = Referee(stub, ((AUTHORIZATION_HEADER, f"Bearer {reissued.seat_token}"),))
    try:
        old.call("GetHandView", pb.GetHandViewRequest(table_id=fiftyk.table_id))
        print("the old token still works", file=sys.stderr)
        return 1
    except grpc.RpcError as error:
        code, reason, _ = error_reason(error)
        print(f"old token: {code} {reason}")
    view = new.call("GetHandView", pb.GetHandViewRequest(table_id=fiftyk.table_id)).hand
    print(f"new token: seat {view.viewer_seat} holds {len(view.own_cards)} cards")

    # 4. Abort the 五十K table (its hand is voided), close the Shengji table.
    aborted = platform.call("AbortTable", pb.AbortTableRequest(
        table_id=fiftyk.table_id, reason="server maintenance"))
    print(f"aborted: voided hand {aborted.voided_hand_id == hand.hand_id}")
    platform.call("CloseTable", pb.CloseTableRequest(table_id=shengji.table_id,
                                                     reason="room closed"))
    closed = platform.call("ListTables", pb.ListTablesRequest(
        states=[pb.TABLE_STATE_CLOSED], page_size=50))
    print("closed tables: " + str(sum(1 for t in closed.tables if t.table_id in mine)))

    # 5. What the webhook was told, in order, every delivery signed.
    expected = 4  # reissued, voided, closed (五十K), closed (Shengji)
    deadline = time.monotonic() + WAIT_SECONDS
    got: list[dict[str, Any]] = []
    while len(got) < expected and time.monotonic() < deadline:
        try:
            delivery = endpoint.received.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if delivery["table_id"] in mine:
            got.append(delivery)
    for delivery in got:
        game = "fiftyk" if delivery["table_id"] == fiftyk.table_id else "shengji"
        print(f"webhook: {delivery['name']} ({game})")
    platform.call("DeleteWebhook", pb.DeleteWebhookRequest(
        webhook_id=registered.webhook.webhook_id))
    endpoint.server.shutdown()
    return 0 if len(got) == expected else 1


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run the platform's day."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--server", default="127.0.0.1:50051", help="HOST:PORT of the referee")
    parser.add_argument("--proto", type=Path, default=REPOSITORY / "proto",
                        help="the proto/ folder to compile (default: the repository's)")
    parser.add_argument("--platform-key", default=os.environ.get("FIFTYK_PLATFORM_KEY",
                                                                 DEV_PLATFORM_KEY))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fiftyk-stubs-") as out:
        pb, pb_grpc = load_stubs(args.proto, Path(out))
        with grpc.insecure_channel(args.server) as channel:
            try:
                return run(pb, pb_grpc.RefereeServiceStub(channel), args.platform_key)
            except grpc.RpcError as error:
                code, reason, message = error_reason(error)
                print(f"platform: {code} {reason}: {message}", file=sys.stderr)
                return 1


if __name__ == "__main__":
    raise SystemExit(main())
