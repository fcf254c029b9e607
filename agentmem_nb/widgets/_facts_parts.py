"""The pieces every view of a user's facts shows, written once: the capability check and why it fails, one key's
history as a timeline, and the conflicts held for review as rows with their buttons.

Two views use them: :class:`~agentmem_nb.widgets.facts.FactsWidget` (the standalone widget) and the inspector's Facts
layer (:mod:`agentmem_nb.widgets._inspector_facts`). Rows made of widgets are rebuilt on every refresh, so
:func:`replace_children` closes the old ones: ipywidgets keeps every open widget in its registry
(``Widget.widgets``) until it is closed, and a button's handler refers back to the view, so rows replaced without
``close()`` stayed alive for the rest of the session — one label, two or three buttons and their layouts and styles
per conflict, per refresh.

Every text reaches HTML through :func:`~agentmem_nb.widgets.html.escape` (a value may hold anything a user typed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from agentmem_nb.store.contract import KeepsFacts
from agentmem_nb.widgets._callbacks import _parts  # the one walk over a widget's parts (CallbackErrors.close uses it)
from agentmem_nb.widgets.html import displayable, escape

if TYPE_CHECKING:
    from agentmem_nb.store import Fact
    from agentmem_nb.store.contract import FactRecord

__all__ = ["NO_FACTS", "facts_of", "timeline_html", "timeline_line", "conflict_label", "conflict_row",
           "source_button", "replace_children", "Resolve", "OpenSource"]

NO_FACTS = ("This store keeps no facts (the PostgreSQL backend has no structured memory yet: see "
            "store.contract.KeepsFacts). Nothing is extracted or shown here; to see facts, use a file store "
            "(agentmem-nb export URL out/ copies a database user into one).")
"""Why a facts view is disabled for a store whose users have no ``facts``."""

Resolve = Callable[[int, bool], Any]
"""``resolve(fact_id, accept)``: what a conflict row's accept and reject buttons call."""
OpenSource = Callable[[int], Any]
"""``open_source(fact_id)``: what a row's source button calls."""

_TIME = "%Y-%m-%d %H:%M"


def facts_of(user: object) -> FactRecord | None:
    """``user``'s facts, or ``None`` when its store keeps none (:class:`~agentmem_nb.store.contract.KeepsFacts`,
    the one test the agent uses too)."""
    return user.facts if isinstance(user, KeepsFacts) else None


def timeline_line(fact: Fact) -> str:
    """One value of a key's history as HTML: value, status (and how it ended), from → to, source, extractor."""
    start = fact.valid_from.strftime(_TIME) if fact.valid_from else "?"
    end = fact.valid_to.strftime(_TIME) if fact.valid_to else "now"
    how = f", {fact.ended_by}" if fact.ended_by else ""
    return (f"<b>{escape(fact.value)}</b> [{escape(fact.status)}{escape(how)}] {escape(start)} → {escape(end)} "
            f"<small>from {escape(str(fact.source or '-'))} by {escape(fact.extracted_by)}</small>")


def timeline_html(history: Sequence[Fact]) -> str:
    """One key's history as an HTML list, oldest first (:func:`timeline_line` per value)."""
    if not history:
        return "<i>no values yet</i>"
    return "<ol class='amn-facts-root'>" + "".join(f"<li>{timeline_line(f)}</li>" for f in history) + "</ol>"


def conflict_label(fact: Fact, active: Sequence[Fact]) -> str:
    """A held value beside the key's active values, as HTML: ``user.name: Alicia (now Alice; from s1#7)``."""
    now = ", ".join(f.value for f in active) or "-"
    return (f"{escape(str(fact.key))}: <b>{escape(fact.value)}</b> (now {escape(now)}; "
            f"from {escape(str(fact.source or '-'))})")


def conflict_row(fact: Fact, active: Sequence[Fact], *, guarded: Callable[[str, Callable[..., Any]], Any],
                 resolve: Resolve, open_source: OpenSource | None = None) -> widgets.HBox:
    """One held value as a row: its label, ``accept`` and ``reject`` (and ``source`` when ``open_source`` is
    given, enabled when the fact has a source). ``guarded`` wraps each handler so its error shows in the view
    (:meth:`~agentmem_nb.widgets._callbacks.CallbackErrors._guarded`)."""
    fact_id = fact.fact_id
    label = widgets.HTML(conflict_label(fact, active))
    accept = widgets.Button(description="accept", button_style="success", layout=widgets.Layout(width="auto"))
    accept.add_class("amn-facts-accept")
    reject = widgets.Button(description="reject", button_style="warning", layout=widgets.Layout(width="auto"))
    reject.add_class("amn-facts-reject")
    accept.on_click(guarded("accepting a fact", lambda _b: resolve(fact_id, True)))
    reject.on_click(guarded("rejecting a fact", lambda _b: resolve(fact_id, False)))
    parts: list[widgets.Widget] = [label, accept, reject]
    if open_source is not None:
        parts.append(source_button(fact, guarded=guarded, open_source=open_source))
    row = widgets.HBox(parts, layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
    row.add_class("amn-facts-conflict")
    return row


def source_button(fact: Fact, *, guarded: Callable[[str, Callable[..., Any]], Any],
                  open_source: OpenSource) -> widgets.Button:
    """A button that opens the window around ``fact``'s source message (disabled, with a tooltip saying why, when
    the fact names none)."""
    fact_id = fact.fact_id
    where = str(fact.source) if fact.source is not None else "no source"
    button = widgets.Button(description=displayable(f"source {where}"), icon="external-link",
                            disabled=fact.source is None, layout=widgets.Layout(width="auto"),
                            tooltip=displayable(f"show the messages around {where}" if fact.source is not None
                                                else "this fact names no source message (it was recorded by hand)"))
    button.add_class("amn-facts-source")
    button.on_click(guarded("opening a fact's source", lambda _b: open_source(fact_id)))
    return button


def replace_children(box: widgets.Box, children: Sequence[widgets.Widget]) -> None:
    """Show ``children`` in ``box`` and close what it showed before (each old child and all its parts), so rows
    rebuilt on every refresh do not pile up in ipywidgets' registry."""
    old = [c for c in box.children if c not in children]
    box.children = tuple(children)
    for child in old:
        for part in _parts(child):
            part.close()
        child.close()
