"""Conformance: long-term memory with history, conversations, the dialogue log, problems that never raise."""

from __future__ import annotations

import pytest
from contract_backends import Backend, capability

from agentmem_nb.errors import VersionConflict
from agentmem_nb.messages import ToolCall
from agentmem_nb.store import DialogueEntry
from agentmem_nb.store.contract import Store


def test_long_term_keeps_every_version_and_restores_any(store: Store) -> None:
    memory = store.user("alice").long_term
    assert memory.read() == "" and len(memory.history()) == 0
    first = memory.write("- likes tea\n")
    memory.add_note("lives in Lyon")
    memory.edit(lambda text: text.replace("tea", "coffee"))
    assert first is not None and len(memory.history()) == 3
    assert memory.read().startswith("- likes coffee")
    assert memory.text_at(first.version) == "- likes tea\n"
    restored = memory.restore(first.version)
    assert restored is not None and memory.read() == "- likes tea\n" and len(memory.history()) == 4
    assert memory.write("- likes tea\n") is None  # no change, no version


def test_a_write_on_a_stale_version_is_refused(store: Store) -> None:
    memory = store.user("alice").long_term
    memory.write("one")
    seen = memory.current().version
    memory.write("two")
    with pytest.raises(VersionConflict):
        memory.write("three", expected_version=seen)
    assert memory.read() == "two"


def test_conversations_are_listed_newest_first(store: Store) -> None:
    conversations = store.user("alice").conversations
    conversations.create("a", title="first")
    conversations.create("b")
    conversations.create("c")
    conversations.touch("a", title="ignored: a has a title")
    assert [c.session_id for c in conversations.list()] == ["a", "c", "b"]
    assert conversations.get("a").title == "first"  # type: ignore[union-attr]
    conversations.rename("b", "renamed")
    assert conversations.get("b").title == "renamed"  # type: ignore[union-attr]
    assert conversations.get("zzz") is None


def test_the_dialogue_log_round_trips(backend: Backend, store: Store) -> None:
    log = store.user("alice").log
    entry = DialogueEntry(entry_id=0, ts=store.clock(), session_id="s1", user_message="hi", assistant_reply="hello",
                          memory_context="- likes tea", timings_ms={"total": 12.5}, model="offline",
                          tool_calls=(ToolCall("search_session", {"keyword": "tea"}, "#1 ...", id="c1"),),
                          assistant_message_id=2)
    written = [log.append(entry), log.append(entry)]
    assert [w.entry_id for w in written] == [1, 2]
    again = backend.reopen(store).user("alice").log
    assert again.entries() == written and again.tail(1) == written[1:]
    assert len(again) == 2  # what a follower polls: entries past the count it saw are new


def test_problems_are_listed_never_raised(backend: Backend, store: Store) -> None:
    corrupt = capability(backend, "corrupt")
    user = store.user("alice")
    user.append("s1", "user", "kept")
    layer = user.session("s1")
    with pytest.warns(Warning):  # the skipped entry is announced once
        corrupt(layer)
        fresh = backend.reopen(store).user("alice")
        assert [m.content for m in fresh.session("s1").messages()] == ["kept"]
    assert fresh.session("s1").problems() and fresh.problems()
    assert fresh.append("s1", "user", "after").session.message_id == 2
