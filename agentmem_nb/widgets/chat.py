"""``ChatWidget``: talk to the memory agent in a notebook, see which tools it used, stop a slow turn, open its trace.

Layout (CSS classes in brackets, the browser test addresses them)::

    ┌ conversations [amn-chat-conversations] ┐ ┌ offline banner [amn-offline-banner] ───────────────┐
    │ + New conversation [amn-chat-new]      │ │ [Show earlier: amn-chat-earlier]                   │
    │ user [amn-chat-user]                   │ │ history [amn-chat-history]                         │
    │ status [amn-chat-status]               │ │   user bubble [amn-msg-user]                       │
    └────────────────────────────────────────┘ │   assistant bubble [amn-msg-assistant] · trace     │
                                               │     <details> tool calls [amn-tool-panel]          │
                                               │ live progress / streamed reply [amn-chat-live]     │
                                               │ errors [amn-chat-error]                            │
                                               │ [amn-chat-input] [Send: amn-chat-send] [Stop]      │
                                               │ the trace of a turn [amn-chat-trace]               │
                                               └────────────────────────────────────────────────────┘

The code is split by concern: this class wires controls to actions (the controller and the public API);
:mod:`~agentmem_nb.widgets.chat_state` holds what is shown (:class:`ChatHistory`, :class:`LiveTurn`);
:mod:`~agentmem_nb.widgets.chat_view` turns it into HTML; :mod:`~agentmem_nb.widgets.chat_controls` holds the two
browser-side controls (the message box and the history pane); :mod:`~agentmem_nb.widgets.chat_kernel` the ties to
the kernel (Interrupt, cells); :mod:`~agentmem_nb.widgets.trace` the turn trace.

The widget holds no memory of its own: history and tool panels are rebuilt from the store (``meta.tool_calls`` of
each assistant line), so reopening a conversation after a kernel restart shows the same panels.

**Stop.** A turn sent from the box runs in a worker thread, so the kernel stays free to hear the Stop button (a
widget handler that ran the turn itself would hold back every other widget message until the turn ends). Stop asks
the service to cancel the turn (:meth:`~agentmem_nb.agent.ChatService.cancel`): it ends as cancelled, recorded as
such, with nothing half-written, and its session is free. Kernel ▸ Interrupt does the same (see
:mod:`~agentmem_nb.widgets.chat_kernel`). :meth:`send` from code runs in the calling thread, as before (a notebook
cell waits for it; Interrupt stops it, recorded as interrupted).

>>> # from agentmem_nb.agent import ChatService
>>> # chat = ChatWidget(ChatService(store), user_id="alice"); chat           # display in a cell
>>> # result = chat.send("Where did I move last year?")                      # drive it from code
>>> # handle = chat.on_turn(print)   # called with a ChatEvent after every turn and every switch; handle.close()
>>> # chat.open_message("s1", 12)    # show message #12 of conversation s1, highlighted

Other widgets follow the chat through :meth:`ChatWidget.on_turn`: ``MemoryInspector(store).follow(chat)`` and
``ToolTimeline(store).follow(chat)`` refresh themselves after each turn (see :mod:`agentmem_nb.widgets._follow`).
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import ipywidgets as widgets

from agentmem_nb.identifiers import check_user_id
from agentmem_nb.messages import Message
from agentmem_nb.redact import redact
from agentmem_nb.turns import TurnEvent, TurnResult
from agentmem_nb.widgets._callbacks import CallbackErrors, WidgetError
from agentmem_nb.widgets._turns import ChatEvent, TurnCallback, TurnObservers, TurnSubscription, callback_name
from agentmem_nb.widgets.chat_controls import ChatInput, HistoryView
from agentmem_nb.widgets.chat_kernel import INTERRUPT, in_kernel, running_a_cell
from agentmem_nb.widgets.chat_source import ChatSource, StoreSource
from agentmem_nb.widgets.chat_state import ChatHistory, LiveTurn
from agentmem_nb.widgets.chat_view import (OFFLINE_HINT, STYLE, banner_html, conversation_label, status_html,
                                           tool_panel_html)
from agentmem_nb.widgets.html import escape

if TYPE_CHECKING:
    from agentmem_nb.store import MemoryStore
    from agentmem_nb.widgets.trace import TurnTrace

__all__ = ["ChatWidget", "ChatError", "ChatEvent", "TurnSubscription", "OFFLINE_HINT", "tool_panel_html"]

SEND_ACTION = "sending your message"
"""How a failed send is named in the error box ("Error while sending your message: ...")."""

WAITING = "Waiting for your answer"
"""The title of the notice shown while a LangGraph thread is paused at an ``interrupt()`` (see ``GraphChat``)."""


class _Service(Protocol):
    """What the widget needs from :class:`agentmem_nb.agent.ChatService` (a fake with these members works too;
    ``stream_turn`` and ``cancel`` are optional: without them there is no live progress, without ``cancel`` no
    Stop). Also optional: ``waiting(user_id, session_id)``, what a paused conversation asks (shown when it is
    opened), and, for a service without ``store``, ``chat_source`` (see :func:`_source_of`);
    :class:`~agentmem_nb.agent.graph_chat.GraphChat` has both."""

    @property
    def offline(self) -> bool: ...

    @property
    def model_name(self) -> str: ...

    def turn(self, user_id: str, session_id: str, message: str) -> TurnResult: ...

    def stream_turn(self, user_id: str, session_id: str, message: str) -> Iterator[TurnEvent]: ...

    def new_conversation(self, user_id: str, title: str = "") -> str: ...


def _source_of(service: _Service, store: MemoryStore | None) -> tuple[MemoryStore | None, ChatSource]:
    """The store the service writes to and where the chat reads conversations: ``store``, ``service.store``, or
    (a service over something else, such as a LangGraph graph) ``service.chat_source``."""
    store = store if store is not None else getattr(service, "store", None)
    if store is not None:
        return store, StoreSource(store)
    source: ChatSource | None = getattr(service, "chat_source", None)
    if source is None:
        raise TypeError(f"ChatWidget needs the MemoryStore the service writes to: {type(service).__name__} has "
                        "no .store attribute, so pass it as ChatWidget(service, store, user_id=...); for your own "
                        "LangGraph graph use ChatWidget.for_graph(graph)")
    return None, source


ChatError = WidgetError
"""The chat's name for :class:`~agentmem_nb.widgets._callbacks.WidgetError` (kept for existing code); ``error`` is
``None`` when the service reported a failed turn through ``TurnResult.error`` instead of raising."""


class ChatWidget(CallbackErrors, widgets.VBox):
    """A chat box over a :class:`~agentmem_nb.agent.ChatService` and the store it writes to — or over your own
    compiled LangGraph graph and its checkpointer: :meth:`for_graph`.

    Args:
        service: the chat service (``turn``/``stream_turn``/``new_conversation``/``offline``/``model_name``, and
            ``cancel`` for the Stop button).
        store: the :class:`~agentmem_nb.store.MemoryStore` the service writes to; defaults to ``service.store``.
            A service without a store names where its conversations are read instead (``service.chat_source``, a
            :class:`~agentmem_nb.widgets.chat_source.ChatSource`; :class:`~agentmem_nb.agent.graph_chat.GraphChat`
            has one): then ``store`` is ``None`` and the features of our store are off.
        user_id: whose memory to talk to. A user with no folder yet is shown as new; nothing is written for them
            until their first message.
        session_id: the conversation to open; ``None`` opens the user's most recent one (or a new, not yet saved
            one).
        page_size: how many of the newest messages are rendered; "show earlier" adds another page.
        stream_interval: streamed tokens are pushed to the browser at most this often (seconds); every tool event
            and the end of the turn are always pushed. ``0`` pushes every token (tests).
        run_in_thread: run turns sent from the box (Enter, Send) in a worker thread, so Stop can be heard while
            they run; ``None``: when inside a Jupyter kernel. :meth:`send` always runs in the calling thread.
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
        run_in_thread: bool | None = None,
    ) -> None:
        # first: Widget.__del__ calls close(), which needs it, even when a check below rejects the arguments
        self._observers = TurnObservers()
        store, source = _source_of(service, store)
        if page_size < 1:
            raise ValueError(f"page_size must be >= 1, got {page_size!r}")
        self.service = service
        self.store: MemoryStore | None = store
        """Our store the service writes to; ``None`` for a chat over a LangGraph graph (see :attr:`source`)."""
        self.source: ChatSource = source
        """Where the conversations are read (our store's sessions, or a LangGraph checkpointer's threads)."""
        self.page_size = int(page_size)
        self.stream_interval = float(stream_interval)
        self.run_in_thread = in_kernel() if run_in_thread is None else bool(run_in_thread)
        self.user_id = check_user_id(user_id)
        self.session_id = ""
        self._init_callbacks()  # errors, error_area, _syncing (set while the widget changes the list/user box)
        self._history = ChatHistory(source, page_size=self.page_size)
        self._live: LiveTurn | None = None
        self._worker: threading.Thread | None = None
        self._busy = False
        self._displays: list[Any] = []  # IPython display handles of this widget's outputs (see _ipython_display_)
        if self.run_in_thread:
            INTERRUPT.install()  # Kernel ▸ Interrupt stops the turns of the worker thread (see _KernelInterrupt)

        self.banner = widgets.HTML(banner_html(service.offline),
                                   layout=widgets.Layout(display="flex" if service.offline else "none"))
        self.banner.add_class("amn-offline-banner")
        self.earlier_button = widgets.Button(description="Show earlier", icon="angle-up",
                                             layout=widgets.Layout(display="none", width="auto"))
        self.earlier_button.add_class("amn-chat-earlier")
        self.history = HistoryView()
        self.history.add_class("amn-chat-history")
        self.live = widgets.HTML()
        self.live.add_class("amn-chat-live")
        self.input = ChatInput(placeholder="Message… (Enter sends, Shift+Enter for a new line)",
                               layout=widgets.Layout(flex="1 1 auto", width="auto"))
        self.input.add_class("amn-chat-input")
        self.send_button = widgets.Button(description="Send", button_style="primary", icon="paper-plane",
                                          layout=widgets.Layout(width="auto"))
        self.send_button.add_class("amn-chat-send")
        self.stop_button = widgets.Button(description="Stop", button_style="warning", icon="stop",
                                          tooltip="stop this turn: nothing is saved as a reply",
                                          layout=widgets.Layout(width="auto", display="none"))
        self.stop_button.add_class("amn-chat-stop")
        self.conversation_list = widgets.Select(options=[], rows=10, layout=widgets.Layout(width="auto"))
        self.conversation_list.add_class("amn-chat-conversations")
        self.new_button = widgets.Button(description="New conversation", icon="plus",
                                         layout=widgets.Layout(width="auto"))
        self.new_button.add_class("amn-chat-new")
        # a source without users (a LangGraph checkpointer) hides the box: its threads belong to no user
        self.user_box = widgets.Combobox(value=self.user_id, options=source.users(), ensure_option=False,
                                         continuous_update=False, description="User",
                                         style={"description_width": "36px"},
                                         layout=widgets.Layout(width="auto",
                                                               display=None if source.has_users else "none"))
        self.user_box.add_class("amn-chat-user")
        self.status = widgets.HTML()
        self.status.add_class("amn-chat-status")
        self.trace_area = widgets.VBox()
        self.trace_area.add_class("amn-chat-trace")
        self.trace: TurnTrace | None = None
        """The trace last opened from a reply's "trace" link (shown under the chat), or ``None``."""

        # a fixed-width column: without flex "0 0" the chat column's flex-grow squeezes it to its minimum
        sidebar = widgets.VBox([self.user_box, self.new_button, self.conversation_list, self.status],
                               layout=widgets.Layout(width="250px", min_width="250px", flex="0 0 250px"))
        main = widgets.VBox(
            [self.banner, self.earlier_button, self.history, self.live, self.error_area,
             widgets.HBox([self.input, self.send_button, self.stop_button],
                          layout=widgets.Layout(align_items="flex-start")),
             self.trace_area],
            layout=widgets.Layout(flex="1 1 auto", width="auto", min_width="0"),
        )
        super().__init__([widgets.HTML(STYLE),
                          widgets.HBox([sidebar, main], layout=widgets.Layout(flex_flow="row wrap"))])
        self.add_class("amn-chat")

        self.send_button.on_click(lambda _b: self._submit_from_ui(self.input.value))
        self.input.on_submit(self._submit_from_ui)  # Enter: the exact text that was in the box (chat_controls)
        self.stop_button.on_click(self._guarded("stopping the turn", lambda _b: self.stop()))
        self.history.on_trace(self._guarded("opening the trace", self.open_trace))
        self.earlier_button.on_click(self._guarded("showing earlier messages", lambda _b: self.show_earlier()))
        self.new_button.on_click(self._guarded("starting a conversation", lambda _b: self.new_conversation()))
        self.conversation_list.observe(self._guarded_change("opening the conversation", self._pick_conversation),
                                       names="value")
        self.user_box.observe(self._guarded_change("switching to that user", self._pick_user), names="value")

        self._open(session_id)

    @classmethod
    def for_graph(
        cls,
        graph: Any,
        *,
        thread_id: str | None = None,
        config: Mapping[str, Any] | None = None,
        channel: str = "messages",
        **options: Any,
    ) -> ChatWidget:
        """A chat over your own compiled LangGraph graph: each message goes to ``graph`` as a ``HumanMessage`` of
        thread ``thread_id`` of *its* checkpointer, the reply streams in, its tool calls and results show as ours
        do, and the conversation stays in that checkpointer (a new conversation is a new thread id; an existing
        thread opens with its history). See :class:`~agentmem_nb.agent.graph_chat.GraphChat` for errors and
        interrupts.

        Args:
            graph: the compiled graph (``create_agent(...)``, ``StateGraph(...).compile(checkpointer=...)``), with a
                checkpointer and a list of messages in its state.
            thread_id: the thread to open; ``None`` takes ``config["configurable"]["thread_id"]``, else the thread
                spoken in last, else a new one.
            config: the run config passed with each turn (``recursion_limit``, ``configurable`` keys your nodes
                read, callbacks …); its ``thread_id`` is replaced by the open conversation's.
            channel: the state key holding the messages (``"messages"`` for ``create_agent``/``MessagesState``).
            options: the other options of :class:`ChatWidget` (``page_size``, ``stream_interval``, ``run_in_thread``).

        >>> # chat = ChatWidget.for_graph(agent, thread_id="morning"); chat
        >>> # chat.send("What did I say about tea?").tool_calls
        """
        from agentmem_nb.agent.graph_chat import GraphChat

        service = GraphChat(graph, config=config, channel=channel)
        if thread_id is None:
            given = (config or {}).get("configurable", {}).get("thread_id")
            thread_id = str(given) if given is not None else None
        return cls(service, user_id=service.user_id, session_id=thread_id, **options)

    # ------------------------------------------------------------------ public API

    def __repr__(self) -> str:
        count = self._history.known_total if self.session_id else 0  # no session yet while __init__ runs
        return f"ChatWidget(user={self.user_id!r}, session={self.session_id!r}, messages={count})"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The live widget, plus a static HTML copy of what it shows (read where no kernel runs: GitHub, nbviewer,
        a notebook opened before it is run)."""
        bundle: dict[str, Any] = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = self.static_html()
        return bundle

    def _ipython_display_(self, **kwargs: Any) -> None:
        """Display with a display id, so that code in later cells that changes the chat (``send``, ``open_message``,
        switching) also updates the static copy stored in the notebook: a saved notebook then shows the chat as it
        ended, not as it was first displayed (empty)."""
        from IPython.display import display

        handle = display(self._repr_mimebundle_(**kwargs), raw=True, display_id=True)  # type: ignore[no-untyped-call]
        if handle is not None:
            self._displays.append(handle)

    def _update_displays(self) -> None:
        # only for changes made by a cell: re-rendering the output rebuilds the live view (scroll, focus), which
        # the person using the widget must not see after each of their own turns
        if not self._displays or not running_a_cell():
            return
        bundle = self._repr_mimebundle_()
        for handle in self._displays:
            handle.update(bundle, raw=True)

    def static_html(self) -> str:
        """What the chat shows now, as one self-contained HTML fragment (no script; the text escaped as shown)."""
        header = (f'<p class="amn-static-note"><b>Chat</b> · user {escape(self.user_id)} · conversation '
                  f'{escape(self.session_id)} · {self._history.known_total} messages (a snapshot: run the notebook '
                  "to talk)</p>")
        return (f'<div class="amn-chat amn-chat-static">{STYLE}{header}'
                f'<div class="amn-history-scroll">{self._history.html(links=False)}</div></div>')

    @property
    def messages(self) -> tuple[Message, ...]:
        """The messages currently rendered (the newest ``page_size``, or more after :meth:`show_earlier`)."""
        return tuple(self._history.messages)

    @property
    def hidden_count(self) -> int:
        """Older messages of this conversation not rendered yet."""
        return self._history.hidden_count

    @property
    def render_count(self) -> int:
        """How many messages were rendered to HTML since the conversation opened (cached ones do not count)."""
        return self._history.render_count

    @property
    def busy(self) -> bool:
        """True while a turn runs."""
        return self._busy

    @property
    def is_new_user(self) -> bool:
        """True while the user has no folder on disk (nothing is written before their first message)."""
        return self.source.is_new_user(self.user_id)

    def send(self, text: str) -> TurnResult:
        """Send ``text`` as the user, update the widget while the turn runs, and return the ``TurnResult``.

        Errors raised by the service are shown in the widget's error area *and* re-raised; a turn that failed inside
        the service (``result.error``) is shown and returned; a stopped turn (``result.cancelled``) is shown as
        stopped. Either way the :meth:`on_turn` callbacks run last.
        """
        text = str(text)
        event: ChatEvent | None = None
        user_id, session_id = self.user_id, self.session_id
        try:
            if not text.strip():
                raise ValueError("cannot send an empty message: type some text first")  # nothing sent, nobody told
            if self._busy:
                raise RuntimeError("a turn of this chat is still running: wait for it, or press Stop")
            try:
                result = self._chat_send(text)
            except Exception as exc:
                # the service may have written the user's message and the log line before it raised
                event = ChatEvent("turn", user_id, session_id, error=redact(f"{type(exc).__name__}: {exc}"))
                raise
            error = result.error
            event = ChatEvent("turn", user_id, session_id, result=result, error=error or "")
            if result.cancelled:
                self._show_notice(error or "Stopped on request.")
            elif result.interrupt:
                self._show_notice(result.interrupt, title=WAITING)
            elif error:
                # the service kept the user's message and logged the failure; its visible reply is not persisted,
                # so this is the only place the person sees it
                reply = result.reply
                shown = f"the turn failed: {error}" + (f" — {reply}" if reply and error not in reply else "")
                self._show_error(SEND_ACTION, None, message=shown)
            return result
        except Exception as exc:
            self._show_error(SEND_ACTION, exc)
            raise
        finally:
            # observers are told last: their errors show under the turn's, their refreshes see all the turn wrote
            if event is not None:
                self._notify(event)
            self._update_displays()

    def stop(self) -> bool:
        """Ask the running turn to stop (what the Stop button does); False when no turn runs or the service cannot
        cancel. The turn ends as cancelled: see :meth:`~agentmem_nb.agent.ChatService.cancel`."""
        cancel = getattr(self.service, "cancel", None)
        if not self._busy or cancel is None:
            return False
        if self._live is not None:
            self._live.stopping = True
            self._live.push(force=True)
        self.stop_button.disabled = True
        return bool(cancel(self.user_id, self.session_id))

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a turn sent from the box in the worker thread to end; True if none is running any more."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)
            return not worker.is_alive()
        return True

    def open_message(self, session_id: str, message_id: int) -> None:
        """Open conversation ``session_id`` of the current user and show message ``message_id`` highlighted in the
        middle of the history (paging back as far as needed); a message shown inside another's bubble (a tool call of a
        LangGraph thread's run) highlights that bubble. For the inspector and the timeline: "open in chat".

        Raises:
            InvalidIdentifier: ``session_id`` is not a valid id.
            LookupError: the conversation has no message ``message_id`` (the conversation is opened anyway).
        """
        self.switch_conversation(session_id)
        shown = self._history.reach(int(message_id))  # the message, or the bubble whose run of messages holds it
        if shown is None:
            self._render()
            raise LookupError(f"conversation {session_id!r} of user {self.user_id!r} has no message "
                              f"#{message_id}: it has {self._history.known_total} messages")
        self._history.focused = shown
        self._render()
        self.history.reveal(shown)
        self._update_displays()

    def open_trace(self, message_id: int) -> TurnTrace:
        """Show, under the chat, the trace of the turn that wrote message ``message_id`` of the open conversation
        (its reply, or the user message of a turn that failed); returns the :class:`~agentmem_nb.widgets.trace.
        TurnTrace`. What the "trace" link of each reply does."""
        from agentmem_nb.widgets.trace import TurnTrace

        if self.store is None or not self.source.has_traces:
            raise LookupError(f"no turn traces here: {self.source.limits or 'this chat keeps none'}")
        trace = TurnTrace(self.store, user_id=self.user_id, session_id=self.session_id, message_id=message_id)
        if self.trace is not None:
            self.trace.close()
        self.trace = trace
        self.trace_area.children = (trace,)
        return trace

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
        trace = getattr(self, "trace", None)  # absent when __init__ refused its arguments
        if trace is not None:
            trace.close()
        super().close()

    def refresh(self) -> None:
        """Pick up messages and conversations written by someone else (another cell, another process)."""
        self.source.reload()
        self._history.sync()
        self._render()
        self._refresh_conversations()
        self._refresh_users()

    def show_earlier(self) -> None:
        """Render another ``page_size`` older messages (the browser keeps the reader's place)."""
        self._history.show_earlier()
        self._render()

    def switch_conversation(self, session_id: str) -> None:
        """Open another conversation of the current user."""
        session_id = self.source.check_session(session_id)
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
        """Talk as another user: opens ``session_id`` or that user's most recent conversation. A user unknown to
        the store is shown as new and nothing is written for them until their first message."""
        user_id = check_user_id(user_id)
        if not self.source.has_users:
            raise ValueError(f"cannot switch to user {user_id!r}: {self.source.limits} — open another thread with "
                             "switch_conversation(thread_id)")
        before = (self.user_id, self.session_id)
        self.user_id = user_id
        self._open(session_id)
        self._notify_switch(*before)

    # ------------------------------------------------------------------ a turn

    def _chat_send(self, text: str) -> TurnResult:
        self.clear_error()
        self._set_busy(True)
        live = self._live = LiveTurn(text, self._push_live, interval=self.stream_interval)
        live.push(force=True)
        try:
            return self._run_turn(text, live)
        finally:
            self._live = None
            self._set_busy(False)
            self.live.value = ""
            self._history.sync()
            self._render()
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
        self._update_displays()

    def _run_turn(self, text: str, live: LiveTurn) -> TurnResult:
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
        self._busy = busy
        self.input.disabled = busy
        self.send_button.disabled = busy
        self.send_button.description = "Thinking…" if busy else "Send"
        can_stop = busy and getattr(self.service, "cancel", None) is not None
        self.stop_button.disabled = not can_stop
        self.stop_button.layout.display = "flex" if can_stop else "none"

    def _show_notice(self, text: str, *, title: str = "Stopped") -> None:
        waiting = " amn-chat-waiting" if title == WAITING else ""
        self.error_area.value = (f'<div class="{self._css_root} amn-error-box amn-chat-notice{waiting}"><b>'
                                 f"{escape(title)}:</b> {escape(text)}</div>")

    def _show_waiting(self) -> None:
        # a service that can pause a conversation (GraphChat: a LangGraph interrupt) says so when it is opened,
        # since the next message will answer the question rather than start a turn
        waiting = getattr(self.service, "waiting", None)
        text = waiting(self.user_id, self.session_id) if waiting is not None else ""
        if text:
            self._show_notice(text, title=WAITING)
        elif "amn-chat-waiting" in self.error_area.value:
            self.clear_error()  # the notice of the conversation shown before

    # ------------------------------------------------------------------ callbacks (errors shown, never lost)

    def _submit_from_ui(self, text: str) -> None:
        if not text.strip() or self._busy:  # a blank draft, or a second Enter while a turn runs: nothing to do
            return
        if self.input.value == text:
            self.input.value = ""  # Send: the browser still shows the text (Enter emptied its box already)
        if not self.run_in_thread:
            self._ui_turn(text)
            return
        # mark busy before the thread starts, so a click that arrives before it runs cannot start a second turn
        self._set_busy(True)
        INTERRUPT.watch(self)  # Kernel ▸ Interrupt stops it too
        worker = threading.Thread(target=self._ui_turn, args=(text,), name="agentmem-chat-turn", daemon=True)
        self._worker = worker
        worker.start()

    def _ui_turn(self, text: str) -> None:
        self._busy = False  # _chat_send sets it again; the UI was marked busy before the thread started
        try:
            self.send(text)
        except Exception:  # noqa: BLE001 - send() has shown it in the error area
            if not self.input.value:
                self.input.value = text  # give the draft back so it can be retried
        finally:
            # the box was disabled during the turn, which drops the browser's focus; give it back for the next line
            self.input.focus()

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

    def _open(self, session_id: str | None) -> None:
        if session_id is None:
            # a user's first conversation is saved with its first message, not when it is merely looked at
            session_id = self._latest_session() or secrets.token_hex(6)
        self.session_id = self.source.check_session(session_id)
        self.live.value = ""
        self._history.open(self.user_id, self.session_id)
        self._render()
        self._refresh_conversations()
        self._refresh_users()
        self._show_waiting()

    def _latest_session(self) -> str | None:
        return self.source.latest_session(self.user_id)

    def _render(self) -> None:
        self.history.value = self._history.html()
        hidden = self._history.hidden_count
        self.earlier_button.layout.display = "flex" if hidden else "none"
        self.earlier_button.description = (f"Show {min(hidden, self.page_size)} earlier ({hidden} hidden)"
                                           if hidden else "Show earlier")

    def _refresh_conversations(self) -> None:
        new_user = self.is_new_user
        listed = self.source.conversations(self.user_id)
        zone = self.source.zone
        options = [(conversation_label(c.title, c.session_id, c.updated_at, zone), c.session_id) for c in listed]
        if self.session_id not in {c.session_id for c in listed}:
            options.insert(0, (conversation_label("", self.session_id, None, zone), self.session_id))
        with self._quiet():
            if list(self.conversation_list.options) != options:
                self.conversation_list.options = options
            self.conversation_list.value = self.session_id
        self.status.value = status_html(self.user_id, self.session_id, self._history.known_total,
                                        self.service.model_name, new_user=new_user, limits=self.source.limits)

    def _refresh_users(self) -> None:
        if not self.source.has_users:
            return
        users = self.source.users()
        if self.user_id not in users:
            users = sorted([*users, self.user_id])
        self._set_control(self.user_box, "options", users)
        self._set_control(self.user_box, "value", self.user_id)

    def _set_control(self, control: widgets.Widget, name: str, value: Any) -> None:
        with self._quiet():
            if getattr(control, name) != (tuple(value) if isinstance(value, list) else value):
                setattr(control, name, value)
