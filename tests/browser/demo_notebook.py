"""The notebook the browser test opens, written at test time into the JupyterLab root (a tmp folder).

It is generated rather than stored so that it shows exactly the widgets that exist in this checkout (the inspector
and the timeline cells are added when their modules are importable) and so that no stale outputs are ever loaded.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["write_demo_notebook", "SEED_MESSAGES", "XSS_CONTROL_CLASS", "LONG_TITLE", "LONG_COUNT"]

SEED_MESSAGES = (
    "I moved to Lyon in 2024 for a new job.",
    "I prefer green tea in the morning.",
    "My sister Ana lives in Porto.",
)
"""Said by alice before the widgets are shown, so the chat has history and the inspector has something to find."""

LONG_TITLE = "A long conversation"
LONG_COUNT = 1000

XSS_CONTROL_CLASS = "amn-xss-control"
"""A deliberately unescaped ``<img onerror>`` in a plain ``ipywidgets.HTML``: it proves that, in this very page, the
payload *would* run if it reached the DOM unescaped (the widget uses innerHTML), so the test's negative checks are
meaningful. It sets a flag instead of opening a dialog."""

_SETUP = f"""\
from pathlib import Path

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, LLMConfig

store = MemoryStore(Path("memory"), zone="UTC")
# an explicit empty config: the offline model, whatever config/llm.yaml or AGENTMEM_* say on this machine
service = ChatService(store, config=LLMConfig())
alice = store.user("alice")
# a long thread for the "opens in about a second" check, written straight to the store (no agent needed)
alice.conversations.create("long", title={LONG_TITLE!r})
for i in range({LONG_COUNT}):
    alice.append("long", "user" if i % 2 == 0 else "assistant", f"long message {{i}} with *some* markdown")
for text in {list(SEED_MESSAGES)!r}:
    service.turn("alice", "s1", text)
print("seeded", len(alice.session("s1")), "+", len(alice.session("long")), "messages")"""

_CHAT = """\
from agentmem_nb.widgets.chat import ChatWidget

chat = ChatWidget(service, user_id="alice", session_id="s1")
chat"""

_CONTROL = f"""\
import ipywidgets as widgets

control = widgets.HTML('<img src="x-control" onerror="window.__control_fired = 1">')
control.add_class({XSS_CONTROL_CLASS!r})
control"""

_INSPECTOR = """\
from agentmem_nb.widgets.inspector import MemoryInspector

inspector = MemoryInspector(store, user_id="alice")
inspector"""

_TIMELINE = """\
from agentmem_nb.widgets.timeline import ToolTimeline

timeline = ToolTimeline(store, user_id="alice")
timeline.follow(chat)  # refreshes itself after every chat turn (the inspector keeps its Refresh button here)
timeline"""


def _cell(source: str) -> dict[str, object]:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": source.splitlines(keepends=True)}


def write_demo_notebook(path: Path, *, inspector: bool, timeline: bool) -> list[str]:
    """Write the notebook (nbformat 4 JSON by hand: importing nbformat costs ~2 s) and return its cell sources."""
    sources = [_SETUP, _CHAT, _CONTROL]
    if inspector:
        sources.append(_INSPECTOR)
    if timeline:
        sources.append(_TIMELINE)
    notebook = {
        "cells": [_cell(s) for s in sources],
        "metadata": {
            "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    for i, cell in enumerate(notebook["cells"]):  # type: ignore[union-attr]
        cell["id"] = f"cell-{i}"  # type: ignore[index]
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")
    return sources
