"""Shared fixtures: every test gets its own memory root under tmp_path."""

from __future__ import annotations

import datetime as _dt
import shutil
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore

SHARED = Path(__file__).resolve().parents[2] / "shared"
SEED_DEMO = SHARED / "data" / "seed-demo-memory" / "demo-user"
LOCOMO = SHARED / "data" / "locomo"


class FixedClock:
    """A clock that advances by ``step`` on every call (deterministic timestamps)."""

    def __init__(self, start: _dt.datetime, step: _dt.timedelta = _dt.timedelta(seconds=1)) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> _dt.datetime:
        current = self.now
        self.now += self.step
        return current


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(_dt.datetime(2026, 4, 8, 10, 0, tzinfo=_dt.timezone(_dt.timedelta(hours=8))))


@pytest.fixture
def store(tmp_path: Path, clock: FixedClock) -> MemoryStore:
    """A fresh store in Asia/Shanghai with a deterministic clock."""
    return MemoryStore(tmp_path / "memory", zone="Asia/Shanghai", clock=clock)


@pytest.fixture
def seed_root(tmp_path: Path) -> Path:
    """A private copy of the original demo's memory folder (skips when ../shared is absent)."""
    if not SEED_DEMO.is_dir():
        pytest.skip(f"seed data not found at {SEED_DEMO}")
    root = tmp_path / "seed"
    shutil.copytree(SEED_DEMO, root / "demo-user")
    return root
