"""What the inspector has chosen: user, layer, scope, search, hits, window sides — and the rules for changing it.

Plain data and transitions, no widget and no store: :class:`~agentmem_nb.widgets.inspector.MemoryInspector` reads
through :class:`~agentmem_nb.widgets._inspector_data.InspectorData` and draws from this state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentmem_nb.store import MAX_WINDOW_SIDE
from agentmem_nb.widgets._inspector_data import LAYERS, MESSAGE_LAYERS, Found, InspectorHit, InspectorWindow, view_of

__all__ = ["InspectorState", "clamp_side"]


def clamp_side(value: int) -> int:
    """A window side clamped to ``0..MAX_WINDOW_SIDE``."""
    return max(0, min(MAX_WINDOW_SIDE, int(value)))


@dataclass
class InspectorState:
    """The inspector's choices. ``search_mode``: ``"keyword"``, ``"ranked"`` or ``""`` (no search yet);
    ``total``: how many rows or messages match the query in all (the hits are at most ``hit_limit`` of them)."""

    user_id: str | None = None
    layer: str = "sessions"
    scope: str | None = None
    query: str = ""
    search_mode: str = ""
    hits: list[InspectorHit] = field(default_factory=list)
    total: int = 0
    window: InspectorWindow | None = None
    before: int = 2
    after: int = 2
    layers: tuple[str, ...] = tuple(LAYERS)
    """The layers the source has (a LangGraph source has its own, see ``_langgraph_source``)."""

    @property
    def view(self) -> str:
        """The table shown (see :func:`~agentmem_nb.widgets._inspector_data.view_of`)."""
        return view_of(self.layer, self.scope)

    def choose_user(self, user_id: str) -> bool:
        """Switch user (a session or day scope and the search are dropped); True if it changed."""
        if user_id == self.user_id:
            return False
        self.user_id = user_id
        if self.layer in MESSAGE_LAYERS:
            self.scope = None
        self.clear_search()
        return True

    def choose_layer(self, layer: str) -> bool:
        """Switch layer (scope and search dropped); True if it changed."""
        if layer not in self.layers:
            raise ValueError(f"unknown layer {layer!r}: use one of {', '.join(self.layers)}")
        if layer == self.layer:
            return False
        self.layer = layer
        self.scope = None
        self.clear_search()
        return True

    def choose_scope(self, scope: str | None) -> bool:
        """Narrow the layer (search dropped); True if it changed."""
        if scope == self.scope:
            return False
        self.scope = scope
        self.clear_search()
        return True

    def found(self, query: str, result: Found | None) -> None:
        """Record a search's answer (``None``: a blank query, nothing searched)."""
        self.query = query
        self.window = None
        self.hits = list(result.hits) if result is not None else []
        self.total = result.total if result is not None else 0
        self.search_mode = result.mode if result is not None else ""

    def set_sides(self, *, before: int | None, after: int | None) -> None:
        """Set the window's sides, clamped."""
        if before is not None:
            self.before = clamp_side(before)
        if after is not None:
            self.after = clamp_side(after)

    def clear_search(self) -> None:
        """Forget the query, its hits and the window."""
        self.query = ""
        self.search_mode = ""
        self.hits = []
        self.total = 0
        self.window = None
