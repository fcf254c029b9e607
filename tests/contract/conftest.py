"""The conformance suite's one fixture: a fresh, isolated store of each backend in
:data:`contract_backends.BACKENDS` (adding a backend is adding one entry there)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from contract_backends import BACKENDS, Backend

from agentmem_nb.store.contract import Store


@pytest.fixture(params=[pytest.param(name, marks=[pytest.mark.postgres] if name == "postgres" else [])
                        for name in sorted(BACKENDS)])
def backend(request: pytest.FixtureRequest) -> Backend:
    return BACKENDS[request.param]


@pytest.fixture
def store(backend: Backend, tmp_path: Path, clock: Callable[[], _dt.datetime]) -> Iterator[Store]:
    """A fresh store of the backend under test (overrides the files-only ``store`` of tests/conftest.py)."""
    yield backend.open(tmp_path, clock)
    if backend.cleanup is not None:
        backend.cleanup()
