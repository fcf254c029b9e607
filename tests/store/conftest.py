"""Fixtures for the store tests (the shared ones — store, clock, seed_root — live in tests/conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore, UserMemory


@pytest.fixture
def mem(store: MemoryStore) -> UserMemory:
    """User ``alice`` of the fresh test store."""
    return store.user("alice")


@pytest.fixture
def seed_store(seed_root: Path, clock) -> MemoryStore:
    """The original demo's folder (a private copy), opened in Asia/Shanghai, the zone its naive timestamps were
    written in. The copy keeps the source's read-only modes, so write permission is given back for the owner."""
    for folder, _dirs, files in os.walk(seed_root):
        for name in files:
            path = Path(folder) / name
            path.chmod(path.stat().st_mode | 0o200)
    return MemoryStore(seed_root, zone="Asia/Shanghai", clock=clock)
