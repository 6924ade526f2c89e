"""The rules oracle `fiftyk rules ask` (docs/oracle.md): its examples, every kind, every refusal.

Answers are checked against the rules as docs/rules.md and docs/shengji.md state them (the
sections below name the rule each group checks), not against the code that produces them.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fiftyk_referee.domain.doudizhu.oracle import DOUDIZHU_KINDS
from fiftyk_referee.domain.fiftyk.oracle import FIFTYK_KINDS
from fiftyk_referee.domain.shengji.oracle import SHENGJI_KINDS
from fiftyk_referee.service.cli import oracle
from fiftyk_referee.service.cli.main import main

REPO = Path(__file__).resolve().parents[2]

# The examples of the oracle's contract as the team received it (ORACLE.md, "The rules oracle:
# `fiftyk rules ask`"), copied verbatim: that contract is not part of the repository. When a
# copy of the shared folder sits beside the checkout,
# `test_the_copied_examples_are_those_of_oracle_md` checks that this text still says what the
# contract says.
ORACLE_EXAMPLES = """\
```sh
echo '{"game":"shengji","kind":"classify","preset":"tractor","options":{},
       "input":{"level":"10","trump":"H","cards":["KS","KS","QS","QS"]}}' | fiftyk rules ask
{"type": "tractor", "components": [["KS","KS","QS","QS"]]}
```

```json
{"game":"shengji","kind":"suit","preset":"tractor","options":{"permanent_two":true},"input":{"level":"10","trump":"H","card":"2S"}}
"trump"
{"game":"shengji","kind":"level_change","preset":"tractor","options":{},"input":{"attacker_points":0}}
{"side": "dealer", "levels": 3}
{"game":"shengji","kind":"bury","preset":"tractor","options":{},"input":{"kitty_size":8,"cards":["3C","4C","5C","6C","7C","8C","9C"]}}
"WRONG_BURY_COUNT"
```
"""
SH_EXAMPLE = re.compile(r"```sh\necho '(.*?)' \| fiftyk rules ask\n(.*?)\n```", re.DOTALL)
JSON_EXAMPLES = re.compile(r"```json\n(.*?)```", re.DOTALL)

GAME_KINDS: dict[str, Any] = {"fiftyk": FIFTYK_KINDS, "shengji": SHENGJI_KINDS,
                             "doudizhu": DOUDIZHU_KINDS}


def examples_of(text: str) -> list[tuple[Any, Any]]:
    """(question, answer) pairs of the oracle page's examples: the shell one, then the list."""
    pairs = []
    for question, answer in SH_EXAMPLE.findall(text):
        pairs.append((json.loads(question), json.loads(answer)))
    for block in JSON_EXAMPLES.findall(text):
        lines = [json.loads(line) for line in block.splitlines() if line.strip()]
        if not any(isinstance(line, dict) and "kind" in line for line in lines):
            continue  # a block of plain JSON, not questions
        pairs += list(zip(lines[::2], lines[1::2], strict=True))
    return pairs


def shared_oracle_md() -> Path | None:
    """ORACLE.md in a shared folder beside the checkout (CI) or beside its parent (worktrees)."""
    for folder in (REPO.parent / "shared", REPO.parent.parent / "shared"):
        if (folder / "ORACLE.md").is_file():
            return folder / "ORACLE.md"
    return None


def ask(kind: str, given_input: dict[str, Any], preset: str = "tractor",
        options: dict[str, Any] | None = None, game: str | None = "shengji") -> Any:
    """The oracle's answer to one question, through a line of text as a client sends it."""
    question: dict[str, Any] = {"kind": kind, "preset": preset, "options": options or {},
                                "input": given_input}
    if game is not None:
        question["game"] = game
    return json.loads(oracle.encode(oracle.answer_line(json.dumps(question).encode())))


def hearts(**fields: Any) -> dict[str, Any]:
    """An input at level 10, hearts trump (the seed's examples)."""
    return {"level": "10", "trump": "H", **fields}


def cards(text: str) -> list[str]:
    """Card tokens from a space-separated string."""
    return text.split()


# -- the examples of the oracle's contract ----------------------------------------------------


EXAMPLES = examples_of(ORACLE_EXAMPLES)


def test_the_example_text_holds_four_examples() -> None:
    assert [q["kind"] for q, _ in EXAMPLES] == ["classify", "suit", "level_change", "bury"]


@pytest.mark.parametrize(("question", "expected"), EXAMPLES,
                         ids=[q["kind"] for q, _ in EXAMPLES])
def test_every_oracle_md_example_answers_as_written(question: Any, expected: Any) -> None:
    assert oracle.answer(question) == expected


def test_the_copied_examples_are_those_of_oracle_md() -> None:
    path = shared_oracle_md()
    if path is None:
        pytest.skip("no shared/ folder beside this checkout")
    assert examples_of(path.read_text(encoding="utf-8")) == EXAMPLES


DOC_EXAMPLES = examples_of((REPO / "docs" / "oracle.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("question", "expected"), DOC_EXAMPLES,
                         ids=[f"{q.get('game', 'fiftyk')}-{q['kind']}" for q, _ in DOC_EXAMPLES])
def test_every_example_of_docs_oracle_md_answers_as_written(question: Any, expected: Any) -> None:
    assert oracle.answer(question) == expected


def test_docs_oracle_md_shows_every_kind_of_every_game() -> None:
    shown = {(q.get("game") or "fiftyk", q["kind"]) for q, _ in DOC_EXAMPLES}
    every = {(game, kind) for game, kinds in GAME_KINDS.items() for kind in kinds}
    assert every <= shown


# -- 五十K (docs/rules.md#combinations, docs/rules.md#who-beats-what) ---------------------


@pytest.mark.parametrize(
    ("preset", "options", "hand", "expected"),
    [
        ("classic", {}, "5H 10H KH", {"type": "pure_fifty_k", "points": 25}),
        ("classic", {}, "7S 3H 5C 4D 6S", {"type": "straight", "points": 5}),
        ("jiaodong", {}, "BJ SJ", {"type": "pair", "points": 20}),
        ("jiaodong", {"joker_points": False}, "BJ SJ", {"type": "pair", "points": 0}),
        ("jinzhou", {}, "KS KH KC", {"type": "bomb", "points": 30}),
        ("classic", {}, "3S 4S", {"type": "INVALID_COMBINATION"}),
        ("classic", {}, "", {"type": "INVALID_COMBINATION"}),
    ],
)
def test_fiftyk_classify_names_the_combination_and_its_points(
        preset: str, options: dict[str, Any], hand: str, expected: Any) -> None:
    assert ask("classify", {"cards": cards(hand)}, preset, options, game="fiftyk") == expected


def test_an_absent_game_is_fiftyk() -> None:
    assert ask("classify", {"cards": ["5H", "10H", "KH"]}, "classic", game=None) == \
        {"type": "pure_fifty_k", "points": 25}


@pytest.mark.parametrize(
    ("preset", "options", "top", "play", "beats"),
    [
        ("classic", {}, "9S 9H 9C 9D", "SJ SJ BJ", True),
        ("jinzhou", {}, "3S 3H 4S 4H 5S 5H", "9S 9H 9C", False),
        ("jinzhou", {"bomb_reach": "standard"}, "3S 3H 4S 4H 5S 5H", "9S 9H 9C", True),
        ("classic", {}, "4S", "4H", False),
        ("jiaodong", {}, "2S", "3D", True),
        ("jinzhou", {}, "5D 10D KD", "5S 10S KS", True),
        ("classic", {}, "5D 10D KD", "5S 10S KS", False),
    ],
)
def test_fiftyk_beats_rules_on_the_play(preset: str, options: dict[str, Any], top: str,
                                        play: str, beats: bool) -> None:
    assert ask("beats", {"top": cards(top), "play": cards(play)}, preset, options,
               game="fiftyk") == {"beats": beats}


def test_fiftyk_an_invalid_play_does_not_beat_and_says_why() -> None:
    assert ask("beats", {"top": ["3S"], "play": ["5S", "6S"]}, "classic", game="fiftyk") == \
        {"beats": False, "reason": "INVALID_COMBINATION"}


def test_fiftyk_a_top_that_is_no_combination_is_not_a_question() -> None:
    answer = ask("beats", {"top": ["3S", "4S"], "play": ["5S"]}, "classic", game="fiftyk")
    assert answer["error"] == "INVALID_COMBINATION"
    assert answer["message"].startswith("input.top")


# -- Shengji: suit and order (docs/shengji.md#teams-levels-and-trump) ------------------------


@pytest.mark.parametrize(
    ("preset", "trump", "card", "expected"),
    [
        ("tractor", "H", "10S", "trump"),
        ("tractor", "H", "AH", "trump"),
        ("tractor", "H", "AS", "S"),
        ("tractor", "H", "2S", "S"),
        ("tractor_changzhu", "H", "2S", "trump"),
        ("tractor", None, "10D", "trump"),
        ("tractor", None, "KD", "D"),
        ("tractor", None, "SJ", "trump"),
        ("tractor", "H", "bj", "trump"),
    ],
)
def test_suit_is_trump_or_the_plain_suit(preset: str, trump: str | None, card: str,
                                         expected: str) -> None:
    assert ask("suit", {"level": "10", "trump": trump, "card": card}, preset) == expected


HEART_TRUMPS = "BJ SJ 10H 10S 10C 10D AH KH QH JH 9H 8H 7H 6H 5H 4H 3H 2H"


def test_order_of_the_seed_trumps_at_level_ten_hearts() -> None:
    answer = ask("order", hearts(cards=cards(HEART_TRUMPS)))
    assert answer == [["BJ"], ["SJ"], ["10H"], ["10S", "10C", "10D"], ["AH"], ["KH"], ["QH"],
                      ["JH"], ["9H"], ["8H"], ["7H"], ["6H"], ["5H"], ["4H"], ["3H"], ["2H"]]


def test_order_with_permanent_twos_puts_them_between_the_tens_and_the_ace() -> None:
    answer = ask("order", hearts(cards=cards("AH 2S 2H 10D 10H SJ BJ 3H 2C")),
                 "tractor_changzhu")
    assert answer == [["BJ"], ["SJ"], ["10H"], ["10D"], ["2H"], ["2S", "2C"], ["AH"], ["3H"]]


def test_order_of_a_plain_suit_skips_the_level_and_keeps_copies() -> None:
    assert ask("order", hearts(cards=cards("2C AC 9C JC JC"))) == \
        [["AC"], ["JC", "JC"], ["9C"], ["2C"]]


def test_order_of_two_suit_groups_is_not_a_question() -> None:
    assert ask("order", hearts(cards=["AS", "AH"]))["error"] == "INVALID_COMBINATION"


# -- Shengji: classify (docs/shengji.md#combinations) ----------------------------------------

SEED_TRACTORS = ["KS KS QS QS", "JS JS 9S 9S", "5S 5S 4S 4S 3S 3S", "SJ SJ 10H 10H",
                 "10H 10H 10S 10S", "10S 10S AH AH", "10H 10H 10S 10S AH AH"]
SEED_NOT_TRACTORS = ["5S 5S 4S", "5S 4S 4S", "5S 5S 3S 3S", "JS JS QS", "10S 10S 10C 10C",
                     "AS AS 2S 2S"]


@pytest.mark.parametrize("hand", SEED_TRACTORS)
def test_the_seed_tractors_are_tractors(hand: str) -> None:
    answer = ask("classify", hearts(cards=cards(hand)))
    assert answer["type"] == "tractor"
    assert [sorted(c) for c in answer["components"]] == [sorted(cards(hand))]


@pytest.mark.parametrize("hand", SEED_NOT_TRACTORS)
def test_the_seed_non_tractors_are_not(hand: str) -> None:
    assert ask("classify", hearts(cards=cards(hand)))["type"] == "throw"


def test_changzhu_two_sits_next_to_the_trump_ace() -> None:
    assert ask("classify", hearts(cards=cards("2S 2S AH AH")), "tractor_changzhu")["type"] == \
        "tractor"
    assert ask("classify", hearts(cards=cards("10S 10S AH AH")),
               "tractor_changzhu")["type"] == "throw"


@pytest.mark.parametrize("hand", ["3S 3S 3S 4S 4S 4S", "4S 4S 4S 6S 6S 6S",
                                  "5H 5H 5H 5S 5S 5S", "BJ BJ BJ SJ SJ SJ",
                                  "AS AS AS 5H 5H 5H", "5S 5S 5S SJ SJ SJ"])
def test_the_seed_titanics_at_level_five_spades(hand: str) -> None:
    answer = ask("classify", {"level": "5", "trump": "S", "cards": cards(hand)}, "titanic")
    assert answer["type"] == "titanic"


@pytest.mark.parametrize(("hand", "expected"), [
    ("7S", {"type": "single", "components": [["7S"]]}),
    ("7S 7S", {"type": "pair", "components": [["7S", "7S"]]}),
    ("AS KS", {"type": "throw", "components": [["AS"], ["KS"]]}),
    ("AS QS QS", {"type": "throw", "components": [["QS", "QS"], ["AS"]]}),
    ("AS 7H", {"type": "INVALID_COMBINATION"}),
])
def test_classify_gives_type_and_components(hand: str, expected: Any) -> None:
    assert ask("classify", hearts(cards=cards(hand))) == expected


def test_a_throw_is_read_triple_first_and_copies_are_never_split() -> None:
    answer = ask("classify", {"level": "5", "trump": "S", "cards": cards("7C 7C 7C 8C 8C")},
                 "titanic")
    assert answer == {"type": "throw", "components": [["7C", "7C", "7C"], ["8C", "8C"]]}


# -- Shengji: follow (docs/shengji.md#following) ---------------------------------------------


@pytest.mark.parametrize(("lead", "hand", "play", "expected"), [
    ("AC AC", "3C 3C 5C", "3C 3C", "legal"),
    ("AC AC", "3C 3C 5C", "3C 5C", "MUST_FOLLOW_PAIR"),
    ("AC AC", "3C 3C 5C", "3C", "WRONG_CARD_COUNT"),
    ("AC AC", "3C 3C 5C 6D", "3C 6D", "MUST_FOLLOW_SUIT"),
    ("AC AC", "3C 4D 5D 6D", "3C 4D", "legal"),
    ("AC AC", "3C 4D 5D 6D", "4D 5D", "MUST_FOLLOW_SUIT"),
    ("AC AC", "4D 5D 6D", "4D 5D", "legal"),
    ("3C 3C 4C 4C", "7C 7C 8C 8C 9C 9C JC", "7C 7C 9C 9C", "MUST_FOLLOW_TRACTOR"),
    ("3C 3C 4C 4C", "7C 7C 8C 8C 9C 9C JC", "8C 8C 9C 9C", "legal"),
    ("3C 3C 4C 4C", "7C 7C JC JC 9C 2C", "7C 7C 9C 2C", "MUST_FOLLOW_PAIR"),
    ("AC AC", "3C 5C 6C", "3C 3C", "CARDS_NOT_IN_HAND"),
])
def test_follow_answers_legal_or_the_first_failing_check(lead: str, hand: str, play: str,
                                                         expected: str) -> None:
    answer = ask("follow", hearts(lead=cards(lead), hand=cards(hand), play=cards(play)))
    assert answer == expected


def test_a_triple_led_owes_a_triple() -> None:
    answer = ask("follow", {"level": "5", "trump": "S", "lead": cards("3C 3C 3C"),
                            "hand": cards("7C 7C 7C 8C 8C"), "play": cards("7C 8C 8C")},
                 "titanic")
    assert answer == "MUST_FOLLOW_TRIPLE"


@pytest.mark.parametrize(("preset", "lead", "hand", "play", "expected"), [
    # Two runs through the off-suit 10s (AH-10S, 10C-10H) fill the four-pair tractor.
    ("tractor", "3H 3H 4H 4H 5H 5H 6H 6H", "AH AH 10S 10S 10C 10C 10H 10H 8H 8H 2C 3D",
     "AH AH 10S 10S 10H 10H 8H 8H", "MUST_FOLLOW_TRACTOR"),
    ("tractor", "3H 3H 4H 4H 5H 5H 6H 6H", "AH AH 10S 10S 10C 10C 10H 10H 8H 8H 2C 3D",
     "AH AH 10S 10S 10C 10C 10H 10H", "legal"),
    # AH-10C runs into the tractor and keeps the triple 10S for the triple slot.
    ("titanic", "10D 10D 10H 10H SJ SJ SJ", "AH AH AH 10C 10C 10S 10S 10S 5H 3C 4D",
     "AH AH 10S 10S 10C 10C 5H", "MUST_FOLLOW_TRIPLE"),
    ("titanic", "10D 10D 10H 10H SJ SJ SJ", "AH AH AH 10C 10C 10S 10S 10S 5H 3C 4D",
     "AH AH 10C 10C 10S 10S 10S", "legal"),
])
def test_follow_duties_are_the_best_over_every_reading_of_the_runs(
        preset: str, lead: str, hand: str, play: str, expected: str) -> None:
    answer = ask("follow", hearts(lead=cards(lead), hand=cards(hand), play=cards(play)), preset)
    assert answer == expected


def test_a_lead_of_two_suit_groups_is_not_a_standing_lead() -> None:
    answer = ask("follow", hearts(lead=["AC", "AS"], hand=["3C", "4C"], play=["3C", "4C"]))
    assert answer["error"] == "INVALID_COMBINATION"
    assert answer["message"].startswith("input.lead")


# -- Shengji: trick (docs/shengji.md#winning-a-trick) ----------------------------------------


@pytest.mark.parametrize(("plays", "winner"), [
    (["5C 4C 4C", "9H 7H 7H", "8H 8H 4H", "3C 3D 3S"], 2),  # 毙 then 盖毙 on a pair key
    (["5C 6C 7C", "9H 7H 7H", "8H 8H 4H", "3C 3D 3S"], 1),  # a single key: 8 < 9
    (["AC KC 5C 5C 4C 4C", "9H 9H 8H 8H 7H 2H", "3C 3C 6C 7C 8C 9C", "3D 3D 4D 4D 6D 7D"], 1),
    (["AC AC 5C 5C 4C 4C", "9H 9H 8H 8H 7H 2H", "3C 3C 6C 7C 8C 9C", "3D 3D 4D 4D 6D 7D"], 0),
    (["3C", "AC", "AC", "KC"], 1),  # equal cards: the first played wins
    (["3C", "4C", "5H", "SJ"], 3),
    (["3C", "4C", "5D", "6S"], 1),  # discards never win
    (["3H", "4C", "5D", "6S"], 0),
])
def test_trick_names_the_winning_play(plays: list[str], winner: int) -> None:
    assert ask("trick", hearts(plays=[cards(p) for p in plays])) == winner


def test_trick_plays_of_another_size_than_the_lead_are_not_legal_plays() -> None:
    answer = ask("trick", hearts(plays=[["3C"], ["4C"], ["5C", "6C"], ["7C"]]))
    assert answer["error"] == "INVALID_REQUEST"
    assert answer["message"] == ("input.plays[2] has 2 cards; a legal follow has the lead's 1")


# -- Shengji: throw (docs/shengji.md#leading-and-throwing) -----------------------------------

THROW_98844 = cards("9C 8C 8C 4C 4C")


@pytest.mark.parametrize(("others", "expected"), [
    ([["JC"], [], ["2S"]], {"valid": False, "forced": ["9C"]}),
    ([[], ["QC", "QC"], []], {"valid": False, "forced": ["4C", "4C"]}),
    ([["5C", "5C"], [], []], {"valid": False, "forced": ["4C", "4C"]}),
    ([["3C", "3C", "6C"], ["2C"], ["AS", "AS"]], {"valid": True}),
    ([["9C"], [], []], {"valid": True}),  # equal is not higher
])
def test_the_seed_throw_98844(others: list[list[str]], expected: Any) -> None:
    assert ask("throw", hearts(lead=THROW_98844, others=others)) == expected


def test_one_component_is_never_a_failed_throw() -> None:
    assert ask("throw", hearts(lead=["4C", "4C"], others=[["AC", "AC"], [], []])) == \
        {"valid": True}


# -- Shengji: kitty (docs/shengji.md#scoring-a-hand) -----------------------------------------

KITTY = cards("5D KD 10C 3C 4D 6D 7D 8D")  # 25 points


@pytest.mark.parametrize(("preset", "last_lead", "multiplier"), [
    ("tractor", "4S 4S", 4),
    ("titanic", "5S 5S 5S", 8),
    ("tractor", "4S 4S 5S 5S", 16),
    ("tractor", "4S 4S 5S 5S 6S 6S", 64),
    ("titanic", "4S 4S 4S 5S 5S 5S", 64),
    ("tractor", "4S 4S 5S 5S 6S 6S 7S 7S", 64),
    ("tractor", "AS KS QS JS 10S 9S 8S 7S 7S", 4),
    ("tractor", "AS KS QS JS", 2),
    ("tractor", "AS AS JS JS", 4),
])
def test_the_seed_kitty_multipliers(preset: str, last_lead: str, multiplier: int) -> None:
    answer = ask("kitty", {"level": "2", "trump": "H", "last_lead": cards(last_lead),
                           "last_winner_side": "attackers", "kitty": KITTY[:6]}, preset)
    assert answer == {"multiplier": multiplier, "kitty_points": 25,
                      "kitty_bonus": 25 * multiplier}


def test_the_kitty_scores_nothing_when_the_dealer_side_wins_the_last_trick() -> None:
    answer = ask("kitty", {"level": "2", "trump": "H", "last_lead": ["4S", "4S"],
                           "last_winner_side": "dealer", "kitty": KITTY})
    assert answer == {"multiplier": None, "kitty_points": 25, "kitty_bonus": 0}


def test_kitty_multiplier_options_double_and_cap() -> None:
    given = {"level": "2", "trump": "H", "last_lead": cards("4S 4S 5S 5S"),
             "last_winner_side": "attackers", "kitty": KITTY}
    assert ask("kitty", given, options={"kitty_multiplier": "double"})["multiplier"] == 2
    assert ask("kitty", given, options={"kitty_cap": 8})["multiplier"] == 8


# -- Shengji: level_change and hand_outcome (docs/shengji.md#scoring-a-hand) ---------------------


@pytest.mark.parametrize("preset", ["shengji_one_pack", "tractor", "titanic"])
def test_level_change_follows_the_band_of_the_pack_count(preset: str) -> None:
    band = {"shengji_one_pack": 20, "tractor": 40, "titanic": 60}[preset]
    rows = [(0, "dealer", 3), (5, "dealer", 2), (band - 5, "dealer", 2), (band, "dealer", 1),
            (2 * band - 5, "dealer", 1), (2 * band, "attackers", 0),
            (3 * band - 5, "attackers", 0), (3 * band, "attackers", 1),
            (4 * band, "attackers", 2), (5 * band, "attackers", 3)]
    for points, side, levels in rows:
        assert ask("level_change", {"attacker_points": points}, preset) == \
            {"side": side, "levels": levels}, points


def test_the_band_option_moves_the_rows() -> None:
    assert ask("level_change", {"attacker_points": 60}, options={"band": 30}) == \
        {"side": "attackers", "levels": 0}


def outcome_input(**fields: Any) -> dict[str, Any]:
    """An example hand: dealer 2, both at 2, spades, 30 trick points, 25 in the kitty."""
    return {"dealer": 2, "levels": ["2", "2"], "level": "2", "trump": "S", "trick_points": 30,
            "kitty": KITTY, "last_winner_side": "attackers", "last_lead": ["4C", "4C"],
            **fields}


def test_hand_outcome_of_the_rule_books_example_result() -> None:
    assert ask("hand_outcome", outcome_input()) == {
        "kitty_bonus": 100, "attacker_points": 130, "side": "attackers", "levels": 1,
        "levels_after": ["2", "3"], "next_dealer": 3, "game_over": False, "game_winner": None}


def test_hand_outcome_dealer_side_keeps_the_deal_with_the_partner() -> None:
    answer = ask("hand_outcome", outcome_input(last_winner_side="dealer", trick_points=50))
    assert answer == {"kitty_bonus": 0, "attacker_points": 50, "side": "dealer", "levels": 1,
                      "levels_after": ["3", "2"], "next_dealer": 0, "game_over": False,
                      "game_winner": None}


def test_hand_outcome_a_team_defending_a_wins_the_match() -> None:
    answer = ask("hand_outcome", outcome_input(levels=["A", "9"], level="A", trick_points=0,
                                               last_winner_side="dealer"))
    assert (answer["side"], answer["game_over"], answer["game_winner"]) == ("dealer", True, 0)
    assert answer["levels_after"] == ["A", "9"]


def test_hand_outcome_without_must_defend_a_wins_past_a() -> None:
    answer = ask("hand_outcome", outcome_input(levels=["K", "Q"], level="K", trick_points=0,
                                               last_winner_side="dealer"),
                 options={"must_defend_a": False})
    assert (answer["game_over"], answer["game_winner"]) == (True, 0)


def test_hand_outcome_level_must_be_the_dealer_teams() -> None:
    answer = ask("hand_outcome", outcome_input(levels=["2", "5"], level="5"))
    assert answer["error"] == "INVALID_REQUEST"


def test_hand_outcome_points_cannot_exceed_the_deck() -> None:
    answer = ask("hand_outcome", outcome_input(trick_points=190))
    assert answer["error"] == "INVALID_REQUEST"


# -- Shengji: qq_points (docs/shengji.md#qq-room-points) -------------------------------------


@pytest.mark.parametrize(("totals", "options", "points", "expected"), [
    ([90] * 4, {}, 0, {"multiplier": 2, "base": 4, "delta": [8, -8, 8, -8]}),
    ([400] * 4, {}, 0, {"multiplier": 3, "base": 4, "delta": [12, -12, 12, -12]}),
    ([400] * 4, {"qq_da_guang": 6}, 0, {"multiplier": 3, "base": 6, "delta": [18, -18, 18, -18]}),
    ([90, 79, 300, 500], {}, 60, {"multiplier": 1, "base": 2, "delta": [2, -2, 2, -2]}),
    ([0] * 4, {}, 120, {"multiplier": 1, "base": 3, "delta": [-3, 3, -3, 3]}),
    ([0] * 4, {}, 200, {"multiplier": 1, "base": 4, "delta": [-4, 4, -4, 4]}),
])
def test_the_seed_room_points(totals: list[int], options: dict[str, Any], points: int,
                              expected: Any) -> None:
    answer = ask("qq_points", {"room_points": totals, "dealer": 0, "attacker_points": points},
                 "tractor_qq", options)
    assert answer == expected


# -- Shengji: declare (docs/shengji.md#the-deal-and-declarations) ----------------------------


def declare(declarations: list[tuple[int, str]], dealer: int | None = None,
            preset: str = "tractor", options: dict[str, Any] | None = None) -> Any:
    """Ask about a sequence of (seat, cards) declarations at level 2."""
    return ask("declare", {"level": "2", "dealer": dealer,
                           "declarations": [{"seat": s, "cards": cards(c)}
                                            for s, c in declarations]}, preset, options)


def test_declare_overcalls_climb_the_ladder_and_the_first_declarer_deals() -> None:
    answer = declare([(2, "2H"), (1, "2S"), (1, "2S 2S"), (3, "SJ SJ"), (0, "BJ BJ")])
    assert answer == {"results": ["accepted", "DECLARATION_TOO_WEAK", "accepted", "accepted",
                                  "accepted"],
                      "trump": None, "declared_by": 0, "dealer": 2}


def test_declare_final_declarer_deals_when_the_option_says_so() -> None:
    answer = declare([(2, "2H"), (1, "2S 2S")], options={"first_hand_dealer": "final_declarer"})
    assert (answer["trump"], answer["declared_by"], answer["dealer"]) == ("S", 1, 1)


def test_declare_among_equals_the_first_stands_and_self_protection_is_an_overcall() -> None:
    answer = declare([(1, "2D 2D"), (3, "2C 2C"), (1, "SJ SJ")], dealer=3)
    assert answer == {"results": ["accepted", "DECLARATION_TOO_WEAK", "accepted"],
                      "trump": None, "declared_by": 1, "dealer": 3}


@pytest.mark.parametrize("shown", ["SJ", "3H", "2H 2S", "SJ BJ", ""])
def test_declare_refuses_what_is_no_form(shown: str) -> None:
    assert declare([(0, shown)])["results"] == ["INVALID_DECLARATION"]


def test_declare_three_packs_three_of_the_rank_beat_two_big_jokers() -> None:
    answer = declare([(0, "BJ BJ"), (1, "2H 2H 2H"), (2, "SJ SJ SJ"), (3, "BJ BJ BJ")],
                     preset="titanic")
    assert answer["results"] == ["accepted"] * 4
    assert (answer["trump"], answer["declared_by"]) == (None, 3)


def test_declare_nobody_declares_no_trump_and_seat_zero_deals() -> None:
    assert declare([]) == {"results": [], "trump": None, "declared_by": None, "dealer": 0}


def test_declare_more_copies_than_the_packs_is_not_in_the_deck() -> None:
    assert declare([(0, "2H 2H 2H")])["error"] == "CARD_NOT_IN_DECK"


# -- Shengji: bury (docs/shengji.md#the-kitty) -----------------------------------------------


def test_bury_exactly_the_kitty_size() -> None:
    assert ask("bury", {"kitty_size": 8, "cards": cards("3C 4C 5C 6C 7C 8C 9C KS")}) == "legal"


def test_bury_points_only_where_allowed() -> None:
    points = cards("5C 10C KC 3D 4D 6D")
    assert ask("bury", {"kitty_size": 6, "cards": points}, "shengji_one_pack") == \
        "BURY_POINTS_FORBIDDEN"
    assert ask("bury", {"kitty_size": 6, "cards": cards("3C 4C 6C 3D 4D 6D")},
               "shengji_one_pack") == "legal"
    assert ask("bury", {"kitty_size": 6, "cards": points}, "titanic") == "legal"


def test_bury_kitty_size_is_read_as_the_ruleset_option() -> None:
    assert ask("bury", {"kitty_size": 4, "cards": cards("3C 4C 5C 6C")}) == "legal"
    assert ask("bury", {"kitty_size": 6, "cards": cards("3C 4C 5C 6C 7C 8C")})["error"] == \
        "INVALID_RULESET"


# -- questions the engine cannot answer -------------------------------------------------------


GOOD = {"game": "shengji", "kind": "suit", "preset": "tractor", "options": {},
        "input": {"level": "10", "trump": "H", "card": "2S"}}


def with_(**changes: Any) -> dict[str, Any]:
    """The good question with some fields changed (None removes a field)."""
    question = {**GOOD, **changes}
    return {k: v for k, v in question.items() if v is not None}


@pytest.mark.parametrize(("question", "code", "says"), [
    (with_(game="chess"), "INVALID_RULESET", "unknown game 'chess'"),
    (with_(kind="colour"), "INVALID_REQUEST", "unknown kind 'colour'"),
    (with_(kind="beats"), "INVALID_REQUEST", "unknown kind 'beats' for game 'shengji'"),
    ({**GOOD, "game": "fiftyk", "kind": "order"}, "INVALID_REQUEST", "unknown kind 'order'"),
    (with_(kind=None), "INVALID_REQUEST", "unknown kind None"),
    (with_(preset="shanghai"), "INVALID_RULESET", "unknown preset 'shanghai'"),
    (with_(preset=None), "INVALID_REQUEST", "missing field preset"),
    (with_(options={"colour": "red"}), "INVALID_RULESET", "unknown option 'colour'"),
    (with_(options={"packs": 4}), "INVALID_RULESET", "packs"),
    (with_(options={"throw_penalty": 7}), "INVALID_RULESET", "multiple of 5"),
    (with_(options=["packs"]), "INVALID_RULESET", "options must be an object"),
    ({**GOOD, "game": "fiftyk", "kind": "classify", "preset": "classic",
      "options": {"min_straight": 2}, "input": {"cards": ["3S"]}}, "INVALID_RULESET",
     "an integer from 3 to 12"),
    (with_(input=None), "INVALID_REQUEST", "missing field input"),
    (with_(input=["2S"]), "INVALID_REQUEST", "input must be a JSON object"),
    (with_(input={"level": "10", "trump": "H"}), "INVALID_REQUEST", "missing input field(s) card"),
    (with_(input={"level": "10", "trump": "H", "card": "2S", "cards": []}), "INVALID_REQUEST",
     "unknown input field(s) cards"),
    (with_(input={"level": "1", "trump": "H", "card": "2S"}), "INVALID_REQUEST", "input.level"),
    (with_(input={"level": 10, "trump": "H", "card": "2S"}), "INVALID_REQUEST", "input.level"),
    (with_(input={"level": "10", "trump": "h", "card": "2S"}), "INVALID_REQUEST", "input.trump"),
    (with_(input={"level": "10", "trump": "H", "card": 2}), "INVALID_REQUEST", "input.card"),
    (with_(input={"level": "10", "trump": "H", "card": "1X"}), "UNKNOWN_CARD", "'1X'"),
    (with_(extra=1), "INVALID_REQUEST", "unknown field(s) extra"),
    ("suit", "INVALID_REQUEST", "a question is a JSON object"),
    ([GOOD], "INVALID_REQUEST", "a question is a JSON object"),
])
def test_a_question_the_engine_cannot_answer_gets_a_reason_code(question: Any, code: str,
                                                                says: str) -> None:
    answer = oracle.answer(question)
    assert set(answer) == {"error", "message"}
    assert answer["error"] == code
    assert says in answer["message"]


@pytest.mark.parametrize(("kind", "given_input", "preset", "game", "code", "says"), [
    ("classify", {"cards": ["SJ"]}, "fuzhou", "fiftyk", "CARD_NOT_IN_DECK",
     "SJ (the deck has none)"),
    ("classify", {"cards": ["9H"] * 3}, "classic", "fiftyk", "CARD_NOT_IN_DECK",
     "9H ×3 (the deck has 2)"),
    ("beats", {"top": ["4S", "4S"], "play": ["4S", "4S"]}, "classic", "fiftyk",
     "CARD_NOT_IN_DECK", "4S ×4 (the deck has 2)"),
    ("beats", {"top": ["3S"], "play": ["XX"]}, "classic", "fiftyk", "UNKNOWN_CARD",
     "input.play"),
    ("classify", {"cards": "5H 10H KH"}, "classic", "fiftyk", "INVALID_REQUEST",
     "input.cards must be a JSON array"),
    ("classify", {"level": "10", "trump": "H", "cards": ["3S", "3S"]}, "shengji_one_pack",
     "shengji", "CARD_NOT_IN_DECK", "3S ×2 (the deck has 1)"),
    ("classify", {"level": "10", "trump": "H", "cards": ["3S"] * 3}, "tractor",
     "shengji", "CARD_NOT_IN_DECK", "3S ×3 (the deck has 2)"),
    ("classify", {"level": "10", "trump": "H", "cards": ["3S", None]}, "tractor", "shengji",
     "INVALID_REQUEST", "card strings"),
    ("follow", hearts(lead=["AC", "AC"], hand=["AC", "3C", "4C"], play=["3C", "4C"]),
     "tractor", "shengji", "CARD_NOT_IN_DECK", "AC ×3"),
    # The play alone is checked against the deck too: more copies than the deck holds is bad
    # input, not a play the seat happens not to hold.
    ("follow", hearts(lead=["AC", "AC"], hand=["3C", "3C"], play=["3C", "3C", "3C"]),
     "tractor", "shengji", "CARD_NOT_IN_DECK", "3C ×3"),
    ("trick", hearts(plays=[["AC"], ["AC"], ["AC"], ["3C"]]), "tractor", "shengji",
     "CARD_NOT_IN_DECK", "AC ×3"),
    ("trick", hearts(plays=[["AC"], ["KC"], ["3C"]]), "tractor", "shengji",
     "INVALID_REQUEST", "exactly 4 entries"),
    ("throw", hearts(lead=["AC"], others=[["AC"], ["AC"], []]), "tractor", "shengji",
     "CARD_NOT_IN_DECK", "AC ×3"),
    ("throw", hearts(lead=["AC"], others=[[], []]), "tractor", "shengji",
     "INVALID_REQUEST", "exactly 3 entries"),
    ("kitty", {"level": "2", "trump": "H", "last_lead": ["4S"], "last_winner_side": "us",
               "kitty": []}, "tractor", "shengji", "INVALID_REQUEST", "last_winner_side"),
    ("level_change", {"attacker_points": -5}, "tractor", "shengji", "INVALID_REQUEST",
     "at least 0"),
    ("level_change", {"attacker_points": 37}, "tractor", "shengji", "INVALID_REQUEST",
     "multiple of 5"),
    ("level_change", {"attacker_points": True}, "tractor", "shengji", "INVALID_REQUEST",
     "integer"),
    ("qq_points", {"room_points": [0, 0, 0], "dealer": 0, "attacker_points": 0}, "tractor_qq",
     "shengji", "INVALID_REQUEST", "exactly 4 entries"),
    ("qq_points", {"room_points": [0] * 4, "dealer": 4, "attacker_points": 0}, "tractor_qq",
     "shengji", "INVALID_REQUEST", "input.dealer must be a seat"),
    ("declare", {"level": "2", "dealer": None, "declarations": [{"seat": 0}]}, "tractor",
     "shengji", "INVALID_REQUEST", "input.declarations[0]"),
    ("declare", {"level": "2", "dealer": None, "declarations": [{"seat": 9, "cards": ["2H"]}]},
     "tractor", "shengji", "INVALID_REQUEST", "input.declarations[0].seat"),
    ("declare", {"level": "2", "dealer": None,
                 "declarations": [{"seat": 0, "cards": ["2H"]}, {"seat": 1, "cards": ["ZZ"]}]},
     "tractor", "shengji", "UNKNOWN_CARD", "input.declarations[1].cards: "),
    ("declare", {"level": "2", "dealer": None, "declarations": [{"seat": 0, "cards": "2H"}]},
     "tractor", "shengji", "INVALID_REQUEST", "input.declarations[0].cards"),
    ("bury", {"kitty_size": 8, "cards": ["3C"] * 8}, "tractor", "shengji", "CARD_NOT_IN_DECK",
     "3C ×8"),
    ("follow", hearts(lead=["3C"], hand=[f"{r}{s}" for r in "23456789JQKA" for s in "SHCD"],
                      play=["3C"]),
     "tractor", "shengji", "INVALID_REQUEST", "a seat holds at most 33"),
])
def test_malformed_input_gets_a_reason_code(kind: str, given_input: Any, preset: str, game: str,
                                            code: str, says: str) -> None:
    answer = ask(kind, given_input, preset, game=game)
    assert answer["error"] == code, answer
    assert says in answer["message"]


@pytest.mark.parametrize(("line", "says"), [
    (b"", "an empty line"),
    (b"   \t\r\n", "an empty line"),
    (b"nope\n", "not JSON"),
    (b'{"kind": "suit"\n', "not JSON"),
    (b'{"kind": NaN}\n', "not JSON"),
    (b"\xff\xfe{}\n", "not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"a": ' + b"9" * 5000 + b"}", "not JSON"),
])
def test_a_line_that_is_no_question_gets_invalid_request(line: bytes, says: str) -> None:
    answer = oracle.answer_line(line)
    assert answer["error"] == "INVALID_REQUEST"
    assert says in answer["message"]


# -- the stream -----------------------------------------------------------------------------


def run_stream(text: bytes) -> tuple[int, list[Any]]:
    """Run the oracle over bytes; the exit code and the parsed answer lines."""
    out = io.BytesIO()
    code = oracle.run(io.BytesIO(text), out)
    lines = out.getvalue().decode("utf-8").split("\n")
    assert lines[-1] == "", "every answer ends its line"
    return code, [json.loads(line) for line in lines[:-1]]


def test_one_answer_per_line_in_order_and_errors_do_not_stop_the_oracle() -> None:
    questions = [json.dumps(q) for q, _ in EXAMPLES]
    text = "\n".join([questions[0], "", "nope", questions[1], '{"game": "chess"}',
                      questions[2], questions[3]]).encode()  # no newline after the last
    code, answers = run_stream(text)
    assert code == oracle.EXIT_OK
    assert len(answers) == 7
    assert [answers[i] for i in (0, 3, 5, 6)] == [a for _, a in EXAMPLES]
    assert [answers[i]["error"] for i in (1, 2, 4)] == ["INVALID_REQUEST"] * 2 + \
        ["INVALID_RULESET"]


def test_no_input_no_answer() -> None:
    assert run_stream(b"") == (oracle.EXIT_OK, [])


def test_an_overlong_line_is_refused_and_the_next_one_answered() -> None:
    long_line = b'{"x": "' + b"y" * (oracle.MAX_LINE_BYTES + 10) + b'"}\n'
    code, answers = run_stream(long_line + json.dumps(GOOD).encode() + b"\n")
    assert code == oracle.EXIT_OK
    assert answers[0]["error"] == "INVALID_REQUEST" and "at most" in answers[0]["message"]
    assert answers[1:] == ["S"]


class _Unreadable(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        raise OSError("the disk is on fire")


def test_unreadable_standard_input_stops_the_oracle() -> None:
    with pytest.raises(oracle.UnreadableInput, match="on fire"):
        oracle.run(io.BufferedReader(_Unreadable()), io.BytesIO())


def test_the_rules_ask_command_reads_stdin_and_writes_stdout(
        monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]) -> None:
    lines = b"\n".join(json.dumps(q).encode() for q, _ in EXAMPLES) + b"\n"
    stdin = io.TextIOWrapper(io.BytesIO(lines))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert main(["rules", "ask"]) == 0
    out = capfdbinary.readouterr().out.decode().splitlines()
    assert [json.loads(line) for line in out] == [a for _, a in EXAMPLES]


def fiftyk_command() -> str:
    """The console script installed beside the interpreter running the tests (else on PATH)."""
    beside = Path(sys.executable).parent / "fiftyk"
    if beside.is_file():
        return str(beside)
    found = shutil.which("fiftyk")
    assert found is not None, "the fiftyk console script is not installed"
    return found


def test_the_installed_command_answers_several_lines_end_to_end() -> None:
    questions = [
        *(json.dumps(q) for q, _ in EXAMPLES),
        json.dumps({"kind": "classify", "preset": "classic", "options": {},
                    "input": {"cards": ["5H", "10H", "KH"]}}),
        "not json",
        "",
        json.dumps({"game": "shengji", "kind": "trick", "preset": "tractor", "options": {},
                    "input": hearts(plays=[cards("5C 4C 4C"), cards("9H 7H 7H"),
                                           cards("8H 8H 4H"), cards("3C 3D 3S")])}),
    ]
    done = subprocess.run([fiftyk_command(), "rules", "ask"], input="\n".join(questions) + "\n",
                          capture_output=True, text=True, encoding="utf-8", check=False,
                          timeout=120, env={**os.environ, "LC_ALL": "C", "PYTHONIOENCODING": ""})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert answers[:4] == [a for _, a in EXAMPLES]
    assert answers[4] == {"type": "pure_fifty_k", "points": 25}
    assert [a["error"] for a in answers[5:7]] == ["INVALID_REQUEST", "INVALID_REQUEST"]
    assert answers[7] == 2


def test_the_installed_command_writes_utf8_under_the_c_locale() -> None:
    question = json.dumps({"kind": "classify", "preset": "classic", "options": {},
                           "input": {"cards": ["9H", "9H", "9H"]}})
    done = subprocess.run([fiftyk_command(), "rules", "ask"], input=question.encode(),
                          capture_output=True, check=False, timeout=120,
                          env={**os.environ, "LC_ALL": "C", "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    assert "×" in json.loads(done.stdout.decode("utf-8"))["message"]


def test_the_installed_command_fails_only_when_stdin_is_unreadable(tmp_path: Path) -> None:
    # A descriptor opened for writing only: the process starts, and its first read fails.
    descriptor = os.open(tmp_path / "write-only", os.O_WRONLY | os.O_CREAT)
    try:
        done = subprocess.run([fiftyk_command(), "rules", "ask"], stdin=descriptor,
                              capture_output=True, text=True, check=False, timeout=120)
    finally:
        os.close(descriptor)
    assert done.returncode == oracle.EXIT_UNREADABLE
    assert done.stdout == ""
    assert done.stderr.startswith("fiftyk rules ask: cannot read standard input")
    assert "Traceback" not in done.stderr


def test_the_installed_command_with_stdin_closed_says_so() -> None:
    done = subprocess.run(["sh", "-c", f"'{fiftyk_command()}' rules ask <&-"],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == oracle.EXIT_UNREADABLE
    assert done.stderr.startswith("fiftyk rules ask: cannot read standard input")


# -- never a crash ---------------------------------------------------------------------------

KINDS = [(game, kind) for game, kinds in GAME_KINDS.items() for kind in kinds]
PRESETS = {"fiftyk": ["classic"], "shengji": ["tractor", "titanic", "shengji_one_pack",
                                                "tractor_qq"],
           "doudizhu": ["classic", "rob", "douzero"]}
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-300, 300) | st.sampled_from(
        ["2S", "10H", "SJ", "BJ", "AC", "KD", "5C", "H", "10", "2", "A", "dealer", "attackers",
         "1X", ""]),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(
        st.sampled_from(["seat", "cards", "x"]), inner, max_size=3),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(KINDS), data=st.data())
def test_any_input_gets_an_answer_or_a_reason_code_never_a_crash(
        kind: tuple[str, str], data: st.DataObject) -> None:
    game, name = kind
    fields = GAME_KINDS[game][name].fields
    given_input = {field: data.draw(JSON_VALUES, label=field) for field in fields}
    preset = data.draw(st.sampled_from(PRESETS[game]))
    options = data.draw(st.dictionaries(
        st.sampled_from(["packs", "kitty_size", "permanent_two", "band", "min_straight",
                         "bidding", "kickers_rocket", "kickers_whole_bomb"]),
        JSON_VALUES, max_size=2), label="options")
    answer = oracle.answer({"game": game, "kind": name, "preset": preset, "options": options,
                            "input": given_input})
    json.dumps(answer)
    if isinstance(answer, dict) and "error" in answer:
        assert answer["error"] in {"INVALID_REQUEST", "INVALID_RULESET", "UNKNOWN_CARD",
                                   "CARD_NOT_IN_DECK", "INVALID_COMBINATION"}
        assert set(answer) == {"error", "message"}


# -- Shengji: the shengji_io preset (docs/shengji.md, "The shengji_io preset") ---------------

def test_shengji_io_reads_a_three_pack_lead_with_a_tractor_split_from_a_triple() -> None:
    lead = hearts(cards=cards("7S 7S 7S 8S 8S"))
    assert ask("classify", lead, "shengji_io", {"packs": 3}) == {
        "type": "throw", "components": [["8S", "8S", "7S", "7S"], ["7S"]]}
    assert ask("classify", lead, "titanic") == {
        "type": "throw", "components": [["7S", "7S", "7S"], ["8S", "8S"]]}


def test_shengji_io_owes_the_tractor_of_the_leads_length() -> None:
    question = hearts(lead=cards("3S 3S 4S 4S 5S 5S 6S 6S"),
                      hand=cards("7S 7S 8S 8S 9S 9S JS JS KS KS AS AS 2D"),
                      play=cards("KS KS AS AS 7S 7S 8S 8S"))
    assert ask("follow", question) == "legal"
    assert ask("follow", question, "shengji_io") == "MUST_FOLLOW_TRACTOR"


def test_shengji_io_forces_the_first_blocking_seats_smallest_unit() -> None:
    question = hearts(lead=THROW_98844, others=[[], ["QC", "QC"], []])
    assert ask("throw", question) == {"valid": False, "forced": ["4C", "4C"]}
    assert ask("throw", question, "shengji_io") == {"valid": False, "forced": ["9C"]}


@pytest.mark.parametrize(("options", "winner"), [
    ({}, 1), ({"throw_evaluation": "highest"}, 2), ({"throw_evaluation": "unit_length"}, 2),
])
def test_shengji_io_judges_over_trumping_a_throw_by_its_policy(options: dict[str, Any],
                                                                winner: int) -> None:
    plays = [cards("AC AC KC"), cards("3H 3H 4H"), cards("5H 5H 2H"), cards("3C 3D 3S")]
    assert ask("trick", hearts(plays=plays)) == 2  # the key component: the higher pair
    assert ask("trick", hearts(plays=plays), "shengji_io", options) == winner


def test_shengji_io_doubles_the_kitty_per_card_of_the_last_leads_largest_unit() -> None:
    question = {"level": "2", "trump": "H", "last_lead": cards("4S 4S 5S 5S"),
                "last_winner_side": "attackers", "kitty": cards("5D KD 3C 4C 6D 7D 8D 9D")}
    assert ask("kitty", question)["multiplier"] == 16
    assert ask("kitty", question, "shengji_io") == {
        "multiplier": 8, "kitty_points": 15, "kitty_bonus": 120}
