"""The turn's result and event types import without langchain, and are the very classes the agent returns."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
AGENT_DEPENDENCIES = ("langchain", "langchain_core", "langchain_openai", "langgraph")

PROBE = """
import json, sys
import {module}
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in {heavy!r})))
"""


def _agent_modules_after(module: str) -> list[str]:
    """The langchain/langgraph modules loaded by ``import module`` in a fresh interpreter."""
    code = PROBE.format(module=module, heavy=AGENT_DEPENDENCIES)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120,
                          check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("module", ["agentmem_nb.turns", "agentmem_nb.widgets.chat", "agentmem_nb.widgets"])
def test_the_turn_types_and_the_widgets_import_no_langchain(module: str) -> None:
    assert _agent_modules_after(module) == []


def test_the_probe_sees_langchain_when_the_agent_is_imported() -> None:
    assert "langchain" in _agent_modules_after("agentmem_nb.agent")


def test_the_agent_exports_the_same_classes() -> None:
    import agentmem_nb.agent as agent
    import agentmem_nb.turns as turns

    assert (agent.TurnResult, agent.TurnEvent) == (turns.TurnResult, turns.TurnEvent)
