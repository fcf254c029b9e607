"""``FactsWidget``: a user's facts in a notebook — the current ones, one key's history as a timeline, the conflicts
held for review with buttons to accept or reject each, and the source message of any fact with the messages around
it (its window), one click away.

State and data only: the rows come from :func:`agentmem_nb.frames.facts` and the decisions go to the store
(``user.facts.resolve``, itself an event), every text reaches HTML through :func:`~agentmem_nb.widgets.html.escape`,
and a failing callback shows its error in the widget (:class:`~agentmem_nb.widgets._callbacks.CallbackErrors`).
The timeline and the conflict rows are :mod:`agentmem_nb.widgets._facts_parts`, which the inspector's Facts layer
shows too (``MemoryInspector(store).select_layer("facts")``).
``resolve(fact_id, accept=...)`` does what the buttons do, so tests and notebooks drive it without a browser.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

from agentmem_nb import frames
from agentmem_nb.store import Fact, UserMemory
from agentmem_nb.widgets._callbacks import CallbackErrors
from agentmem_nb.widgets._facts_parts import conflict_row, replace_children, timeline_html
from agentmem_nb.widgets.html import escape

__all__ = ["FactsWidget", "timeline_html"]


class FactsWidget(CallbackErrors, widgets.VBox):
    """The facts of one user.

    >>> # w = FactsWidget(store.user("alice")); w.show_key("user.lives_in"); w.resolve(fact_id, accept=True)
    """

    _css_root = "amn-facts-root"
    _css_error = "amn-facts-error"

    def __init__(self, user: UserMemory, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._init_callbacks()
        self.user = user
        self.current = widgets.HTML()
        self.key_picker = widgets.Dropdown(description="history of", options=[])
        self.timeline = widgets.HTML()
        self.conflict_box = widgets.VBox()
        self.source_picker = widgets.Dropdown(description="source of", options=[])
        self.source = widgets.HTML()
        self.key_picker.observe(self._guarded_change("showing a key", self.show_key), names="value")
        self.source_picker.observe(self._guarded_change("opening a source", self.show_source), names="value")
        self.children = [widgets.HTML("<b>Current facts</b>"), self.current, self.key_picker, self.timeline,
                         self.source_picker, self.source,
                         widgets.HTML("<b>Conflicts held for review</b>"), self.conflict_box, self.error_area]
        self.refresh()

    @property
    def frame(self) -> pd.DataFrame:
        """The current facts (active and held) as :func:`agentmem_nb.frames.facts` gives them."""
        return frames.facts(self.user, current=True)

    def refresh(self) -> None:
        """Read the facts again and redraw."""
        current = self.frame
        shown = current[["key", "value", "status", "source", "valid_from"]]
        self.current.value = shown.to_html(index=False, escape=True, classes=self._css_root) if len(shown) else (
            "<i>no facts yet</i>")
        keys = sorted({str(k) for k in self.user.facts.keys()})
        with self._quiet():
            selected = self.key_picker.value
            self.key_picker.options = keys
            self.key_picker.value = selected if selected in keys else (keys[0] if keys else None)
            chosen = self.source_picker.value
            choices = [(f"#{f.fact_id} {f.describe()} [{f.status}]", f.fact_id) for f in self.user.facts.all()]
            self.source_picker.options = choices
            self.source_picker.value = chosen if chosen in {i for _, i in choices} else None
        if self.key_picker.value:
            self.show_key(self.key_picker.value)
        else:
            self.timeline.value = ""
        self._draw_conflicts()

    def show_source(self, fact_id: int | None, *, around: int = 2) -> None:
        """Show the message fact ``fact_id`` came from with ``around`` messages each side (its window), the
        source message marked."""
        if fact_id is None:
            self.source.value = ""
            return
        fact = self.user.facts.fact(fact_id)
        if fact.source is None:
            self.source.value = f"<i>{escape(fact.describe())} has no source message</i>"
            return
        window = self.user.session_window(fact.source.session_id, fact.source.message_id, around, around)
        if not window.messages:
            self.source.value = f"<i>{escape(window.reason)}</i>"
            return
        lines = [(f"<b>{escape(m.anchor_line())}</b>" if m.message_id == window.anchor_id else escape(m.anchor_line()))
                 for m in window.messages]
        self.source.value = (f"<div class='{self._css_root}'>{escape(str(fact.source))}:<br>" + "<br>".join(lines)
                             + "</div>")

    def show_key(self, key: str | None) -> None:
        """Show the timeline of ``key`` (``"subject.attribute"``)."""
        if not key:
            self.timeline.value = ""
            return
        subject, _, attribute = key.partition(".")
        self.timeline.value = timeline_html(self.user.facts.history(subject, attribute))

    def resolve(self, fact_id: int, *, accept: bool) -> Fact:
        """Accept or reject a held value (an event in the store), then redraw."""
        fact = self.user.facts.resolve(fact_id, accept=accept, by="widget")
        self.refresh()
        return fact

    def _draw_conflicts(self) -> None:
        # the old rows are closed by replace_children: rows rebuilt without it stayed in ipywidgets' registry
        rows: list[widgets.Widget] = [
            conflict_row(fact, self.user.facts.get(fact.subject, fact.attribute), guarded=self._guarded,
                         resolve=lambda i, accept: self.resolve(i, accept=accept))
            for fact in self.user.facts.conflicts()]
        replace_children(self.conflict_box, rows or [widgets.HTML("<i>none</i>")])
