"""斗地主 at the web table in a real browser (Debian's chromium): a stored hand is drawn as
the referee stored it — the 底牌 face down until the landlord shows them, the landlord
marked, bombs and the multiplier on the table — each perspective sees only what it may, and
a live table followed as a spectator never shows a hidden card and checks its deal."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.support.ui import Select, WebDriverWait

from fiftyk_referee.domain.deal import deal_order
from fiftyk_referee.service.games.doudizhu.text import payload, state_of
from fiftyk_referee.service.grpc.client import RefereeClient
from fiftyk_referee.service.ops.config import DEV_AUDIT_KEY
from tests.e2e import test_doudizhu
from tests.e2e.harness import LiveServer, Seated, server_config
from tests.support.browser import chromium

pytestmark = pytest.mark.browser

WAIT_SECONDS = 60
KEY_STORE = "fiftyk.auditKey"
GAME = "doudizhu"
RANKS = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
# The spring of docs/doudizhu.md#scoring: seat 0 bids 3, plays a 12-card straight, a bomb of
# 2s, the rocket and a pair of aces while both farmers pass.
LANDLORD = [f"{rank}S" for rank in RANKS] + ["AS", "2S", "2H", "2C", "2D", "SJ"]
FARMER_1 = [f"{rank}H" for rank in RANKS] + ["3C", "4C", "5C", "6C", "7C", "8C"]
FARMER_2 = ["9C", "10C", "JC", "QC", "KC", *(f"{rank}D" for rank in RANKS), "AD"]
KITTY = ["AH", "AC", "BJ"]
FIRST_DEALER = 2  # a table's first hand is dealt by its last seat
PLAYS = [[f"{rank}S" for rank in RANKS] + ["AS"], ["2S", "2H", "2C", "2D"], ["SJ", "BJ"],
         ["AH", "AC"]]
# Versions of the scripted hand: 1 the deal, 2 the bid, 3 the landlord, 4 the straight,
# 5-6 passes, 7 the round's end, 8 the bomb, ..., 12 the rocket, ..., 16 the last play.
DEALT, LANDLORD_CHOSEN, BOMB, ROCKET = 1, 3, 8, 12


def preset_deck() -> list[str]:
    """The deck in dealing order that deals the scripted hands (the last 3: the 底牌)."""
    hands = [iter(LANDLORD), iter(FARMER_1), iter(FARMER_2)]
    order = deal_order(3, FIRST_DEALER, 51)
    return [next(hands[seat]) for seat in order] + KITTY


@dataclass
class Site:
    """The server with its web port, and the scripted hand, finished."""

    server: LiveServer
    web: str
    hand_id: str
    last_version: int
    dealt_hand_id: str  # a shuffled hand bots played to its end (a seed to check)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    server = LiveServer(server_config(tmp_path_factory.mktemp("ddz-web"), web_port=0))
    try:
        platform = server.platform()
        table_id = platform.create_table("classic", 3, game=GAME,
                                         allow_preset_deck=True).table.table_id
        seats = [server.client(token=platform.join_table(table_id, f"web-{s}", s).seat_token)
                 for s in range(3)]
        view = platform.start_hand(table_id, deck=preset_deck()).hand
        hand_id = view.hand_id
        assert view.turn_seat == 0 and view.dealer == FIRST_DEALER
        seats[0].act(table_id, hand_id, "bid", value="3")
        for cards in PLAYS:
            view = seats[0].act(table_id, hand_id, "play", cards).hand
            if view.status != test_doudizhu.COMPLETED:
                seats[1].act(table_id, hand_id, "pass")
                seats[2].act(table_id, hand_id, "pass")
        assert state_of(view).result.multiplier.total == 24
        table = test_doudizhu.doudizhu_table(server, "douzero", prefix="web-shuffled")
        shuffled = test_doudizhu.play_out(table, table.platform.start_hand(table.table_id).hand,
                                          random.Random(23))
        yield Site(server, f"http://127.0.0.1:{server.running.web_port}", hand_id,
                   view.version, shuffled.hand_id)
    finally:
        server.stop()


@pytest.fixture()
def browser() -> Iterator[WebDriver]:
    with chromium() as driver:
        yield driver


READ = """
const attr = (selector, key) => {
  const node = document.querySelector(selector);
  return node ? node.dataset[key] : null;
};
const cards = (selector) => [...document.querySelectorAll(selector)].map((c) => c.dataset.card);
const seats = {};
for (const s of document.querySelectorAll('#table .seat')) {
  seats[s.dataset.seat] = {
    cards: [...s.querySelectorAll('.hand .card[data-card]')].map((c) => c.dataset.card),
    hidden: [...s.querySelectorAll('.hand .card[data-hidden-count]')]
      .reduce((n, c) => n + Number(c.dataset.hiddenCount), 0),
    landlord: Boolean(s.querySelector('[data-landlord="true"]')),
    role: s.querySelector('.seat-inner').dataset.role,
  };
}
return {
  version: Number(document.getElementById('version').dataset.version),
  seats,
  kittyShown: attr('#info .kitty', 'shown'),
  kitty: cards('#info .kitty .card[data-card]'),
  kittyHidden: Number(attr('#info .kitty .card[data-hidden-count]', 'hiddenCount') || 0),
  landlord: attr('#info .landlord', 'landlord'),
  multiplier: attr('#info .multiplier', 'multiplier'),
  bombs: Number(attr('#info .bombs', 'bombs') || 0),
  result: (document.querySelector('#info .result') || {}).textContent || '',
};
"""


def wait_for(driver: WebDriver, script: str) -> Any:
    return WebDriverWait(driver, WAIT_SECONDS).until(lambda d: d.execute_script(script))


def open_hand(driver: WebDriver, site: Site, version: int, perspective: str = "all"
              ) -> dict[str, Any]:
    """The page on the stored hand at a version, seen from a perspective."""
    driver.get(f"{site.web}/")
    driver.execute_script(f"sessionStorage.setItem('{KEY_STORE}', '{DEV_AUDIT_KEY}')")
    driver.get(f"{site.web}/#hand={site.hand_id}&v={version}")
    driver.refresh()
    wait_for(driver, f"return document.getElementById('version').dataset.version == '{version}'")
    if perspective != "all":
        Select(driver.find_element(By.ID, "perspective")).select_by_value(perspective)
        wait_for(driver, "return document.getElementById('perspective').value == "
                         f"'{perspective}'")
    drawn: dict[str, Any] = driver.execute_script(READ)
    return drawn


def test_the_kitty_is_shown_after_the_bidding_with_the_landlord_and_the_multiplier(
        site: Site, browser: WebDriver) -> None:
    dealt = open_hand(browser, site, DEALT, "public")
    assert dealt["kittyShown"] == "false" and not dealt["kitty"] and dealt["kittyHidden"] == 3
    assert dealt["landlord"] == "" and dealt["multiplier"] == ""
    assert not any(seat["landlord"] for seat in dealt["seats"].values())
    assert [dealt["seats"][s]["hidden"] for s in "012"] == [17, 17, 17]
    chosen = open_hand(browser, site, LANDLORD_CHOSEN, "public")
    assert chosen["kittyShown"] == "true" and Counter(chosen["kitty"]) == Counter(KITTY)
    assert chosen["landlord"] == "0" and chosen["multiplier"] == "3"
    assert [chosen["seats"][s]["landlord"] for s in "012"] == [True, False, False]
    assert [chosen["seats"][s]["role"] for s in "012"] == ["landlord", "farmer", "farmer"]
    assert chosen["seats"]["0"]["hidden"] == 20 and not chosen["seats"]["0"]["cards"]
    after_bomb = open_hand(browser, site, BOMB, "public")
    assert (after_bomb["multiplier"], after_bomb["bombs"]) == ("6", 1)
    after_rocket = open_hand(browser, site, ROCKET, "public")
    assert (after_rocket["multiplier"], after_rocket["bombs"]) == ("12", 2)
    final = open_hand(browser, site, site.last_version, "public")
    assert final["multiplier"] == "24" and "the landlord (seat 0) wins" in final["result"]
    assert "spring" in final["result"]
    chart = wait_for(browser, CHART_VALUES + " || null")
    assert chart == {"seat:0": ["48"], "seat:1": ["-24"], "seat:2": ["-24"]}


CHART_VALUES = ("return Object.fromEntries([...document.querySelectorAll('#chart polyline')]"
                ".map((p) => [p.dataset.side, p.dataset.values.split(' ')]))")


def test_each_perspective_sees_only_what_it_may(site: Site, browser: WebDriver) -> None:
    everything = open_hand(browser, site, DEALT)  # the audit role: every hand and the 底牌
    assert Counter(everything["seats"]["0"]["cards"]) == Counter(LANDLORD)
    assert Counter(everything["kitty"]) == Counter(KITTY)
    seat_1 = open_hand(browser, site, DEALT, "1")
    assert Counter(seat_1["seats"]["1"]["cards"]) == Counter(FARMER_1)
    assert not seat_1["seats"]["0"]["cards"] and not seat_1["seats"]["2"]["cards"]
    assert not seat_1["kitty"] and seat_1["kittyHidden"] == 3
    landlord = open_hand(browser, site, LANDLORD_CHOSEN, "0")
    assert Counter(landlord["seats"]["0"]["cards"]) == Counter(LANDLORD + KITTY)


HELD = "return document.querySelectorAll('#table .seat .hand .card[data-card]').length"
SHOWN = ("return [...document.querySelectorAll('#table [data-card], #info [data-card]')]"
         ".map((c) => c.dataset.card)")


def public_cards(audit: RefereeClient, hand_id: str) -> Counter[str]:
    """Every card face up so far: the plays, and the 底牌 once shown."""
    shown: Counter[str] = Counter()
    for event in audit.all_hand_events(hand_id):
        message = payload(event)
        if event.name == f"{GAME}.cards_played":
            shown.update(message.cards)  # type: ignore[attr-defined]
        elif event.name == f"{GAME}.landlord_chosen":
            shown.update(message.kitty)  # type: ignore[attr-defined]
    return shown


def test_a_live_table_followed_as_a_spectator_never_shows_a_hidden_card(
        site: Site, browser: WebDriver) -> None:
    server = site.server
    table: Seated = test_doudizhu.doudizhu_table(server, "rob", prefix="live")
    token = table.platform.issue_spectator_token(table.table_id).spectator_token
    browser.get(f"{site.web}/#watch={table.table_id}&token={token}")
    wait_for(browser, "return document.body.classList.contains('live')")
    audit = server.audit()
    outcome: dict[str, Any] = {}

    def bots() -> None:
        try:
            view = table.platform.start_hand(table.table_id).hand
            outcome["final"] = test_doudizhu.play_out(table, view, random.Random(17))
        except BaseException as error:  # reported below
            outcome["error"] = error

    playing = threading.Thread(target=bots, daemon=True)
    playing.start()
    polls = 0
    while playing.is_alive() or not polls:
        assert browser.execute_script(HELD) == 0  # no seat's cards
        # One pack: every card is one of a kind (a bomb shows in the round and in the list
        # of bombs: the same face-up cards twice).
        shown = set(browser.execute_script(SHOWN))
        hand_id = browser.execute_script("return FK.app.view.doc && FK.app.view.doc.hand_id")
        if hand_id and not outcome.get("final"):
            face_up = set(public_cards(audit, hand_id))
            assert not shown - face_up, f"hidden cards in the page: {shown - face_up}"
        polls += 1
    playing.join()
    assert "error" not in outcome, outcome.get("error")
    wait_for(browser, "return [...document.querySelectorAll('#log li')].some("
                      "(li) => li.textContent.includes('hand over'))")
    drawn = browser.execute_script(READ)
    assert drawn["kittyShown"] == ("true" if state_of(outcome["final"]).HasField("landlord")
                                   else "false")
    fair = wait_for(browser, "const f = document.querySelector('#fairness [data-fair]');"
                             " return f && f.dataset.fair !== 'unknown' ? f.dataset.fair : null;")
    assert fair == "yes"  # the seed is revealed: a spectator checks the deal too


FAIR = ("const f = document.querySelector('#fairness [data-fair]');"
        " return f && f.dataset.fair !== 'unknown' ? f.dataset.fair : null;")


def _final_drawn_as_stored(driver: WebDriver, site: Site) -> None:
    """At its last event the page shows every seat's cards as the referee stored them."""
    driver.find_element(By.ID, "last").click()
    audit = site.server.audit()
    events = audit.all_hand_events(site.dealt_hand_id)
    final = audit.hand_at(site.dealt_hand_id, events[-1].aggregate_version)
    wait_for(driver, f"return document.getElementById('version').dataset.version == "
                     f"'{final.version}'")
    drawn = driver.execute_script(READ)
    for state in final.seats:
        assert Counter(drawn["seats"][str(state.seat)]["cards"]) == Counter(state.cards)
    assert drawn["multiplier"] == str(state_of(final).result.multiplier.total) or (
        state_of(final).result.redeal)


def test_a_transcript_file_replays_and_its_deal_checks_out(
        site: Site, browser: WebDriver, tmp_path: Path) -> None:
    transcript = site.server.audit().export_transcript(site.dealt_hand_id)
    path = tmp_path / "transcript.json"
    path.write_text(json.dumps(transcript))
    browser.get(f"{site.web}/")
    browser.find_element(By.ID, "file").send_keys(str(path.resolve()))
    wait_for(browser, "return document.body.classList.contains('loaded')")
    _final_drawn_as_stored(browser, site)
    assert wait_for(browser, FAIR) == "yes"


def test_replay_html_writes_an_offline_page_that_draws_the_hand(
        site: Site, browser: WebDriver, tmp_path: Path) -> None:
    out = tmp_path / "hand.html"
    done = subprocess.run(
        [sys.executable, "-m", "fiftyk_referee.service.cli", "replay", site.dealt_hand_id,
         "--server", site.server.target, "--html", str(out)],
        capture_output=True, text=True, check=False, timeout=WAIT_SECONDS,
        env={**os.environ, "FIFTYK_AUDIT_KEY": DEV_AUDIT_KEY})
    assert done.returncode == 0, done.stderr
    html = out.read_text(encoding="utf-8")
    assert 'FK.registerGame("doudizhu"' in html
    assert "https://" not in html
    browser.get(out.resolve().as_uri())
    wait_for(browser, "return document.body.classList.contains('loaded')")
    _final_drawn_as_stored(browser, site)
    assert wait_for(browser, FAIR) == "yes"
