"""The widgets in a real JupyterLab, driven by headless Chromium: chat, tool panel, XSS, inspector, timeline.

One test, because starting JupyterLab and a kernel is most of the cost (≈ 10-20 s); every step saves a screenshot in
``test-artifacts/browser/``. Run it alone with ``pytest -m browser``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from demo_notebook import LONG_COUNT, LONG_TITLE, SEED_MESSAGES, XSS_CONTROL_CLASS, write_demo_notebook
from lab_harness import LabServer

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

XSS_IMG = '<img src=x onerror="alert(1)">'
XSS_SCRIPT = "<script>window.__xss=1</script>"


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def run_all_cells(page: Any) -> None:
    """Run ▸ Run All Cells, through the menu as a person would."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()


def test_widgets_work_in_jupyterlab(lab: LabServer, lab_root: Path, page: Any, artifacts: Path) -> None:
    from playwright.sync_api import expect

    with_inspector = _has("agentmem_nb.widgets.inspector")
    with_timeline = _has("agentmem_nb.widgets.timeline")
    write_demo_notebook(lab_root / "widgets_demo.ipynb", inspector=with_inspector, timeline=with_timeline)

    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(f"{lab.url}/lab/tree/widgets_demo.ipynb")
    expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible(timeout=60_000)
    lab.wait_for_kernel()  # the status bar says "Idle" too early; the server knows better
    run_all_cells(page)
    # proof that Run All did run something: the first prompt leaves "[ ]" for "[*]" or "[1]"
    expect(page.locator(".jp-InputPrompt").first).to_have_text(re.compile(r"\[(\*|\d+)\]"))

    chat = page.locator(".amn-chat")
    expect(chat).to_be_visible(timeout=60_000)
    history = chat.locator(".amn-chat-history")
    expect(history.locator(".amn-msg-user")).to_have_count(len(SEED_MESSAGES))
    expect(chat.locator(".amn-offline-banner")).to_contain_text("config/llm.yaml")
    expect(chat.locator(".amn-chat-conversations")).to_contain_text("I moved to Lyon")
    page.screenshot(path=str(artifacts / "01-notebook-ran.png"))

    # ---- a question the agent answers from memory, with its tool calls in the collapsible panel
    _record_live_updates(page)
    box = chat.locator(".amn-chat-input textarea")  # a textarea since issue 19 (multi-line messages)
    box.fill("Where did I move?")
    box.press("Enter")
    assistant = history.locator(".amn-msg-assistant")
    expect(assistant).to_have_count(len(SEED_MESSAGES) + 1)
    reply = assistant.last
    expect(reply).to_contain_text("Lyon")
    expect(box).to_have_value("")
    expect(box).to_be_focused()  # ready for the next message without a click
    # while the turn ran, the live area showed each tool as it started, then the reply as it streamed in
    live = page.evaluate("window.__amnLive")
    assert any("⏳ search_session" in html for html in live), live[:5]
    assert any("✓ get_session_window" in html for html in live), live[:5]
    assert any("amn-streaming-text" in html for html in live), live[:5]
    panel = reply.locator(".amn-tool-panel")
    expect(panel.locator("summary")).to_contain_text("search_session")
    expect(panel.locator(".amn-tool-input").first).not_to_be_visible()  # collapsed until opened
    panel.locator("summary").click()
    expect(panel.locator(".amn-tool-name").first).to_contain_text("search_session")
    expect(panel.locator(".amn-tool-input").first).to_contain_text('"keyword"')
    expect(panel.locator(".amn-tool-output").first).to_contain_text("I moved to Lyon")
    reply.scroll_into_view_if_needed()
    chat.screenshot(path=str(artifacts / "02-reply-and-tool-panel.png"))

    # ---- XSS payloads typed into the chat show as text and run nothing
    box.fill(f"I prefer {XSS_IMG} tea")
    chat.locator(".amn-chat-send").click()
    expect(history.locator(".amn-msg-user").last).to_contain_text(XSS_IMG)
    box.fill(f"I prefer {XSS_SCRIPT} coffee")
    box.press("Enter")
    expect(history.locator(".amn-msg-user").last).to_contain_text(XSS_SCRIPT)
    expect(assistant.last).to_contain_text(XSS_SCRIPT)  # the agent's reply quotes it: rendered as text too
    last_panel = assistant.last.locator(".amn-tool-panel")
    last_panel.locator("summary").click()
    expect(last_panel.locator(".amn-tool-input")).to_contain_text("window.__xss=1")
    # the control (an unescaped <img onerror> in a raw ipywidgets.HTML) fires: the mechanism is live in this page
    page.wait_for_function("window.__control_fired === 1")
    page.wait_for_timeout(500)  # give a (wrongly) injected image the same chance to fail loading and fire
    _assert_nothing_injected(page, dialogs)
    chat.screenshot(path=str(artifacts / "03-xss-shown-as-text.png"))

    # ---- the timeline and the inspector (when this checkout has them)
    if with_timeline:
        _timeline_steps(page, artifacts)
    if with_inspector:
        _inspector_steps(page, artifacts)

    # ---- a 1,000-message conversation: one page of 200 rendered, the rest behind "show earlier"
    chat.scroll_into_view_if_needed()
    opened_ms = _open_long_conversation(chat)
    (artifacts / "timings.json").write_text(json.dumps({"open_1000_message_conversation_ms": opened_ms}), "utf-8")
    print(f"opening the {LONG_COUNT}-message conversation took {opened_ms:.0f} ms (click to last message shown)")
    chat.screenshot(path=str(artifacts / "04-long-conversation.png"))

    # ---- "New conversation" starts an empty thread and lists it
    options = chat.locator(".amn-chat-conversations option")
    before = options.count()
    chat.locator(".amn-chat-new").click()
    expect(options).to_have_count(before + 1)
    expect(chat.locator(".amn-chat-history")).to_contain_text("No messages yet")
    expect(chat.locator(".amn-chat-earlier")).to_be_hidden()

    # the payloads have now been through the chat, the timeline's rows and the inspector's table
    page.wait_for_timeout(500)
    _assert_nothing_injected(page, dialogs)
    assert not [e for e in errors if "amn" in e or "agentmem" in e], errors
    page.screenshot(path=str(artifacts / "07-whole-notebook.png"), full_page=True)


def _record_live_updates(page: Any) -> None:
    """Keep every HTML the live area is given (turn progress is too quick to catch with polling)."""
    page.evaluate(
        """() => {
            window.__amnLive = [];
            const area = document.querySelector('.amn-chat .amn-chat-live');
            new MutationObserver(records => {
                for (const record of records)
                    for (const node of record.addedNodes)
                        if (node.nodeType === 1) window.__amnLive.push(node.outerHTML);
            }).observe(area, {childList: true, subtree: true});
        }"""
    )


def _open_long_conversation(chat: Any) -> float:
    """Pick the long conversation in the list; return the milliseconds until its newest message is on screen."""
    from playwright.sync_api import expect

    conversations = chat.locator(".amn-chat-conversations select")
    label = conversations.locator("option", has_text=LONG_TITLE).text_content()
    started = time.monotonic()
    conversations.select_option(label=label)
    history = chat.locator(".amn-chat-history")
    expect(history).to_contain_text(f"long message {LONG_COUNT - 1} with")
    elapsed = (time.monotonic() - started) * 1000
    expect(history.locator(".amn-msg")).to_have_count(200)  # one page, not the whole thread
    expect(chat.locator(".amn-chat-earlier")).to_contain_text(f"({LONG_COUNT - 200} hidden)")
    chat.locator(".amn-chat-earlier").click()
    expect(history.locator(".amn-msg")).to_have_count(400)
    return elapsed


def _timeline_steps(page: Any, artifacts: Path) -> None:
    """No Refresh click: the timeline follows the chat, so the tool calls of the turns sent after its cell ran are
    already there. Then filter by keyword and select a row (the calls table is itables: one <tr> per call)."""
    from playwright.sync_api import expect

    timeline = page.locator(".amn-timeline")
    timeline.scroll_into_view_if_needed()
    expect(timeline).to_be_visible()
    rows = timeline.locator(".amn-timeline-table table.dataTable tbody tr")
    # the seed's remember_note, "Where did I move?" (search_session, get_session_window), two XSS remember_notes
    expect(rows).to_have_count(5)
    keyword = timeline.locator(".amn-timeline-filter-keyword input")
    keyword.fill("Lyon")
    keyword.press("Enter")
    expect(rows).to_have_count(2)  # the search hit and the window around it both mention Lyon
    expect(rows.first).to_contain_text("search_session")
    rows.first.locator("td").first.click()
    expect(timeline.locator(".amn-timeline-detail pre").last).to_contain_text("I moved to Lyon")
    timeline.scroll_into_view_if_needed()
    timeline.screenshot(path=str(artifacts / "05-timeline-filtered.png"))
    keyword.fill("")
    keyword.press("Enter")
    expect(rows).to_have_count(5)  # the XSS payloads are in these rows' inputs and outputs, as text


def _inspector_steps(page: Any, artifacts: Path) -> None:
    """Refresh, search, choose a hit, see its window with the anchor selected, step the window."""
    from playwright.sync_api import expect

    inspector = page.locator(".amn-inspector")
    inspector.scroll_into_view_if_needed()
    expect(inspector).to_be_visible()
    info = inspector.locator(".amn-inspector-table .dt-info")
    before_refresh = info.text_content()
    inspector.locator(".amn-inspector-refresh").click()
    expect(info).not_to_have_text(before_refresh or "")  # the chat's turns since the cell ran are in the table
    inspector.locator(".amn-inspector-table .dt-search input").fill("onerror")  # the table pages: filter it
    expect(inspector.locator(".amn-inspector-table")).to_contain_text(XSS_IMG)  # the chat's messages, as text
    search = inspector.locator(".amn-inspector-search input")
    search.fill("Porto")
    search.press("Enter")
    hit = inspector.locator(".amn-inspector-hit").first
    expect(hit).to_contain_text("Porto")
    hit.click()
    window = inspector.locator(".amn-inspector-window")
    expect(window.locator("tr.selected")).to_contain_text("My sister Ana lives in Porto.")
    expect(window).to_contain_text("I prefer green tea")  # a message before the anchor
    window_rows = window.locator("table.dataTable tbody tr")
    before_rows = window_rows.count()
    inspector.locator(".amn-window-after-plus").click()
    expect(window_rows).to_have_count(before_rows + 1)  # one more message after the anchor
    window.scroll_into_view_if_needed()
    inspector.screenshot(path=str(artifacts / "06-inspector-window.png"))


def _assert_nothing_injected(page: Any, dialogs: list[str]) -> None:
    """No dialog, no element with an inline handler (outside the deliberate control), no script in our widgets."""
    injected = page.evaluate(
        f"""() => Array.from(document.querySelectorAll('[onerror], [onload], [onclick], [onmouseover]'))
                 .filter(el => !el.closest('.{XSS_CONTROL_CLASS}'))
                 .map(el => el.outerHTML.slice(0, 200) + ' in ' + (el.parentElement?.className || '?') + ' < '
                      + (el.closest('.jupyter-widgets, .lm-Widget')?.className || '?')
                      + ' :: ' + (el.parentElement?.parentElement?.outerHTML || '').slice(0, 600))"""
    )
    assert injected == []
    for widget in (".amn-chat", ".amn-inspector", ".amn-timeline"):
        assert page.locator(f"{widget} img, {widget} script, {widget} iframe").count() == 0, widget
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert dialogs == []
