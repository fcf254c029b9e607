"""``MemoryInspector``: every layer of a user's memory as a table, a search box, and anchor + window stepping.

Layout (CSS classes in brackets; the browser test addresses them)::

    [user] [layer] [scope] [Refresh]                                    [amn-inspector]
    rows of the layer, newest last                                      [amn-inspector-table]
    [search box: amn-inspector-search] [Search]
    hit buttons, one per hit                                            [amn-inspector-hit]
    [− before] [+ before: amn-window-before-plus] [− after] [+ after: amn-window-after-plus]
    the window around the chosen hit, anchor row highlighted            [amn-inspector-window] (row: amn-anchor)
    errors                                                              [amn-inspector-error]

The widget opens no file itself: tables come from :mod:`agentmem_nb.frames` (through a
:class:`~agentmem_nb.frames.LayerFollower`, so a refresh reads only what was appended since the last one), hits from
:func:`agentmem_nb.retrieval.search` — the search the agent's tools run: one keyword is the store's substring search,
several words are ranked and explained — and windows from ``MessageFile.window``: the same anchor + window retrieval
the agent's tools use. Every cell is escaped by :func:`agentmem_nb.widgets.html.escape` before it becomes HTML.

Driven from code (what the tests do)::

    inspector = MemoryInspector(store, user_id="alice")
    inspector.select_layer("sessions")
    hits = inspector.search("lyon")
    window = inspector.select_hit(0)        # anchor ± 2 messages
    inspector.widen(before=1, after=3)      # step the window
    inspector.frame, inspector.window.frame # the DataFrames behind the tables
    inspector.follow(chat)                  # refresh after each of the chat's turns (search and hit kept)
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import ipywidgets as widgets
import numpy as np
import pandas as pd

from agentmem_nb import frames
from agentmem_nb.identifiers import check_day, check_session_id, check_user_id
from agentmem_nb.items import ItemKey, LayerKind
from agentmem_nb.messages import Message
from agentmem_nb.retrieval import Retriever, Scope
from agentmem_nb.store import MAX_WINDOW_SIDE
from agentmem_nb.widgets._callbacks import WidgetError
from agentmem_nb.widgets._follow import FollowsChat
from agentmem_nb.widgets._rows import find_row, row_identity
from agentmem_nb.widgets.html import displayable, escape

if TYPE_CHECKING:
    from agentmem_nb.store import MemoryStore, MessageFile, UserMemory

__all__ = ["MemoryInspector", "InspectorHit", "InspectorWindow", "InspectorError", "LAYERS", "frame_html",
           "cell_text"]

Layer = Literal["long_term", "sessions", "days", "log", "tool_calls", "problems", "conversations"]

LAYERS: dict[str, str] = {
    "long_term": "Long-term memory",
    "sessions": "Sessions",
    "days": "Days",
    "log": "Dialogue log",
    "tool_calls": "Tool calls",
    "problems": "Problems",
    "conversations": "Conversations",
}
"""Layer names (the API's) and their labels (the picker's)."""

_MESSAGE_LAYERS = ("sessions", "days")

# Which columns each layer's table shows (the full frame keeps all of them) and which a keyword is looked for in.
_SHOWN: dict[str, tuple[str, ...]] = {
    "long_term": ("line_no", "section", "text", "added_at", "source"),
    "long_term/history": ("version", "ts", "source", "added", "removed"),
    "sessions": ("ts", "session_id", "message_id", "role", "content", "n_tool_calls"),
    "days": ("ts", "day", "message_id", "session_id", "role", "content", "n_tool_calls"),
    "log": ("entry_id", "ts", "session_id", "user_message", "assistant_reply", "tools", "error"),
    "tool_calls": ("ts", "session_id", "turn", "tool", "input_text", "output", "output_len", "status", "duration_ms"),
    "problems": ("file", "line", "kind", "count", "detail"),
    "conversations": ("session_id", "title", "created_at", "updated_at", "messages"),
}
_SEARCHED: dict[str, tuple[str, ...]] = {
    "long_term": ("text", "section"),
    "long_term/history": ("added", "removed", "after", "source"),
    "log": ("user_message", "assistant_reply"),
    "tool_calls": ("tool", "input_text", "output"),
    "problems": ("file", "kind", "detail"),
    "conversations": ("session_id", "title"),
}

_CELL_CHARS = 300
"""Characters of a cell shown in a table (the whole text is in the cell's title, and in the DataFrame)."""

_HIT_CHARS = 110
_SHORT_CHARS = 24


@dataclass(frozen=True, slots=True)
class InspectorHit:
    """One search hit.

    For the message layers (``sessions``, ``days``) ``key`` is the session id or the day and ``anchor`` the
    ``message_id`` in that file; for the other layers ``key`` is ``None`` and ``anchor`` is the row's position in the
    layer's frame. ``explain`` says why a ranked hit was found (empty for a keyword hit).
    """

    rank: int
    layer: str
    key: str | None
    anchor: int
    ts: _dt.datetime | None
    label: str
    explain: str = ""

    @property
    def item(self) -> ItemKey | None:
        """The stored message a hit of a message layer is (``None`` for a row of another layer)."""
        if self.layer not in _MESSAGE_LAYERS or self.key is None:
            return None
        return ItemKey("session" if self.layer == "sessions" else "daily", self.key, self.anchor)


@dataclass(frozen=True, slots=True)
class InspectorWindow:
    """The rows around a hit, anchor included; ``anchor_row`` is the anchor's position in ``frame`` (-1 if the
    anchor is gone, and then ``reason`` says why)."""

    hit: InspectorHit
    before: int
    after: int
    frame: pd.DataFrame = field(hash=False, compare=False, repr=False)
    anchor_row: int = -1
    reason: str = ""


InspectorError = WidgetError
"""The inspector's name for :class:`~agentmem_nb.widgets._callbacks.WidgetError` (kept for existing code)."""


class MemoryInspector(FollowsChat, widgets.VBox):
    """Browse one user's memory layer by layer, search it, and step through anchor windows.

    Args:
        store: the :class:`~agentmem_nb.store.MemoryStore` to read.
        user_id: whose memory (default: the first user in the store, if any).
        layer: one of :data:`LAYERS` (``"sessions"`` by default).
        scope: a session id (sessions layer), a day (days layer), ``"history"`` (long-term layer) or ``"sessions"``
            (tool calls from the thread files instead of the log); ``None`` = everything.
        max_rows: rows shown in the table (the newest); the DataFrame in :attr:`frame` has them all.
        hit_limit: how many hits a search lists.
        before, after: the initial window around a chosen hit.
        retriever: what the message layers are searched with (default: the default
            :class:`~agentmem_nb.retrieval.Retriever`, the agent's own unless it was given another).

    :meth:`follow` links it to a :class:`~agentmem_nb.widgets.ChatWidget`: after each turn it refreshes itself,
    reading only the appended lines, and keeps its user, layer, scope, search, chosen hit and window sides.
    """

    _css_root = "amn-inspector-root"
    _css_error = "amn-inspector-error"

    def __init__(
        self,
        store: MemoryStore,
        *,
        user_id: str | None = None,
        layer: str = "sessions",
        scope: str | None = None,
        max_rows: int = 200,
        hit_limit: int = 20,
        before: int = 2,
        after: int = 2,
        retriever: Retriever | None = None,
    ) -> None:
        self._init_follow()  # first: Widget.__del__ calls close(), which needs it, even after a rejected argument
        if max_rows < 1 or hit_limit < 1:
            raise ValueError(f"max_rows and hit_limit must be >= 1, got {max_rows!r} and {hit_limit!r}")
        self.store = store
        self.retriever = retriever if retriever is not None else Retriever()
        self.max_rows = int(max_rows)
        self.hit_limit = int(hit_limit)
        self.user_id: str | None = None
        self.layer: str = "sessions"
        self.scope: str | None = None
        self.frame: pd.DataFrame = pd.DataFrame()
        """The whole current layer (scope applied) as a DataFrame."""
        self.query = ""
        self.search_mode = ""
        """How the last search ran: ``"keyword"`` (substring), ``"ranked"`` (retrieval) or ``""`` (none yet)."""
        self.hits: list[InspectorHit] = []
        self.window: InspectorWindow | None = None
        self._before = _clamp(before)
        self._after = _clamp(after)
        self._hit_buttons: list[widgets.Button] = []
        self._init_callbacks()  # errors, error_area, _syncing

        self.user_picker = widgets.Dropdown(description="User", options=[], layout=widgets.Layout(width="auto"),
                                            style={"description_width": "40px"})
        self.user_picker.add_class("amn-inspector-user")
        self.layer_picker = widgets.Dropdown(description="Layer", options=[(v, k) for k, v in LAYERS.items()],
                                             layout=widgets.Layout(width="auto"), style={"description_width": "44px"})
        self.layer_picker.add_class("amn-inspector-layer")
        self.scope_picker = widgets.Dropdown(description="Show", options=[], layout=widgets.Layout(width="auto"),
                                             style={"description_width": "40px"})
        self.scope_picker.add_class("amn-inspector-scope")
        self.refresh_button = widgets.Button(description="Refresh", icon="refresh",
                                             layout=widgets.Layout(width="auto"))
        self.refresh_button.add_class("amn-inspector-refresh")
        self.caption = widgets.HTML()
        self.caption.add_class("amn-inspector-caption")
        self.table = widgets.HTML()
        self.table.add_class("amn-inspector-table")
        self.search_box = widgets.Text(placeholder="Search this layer (one keyword, or several words: ranked)",
                                       continuous_update=False, layout=widgets.Layout(flex="1 1 auto", width="auto"))
        self.search_box.add_class("amn-inspector-search")
        self.search_button = widgets.Button(description="Search", icon="search", layout=widgets.Layout(width="auto"))
        self.search_button.add_class("amn-inspector-search-button")
        self.hits_summary = widgets.HTML()
        self.hits_summary.add_class("amn-inspector-hits-summary")
        self.hits_box = widgets.VBox(layout=widgets.Layout(max_height="260px", overflow="auto"))
        self.hits_box.add_class("amn-inspector-hits")
        self.before_minus = _step_button("− before", "amn-window-before-minus")
        self.before_plus = _step_button("+ before", "amn-window-before-plus")
        self.after_minus = _step_button("− after", "amn-window-after-minus")
        self.after_plus = _step_button("+ after", "amn-window-after-plus")
        self.window_caption = widgets.HTML()
        self.window_caption.add_class("amn-inspector-window-caption")
        self.window_view = widgets.HTML()
        self.window_view.add_class("amn-inspector-window")

        super().__init__([
            widgets.HTML(_STYLE),
            widgets.HBox([self.user_picker, self.layer_picker, self.scope_picker, self.refresh_button]),
            self.caption,
            self.table,
            widgets.HBox([self.search_box, self.search_button]),
            self.hits_summary,
            self.hits_box,
            widgets.HBox([self.before_minus, self.before_plus, self.after_minus, self.after_plus,
                          self.window_caption]),
            self.window_view,
            self.error_area,
        ])
        self.add_class("amn-inspector")

        self.user_picker.observe(self._guarded_change("select user", self.select_user), names="value")
        self.layer_picker.observe(self._guarded_change("select layer", self.select_layer), names="value")
        self.scope_picker.observe(self._guarded_change("select scope", self.select_scope), names="value")
        self.refresh_button.on_click(self._guarded("refresh", lambda _b: self.refresh()))
        self.search_button.on_click(self._guarded("search", lambda _b: self.search(self.search_box.value)))
        self.search_box.observe(self._guarded_change("search", self.search), names="value")
        self.before_minus.on_click(self._guarded("step window", lambda _b: self.widen(before=-1)))
        self.before_plus.on_click(self._guarded("step window", lambda _b: self.widen(before=1)))
        self.after_minus.on_click(self._guarded("step window", lambda _b: self.widen(after=-1)))
        self.after_plus.on_click(self._guarded("step window", lambda _b: self.widen(after=1)))

        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r}: use one of {', '.join(LAYERS)}")
        users = store.users()
        chosen = user_id if user_id is not None else (users[0] if users else None)
        self.user_id = check_user_id(chosen) if chosen is not None else None
        self.layer = layer
        self.scope = self._check_scope(scope) if scope not in (None, "") else None
        self._load()

    # ------------------------------------------------------------------ public API

    def __repr__(self) -> str:
        scope = f", scope={self.scope!r}" if self.scope is not None else ""
        return f"MemoryInspector(user={self.user_id!r}, layer={self.layer!r}{scope})"

    @property
    def mem(self) -> UserMemory:
        """The current user's memory."""
        if self.user_id is None:
            raise ValueError("no user selected: call select_user('...') first (the store has no users yet)")
        return self.store.user(self.user_id)

    @property
    def before(self) -> int:
        """Messages (rows) shown before the anchor."""
        return self._before

    @property
    def after(self) -> int:
        """Messages (rows) shown after the anchor."""
        return self._after

    def select_user(self, user_id: str) -> None:
        """Show ``user``'s memory (the layer stays; a session or day scope is dropped)."""
        user_id = check_user_id(user_id)
        if user_id != self.user_id:
            self.user_id = user_id
            if self.layer in _MESSAGE_LAYERS:
                self.scope = None
            self._clear_search()
        self._load()

    def select_layer(self, layer: str) -> None:
        """Show another layer (one of :data:`LAYERS`); the search and window are cleared."""
        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r}: use one of {', '.join(LAYERS)}")
        if layer != self.layer:
            self.layer = layer
            self.scope = None
            self._clear_search()
        self._load()

    def select_scope(self, scope: str | None) -> None:
        """Narrow the layer: a session id (sessions), a day (days), ``"history"`` (long-term) or ``"sessions"``
        (tool calls read from the threads instead of the log); ``None`` shows everything."""
        scope = None if scope in (None, "") else self._check_scope(scope)
        if scope != self.scope:
            self.scope = scope
            self._clear_search()
        self._load()

    def refresh(self) -> None:
        """Pick up what was written since the last look (reads only appended lines); the search is run again and
        the chosen window re-read, so new neighbours and hits appear and the chosen hit stays chosen (found again
        by its message, or by its row's identity in the other layers, when new rows moved it)."""
        self._load(keep_search=True)

    @property
    def selected_hit(self) -> int | None:
        """Position in :attr:`hits` of the hit whose window is shown (``None``: no window, or its hit is no longer
        among the hits — the window still shows it)."""
        if self.window is None:
            return None
        return next((i for i, hit in enumerate(self.hits) if hit == self.window.hit), None)

    def search(self, text: str) -> list[InspectorHit]:
        """Search the current layer (scope applied) and list the hits.

        Message layers: :func:`agentmem_nb.retrieval.search` — one keyword is the store's substring search (its last
        ``hit_limit`` hits, oldest first); several words, or a keyword found nowhere, are ranked (best first, each
        hit with its explanation; no window: pick a hit to see one). Other layers: substring of their text columns.
        """
        self.query = str(text)
        self.window = None
        self.hits = self._find(self.query) if self.query.strip() else []
        if not self.query.strip():
            self.search_mode = ""
        self._sync_search_box()
        self._render_hits()
        self._render_window()
        return list(self.hits)

    def select_hit(self, index: int) -> InspectorWindow:
        """Show the window around hit ``index`` (0-based, as listed)."""
        if not self.hits:
            raise IndexError("no hits to choose from: search first")
        if not -len(self.hits) <= index < len(self.hits):
            raise IndexError(f"hit {index} does not exist: there are {len(self.hits)} (0..{len(self.hits) - 1})")
        self.window = self._window_for(self.hits[index])
        self._render_hits()
        self._render_window()
        return self.window

    def widen(self, *, before: int = 0, after: int = 0) -> InspectorWindow | None:
        """Step the window: add ``before``/``after`` rows on each side (negative narrows); clamped to
        ``0..MAX_WINDOW_SIDE``."""
        return self.set_window(before=self._before + int(before), after=self._after + int(after))

    def set_window(self, *, before: int | None = None, after: int | None = None) -> InspectorWindow | None:
        """Set the window's sides (clamped to ``0..MAX_WINDOW_SIDE``) and re-read it around the same anchor."""
        if before is not None:
            self._before = _clamp(before)
        if after is not None:
            self._after = _clamp(after)
        if self.window is not None:
            self.window = self._window_for(self.window.hit)
        self._render_window()
        return self.window

    def html_values(self) -> dict[str, str]:
        """Every HTML string the widget currently shows, by part (for checks such as escaping)."""
        return {"caption": self.caption.value, "table": self.table.value, "hits_summary": self.hits_summary.value,
                "window_caption": self.window_caption.value, "window": self.window_view.value,
                "error": self.error_area.value}

    # ------------------------------------------------------------------ loading

    def _check_scope(self, scope: str) -> str | None:
        if self.layer == "sessions":
            return check_session_id(scope)
        if self.layer == "days":
            return check_day(scope)
        if self.layer == "long_term" and scope == "history":
            return "history"
        if self.layer == "tool_calls" and scope in ("sessions", "log"):
            return "sessions" if scope == "sessions" else None
        allowed = {"long_term": "'history'", "tool_calls": "'sessions' or 'log'"}.get(self.layer)
        choices = f"{allowed} or None" if allowed else "None (this layer has no scopes)"
        raise ValueError(f"scope {scope!r} does not apply to the {self.layer!r} layer: use {choices}")

    def _layer_frame(self) -> pd.DataFrame:
        if self.user_id is None:
            return pd.DataFrame()
        mem, follower = self.mem, self._follower()
        if self.layer == "sessions":
            return follower.session(self.scope) if self.scope else follower.sessions()
        if self.layer == "days":
            return follower.daily(self.scope) if self.scope else follower.days()
        if self.layer == "log":
            return follower.log()
        if self.layer == "tool_calls":
            return follower.tool_calls(source="sessions" if self.scope == "sessions" else "log")
        if self.layer == "long_term":
            return frames.long_term_history(mem) if self.scope == "history" else frames.long_term(mem)
        if self.layer == "problems":
            return frames.problems(mem)
        return frames.conversations(mem)

    def _load(self, *, keep_search: bool = False) -> None:
        chosen = self.window.hit if self.window is not None else None
        identity = self._hit_identity(chosen) if keep_search and chosen is not None else None
        self.frame = self._layer_frame()
        self._sync_controls()
        if keep_search and self.query.strip():
            self.hits = self._find(self.query)
            if chosen is not None:
                self.window = self._window_for(self._same_hit(chosen, identity))
        self._render_all()

    def _hit_identity(self, hit: InspectorHit) -> tuple[Any, ...] | None:
        """What a row hit points at, independent of its position (which moves: conversations are newest first)."""
        if hit.layer in _MESSAGE_LAYERS or hit.anchor >= len(self.frame):
            return None
        return row_identity(self.frame, hit.anchor, self._view())

    def _same_hit(self, chosen: InspectorHit, identity: tuple[Any, ...] | None) -> InspectorHit:
        """``chosen`` as the fresh search lists it (new rank and label), or re-anchored on its row's new position
        when it is not listed any more; ``chosen`` itself if its row is gone."""
        if chosen.item is not None:
            return next((h for h in self.hits if h.item == chosen.item), chosen)
        if identity is None:
            return chosen
        position = find_row(self.frame, identity, self._view(), hint=chosen.anchor)
        if position is None:
            return chosen
        return next((h for h in self.hits if h.anchor == position), None) or self._row_hit(chosen.rank, position)

    def _clear_search(self) -> None:
        self.query = ""
        self.search_mode = ""
        self.hits = []
        self.window = None

    # ------------------------------------------------------------------ search and windows

    def _view(self) -> str:
        return "long_term/history" if self.layer == "long_term" and self.scope == "history" else self.layer

    def _find(self, text: str) -> list[InspectorHit]:
        if self.user_id is None:
            return []
        if self.layer in _MESSAGE_LAYERS:
            return self._find_messages(text.strip())
        self.search_mode = "keyword"
        columns = _SEARCHED[self._view()]
        mask = pd.Series(False, index=self.frame.index)
        for column in columns:
            mask |= frames.contains_casefold(self.frame[column], text)
        positions = np.flatnonzero(mask.to_numpy())[-self.hit_limit:]
        return [self._row_hit(rank, int(pos)) for rank, pos in enumerate(positions.tolist(), start=1)]

    def _find_messages(self, text: str) -> list[InspectorHit]:
        layer: LayerKind = "session" if self.layer == "sessions" else "daily"
        if self.scope:
            scope = Scope.session(self.scope) if layer == "session" else Scope.day(self.scope)
        else:
            scope = Scope.everything(layer=layer)
        # Ranked hits come without neighbours (before=after=0): the hit list names anchors, the window shows context.
        result = self.retriever.search(self.mem, text, scope=scope, budget=self.hit_limit, before=0, after=0)
        self.search_mode = "keyword" if result.mode == "exact" else "ranked"
        return [self._message_hit(h.rank, h.message, h.key, h.explain() if h.mode == "ranked" else "")
                for h in result.hits]

    def _message_hit(self, rank: int, message: Message, key: str, why: str) -> InspectorHit:
        where = key if self.layer == "sessions" else f"{key} {message.session_id or ''}".strip()
        label = (f"#{message.message_id} [{message.ts.strftime('%Y-%m-%d %H:%M')}] {where} {message.role}: "
                 f"{_one_line(message.content)}")
        return InspectorHit(rank, self.layer, key, message.message_id, message.ts, _shorten(label, _HIT_CHARS),
                            why)

    def _row_hit(self, rank: int, position: int) -> InspectorHit:
        row = self.frame.iloc[position]
        shown = [c for c in _SHOWN[self._view()] if c in row.index]
        label = " · ".join(_one_line(cell_text(row[c])) for c in shown if cell_text(row[c]))
        stamp = next((row[c] for c in ("ts", "added_at", "updated_at") if c in row.index and not pd.isna(row[c])),
                     None)
        return InspectorHit(rank, self.layer, None, position, stamp.to_pydatetime() if stamp is not None else None,
                            _shorten(f"row {position}: {label}", _HIT_CHARS))

    def _window_for(self, hit: InspectorHit) -> InspectorWindow:
        before, after = self._before, self._after
        if hit.layer in _MESSAGE_LAYERS and hit.key:
            mem = self.mem
            file: MessageFile = mem.session(hit.key) if hit.layer == "sessions" else mem.daily(hit.key)
            found = file.window(hit.anchor, before, after)
            frame = frames.messages_frame(found.messages, user_id=mem.user_id, zone=self.store.zone)
            ids = [m.message_id for m in found.messages]
            return InspectorWindow(hit, before, after, frame, ids.index(hit.anchor) if hit.anchor in ids else -1,
                                   found.reason)
        if hit.anchor >= len(self.frame):
            return InspectorWindow(hit, before, after, self.frame.iloc[0:0], -1,
                                   f"row {hit.anchor} is no longer in this layer ({len(self.frame)} rows): search again")
        start = max(0, hit.anchor - before)
        frame = self.frame.iloc[start : hit.anchor + after + 1].reset_index(drop=True)
        return InspectorWindow(hit, before, after, frame, hit.anchor - start)

    # ------------------------------------------------------------------ rendering

    def _render_all(self) -> None:
        self._render_table()
        self._render_hits()
        self._render_window()

    def _render_table(self) -> None:
        total = len(self.frame)
        shown = self.frame.tail(self.max_rows)
        who = escape(self.user_id) if self.user_id else "no user"
        scope = f" · {escape(self.scope)}" if self.scope else ""
        extent = (f"{total} rows" if total <= self.max_rows
                  else f"the newest {self.max_rows} of {total} rows (all of them are in <code>.frame</code>)")
        self.caption.value = (f'<div class="amn-inspector-root amn-caption">{who} · {escape(LAYERS[self.layer])}'
                              f"{scope} · {extent}</div>")
        columns = [c for c in _SHOWN[self._view()] if c in self.frame.columns] if total else []
        self.table.value = frame_html(shown, columns, empty="Nothing in this layer yet.", table_class="amn-table")

    def _render_hits(self) -> None:
        for button in self._hit_buttons:
            button.close()
        self._hit_buttons = []
        chosen = self.window.hit if self.window is not None else None
        for index, hit in enumerate(self.hits):
            button = widgets.Button(description=displayable(hit.label), tooltip=displayable(hit.explain or hit.label),
                                    layout=widgets.Layout(width="100%"),
                                    button_style="info" if hit == chosen else "")
            button.add_class("amn-inspector-hit")
            button.on_click(self._guarded("choose hit", lambda _b, i=index: self.select_hit(i)))
            self._hit_buttons.append(button)
        self.hits_box.children = tuple(self._hit_buttons)
        if not self.query.strip():
            summary = ""
        elif not self.hits:
            summary = f"No hit for “{escape(self.query)}” in this layer."
        else:
            how = {"ranked": "ranked by relevance, best first", "keyword": "keyword matches, oldest first"}
            summary = (f"{len(self.hits)} hit(s) for “{escape(self.query)}” ({how.get(self.search_mode, '')}); "
                       "choose one to see its window.")
        self.hits_summary.value = f'<div class="amn-inspector-root amn-hits-summary">{summary}</div>' if summary else ""

    def _render_window(self) -> None:
        window = self.window
        self.window_caption.value = (f'<span class="amn-inspector-root amn-window-sides">before {self._before} · '
                                     f"after {self._after}</span>")
        self.before_minus.disabled = window is None or self._before == 0
        self.after_minus.disabled = window is None or self._after == 0
        self.before_plus.disabled = window is None or self._before == MAX_WINDOW_SIDE
        self.after_plus.disabled = window is None or self._after == MAX_WINDOW_SIDE
        if window is None:
            self.window_view.value = ""
            return
        hit = window.hit
        where = f"{escape(hit.key)} " if hit.key else ""
        title = (f'<div class="amn-window-title">Window around {where}'
                 f'{"#" if hit.key else "row "}{hit.anchor}</div>')
        if window.reason:
            body = f'<div class="amn-window-reason">{escape(window.reason)}</div>'
        else:
            view = self._view() if hit.layer not in _MESSAGE_LAYERS else hit.layer
            columns = [c for c in _SHOWN[view] if c in window.frame.columns]
            body = frame_html(window.frame, columns, anchor_row=window.anchor_row, table_class="amn-window-table",
                              truncate=False)
        why = f'<div class="amn-window-why">{escape(hit.explain)}</div>' if hit.explain else ""
        self.window_view.value = f'<div class="amn-inspector-root">{title}{why}{body}</div>'

    def _sync_controls(self) -> None:
        with self._quiet():
            users = self.store.users()
            if self.user_id is not None and self.user_id not in users:
                users = sorted([*users, self.user_id])
            if list(self.user_picker.options) != users:
                self.user_picker.options = users
            self.user_picker.value = self.user_id
            self.layer_picker.value = self.layer
            options = self._scope_options()
            self.scope_picker.layout.display = "flex" if options else "none"
            if list(self.scope_picker.options) != options:
                self.scope_picker.options = options
            self.scope_picker.value = self.scope if options else None

    def _scope_options(self) -> list[tuple[str, str | None]]:
        if self.user_id is None:
            return []
        mem = self.mem
        if self.layer == "sessions":
            ids = mem.session_ids()
            if self.scope and self.scope not in ids:
                ids.append(self.scope)
            return [("all sessions", None), *((s, s) for s in ids)]
        if self.layer == "days":
            days = mem.days()
            if self.scope and self.scope not in days:
                days.append(self.scope)
            return [("all days", None), *((d, d) for d in days)]
        if self.layer == "long_term":
            return [("lines", None), ("history of changes", "history")]
        if self.layer == "tool_calls":
            return [("from the dialogue log", None), ("from the threads", "sessions")]
        return []

    def _sync_search_box(self) -> None:
        with self._quiet():
            self.search_box.value = self.query

    def _after_error(self) -> None:
        # the controls may have moved ahead of the state (e.g. an unknown user typed): show the state again
        self._sync_controls()


# ---------------------------------------------------------------------- HTML helpers (shared with the timeline)


def cell_text(value: Any) -> str:
    """A DataFrame cell as plain text: times to the second, dicts as compact JSON, missing values empty."""
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    if isinstance(value, (pd.Timestamp, _dt.datetime)):
        return "" if pd.isna(value) else value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, tuple):
        return ", ".join(map(str, value))
    if value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def frame_html(
    frame: pd.DataFrame,
    columns: list[str] | tuple[str, ...],
    *,
    anchor_row: int = -1,
    empty: str = "No rows.",
    table_class: str = "amn-table",
    truncate: bool = True,
) -> str:
    """``frame[columns]`` as an HTML table with every cell escaped; row ``anchor_row`` gets the class
    ``amn-anchor``. Long cells are cut at a few hundred characters (unless ``truncate=False``) with the whole text in
    the cell's ``title``."""
    if not len(frame) or not columns:
        return f'<div class="amn-inspector-root amn-empty">{escape(empty)}</div>'
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    rows = []
    data = [frame[c].tolist() for c in columns]
    for i in range(len(frame)):
        cells = []
        for values in data:
            text = cell_text(values[i])
            if truncate and len(text) > _CELL_CHARS:
                cells.append(f'<td title="{escape(text)}">{escape(text[:_CELL_CHARS])}…</td>')
            elif len(text) <= _SHORT_CHARS and "\n" not in text:
                cells.append(f'<td class="amn-short">{escape(text)}</td>')  # ids, times: never wrapped
            else:
                cells.append(f"<td>{escape(text)}</td>")
        attrs = ' class="amn-anchor"' if i == anchor_row else ""
        rows.append(f"<tr{attrs}>{''.join(cells)}</tr>")
    return (f'<div class="amn-inspector-root amn-scroll"><table class="{escape(table_class)}"><thead><tr>{head}</tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table></div>")


def _clamp(value: int) -> int:
    return max(0, min(MAX_WINDOW_SIDE, int(value)))


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _step_button(label: str, css: str) -> widgets.Button:
    button = widgets.Button(description=label, disabled=True, layout=widgets.Layout(width="auto"))
    button.add_class(css)
    return button


_STYLE = """<style>
/* line-height: ipywidgets' HTML content inherits the 28 px control height, which makes wrapped rows very tall */
.amn-inspector-root { font-size: 13px; line-height: 1.4; }
.amn-inspector-root .amn-scroll, .amn-inspector-root.amn-scroll { max-height: 360px; overflow: auto; }
.amn-inspector-root table { border-collapse: collapse; width: 100%; }
.amn-inspector-root th { position: sticky; top: 0; background: var(--jp-layout-color2, #eee); text-align: left; }
.amn-inspector-root td, .amn-inspector-root th { border-bottom: 1px solid var(--jp-border-color2, #ddd);
  padding: 2px 6px; vertical-align: top; white-space: pre-wrap; overflow-wrap: anywhere; }
.amn-inspector-root td.amn-short, .amn-inspector-root th { white-space: nowrap; }
.amn-inspector-root td:not(.amn-short) { min-width: 14em; }
.amn-inspector-root tr.amn-anchor td { background: #fff3b0; font-weight: 600; }
.amn-inspector-hit button, button.amn-inspector-hit { text-align: left; justify-content: flex-start;
  overflow: hidden; text-overflow: ellipsis; }
.amn-inspector-root .amn-window-why { color: var(--jp-ui-font-color2, #666); font-size: 12px; }
.amn-inspector-root.amn-error-box { color: #a00; border: 1px solid #e99; padding: 4px 8px; }
</style>"""
