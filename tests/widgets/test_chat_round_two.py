"""ChatWidget, issue 19: the exact text of Enter, multi-line messages, Stop, open_message, the trace link, a new
user that writes nothing, readable error text, and the static HTML copy for readers without a kernel."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGenerationChunk

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, LLMConfig, OfflineChatModel
from agentmem_nb.widgets.chat import ChatWidget
from agentmem_nb.widgets.chat_controls import ChatInput
from agentmem_nb.widgets.trace import TurnTrace


def offline_service(store: MemoryStore) -> ChatService:
    return ChatService(store, config=LLMConfig())


@pytest.fixture
def chat(store: MemoryStore) -> ChatWidget:
    return ChatWidget(offline_service(store), user_id="alice", session_id="s1", stream_interval=0)


def test_enter_sends_the_text_that_came_with_it_not_a_stale_value(chat: ChatWidget, store: MemoryStore) -> None:
    # what the browser does when the last keystrokes' value update is still held back: the box's synced value
    # lags, the submit message carries the whole text
    chat.input.value = "I moved to Lyo"
    chat.input._handle_custom_msg({"event": "submit", "text": "I moved to Lyon in 2024."}, [])
    assert [m.content for m in store.user("alice").session("s1").tail(2)][0] == "I moved to Lyon in 2024."
    assert chat.input.value == ""


def test_multi_line_messages_keep_their_newlines(chat: ChatWidget, store: MemoryStore) -> None:
    assert isinstance(chat.input, ChatInput)  # a textarea in the browser: Shift+Enter adds a line
    chat.input._handle_custom_msg({"event": "submit", "text": "first line\nsecond line\n\nfourth"}, [])
    first = store.user("alice").session("s1").tail(2)[0]
    assert first.content == "first line\nsecond line\n\nfourth"
    assert "first line\nsecond line\n\nfourth" in chat.history.value  # shown with white-space: pre-wrap


class _Gate(OfflineChatModel):
    """Streams one piece of its reply, then waits for the test to open the gate before the rest."""

    started: Any = None
    gate: Any = None

    def respond(self, messages: list[Any]) -> AIMessage:  # type: ignore[override]
        return AIMessage(content="a very slow reply that goes on and on")

    def _stream(self, messages: list[Any], stop: Any = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        for index, piece in enumerate(super()._stream(messages, stop, run_manager, **kwargs)):
            if index == 1:
                self.started.set()
                assert self.gate.wait(10), "the test never opened the gate"
            yield piece


def test_stop_ends_a_slow_turn_as_cancelled_and_frees_the_session(store: MemoryStore) -> None:
    started, gate = threading.Event(), threading.Event()
    service = ChatService(store, model=_Gate(model_name="slow", started=started, gate=gate))
    chat = ChatWidget(service, user_id="alice", session_id="s1", stream_interval=0, run_in_thread=True)
    seen = []
    chat.on_turn(seen.append)
    chat.input.value = "tell me everything"
    chat.send_button.click()  # returns at once: the turn runs in the worker thread
    assert started.wait(10)
    assert chat.busy and chat.stop_button.layout.display == "flex" and not chat.stop_button.disabled
    chat.stop_button.click()  # heard while the turn runs
    assert "stopping" in chat.live.value
    gate.set()
    assert chat.wait(10)
    assert not chat.busy and chat.stop_button.layout.display == "none"
    assert seen[-1].result is not None and seen[-1].result.cancelled
    assert [m.role for m in store.user("alice").session("s1").tail(5)] == ["user"]  # nothing half-written
    assert store.user("alice").log.tail(1)[0].trace["cancelled"] is True
    assert "Stopped" in chat.error_area.value and chat.errors == []  # a stop is not an error
    assert chat.input.value == ""  # the stopped text is not put back as a draft to resend by accident
    gate.clear()
    service.model = OfflineChatModel()  # the next turn, at once, in the same session
    service._agents.clear()
    assert chat.send("hello again").error is None


def test_open_message_pages_back_and_highlights(store: MemoryStore) -> None:
    mem = store.user("alice")
    mem.conversations.create("long", title="long")
    for i in range(450):
        mem.append("long", "user" if i % 2 == 0 else "assistant", f"message number {i}")
    chat = ChatWidget(offline_service(store), user_id="alice", session_id="s1", page_size=200)
    chat.open_message("long", 7)
    assert chat.session_id == "long"
    assert any(m.message_id == 7 for m in chat.messages) and len(chat.messages) == 450  # paged back twice
    assert 'class="amn-msg amn-msg-user amn-msg-focus" data-message-id="7"' in chat.history.value
    assert chat.history.focus["message_id"] == 7
    with pytest.raises(LookupError, match="no message #9999"):
        chat.open_message("long", 9999)


def test_each_reply_links_to_its_trace(chat: ChatWidget) -> None:
    chat.send("I moved to Lyon in 2024.")
    result = chat.send("Where did I move?")
    assert result.assistant_message is not None
    reply_id = result.assistant_message.message_id
    assert f'data-trace="{reply_id}"' in chat.history.value
    assert f'data-trace="{result.user_message.message_id}"' not in chat.history.value  # answered: link on reply
    chat.history.click_trace(reply_id)  # what a click on the link sends
    assert isinstance(chat.trace, TurnTrace) and chat.trace.data is not None
    assert chat.trace_area.children == (chat.trace,)
    kinds = [span.kind for span in chat.trace.data.spans]
    assert kinds.count("model") == 3 and kinds.count("tool") == 2


def test_a_failed_turn_links_its_user_message_to_the_trace(store: MemoryStore) -> None:
    class Down(OfflineChatModel):
        def respond(self, messages: list[Any]) -> AIMessage:  # type: ignore[override]
            raise ConnectionError("the model is down")

    chat = ChatWidget(ChatService(store, model=Down()), user_id="alice", session_id="s1", stream_interval=0)
    result = chat.send("hello?")
    assert result.error
    assert f'data-trace="{result.user_message.message_id}"' in chat.history.value
    trace = chat.open_trace(result.user_message.message_id)
    assert trace.data is not None and trace.data.status == "error"
    assert "the model is down" in trace.view.value


def test_error_text_reads_as_a_sentence(store: MemoryStore) -> None:
    class Down(OfflineChatModel):
        def respond(self, messages: list[Any]) -> AIMessage:  # type: ignore[override]
            raise ConnectionError("the model is down")

    chat = ChatWidget(ChatService(store, model=Down()), user_id="alice", session_id="s1", stream_interval=0)
    chat.send("hello?")
    assert "Error while sending your message:" in chat.error_area.value
    assert "Error while send:" not in chat.error_area.value


def test_an_unknown_user_creates_nothing_until_the_first_message(chat: ChatWidget, store: MemoryStore) -> None:
    chat.send("alice was here")
    chat.user_box.value = "alcie"  # a typo
    assert chat.user_id == "alcie" and chat.is_new_user
    assert "new user: nothing is saved until the first message" in chat.status.value
    assert sorted(p.name for p in store.root.iterdir()) == ["alice"]
    chat.user_box.value = "alice"  # back: nothing of alcie remains
    assert sorted(p.name for p in store.root.iterdir()) == ["alice"]
    assert "alcie" not in store.users()


def test_the_static_copy_shows_the_conversation(chat: ChatWidget) -> None:
    chat.send("I prefer <b>green</b> tea")
    bundle = chat._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    static = bundle["text/html"]
    assert "I prefer &lt;b&gt;green&lt;/b&gt; tea" in static and "<script" not in static
    assert "2 messages" in static
    assert "data-trace" not in static and "data-trace" in chat.history.value  # no dead links in a snapshot


def test_a_redacted_message_shows_its_reason_in_the_chat(store: MemoryStore) -> None:
    from agentmem_nb.items import ItemKey
    mem = store.user("alice")
    mem.append("s1", "user", "my card number is 4111 1111 1111 1111")
    mem.append("s1", "assistant", "Noted.")
    chat = ChatWidget(offline_service(store), user_id="alice", session_id="s1")
    assert "4111" in chat.history.value
    mem.redactions.add(ItemKey("session", "s1", 1), reason="card number")
    chat.send("hello")  # the next look at the conversation draws it as its reason; the line is kept on disk
    assert "4111" not in chat.history.value and "[redacted: card number]" in chat.history.value
    assert [m.content for m in chat.messages][0] == "[redacted: card number]"
    assert "4111" in mem.session("s1").path.read_text(encoding="utf-8")
