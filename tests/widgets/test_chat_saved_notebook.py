"""A notebook saved after it ran shows the chat as it ended — its static HTML copy (what GitHub and nbviewer show,
and JupyterLab before the kernel runs) is updated by the cells that talk through it, not left empty."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def test_the_saved_output_shows_the_conversation_as_it_ended(tmp_path: Path) -> None:
    cells = [
        "from agentmem_nb import MemoryStore\n"
        "from agentmem_nb.agent import ChatService, LLMConfig\n"
        "from agentmem_nb.widgets import ChatWidget\n"
        "store = MemoryStore('memory', zone='UTC')\n"
        "chat = ChatWidget(ChatService(store, config=LLMConfig()), user_id='alice', session_id='s1')\n"
        "chat",
        "chat.send('I moved to Lyon in 2024.')\n"
        "chat.send('Where did I move?').reply",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    shown = notebook.cells[0].outputs
    assert len(shown) == 1 and "application/vnd.jupyter.widget-view+json" in shown[0]["data"]
    static = shown[0]["data"]["text/html"]
    assert "I moved to Lyon in 2024." in static and "Where did I move?" in static
    assert "4 messages" in static and "No messages yet" not in static
    assert "messages=4" in shown[0]["data"]["text/plain"]
