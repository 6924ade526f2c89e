"""A small typed client for fiftyk.referee.v1, used by the tests, the CLI and bots.

One `RefereeClient` wraps a channel and a set of credentials; `as_seat(token)` and friends
return clients sharing the channel with other credentials. Failures raise `grpc.RpcError`;
`service.grpc.errors.error_reason(err)` reads its status code and reason.

A call refused `RESOURCE_EXHAUSTED` / `RATE_LIMITED` was turned away before the server ran
it, so the client waits the delay the refusal's `RetryInfo` names and calls again, within
the call's deadline (`RetryRateLimited`; `retry_rate_limited=False` turns it off).

Its length (about 510 lines) is one typed method per RPC, plus the retry of rate-limited
calls.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import secrets
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import grpc
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from google.protobuf import struct_pb2

from fiftyk_referee.service.grpc.auth import (
    AUDIT_KEY_HEADER,
    AUTHORIZATION_HEADER,
    PLATFORM_KEY_HEADER,
)
from fiftyk_referee.service.grpc.errors import error_details
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2_grpc as pb_grpc
from fiftyk_referee.service.trust.entropy_receipts import (
    SIGNED_BYTES,
    SIGNED_COMMITMENT,
    sign_entropy,
)

DEFAULT_TIMEOUT_SECONDS = 30.0
# A seat's default contribution to a seat-entropy deal: as many bytes as the referee's seed.
ENTROPY_BYTES = 32
# Each client its own connection (gRPC otherwise shares one per target in the process), so
# the connections of many clients spread over the processes of `fiftyk serve --processes N`.
CHANNEL_OPTIONS = (("grpc.use_local_subchannel_pool", 1),)
Metadata = tuple[tuple[str, str], ...]
RATE_LIMITED = "RATE_LIMITED"
# A refusal without a delay (an older server) is retried after this long.
DEFAULT_RETRY_DELAY_SECONDS = 0.1
# A refusal with a delay is retried a little after it: the bucket refills continuously.
RETRY_DELAY_MARGIN_SECONDS = 0.005


class RetryRateLimited(grpc.UnaryUnaryClientInterceptor):
    """Calls again, after the delay its `RetryInfo` names, a unary call refused
    `RATE_LIMITED` — while the call's deadline leaves time for it (a rate-limited call was
    refused before it ran, so nothing was applied)."""

    def intercept_unary_unary(self, continuation: Any, client_call_details: Any,
                              request: Any) -> Any:
        """Call, and call again while the server asks the caller to slow down."""
        timeout = client_call_details.timeout
        give_up_at = None if timeout is None else time.monotonic() + timeout
        while True:
            outcome = continuation(client_call_details, request)
            error = outcome.exception()
            if error is None or not isinstance(error, grpc.RpcError):
                return outcome
            details = error_details(error)
            if (details.code != grpc.StatusCode.RESOURCE_EXHAUSTED
                    or details.reason != RATE_LIMITED):
                return outcome
            delay = (DEFAULT_RETRY_DELAY_SECONDS if details.retry_after_seconds is None
                     else details.retry_after_seconds + RETRY_DELAY_MARGIN_SECONDS)
            if give_up_at is not None:
                left = give_up_at - time.monotonic() - delay
                if left <= 0:
                    return outcome
                client_call_details = _with_timeout(client_call_details, left)
            time.sleep(delay)


class _CallDetails(NamedTuple):
    method: str
    timeout: float | None
    metadata: Any
    credentials: Any
    wait_for_ready: Any
    compression: Any


def _with_timeout(details: Any, timeout: float) -> Any:
    """The same call's details with a new (shorter) timeout."""
    return _CallDetails(details.method, timeout, details.metadata, details.credentials,
                        details.wait_for_ready, details.compression)


class TlsClient(NamedTuple):
    """How a client speaks TLS: the CA to trust, an optional client certificate and key, and
    the name the server's certificate must carry when the address is not it."""

    ca: Path
    cert: Path | None = None
    key: Path | None = None
    server_name: str | None = None


def open_channel(target: str, tls: TlsClient | None = None,
                 options: Iterable[tuple[str, Any]] = CHANNEL_OPTIONS) -> grpc.Channel:
    """A channel to `target`: plaintext, or TLS when `tls` is given (files read now)."""
    if tls is None:
        return grpc.insecure_channel(target, options=list(options))
    credentials = grpc.ssl_channel_credentials(
        tls.ca.read_bytes(), tls.key.read_bytes() if tls.key else None,
        tls.cert.read_bytes() if tls.cert else None)
    extra = [("grpc.ssl_target_name_override", tls.server_name)] if tls.server_name else []
    return grpc.secure_channel(target, credentials, options=[*options, *extra])


def add_tls_arguments(parser: argparse.ArgumentParser) -> None:
    """The client TLS flags of the CLI commands that call a server."""
    parser.add_argument("--tls-ca", metavar="PEM",
                        help="connect over TLS, trusting this CA (default: plaintext)")
    parser.add_argument("--tls-cert", metavar="PEM",
                        help="client certificate, for a server that requires one")
    parser.add_argument("--tls-key", metavar="PEM", help="the client certificate's key")
    parser.add_argument("--tls-server-name", metavar="NAME",
                        help="the name the server's certificate must carry, when the address"
                             " is not it (e.g. dialing 127.0.0.1 inside the container)")


def tls_from_args(args: argparse.Namespace) -> TlsClient | None:
    """The TLS settings `add_tls_arguments` parsed (None: plaintext)."""
    if not args.tls_ca:
        return None
    return TlsClient(Path(args.tls_ca), Path(args.tls_cert) if args.tls_cert else None,
                     Path(args.tls_key) if args.tls_key else None, args.tls_server_name)


def _options(options: Mapping[str, Any] | None) -> dict[str, struct_pb2.Value]:
    out: dict[str, struct_pb2.Value] = {}
    for name, value in (options or {}).items():
        item = struct_pb2.Value()
        if value is None:
            item.null_value = struct_pb2.NULL_VALUE
        elif isinstance(value, bool):
            item.bool_value = value
        elif isinstance(value, int | float):
            item.number_value = value
        else:
            item.string_value = str(value)
        out[name] = item
    return out


class RefereeClient:
    """Calls the referee with one set of credentials."""

    def __init__(self, target: str | grpc.Channel, *, token: str | None = None,
                 audit_key: str | None = None, platform_key: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT_SECONDS, tls: TlsClient | None = None,
                 retry_rate_limited: bool = True) -> None:
        self.channel = open_channel(target, tls) if isinstance(target, str) else target
        self._owns_channel = isinstance(target, str)
        self.retry_rate_limited = retry_rate_limited
        calls = (grpc.intercept_channel(self.channel, RetryRateLimited())
                 if retry_rate_limited else self.channel)
        self.stub = pb_grpc.RefereeServiceStub(calls)
        self.timeout = timeout
        pairs: list[tuple[str, str]] = []
        if token:
            pairs.append((AUTHORIZATION_HEADER, f"Bearer {token}"))
        if audit_key:
            pairs.append((AUDIT_KEY_HEADER, audit_key))
        if platform_key:
            pairs.append((PLATFORM_KEY_HEADER, platform_key))
        self.metadata: Metadata = tuple(pairs)

    def _derived(self, *, token: str | None = None, audit_key: str | None = None,
                 platform_key: str | None = None) -> RefereeClient:
        return RefereeClient(self.channel, timeout=self.timeout, token=token,
                             audit_key=audit_key, platform_key=platform_key,
                             retry_rate_limited=self.retry_rate_limited)

    def as_seat(self, token: str) -> RefereeClient:
        """A client acting with a seat token."""
        return self._derived(token=token)

    def as_audit(self, key: str) -> RefereeClient:
        """A client with the audit role."""
        return self._derived(audit_key=key)

    def as_platform(self, key: str) -> RefereeClient:
        """A client with the platform credential."""
        return self._derived(platform_key=key)

    def close(self) -> None:
        """Close the channel if this client opened it."""
        if self._owns_channel:
            self.channel.close()

    def _kw(self, timeout: float | None = None) -> dict[str, Any]:
        return {"metadata": self.metadata, "timeout": timeout or self.timeout}

    def call_options(self, timeout: float | None = None) -> dict[str, Any]:
        """The keyword arguments of a call on `stub` with this client's credentials and
        timeout (a game's own calls: `service/games/<game>/client.py`)."""
        return self._kw(timeout)

    # -- commands ---------------------------------------------------------------------------

    def create_table(self, preset: str, players: int, *, options: Mapping[str, Any] | None = None,
                     allow_preset_deck: bool = False, name: str = "",
                     request_id: str = "", game: str = "",
                     spectators: pb.SpectatorPolicy | None = None,
                     entropy_window: int | None = None,
                     entropy_direct: bool = False) -> pb.CreateTableResponse:
        """Open a table of a game (platform; no game: the referee's default game);
        `entropy_window` (seconds, 0 for the default) makes its deals seat-entropy deals,
        whose seats commit and then reveal (`commit_entropy`, `reveal_entropy`), or with
        `entropy_direct` send their bytes at once (`contribute_entropy`)."""
        request = pb.CreateTableRequest(
            request_id=request_id, players=players, allow_preset_deck=allow_preset_deck,
            name=name,
            ruleset=pb.RulesetSpec(preset=preset, options=_options(options), game=game))
        if spectators is not None:
            request.spectators.CopyFrom(spectators)
        if entropy_window is not None:
            request.seat_entropy.window_seconds = entropy_window
            request.seat_entropy.direct = entropy_direct
        response: pb.CreateTableResponse = self.stub.CreateTable(request, **self._kw())
        return response

    def join_table(self, table_id: str, player_id: str, seat: int | None = None, *,
                   request_id: str = "", public_key: bytes = b"") -> pb.JoinTableResponse:
        """Seat a player (platform); the response carries the seat token. `public_key`: the
        player's own Ed25519 public key (32 bytes), bound to the seat."""
        request = pb.JoinTableRequest(request_id=request_id, table_id=table_id,
                                      player_id=player_id, seat_public_key=public_key)
        if seat is not None:
            request.seat = seat
        response: pb.JoinTableResponse = self.stub.JoinTable(request, **self._kw())
        return response

    def issue_spectator_token(self, table_id: str, *, ttl_seconds: int = 0
                              ) -> pb.IssueSpectatorTokenResponse:
        """A spectator token for a table (platform)."""
        response: pb.IssueSpectatorTokenResponse = self.stub.IssueSpectatorToken(
            pb.IssueSpectatorTokenRequest(table_id=table_id, ttl_seconds=ttl_seconds),
            **self._kw())
        return response

    def leave_table(self, table_id: str, seat: int | None = None, *,
                    request_id: str = "") -> pb.LeaveTableResponse:
        """Leave a seat (own token, or platform naming the seat)."""
        request = pb.LeaveTableRequest(request_id=request_id, table_id=table_id)
        if seat is not None:
            request.seat = seat
        response: pb.LeaveTableResponse = self.stub.LeaveTable(request, **self._kw())
        return response

    def start_hand(self, table_id: str, *, deck: Iterable[str] = (),
                   request_id: str = "") -> pb.StartHandResponse:
        """Deal the next hand."""
        request = pb.StartHandRequest(request_id=request_id, table_id=table_id, deck=list(deck))
        response: pb.StartHandResponse = self.stub.StartHand(request, **self._kw())
        return response

    def contribute_entropy(self, table_id: str, entropy: bytes | None = None, *,
                           request_id: str = "") -> pb.ContributeEntropyResponse:
        """Send the token's seat's contribution to the deal being drawn: `entropy`, or 32
        fresh bytes from the operating system's random source."""
        request = pb.ContributeEntropyRequest(
            request_id=request_id, table_id=table_id,
            entropy=entropy if entropy is not None else secrets.token_bytes(ENTROPY_BYTES))
        response: pb.ContributeEntropyResponse = self.stub.ContributeEntropy(request,
                                                                             **self._kw())
        return response

    def commit_entropy(self, table_id: str, entropy: bytes, *, request_id: str = "",
                       key: Ed25519PrivateKey | None = None) -> pb.ContributeEntropyResponse:
        """Commit the token's seat to `entropy` (its SHA-256; keep the bytes, and the signed
        receipt, for `reveal_entropy` once every seat committed or the window closed);
        `key`: the seat's own key, when it bound one, to sign the commitment with."""
        commitment = hashlib.sha256(entropy).digest()
        request = pb.ContributeEntropyRequest(
            request_id=request_id, table_id=table_id, commitment=commitment,
            signature=self._entropy_signature(table_id, key, SIGNED_COMMITMENT, commitment))
        response: pb.ContributeEntropyResponse = self.stub.ContributeEntropy(request,
                                                                             **self._kw())
        return response

    def reveal_entropy(self, table_id: str, entropy: bytes, *, request_id: str = "",
                       key: Ed25519PrivateKey | None = None) -> pb.ContributeEntropyResponse:
        """Reveal the bytes the token's seat committed to (the same request as a direct
        contribution; the referee checks them against the commitment), signed with `key`."""
        request = pb.ContributeEntropyRequest(
            request_id=request_id, table_id=table_id, entropy=entropy,
            signature=self._entropy_signature(table_id, key, SIGNED_BYTES,
                                              hashlib.sha256(entropy).digest()))
        response: pb.ContributeEntropyResponse = self.stub.ContributeEntropy(request,
                                                                             **self._kw())
        return response

    def _entropy_signature(self, table_id: str, key: Ed25519PrivateKey | None, kind: str,
                           digest: bytes) -> bytes:
        """The seat key's signature for the draw open now (b"" without a key)."""
        if key is None:
            return b""
        draw = self.get_table(table_id).draw
        return sign_entropy(key, table_id, draw.hand_number, draw.commitment, kind,
                            digest.hex())

    def play(self, table_id: str, hand_id: str, cards: Iterable[str], *,
             request_id: str = "") -> pb.PlayResponse:
        """Play cards for the token's seat."""
        request = pb.PlayRequest(request_id=request_id, table_id=table_id, hand_id=hand_id,
                                 cards=list(cards))
        response: pb.PlayResponse = self.stub.Play(request, **self._kw())
        return response

    def pass_turn(self, table_id: str, hand_id: str, *, request_id: str = "") -> pb.PassResponse:
        """Pass for the token's seat."""
        request = pb.PassRequest(request_id=request_id, table_id=table_id, hand_id=hand_id)
        response: pb.PassResponse = self.stub.Pass(request, **self._kw())
        return response

    def act(self, table_id: str, hand_id: str, kind: str, cards: Iterable[str] = (), *,
            value: str | None = None, expected_version: int | None = None,
            validate_only: bool = False, request_id: str = "") -> pb.ActResponse:
        """Take any action of the game for the token's seat (`validate_only`: ask whether it
        would be accepted, recording nothing)."""
        request = pb.ActRequest(request_id=request_id, table_id=table_id, hand_id=hand_id,
                                kind=kind, cards=list(cards), validate_only=validate_only)
        if value is not None:
            request.value = value
        if expected_version is not None:
            request.expected_version = expected_version
        response: pb.ActResponse = self.stub.Act(request, **self._kw())
        return response

    def resign(self, table_id: str, hand_id: str, *, request_id: str = "") -> pb.ResignResponse:
        """Resign the hand for the token's seat."""
        request = pb.ResignRequest(request_id=request_id, table_id=table_id, hand_id=hand_id)
        response: pb.ResignResponse = self.stub.Resign(request, **self._kw())
        return response

    # -- the table's lifecycle --------------------------------------------------------------

    def close_table(self, table_id: str, reason: str = "", *,
                    request_id: str = "") -> pb.CloseTableResponse:
        """Close a table: no new deal; a hand in progress finishes (platform)."""
        response: pb.CloseTableResponse = self.stub.CloseTable(
            pb.CloseTableRequest(request_id=request_id, table_id=table_id, reason=reason),
            **self._kw())
        return response

    def abort_table(self, table_id: str, reason: str = "", *,
                    request_id: str = "") -> pb.AbortTableResponse:
        """Close a table now, voiding the hand in progress (platform)."""
        response: pb.AbortTableResponse = self.stub.AbortTable(
            pb.AbortTableRequest(request_id=request_id, table_id=table_id, reason=reason),
            **self._kw())
        return response

    def replace_seat(self, table_id: str, seat: int, player_id: str, *,
                     request_id: str = "") -> pb.ReplaceSeatResponse:
        """Give a taken seat to another player between hands (platform)."""
        response: pb.ReplaceSeatResponse = self.stub.ReplaceSeat(
            pb.ReplaceSeatRequest(request_id=request_id, table_id=table_id, seat=seat,
                                  player_id=player_id), **self._kw())
        return response

    def reissue_seat_token(self, table_id: str, seat: int, *,
                           request_id: str = "") -> pb.ReissueSeatTokenResponse:
        """A new token for a taken seat; older ones stop working (platform)."""
        response: pb.ReissueSeatTokenResponse = self.stub.ReissueSeatToken(
            pb.ReissueSeatTokenRequest(request_id=request_id, table_id=table_id, seat=seat),
            **self._kw())
        return response

    # -- queries ----------------------------------------------------------------------------

    def list_tables(self, *, game: str = "", preset: str = "",
                    states: Iterable[pb.TableState.ValueType] = (), player_id: str = "",
                    page_size: int = 0, page_token: str = "") -> pb.ListTablesResponse:
        """A page of the lobby, most recently active first (platform)."""
        response: pb.ListTablesResponse = self.stub.ListTables(
            pb.ListTablesRequest(game=game, preset=preset, states=list(states),
                                 player_id=player_id, page_size=page_size,
                                 page_token=page_token), **self._kw())
        return response

    def register_webhook(self, url: str, events: Iterable[str] = (), *, description: str = "",
                         request_id: str = "") -> pb.RegisterWebhookResponse:
        """Register a webhook endpoint; the answer holds its secret (platform)."""
        response: pb.RegisterWebhookResponse = self.stub.RegisterWebhook(
            pb.RegisterWebhookRequest(url=url, events=list(events), description=description,
                                      request_id=request_id), **self._kw())
        return response

    def list_webhooks(self) -> pb.ListWebhooksResponse:
        """Every webhook endpoint (platform)."""
        response: pb.ListWebhooksResponse = self.stub.ListWebhooks(pb.ListWebhooksRequest(),
                                                                    **self._kw())
        return response

    def delete_webhook(self, webhook_id: str) -> None:
        """Remove a webhook endpoint (platform)."""
        self.stub.DeleteWebhook(pb.DeleteWebhookRequest(webhook_id=webhook_id), **self._kw())

    def webhook_dead_letters(self, webhook_id: str) -> list[pb.WebhookDeadLetter]:
        """An endpoint's dead letters, every page of them (platform)."""
        letters: list[pb.WebhookDeadLetter] = []
        after = 0
        while True:
            response: pb.ListWebhookDeadLettersResponse = self.stub.ListWebhookDeadLetters(
                pb.ListWebhookDeadLettersRequest(webhook_id=webhook_id, after_position=after),
                **self._kw())
            letters.extend(response.dead_letters)
            if not response.has_more:
                return letters
            after = response.last_position

    def redeliver_webhook_events(self, webhook_id: str, event_ids: Iterable[str] = ()) -> int:
        """Send dead letters again (all when none are named); how many (platform)."""
        response: pb.RedeliverWebhookEventsResponse = self.stub.RedeliverWebhookEvents(
            pb.RedeliverWebhookEventsRequest(webhook_id=webhook_id, event_ids=list(event_ids)),
            **self._kw())
        return response.redelivering

    def feed_head(self) -> int:
        """The global feed's last position (platform or audit)."""
        response: pb.GetFeedHeadResponse = self.stub.GetFeedHead(pb.GetFeedHeadRequest(),
                                                                  **self._kw())
        return response.position

    def get_table(self, table_id: str) -> pb.TableView:
        """A table's public state."""
        response: pb.GetTableResponse = self.stub.GetTable(
            pb.GetTableRequest(table_id=table_id), **self._kw())
        return response.table

    def hand_view(self, table_id: str, hand_id: str = "", *, seat: int | None = None,
                  include_legal_plays: bool = False) -> pb.HandView:
        """A hand as the caller may see it."""
        request = pb.GetHandViewRequest(table_id=table_id, hand_id=hand_id,
                                        include_legal_plays=include_legal_plays)
        if seat is not None:
            request.seat = seat
        response: pb.GetHandViewResponse = self.stub.GetHandView(request, **self._kw())
        return response.hand

    def legal_plays(self, table_id: str, hand_id: str = "", *,
                    max_plays: int = 0) -> pb.ListLegalPlaysResponse:
        """The caller's legal plays now."""
        response: pb.ListLegalPlaysResponse = self.stub.ListLegalPlays(
            pb.ListLegalPlaysRequest(table_id=table_id, hand_id=hand_id, max_plays=max_plays),
            **self._kw())
        return response

    def scores(self, table_id: str) -> pb.GetScoresResponse:
        """A table's per-hand and cumulative scores."""
        response: pb.GetScoresResponse = self.stub.GetScores(
            pb.GetScoresRequest(table_id=table_id), **self._kw())
        return response

    def hand_history(self, hand_id: str, *, after_version: int = 0,
                     limit: int = 0) -> pb.GetHandHistoryResponse:
        """A hand's events (audit)."""
        response: pb.GetHandHistoryResponse = self.stub.GetHandHistory(
            pb.GetHandHistoryRequest(hand_id=hand_id, after_version=after_version, limit=limit),
            **self._kw())
        return response

    def all_hand_events(self, hand_id: str) -> list[pb.Event]:
        """Every event of a hand, paging through the history (audit)."""
        events: list[pb.Event] = []
        while True:
            after = events[-1].aggregate_version if events else 0
            page = self.hand_history(hand_id, after_version=after)
            events.extend(page.events)
            if not page.has_more:
                return events

    def hand_at(self, hand_id: str, version: int) -> pb.HandView:
        """A hand as of one event version (audit)."""
        response: pb.GetHandAtResponse = self.stub.GetHandAt(
            pb.GetHandAtRequest(hand_id=hand_id, version=version), **self._kw())
        return response.hand

    def export_transcript(self, hand_id: str) -> dict[str, Any]:
        """A stored hand as a transcript (audit)."""
        response: pb.ExportTranscriptResponse = self.stub.ExportTranscript(
            pb.ExportTranscriptRequest(hand_id=hand_id), **self._kw())
        result: dict[str, Any] = json.loads(response.transcript_json)
        return result

    def export_evidence(self, hand_id: str, since_size: int | None = None) -> dict[str, Any]:
        """A stored hand's signed evidence, `fiftyk-evidence/1` (audit)."""
        response: pb.ExportTranscriptResponse = self.stub.ExportTranscript(
            pb.ExportTranscriptRequest(hand_id=hand_id, since_size=since_size), **self._kw())
        evidence: dict[str, Any] = json.loads(response.evidence_json)
        return evidence

    def checkpoint(self, since_size: int | None = None) -> pb.GetCheckpointResponse:
        """The ledger's latest signed checkpoint (`checkpoint_json`) and, from `since_size`
        hands, the consistency proof (any credential, or none)."""
        response: pb.GetCheckpointResponse = self.stub.GetCheckpoint(
            pb.GetCheckpointRequest(since_size=since_size), **self._kw())
        return response

    def add_cosignature(self, cosignature: dict[str, Any] | str) -> pb.AddCosignatureResponse:
        """Give the referee a witness's cosignature (the witness's key is the credential)."""
        text = cosignature if isinstance(cosignature, str) else json.dumps(cosignature)
        response: pb.AddCosignatureResponse = self.stub.AddCosignature(
            pb.AddCosignatureRequest(cosignature_json=text), **self._kw())
        return response

    def verify_hand(self, hand_id: str) -> pb.VerifyHandResponse:
        """The referee's checks of a stored hand (audit)."""
        response: pb.VerifyHandResponse = self.stub.VerifyHand(
            pb.VerifyHandRequest(hand_id=hand_id), **self._kw())
        return response

    def adjudicate(self, transcript: Mapping[str, Any] | str) -> dict[str, Any]:
        """Rule on a transcript."""
        text = transcript if isinstance(transcript, str) else json.dumps(transcript)
        response: pb.AdjudicateResponse = self.stub.Adjudicate(
            pb.AdjudicateRequest(transcript_json=text), **self._kw())
        result: dict[str, Any] = json.loads(response.result_json)
        return result

    def read_events(self, after_position: int = 0, limit: int = 0,
                    topics: Iterable[str] = ()) -> pb.ReadEventsResponse:
        """The global feed after a position (platform; `topics`: public event names)."""
        response: pb.ReadEventsResponse = self.stub.ReadEvents(
            pb.ReadEventsRequest(after_position=after_position, limit=limit,
                                 topics=list(topics)), **self._kw())
        return response

    def watch(self, table_id: str, *, after_position: int = 0, include_views: bool = False,
              seat: int | None = None, timeout: float | None = None
              ) -> Iterator[pb.WatchTableResponse]:
        """Stream a table's events as the caller may see them (cancel the iterator to stop).

        `seat` (audit role only) asks for one seat's view of the events. The iterator is also
        a `grpc.Call`: `cancel()` ends the stream.
        """
        request = pb.WatchTableRequest(table_id=table_id, after_position=after_position,
                                       include_views=include_views)
        if seat is not None:
            request.seat = seat
        stream: Iterator[pb.WatchTableResponse] = self.stub.WatchTable(
            request, metadata=self.metadata, timeout=timeout)
        return stream


__all__ = ["RefereeClient", "RetryRateLimited", "TlsClient", "add_tls_arguments", "open_channel",
           "tls_from_args"]
