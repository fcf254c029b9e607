"""Helpers for the retrieval tests: small conversations written through the store's public append API."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentmem_nb import MemoryStore, UserMemory
from retrieval_conversation import CONVERSATION, ZONE, write_conversation  # noqa: F401 - re-exported to the tests

DATA = Path(__file__).parent / "data"

@pytest.fixture
def memory(store: MemoryStore) -> UserMemory:
    """A user holding :data:`CONVERSATION`."""
    user = store.user("alice")
    write_conversation(user, CONVERSATION)
    return user
