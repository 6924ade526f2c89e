"""RefereeService is served by groups of RPCs, one module each; every RPC by exactly one."""

from __future__ import annotations

import pytest

from fiftyk_referee.service.core.bundles import legacy_rpcs
from fiftyk_referee.service.grpc.calls import Context, Rpcs, rpc
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.play import PlayRpcs
from fiftyk_referee.service.grpc.servicer import (
    GROUPS,
    SERVICE,
    RefereeServicer,
    game_action_rpcs,
    serving,
)
from fiftyk_referee.service.grpc.tables import TableRpcs


def test_every_rpc_of_the_proto_is_served_by_exactly_one_group_or_left_to_the_games(
        ) -> None:
    served = serving(GROUPS)
    left = game_action_rpcs(GROUPS)
    assert sorted(served) == sorted(method.name for method in SERVICE.methods
                                    if method.name not in left)
    # The hand action RPCs of 0.2 that only a game has: the installed games claim them all.
    assert left == set(legacy_rpcs()) == {"Declare", "Bury"}
    for name, group in served.items():
        # The composed servicer answers with the group's handler, not the generated stub.
        assert getattr(RefereeServicer, name) is vars(group)[name]


def test_a_group_left_out_names_the_rpcs_nobody_serves() -> None:
    without_tables = tuple(group for group in GROUPS if group is not TableRpcs)
    with pytest.raises(TypeError) as refused:
        serving(without_tables)
    for name in ("CreateTable", "JoinTable", "ReissueSeatToken", "ListTables"):
        assert f"{name} (served by no group)" in str(refused.value)


def test_an_rpc_two_groups_serve_is_refused() -> None:
    class SecondPlay(Rpcs):
        @rpc
        async def Act(self, request: pb.ActRequest, context: Context) -> pb.ActResponse:
            return pb.ActResponse()

    with pytest.raises(TypeError, match=r"Act \(served by PlayRpcs, SecondPlay\)"):
        serving((*GROUPS, SecondPlay))
    assert PlayRpcs in GROUPS
