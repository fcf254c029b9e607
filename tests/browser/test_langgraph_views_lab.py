"""A LangGraph agent's memory in the inspector and the timeline, in a real JupyterLab (headless Chromium).

The notebook builds a ``create_agent`` graph (agentmem_nb's offline model, which calls real tools) with an
``InMemorySaver`` and an ``InMemoryStore``, chats in two threads, then shows ``MemoryInspector(agent)`` and
``ToolTimeline(agent)``. In the browser: a search over the threads lists its hits, a click on one shows the window of
its thread with the anchor row selected; the store layer lists the items; the timeline draws and lists the graph's
tool calls, and "Trace" opens the run that made one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lab_harness import LabServer

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]

_SETUP = """\
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from agentmem_nb.agent import OfflineChatModel

NOTES = ("alice", "notes")


@tool
def remember_note(note: str, runtime: ToolRuntime) -> str:
    \"\"\"Keep a durable note about the user.\"\"\"
    key = f"note-{len(runtime.store.search(NOTES, limit=1000)) + 1}"
    runtime.store.put(NOTES, key, {"note": note})
    return f"saved {key}"


@tool
def search_session(keyword: str, runtime: ToolRuntime) -> str:
    \"\"\"Search the notes for a keyword.\"\"\"
    hits = [i for i in runtime.store.search(NOTES, limit=1000) if keyword.casefold() in i.value["note"].casefold()]
    return "\\n".join(f"#{n} note: {i.value['note']}" for n, i in enumerate(hits, 1)) or "no hits"


agent = create_agent(OfflineChatModel(), tools=[remember_note, search_session], checkpointer=InMemorySaver(),
                     store=InMemoryStore())
for thread, text in [("morning", "I prefer green tea in the morning"), ("morning", "I prefer oat milk"),
                     ("evening", "What did I say about tea?")]:
    agent.invoke({"messages": [{"role": "user", "content": text}]}, {"configurable": {"thread_id": thread}})
print("chatted")"""

_INSPECTOR = """\
from agentmem_nb.widgets import MemoryInspector

inspector = MemoryInspector(agent, before=1, after=1)
inspector"""

_TIMELINE = """\
from agentmem_nb.widgets import ToolTimeline

timeline = ToolTimeline(agent)
timeline"""


def _write_notebook(path: Path) -> None:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "id": f"cell-{i}",
              "source": source.splitlines(keepends=True)} for i, source in enumerate((_SETUP, _INSPECTOR, _TIMELINE))]
    notebook = {"cells": cells, "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)",
                                                             "language": "python", "name": "python3"}},
                "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")


def _menu(page: Any, *labels: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{labels[0]}$")).click()
    for label in labels[1:]:
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{re.escape(label)}$")).first.click()


def test_a_langgraph_agents_threads_store_and_calls_in_lab(lab: LabServer, lab_root: Path, page: Any,
                                                           artifacts: Path) -> None:
    from playwright.sync_api import expect

    _write_notebook(lab_root / "langgraph.ipynb")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{lab.url}/lab/tree/langgraph.ipynb")
    expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible(timeout=60_000)
    lab.wait_for_kernel()
    _menu(page, "Run", "Run All Cells")
    inspector = page.locator(".amn-inspector")
    timeline = page.locator(".amn-timeline")
    expect(inspector).to_be_visible(timeout=90_000)
    expect(timeline).to_be_visible(timeout=60_000)

    # ---- the inspector: the checkpointer's threads as the sessions, read only
    caption = inspector.locator(".amn-inspector-caption")
    expect(caption).to_contain_text("InMemorySaver + InMemoryStore")
    expect(caption).to_contain_text("read only")
    expect(inspector.locator(".amn-inspector-user")).to_be_hidden()
    expect(inspector.locator(".amn-inspector-edit")).to_be_hidden()
    table = inspector.locator(".amn-inspector-table table.dataTable")
    expect(table).to_contain_text("What did I say about tea?")
    expect(inspector.locator(".amn-inspector-table .dt-info")).to_contain_text("of 12 entries")  # 8 + 4 messages
    # a search: the exact substring search over every thread, then a hit's window in its own thread
    search = inspector.locator(".amn-inspector-search input")
    search.fill("tea")
    search.press("Enter")
    hits = inspector.locator(".amn-inspector-hit")
    # the morning's question, the evening's question, the note the evening's search found, and its reply
    expect(hits).to_have_count(4)
    expect(inspector.locator(".amn-inspector-hits-summary")).to_contain_text("4 of 4")
    expect(hits.nth(2)).to_contain_text("evening tool: #1 note: User prefers green tea")
    search.fill("oat")
    search.press("Enter")
    expect(hits).to_have_count(1)  # the tool call's arguments hold it too, but a search reads the message text
    expect(hits.first).to_contain_text("morning user: I prefer oat milk")
    hits.first.click()
    window = inspector.locator(".amn-inspector-window table.dataTable")
    expect(window.locator("tr.selected")).to_contain_text("I prefer oat milk")
    expect(window.locator("tbody tr")).to_have_count(3)  # before 1, the anchor, after 1
    expect(window).to_contain_text("Got it, I'll remember")  # the turn before: its reply
    expect(inspector.locator(".amn-inspector-window-title")).to_contain_text("Window around morning #5")
    inspector.locator(".amn-window-after-plus").click()
    expect(window.locator("tbody tr")).to_have_count(4)
    inspector.screenshot(path=str(artifacts / "langgraph-inspector.png"))
    # the store's namespaces as a layer
    inspector.locator(".amn-inspector-layer select").select_option(label="Store items")
    expect(table).to_contain_text("note-2")
    expect(inspector.locator(".amn-inspector-scope select option")).to_have_count(3)  # all, alice, alice.notes

    # ---- the timeline: the graph's tool calls, a click, the trace of the run
    timeline.scroll_into_view_if_needed()
    expect(timeline.locator(".amn-timeline-summary")).to_contain_text("3 calls")
    expect(timeline.locator(".amn-timeline-mark")).to_have_count(3)
    calls = timeline.locator(".amn-timeline-table table.dataTable")
    expect(calls.locator("tbody tr")).to_have_count(3)
    expect(calls).to_contain_text("remember_note")
    expect(calls).to_contain_text("search_session")
    expect(timeline.locator(".amn-timeline-user")).to_be_hidden()
    calls.locator("tbody tr", has_text="search_session").click()  # a row chooses its call
    expect(timeline.locator(".amn-timeline-detail")).to_contain_text("search_session")
    timeline.locator(".amn-timeline-trace").click()
    trace = timeline.locator(".amn-trace")
    expect(trace).to_be_visible()
    expect(trace.locator(".amn-trace-head")).to_contain_text("evening")
    expect(trace.locator(".amn-trace-row")).to_have_count(3)  # model step, the tool, model step
    expect(trace.locator(".amn-trace-row.amn-trace-tool")).to_contain_text("search_session")
    timeline.screenshot(path=str(artifacts / "langgraph-timeline.png"))
    assert not [e for e in errors if "amn" in e or "itables" in e.lower()], errors
