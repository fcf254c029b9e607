"""The inspector's Facts layer in a real JupyterLab, driven by headless Chromium: a conflict's source button shows
the window around the message it came from, its accept button resolves it (an event in the store, read back here
from the files), a row of the table shows its key's timeline, and HTML in a value stays text.

Run it alone with ``pytest tests/browser/test_facts_lab.py``; screenshots go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lab_harness import LabServer

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

XSS = '<img src=x onerror="window.__xss=1">'

_SETUP = f"""\
from pathlib import Path

from agentmem_nb import MemoryStore
from agentmem_nb.store import FactSource, Statement
from agentmem_nb.widgets import MemoryInspector

XSS = {XSS!r}
store = MemoryStore(Path("memory"), zone="UTC")
alice = store.user("alice")
for text in ["hello", "I live in Paris.", "nice", "We moved to Lyon.", "ok", "My name is Alice.", "fine",
             "Call me Alicia " + XSS + ".", "right"]:
    alice.append("s1", "user", text)
alice.facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 2))
alice.facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 4))
alice.facts.record([Statement("user", "name", "Alice")], source=FactSource("s1", 6))
alice.facts.record([Statement("user", "name", "Alicia " + XSS)], source=FactSource("s1", 8))  # held: a conflict
inspector = MemoryInspector(store, user_id="alice", layer="facts")
inspector"""


def _write_notebook(path: Path) -> None:
    cell = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "id": "cell-0",
            "source": _SETUP.splitlines(keepends=True)}
    notebook = {"cells": [cell], "nbformat": 4, "nbformat_minor": 5,
                "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                            "name": "python3"}, "language_info": {"name": "python"}}}
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")


def _run_all(page: Any) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()


def test_resolving_a_conflict_and_opening_a_source_in_jupyterlab(lab: LabServer, lab_root: Path, page: Any,
                                                                  artifacts: Path) -> None:
    from playwright.sync_api import expect

    from agentmem_nb import MemoryStore

    _write_notebook(lab_root / "facts.ipynb")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(f"{lab.url}/lab/tree/facts.ipynb")
    expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible(timeout=60_000)
    lab.wait_for_kernel()
    _run_all(page)

    inspector = page.locator(".amn-inspector")
    expect(inspector).to_be_visible(timeout=90_000)
    panel = inspector.locator(".amn-inspector-facts")
    expect(panel).to_be_visible()
    table = inspector.locator(".amn-inspector-table table.dataTable")
    expect(table.locator("tbody tr")).to_have_count(3)  # Lyon, Alice, the held Alicia
    conflict = panel.locator(".amn-facts-conflict")
    expect(conflict).to_have_count(1)
    expect(conflict).to_contain_text(f"Alicia {XSS}")  # the value's HTML, shown as text

    # ---- the conflict's source: the window around message 8 of s1, the anchor selected
    conflict.locator(".amn-facts-source").click()
    window = inspector.locator(".amn-inspector-window")
    expect(window.locator("tr.selected")).to_contain_text(f"Call me Alicia {XSS}.")
    expect(window).to_contain_text("My name is Alice.")  # a message before it
    expect(inspector.locator(".amn-inspector-open")).to_be_enabled()
    inspector.screenshot(path=str(artifacts / "facts-source-window.png"))

    # ---- accept: the held value becomes the name, the view refreshes, the decision is an event on disk
    conflict.locator(".amn-facts-accept").click()
    expect(conflict).to_have_count(0)
    expect(panel.locator(".amn-facts-conflicts-title")).to_contain_text("(0)")
    expect(panel.locator(".amn-facts-status")).to_contain_text("accepted")
    expect(table.locator("tbody tr")).to_have_count(2)  # Lyon, and the name now Alicia
    expect(panel.locator(".amn-facts-entry")).to_have_count(2)  # the name's timeline: Alice superseded, Alicia
    expect(panel.locator(".amn-facts-entry").first).to_contain_text("superseded, resolution")
    last = MemoryStore(lab_root / "memory", zone="UTC").user("alice").facts.events()[-1]
    assert (last.kind, last.detail["decision"], last.detail["by"]) == ("resolve", "accept", "inspector")

    # ---- a row of the table: its key's timeline, each value with its own source button
    table.locator("tbody tr", has_text="Lyon").locator("td").first.click()
    entries = panel.locator(".amn-facts-entry")
    expect(panel.locator(".amn-facts-timeline-title")).to_contain_text("History of user.lives_in")
    expect(entries).to_have_count(2)
    expect(entries.first).to_contain_text("Paris")
    entries.first.locator(".amn-facts-source").click()
    expect(window.locator("tr.selected")).to_contain_text("I live in Paris.")
    inspector.screenshot(path=str(artifacts / "facts-timeline.png"))

    page.wait_for_timeout(300)  # a (wrongly) injected image would have failed to load and fired by now
    assert page.locator(".amn-inspector img, .amn-inspector script").count() == 0
    assert page.evaluate("typeof window.__xss") == "undefined" and dialogs == []
    assert not [e for e in errors if "amn" in e or "agentmem" in e], errors
