"""Structured JSON logs: shape, ids from context, hidden cards only at DEBUG, request ids."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from fiftyk_referee.domain.cards import parse_cards
from fiftyk_referee.service.ops.logs import QUIET_BELOW_DEBUG, bind, configure_logging

HIDDEN = "3S 10H QC BJ"


@pytest.fixture
def output() -> Iterator[io.StringIO]:
    """Capture JSON logs in a buffer; restore the root logger afterwards."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    stream = io.StringIO()
    yield stream
    root.handlers[:] = handlers
    root.setLevel(level)


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_each_record_is_one_json_object_with_ts_level_logger_and_message(
    output: io.StringIO,
) -> None:
    configure_logging("info", output)
    logging.getLogger("fiftyk.test").info("table %s created", "t1")
    [entry] = lines(output)
    assert {k: entry[k] for k in ("level", "logger", "message")} == {
        "level": "INFO", "logger": "fiftyk.test", "message": "table t1 created",
    }
    assert entry["ts"].endswith("+00:00") and "T" in entry["ts"]


def test_bound_ids_appear_on_every_record_and_extra_overrides_them(
    output: io.StringIO,
) -> None:
    configure_logging("INFO", output)
    log = logging.getLogger("fiftyk.test")
    with bind(table_id="t1", hand_id="h1", seat=2, request_id="r1"):
        log.info("played")
        log.info("other seat", extra={"seat": 3})
    log.info("outside")
    first, second, outside = lines(output)
    assert {k: first[k] for k in ("table_id", "hand_id", "seat", "request_id")} == {
        "table_id": "t1", "hand_id": "h1", "seat": 2, "request_id": "r1",
    }
    assert second["seat"] == 3
    assert not {"table_id", "hand_id", "seat", "request_id"} & outside.keys()


def test_level_from_configuration_filters_records_and_a_second_call_replaces_the_first(
    output: io.StringIO,
) -> None:
    configure_logging("warning", output)
    configure_logging("WARNING", output)
    log = logging.getLogger("fiftyk.test")
    log.info("hidden")
    log.warning("shown")
    assert [entry["message"] for entry in lines(output)] == ["shown"]


def test_the_http_clients_line_per_request_shows_only_at_debug(
        output: io.StringIO, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in QUIET_BELOW_DEBUG:  # put back as they were after the test
        monkeypatch.setattr(logging.getLogger(name), "level", logging.getLogger(name).level)
    configure_logging("INFO", output)
    logging.getLogger("httpx").info("HTTP Request: POST https://hooks.example.com/?token=t")
    logging.getLogger("httpx").warning("a warning still shows")
    assert [entry["message"] for entry in lines(output)] == ["a warning still shows"]
    configure_logging("DEBUG", output)
    logging.getLogger("httpx").info("HTTP Request: POST https://hooks.example.com/")
    assert lines(output)[-1]["message"] == "HTTP Request: POST https://hooks.example.com/"


def test_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown log level"):
        configure_logging("chatty")


def test_card_fields_are_kept_at_debug(output: io.StringIO) -> None:
    configure_logging("DEBUG", output)
    logging.getLogger("fiftyk.test").debug("dealt", extra={"cards": HIDDEN.split(), "seat": 1})
    [entry] = lines(output)
    assert (entry["level"], entry["cards"], entry["seat"]) == ("DEBUG", HIDDEN.split(), 1)


def test_cards_never_appear_above_debug_however_they_are_logged(output: io.StringIO) -> None:
    configure_logging("DEBUG", output)
    log = logging.getLogger("fiftyk.test")
    hand = parse_cards(HIDDEN)
    log.info("hand of seat 1: %s", HIDDEN, extra={"cards": HIDDEN.split(), "note": "has 3S"})
    log.warning("hand %r", hand)
    try:
        raise ValueError(f"cannot play {HIDDEN}")
    except ValueError:
        log.exception("failed")
    log.debug("hand of seat 1: %s", HIDDEN)
    info, warning, error, debug = output.getvalue().splitlines()
    for line in (info, warning, error):
        for token in [*HIDDEN.split(), "Card("]:
            assert token not in line
    assert "cards" not in json.loads(info)
    assert json.loads(debug)["message"] == f"hand of seat 1: {HIDDEN}"


def test_words_and_ids_that_only_resemble_cards_are_kept(output: io.StringIO) -> None:
    configure_logging("INFO", output)
    logging.getLogger("fiftyk.test").info("table 3f2a9c10 JOINED by seat 2, 10 HS")
    assert lines(output)[0]["message"] == "table 3f2a9c10 JOINED by seat 2, 10 HS"
