"""What the webhook delivery process reports reaches the server's metrics and log, and only
that: the metric calls `service.webhooks.dispatcher.WebhookMetrics` names, applied in order; the
endpoints' gauges dropped when the process dies; its log records under their own logger."""

from __future__ import annotations

import io
import json
import logging

import pytest

from fiftyk_referee.service.ops.metrics import Metrics
from fiftyk_referee.service.ops.webhook_settings import parse_webhook_settings
from fiftyk_referee.service.webhooks.process import (
    DeliverySpec,
    Relay,
    RelayedMetrics,
    RelayedMetricsSink,
    RelayLogHandler,
    relay_log_record,
)


def _report(out: io.BytesIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_relayed_metric_calls_reach_the_servers_metrics_in_order() -> None:
    out = io.BytesIO()
    relay = Relay(out)
    child = RelayedMetrics(relay)
    child.serve_webhook("e1")
    child.webhook_delivered("e1", 0.25)
    child.webhook_failed("e1")
    child.set_webhook_lag("e1", 3, 1.5)
    relay.flush()
    metrics = Metrics()
    sink = RelayedMetricsSink(metrics)
    for report in _report(out):
        sink.apply(report["metrics"])  # type: ignore[arg-type]  # JSON as relayed
    value = metrics.registry.get_sample_value
    assert value("fiftyk_webhook_deliveries_total", {"endpoint": "e1"}) == 1
    assert value("fiftyk_webhook_failures_total", {"endpoint": "e1"}) == 1
    assert value("fiftyk_webhook_lag_events", {"endpoint": "e1"}) == 3
    sink.forget_all()  # the process died: its gauges go
    assert value("fiftyk_webhook_lag_events", {"endpoint": "e1"}) is None


def test_a_relayed_call_outside_the_webhook_metrics_is_ignored() -> None:
    metrics = Metrics()
    RelayedMetricsSink(metrics).apply([["webhook_process_restarted", []],
                                       ["stop_http_server", []],
                                       ["webhook_retried", ["e2"]]])
    value = metrics.registry.get_sample_value
    assert value("fiftyk_webhook_process_restarts_total") == 0
    assert value("fiftyk_webhook_retries_total", {"endpoint": "e2"}) == 1
    with pytest.raises(AttributeError):
        RelayedMetrics(Relay(io.BytesIO())).stop_http_server  # noqa: B018 - not relayed


def test_a_relayed_log_record_is_logged_under_its_logger_and_level(
        caplog: pytest.LogCaptureFixture) -> None:
    out = io.BytesIO()
    relay = Relay(out)
    child_log = logging.Logger("fiftyk_referee.service.webhooks.dispatcher")
    child_log.addHandler(RelayLogHandler(relay, 4242))
    child_log.warning("webhook %s: dead-lettered", "e3")  # written at once (a warning)
    child_log.info("webhook %s: attempt failed", "e3")
    relay.flush()
    with caplog.at_level(logging.WARNING, "fiftyk_referee.service.webhooks.dispatcher"):
        for report in _report(out):
            for entry in report["logs"]:  # type: ignore[attr-defined]  # JSON as relayed
                relay_log_record(entry)
    assert [(r.name, r.levelno, r.getMessage(), getattr(r, "delivery_pid", None))
            for r in caplog.records] == [
        ("fiftyk_referee.service.webhooks.dispatcher", logging.WARNING,
         "webhook e3: dead-lettered", 4242)]


def test_the_spec_survives_its_line_for_both_stores_settings() -> None:
    spec = DeliverySpec(persistence={"PERSISTENCE_MODULE": "eventsourcing.sqlite"},
                        settings=parse_webhook_settings("attempts=3,timeout=2,loopback=0"),
                        holder="h-1", log_level="INFO")
    line = spec.to_line()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert DeliverySpec.from_line(line) == spec
