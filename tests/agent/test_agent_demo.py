"""Seeding the demo: it plays through the agent, and never through a configured real model."""

from __future__ import annotations

import datetime as _dt

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.agent import OfflineChatModel
from agentmem_nb.testing.demo import DemoConversation, seed_demo

TINY = (DemoConversation("tiny", _dt.datetime(2026, 4, 6, 9, 0), ("My sister Chloé lives in Lyon.",
                                                                    "Where does my sister live?")),)


def test_seeding_stays_offline_when_an_api_key_is_configured(store: MemoryStore, fake_openai,  # noqa: ANN001
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # A configured key (pointed at the loopback fake, so a regression shows up as requests, not as network traffic).
    monkeypatch.setenv("AGENTMEM_API_KEY", "test-key")
    monkeypatch.setenv("AGENTMEM_BASE_URL", fake_openai.url)
    monkeypatch.setenv("AGENTMEM_LLM_MAX_RETRIES", "0")

    assert seed_demo(store, user_id="u1", conversations=TINY) == 2

    assert fake_openai.requests == []
    entries = store.user("u1").log.entries()
    assert [e.model for e in entries] == [OfflineChatModel().model_name] * 2
    assert all(e.error is None for e in entries)
    assert "Lyon" in entries[-1].assistant_reply


def test_seeding_uses_the_model_it_is_given(store: MemoryStore) -> None:
    class Named(OfflineChatModel):
        model_name: str = "scripted"

    seed_demo(store, user_id="u1", conversations=TINY, model=Named())
    assert [e.model for e in store.user("u1").log.entries()] == ["scripted", "scripted"]
