"""The PostgreSQL backend's own tests: every test here is marked ``postgres`` (``pytest -m postgres`` runs them
alone) and gets a fresh database on the test process's throwaway server (see ``tests/pg_server.py``)."""

from __future__ import annotations

import pytest
from pg_server import PgServer, shared_server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/postgres/" in item.nodeid:
            item.add_marker(pytest.mark.postgres)


@pytest.fixture
def pg() -> PgServer:
    """The running throwaway server (skips, or fails under CI, when there is none)."""
    return shared_server()


@pytest.fixture
def pg_url(pg: PgServer) -> str:
    """The URL (with its password) of a fresh, empty database."""
    return pg.new_database()
