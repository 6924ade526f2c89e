"""What one call costs the server on its way in: each credential is verified once.

The outermost interceptor verifies the call's credential to count it against its limits
(`service.grpc.callers`); the servicer acts on that same verified principal instead of
checking the token's signature a second time. A credential that did not verify there is
still refused by the servicer with its own reason.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from fiftyk_referee.service.grpc import auth
from fiftyk_referee.service.grpc.errors import error_reason
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from tests.e2e.harness import LiveServer, Seated, seat_bots
from tests.e2e.test_doudizhu import doudizhu_table
from tests.e2e.test_doudizhu import step as doudizhu_step
from tests.e2e.test_shengji import shengji_table
from tests.e2e.test_shengji import step as shengji_step


class Verifications:
    """Counts the real token checks (the real functions run; only the count is added)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seat = 0
        self.spectator = 0
        monkeypatch.setattr(auth, "verify_seat_token", self._counted(
            auth.verify_seat_token, "seat"))
        monkeypatch.setattr(auth, "verify_spectator_token", self._counted(
            auth.verify_spectator_token, "spectator"))

    def _counted(self, real: Callable[..., Any], kind: str) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            setattr(self, kind, getattr(self, kind) + 1)
            return real(*args, **kwargs)

        return counted


@pytest.fixture
def verifications(monkeypatch: pytest.MonkeyPatch) -> Iterator[Verifications]:
    yield Verifications(monkeypatch)


def _fiftyk_step(seated: Seated, view: pb.HandView, rng: random.Random) -> pb.HandView:
    """The seat to act asks for its legal plays and plays one, or passes when nothing
    beats; the acting seat's view after it."""
    seat = seated.seats[view.turn_seat]
    legal = seat.legal_plays(seated.table_id, view.hand_id)
    if not legal.plays:
        return seat.pass_turn(seated.table_id, view.hand_id).hand
    return seat.play(seated.table_id, view.hand_id, rng.choice(list(legal.plays)).cards).hand


def _shengji_step(seated: Seated, view: pb.HandView, rng: random.Random) -> pb.HandView:
    """Each seat asked its legal plays until one acts (a seat may also read its view)."""
    after = shengji_step(seated, view.hand_id, rng)
    assert after is not None, "nobody had anything to do in a hand in progress"
    return after


Step = Callable[[Seated, pb.HandView, random.Random], pb.HandView]
# Per hosted game: a table with a bot in every seat, and one step of its bots (seat-token
# calls only: ListLegalPlays, a view, a command).
GAMES: dict[str, tuple[Callable[[LiveServer], Seated], Step]] = {
    "fiftyk": (lambda server: seat_bots(server, "classic", 4, prefix="once"), _fiftyk_step),
    "shengji": (shengji_table, _shengji_step),
    "doudizhu": (doudizhu_table, doudizhu_step),
}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_seat_token_is_verified_once_per_call(server: LiveServer, game: str,
                                                verifications: Verifications) -> None:
    rng = random.Random(25)
    open_table, step = GAMES[game]
    seated = open_table(server)
    view = seated.platform.start_hand(seated.table_id).hand
    start = verifications.seat
    calls = 0
    for _ in range(3):
        # One step; count the calls made with seat tokens by the client.
        counted = _SeatCalls(seated)
        view = step(counted.seated, view, rng)
        calls += counted.calls
    assert calls >= 3 * 2  # each step asks at least its legal plays and acts
    assert verifications.seat - start == calls


def test_a_spectator_token_is_verified_once_per_call(server: LiveServer,
                                                    verifications: Verifications) -> None:
    seated = seat_bots(server, "classic", 4, prefix="watched")
    hand_id = seated.platform.start_hand(seated.table_id).hand.hand_id
    token = seated.platform.issue_spectator_token(seated.table_id).spectator_token
    spectator = server.client(token=token)
    start = verifications.spectator
    spectator.get_table(seated.table_id)
    spectator.hand_view(seated.table_id, hand_id)
    assert verifications.spectator - start == 2


def test_a_credential_the_interceptors_did_not_verify_is_still_refused(
        server: LiveServer) -> None:
    seated = seat_bots(server, "classic", 4, prefix="forged")
    hand_id = seated.platform.start_hand(seated.table_id).hand.hand_id
    forged = seated.tokens[0][:-2] + ("AA" if not seated.tokens[0].endswith("AA") else "BB")
    with pytest.raises(grpc.RpcError) as refused:
        server.client(token=forged).hand_view(seated.table_id, hand_id)
    code, reason, _ = error_reason(refused.value)
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "INVALID_TOKEN")


class _SeatCalls:
    """The table's seat clients, counting the calls made through them."""

    def __init__(self, seated: Seated) -> None:
        self.calls = 0
        self.seated = Seated(seated.table_id, seated.players, seated.tokens,
                             [_Counting(client, self) for client in seated.seats],
                             seated.platform)


class _Counting:
    """A seat's real client; each call through it is counted."""

    def __init__(self, client: Any, counter: _SeatCalls) -> None:
        self._client = client
        self._counter = counter

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)
        if name == "stub":  # a game's own calls go through the stub: count each RPC there
            return _Counting(method, self._counter)
        if name == "call_options":  # what a game's call passes along, not a call itself
            return method

        def call(*args: Any, **kwargs: Any) -> Any:
            self._counter.calls += 1
            return method(*args, **kwargs)

        return call
