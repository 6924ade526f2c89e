"""The byte paging of list answers and the last check on an answer's size, on real
messages."""

from __future__ import annotations

import pytest

from fiftyk_referee.service.errors import ResourceExhausted
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.grpc.paging import (
    MAX_TABLE_NAME_LENGTH,
    check_answer_size,
    fitting,
    response_budget,
    shown_name,
)

LIMIT = 4096


def test_a_page_stops_before_its_items_pass_the_budget_and_keeps_at_least_one() -> None:
    budget = response_budget(LIMIT)
    assert 0 < budget < LIMIT
    tables = [pb.TableSummary(table_id=f"t{i}", name="n" * MAX_TABLE_NAME_LENGTH)
              for i in range(100)]
    kept = fitting(tables, budget)
    assert 0 < kept < len(tables)
    assert pb.ListTablesResponse(tables=tables[:kept]).ByteSize() <= budget
    assert pb.ListTablesResponse(tables=tables[:kept + 1]).ByteSize() > budget - len(tables)
    huge = [pb.TableSummary(name="x" * (2 * LIMIT))]
    assert fitting(huge, budget) == 1  # and the answer check refuses it, below
    assert fitting([], budget) == 0


def test_an_answer_over_grpcs_own_limit_is_refused_message_too_large() -> None:
    check_answer_size(pb.ListTablesResponse(tables=[pb.TableSummary(name="x" * LIMIT)]), LIMIT)
    with pytest.raises(ResourceExhausted) as refused:
        check_answer_size(pb.ListTablesResponse(
            tables=[pb.TableSummary(name="x" * (2 * LIMIT))]), LIMIT)
    assert refused.value.reason == "MESSAGE_TOO_LARGE"


def test_a_name_longer_than_the_limit_is_shown_cut_and_marked() -> None:
    assert shown_name("a" * MAX_TABLE_NAME_LENGTH) == "a" * MAX_TABLE_NAME_LENGTH
    assert shown_name("b" * 900_000) == "b" * MAX_TABLE_NAME_LENGTH + "…"
