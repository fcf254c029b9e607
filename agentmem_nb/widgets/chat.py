"""``ChatWidget``: talk to the memory agent in a notebook and see which tools it used.

Layout (CSS classes in brackets, the browser test addresses them)::

    ┌ conversations [amn-chat-conversations] ┐ ┌ offline banner [amn-offline-banner] ───────────────┐
    │ + New conversation [amn-chat-new]      │ │ history [amn-chat-history]                         │
    │ user [amn-chat-user]                   │ │   user bubble [amn-msg-user]                       │
    └────────────────────────────────────────┘ │   assistant bubble [amn-msg-assistant]             │
                                               │     <details> tool calls [amn-tool-panel]          │
                                               │ live progress / streamed reply [amn-chat-live]     │
                                               │ errors [amn-chat-error]                            │
                                               │ [amn-chat-input] [Send: amn-chat-send]             │
                                               └────────────────────────────────────────────────────┘

The widget holds no memory of its own: history and tool panels are rebuilt from the store (``meta.tool_calls`` of
each assistant line), so reopening a conversation after a kernel restart shows the same panels. Every piece of text
that came from a user, a model or a tool goes through :mod:`agentmem_nb.widgets.html` before it becomes HTML.

Long conversations stay cheap: only the last ``page_size`` messages are rendered (a "show earlier" button pages
back), the history is one HTML string rather than one widget per message, and each message's HTML is cached so a new
turn renders only the new messages.

>>> # from agentmem_nb.agent import ChatService
>>> # chat = ChatWidget(ChatService(store), user_id="alice"); chat           # display in a cell
>>> # result = chat.send("Where did I move last year?")                      # drive it from code
>>> # handle = chat.on_turn(print)   # called with a ChatEvent after every turn and every switch; handle.close()

Other widgets follow the chat through :meth:`ChatWidget.on_turn`: ``MemoryInspector(store).follow(chat)`` and
``ToolTimeline(store).follow(chat)`` refresh themselves after each turn (see :mod:`agentmem_nb.widgets._follow`).
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import ipywidgets as widgets

from agentmem_nb.identifiers import check_session_id, check_user_id
from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.redact import redact
from agentmem_nb.turns import TurnEvent, TurnResult
from agentmem_nb.widgets._callbacks import CallbackErrors, WidgetError
from agentmem_nb.widgets._turns import (
    ChatEvent,
    TurnCallback,
    TurnObservers,
    TurnSubscription,
    callback_name,
)
from agentmem_nb.widgets.html import displayable, escape, pretty_json, safe_markdown

if TYPE_CHECKING:
    from agentmem_nb.store import MemoryStore, MessageFile

__all__ = ["ChatWidget", "ChatError", "ChatEvent", "TurnSubscription", "OFFLINE_HINT"]

OFFLINE_HINT = (
    "Offline model in use: replies come from a deterministic scripted model that still calls the real memory "
    "tools, so nothing leaves this machine. To talk to a real model, put "
    "<code>llm: {api_key: …, model: …, base_url: …}</code> in <code>config/llm.yaml</code>, or set "
    "<code>AGENTMEM_API_KEY</code> (and optionally <code>AGENTMEM_MODEL</code>, <code>AGENTMEM_BASE_URL</code>), "
    "then restart the kernel."
)
"""The banner shown when ``service.offline`` is true (static HTML: no user text in it)."""

_TOOL_OUTPUT_SHOWN = 4000
"""Characters of a tool output shown in a panel: outputs can be whole windows of a thread, and a 1,000-message
conversation with several calls per turn would otherwise ship megabytes of HTML. The rest is counted, not hidden
silently."""

_KNOWN_ROLES = {"user", "assistant", "system", "tool"}


class _Service(Protocol):
    """What the widget needs from :class:`agentmem_nb.agent.ChatService` (a fake with these members works too)."""

    @property
    def offline(self) -> bool: ...

    @property
    def model_name(self) -> str: ...

    def turn(self, user_id: str, session_id: str, message: str) -> TurnResult: ...

    def stream_turn(self, user_id: str, session_id: str, message: str) -> Iterator[TurnEvent]: ...

    def new_conversation(self, user_id: str, title: str = "") -> str: ...


ChatError = WidgetError
"""The chat's name for :class:`~agentmem_nb.widgets._callbacks.WidgetError` (kept for existing code); ``error`` is
``None`` when the service reported a failed turn through ``TurnResult.error`` instead of raising."""


class ChatWidget(CallbackErrors, widgets.VBox):
    """A chat box over a :class:`~agentmem_nb.agent.ChatService` and the store it writes to.

    Args:
        service: the chat service (``turn``/``stream_turn``/``new_conversation``/``offline``/``model_name``).
        store: the :class:`~agentmem_nb.store.MemoryStore` the service writes to; defaults to ``service.store``.
        user_id: whose memory to talk to.
        session_id: the conversation to open; ``None`` opens the user's most recent one (or starts a new one).
        page_size: how many of the newest messages are rendered; "show earlier" adds another page.
        stream_interval: streamed tokens are pushed to the browser at most this often (seconds); every tool event
            and the end of the turn are always pushed. ``0`` pushes every token (tests).
    """

    _css_root = "amn-chat-root"
    _css_error = "amn-chat-error"
    _clear_error_on_action = False  # an error stays shown until the next turn starts (``_chat_send`` clears it)

    def __init__(
        self,
        service: _Service,
        store: MemoryStore | None = None,
        *,
        user_id: str,
        session_id: str | None = None,
        page_size: int = 200,
        stream_interval: float = 0.05,
    ) -> None:
        # first: Widget.__del__ calls close(), which needs it, even when a check below rejects the arguments
        self._observers = TurnObservers()
        store = store if store is not None else getattr(service, "store", None)
        if store is None:
            raise TypeError(f"ChatWidget needs the MemoryStore the service writes to: {type(service).__name__} has "
                            "no .store attribute, so pass it as ChatWidget(service, store, user_id=...)")
        if page_size < 1:
            raise ValueError(f"page_size must be >= 1, got {page_size!r}")
        self.service = service
        self.store = store
        self.page_size = int(page_size)
        self.stream_interval = float(stream_interval)
        self.user_id = check_user_id(user_id)
        self.session_id = ""
        self._init_callbacks()  # errors, error_area, _syncing (set while the widget changes the list/user box)
        self.render_count = 0
        """How many messages were rendered to HTML since creation (a cost measure: cached messages do not count)."""

        self._messages: list[Message] = []  # the rendered tail of the current conversation, oldest first
        self._known_total = 0  # lines the layer had when _messages was last synced
        self._shown = self.page_size
        self._rendered: dict[int, str] = {}  # message_id -> HTML, for the current conversation only

        self.banner = widgets.HTML(layout=widgets.Layout(display="flex" if service.offline else "none"))
        self.banner.value = (f'<div class="amn-chat-root amn-offline-banner-text">{OFFLINE_HINT}</div>'
                             if service.offline else "")
        self.banner.add_class("amn-offline-banner")
        self.earlier_button = widgets.Button(description="Show earlier", icon="angle-up",
                                             layout=widgets.Layout(display="none", width="auto"))
        self.earlier_button.add_class("amn-chat-earlier")
        self.history = widgets.HTML()
        self.history.add_class("amn-chat-history")
        self.live = widgets.HTML()
        self.live.add_class("amn-chat-live")
        self.input = widgets.Text(placeholder="Message… (Enter sends)", continuous_update=True,
                                  layout=widgets.Layout(flex="1 1 auto", width="auto"))
        self.input.add_class("amn-chat-input")
        self.send_button = widgets.Button(description="Send", button_style="primary", icon="paper-plane",
                                          layout=widgets.Layout(width="auto"))
        self.send_button.add_class("amn-chat-send")
        self.conversation_list = widgets.Select(options=[], rows=10, layout=widgets.Layout(width="auto"))
        self.conversation_list.add_class("amn-chat-conversations")
        self.new_button = widgets.Button(description="New conversation", icon="plus",
                                         layout=widgets.Layout(width="auto"))
        self.new_button.add_class("amn-chat-new")
        self.user_box = widgets.Combobox(value=self.user_id, options=self.store.users(), ensure_option=False,
                                         continuous_update=False, description="User",
                                         style={"description_width": "36px"}, layout=widgets.Layout(width="auto"))
        self.user_box.add_class("amn-chat-user")
        self.status = widgets.HTML()
        self.status.add_class("amn-chat-status")
        style = widgets.HTML(_STYLE)

        # a fixed-width column: without flex "0 0" the chat column's flex-grow squeezes it to its minimum
        sidebar = widgets.VBox([self.user_box, self.new_button, self.conversation_list, self.status],
                               layout=widgets.Layout(width="250px", min_width="250px", flex="0 0 250px"))
        main = widgets.VBox(
            [self.banner, self.earlier_button, self.history, self.live, self.error_area,
             widgets.HBox([self.input, self.send_button])],
            layout=widgets.Layout(flex="1 1 auto", width="auto"),
        )
        super().__init__([style, widgets.HBox([sidebar, main])])
        self.add_class("amn-chat")

        self.send_button.on_click(self._on_send_click)
        # Enter: the Text view sends a custom {"event": "submit"} message on Enter (the mechanism behind the
        # deprecated Text.on_submit). The replacement ipywidgets suggests, continuous_update=False + observe('value'),
        # also fires when the box merely loses focus — typing, then clicking "New conversation" would post the
        # draft into the old conversation. So listen for the submit message itself.
        self.input.on_msg(self._on_input_msg)
        self.earlier_button.on_click(self._guarded("show earlier", lambda _b: self.show_earlier()))
        self.new_button.on_click(self._guarded("new conversation", lambda _b: self.new_conversation()))
        self.conversation_list.observe(self._guarded_change("switch conversation", self._pick_conversation),
                                       names="value")
        self.user_box.observe(self._guarded_change("switch user", self._pick_user), names="value")

        self._open(session_id)

    # ------------------------------------------------------------------ public API

    def __repr__(self) -> str:
        count = len(self._layer()) if self.session_id else 0  # no session yet while __init__ runs
        return f"ChatWidget(user={self.user_id!r}, session={self.session_id!r}, messages={count})"

    @property
    def messages(self) -> tuple[Message, ...]:
        """The messages currently rendered (the newest ``page_size``, or more after :meth:`show_earlier`)."""
        return tuple(self._messages)

    @property
    def hidden_count(self) -> int:
        """Older messages of this conversation not rendered yet."""
        return max(0, self._known_total - len(self._messages))

    def send(self, text: str) -> TurnResult:
        """Send ``text`` as the user, update the widget while the turn runs, and return the ``TurnResult``.

        Errors raised by the service are shown in the widget's error area *and* re-raised; a turn that failed inside
        the service (``result.error``) is shown and returned. Either way the :meth:`on_turn` callbacks run last.
        """
        text = str(text)
        event: ChatEvent | None = None
        user_id, session_id = self.user_id, self.session_id
        try:
            if not text.strip():
                raise ValueError("cannot send an empty message: type some text first")  # nothing sent, nobody told
            try:
                result = self._chat_send(text)
            except Exception as exc:
                # the service may have written the user's message and the log line before it raised
                event = ChatEvent("turn", user_id, session_id, error=redact(f"{type(exc).__name__}: {exc}"))
                raise
            error = result.error
            event = ChatEvent("turn", user_id, session_id, result=result, error=error or "")
            if error:
                # the service kept the user's message and logged the failure; its visible reply is not persisted,
                # so this is the only place the person sees it
                reply = result.reply
                shown = f"the turn failed: {error}" + (f" — {reply}" if reply and error not in reply else "")
                self._show_error("send", None, message=shown)
            return result
        except Exception as exc:
            self._show_error("send", exc)
            raise
        finally:
            # observers are told last: their errors show under the turn's, their refreshes see all the turn wrote
            if event is not None:
                self._notify(event)

    def on_turn(self, callback: TurnCallback, *, weak: bool = False) -> TurnSubscription:
        """Call ``callback(event)`` with a :class:`~agentmem_nb.widgets._turns.ChatEvent` after every turn this
        widget runs and every switch of conversation or user; returns the subscription (``.close()`` ends it).

        A turn's event comes once the service is done and the history is shown — also for a failed turn
        (``event.error``), whose user message and log line the service may already have written; a turn stopped by
        ``KeyboardInterrupt`` sends none. Callbacks run in subscription order; one that raises is shown in this
        widget's error area (under the turn's own error, if any) and the others still run. ``weak=True`` holds the
        callback weakly (a bound method: its object), so subscribing does not keep a closed widget alive.

        >>> # handle = chat.on_turn(lambda event: print(event.kind, event.session_id, event.error))
        >>> # handle.close()
        """
        return self._observers.add(callback, weak=weak)

    @property
    def observer_count(self) -> int:
        """How many :meth:`on_turn` callbacks are subscribed and alive."""
        return len(self._observers)

    def close(self) -> None:
        """Drop every :meth:`on_turn` subscription, then close the widget and its parts."""
        self._observers.clear()
        super().close()

    def refresh(self) -> None:
        """Pick up messages and conversations written by someone else (another cell, another process)."""
        self._sync_history()
        self._refresh_conversations()
        self._refresh_users()

    def show_earlier(self) -> None:
        """Render another ``page_size`` older messages."""
        self._shown += self.page_size
        self._sync_history(reload=True)

    def switch_conversation(self, session_id: str) -> None:
        """Open another conversation of the current user."""
        session_id = check_session_id(session_id)
        if session_id != self.session_id:
            before = (self.user_id, self.session_id)
            self._open(session_id)
            self._notify_switch(*before)

    def new_conversation(self, title: str = "") -> str:
        """Start a conversation (registered in ``conversations.json`` now) and open it; returns its id."""
        before = (self.user_id, self.session_id)
        session_id = self.service.new_conversation(self.user_id, title=title)
        self._open(session_id)
        self._notify_switch(*before)
        return session_id

    def switch_user(self, user_id: str, session_id: str | None = None) -> None:
        """Talk as another user: opens ``session_id`` or that user's most recent conversation (a new one if none)."""
        user_id = check_user_id(user_id)
        before = (self.user_id, self.session_id)
        self.user_id = user_id
        self._open(session_id)
        self._notify_switch(*before)

    # ------------------------------------------------------------------ a turn

    def _chat_send(self, text: str) -> TurnResult:
        self.clear_error()
        self._set_busy(True)
        live = _LiveTurn(text, self._push_live, interval=self.stream_interval)
        live.push(force=True)
        try:
            return self._run_turn(text, live)
        finally:
            self._set_busy(False)
            self.live.value = ""
            self._sync_history()
            self._refresh_conversations()

    def _notify(self, event: ChatEvent) -> None:
        for callback in self._observers.callbacks():
            try:
                callback(event)
            except Exception as exc:  # noqa: BLE001 - a subscriber's bug must not break the chat or the others
                self._show_error(f"running the on_turn callback {callback_name(callback)}", exc, keep_shown=True)

    def _notify_switch(self, previous_user_id: str, previous_session_id: str) -> None:
        self._notify(ChatEvent("switch", self.user_id, self.session_id, previous_user_id=previous_user_id,
                               previous_session_id=previous_session_id))

    def _run_turn(self, text: str, live: _LiveTurn) -> TurnResult:
        # stream_turn is optional: a service that only answers whole turns still works, without live progress
        stream = getattr(self.service, "stream_turn", None)
        if stream is None:
            return self.service.turn(self.user_id, self.session_id, text)
        result: TurnResult | None = None
        events = stream(self.user_id, self.session_id, text)
        try:
            for event in events:
                if event.kind == "done":
                    result = event.result
                else:
                    live.apply(event)
        finally:
            # Close the stream now, even when showing an event raised: an open stream keeps its session busy, and the
            # error shown in the widget (with its traceback) would otherwise keep the stream alive.
            close = getattr(events, "close", None)  # an Iterator need not have close(); a generator does
            if close is not None:
                close()
        if result is None:
            raise RuntimeError(f"{type(self.service).__name__}.stream_turn ended without a 'done' event carrying the "
                               "TurnResult; the turn may be incomplete — reopen the conversation to see what was saved")
        return result

    def _push_live(self, html: str) -> None:
        self.live.value = html

    def _set_busy(self, busy: bool) -> None:
        self.input.disabled = busy
        self.send_button.disabled = busy
        self.send_button.description = "Thinking…" if busy else "Send"

    # ------------------------------------------------------------------ callbacks (errors shown, never lost)

    def _submit_from_ui(self) -> None:
        text = self.input.value
        if not text.strip():
            return
        self.input.value = ""
        try:
            self.send(text)
        except Exception:  # noqa: BLE001 - send() has shown it in the error area
            if not self.input.value:
                self.input.value = text  # give the draft back so it can be retried
        finally:
            # the box was disabled during the turn, which drops the browser's focus; give it back for the next line
            self.input.focus()

    def _on_send_click(self, _button: widgets.Button) -> None:
        self._submit_from_ui()

    def _on_input_msg(self, _widget: widgets.Widget, content: dict[str, Any], _buffers: list[Any]) -> None:
        if content.get("event") == "submit":
            self._submit_from_ui()

    def _pick_conversation(self, session_id: str | None) -> None:
        if session_id:  # None: nothing is selected, nothing to open
            self.switch_conversation(session_id)

    def _pick_user(self, user_id: str) -> None:
        if not user_id or user_id == self.user_id:
            return
        try:
            self.switch_user(user_id.strip())
        except Exception:
            self._set_control(self.user_box, "value", self.user_id)  # show who we still talk as
            raise

    # ------------------------------------------------------------------ opening and syncing

    def _layer(self) -> MessageFile:
        return self.store.user(self.user_id).session(self.session_id)

    def _open(self, session_id: str | None) -> None:
        if session_id is None:
            session_id = self._latest_session() or self.service.new_conversation(self.user_id, title="")
        self.session_id = check_session_id(session_id)
        self._messages = []
        self._known_total = 0
        self._rendered = {}
        self._shown = self.page_size
        self.live.value = ""
        self._sync_history(reload=True)
        self._refresh_conversations()
        self._refresh_users()

    def _latest_session(self) -> str | None:
        mem = self.store.user(self.user_id)
        listed = mem.conversations.list()
        if listed:
            return listed[0].session_id
        # threads written without a conversation index (older tools, hand-made files): the one spoken in last
        ends = [(pair[1].ts, sid) for sid in mem.session_ids() if (pair := mem.session(sid).first_and_last())]
        return max(ends)[1] if ends else None

    def _sync_history(self, *, reload: bool = False) -> None:
        """Bring ``_messages`` up to date with the file, reading only lines that are new since the last sync."""
        layer = self._layer()
        total = len(layer)
        new = total - self._known_total
        if reload or new < 0:
            # a shrunk file (rewritten by hand) or a page change: read the tail afresh
            self._messages = layer.tail(min(total, self._shown))
        elif new > 0:
            self._messages += layer.tail(new)
            del self._messages[: max(0, len(self._messages) - self._shown)]
        self._known_total = total
        self._render_history()

    def _render_history(self) -> None:
        parts = []
        for message in self._messages:
            html = self._rendered.get(message.message_id)
            if html is None:
                html = self._rendered[message.message_id] = _message_html(message, self.store.zone)
                self.render_count += 1
            parts.append(html)
        if len(self._rendered) > 2 * len(self._messages) + self.page_size:
            keep = {m.message_id for m in self._messages}
            self._rendered = {k: v for k, v in self._rendered.items() if k in keep}
        if not parts:
            parts.append('<div class="amn-chat-empty">No messages yet — say something below.</div>')
        # column-reverse keeps the scroll position pinned to the newest message without any JavaScript
        self.history.value = ('<div class="amn-chat-root amn-history-scroll"><div class="amn-history-inner">'
                              + "".join(parts) + "</div></div>")
        hidden = self.hidden_count
        self.earlier_button.layout.display = "flex" if hidden else "none"
        self.earlier_button.description = (f"Show {min(hidden, self.page_size)} earlier ({hidden} hidden)"
                                           if hidden else "Show earlier")

    def _refresh_conversations(self) -> None:
        listed = self.store.user(self.user_id).conversations.list()
        options = [(_conversation_label(c.title, c.session_id, c.updated_at, self.store.zone), c.session_id)
                   for c in listed]
        if self.session_id not in {c.session_id for c in listed}:
            options.insert(0, (_conversation_label("", self.session_id, None, self.store.zone), self.session_id))
        with self._quiet():
            if list(self.conversation_list.options) != options:
                self.conversation_list.options = options
            self.conversation_list.value = self.session_id
        model = self.service.model_name
        self.status.value = (f'<div class="amn-chat-root amn-status-text">{escape(self.user_id)} · '
                             f'{escape(self.session_id)} · {len(self._layer())} messages'
                             + (f" · model {escape(model)}" if model else "") + "</div>")

    def _refresh_users(self) -> None:
        users = self.store.users()
        if self.user_id not in users:
            users = sorted([*users, self.user_id])
        self._set_control(self.user_box, "options", users)
        self._set_control(self.user_box, "value", self.user_id)

    def _set_control(self, control: widgets.Widget, name: str, value: Any) -> None:
        with self._quiet():
            if getattr(control, name) != (tuple(value) if isinstance(value, list) else value):
                setattr(control, name, value)


class _LiveTurn:
    """The in-progress turn: the user's message, tool progress lines and the streamed reply so far."""

    def __init__(self, text: str, push: Callable[[str], None], *, interval: float) -> None:
        self.text = text
        self.tools: list[tuple[str, ToolCall | None, str]] = []  # (state, call, error text)
        self.reply = ""
        self.notes: list[str] = []
        self._push = push
        self._interval = interval
        self._last_push = 0.0

    def apply(self, event: TurnEvent) -> None:
        kind, call, text = event.kind, event.tool_call, event.text
        if kind == "token":
            first = not self.reply
            self.reply += text
            self.push(force=first)  # the first piece always shows: the reply has started
            return
        if kind == "tool_started":
            self.tools.append(("running", call, ""))
        elif kind == "tool_finished":
            self._finish(call, text)
        elif kind == "error":
            self.notes.append(text or "error")
        self.push(force=True)

    def _finish(self, call: ToolCall | None, text: str) -> None:
        # match the running entry by call id (two calls of the same tool can run in one turn), then by name
        for i, (state, running, _) in enumerate(self.tools):
            if state != "running" or running is None or call is None:
                continue
            if (call.id and running.id == call.id) or (not call.id and running.name == call.name):
                self.tools[i] = ("done", call, text)
                return
        self.tools.append(("done", call, text))

    def push(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_push < self._interval:
            return
        self._last_push = now
        self._push(self.html())

    def html(self) -> str:
        parts = [f'<div class="amn-msg amn-msg-user amn-msg-pending"><div class="amn-msg-meta">user · sending</div>'
                 f'<div class="amn-msg-body">{escape(self.text)}</div></div>']
        lines = []
        for state, call, _ in self.tools:
            name = escape(call.name) if call is not None else "tool"
            args = escape(_compact_json(call.input)) if call is not None else ""
            if state == "running":
                lines.append(f'<li class="amn-tool-progress amn-tool-running">⏳ {name} <code>{args}</code></li>')
            else:
                status = call.status if call is not None and call.status in ("success", "error") else "success"
                mark = "✓" if status == "success" else "✗"
                took = _duration(call.duration_ms if call is not None else None)
                size = f"{len(call.output)} chars" if call is not None else ""
                lines.append(f'<li class="amn-tool-progress amn-tool-{status}">{mark} {name} <code>{args}</code>'
                             f' → {size}{took}</li>')
        for note in self.notes:
            lines.append(f'<li class="amn-tool-progress amn-tool-error">✗ {escape(note)}</li>')
        body = (f'<div class="amn-msg-body amn-streaming-text">{escape(self.reply)}</div>' if self.reply
                else '<div class="amn-msg-body amn-thinking">thinking…</div>')
        parts.append('<div class="amn-msg amn-msg-assistant amn-msg-pending"><div class="amn-msg-meta">assistant · '
                     'working</div>' + (f'<ul class="amn-tool-progress-list">{"".join(lines)}</ul>' if lines else "")
                     + body + "</div>")
        return '<div class="amn-chat-root">' + "".join(parts) + "</div>"


# ---------------------------------------------------------------------- rendering helpers (pure functions)


def _message_html(message: Message, zone: _dt.tzinfo | None) -> str:
    """One message as HTML: escaped user text, sanitised Markdown for the assistant, and its tool-call panel."""
    role = message.role if message.role in _KNOWN_ROLES else "other"
    when = _local(message.ts, zone).strftime("%Y-%m-%d %H:%M")
    if role == "assistant":
        body = safe_markdown(message.content)
    else:
        body = escape(message.content)
    calls = message.tool_calls if role == "assistant" else ()
    return (f'<div class="amn-msg amn-msg-{role}" data-message-id="{message.message_id}">'
            f'<div class="amn-msg-meta">{escape(message.role)} · #{message.message_id} · {when}</div>'
            f'<div class="amn-msg-body">{body}</div>{tool_panel_html(calls)}</div>')


def tool_panel_html(calls: tuple[ToolCall, ...] | list[ToolCall]) -> str:
    """A collapsed ``<details class="amn-tool-panel">`` listing each call's name, status, input and output."""
    if not calls:
        return ""
    names = ", ".join(escape(call.name) for call in calls)
    items = []
    for call in calls:
        status = call.status if call.status in ("success", "error") else "success"
        output = call.output
        cut = ""
        if len(output) > _TOOL_OUTPUT_SHOWN:
            cut = f"\n… ({len(output) - _TOOL_OUTPUT_SHOWN} more characters not shown)"
            output = output[:_TOOL_OUTPUT_SHOWN]
        items.append(
            f'<div class="amn-tool-call amn-tool-{status}">'
            f'<div class="amn-tool-name">{escape(call.name)} <span class="amn-tool-status">{status}'
            f'{_duration(call.duration_ms)}</span></div>'
            f'<div class="amn-tool-label">input</div><pre class="amn-tool-input">{pretty_json(call.input)}</pre>'
            f'<div class="amn-tool-label">output</div><pre class="amn-tool-output">{escape(output)}{escape(cut)}</pre>'
            "</div>"
        )
    plural = "s" if len(calls) != 1 else ""
    return (f'<details class="amn-tool-panel"><summary>{len(calls)} tool call{plural}: {names}</summary>'
            + "".join(items) + "</details>")


def _conversation_label(title: str, session_id: str, updated: _dt.datetime | None, zone: _dt.tzinfo | None) -> str:
    # Select options are plain text (never HTML), so the title needs no escaping here, only to be sendable
    # the time first: a narrow list cuts the end of a label, and the time is what tells look-alike titles apart
    name = displayable(" ".join(title.split())) or f"(untitled {session_id})"
    when = _local(updated, zone).strftime("%m-%d %H:%M") if updated is not None else "new"
    return f"{when} · {name}"


def _local(moment: _dt.datetime, zone: _dt.tzinfo | None) -> _dt.datetime:
    return moment.astimezone(zone) if zone is not None else moment.astimezone()


def _duration(ms: float | None) -> str:
    return f" · {ms:.0f} ms" if ms is not None else ""


def _compact_json(value: Any) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 120 else text[:119] + "…"


_STYLE = """<style>
.amn-chat .amn-chat-root { line-height: 1.45; white-space: normal; }
.amn-chat .amn-history-scroll { max-height: 460px; overflow-y: auto; display: flex; flex-direction: column-reverse;
  border: 1px solid var(--jp-border-color2, #ddd); border-radius: 4px; padding: 4px 6px; }
.amn-chat .amn-msg { margin: 6px 0; padding: 6px 10px; border-radius: 8px; max-width: 92%; overflow-wrap: anywhere; }
.amn-chat .amn-msg-user { background: var(--jp-brand-color3, #dbeafe); margin-left: auto; width: fit-content; }
.amn-chat .amn-msg-user .amn-msg-body { white-space: pre-wrap; }
.amn-chat .amn-msg-assistant { background: var(--jp-layout-color2, #f3f4f6); }
.amn-chat .amn-msg-other, .amn-chat .amn-msg-system, .amn-chat .amn-msg-tool { background: #fafafa; font-size: 90%; }
.amn-chat .amn-msg-pending { opacity: 0.85; border: 1px dashed var(--jp-border-color1, #bbb); }
.amn-chat .amn-msg-meta { font-size: 11px; color: var(--jp-ui-font-color2, #6b7280); }
.amn-chat .amn-msg-body p { margin: 2px 0; }
.amn-chat .amn-streaming-text { white-space: pre-wrap; }
.amn-chat .amn-tool-panel { margin-top: 4px; font-size: 12px; }
.amn-chat .amn-tool-panel summary { cursor: pointer; color: var(--jp-ui-font-color2, #4b5563); }
.amn-chat .amn-tool-call { border-left: 3px solid #10b981; padding-left: 6px; margin: 4px 0; }
.amn-chat .amn-tool-call.amn-tool-error { border-left-color: #ef4444; }
.amn-chat .amn-tool-name { font-weight: 600; }
.amn-chat .amn-tool-status { font-weight: normal; color: var(--jp-ui-font-color2, #6b7280); }
.amn-chat .amn-tool-label { font-size: 11px; color: var(--jp-ui-font-color2, #6b7280); }
.amn-chat .amn-tool-panel pre { margin: 0 0 4px 0; max-height: 180px; overflow: auto; white-space: pre-wrap;
  background: var(--jp-layout-color1, #fff); border: 1px solid var(--jp-border-color2, #e5e7eb); padding: 3px; }
.amn-chat .amn-tool-progress-list { margin: 2px 0; padding-left: 18px; font-size: 12px; }
.amn-chat .amn-offline-banner-text { background: #fff7d6; border: 1px solid #f2d675; border-radius: 4px;
  padding: 6px 10px; font-size: 12px; }
.amn-chat .amn-error-box { color: #991b1b; background: #fef2f2; border: 1px solid #fecaca; border-radius: 4px;
  padding: 6px 10px; font-size: 12px; }
.amn-chat .amn-error-box pre { white-space: pre-wrap; max-height: 200px; overflow: auto; }
.amn-chat .amn-status-text { font-size: 11px; color: var(--jp-ui-font-color2, #6b7280); }
.amn-chat .amn-chat-empty { color: var(--jp-ui-font-color2, #6b7280); padding: 8px; }
</style>"""
