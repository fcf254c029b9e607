"""ChatWidget through its Python API: send, streaming, tool panels, persistence, switching, errors, escaping, cost."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import html.parser
import re
from collections.abc import Iterator
from typing import Any

import ipywidgets as widgets
import pytest

from agentmem_nb import MemoryStore, ToolCall
from agentmem_nb.agent import ChatService, LLMConfig
from agentmem_nb.turns import TurnEvent, TurnResult
from agentmem_nb.widgets.chat import OFFLINE_HINT, ChatWidget

XSS_IMG = '<img src=x onerror="alert(1)">'
XSS_SCRIPT = "<script>window.__xss=1</script>"


# ---------------------------------------------------------------------- a fake service with the agent's contract
# Most tests drive the real ChatService with its offline model (the same graph, real tool calls). The fake below is for
# what the real one will not do on demand: raise mid-turn, stream a known number of tokens, or forget "done". It
# yields the real TurnEvent/TurnResult: the widget types against them.


class FakeService:
    """Persists like the real ChatService (user line, assistant line with meta.tool_calls, conversation touch) and
    streams tool events and tokens. ``raise_on`` makes a turn raise after the user line is written;
    ``fail_with`` makes it end with ``result.error``; ``stream=False`` hides ``stream_turn``."""

    def __init__(self, store: MemoryStore, *, offline: bool = True, raise_on: str | None = None,
                 fail_with: str | None = None, skip_done: bool = False) -> None:
        self.store = store
        self.offline = offline
        self.model_name = "offline-scripted" if offline else "gpt-test"
        self.raise_on = raise_on
        self.fail_with = fail_with
        self.skip_done = skip_done
        self.turns = 0

    def new_conversation(self, user_id: str, title: str = "") -> str:
        return self.store.user(user_id).conversations.create(title=title).session_id

    def turn(self, user_id: str, session_id: str, message: str) -> TurnResult:
        events = list(self.stream_turn(user_id, session_id, message))
        assert events[-1].kind == "done" and events[-1].result is not None
        return events[-1].result

    def stream_turn(self, user_id: str, session_id: str, message: str) -> Iterator[TurnEvent]:
        self.turns += 1
        mem = self.store.user(user_id)
        user_line = mem.append(session_id, "user", message).session
        if self.raise_on is not None and self.raise_on in message:
            raise RuntimeError(f"model exploded on {message!r}")
        keyword = message.split()[0] if message.split() else ""
        started = ToolCall(name="search_session", input={"keyword": keyword}, id=f"call_{self.turns}")
        yield TurnEvent("tool_started", tool_call=started)
        hits = mem.search_session(session_id, keyword, limit=5)
        output = "\n".join(m.anchor_line() for m in hits)
        call = dataclasses.replace(started, output=output, duration_ms=2.0)
        yield TurnEvent("tool_finished", tool_call=call)
        if self.fail_with:
            reply = f"Sorry, the model failed: {self.fail_with}"
            yield TurnEvent("error", text=self.fail_with)
        else:
            reply = f"You said **{message}** ({len(hits)} hits)"
        for i in range(0, len(reply), 8):
            yield TurnEvent("token", text=reply[i:i + 8])
        assistant = mem.append(session_id, "assistant", reply, tool_calls=[call]).session
        title = mem.conversations.touch(session_id, title=message[:30]).title
        if self.skip_done:
            return
        yield TurnEvent("done", result=TurnResult(reply, len(hits), title, (call,), {"total": 1.0}, self.fail_with,
                                                      user_line, assistant, user_id=user_id, session_id=session_id))


# ---------------------------------------------------------------------- helpers


class _Tags(html.parser.HTMLParser):
    """Every start tag and its attributes (what a browser would build from the HTML)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def tags_of(markup: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    parser = _Tags()
    parser.feed(markup)
    parser.close()
    return parser.tags


def assert_inert(markup: str) -> None:
    """No element that can run script: no script/img/iframe, no on* attribute, no javascript: URL."""
    for tag, attrs in tags_of(markup):
        assert tag not in {"script", "img", "iframe", "object", "embed", "svg"}, (tag, markup[:300])
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name, value)
            assert "javascript:" not in (value or "").lower(), (tag, name, value)


def all_widgets(root: widgets.Widget) -> list[widgets.Widget]:
    found = [root]
    for child in getattr(root, "children", ()):
        found += all_widgets(child)
    return found


def html_values(chat: ChatWidget) -> list[str]:
    return [w.value for w in all_widgets(chat) if isinstance(w, widgets.HTML)]


def real_service(store: MemoryStore) -> ChatService:
    # an explicit empty config: the offline model whatever config/llm.yaml or AGENTMEM_* say on this machine
    return ChatService(store, config=LLMConfig())


class CountingService:
    """The real service, recording every event it streamed."""

    def __init__(self, inner: ChatService) -> None:
        self.inner = inner
        self.store = inner.store
        self.offline = inner.offline
        self.model_name = inner.model_name
        self.events: list[Any] = []

    def new_conversation(self, user_id: str, title: str = "") -> str:
        return self.inner.new_conversation(user_id, title)

    def turn(self, user_id: str, session_id: str, message: str) -> Any:
        return self.inner.turn(user_id, session_id, message)

    def stream_turn(self, user_id: str, session_id: str, message: str) -> Iterator[Any]:
        for event in self.inner.stream_turn(user_id, session_id, message):
            self.events.append(event)
            yield event


@pytest.fixture
def service(store: MemoryStore) -> CountingService:
    return CountingService(real_service(store))


@pytest.fixture
def chat(service: CountingService, store: MemoryStore) -> ChatWidget:
    return ChatWidget(service, user_id="alice", session_id="s1", stream_interval=0)


MOVED = "I moved to Lyon in 2024 for a new job."
ASK = "Where did I move?"


# ---------------------------------------------------------------------- send


def test_send_returns_the_turn_result_and_renders_both_messages(chat: ChatWidget, store: MemoryStore) -> None:
    chat.send(MOVED)
    result = chat.send(ASK)
    assert "Lyon" in result.reply and result.error is None
    assert [call.name for call in result.tool_calls] == ["search_session", "get_session_window"]
    assert [m.role for m in chat.messages] == ["user", "assistant"] * 2
    history = chat.history.value
    assert history.count('class="amn-msg amn-msg-user"') == 2
    assert history.count('class="amn-msg amn-msg-assistant"') == 2
    assert "<p>Yes. Earlier in this conversation" in history  # the reply went through Markdown
    assert chat.live.value == ""  # the in-progress area is cleared once the history holds the turn
    assert repr(chat) == "ChatWidget(user='alice', session='s1', messages=4)"
    assert len(store.user("alice").session("s1")) == 4


def test_send_button_and_enter_both_send_and_clear_the_box(chat: ChatWidget, service: CountingService) -> None:
    chat.input.value = "first via button"
    chat.send_button.click()
    assert chat.input.value == ""
    chat.input.value = "second via enter"
    chat.input._handle_custom_msg({"event": "submit"}, [])  # what the Text view sends when Enter is pressed
    assert chat.input.value == ""
    assert [m.content for m in chat.messages if m.role == "user"] == ["first via button", "second via enter"]
    turns = sum(e.kind == "done" for e in service.events)
    chat.input.value = "   "
    chat.send_button.click()  # blank drafts are ignored, not sent
    assert sum(e.kind == "done" for e in service.events) == turns == 2 and chat.errors == []


def test_programmatic_send_rejects_blank_text(chat: ChatWidget, service: CountingService) -> None:
    with pytest.raises(ValueError, match="empty message"):
        chat.send("  \n")
    assert service.events == []
    assert "empty message" in chat.error_area.value


def test_controls_are_disabled_while_the_turn_runs(chat: ChatWidget) -> None:
    seen: list[bool] = []
    chat.live.observe(lambda _c: seen.append(chat.send_button.disabled and chat.input.disabled), names="value")
    chat.send(MOVED)
    assert len(seen) > 2 and all(seen[:-1])  # the last change is the clearing, after the controls came back
    assert not chat.send_button.disabled and not chat.input.disabled


# ---------------------------------------------------------------------- streaming and live progress


def test_tool_progress_and_streamed_reply_are_pushed_as_events_arrive(chat: ChatWidget,
                                                                      service: CountingService) -> None:
    chat.send(MOVED)
    service.events.clear()
    snapshots: list[str] = []
    chat.live.observe(lambda change: snapshots.append(change["new"]), names="value")
    chat.send(ASK)
    assert ASK in snapshots[0] and "thinking…" in snapshots[0]  # the user's message shows before any event
    progress = [s for s in snapshots if "amn-tool-progress" in s]
    assert "⏳ search_session" in progress[0] and "amn-tool-success" not in progress[0]
    assert "✓ search_session" in progress[1] and "⏳" not in progress[1]
    assert "⏳ get_session_window" in progress[2] and "✓ get_session_window" in progress[3]
    tokens = [e.text for e in service.events if e.kind == "token"]
    streamed = [s for s in snapshots if "amn-streaming-text" in s]
    assert len(tokens) > 3 and len(streamed) == len(tokens)  # one push per token with stream_interval=0
    assert escape_text("".join(tokens[:2])) in streamed[1] and escape_text("".join(tokens)) in streamed[-1]
    assert all("✓ get_session_window" in s for s in streamed)  # the finished tools stay listed above the reply
    assert snapshots[-1] == ""


def escape_text(text: str) -> str:
    import html as _html

    return _html.escape(text, quote=True)


def test_stream_interval_throttles_token_pushes_but_not_tool_events(store: MemoryStore) -> None:
    chat = ChatWidget(FakeService(store), store, user_id="alice", session_id="s1", stream_interval=3600)
    snapshots: list[str] = []
    chat.live.observe(lambda change: snapshots.append(change["new"]), names="value")
    chat.send("throttled message with a long enough reply")
    assert sum("amn-streaming-text" in s for s in snapshots) == 1  # the first piece; the rest came within the hour
    assert any("amn-tool-running" in s for s in snapshots) and any("amn-tool-success" in s for s in snapshots)
    assert "throttled message" in chat.history.value


def test_a_fake_streams_exactly_its_tokens(store: MemoryStore) -> None:
    chat = ChatWidget(FakeService(store), store, user_id="alice", session_id="s1", stream_interval=0)
    snapshots: list[str] = []
    chat.live.observe(lambda change: snapshots.append(change["new"]), names="value")
    chat.send("Lyon again")
    reply = "You said **Lyon again** (1 hits)"
    streamed = [s for s in snapshots if "amn-streaming-text" in s]
    assert len(streamed) == -(-len(reply) // 8)
    assert reply in streamed[-1]  # raw text while streaming; Markdown once it is in the history
    assert "<strong>Lyon again</strong>" in chat.history.value


def test_a_service_without_stream_turn_still_works(store: MemoryStore) -> None:
    class TurnOnly:
        def __init__(self) -> None:
            self.inner = real_service(store)
            self.store = store
            self.offline = True
            self.model_name = "plain"

        def turn(self, user_id: str, session_id: str, message: str) -> Any:
            return self.inner.turn(user_id, session_id, message)

        def new_conversation(self, user_id: str, title: str = "") -> str:
            return self.inner.new_conversation(user_id, title)

    chat = ChatWidget(TurnOnly(), user_id="alice", session_id="s1")  # type: ignore[arg-type]
    chat.send(MOVED)
    assert "Lyon" in chat.send(ASK).reply
    assert len(chat.messages) == 4 and chat.history.value.count('class="amn-tool-panel"') == 1


# ---------------------------------------------------------------------- tool panels and persistence


def test_tool_panel_shows_name_input_and_output(chat: ChatWidget) -> None:
    chat.send(MOVED)
    chat.send("I prefer green tea")
    chat.send(ASK)
    panels = chat.history.value.split('<details class="amn-tool-panel">')[1:]
    assert len(panels) == 2  # the first reply used no tool, so it has no panel
    note, recall = panels
    assert "1 tool call: remember_note" in note and "&quot;note&quot;: &quot;User prefers green tea&quot;" in note
    assert "2 tool calls: search_session, get_session_window" in recall
    assert "&quot;keyword&quot;: &quot;move&quot;" in recall  # the input, pretty-printed and escaped
    assert re.search(r"#1 \[[0-9: -]+\] user: I moved to Lyon in 2024", recall)  # the output: the hit found
    assert recall.count('<span class="amn-tool-status">success') == 2


def test_long_tool_output_is_cut_with_a_count(chat: ChatWidget, store: MemoryStore) -> None:
    big = ToolCall(name="get_session_window", input={"message_id": 1}, output="x" * 10_000, id="c1")
    store.user("alice").append("s1", "assistant", "done", tool_calls=[big])
    chat.refresh()
    assert "(6000 more characters not shown)" in chat.history.value
    assert chat.history.value.count("x" * 100) == 40


def test_reopening_after_a_restart_rebuilds_the_same_panels(tmp_path: Any, clock: Any) -> None:
    root = tmp_path / "memory"
    first_store = MemoryStore(root, zone="Asia/Shanghai", clock=clock)
    first = ChatWidget(real_service(first_store), user_id="alice", session_id="s1")
    first.send(MOVED)
    first.send("I prefer green tea")
    first.send(ASK)
    before = first.history.value
    assert before.count('class="amn-tool-panel"') == 2

    # a new kernel: fresh store object, fresh service, fresh widget on the same files
    second_store = MemoryStore(root, zone="Asia/Shanghai", clock=clock)
    second = ChatWidget(real_service(second_store), user_id="alice")
    assert second.session_id == "s1"  # the most recent conversation opens by default
    assert second.history.value == before
    assert second.render_count == 6


def test_legacy_tool_calls_with_text_input_render(chat: ChatWidget, store: MemoryStore) -> None:
    # the original demo stored input as JSON text and no id
    store.user("alice").session("s1")._file.append({  # a raw line, as the original demo wrote it
        "ts": "2026-04-08T10:00:00+08:00", "role": "assistant", "content": "old reply", "tags": ["session"],
        "meta": {"tool_calls": [{"name": "search_daily", "input": '{"keyword": "job"}', "output": "#3 ..."}]},
    })
    chat.refresh()
    assert "search_daily" in chat.history.value
    assert "&quot;keyword&quot;: &quot;job&quot;" in chat.history.value


# ---------------------------------------------------------------------- conversations and users


def test_new_conversation_and_switching_back(chat: ChatWidget, store: MemoryStore) -> None:
    chat.send("Lyon first thread")
    new_id = chat.new_conversation()
    assert chat.session_id == new_id and chat.messages == ()
    assert "No messages yet" in chat.history.value
    assert [value for _label, value in chat.conversation_list.options].count(new_id) == 1
    chat.send("second thread message")
    labels = dict((value, label) for label, value in chat.conversation_list.options)
    assert re.fullmatch(r"\d\d-\d\d \d\d:\d\d · Lyon first thread", labels["s1"])
    assert labels[new_id].endswith(" · second thread message")
    assert [v for _l, v in chat.conversation_list.options] == [new_id, "s1"]  # newest first

    chat.conversation_list.value = "s1"  # what clicking the entry in the browser does
    assert chat.session_id == "s1"
    assert [m.content for m in chat.messages][0] == "Lyon first thread"

    chat.new_button.click()
    assert chat.session_id not in (new_id, "s1")
    assert len(store.user("alice").conversations.list()) == 3  # created at creation, not at the first message


def test_switch_user_opens_that_users_latest_conversation(chat: ChatWidget, store: MemoryStore,
                                                          service: CountingService) -> None:
    chat.send("alice speaks")
    bob = store.user("bob")
    bob.conversations.create("b1", title="bob's thread")
    bob.append("b1", "user", "bob speaks")
    chat.switch_user("bob")
    assert (chat.user_id, chat.session_id) == ("bob", "b1")
    assert "bob speaks" in chat.history.value and "alice speaks" not in chat.history.value
    assert set(chat.user_box.options) == {"alice", "bob"}

    chat.user_box.value = "carol"  # typed into the user box: a new user, nothing on disk until the first message
    assert chat.user_id == "carol" and chat.messages == () and chat.is_new_user
    assert not (store.root / "carol").exists()
    assert "new user" in chat.status.value
    chat.send("carol speaks")
    assert store.user("carol").conversations.list()[0].session_id == chat.session_id
    assert "new user" not in chat.status.value

    chat.user_box.value = "alice"
    assert (chat.user_id, chat.session_id) == ("alice", "s1")


def test_an_invalid_user_is_refused_in_the_widget(chat: ChatWidget) -> None:
    chat.user_box.value = "../etc"
    assert chat.user_id == "alice" and chat.user_box.value == "alice"
    assert "user_id" in chat.error_area.value and "Error while switching to that user:" in chat.error_area.value
    assert chat.last_error is not None and chat.last_error.action == "switching to that user"


def test_refresh_picks_up_messages_written_elsewhere(chat: ChatWidget, store: MemoryStore) -> None:
    chat.send("hello")
    store.user("alice").append("s1", "user", "written by another cell")
    assert "written by another cell" not in chat.history.value
    before = chat.render_count
    chat.refresh()
    assert "written by another cell" in chat.history.value
    assert chat.render_count == before + 1  # only the new message was rendered


def test_default_session_is_the_newest_thread_or_a_new_one(store: MemoryStore, service: CountingService) -> None:
    fresh = ChatWidget(service, store, user_id="dora")
    assert not (store.root / "dora").exists()  # a new conversation of a new user: saved with its first message
    fresh.send("hello")
    assert store.user("dora").conversations.get(fresh.session_id) is not None
    # threads on disk without a conversation index: the one spoken in last opens
    eve = store.user("eve")
    eve.append("old", "user", "old thread")
    eve.append("recent", "user", "recent thread")
    assert ChatWidget(service, store, user_id="eve").session_id == "recent"


# ---------------------------------------------------------------------- banner


@pytest.mark.parametrize("offline", [True, False])
def test_offline_banner_only_for_the_offline_model(store: MemoryStore, offline: bool) -> None:
    chat = ChatWidget(FakeService(store, offline=offline), store, user_id="alice", session_id="s1")
    assert (chat.banner.layout.display != "none") is offline
    assert ("config/llm.yaml" in chat.banner.value) is offline
    assert ("AGENTMEM_API_KEY" in chat.banner.value) is offline
    assert "amn-offline-banner" in chat.banner._dom_classes
    assert OFFLINE_HINT.startswith("Offline model")


# ---------------------------------------------------------------------- errors are shown, never lost


def test_service_exception_from_the_button_is_shown_and_the_draft_kept(store: MemoryStore) -> None:
    chat = ChatWidget(FakeService(store, raise_on="boom"), store, user_id="alice", session_id="s1")
    chat.input.value = "boom please"
    chat.send_button.click()  # must not raise out of the callback
    assert "RuntimeError: model exploded on &#x27;boom please&#x27;" in chat.error_area.value
    assert "traceback" in chat.error_area.value
    assert chat.input.value == "boom please"  # the draft comes back for a retry
    assert not chat.send_button.disabled
    assert [m.content for m in chat.messages] == ["boom please"]  # the user's message was kept
    assert chat.live.value == ""


def test_service_exception_from_send_is_shown_and_raised(store: MemoryStore) -> None:
    chat = ChatWidget(FakeService(store, raise_on="boom"), store, user_id="alice", session_id="s1")
    with pytest.raises(RuntimeError, match="model exploded"):
        chat.send("boom")
    assert chat.last_error is not None and isinstance(chat.last_error.error, RuntimeError)
    chat.send("fine now")
    assert chat.error_area.value == ""  # a successful send clears the previous error


def test_failed_turn_reported_in_the_result_is_shown(store: MemoryStore) -> None:
    chat = ChatWidget(FakeService(store, fail_with="HTTP 503 from the model"), store, user_id="alice",
                      session_id="s1")
    result = chat.send("hello")
    assert result.error == "HTTP 503 from the model"
    assert "HTTP 503 from the model" in chat.error_area.value
    assert "Sorry, the model failed" in chat.history.value


def test_a_stream_without_done_is_an_error_not_silence(store: MemoryStore) -> None:
    chat = ChatWidget(FakeService(store, skip_done=True), store, user_id="alice", session_id="s1")
    chat.input.value = "hello"
    chat.send_button.click()
    assert "without a &#x27;done&#x27; event" in chat.error_area.value
    assert len(chat.messages) == 2  # what was saved is still shown


# ---------------------------------------------------------------------- escaping


@pytest.mark.parametrize("payload", [XSS_IMG, XSS_SCRIPT, '"><svg onload=alert(1)>', "[x](javascript:alert(1))",
                                     "<a href='javascript:alert(1)'>x</a>", "`<img src=x onerror=alert(1)>`"])
def test_payloads_are_inert_in_every_html_value(store: MemoryStore, payload: str) -> None:
    service = FakeService(store, raise_on="RAISE")
    chat = ChatWidget(service, store, user_id="alice", session_id="s1", stream_interval=0)
    snapshots: list[str] = []
    chat.live.observe(lambda change: snapshots.append(change["new"]), names="value")
    chat.send(payload)  # reply, tool input, tool output and title all carry the payload
    with pytest.raises(RuntimeError):
        chat.send("RAISE " + payload)  # the error area carries it too
    chat.conversation_list.value = "s1"
    values = html_values(chat) + snapshots
    assert any(payload.split()[0][:4] in v or "&lt;" in v for v in values)
    for value in values:
        assert_inert(value)
    text = chat.history.value
    if payload.startswith("<"):
        assert "&lt;" + payload[1:6] in text  # shown as text, not dropped
    # the conversation list holds plain-text labels (Select options are never HTML)
    assert any(payload[:10] in label for label, _v in chat.conversation_list.options)


@pytest.mark.parametrize("payload", [XSS_IMG, XSS_SCRIPT])
def test_payloads_through_the_real_agent_show_as_text(chat: ChatWidget, payload: str) -> None:
    snapshots: list[str] = []
    chat.live.observe(lambda change: snapshots.append(change["new"]), names="value")
    stated = chat.send(f"I prefer {payload} tea")  # remember_note: payload in reply, tool input and output
    assert payload in stated.reply and stated.tool_calls[0].name == "remember_note"
    asked = chat.send(f"what did I say about {payload}?")
    assert asked.tool_calls
    for value in html_values(chat) + snapshots:
        assert_inert(value)
    history = chat.history.value
    escaped = escape_text(payload)
    assert history.count(escaped) >= 3  # the user line, and the reply; more in the tool panel
    panel = history.split('<details class="amn-tool-panel">')[1]
    assert escape_text(escape_text(payload)) not in history  # escaped once, not twice (it would show as &lt;)
    assert escape_text(payload.replace('"', '\\"')) in panel or escaped in panel  # JSON-quoted input, escaped


def test_roles_from_disk_cannot_inject_class_names(chat: ChatWidget, store: MemoryStore) -> None:
    store.user("alice").session("s1")._file.append({"ts": "2026-04-08T10:00:00+08:00",  # a raw line from disk
                                                    "role": '"><img src=x onerror=1>', "content": "odd", "tags": []})
    chat.refresh()
    assert 'class="amn-msg amn-msg-other"' in chat.history.value
    assert_inert(chat.history.value)


# ---------------------------------------------------------------------- long conversations


def _fill(store: MemoryStore, count: int) -> None:
    mem = store.user("alice")
    call = ToolCall(name="search_session", input={"keyword": "x"}, output="#1 [..] user: x", id="c")
    start = _dt.datetime(2026, 4, 1, 9, 0, tzinfo=_dt.timezone.utc)
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        mem.append("long", role, f"message {i} with *some* markdown", ts=start + _dt.timedelta(minutes=i),
                   tool_calls=[call] if role == "assistant" else ())


def test_a_1000_message_conversation_renders_one_page_in_constant_widgets(store: MemoryStore,
                                                                          service: CountingService) -> None:
    empty = ChatWidget(service, store, user_id="alice", session_id="empty")
    _fill(store, 1000)
    chat = ChatWidget(service, store, user_id="alice", session_id="long")
    assert len(all_widgets(chat)) == len(all_widgets(empty))  # one HTML string, not a widget per message
    assert chat.render_count == 200 and len(chat.messages) == 200
    assert chat.messages[-1].content.startswith("message 999 ")
    assert chat.history.value.count('<div class="amn-msg ') == 200
    assert chat.history.value.count('class="amn-tool-panel"') == 100
    assert len(chat.history.value) < 200 * 1500  # per-message HTML stays small
    assert chat.earlier_button.layout.display == "flex"
    assert chat.earlier_button.description == "Show 200 earlier (800 hidden)"
    assert repr(chat) == "ChatWidget(user='alice', session='long', messages=1000)"

    chat.earlier_button.click()
    assert len(chat.messages) == 400 and chat.render_count == 400  # the newest 200 came from the cache
    assert chat.hidden_count == 600

    before = chat.render_count
    chat.send("one more")
    assert chat.render_count == before + 2  # a turn renders only its two new messages
    assert len(chat.messages) == 400 and chat.messages[-1].role == "assistant"


def test_everything_is_reachable_by_pages(store: MemoryStore, service: CountingService) -> None:
    _fill(store, 450)
    chat = ChatWidget(service, store, user_id="alice", session_id="long", page_size=200)
    chat.show_earlier()
    chat.show_earlier()
    assert len(chat.messages) == 450 and chat.hidden_count == 0
    assert chat.earlier_button.layout.display == "none"
    assert chat.messages[0].content.startswith("message 0 ")


def test_constructor_arguments_are_checked(store: MemoryStore, service: CountingService) -> None:
    class NoStore:
        offline = True
        model_name = "x"

    with pytest.raises(TypeError, match="pass it as ChatWidget"):
        ChatWidget(NoStore(), user_id="alice")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="page_size"):
        ChatWidget(service, store, user_id="alice", page_size=0)
    with pytest.raises(ValueError, match="user_id"):
        ChatWidget(service, store, user_id="../x")


def test_a_turn_whose_display_raised_frees_its_session_at_once(store: MemoryStore, monkeypatch: Any) -> None:
    """Showing an event failed mid-stream: the stream is closed then and there (recorded as an abandoned turn), so
    the kept error — whose traceback holds the stream's frames — does not keep the session busy."""
    from agentmem_nb.widgets.chat_state import LiveTurn

    original = LiveTurn.apply
    failures = []

    def apply_once_broken(self: Any, event: Any) -> None:
        if getattr(event, "kind", "") == "tool_started" and not failures:
            failures.append(event)
            raise ValueError("display broke")
        original(self, event)

    monkeypatch.setattr(LiveTurn, "apply", apply_once_broken)
    chat = ChatWidget(real_service(store), user_id="alice", session_id="s1", stream_interval=0)
    chat.send(MOVED)
    with pytest.raises(ValueError, match="display broke"):
        chat.send(ASK)
    assert chat.last_error is not None  # kept for the widget, traceback and all
    result = chat.send("Are you still there?")  # the same session, the same thread: not SessionBusy
    assert result.error is None
    log = store.user("alice").log.entries()
    assert [entry.error is not None for entry in log] == [False, True, False]  # the broken turn is on record
