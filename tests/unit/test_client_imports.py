"""The client side imports without loading any package of the server extra.

A fast guard for what tests/e2e/test_client_only_install.py proves in a fresh virtualenv:
here the server packages are installed, so the check is that nothing imports them.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# grpcio itself imports the empty top-level `grpc_health` and `grpc_reflection` packages when
# they are installed, so for those the services' modules are what counts.
SERVER_ONLY_MODULES = ("eventsourcing", "psycopg", "psycopg_pool", "prometheus_client",
                       "grpc_health.v1", "grpc_reflection.v1alpha")
CLIENT_MODULES = (
    "fiftyk_referee.service.grpc.client",
    "fiftyk_referee.service.grpc.errors",
    "fiftyk_referee.service.grpc.auth",
    "fiftyk_referee.service.grpc.gen.fiftyk.referee.v1.referee_pb2_grpc",
    # The command line: `fiftyk --help` and the client commands.
    "fiftyk_referee.service.cli.main",
    "fiftyk_referee.service.cli.rules",
    "fiftyk_referee.service.cli.adjudicate",
    "fiftyk_referee.service.cli.replay",
    "fiftyk_referee.service.cli.demo",
    "fiftyk_referee.service.cli.verify",
    # The games, their aggregates and the registry: pure domain code.
    "fiftyk_referee.domain.games",
    "fiftyk_referee.domain.table",
    "fiftyk_referee.domain.fiftyk.hand",
    "fiftyk_referee.domain.shengji.hand",
)
PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps(sorted(sys.modules)))
"""


@pytest.mark.parametrize("module", CLIENT_MODULES)
def test_a_client_module_loads_no_server_package(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, module], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    loaded = [name for name in json.loads(done.stdout)
              if any(name == server or name.startswith(f"{server}.")
                     for server in SERVER_ONLY_MODULES)]
    assert loaded == []
