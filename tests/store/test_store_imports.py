"""The store stays light: importing it pulls in none of the notebook or agent dependencies."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from store_testlib import REPO

HEAVY = ("pandas", "ipywidgets", "langchain", "langchain_core", "langchain_openai", "langgraph")

PROBE = """
import json, sys
{prelude}
import {module}
heavy = {heavy!r}
print(json.dumps(sorted(name for name in sys.modules if name.split(".")[0] in heavy)))
"""


def _heavy_modules_after(module: str, prelude: str = "") -> list[str]:
    code = PROBE.format(module=module, prelude=prelude, heavy=HEAVY)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120,
                          check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("module", ["agentmem_nb.store", "agentmem_nb"])
def test_importing_the_store_imports_no_heavy_dependency(module: str) -> None:
    assert _heavy_modules_after(module) == []


def test_the_probe_would_notice_a_heavy_import() -> None:
    pytest.importorskip("pandas")
    assert "pandas" in _heavy_modules_after("agentmem_nb.store", prelude="import pandas")
