"""The inspector's Facts layer: the controls under the facts table and the decisions they make.

The table itself is the inspector's (the layer ``"facts"``: :func:`agentmem_nb.frames.facts`, current facts, or every
fact ever with the scope ``"history"``; searched and paged like every other layer). This panel adds what a table
cannot show:

* **one key's history as a timeline** — choose a row (or :meth:`FactsPanel.select_fact`): every value the key ever
  had, oldest first, each with its status, validity, source and a button to that source;
* **the conflicts held for review** with accept and reject buttons: the decision goes through the store's
  ``facts.resolve`` (an event, ``by="inspector"``) and the inspector refreshes;
* **a fact's source one click away** — the source button opens the window around the message the fact came from in
  the inspector's own window table (anchor selected, steppable with ± before/after), from where "Open in chat"
  opens it in a followed chat (:mod:`agentmem_nb.widgets._open`).

The timeline and the conflict rows are the pieces :class:`~agentmem_nb.widgets.facts.FactsWidget` shows too
(:mod:`agentmem_nb.widgets._facts_parts`); rebuilt rows are closed, so refreshing after every chat turn leaves no
widgets behind. A store whose users keep no facts (:class:`~agentmem_nb.store.contract.KeepsFacts`, the PostgreSQL
backend today) shows the layer with no rows and this panel disabled, with
:data:`~agentmem_nb.widgets._facts_parts.NO_FACTS` as the reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as widgets

from agentmem_nb.errors import InvalidArgument, StoreError
from agentmem_nb.store.facts import FactKey, fact_key
from agentmem_nb.widgets._facts_parts import (
    NO_FACTS,
    conflict_row,
    facts_of,
    replace_children,
    source_button,
    timeline_line,
)
from agentmem_nb.widgets._inspector_data import InspectorHit, InspectorWindow
from agentmem_nb.widgets.html import escape

if TYPE_CHECKING:
    from agentmem_nb.store import Fact
    from agentmem_nb.store.contract import FactRecord
    from agentmem_nb.widgets.inspector import MemoryInspector

__all__ = ["FactsPanel", "RESOLVED_BY"]

RESOLVED_BY = "inspector"
"""Who a decision made from the inspector is recorded as (the resolve event's ``by``)."""


class FactsPanel:
    """The Facts layer's controls (shown on the ``facts`` layer): a key's timeline, the conflicts, the sources.

    >>> # inspector.select_layer("facts"); panel = inspector.facts_panel
    >>> # panel.select_fact(7)           # the timeline of fact 7's key
    >>> # panel.resolve(9, accept=True)  # what a conflict's accept button does
    >>> # panel.open_source(7)           # the window around fact 7's source message
    """

    def __init__(self, inspector: MemoryInspector) -> None:
        self._inspector = inspector
        self._key: tuple[str, FactKey] | None = None  # (user, key) whose timeline is shown
        self.chosen: int | None = None
        """The fact chosen last (its row is marked in the timeline)."""
        self.notice = widgets.HTML()
        self.notice.add_class("amn-facts-notice")
        self.timeline_title = widgets.HTML()
        self.timeline_title.add_class("amn-facts-timeline-title")
        self.timeline = widgets.VBox()
        self.timeline.add_class("amn-facts-timeline")
        self.conflicts_title = widgets.HTML()
        self.conflicts_title.add_class("amn-facts-conflicts-title")
        self.conflicts = widgets.VBox()
        self.conflicts.add_class("amn-facts-conflicts")
        self.status = widgets.HTML()
        self.status.add_class("amn-facts-status")
        self.parts = widgets.VBox([self.timeline_title, self.timeline, self.conflicts_title, self.conflicts,
                                   self.status])
        self.box = widgets.VBox([widgets.HTML(_STYLE), self.notice, self.parts])
        self.box.add_class("amn-inspector-facts")

    # ------------------------------------------------------------------ what the controls do

    @property
    def facts(self) -> FactRecord | None:
        """The shown user's facts (``None``: no user, or a store that keeps no facts)."""
        inspector = self._inspector
        return facts_of(inspector.mem) if inspector.user_id is not None else None

    @property
    def enabled(self) -> bool:
        """Whether the store keeps facts for the shown user (otherwise :attr:`notice` says why)."""
        return self.facts is not None

    @property
    def key(self) -> FactKey | None:
        """The key whose timeline is shown."""
        shown = self._key
        return shown[1] if shown is not None and shown[0] == self._inspector.user_id else None

    def select_fact(self, fact_id: int) -> list[Fact]:
        """Show the timeline of fact ``fact_id``'s key (every value, oldest first); returns it."""
        fact = self._fact(fact_id)
        self.chosen = fact.fact_id
        self._key = (self._require_user(), fact.key)
        self.status.value = ""  # the last decision's note belongs to the last decision
        return self._draw_timeline()

    def select_key(self, key: str) -> list[Fact]:
        """Show the timeline of ``key`` (``"subject.attribute"``, e.g. ``"user.lives_in"``); returns it."""
        subject, _, attribute = str(key).partition(".")
        self._key = (self._require_user(), fact_key(subject, attribute))
        self.chosen = None
        self.status.value = ""
        return self._draw_timeline()

    def resolve(self, fact_id: int, *, accept: bool) -> Fact:
        """Accept (the held value becomes the active one) or reject a conflict: an event in the store, recorded
        ``by="inspector"``; then the inspector refreshes and the key's timeline is shown."""
        facts = self._require_facts()
        fact = facts.resolve(int(fact_id), accept=bool(accept), by=RESOLVED_BY)
        self.chosen = fact.fact_id
        self._key = (self._require_user(), fact.key)
        self._inspector.refresh()
        what = "accepted" if accept else "rejected"
        self.status.value = (f'<div class="amn-inspector-root amn-facts-done">✓ {escape(fact.describe())} {what}; '
                             "the decision is recorded as an event in facts.jsonl</div>")
        return fact

    def open_source(self, fact_id: int) -> InspectorWindow:
        """Show the messages around fact ``fact_id``'s source in the inspector's window (the source message is the
        selected anchor; ± before/after step it; "Open in chat" opens it in a followed chat)."""
        fact = self._fact(fact_id)
        if fact.source is None:
            raise ValueError(f"fact {fact.fact_id} ({fact.describe()}) names no source message: it was recorded "
                             "without one (by hand or by an import), so there is no window to show")
        inspector = self._inspector
        source = fact.source
        hit = InspectorHit(0, "sessions", source.session_id, source.message_id, None,
                           f"source of {fact.describe()}", session_id=source.session_id)
        inspector.state.window = inspector._window_for(hit)
        inspector._render_window()
        window = inspector.state.window
        assert window is not None  # set just above
        return window

    def row_chosen(self, position: int) -> None:
        """A row of the facts table was clicked: show its key's timeline."""
        inspector = self._inspector
        frame = inspector.frame
        if inspector.layer != "facts" or position >= len(frame) or "fact_id" not in frame.columns:
            return
        self.select_fact(int(frame["fact_id"].iloc[position]))

    def html_values(self) -> dict[str, str]:
        """Every HTML string the panel shows, by part (the inspector's :meth:`html_values` includes them)."""
        def texts(box: widgets.Box) -> str:
            return "".join(part.value for row in box.children for part in getattr(row, "children", (row,))
                           if isinstance(part, widgets.HTML))

        return {"facts_notice": self.notice.value,
                "facts_timeline": self.timeline_title.value + texts(self.timeline),
                "facts_conflicts": self.conflicts_title.value + texts(self.conflicts),
                "facts_status": self.status.value}

    # ------------------------------------------------------------------ view

    def render(self) -> None:
        """Show the panel on the facts layer (disabled, with the reason, when the store keeps no facts); redraw the
        timeline and the conflicts."""
        inspector = self._inspector
        shown = inspector.layer == "facts" and inspector.user_id is not None
        self.box.layout.display = "" if shown else "none"
        if not shown:
            return
        facts = self.facts
        if facts is None:
            self.notice.value = f'<div class="amn-inspector-root amn-facts-disabled">{escape(NO_FACTS)}</div>'
            self.parts.layout.display = "none"
            replace_children(self.timeline, [])
            replace_children(self.conflicts, [])
            return
        self.notice.value = ""
        self.parts.layout.display = ""
        self._draw_timeline()
        self._draw_conflicts(facts)

    def _draw_timeline(self) -> list[Fact]:
        key, facts = self.key, self.facts
        if key is None or facts is None:
            self.timeline_title.value = ('<div class="amn-inspector-root amn-facts-hint">Choose a fact in the table '
                                         "to see every value its key has had.</div>")
            replace_children(self.timeline, [])
            return []
        history = facts.history(key.subject, key.attribute)
        self.timeline_title.value = (f'<div class="amn-inspector-root"><b>History of {escape(str(key))}</b> '
                                     f"({len(history)} value{'s' if len(history) != 1 else ''}, oldest first)</div>")
        guarded = self._inspector._guarded
        rows: list[widgets.Widget] = []
        for fact in history:
            mark = " amn-facts-chosen" if fact.fact_id == self.chosen else ""
            line = widgets.HTML(f'<span class="amn-inspector-root amn-facts-step{mark}">#{fact.fact_id} '
                                f"{timeline_line(fact)}</span>")
            row = widgets.HBox([line, source_button(fact, guarded=guarded, open_source=self.open_source)],
                               layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
            row.add_class("amn-facts-entry")
            rows.append(row)
        replace_children(self.timeline, rows)
        return history

    def _draw_conflicts(self, facts: FactRecord) -> None:
        held = facts.conflicts()
        self.conflicts_title.value = (f'<div class="amn-inspector-root"><b>Conflicts held for review</b> '
                                      f"({len(held)})</div>")
        rows: list[widgets.Widget] = [
            conflict_row(fact, facts.get(fact.subject, fact.attribute), guarded=self._inspector._guarded,
                         resolve=lambda i, accept: self.resolve(i, accept=accept), open_source=self.open_source)
            for fact in held]
        replace_children(self.conflicts, rows)

    # ------------------------------------------------------------------ helpers

    def _require_user(self) -> str:
        user_id = self._inspector.user_id
        if user_id is None:
            raise ValueError("no user selected: call select_user('...') first")
        return user_id

    def _require_facts(self) -> FactRecord:
        facts = self.facts
        if facts is None:
            self._require_user()
            raise StoreError(NO_FACTS)  # as redacting on such a store does (_inspector_data.NO_REDACTIONS)
        return facts

    def _fact(self, fact_id: int) -> Fact:
        found = next((f for f in self._require_facts().all() if f.fact_id == int(fact_id)), None)
        if found is None:
            raise InvalidArgument(f"no fact {fact_id!r} for user {self._inspector.user_id!r}: choose one listed in "
                                  "the facts layer (scope 'history' lists every fact ever)")
        return found


# theme variables only, like the inspector's own style (Light and Dark both read)
_STYLE = """<style>
.amn-facts-step.amn-facts-chosen { border-left: 3px solid var(--jp-brand-color1); padding-left: 4px; }
.amn-inspector-root.amn-facts-disabled { border: 1px solid var(--jp-border-color1); padding: 4px 8px; }
</style>"""
