"""ChatWidget over the user's own LangGraph graph in a real JupyterLab and headless Chromium: a message typed into
the box goes to *their* graph (``create_agent`` with its own tools and an ``InMemorySaver``), the reply appears with
its tool call and result, and the features of our store (the user box, trace links) are not shown.

Run it alone with ``pytest tests/browser/test_graph_chat_in_lab.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lab_harness import LabServer
from test_lab_widgets import run_all_cells

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]

_SETUP = """\
from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from agentmem_nb.agent import OfflineChatModel
from agentmem_nb.widgets import ChatWidget


@tool
def remember_note(note: str) -> str:
    \"\"\"Keep a durable note about the user.\"\"\"
    return f"saved in my notebook: {note}"


@tool
def search_session(keyword: str) -> str:
    \"\"\"Search the conversation for a keyword.\"\"\"
    return f"#1 [2026-04-08 09:00] user: I prefer green {keyword}"


checkpointer = InMemorySaver()
agent = create_agent(OfflineChatModel(), tools=[remember_note, search_session], checkpointer=checkpointer)
chat = ChatWidget.for_graph(agent, thread_id="morning")
chat"""

_CHECK = """\
state = agent.get_state({"configurable": {"thread_id": "morning"}})
print("types:", [m.type for m in state.values.get("messages", [])])"""


def _write_notebook(path: Path) -> None:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "id": f"c{i}",
              "source": source.splitlines(keepends=True)} for i, source in enumerate((_SETUP, _CHECK))]
    notebook = {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
                "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                            "name": "python3"}, "language_info": {"name": "python"}}}
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")


def test_typing_into_the_chat_over_a_users_graph(lab: LabServer, lab_root: Path, page: Any, artifacts: Path) -> None:
    from playwright.sync_api import expect

    _write_notebook(lab_root / "graph_chat.ipynb")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{lab.url}/lab/tree/graph_chat.ipynb")
    expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible(timeout=60_000)
    lab.wait_for_kernel()
    run_all_cells(page)
    chat = page.locator(".amn-chat")
    expect(chat).to_be_visible(timeout=90_000)
    history = chat.locator(".amn-chat-history")
    expect(history).to_contain_text("No messages yet")
    # what needs our store is not offered, and the status line says why
    expect(chat.locator(".amn-chat-user")).to_be_hidden()
    expect(chat.locator(".amn-chat-status")).to_contain_text("features of agentmem_nb's store")
    expect(chat.locator(".amn-offline-banner")).to_be_hidden()

    box = chat.locator(".amn-chat-input textarea")
    box.click()
    box.type("I prefer green tea in the morning", delay=5)
    box.press("Enter")
    reply = history.locator(".amn-msg-assistant")
    expect(reply).to_have_count(1, timeout=60_000)
    expect(history.locator(".amn-msg-user .amn-msg-body")).to_have_text("I prefer green tea in the morning")
    expect(reply.locator(".amn-msg-body")).to_contain_text("Got it, I'll remember")
    panel = reply.locator(".amn-tool-panel")
    expect(panel.locator("summary")).to_have_text("1 tool call: remember_note")
    panel.locator("summary").click()
    expect(panel.locator(".amn-tool-output")).to_contain_text("saved in my notebook:")
    expect(panel.locator(".amn-tool-input")).to_contain_text("green tea")
    expect(reply.locator(".amn-trace-link")).to_have_count(0)

    # a second turn of the same thread: the search tool, and both turns in the graph's checkpointer
    box.click()
    box.type("What did I say about tea?", delay=5)
    box.press("Enter")
    expect(reply).to_have_count(2, timeout=60_000)
    expect(reply.last.locator(".amn-tool-panel summary")).to_have_text("1 tool call: search_session")
    expect(chat.locator(".amn-chat-send")).to_be_enabled()
    expect(chat.locator(".amn-chat-error")).not_to_contain_text("Error")
    page.screenshot(path=str(artifacts / "graph-chat.png"))

    # the conversation is in their checkpointer: run the check cell again, now that both turns happened
    check = page.locator(".jp-NotebookPanel .jp-Cell").nth(1)
    check.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
    expect(check.locator(".jp-OutputArea-output")).to_contain_text(
        "types: ['human', 'ai', 'tool', 'ai', 'human', 'ai', 'tool', 'ai']", timeout=60_000)
    assert not errors, errors
