"""``MemoryInspector``: every layer of a user's memory as a table, a search box, and anchor + window stepping.

Layout (CSS classes in brackets; the browser test addresses them)::

    [user] [layer] [scope] [Refresh]                                    [amn-inspector]
    caption: user · layer · rows · the zone times are shown in          [amn-inspector-caption]
    the layer as a sortable, filterable, paged table (itables)          [amn-inspector-table]
    edit panel (long-term lines: edit, delete; history: restore; messages: redact)    [amn-inspector-edit]
    facts panel (facts layer: a key's timeline, conflicts to resolve, sources)       [amn-inspector-facts]
    [search box: amn-inspector-search] [Search]
    status while a search or load runs                                  [amn-inspector-status]
    "20 of 54,903 matches for …"                                        [amn-inspector-hits-summary]
    hit buttons, one per hit, in a scrolling list                       [amn-inspector-hits] (button: amn-inspector-hit)
    [− before] [+ before] [− after] [+ after] [Open in chat]
    the window around the chosen hit, anchor row selected               [amn-inspector-window]
    errors                                                              [amn-inspector-error]

Three parts, one concern each: :class:`~agentmem_nb.widgets._inspector_state.InspectorState` holds the choices,
:class:`~agentmem_nb.widgets._inspector_data.InspectorData` reads the store (frames, search with its true total,
windows), and this class is the view: controls, tables and wiring. Tables are itables widgets
(:mod:`agentmem_nb.widgets._tables`: offline, cells as text); every other piece of text goes through
:func:`agentmem_nb.widgets.html.escape`. Colours come from JupyterLab's theme variables only, so Light and Dark both
read (the browser test measures the contrast).

Driven from code (what the tests do)::

    inspector = MemoryInspector(store, user_id="alice")
    inspector.select_layer("sessions")
    hits = inspector.search("lyon"); inspector.total   # 20 hits listed, of this many matches
    window = inspector.select_hit(0)        # anchor ± 2 messages
    inspector.widen(before=1, after=3)      # step the window
    inspector.frame, inspector.window.frame # the DataFrames behind the tables
    inspector.follow(chat)                  # refresh after each of the chat's turns (search and hit kept),
    inspector.open_hit(0)                   # and "Open in chat" opens the hit's message in that chat
    inspector.edit_note(2, "- likes green tea"); inspector.restore_version(3)
    inspector.select_layer("facts")         # the Facts layer (see _inspector_facts):
    inspector.facts_panel.select_fact(7); inspector.facts_panel.resolve(9, accept=True)
    inspector.facts_panel.open_source(7)    # the window around a fact's source message

A LangGraph agent's memory in place of the store (:mod:`agentmem_nb.widgets._langgraph_source`): its threads are
the sessions, its store's namespaces a layer, everything read only::

    MemoryInspector(agent)              # a compiled graph: its checkpointer and its store
    MemoryInspector(saver)              # or a checkpointer, a BaseStore, or LangGraphSource(checkpointer=, store=)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import pandas as pd

from agentmem_nb.identifiers import check_user_id
from agentmem_nb.retrieval import Retriever
from agentmem_nb.store import MAX_WINDOW_SIDE
from agentmem_nb.widgets import _memory_edit
from agentmem_nb.widgets._busy import BusyState
from agentmem_nb.widgets._callbacks import WidgetError
from agentmem_nb.widgets._cells import cell_text, zone_note
from agentmem_nb.widgets._follow import FollowsChat
from agentmem_nb.widgets._inspector_facts import FactsPanel
from agentmem_nb.widgets._inspector_data import (
    LAYERS,
    MESSAGE_LAYERS,
    Found,
    InspectorData,
    InspectorHit,
    InspectorWindow,
)
from agentmem_nb.widgets._inspector_state import InspectorState, clamp_side
from agentmem_nb.widgets._langgraph_source import (
    LangGraphData,
    LangGraphLike,
    LangGraphSource,
    langgraph_source,
    our_store,
)
from agentmem_nb.widgets._open import OpenMessage, OpensMessages
from agentmem_nb.widgets._rows import find_row, row_identity
from agentmem_nb.widgets._tables import TABLE_STYLE, new_table, show_rows
from agentmem_nb.widgets.html import displayable, escape

if TYPE_CHECKING:
    from agentmem_nb.store import MemoryStore, UserMemory

__all__ = ["MemoryInspector", "InspectorHit", "InspectorWindow", "InspectorError", "LAYERS", "cell_text"]

InspectorError = WidgetError
"""The inspector's name for :class:`~agentmem_nb.widgets._callbacks.WidgetError` (kept for existing code)."""


class MemoryInspector(OpensMessages, FollowsChat, widgets.VBox):
    """Browse one user's memory layer by layer, search it, step through anchor windows, and edit it.

    Args:
        store: the :class:`~agentmem_nb.store.MemoryStore` to read — or a LangGraph agent's memory: a compiled
            graph, a checkpointer, a ``BaseStore`` or a :class:`~agentmem_nb.widgets.LangGraphSource` (threads as
            the sessions, the store's namespaces as the ``store`` layer, read only; see :attr:`langgraph`).
        user_id: whose memory (default: the first user in the store, if any; a LangGraph source has no users).
        layer: one of :data:`LAYERS` (``"sessions"`` by default; a LangGraph source's layers are
            ``_langgraph_source.LANGGRAPH_LAYERS``, ``"store"`` first when it has no checkpointer).
        scope: a session id (sessions layer), a day (days layer), ``"history"`` (long-term layer) or ``"sessions"``
            (tool calls from the thread files instead of the log); ``None`` = everything.
        max_rows: rows given to the table (the newest; it pages them); the DataFrame in :attr:`frame` has them all.
        hit_limit: how many hits a search lists (the summary says how many match in all).
        before, after: the initial window around a chosen hit.
        retriever: what the message layers are searched with (default: the default
            :class:`~agentmem_nb.retrieval.Retriever`, the agent's own unless it was given another).
        on_open_message: ``callback(session_id, message_id)`` run by :meth:`open_hit` and the "Open in chat"
            button (wire it to the chat's ``open_message``); more with :meth:`on_open_message`.

    :meth:`follow` links it to a :class:`~agentmem_nb.widgets.ChatWidget`: after each turn it refreshes itself,
    reading only the appended lines, and keeps its user, layer, scope, search, chosen hit and window sides.
    """

    _css_root = "amn-inspector-root"
    _css_error = "amn-inspector-error"

    def __init__(
        self,
        store: MemoryStore | LangGraphLike,
        *,
        user_id: str | None = None,
        layer: str | None = None,
        scope: str | None = None,
        max_rows: int = 2000,
        hit_limit: int = 20,
        before: int = 2,
        after: int = 2,
        retriever: Retriever | None = None,
        on_open_message: OpenMessage | None = None,
    ) -> None:
        self._init_follow()  # first: Widget.__del__ calls close(), which needs it, even after a rejected argument
        if max_rows < 1 or hit_limit < 1:
            raise ValueError(f"max_rows and hit_limit must be >= 1, got {max_rows!r} and {hit_limit!r}")
        self._init_open(on_open_message)
        self.langgraph: LangGraphSource | None = langgraph_source(store)
        """The LangGraph checkpointer and store shown (``None``: our store is)."""
        self.store: MemoryStore | None = our_store(store) if self.langgraph is None else None
        """The store shown (``None`` for a LangGraph source)."""
        self.retriever = retriever if retriever is not None else Retriever()
        self.data: InspectorData | LangGraphData = (LangGraphData(self.langgraph) if self.langgraph is not None
                                                    else InspectorData(our_store(store), self.retriever))
        """Reads the source (frames, search, windows)."""
        self.state = InspectorState(before=clamp_side(before), after=clamp_side(after),
                                    layers=tuple(self.data.layers))
        """What is chosen (user, layer, scope, search, hits, window)."""
        self.max_rows = int(max_rows)
        self.hit_limit = int(hit_limit)
        self.frame: pd.DataFrame = pd.DataFrame()
        """The whole current layer (scope applied) as a DataFrame."""
        self._hit_buttons: list[widgets.Button] = []
        self._init_callbacks()  # errors, error_area, _syncing
        self._busy = BusyState(self, "amn-inspector-status")

        self.user_picker = widgets.Dropdown(description="User", options=[], layout=widgets.Layout(width="auto"),
                                            style={"description_width": "40px"})
        self.user_picker.add_class("amn-inspector-user")
        self.layer_picker = widgets.Dropdown(description="Layer", options=[(v, k) for k, v in self.data.layers.items()],
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
        self.table = new_table("amn-inspector-table")
        self.search_box = widgets.Text(placeholder="Search this layer (one keyword, or several words: ranked)",
                                       continuous_update=False, layout=widgets.Layout(flex="1 1 auto", width="auto"))
        self.search_box.add_class("amn-inspector-search")
        self.search_button = widgets.Button(description="Search", icon="search", layout=widgets.Layout(width="auto"))
        self.search_button.add_class("amn-inspector-search-button")
        self.hits_summary = widgets.HTML()
        self.hits_summary.add_class("amn-inspector-hits-summary")
        # a fixed-height scrolling list; each button keeps its own height (flex: none) instead of being squeezed
        self.hits_box = widgets.VBox(layout=widgets.Layout(max_height="260px", overflow="auto",
                                                           display="flex", flex_flow="column nowrap"))
        self.hits_box.add_class("amn-inspector-hits")
        self.before_minus = _step_button("− before", "amn-window-before-minus")
        self.before_plus = _step_button("+ before", "amn-window-before-plus")
        self.after_minus = _step_button("− after", "amn-window-after-minus")
        self.after_plus = _step_button("+ after", "amn-window-after-plus")
        self.open_button = _step_button("Open in chat", "amn-inspector-open")
        self.open_button.icon = "comments"
        self.window_caption = widgets.HTML()
        self.window_caption.add_class("amn-inspector-window-caption")
        self.window_view = widgets.HTML()
        self.window_view.add_class("amn-inspector-window-title")
        self.window_table = new_table("amn-inspector-window")
        self.editor = _memory_edit.EditPanel(self)
        self.facts_panel = FactsPanel(self)
        """The Facts layer's timeline, conflicts and source buttons (:mod:`agentmem_nb.widgets._inspector_facts`)."""

        super().__init__([
            widgets.HTML(_STYLE),
            widgets.HBox([self.user_picker, self.layer_picker, self.scope_picker, self.refresh_button],
                         layout=widgets.Layout(flex_flow="row wrap")),
            self.caption,
            self.table,
            self.editor.box,
            self.facts_panel.box,
            widgets.HBox([self.search_box, self.search_button]),
            self._busy.status,
            self.hits_summary,
            self.hits_box,
            widgets.HBox([self.before_minus, self.before_plus, self.after_minus, self.after_plus, self.open_button,
                          self.window_caption], layout=widgets.Layout(flex_flow="row wrap")),
            self.window_view,
            self.window_table,
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
        self.open_button.on_click(self._guarded("open in chat", lambda _b: self.open_hit()))
        self.table.observe(self._guarded_change("choose row", self._row_chosen), names="selected_rows")

        layer = self.data.default_layer if layer is None else layer
        if layer not in self.data.layers:
            raise ValueError(f"unknown layer {layer!r}: use one of {', '.join(self.data.layers)}")
        if self.langgraph is not None and user_id is not None:
            raise ValueError(f"user_id={user_id!r}: a LangGraph source has no users (its threads are the sessions: "
                             "choose one with scope=THREAD_ID)")
        users = self.data.users()
        chosen = user_id if user_id is not None else (users[0] if users else None)
        self.state.user_id = check_user_id(chosen) if chosen is not None else None
        self.state.layer = layer
        self.state.scope = self.data.check_scope(layer, scope) if scope not in (None, "") else None
        self._load()

    # ------------------------------------------------------------------ the state, read-only from outside

    @property
    def user_id(self) -> str | None:
        """Whose memory is shown."""
        return self.state.user_id

    @user_id.setter
    def user_id(self, user_id: str | None) -> None:
        # FollowsChat declares user_id as a plain attribute; the state is the one place it lives
        self.state.user_id = user_id

    @property
    def layer(self) -> str:
        """The layer shown (one of :data:`LAYERS`)."""
        return self.state.layer

    @property
    def scope(self) -> str | None:
        """The scope in force (``None``: the whole layer)."""
        return self.state.scope

    @property
    def query(self) -> str:
        """The last search's text."""
        return self.state.query

    @property
    def search_mode(self) -> str:
        """How the last search ran: ``"keyword"``, ``"ranked"`` or ``""`` (none yet)."""
        return self.state.search_mode

    @property
    def hits(self) -> list[InspectorHit]:
        """The hits listed (at most ``hit_limit``)."""
        return self.state.hits

    @property
    def total(self) -> int:
        """How many rows or messages match the search in all."""
        return self.state.total

    @property
    def window(self) -> InspectorWindow | None:
        """The window shown (``None``: no hit chosen)."""
        return self.state.window

    @property
    def before(self) -> int:
        """Messages (rows) shown before the anchor."""
        return self.state.before

    @property
    def after(self) -> int:
        """Messages (rows) shown after the anchor."""
        return self.state.after

    @property
    def busy(self) -> str:
        """What the inspector is doing right now (``""`` when idle): set while a search or a load runs."""
        return self._busy.busy

    # ------------------------------------------------------------------ public API

    def __repr__(self) -> str:
        scope = f", scope={self.scope!r}" if self.scope is not None else ""
        return f"MemoryInspector(user={self.user_id!r}, layer={self.layer!r}{scope})"

    @property
    def mem(self) -> UserMemory:
        """The current user's memory."""
        if self.store is None:
            raise ValueError(self.data.read_only)
        if self.user_id is None:
            raise ValueError("no user selected: call select_user('...') first (the store has no users yet)")
        return self.store.user(self.user_id)

    def _shows_users(self) -> bool:
        return self.langgraph is None  # a LangGraph source: every followed turn refreshes the view

    def select_user(self, user_id: str) -> None:
        """Show ``user``'s memory (the layer stays; a session or day scope is dropped)."""
        if self.langgraph is not None:
            raise ValueError(f"select_user({user_id!r}): a LangGraph source has no users; its threads are the "
                             "sessions (select_scope(THREAD_ID))")
        self.state.choose_user(check_user_id(user_id))
        self._load()

    def select_layer(self, layer: str) -> None:
        """Show another layer (one of :data:`LAYERS`); the search and window are cleared."""
        self.state.choose_layer(layer)
        self._load()

    def select_scope(self, scope: str | None) -> None:
        """Narrow the layer: a session id (sessions), a day (days), ``"history"`` (long-term) or ``"sessions"``
        (tool calls read from the threads instead of the log); ``None`` shows everything."""
        scope = None if scope in (None, "") else self.data.check_scope(self.layer, scope)
        self.state.choose_scope(scope)
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
        """Search the current layer (scope applied) and list the hits; :attr:`total` says how many match in all.

        Message layers: :func:`agentmem_nb.retrieval.search` — one keyword is the store's substring search (its last
        ``hit_limit`` hits, oldest first); several words, or a keyword found nowhere, are ranked (best first, each
        hit with its explanation; no window: pick a hit to see one). Other layers: substring of their text columns.
        While it runs the old hits are cleared and the view says it is searching.
        """
        query = str(text)
        self.state.found(query, None)
        self._sync_search_box()
        if query.strip():
            with self._busy.working(f"Searching “{query.strip()}”…"):
                self._render_hits()  # the old hits go before the (possibly slow) search starts
                self._render_window()
                self.state.found(query, self._find(query))
        self._render_hits()
        self._render_window()
        return list(self.hits)

    def select_hit(self, index: int) -> InspectorWindow:
        """Show the window around hit ``index`` (0-based, as listed)."""
        hit = self._hit(index)
        self.state.window = self._window_for(hit)
        self._render_hits()
        self._render_window()
        return self.state.window

    def open_hit(self, index: int | None = None) -> tuple[str, int]:
        """Ask the wired chat to open hit ``index``'s message (default: the chosen hit); returns
        ``(session_id, message_id)``. A hit of a non-message layer opens the message its row names, if any."""
        hit = self.window.hit if index is None and self.window is not None else self._hit(index or 0)
        session_id, message_id = self._message_of(hit)
        self._open_message(session_id, message_id)
        assert session_id is not None and message_id is not None  # _open_message raised otherwise
        return session_id, message_id

    def widen(self, *, before: int = 0, after: int = 0) -> InspectorWindow | None:
        """Step the window: add ``before``/``after`` rows on each side (negative narrows); clamped to
        ``0..MAX_WINDOW_SIDE``."""
        return self.set_window(before=self.before + int(before), after=self.after + int(after))

    def set_window(self, *, before: int | None = None, after: int | None = None) -> InspectorWindow | None:
        """Set the window's sides (clamped to ``0..MAX_WINDOW_SIDE``) and re-read it around the same anchor."""
        self.state.set_sides(before=before, after=after)
        if self.window is not None:
            self.state.window = self._window_for(self.window.hit)
        self._render_window()
        return self.window

    # editing (see _memory_edit: every change goes through the store and is recorded in its history)

    def edit_note(self, line_no: int, text: str) -> None:
        """Replace line ``line_no`` (1-based, as in the long-term table) of long-term memory with ``text``."""
        self.editor.edit_line(line_no, text)

    def delete_note(self, line_no: int) -> None:
        """Delete line ``line_no`` of long-term memory (a recorded change: :meth:`restore_version` brings it back)."""
        self.editor.delete_line(line_no)

    def restore_version(self, version: int) -> None:
        """Make long-term memory what change number ``version`` left it (itself a recorded change)."""
        self.editor.restore(version)

    def redact_message(self, session_id: str, message_id: int, *, reason: str) -> None:
        """Hide a message of a conversation (and its copy in its day file) behind a redaction event with its
        reason: the lines on disk are kept, the events are recorded in ``redactions.jsonl`` (see
        :mod:`agentmem_nb.store.redactions`: from then on no search returns it, the agent's included)."""
        if self.store is None:
            raise ValueError(self.data.read_only)
        if self.user_id is None:
            raise ValueError("no user selected: call select_user('...') first")
        assert isinstance(self.data, InspectorData)  # our store: its reads
        self.data.redact(self.mem, self._follower(), session_id, int(message_id), reason)
        self.refresh()
        self.editor.status.value = (f'<div class="amn-inspector-root amn-edit-done">✓ message {int(message_id)} of '
                                    f"{escape(session_id)} redacted; the event is kept in redactions.jsonl</div>")

    def html_values(self) -> dict[str, str]:
        """Every HTML string the widget currently shows, by part (for checks such as escaping)."""
        return {"caption": self.caption.value, "hits_summary": self.hits_summary.value,
                "window_caption": self.window_caption.value, "window": self.window_view.value,
                "status": self._busy.status.value, "edit": self.editor.status.value, "error": self.error_area.value,
                **self.facts_panel.html_values()}

    def table_data(self) -> dict[str, str]:
        """The data each table sends to the browser (itables' JSON, cells escaped), by table."""
        return {"table": self.table._dt_args.get("data_json", ""),
                "window": self.window_table._dt_args.get("data_json", "")}

    # ------------------------------------------------------------------ loading

    def _load(self, *, keep_search: bool = False) -> None:
        with self._busy.working("Loading…"):
            chosen = self.window.hit if self.window is not None else None
            identity = self._hit_identity(chosen) if keep_search and chosen is not None else None
            mem = self.mem if self.user_id is not None else None
            follower = self._follower() if self.user_id is not None else None
            self.frame = self.data.layer_frame(mem, follower, self.layer, self.scope)
            self._sync_controls()
            if keep_search and self.query.strip():
                self.state.found(self.query, self._find(self.query))
                if chosen is not None:
                    self.state.window = self._window_for(self._same_hit(chosen, identity))
        self._render_all()

    def _find(self, text: str) -> Found:
        mem = self.mem if self.user_id is not None else None  # a LangGraph source answers without one
        return self.data.find(mem, self.frame, self.layer, self.scope, text, limit=self.hit_limit)

    def _window_for(self, hit: InspectorHit) -> InspectorWindow:
        mem = self.mem if self.user_id is not None else None
        return self.data.window_for(mem, self.frame, hit, self.before, self.after)

    def _hit(self, index: int) -> InspectorHit:
        if not self.hits:
            raise IndexError("no hits to choose from: search first")
        if not -len(self.hits) <= index < len(self.hits):
            raise IndexError(f"hit {index} does not exist: there are {len(self.hits)} (0..{len(self.hits) - 1})")
        return self.hits[index]

    def _message_of(self, hit: InspectorHit) -> tuple[str | None, int | None]:
        if hit.layer in MESSAGE_LAYERS:
            found = self.data.session_message_id(self._follower() if self.user_id is not None else None, hit)
            return hit.session_id, found
        if hit.anchor < len(self.frame) and "message_id" in self.frame.columns:
            value = self.frame["message_id"].iloc[hit.anchor]
            return hit.session_id, None if pd.isna(value) else int(value)
        if hit.anchor < len(self.frame) and "assistant_message_id" in self.frame.columns:
            value = self.frame["assistant_message_id"].iloc[hit.anchor]
            return hit.session_id, None if pd.isna(value) else int(value)
        return hit.session_id, None

    def _hit_identity(self, hit: InspectorHit) -> tuple[Any, ...] | None:
        """What a row hit points at, independent of its position (which moves: conversations are newest first)."""
        if hit.layer in MESSAGE_LAYERS or hit.anchor >= len(self.frame):
            return None
        return row_identity(self.frame, hit.anchor, self.state.view)

    def _same_hit(self, chosen: InspectorHit, identity: tuple[Any, ...] | None) -> InspectorHit:
        """``chosen`` as the fresh search lists it (new rank and label), or re-anchored on its row's new position
        when it is not listed any more; ``chosen`` itself if its row is gone."""
        if chosen.item is not None:
            return next((h for h in self.hits if h.item == chosen.item), chosen)
        if identity is None:
            return chosen
        position = find_row(self.frame, identity, self.state.view, hint=chosen.anchor)
        if position is None:
            return chosen
        return next((h for h in self.hits if h.anchor == position), None) or self.data.row_hit(
            self.frame, self.state.view, self.layer, chosen.rank, position)

    def _row_chosen(self, rows: list[int]) -> None:
        """A click on a row of the layer's table: a long-term line goes into the edit panel."""
        if rows:
            offset = max(0, len(self.frame) - self.max_rows)
            self.editor.row_chosen(offset + rows[0])
            self.facts_panel.row_chosen(offset + rows[0])

    # ------------------------------------------------------------------ rendering

    def _render_all(self) -> None:
        self._render_table()
        self._render_hits()
        self._render_window()
        self.editor.render()
        self.facts_panel.render()

    def _render_table(self) -> None:
        total = len(self.frame)
        shown = self.frame.tail(self.max_rows)
        who = escape(self.user_id) if self.user_id else escape(self.data.label)
        if self.data.read_only:
            who += f' · <span class="amn-inspector-read-only">{escape(self.data.read_only)}</span>'

        scope = f" · {escape(self.scope)}" if self.scope else ""
        extent = (f"{total:,} rows" if total <= self.max_rows
                  else f"the newest {self.max_rows:,} of {total:,} rows (all of them are in <code>.frame</code>)")
        self.caption.value = (f'<div class="amn-inspector-root amn-caption">{who} · {escape(self.data.layers[self.layer])}'
                              f"{scope} · {extent} · <span class=\"amn-zone\">{escape(zone_note(self.data.zone))}"
                              "</span></div>")
        columns = [c for c in self.data.shown(self.state.view) if c in self.frame.columns] if total else []
        show_rows(self.table, self.data.redacted(self.mem if self.user_id else None, shown, self.layer), columns)

    def _render_hits(self) -> None:
        for button in self._hit_buttons:
            button.close()
        self._hit_buttons = []
        chosen = self.window.hit if self.window is not None else None
        for index, hit in enumerate(self.hits):
            button = widgets.Button(description=displayable(hit.label), tooltip=displayable(hit.explain or hit.label),
                                    layout=widgets.Layout(width="100%", min_height="28px", flex="0 0 auto"),
                                    button_style="info" if hit == chosen else "")
            button.add_class("amn-inspector-hit")
            button.on_click(self._guarded("choose hit", lambda _b, i=index: self.select_hit(i)))
            self._hit_buttons.append(button)
        self.hits_box.children = tuple(self._hit_buttons)
        if self.busy:
            summary = ""
        elif not self.query.strip():
            summary = ""
        elif not self.hits:
            summary = f"No hit for “{escape(self.query)}” in this layer."
        else:
            how = {"ranked": "ranked by relevance, best first", "keyword": "keyword matches, oldest first"}
            what = "match" if self.total == 1 else "matches"
            summary = (f'<b class="amn-hits-count">{len(self.hits):,} of {self.total:,}</b> {what} for '
                       f"“{escape(self.query)}” ({how.get(self.search_mode, '')}); choose one to see its window.")
        self.hits_summary.value = f'<div class="amn-inspector-root amn-hits-summary">{summary}</div>' if summary else ""

    def _render_window(self) -> None:
        window = self.window
        self.editor.sync_redact()
        self.window_caption.value = (f'<span class="amn-inspector-root amn-window-sides">before {self.before} · '
                                     f"after {self.after}</span>")
        self.before_minus.disabled = window is None or self.before == 0
        self.after_minus.disabled = window is None or self.after == 0
        self.before_plus.disabled = window is None or self.before == MAX_WINDOW_SIDE
        self.after_plus.disabled = window is None or self.after == MAX_WINDOW_SIDE
        self.open_button.disabled = window is None or None in self._message_of(window.hit)
        if window is None:
            self.window_view.value = ""
            self.window_table.layout.display = "none"
            show_rows(self.window_table, self.frame.iloc[0:0], [])
            return
        hit = window.hit
        where = f"{escape(hit.key)} " if hit.key else ""
        title = (f'<div class="amn-window-title">Window around {where}'
                 f'{"#" if hit.key else "row "}{hit.anchor} (the anchor row is selected)</div>')
        why = f'<div class="amn-window-why">{escape(hit.explain)}</div>' if hit.explain else ""
        reason = f'<div class="amn-window-reason">{escape(window.reason)}</div>' if window.reason else ""
        self.window_view.value = f'<div class="amn-inspector-root">{title}{why}{reason}</div>'
        view = self.state.view if hit.layer not in MESSAGE_LAYERS else hit.layer
        columns = [c for c in self.data.shown(view) if c in window.frame.columns]
        self.window_table.layout.display = "none" if window.reason else ""
        shown = self.data.redacted(self.mem if self.user_id else None, window.frame, hit.layer)
        show_rows(self.window_table, shown, columns, selected=window.anchor_row)

    def _sync_controls(self) -> None:
        with self._quiet():
            users = self.data.users()
            self.user_picker.layout.display = "none" if self.langgraph is not None else ""
            if self.user_id is not None and self.user_id not in users:
                users = sorted([*users, self.user_id])
            if list(self.user_picker.options) != users:
                self.user_picker.options = users
            self.user_picker.value = self.user_id
            self.layer_picker.value = self.layer
            options = self.data.scope_options(self.mem if self.user_id is not None else None, self.layer, self.scope)
            self.scope_picker.layout.display = "flex" if options else "none"
            if list(self.scope_picker.options) != options:
                self.scope_picker.options = options
            self.scope_picker.value = (self.scope or "") if options else None

    def _sync_search_box(self) -> None:
        with self._quiet():
            self.search_box.value = self.query

    def _after_error(self) -> None:
        # the controls may have moved ahead of the state (e.g. an unknown user typed): show the state again
        self._sync_controls()


def _step_button(label: str, css: str) -> widgets.Button:
    button = widgets.Button(description=label, disabled=True, layout=widgets.Layout(width="auto"))
    button.add_class(css)
    return button


# Colours: JupyterLab theme variables only (no fallback colour that would be wrong in the other theme), so the text
# keeps its contrast in Light and Dark; the browser test measures it (WCAG AA, 4.5:1).
_STYLE = """<style>
/* line-height: ipywidgets' HTML content inherits the 28 px control height, which makes wrapped rows very tall */
.amn-inspector-root { font-size: 13px; line-height: 1.4; color: var(--jp-ui-font-color1); }
.amn-inspector-root .amn-window-why, .amn-inspector-root .amn-zone { color: var(--jp-ui-font-color1); }
.amn-inspector-root .amn-window-why { font-size: 12px; }
.amn-inspector-root.amn-error-box { color: var(--jp-ui-font-color1); background: var(--jp-layout-color1);
  border: 1px solid var(--jp-error-color1); border-left-width: 4px; padding: 4px 8px; }
.amn-inspector-hits { flex: 0 0 auto; }
.amn-inspector-hits > .amn-inspector-hit { flex: 0 0 auto; min-height: 28px; }
.amn-inspector-hit button, button.amn-inspector-hit { text-align: left; justify-content: flex-start;
  overflow: hidden; text-overflow: ellipsis; }
.amn-inspector.amn-busy .amn-inspector-table, .amn-inspector.amn-busy .amn-inspector-hits,
.amn-inspector.amn-busy .amn-inspector-window { opacity: 0.45; pointer-events: none; }
.amn-busy-note { color: var(--jp-ui-font-color1); font-size: 13px; padding: 2px 0; }
""" + TABLE_STYLE + """</style>"""
