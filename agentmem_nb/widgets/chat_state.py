"""The chat's state: which messages of the open conversation are shown (:class:`ChatHistory`), and the turn in
progress (:class:`LiveTurn`). No widgets here: the chat's view renders what these hold.

Long conversations stay cheap: only the last ``page_size`` messages are kept and rendered ("show earlier" pages
back), the history is one HTML string rather than one widget per message, and each message's HTML is cached so a
new turn renders only the new messages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.turns import TurnEvent
from agentmem_nb.widgets.chat_view import history_html, live_html, message_html

if TYPE_CHECKING:
    from agentmem_nb.widgets.chat_source import ChatSource

__all__ = ["ChatHistory", "LiveTurn"]


class ChatHistory:
    """The newest messages of one conversation, read incrementally from its source, and their HTML.

    Args:
        source: where the conversation lives (:class:`~agentmem_nb.widgets.chat_source.ChatSource`: our store, or
            a LangGraph checkpointer).
        page_size: how many of the newest messages to keep; :meth:`show_earlier` adds another page.
    """

    def __init__(self, source: ChatSource, *, page_size: int) -> None:
        self.source = source
        self.page_size = page_size
        self.user_id = ""
        self.session_id = ""
        self.messages: list[Message] = []  # the shown tail, oldest first
        self.known_total = 0  # lines the layer had when messages was last synced
        self.shown = page_size
        self.focused: int | None = None  # the message ChatWidget.open_message highlighted
        self.render_count = 0
        """How many messages were rendered to HTML (a cost measure: cached messages do not count)."""
        self._rendered: dict[tuple[int, bool, bool, str], str] = {}
        self._stamp_seen: object = None  # the source's stamp when the messages were read (see ChatSource.stamp)

    @property
    def hidden_count(self) -> int:
        """Older messages of this conversation not shown yet."""
        return max(0, self.known_total - len(self.messages))

    def open(self, user_id: str, session_id: str) -> None:
        """Show the newest page of another conversation (read from disk now)."""
        self.user_id, self.session_id = user_id, session_id
        self.messages, self.known_total, self.shown, self.focused = [], 0, self.page_size, None
        self._rendered = {}
        self.sync(reload=True)

    def sync(self, *, reload: bool = False) -> None:
        """Bring :attr:`messages` up to date with the source, reading only messages that are new since the last
        sync."""
        source, user_id, session_id = self.source, self.user_id, self.session_id
        total = source.count(user_id, session_id)
        new = total - self.known_total
        stamp = source.stamp(user_id, session_id)
        reload = reload or stamp != self._stamp_seen  # a message shown may have changed since (redacted): read again
        self._stamp_seen = stamp
        if reload or new < 0:
            # a shrunk file (rewritten by hand) or a page change: read the tail afresh
            self.messages = source.tail(user_id, session_id, min(total, self.shown))
        elif new > 0:
            self.messages += source.tail(user_id, session_id, new)
            del self.messages[: max(0, len(self.messages) - self.shown)]
        self.known_total = total

    def show_earlier(self) -> None:
        """Keep another ``page_size`` older messages."""
        self.shown += self.page_size
        self.sync(reload=True)

    def reach(self, message_id: int) -> int | None:
        """Page back until message ``message_id`` is shown, and return the ``message_id`` of the message that shows
        it: itself, or the bubble whose run holds it (a LangGraph thread shows a run of AI and tool messages as one
        bubble numbered by its last, ``meta["first_message_id"]`` its first); None if there is no such message."""
        while True:
            for m in self.messages:
                if _first_id(m) <= message_id <= m.message_id:
                    return m.message_id
            if not self.hidden_count or (self.messages and _first_id(self.messages[0]) < message_id):
                return None
            self.show_earlier()

    def has_trace(self, index: int) -> bool:
        """Whether the message at ``index`` of :attr:`messages` gets a "trace" link: every assistant reply, and a
        user message that no reply follows (a failed or stopped turn, whose trace shows why). None when the source
        keeps no traces (a LangGraph checkpointer)."""
        if not self.source.has_traces:
            return False
        message = self.messages[index]
        if message.role == "assistant":
            return True
        if message.role != "user":
            return False
        following = self.messages[index + 1] if index + 1 < len(self.messages) else None
        return following is None or following.role != "assistant"

    def html(self, *, links: bool = True) -> str:
        """The shown messages as HTML (each rendered once, then cached); ``links=False`` leaves out the "trace"
        links (a static copy has no kernel to open them)."""
        parts = []
        for index, message in enumerate(self.messages):
            # the text is in the key: a message redacted since it was drawn is drawn again, as its reason
            key = (message.message_id, links and self.has_trace(index), message.message_id == self.focused,
                   message.content)
            html = self._rendered.get(key)
            if html is None:
                html = self._rendered[key] = message_html(message, self.source.zone, trace_link=key[1],
                                                          focused=key[2])
                self.render_count += 1
            parts.append(html)
        if len(self._rendered) > 2 * len(self.messages) + self.page_size:
            keep = {m.message_id for m in self.messages}
            self._rendered = {k: v for k, v in self._rendered.items() if k[0] in keep}
        return history_html(parts)


class LiveTurn:
    """The in-progress turn: the user's message, tool progress lines and the streamed reply so far.

    ``push(html)`` shows it; token pieces are pushed at most every ``interval`` seconds, tool events at once.
    """

    def __init__(self, text: str, push: Callable[[str], None], *, interval: float) -> None:
        self.text = text
        self.tools: list[tuple[str, ToolCall | None, str]] = []  # (state, call, error text)
        self.reply = ""
        self.notes: list[str] = []
        self.stopping = False
        self._push = push
        self._interval = interval
        self._last_push = 0.0

    def apply(self, event: TurnEvent) -> None:
        """Take one event of the turn's stream into account (and show it)."""
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
        """Show the turn as it is now (unless the last push was less than ``interval`` ago and not ``force``)."""
        now = time.monotonic()
        if not force and now - self._last_push < self._interval:
            return
        self._last_push = now
        self._push(live_html(self))


def _first_id(message: Message) -> int:
    """The first position a shown message stands for (see :meth:`ChatHistory.reach`)."""
    first = message.meta.get("first_message_id")
    return first if isinstance(first, int) and first <= message.message_id else message.message_id
