"""A client process turns the games' Any payloads into JSON: the installed games' own proto
modules are known to it without the server side (their converters) ever loading."""

from __future__ import annotations

import json
import subprocess
import sys

RUN_TIMEOUT_SECONDS = 120
# A fresh interpreter: only what the replay document's module imports is loaded.
CLIENT = """
import json, sys
from fiftyk_referee.service.grpc.gen.fiftyk.referee.v1 import referee_pb2 as pb
from fiftyk_referee.service.web.document import event_json

event = pb.Event(name="shengji.declared")
event.game_event.type_url = "type.googleapis.com/fiftyk.games.shengji.v1.Declared"
event.game_event.value = bytes([8, 2, 18, 2]) + b"2H"  # seat 2, cards ["2H"]
print(json.dumps({"event": event_json(event),
                  "edges": sorted(m for m in sys.modules if m.endswith(".edge"))}))
"""


def test_a_client_process_writes_a_game_event_as_json_without_loading_any_converter() -> None:
    done = subprocess.run([sys.executable, "-c", CLIENT], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_SECONDS, check=False)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["event"]["game_event"] == {
        "@type": "type.googleapis.com/fiftyk.games.shengji.v1.Declared", "seat": 2,
        "cards": ["2H"], "round": 0}
    assert printed["edges"] == []
