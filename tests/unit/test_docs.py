"""The pages in docs/ say what the code does: their examples and tables are checked here."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from fiftyk_referee.domain.fiftyk.rulesets import DEFAULTS, OPTION_SPECS, PRESETS, Ruleset
from fiftyk_referee.domain.fiftyk.transcript import adjudicate
from fiftyk_referee.domain.game import Action
from fiftyk_referee.domain.games import adjudicate as adjudicate_any_game
from fiftyk_referee.domain.shengji import rulesets as shengji_rulesets
from fiftyk_referee.domain.shengji.hand import BURY
from fiftyk_referee.domain.shengji.play import EXAMPLE_LIMIT
from fiftyk_referee.domain.shengji.rulesets import ShengjiRules
from tests.unit.shengji.helpers import close_windows, new_hand, play

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
JSON_BLOCK = re.compile(r"^```json\n(.*?)^```$", re.MULTILINE | re.DOTALL)
TABLE_ROW = re.compile(r"^\| (.+) \|$", re.MULTILINE)
CODE = re.compile(r"`([^`]+)`")
KEEP_FIRST = re.compile(r"Keep only the first (\d+) actions")
REPLACE_ACTION = re.compile(r"Replace action (\d+) by `(\{.*?\})`")


def _page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def _json_blocks(text: str) -> list[Any]:
    return [json.loads(block) for block in JSON_BLOCK.findall(text)]


def _code(cell: str) -> str:
    """The text of the first `code` span in a table cell."""
    match = CODE.search(cell)
    assert match is not None, cell
    return match.group(1)


def _rows(text: str, first_header: str) -> list[list[str]]:
    """The body rows of the markdown table whose header starts with `first_header`."""
    start = text.index(f"| {first_header} |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        match = TABLE_ROW.match(line)
        if match is None:
            break
        rows.append([cell.strip() for cell in match.group(1).split(" | ")])
    return rows


# -- transcript.md --------------------------------------------------------------------------


def test_transcript_page_example_adjudicates_to_the_result_shown() -> None:
    transcript, result, *_ = _json_blocks(_page("transcript.md"))
    example_file = DOCS / "examples" / "transcript-qq3.json"
    assert json.loads(example_file.read_text(encoding="utf-8")) == transcript
    assert transcript["format"] == "fiftyk-transcript/1"
    assert result["status"] == "completed"
    assert adjudicate(transcript) == result


def test_transcript_page_variants_adjudicate_to_the_results_shown() -> None:
    text = _page("transcript.md")
    transcript, _, unfinished, rejected, *_ = _json_blocks(text)
    keep = KEEP_FIRST.search(text)
    replace = REPLACE_ACTION.search(text)
    assert keep is not None and replace is not None

    shortened = copy.deepcopy(transcript)
    shortened["actions"] = shortened["actions"][: int(keep.group(1))]
    assert adjudicate(shortened) == unfinished
    assert unfinished["status"] == "in_progress"

    changed = copy.deepcopy(transcript)
    changed["actions"][int(replace.group(1))] = json.loads(replace.group(2))
    assert adjudicate(changed) == rejected
    assert rejected["rejected"]["action"] == int(replace.group(1))


def test_transcript_page_shengji_example_adjudicates_to_the_result_shown() -> None:
    text = _page("transcript.md")
    shengji_section = text[text.index("## Shengji hands"):]
    (result,) = _json_blocks(shengji_section)
    example_file = DOCS / "examples" / "transcript-shengji.json"
    transcript = json.loads(example_file.read_text(encoding="utf-8"))
    assert transcript["game"] == result["game"] == "shengji"
    assert result["status"] == "completed"
    assert adjudicate_any_game(transcript) == result


# -- rules.md -------------------------------------------------------------------------------


def test_rules_page_lists_every_option_with_its_default_and_allowed_values() -> None:
    rows = _rows(_page("rules.md"), "option")
    documented = {_code(name): (default, allowed) for name, default, allowed, _ in rows}
    assert list(documented) == list(OPTION_SPECS)
    for name, (default, allowed) in documented.items():
        spec = OPTION_SPECS[name]
        assert default == f"`{json.dumps(spec.default)}`", name
        assert allowed == spec.allowed().removeprefix("an integer from "), name


def _preset_overrides(cell: str, documented: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The option values a preset row names: `name=value`, `name` (true), `as X`."""
    values: dict[str, Any] = {}
    base = re.match(r"as `(\w+)`", cell)
    if base is not None:
        values.update(documented[base.group(1)])
    for token in CODE.findall(cell):
        name, sep, text = token.partition("=")
        if name in OPTION_SPECS:
            values[name] = OPTION_SPECS[name].parse(text) if sep else True
    return values


def test_rules_page_presets_match_the_presets_in_the_code() -> None:
    rows = _rows(_page("rules.md"), "preset")
    documented: dict[str, dict[str, Any]] = {}
    for name_cell, players_cell, deck_cell, changes in rows:
        name = _code(name_cell)
        documented[name] = _preset_overrides(changes, documented)
        ruleset = Ruleset.preset_named(name)
        counts = ruleset.player_counts()
        shown = (f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}")
        assert players_cell.split(",")[0] == shown, name
        assert ("teams" in players_cell) == ruleset.teams, name
        assert int(deck_cell) == ruleset.deck_size, name
        assert {**DEFAULTS, **documented[name]} == {**DEFAULTS, **PRESETS[name]}, name
    assert list(documented) == list(PRESETS)



# -- shengji.md -----------------------------------------------------------------------------

SHENGJI_COLUMNS = {"packs": "packs", "kitty_size": "kitty", "band": "band"}  # option: column
CONSTRAINT_BLOCK = re.compile(r"^constraints: (.*?)^plays: +(.*?) \(follow\)$",
                              re.MULTILINE | re.DOTALL)


def test_shengji_page_lists_every_option_with_its_default_and_allowed_values() -> None:
    rows = _rows(_page("shengji.md"), "option")
    documented = {_code(name): (default, allowed) for name, default, allowed, _ in rows}
    assert list(documented) == list(shengji_rulesets.OPTION_SPECS)
    for name, (default, allowed) in documented.items():
        spec = shengji_rulesets.OPTION_SPECS[name]
        assert default == f"`{json.dumps(spec.default)}`", name
        assert allowed == spec.allowed().removeprefix("an integer from "), name


def test_shengji_page_presets_match_the_presets_in_the_code() -> None:
    text = _page("shengji.md")
    header = text[text.index("| preset |"):].splitlines()[0]
    columns = [cell.strip() for cell in header.strip("|").split("|")]
    specs = shengji_rulesets.OPTION_SPECS
    names = []
    for row in _rows(text, "preset"):
        cells = dict(zip(columns, row, strict=True))
        name = _code(cells["preset"])
        names.append(name)
        rules = ShengjiRules.from_spec(name)
        assert int(cells["cards"]) == rules.deck_size, name
        assert int(cells["hand"]) == rules.hand_size, name
        documented: dict[str, Any] = {option: int(cells[column])
                                      for option, column in SHENGJI_COLUMNS.items()}
        for token in CODE.findall(cells["what else it changes"]):
            option, _, value = token.partition("=")
            documented[option] = specs[option].parse(value)
        assert documented == shengji_rulesets.PRESETS[name], name
        assert {k: rules.options()[k] for k in documented} == documented, name
    assert names == list(shengji_rulesets.PRESETS)


def test_shengji_page_follow_example_is_what_the_referee_answers() -> None:
    block = CONSTRAINT_BLOCK.search(_page("shengji.md"))
    assert block is not None
    shown = [line.strip() for line in block.group(1).splitlines()]
    lead = "3S 3S 4S 4S"
    hand = new_hand("tractor", {"declare_pacing": "final"}, dealer=None,
                    hands={0: lead, 1: "7S 7S 8S 8S 9S 10S 5H"})
    close_windows(hand)
    kept = list(map(str, hand.hands[0]))
    for card in lead.split():
        kept.remove(card)
    hand.act(0, Action(BURY, tuple(kept[:hand.rules.kitty_size])))
    play(hand, 0, lead)
    answer = hand.legal_actions(1, EXAMPLE_LIMIT)
    assert shown == list(answer.constraints)
    assert block.group(2) == " ".join(answer.plays[0].cards)


def test_the_shengji_page_is_linked_from_the_readme_and_the_rules_page() -> None:
    assert "[docs/shengji.md](docs/shengji.md)" in (ROOT / "README.md").read_text("utf-8")
    assert "](shengji.md)" in _page("rules.md")
    assert "](shengji.md#legal-plays)" in _page("integrating.md")


def test_the_rate_limit_table_of_integrating_md_is_the_default_rates() -> None:
    from fiftyk_referee.service.ops.limits import DEFAULT_RATES, RPC_CLASSES

    page = _page("integrating.md")
    section = page[page.index("## Rate limits"):]
    section = section[:section.index("\n## ", 1)]
    rows = {_code(cells[0]): [cell.strip() for cell in cells[1:]]
            for row in TABLE_ROW.findall(section)
            if (cells := row.split(" | "))[0].startswith("`")}
    documented = {role: dict(zip(RPC_CLASSES, values, strict=True))
                  for role, values in rows.items()}
    actual = {role: {name: f"{rate.per_second:g}/{rate.burst:g}" for name, rate in classes.items()}
              for role, classes in DEFAULT_RATES.items()}
    assert documented == actual


PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
GRPCURL_DATA = re.compile(r"-d '(\{.*?\})'")


def test_integrating_md_shows_the_same_create_table_in_every_json_form() -> None:
    from google.protobuf import json_format

    from fiftyk_referee.domain.games import game_named
    from fiftyk_referee.service.grpc.convert import options_from_proto
    from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb

    page = _page("integrating.md")
    section = page[page.index("### Options in JSON"):]
    section = section[:section.index("\n## ", 1)]
    grpcurl_data = GRPCURL_DATA.search(section)
    (python_block,) = PYTHON_BLOCK.findall(section)
    (library_json,) = JSON_BLOCK.findall(section)
    assert grpcurl_data is not None
    from_grpcurl = json_format.Parse(grpcurl_data.group(1), pb.CreateTableRequest())
    from_library = json_format.Parse(library_json, pb.CreateTableRequest())
    namespace: dict[str, Any] = {"pb": pb}
    exec(python_block, namespace)  # the page's Python lines, as a reader would run them

    assert from_grpcurl == from_library == namespace["request"] == namespace["same"]
    assert json.loads(json_format.MessageToJson(from_grpcurl)) == json.loads(library_json)
    options = options_from_proto(from_library.ruleset.options)
    assert options == {"permanent_two": True, "hands": 8, "kitty_size": None}
    rules = game_named(from_library.ruleset.game).rules(from_library.ruleset.preset, options)
    assert rules.options()["hands"] == 8


# -- README.md: the commands a newcomer copies -------------------------------------------------

FENCED = re.compile(r"^```.*?^```$", re.MULTILINE | re.DOTALL)
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)
KEY_ARGUMENT = re.compile(r"--key\s+(\S+)")
EXAMPLE_FILE = re.compile(r"docs/examples/[\w.-]+\.json")
EVIDENCE_FORMAT = "fiftyk-evidence/1"


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_key_file_the_readmes_commands_name_is_in_the_repository() -> None:
    commands = "\n".join(SH_BLOCK.findall(_readme()))
    keys = KEY_ARGUMENT.findall(commands)
    assert keys, "the README shows `fiftyk verify --key ...`"
    for key in keys:
        assert (ROOT / key).is_file(), f"README: `--key {key}` names no file of the checkout"


def test_the_readme_says_where_a_referees_public_key_comes_from() -> None:
    text = " ".join(_readme().split())
    assert "`fiftyk keygen referee` writes `referee.key`" in text
    assert "`FIFTYK_SIGNING_KEY_FILE`" in text and "`--key referee.pub`" in text


def test_the_readme_offers_the_fairness_check_on_files_with_deal_inputs_only() -> None:
    """A sentence that names an example file and the fairness check names evidence, or says
    that the file has no deal inputs to check."""
    prose = re.sub(r"^(```|#).*?$", "\n\n", FENCED.sub("\n\n", _readme()), flags=re.MULTILINE)
    sentences = [" ".join(sentence.split()) for paragraph in prose.split("\n\n")
                 for sentence in re.split(r"(?<=\.)\s+(?=[A-Z`(])", paragraph)]
    offered = 0
    for sentence in sentences:
        if "fairness" not in sentence:
            continue
        for name in EXAMPLE_FILE.findall(sentence):
            shown = json.loads((ROOT / name).read_text(encoding="utf-8"))
            if shown.get("format") == EVIDENCE_FORMAT:
                offered += 1
            else:
                assert "no deal inputs" in sentence, f"README offers {name}: {sentence}"
    assert offered, "the README names an evidence file for the fairness check"


# -- proto/google/rpc: googleapis' messages of rich errors, as published ------------------------

GOOGLE_RPC_FILES = ("status.proto", "error_details.proto")


def test_the_shipped_google_rpc_protos_are_the_installed_googleapis_files() -> None:
    from google.rpc import status_pb2

    installed = Path(status_pb2.__file__).parent
    for name in GOOGLE_RPC_FILES:
        shipped = (ROOT / "proto" / "google" / "rpc" / name).read_text(encoding="utf-8")
        assert shipped == (installed / name).read_text(encoding="utf-8"), (
            f"proto/google/rpc/{name} differs from googleapis-common-protos' copy: copy it again"
            " and update the version in docs/integrating.md")
        assert shipped.startswith("// Copyright") and "Apache License, Version 2.0" in shipped


def test_integrating_md_says_where_the_google_rpc_protos_come_from() -> None:
    from importlib.metadata import version

    text = " ".join(_page("integrating.md").split())
    for name in GOOGLE_RPC_FILES:
        assert f"`proto/google/rpc/{name}`" in text
    package = "googleapis-common-protos"
    assert f"`{package}` Python package (version {version(package)})" in text
    assert "[examples/errors.js](examples/errors.js)" in text
