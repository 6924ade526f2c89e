"""`scripts/bench web`: how long the web table takes to show a 200-event hand.

Starts `fiftyk serve` with its web port on a fresh SQLite store, lets bots play 五十K hands
until one has at least `--events` events, then opens the page in Debian's chromium (the
browser tests' driver, `tests/support/browser.py`) `--repeat` times in a fresh profile and
reports the median of: the deep link to the stored hand (`/#hand=ID&v=1`: page, scripts,
the replay document through the gRPC service, every state folded, the table drawn), the
same hand as one offline file (`fiftyk replay --html`), and a transcript dropped on the
page (replayed by the referee). Each time is the page's own `performance.now()` when it
first drew the table, i.e. from the start of navigation (a dropped file: from the drop).
Target (issue 20): ≤ 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.arguments import positive
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY, DEV_PLATFORM_KEY
from fiftyk_referee.service.web.document import hand_document
from fiftyk_referee.service.web.page import offline_html
from tests.support.browser import chromium

DEFAULT_EVENTS = 200
DEFAULT_REPEAT = 7
TARGET_MS = 1000.0
PASS_RATE = 0.45  # bots that pass often make long hands
MAX_HANDS = 50
START_SECONDS = 60.0
# The page notes the moment it first drew the hand (polling would add the poll's own delay).
DRAWN = "return document.body.dataset.drawnAt || null"
POLL_SECONDS = 0.01
# How long the replay document took to arrive (the referee building it from the store).
DOCUMENT = ("return performance.getEntriesByType('resource')"
            ".find((e) => e.name.includes('/api/hands/')).duration")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `bench web`."""
    parser = sub.add_parser("web", help="web table: page load of a long hand",
                            description=__doc__)
    parser.add_argument("--events", type=positive, default=DEFAULT_EVENTS,
                        help=f"the hand's least number of events (default {DEFAULT_EVENTS})")
    parser.add_argument("--repeat", type=positive, default=DEFAULT_REPEAT,
                        help=f"page loads per variant (default {DEFAULT_REPEAT})")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=run)


def _serve(data: Path) -> tuple[subprocess.Popen[str], str, str]:
    """`fiftyk serve` with a web port; its process, gRPC target and web address."""
    command = [sys.executable, "-m", "fiftyk_referee.service.cli", "serve", "--port", "0",
               "--metrics-port", "0", "--web-port", "0", "--data-dir", str(data),
               "--rate-limits", "off", "--log-level", "warning"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    line = process.stdout.readline()
    fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
    if "grpc" not in fields or "web" not in fields:
        process.kill()
        raise RuntimeError(f"fiftyk serve did not start: {line!r}")
    return process, fields["grpc"], fields["web"].rstrip("/")


def _long_hand(target: str, events: int) -> str:
    """Bots play 五十K hands until one has at least `events` events; its id."""
    platform = RefereeClient(target, platform_key=DEV_PLATFORM_KEY)
    audit = platform.as_audit(DEV_AUDIT_KEY)
    rng = random.Random(events)
    table = platform.create_table("classic", 4).table
    seats = [platform.as_seat(platform.join_table(table.table_id, f"bench-{s}", s).seat_token)
             for s in range(4)]
    try:
        for _ in range(MAX_HANDS):
            view = platform.start_hand(table.table_id).hand
            while view.status != pb.HAND_STATUS_COMPLETED:
                bot = seats[view.turn_seat]
                legal = bot.legal_plays(table.table_id, view.hand_id)
                if legal.may_pass and (not legal.plays or rng.random() < PASS_RATE):
                    view = bot.pass_turn(table.table_id, view.hand_id).hand
                else:
                    view = bot.play(table.table_id, view.hand_id,
                                    rng.choice(list(legal.plays)).cards).hand
            if len(audit.all_hand_events(view.hand_id)) >= events:
                return view.hand_id
            if platform.get_table(table.table_id).match_over:
                table = platform.create_table("classic", 4).table
                seats = [platform.as_seat(platform.join_table(
                    table.table_id, f"bench-{s}", s).seat_token) for s in range(4)]
    finally:
        platform.close()
    raise RuntimeError(f"no hand of {events} events in {MAX_HANDS} hands")


def _drawn_after(driver: Any, start: Any) -> float:
    """Navigate with `start()`, then the page's own time (ms) when it first drew the table."""
    start()
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        value = driver.execute_script(DRAWN)
        if value is not None:
            return float(value)
        time.sleep(POLL_SECONDS)
    raise RuntimeError("the page did not draw the hand")


def run(args: argparse.Namespace) -> int:
    """Measure and print the report."""
    with tempfile.TemporaryDirectory(prefix="bench-web-") as folder:
        process, target, web = _serve(Path(folder) / "data")
        try:
            hand_id = _long_hand(target, args.events)
            audit = RefereeClient(target, audit_key=DEV_AUDIT_KEY)
            document = hand_document(audit, hand_id)
            transcript = audit.export_transcript(hand_id)
            audit.close()
            offline = Path(folder) / "hand.html"
            offline.write_text(offline_html(document), encoding="utf-8")
            dropped = Path(folder) / "transcript.json"
            dropped.write_text(json.dumps(transcript), encoding="utf-8")
            times = _measure(web, hand_id, offline, dropped, args.repeat)
        finally:
            process.terminate()
            process.wait(timeout=START_SECONDS)
    report = {
        "events": len(document["events"]), "repeat": args.repeat, "target_ms": TARGET_MS,
        "median_ms": {name: round(statistics.median(values), 1)
                      for name, values in times.items()},
        "max_ms": {name: round(max(values), 1) for name, values in times.items()},
        "cpus": os.cpu_count(), "load": os.getloadavg()[0],
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"web table: a hand of {report['events']} events, {args.repeat} loads each,"
              f" target {TARGET_MS:g} ms (load average {report['load']:.1f}"
              f" on {report['cpus']} CPUs)")
        for name, value in report["median_ms"].items():
            verdict = "" if name.startswith(" ") else (
                "   met" if value <= TARGET_MS else "   MISSED")
            print(f"  {name:<26} median {value:8.1f} ms   max {report['max_ms'][name]:8.1f} ms"
                  f"{verdict}")
    return 0


def _measure(web: str, hand_id: str, offline: Path, dropped: Path, repeat: int
             ) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"stored hand (deep link)": [],
                                     "  of which the document": [], "offline file": [],
                                     "transcript dropped": []}
    for _ in range(repeat):
        with chromium() as driver:
            driver.get(f"{web}/")
            driver.execute_script(f"sessionStorage.setItem('fiftyk.auditKey', '{DEV_AUDIT_KEY}')")
            times["stored hand (deep link)"].append(_drawn_after(
                driver, lambda d=driver: d.get(f"{web}/#hand={hand_id}&v=1") or d.refresh()))
            times["  of which the document"].append(float(driver.execute_script(DOCUMENT)))
            times["offline file"].append(_drawn_after(
                driver, lambda d=driver: d.get(offline.resolve().as_uri())))
            driver.get(f"{web}/")
            began = driver.execute_script("return performance.now()")
            drawn = _drawn_after(driver, lambda d=driver: d.find_element(
                "id", "file").send_keys(str(dropped.resolve())))
            times["transcript dropped"].append(drawn - float(began))
    return times


__all__ = ["add_parser", "run"]
