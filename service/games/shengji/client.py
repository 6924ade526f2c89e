"""Shengji's calls of the 0.2 API, on the typed client: `Declare` and `Bury`.

Any client may send the same actions through `Act` (kinds "declare" and "bury"); these are
the RPCs clients written for 0.2 call, which the referee still answers.
"""

from __future__ import annotations

from collections.abc import Iterable

from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb


def declare(client: RefereeClient, table_id: str, hand_id: str, cards: Iterable[str] = (), *,
            window: int | None = None, request_id: str = "") -> pb.DeclareResponse:
    """Declare trump cards for the token's seat (none: declare nothing this round)."""
    request = pb.DeclareRequest(request_id=request_id, table_id=table_id, hand_id=hand_id,
                                cards=list(cards))
    if window is not None:
        request.window = window
    response: pb.DeclareResponse = client.stub.Declare(request, **client.call_options())
    return response


def bury(client: RefereeClient, table_id: str, hand_id: str, cards: Iterable[str], *,
         request_id: str = "") -> pb.BuryResponse:
    """Bury cards in the kitty (the dealer)."""
    request = pb.BuryRequest(request_id=request_id, table_id=table_id, hand_id=hand_id,
                             cards=list(cards))
    response: pb.BuryResponse = client.stub.Bury(request, **client.call_options())
    return response


__all__ = ["bury", "declare"]
