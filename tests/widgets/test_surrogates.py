"""Text the store keeps but UTF-8 cannot carry (a lone surrogate from a JSON escape such as "\\ud800") still shows.

Before, a conversation holding one made ``ChatWidget`` raise on construction (nh3 refuses such text) and left the
inspector and timeline with widget states the kernel cannot send to the browser. The widgets now show U+FFFD in its
place; the files keep the text as written.
"""

from __future__ import annotations

import json
from pathlib import Path

import ipywidgets as widgets
import pytest

from agentmem_nb import MemoryStore, ToolCall
from agentmem_nb.agent import ChatService, LLMConfig
from agentmem_nb.widgets import ChatWidget, MemoryInspector, ToolTimeline
from agentmem_nb.widgets._callbacks import _parts
from agentmem_nb.widgets.html import displayable, escape, safe_markdown

LONE = "\ud800"


def assert_sendable(root: widgets.Widget) -> None:
    """Every part's state encodes as UTF-8 JSON, which is what the kernel sends to the browser."""
    for widget in [root, *_parts(root)]:
        json.dumps(widget.get_state(), ensure_ascii=False).encode("utf-8")


@pytest.fixture
def store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path, zone="UTC")
    alice = store.user("alice")
    alice.conversations.create("s1", title=f"title {LONE}")
    alice.append("s1", "user", f"lone {LONE} surrogate and Lyon")
    alice.append("s1", "assistant", "**reply** \udfff too",
                 tool_calls=[ToolCall(name="search_session", input={"keyword": LONE}, output=f"#1 lone {LONE}")])
    return store


def test_helpers_replace_only_lone_surrogates() -> None:
    assert displayable(f"a{LONE}b😀蓝") == "a\ufffdb😀蓝"
    assert escape(f"<{LONE}>") == "&lt;\ufffd&gt;"
    assert "\ufffd" in safe_markdown(f"**{LONE}**")
    assert displayable("plain") == "plain"


def test_the_chat_opens_and_sends_in_a_conversation_with_a_lone_surrogate(store: MemoryStore) -> None:
    chat = ChatWidget(ChatService(store, config=LLMConfig()), user_id="alice", session_id="s1")
    assert "lone \ufffd surrogate" in chat.history.value
    chat.send(f"again {LONE}, where is Lyon?")
    assert "again \ufffd" in chat.history.value
    assert_sendable(chat)
    # the files keep what was written
    assert store.user("alice").session("s1").messages()[-2].content == f"again {LONE}, where is Lyon?"


def test_the_inspector_and_timeline_show_it_as_a_replacement_character(store: MemoryStore) -> None:
    inspector = MemoryInspector(store, user_id="alice")
    hits = inspector.search("lone")
    assert hits
    inspector.select_hit(0)
    assert_sendable(inspector)
    tables = [json.loads(data) for data in inspector.table_data().values() if data]  # cells, as the browser gets them
    assert "\ufffd" in "".join(inspector.html_values().values()) + str(tables)

    timeline = ToolTimeline(store, user_id="alice")
    timeline.set_source("sessions")  # the calls stored with the messages (nothing went through the log here)
    timeline.filter(keyword="lone")
    assert len(timeline.df) == 1
    timeline.select(0)
    assert_sendable(timeline)
