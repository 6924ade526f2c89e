"""The web table in a real browser (Debian's chromium): stored hands of every game, a
transcript file, the offline page, the fairness check, and a live table followed as a
spectator. What the page draws is compared with what the referee stored (`GetHandAt`)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
import threading
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait

from fiftyk_referee.domain.shengji.cards import LEVELS
from fiftyk_referee.service.games.shengji.text import order_of, rules_of, sorted_cards
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY
from fiftyk_referee.service.trust.signing import Signer
from fiftyk_referee.service.trust.witness import cosignature_body
from tests.e2e import test_shengji, test_spectators
from tests.e2e.every_game import GAMES
from tests.e2e.harness import (
    LiveServer,
    Seated,
    hidden_cards,
    play_out,
    seat_bots,
    server_config,
)
from tests.e2e.test_web_api import SseClient
from tests.support.browser import chromium, network_messages

pytestmark = pytest.mark.browser

WAIT_SECONDS = 60
ARTIFACTS = Path(os.environ.get("FIFTYK_TEST_ARTIFACTS", "build/test-artifacts"))
KEY_STORE = "fiftyk.auditKey"


@dataclass
class Stored:
    """A finished hand on the test server."""

    table_id: str
    hand_id: str
    last_version: int


@dataclass
class Site:
    """The server with its web port, and one finished hand of each game."""

    server: LiveServer
    web: str
    fiftyk: Stored
    shengji: Stored
    doudizhu: Stored

    def hand(self, game: str) -> Stored:
        """The stored hand of a game."""
        stored: Stored = getattr(self, game)
        return stored


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A referee serving the web table, after bots played a hand of each game."""
    server = LiveServer(server_config(tmp_path_factory.mktemp("web"), web_port=0))
    try:
        rng = random.Random(20)
        seated = seat_bots(server, "classic", 4)
        view = seated.platform.start_hand(seated.table_id).hand
        final, _ = play_out(seated, view, rng)
        table = test_shengji.shengji_table(server)
        sj_view = table.platform.start_hand(table.table_id).hand
        sj_final = test_shengji.play_out(table, sj_view, rng)
        ddz = GAMES["doudizhu"]
        ddz_table = ddz.open_table(server)
        ddz_final = ddz.play_hand(ddz_table, rng)
        port = server.running.web_port
        yield Site(server, f"http://127.0.0.1:{port}",
                   Stored(seated.table_id, final.hand_id, final.version),
                   Stored(table.table_id, sj_final.hand_id, sj_final.version),
                   Stored(ddz_table.table_id, ddz_final.hand_id, ddz_final.version))
    finally:
        server.stop()


@pytest.fixture()
def browser() -> Iterator[WebDriver]:
    """A fresh chromium for one test."""
    with chromium() as driver:
        yield driver


# -- reading the page ---------------------------------------------------------------------

READ_TABLE = """
const data = (selector, key) => {
  const node = document.querySelector(selector);
  return node ? node.dataset[key] : null;
};
const seats = {};
for (const s of document.querySelectorAll('#table .seat')) {
  seats[s.dataset.seat] = {
    cards: [...s.querySelectorAll('.hand .card[data-card]')].map((c) => c.dataset.card),
    hidden: [...s.querySelectorAll('.hand .card[data-hidden-count]')]
      .map((c) => Number(c.dataset.hiddenCount)),
    points: Number(s.querySelector('[data-points]').dataset.points),
  };
}
const trick = document.querySelector('#table .trick');
const plays = [...document.querySelectorAll('#table .trick .play')].map((p) => ({
  seat: Number(p.dataset.seat),
  cards: [...p.querySelectorAll('.card')].map((c) => c.dataset.card),
  pass: Boolean(p.querySelector('.pass')),
}));
return { seats, current: trick.hasAttribute('data-current'), plays,
         version: Number(document.getElementById('version').dataset.version),
         scores: [...document.querySelectorAll('.scores [data-score]')]
           .map((c) => c.dataset.score),
         fair: data('#fairness [data-fair]', 'fair'),
         trump: data('[data-trump-suit]', 'trumpSuit'),
         levels: data('[data-levels]', 'levels') };
"""


def read(driver: WebDriver) -> dict[str, Any]:
    """What the page draws now."""
    result: dict[str, Any] = driver.execute_script(READ_TABLE)
    return result


def wait_for(driver: WebDriver, script: str) -> Any:
    """Wait until a script returns something truthy; return it."""
    return WebDriverWait(driver, WAIT_SECONDS).until(lambda d: d.execute_script(script))


def open_hand(driver: WebDriver, site: Site, hand_id: str, version: int) -> None:
    """Open the page on a stored hand at a version, through its deep link."""
    driver.get(f"{site.web}/")
    driver.execute_script(f"sessionStorage.setItem('{KEY_STORE}', '{DEV_AUDIT_KEY}')")
    driver.get(f"{site.web}/#hand={hand_id}&v={version}")
    driver.refresh()
    wait_for(driver, f"return document.getElementById('version').dataset.version == '{version}'")


def go_to_version(driver: WebDriver, version: int) -> None:
    """Move the slider to a version (keyboard on the range input) until the page shows it.
    The key presses go in one command: the page gets one key event per step, as from a held
    key."""
    slider = driver.find_element(By.ID, "slider")
    now = int(slider.get_attribute("value") or "1")
    key = Keys.ARROW_RIGHT if version > now else Keys.ARROW_LEFT
    if version != now:
        slider.send_keys(key * abs(version - now))
    wait_for(driver, f"return document.getElementById('version').dataset.version == '{version}'")


def at_version(driver: WebDriver, version: int) -> dict[str, Any]:
    """Move the slider to a version and read the page (a 五十K or 升级 table)."""
    go_to_version(driver, version)
    return read(driver)


def assert_drawn_as_stored(drawn: dict[str, Any], view: pb.HandView) -> None:
    """Every seat's cards and points, and the current trick, as the referee stored them."""
    for state in view.seats:
        seat = drawn["seats"][str(state.seat)]
        assert sorted(seat["cards"]) == sorted(state.cards), f"seat {state.seat} cards"
        assert seat["points"] == state.collected, f"seat {state.seat} points"
    if view.trick:
        assert drawn["current"]
        stored = [(a.seat, sorted(a.cards), a.kind == pb.ACTION_KIND_PASS) for a in view.trick]
        shown = [(p["seat"], sorted(p["cards"]), p["pass"]) for p in drawn["plays"]]
        assert shown == stored
    else:
        assert not drawn["current"]


def versions_to_check(last: int) -> list[int]:
    """A handful of versions across the hand: the deal, early, middle, late and the end."""
    return sorted({1, 2, last // 4, last // 2, (3 * last) // 4, last - 1, last})


# -- stored hands -------------------------------------------------------------------------


def test_a_stored_fiftyk_hand_is_drawn_as_stored_at_every_version_checked(
        site: Site, browser: WebDriver) -> None:
    audit = site.server.audit()
    hand = site.fiftyk
    open_hand(browser, site, hand.hand_id, 1)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for version in versions_to_check(hand.last_version):
        drawn = at_version(browser, version)
        assert drawn["version"] == version
        assert_drawn_as_stored(drawn, audit.hand_at(hand.hand_id, version))
    final = audit.hand_at(hand.hand_id, hand.last_version)
    drawn = read(browser)
    assert drawn["scores"] == [s.score for s in final.result.seats]
    assert drawn["fair"] == "yes"
    totals = {s.side: s.score for s in audit.get_table(hand.table_id).scores}
    chart = browser.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('#chart polyline')]"
        ".map((p) => [p.dataset.side, p.dataset.values.split(' ').pop()]))")
    assert chart == {side: str(int(float(score))) for side, score in totals.items()}


def test_a_stored_shengji_hand_is_drawn_as_stored_with_trump_levels_and_kitty(
        site: Site, browser: WebDriver) -> None:
    audit = site.server.audit()
    hand = site.shengji
    dealt = audit.hand_history(hand.hand_id, after_version=0, limit=1).events[0]
    rules = rules_of(dealt.shengji_hand_dealt)
    open_hand(browser, site, hand.hand_id, 1)
    for version in versions_to_check(hand.last_version):
        drawn = at_version(browser, version)
        view = audit.hand_at(hand.hand_id, version)
        assert_drawn_as_stored(drawn, view)
        assert drawn["levels"] == " ".join(view.shengji.levels)
        if view.shengji.HasField("trump_suit"):
            assert drawn["trump"] == view.shengji.trump_suit
        if view.shengji.phase != "declaring":
            # Held as a player holds them, as `fiftyk replay` prints them: trumps first.
            order = order_of(rules, view.shengji.trump_rank,
                             view.shengji.trump_suit if view.shengji.HasField("trump_suit")
                             else None)
            for state in view.seats:
                assert drawn["seats"][str(state.seat)]["cards"] == sorted_cards(
                    state.cards, order), f"seat {state.seat} at version {version}"
    final = audit.hand_at(hand.hand_id, hand.last_version)
    levels_after = browser.execute_script(
        "return document.querySelector('[data-levels-after]').dataset.levelsAfter")
    assert levels_after == " ".join(final.shengji.result.levels_after)
    assert read(browser)["fair"] == "yes"


def test_screenshots_of_the_replay_at_three_versions(site: Site, browser: WebDriver) -> None:
    hand = site.fiftyk
    open_hand(browser, site, hand.hand_id, 1)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for version in (1, hand.last_version // 2, hand.last_version):
        at_version(browser, version)
        path = ARTIFACTS / f"web-table-fiftyk-v{version}.png"
        assert browser.save_screenshot(str(path)) and path.stat().st_size > 0


def test_perspectives_hide_what_the_viewer_may_not_see(site: Site, browser: WebDriver) -> None:
    hand = site.fiftyk
    open_hand(browser, site, hand.hand_id, 2)
    Select(browser.find_element(By.ID, "perspective")).select_by_value("1")
    drawn = wait_for(browser, READ_TABLE.replace("return {", "const r = {") +
                     "return r.seats['0'].cards.length === 0 ? r : null;")
    assert drawn["seats"]["1"]["cards"] and not any(
        drawn["seats"][s]["cards"] for s in ("0", "2", "3"))
    Select(browser.find_element(By.ID, "perspective")).select_by_value("public")
    drawn = wait_for(browser, READ_TABLE.replace("return {", "const r = {") +
                     "return r.seats['1'].cards.length === 0 ? r : null;")
    assert all(not seat["cards"] and seat["hidden"] for seat in drawn["seats"].values())


# -- transcripts and the offline page -----------------------------------------------------


def drop_file(driver: WebDriver, path: Path) -> None:
    """Give the page a file through its file input."""
    driver.find_element(By.ID, "file").send_keys(str(path.resolve()))


def test_a_transcript_file_replays_and_its_deal_checks_out(
        site: Site, browser: WebDriver, tmp_path: Path) -> None:
    audit = site.server.audit()
    for stored in (site.fiftyk, site.shengji):  # 斗地主's: tests/e2e/test_doudizhu_web.py
        transcript = audit.export_transcript(stored.hand_id)
        path = tmp_path / f"{stored.hand_id}.json"
        path.write_text(json.dumps(transcript))
        browser.get(f"{site.web}/")
        drop_file(browser, path)
        wait_for(browser, "return document.body.classList.contains('loaded')")
        browser.find_element(By.ID, "last").click()
        drawn = wait_for(browser, READ_TABLE.replace("return {", "const r = {") +
                         "return r.fair ? r : null;")
        assert drawn["fair"] == "yes"
        final = audit.hand_at(stored.hand_id, stored.last_version)
        for state in final.seats:
            assert sorted(drawn["seats"][str(state.seat)]["cards"]) == sorted(state.cards)
            assert drawn["seats"][str(state.seat)]["points"] == state.collected


def test_a_dropped_evidence_file_replays_and_checks_its_own_deal(
        site: Site, browser: WebDriver, tmp_path: Path) -> None:
    audit = site.server.audit()
    answer = audit.stub.ExportTranscript(pb.ExportTranscriptRequest(hand_id=site.shengji.hand_id),
                                         metadata=audit.metadata, timeout=WAIT_SECONDS)
    path = tmp_path / "evidence.json"
    path.write_text(answer.evidence_json)
    browser.get(f"{site.web}/")
    drop_file(browser, path)
    wait_for(browser, "return document.body.classList.contains('loaded')")
    fair = wait_for(browser, "const f = document.querySelector('#fairness [data-fair]');"
                             " return f && f.dataset.fair !== 'unknown' ? f.dataset.fair : null;")
    assert fair == "yes"


ENTROPY_EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / \
    "evidence-entropy.json"


def _fairness_of(browser: WebDriver, site: Site, path: Path) -> str:
    browser.get(f"{site.web}/")
    drop_file(browser, path)
    fair: str = wait_for(browser, "const f = document.querySelector('#fairness [data-fair]');"
                                  " return f && f.dataset.fair !== 'unknown' ? f.dataset.fair"
                                  " : null;")
    return fair


def test_the_page_shows_witness_cosignatures_as_present_and_unverified(
        site: Site, browser: WebDriver, tmp_path: Path) -> None:
    """The page holds no witness key: a dropped evidence file's cosignatures are named,
    never called checked; a file without any says so."""
    evidence = json.loads(EXAMPLE_EVIDENCE.read_text("utf-8"))
    assert _fairness_of(browser, site, EXAMPLE_EVIDENCE) == "yes"
    note = browser.find_element(By.CSS_SELECTOR, "#fairness [data-cosignatures=unverified]")
    assert "No witness cosigned a tree that holds this hand" in note.text
    witness = Signer.from_text("44" * 32)
    cosignature = witness.sign(cosignature_body(evidence["ledger"]["checkpoint"],
                                                datetime.now(UTC)))
    evidence["ledger"]["cosignatures"] = [{"witness": "alice", "cosignature": cosignature,
                                           "consistency": []}]
    path = tmp_path / "cosigned.json"
    path.write_text(json.dumps(evidence))
    assert _fairness_of(browser, site, path) == "yes"
    note = browser.find_element(By.CSS_SELECTOR, "#fairness [data-cosignatures=unverified]")
    assert f"present, NOT checked here: alice ({witness.key_id}, a tree of 1 hands)" in note.text
    assert "--witness-key" in note.text


EXAMPLE_EVIDENCE = Path(__file__).resolve().parents[2] / "docs" / "examples" / \
    "evidence-qq3.json"


def test_a_seat_entropy_deal_checks_out_in_the_browser_and_a_forged_one_does_not(
        site: Site, browser: WebDriver, tmp_path: Path) -> None:
    """fiftyk-shuffle/2 with WebCrypto's HMAC: the example (a Shengji hand, one seat
    silent) checks out; the same file with one contribution changed deals another deck."""
    fair = _fairness_of(browser, site, ENTROPY_EXAMPLE)
    text = browser.find_element(By.ID, "fairness").text
    assert fair == "yes", text
    assert "3 of 4 seats contributed" in text
    # The deal checks out, but who signed the file is not checked in the page: unverified.
    note = browser.find_element(By.CSS_SELECTOR, "#fairness [data-signature=unverified]").text
    assert "UNVERIFIED" in note and "fiftyk verify" in note
    evidence = json.loads(ENTROPY_EXAMPLE.read_text("utf-8"))
    evidence["deal"]["contributions"][0] = "ab" * 32  # what a dropped evidence file checks
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(evidence))
    assert _fairness_of(browser, site, path) == "no"
    assert "another deck" in browser.find_element(By.ID, "fairness").text


def test_a_stored_seat_entropy_hand_checks_out(site: Site, browser: WebDriver) -> None:
    platform = site.server.platform()
    table = platform.create_table("classic", 4, entropy_window=300, entropy_direct=True).table
    tokens = [platform.join_table(table.table_id, f"web-se-{seat}", seat).seat_token
              for seat in range(4)]
    seats = [site.server.client(token=token) for token in tokens]
    platform.start_hand(table.table_id)
    hand = None
    for seat in seats:
        hand = seat.contribute_entropy(table.table_id).hand
    assert hand is not None and hand.hand_id
    final, _ = play_out(Seated(table.table_id, 4, tokens, seats, platform),
                        platform.hand_view(table.table_id, hand.hand_id), random.Random(3))
    open_hand(browser, site, final.hand_id, final.version)
    assert read(browser)["fair"] == "yes"
    assert "4 of 4 seats contributed" in browser.find_element(By.ID, "fairness").text
    assert "sent their bytes directly" in browser.find_element(By.ID, "fairness").text


def test_a_committed_then_revealed_hand_checks_out_and_a_re_draw_does_not(
        site: Site, browser: WebDriver, tmp_path: Path) -> None:
    """The page checks a commit-then-reveal deal's record like `fiftyk verify`: every
    revealed contribution opens its commitment, and a draw abandoned before it fails."""
    platform = site.server.platform()
    table = platform.create_table("classic", 4, entropy_window=300).table
    tokens = [platform.join_table(table.table_id, f"web-cr-{seat}", seat).seat_token
              for seat in range(4)]
    seats = [site.server.client(token=token) for token in tokens]
    platform.start_hand(table.table_id)
    secrets_ = [bytes([seat + 7]) * 32 for seat in range(4)]
    for seat, client in enumerate(seats):
        client.commit_entropy(table.table_id, secrets_[seat])
    hand = None
    for seat, client in enumerate(seats):
        hand = client.reveal_entropy(table.table_id, secrets_[seat]).hand
    assert hand is not None and hand.hand_id
    final, _ = play_out(Seated(table.table_id, 4, tokens, seats, platform),
                        platform.hand_view(table.table_id, hand.hand_id), random.Random(5))
    open_hand(browser, site, final.hand_id, final.version)
    assert read(browser)["fair"] == "yes"
    assert "every revealed contribution opens its seat's commitment" in \
        browser.find_element(By.ID, "fairness").text
    evidence = site.server.audit().export_evidence(final.hand_id)
    evidence["deal"]["draw"]["abandoned"] = [{"commitment": "ab" * 32}]
    redrawn = tmp_path / "redrawn.json"
    redrawn.write_text(json.dumps(evidence))
    assert _fairness_of(browser, site, redrawn) == "no"
    assert "re-draw" in browser.find_element(By.ID, "fairness").text
    evidence["deal"]["draw"]["abandoned"] = []
    evidence["deal"]["draw"]["commitments"][2] = "cd" * 32
    mismatched = tmp_path / "mismatched.json"
    mismatched.write_text(json.dumps(evidence))
    assert _fairness_of(browser, site, mismatched) == "no"
    assert "seat 2's revealed bytes do not open its commitment" in \
        browser.find_element(By.ID, "fairness").text
    # A seat that bound a key: an unsigned commitment is one made with its token alone.
    evidence["deal"]["draw"]["commitments"][2] = hashlib.sha256(secrets_[2]).hexdigest()
    evidence["deal"]["draw"]["seat_keys"] = ["ef" * 32, "", "", ""]
    evidence["deal"]["draw"]["signatures"] = {"commitments": [""] * 4,
                                              "contributions": [""] * 4}
    unsigned = tmp_path / "unsigned.json"
    unsigned.write_text(json.dumps(evidence))
    assert _fairness_of(browser, site, unsigned) == "no"
    assert "seat 0's commitment is unsigned although the seat bound a key" in \
        browser.find_element(By.ID, "fairness").text


def test_an_edited_transcript_fails_the_fairness_check(
        site: Site, browser: WebDriver, tmp_path: Path) -> None:
    transcript = site.server.audit().export_transcript(site.fiftyk.hand_id)
    deck = transcript["deck"]
    # Trade two different cards between the first and the second seat's deals.
    other = next(i for i in range(1, len(deck)) if deck[i] != deck[0])
    deck[0], deck[other] = deck[other], deck[0]
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(transcript))
    browser.get(f"{site.web}/")
    drop_file(browser, path)
    fair = wait_for(browser, "const f = document.querySelector('#fairness [data-fair]');"
                             " return f && f.dataset.fair !== 'unknown' ? f.dataset.fair : null;")
    assert fair == "no"
    text = browser.find_element(By.ID, "fairness").text
    assert "does not match" in text and "another deck" in text
    # A transcript claims no signature, so there is none to call unverified.
    assert not browser.find_elements(By.CSS_SELECTOR, "#fairness [data-signature]")


def test_replay_html_writes_an_offline_page_that_draws_the_hand(
        site: Site, browser: WebDriver, tmp_path: Path) -> None:
    out = tmp_path / "hand.html"
    done = subprocess.run(
        [sys.executable, "-m", "fiftyk_referee.service.cli", "replay", site.shengji.hand_id,
         "--server", site.server.target, "--html", str(out)],
        capture_output=True, text=True, check=False, env={**os.environ,
                                                          "FIFTYK_AUDIT_KEY": DEV_AUDIT_KEY})
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html
    policy = browser_policy(html)
    assert "'unsafe-inline'" not in policy and "'sha256-" in policy
    browser.get(out.resolve().as_uri())
    wait_for(browser, "return document.body.classList.contains('loaded')")
    browser.find_element(By.ID, "last").click()
    drawn = wait_for(browser, READ_TABLE.replace("return {", "const r = {") +
                     "return r.fair ? r : null;")
    assert drawn["fair"] == "yes"
    assert not policy_violations(browser)
    final = site.server.audit().hand_at(site.shengji.hand_id, site.shengji.last_version)
    for state in final.seats:
        assert drawn["seats"][str(state.seat)]["points"] == state.collected


def browser_policy(html: str) -> str:
    """The Content-Security-Policy a page's meta element sets."""
    found = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
    assert found is not None, "the page sets no Content-Security-Policy"
    return found.group(1)


def policy_violations(driver: WebDriver) -> list[str]:
    """The browser console's Content-Security-Policy complaints since the last call."""
    entries: list[dict[str, Any]] = driver.get_log("browser")  # type: ignore[no-untyped-call]
    return [e["message"] for e in entries if "Content Security Policy" in e["message"]]


def test_the_page_loads_nothing_from_elsewhere(site: Site, browser: WebDriver) -> None:
    open_hand(browser, site, site.fiftyk.hand_id, 3)
    urls = browser.execute_script(
        "return performance.getEntriesByType('resource').map((e) => e.name)")
    assert urls and all(url.startswith(site.web) for url in urls)


# -- a live table, as a spectator ---------------------------------------------------------

DOM_CARDS = "return [...document.querySelectorAll('[data-card]')].map((c) => c.dataset.card)"
HELD_CARDS = ("return document.querySelectorAll("
              "'#table .seat .hand .card[data-card], #info .kitty .card[data-card]').length")


def public_cards(audit: RefereeClient, hand_id: str) -> Counter[str]:
    """Every card shown face up so far in a hand (played, or declared in 升级), with counts."""
    shown: Counter[str] = Counter()
    for event in audit.all_hand_events(hand_id):
        kind = event.WhichOneof("payload") or ""
        payload = getattr(event, kind)
        if kind.endswith("cards_played") or kind == "shengji_declared":
            shown.update(payload.cards)
        if kind == "shengji_throw_failed":
            shown.update(payload.attempted)
    return shown


def sse_events(driver: WebDriver) -> list[pb.Event]:
    """The events the page received over its server-sent event stream (DevTools log)."""
    events = []
    for message in network_messages(driver):
        if message["method"] == "Network.eventSourceMessageReceived":
            params = message["params"]
            if params.get("eventName") == "event":
                events.append(json_format.ParseDict(json.loads(params["data"]), pb.Event()))
    return events


@pytest.mark.parametrize("game", ["fiftyk", "shengji"])
def test_a_live_table_followed_as_a_spectator_never_shows_a_hidden_card(
        site: Site, browser: WebDriver, game: str) -> None:
    server = site.server
    if game == "fiftyk":
        seated = seat_bots(server, "classic", 4, prefix=f"live-{game}")
    else:
        seated = test_shengji.shengji_table(server)
    token = seated.platform.issue_spectator_token(seated.table_id).spectator_token
    browser.get(f"{site.web}/#watch={seated.table_id}&token={token}")
    wait_for(browser, "return document.body.classList.contains('live')")
    assert token not in browser.current_url  # the token leaves the address bar
    audit = server.audit()
    outcome: dict[str, Any] = {}

    def bots() -> None:
        try:
            view = seated.platform.start_hand(seated.table_id).hand
            rng = random.Random(game)
            outcome["final"] = (play_out(seated, view, rng)[0] if game == "fiftyk"
                                else test_shengji.play_out(seated, view, rng))
        except BaseException as error:  # reported below
            outcome["error"] = error

    playing = threading.Thread(target=bots, daemon=True)
    playing.start()
    polls = 0
    while playing.is_alive() or not polls:
        assert browser.execute_script(HELD_CARDS) == 0  # no seat's cards, no kitty
        shown = Counter(browser.execute_script(DOM_CARDS))
        hand_id = browser.execute_script("return FK.app.view.doc && FK.app.view.doc.hand_id")
        if hand_id and not outcome.get("final"):
            face_up = public_cards(audit, hand_id)
            assert not shown - face_up, f"hidden cards in the page: {shown - face_up}"
        polls += 1
    playing.join()
    assert "error" not in outcome, outcome.get("error")
    final = outcome["final"]
    wait_for(browser, "return [...document.querySelectorAll('#log li')].some("
                      "(li) => li.textContent.includes('hand over'))")
    drawn = read(browser)
    for state in final.seats:
        seat = drawn["seats"][str(state.seat)]
        assert not seat["cards"] and seat["points"] == state.collected
    received = sse_events(browser)
    assert any(e.name.endswith(".hand_ended") for e in received)
    for event in received:
        assert not hidden_cards(event) and not test_spectators.shengji_hidden(event), event.name
    fair = wait_for(browser, "const f = document.querySelector('#fairness [data-fair]');"
                             " return f && f.dataset.fair !== 'unknown' ? f.dataset.fair : null;")
    assert fair == "yes"  # the seed is revealed: a spectator checks the deal too
    # The chart counts the one hand once (its own totals, not again its table.hand_recorded).
    chart = chart_values(browser)
    assert chart and all(len(values) == 1 for values in chart.values()), chart
    if game == "fiftyk":
        totals = {s.side: s.score for s in audit.get_table(seated.table_id).scores}
        assert {side: values[0] for side, values in chart.items()} == {
            side: str(int(float(score))) for side, score in totals.items()}
    else:
        levels = final.shengji.result.levels_after
        assert [chart[f"team:{team}"][0] for team in range(2)] == [
            str(LEVELS.index(level) + 2) for level in levels]


def test_the_page_is_keyboard_operable_and_fits_a_phone(site: Site) -> None:
    phone_width = 390
    with chromium(width=phone_width, height=844) as driver:
        open_hand(driver, site, site.fiftyk.hand_id, 1)
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than a phone"
        body = driver.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.ARROW_RIGHT)
        wait_for(driver, "return document.getElementById('version').dataset.version == '2'")
        body.send_keys(Keys.END)
        last = site.fiftyk.last_version
        wait_for(driver, f"return document.getElementById('version').dataset.version == '{last}'")
        body.send_keys(Keys.HOME)
        wait_for(driver, "return document.getElementById('version').dataset.version == '1'")
        body.send_keys("]")  # the next trick: its first play is drawn as trick 2
        body.send_keys("]")
        trick = wait_for(driver, "const t = document.querySelector('#table .trick[data-current]');"
                                 " return t ? t.dataset.trick : null;")
        assert trick == "2"
        Select(driver.find_element(By.ID, "trick-jump")).select_by_value("3")
        wait_for(driver, "return document.querySelector('#table .trick').dataset.trick == '3'")


# -- the chart, the tricks and the words, as of the version shown ---------------------------

CHART_VALUES = ("return Object.fromEntries([...document.querySelectorAll('#chart polyline')]"
                ".map((p) => [p.dataset.side, p.dataset.values.split(' ')]))")
CHART_POINTS = ("return [...document.querySelectorAll('#chart polyline')]"
                ".map((p) => p.getAttribute('points'))")
TRICK_OPTIONS = ("return [...document.querySelectorAll('#trick-jump option')]"
                 ".map((o) => o.textContent)")
PAGE_TEXT = ("return ['info', 'chart', 'log', 'now', 'table']"
             ".map((id) => document.getElementById(id).innerText).join('\\n')")


def chart_values(driver: WebDriver) -> dict[str, list[str]]:
    """Each side's values in the match chart, by the API's side name."""
    values: dict[str, list[str]] = driver.execute_script(CHART_VALUES)
    return values


def trick_count(audit: RefereeClient, hand_id: str) -> int:
    """The tricks a finished hand had: those that ended (won in 五十K and 升级; in 斗地主 a
    round ends when two seats pass) and, in 斗地主, the last round, which the hand's end cuts
    short (plays after the last trick that ended)."""
    events = [e.name for e in audit.all_hand_events(hand_id)]
    ends = [i for i, name in enumerate(events) if name.endswith((".trick_won", ".trick_ended"))]
    after = ends[-1] if ends else -1
    return len(ends) + any(name.endswith(".cards_played") for name in events[after + 1:])


# API ids and shorthands that are not people's words on the page, but where a game's own words
# use them: 斗地主's players speak of its multiplier as "× 3" (docs/doudizhu.md#scoring).
LEAKS = {"team:", "seat:", "no trump", "kitty bonus", "×", "outcome", "undefined", "null"}
GAME_WORDS = {"doudizhu": {"×"}}


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_chart_and_the_trick_list_hold_only_what_happened_by_the_version_shown(
        site: Site, browser: WebDriver, game: str) -> None:
    hand = site.hand(game)
    audit = site.server.audit()
    tricks = [f"trick {n}" for n in range(1, trick_count(audit, hand.hand_id) + 1)]
    open_hand(browser, site, hand.hand_id, 1)
    # The table's only hand has not ended at its first version: no result in the chart yet.
    assert chart_values(browser) == {}
    # Every trick of the hand to jump to, and none that it did not have.
    assert browser.execute_script(TRICK_OPTIONS) == tricks
    go_to_version(browser, hand.last_version)
    assert browser.execute_script(TRICK_OPTIONS) == tricks
    assert all(len(values) == 1 for values in chart_values(browser).values())
    # People's words, not the API's ids and shorthands.
    text = browser.execute_script(PAGE_TEXT)
    for leak in LEAKS - GAME_WORDS.get(game, set()):
        assert leak not in text, f"{leak!r} in the page: {text}"
    # No empty column: ratings only where the rules rate a hand.
    cells = browser.execute_script(
        "return [...document.querySelectorAll('.scores td')].map((td) => td.textContent)")
    assert all(cell.strip() for cell in cells), f"an empty cell in the result: {cells}"


def test_two_sides_with_equal_totals_both_show_in_the_chart(
        site: Site, browser: WebDriver) -> None:
    request = urllib.request.Request(f"{site.web}/api/hands/{site.shengji.hand_id}",
                                     headers={"X-Fiftyk-Audit-Key": DEV_AUDIT_KEY})
    with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as answer:
        document = json.loads(answer.read())
    ended = document["events"][-1]["shengji_hand_ended"]
    ended["levels_after"] = [ended["levels_after"][0]] * 2  # both teams at one level
    browser.get(f"{site.web}/")
    browser.execute_script("FK.app.loadJson(arguments[0], 'equal levels')", document)
    wait_for(browser, "return document.body.classList.contains('loaded')")
    browser.find_element(By.ID, "last").click()
    wait_for(browser, "return document.querySelectorAll('#chart polyline').length === 2")
    values = chart_values(browser)
    assert values["team:0"] == values["team:1"]
    first, second = browser.execute_script(CHART_POINTS)
    assert first != second, "one series is drawn over the other"
    legend = browser.find_element(By.CSS_SELECTOR, "#chart .legend").text
    assert "team 0+2" in legend and "team 1+3" in legend


# -- a deep link, with the audit key entered after opening it -------------------------------


def test_a_deep_link_keeps_its_moment_when_the_key_comes_after_it(
        site: Site, browser: WebDriver) -> None:
    hand = site.fiftyk
    version = hand.last_version // 2
    browser.get(f"{site.web}/#hand={hand.hand_id}&v={version}")
    wait_for(browser, "return document.getElementById('status').classList.contains('error')")
    browser.find_element(By.ID, "audit-key").send_keys(DEV_AUDIT_KEY)
    browser.find_element(By.CSS_SELECTOR, "#hand-form button").click()
    wait_for(browser, "return document.body.classList.contains('loaded')")
    assert read(browser)["version"] == version
    assert browser.current_url.endswith(f"#hand={hand.hand_id}&v={version}")


# -- a spectator refused for too many streams is told so --------------------------------------


def test_a_spectator_over_the_stream_limit_is_told_the_limit_not_blamed_for_the_token(
        site: Site, browser: WebDriver) -> None:
    platform = site.server.platform()
    table_id = platform.create_table("classic", 4).table.table_id
    token = platform.issue_spectator_token(table_id).spectator_token
    port = site.server.running.web_port
    assert port is not None
    held = [SseClient(port, f"/api/tables/{table_id}/watch?token={token}")
            for _ in range(site.server.config.watches.seat)]
    try:
        for stream in held:
            assert stream.status == 200
            stream.first_event()
        browser.get(f"{site.web}/#watch={table_id}&token={token}")
        refusal = wait_for(browser, "return document.getElementById('status').dataset.refusal")
        assert "watch streams are open" in refusal and "too many streams" in refusal
        assert "token for this table" not in browser.find_element(By.ID, "status").text
    finally:
        for stream in held:
            stream.close()
    # A token that is not one is still blamed (once the page has forgotten the good one).
    browser.execute_script("sessionStorage.clear()")
    browser.get(f"{site.web}/#watch={table_id}&token=not-a-token")
    browser.refresh()
    refusal = wait_for(browser, "return document.getElementById('status').dataset.refusal")
    assert "refused the token" in refusal
