"""Fixtures for the end-to-end tests: a real referee on a free port, SQLite in a temp dir."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.harness import LiveServer, server_config


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One referee shared by the tests that only need their own tables."""
    live = LiveServer(server_config(tmp_path_factory.mktemp("shared-server")))
    yield live
    live.stop()
