"""The chat page in headless Chromium against a real server: send, see the tool panel, reload, see it again; markup
in any stored text (messages, tool calls, titles) is shown as text and never runs.

Chromium is found as the JupyterLab browser test finds it (``tests/browser/conftest.py``: ``AGENTMEM_CHROMIUM`` or
``/usr/bin/chromium``); without it the test skips, under CI it fails.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentmem_nb import MemoryStore, ToolCall
from agentmem_nb.api import BackgroundServer

CHROMIUM = Path(os.environ.get("AGENTMEM_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
USER = "demo-user"  # the page's default user, as in the original
XSS = [
    '<img src=x onerror="window.__xss=(window.__xss||0)+1">',
    "<script>window.__xss=(window.__xss||0)+1</script>",
    '"><svg onload="window.__xss=(window.__xss||0)+1">',
]


@pytest.fixture
def page() -> Iterator[Any]:
    """A headless Chromium page; skips (locally) or fails (under CI) without the browser tooling."""
    why = None
    if not CHROMIUM.is_file() or not os.access(CHROMIUM, os.X_OK):
        why = f"Chromium not found at {CHROMIUM}: run scripts/install_browser.sh, or set AGENTMEM_CHROMIUM"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = "the playwright Python client is not installed: run scripts/install_browser.sh"
    if why:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail(f"CI is set, so the browser test must run, but: {why}", pytrace=False)
        pytest.skip(why)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1200, "height": 900})
            page = context.new_page()
            page.set_default_timeout(30_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.errors = errors  # type: ignore[attr-defined]
            yield page
        finally:
            browser.close()


def _send(page: Any, text: str) -> None:
    replies = page.locator(".assistant-block").count()
    page.fill("#text", text)
    page.click("#sendBtn")
    page.wait_for_function(
        "n => document.querySelectorAll('.assistant-block').length > n && !document.getElementById('sendBtn').disabled"
        " && !document.querySelector('.assistant-block:last-child .msg').textContent.startsWith('…')", arg=replies)


@pytest.mark.browser
def test_send_see_the_tool_panel_reload_and_see_it_again(page: Any, server: BackgroundServer,
                                                        store: MemoryStore) -> None:
    page.goto(server.url + "/")
    page.wait_for_selector(".conv-item.active")  # no conversation yet: the page started one
    _send(page, "I prefer green tea")
    panel = page.locator(".assistant-block .tool-trace").last
    assert "工具调用 (1)" in panel.locator("summary").text_content()
    panel.locator("summary").click()
    assert "remember_note" in panel.text_content() and "User prefers green tea" in panel.text_content()
    assert page.locator(".conv-item.active").text_content() == "I prefer green tea"  # titled by its first message

    _send(page, "What did I say about tea?")
    assert page.locator(".assistant-block .tool-trace").count() == 2
    page.reload()
    page.wait_for_selector(".assistant-block .tool-trace")
    panels = page.locator(".assistant-block .tool-trace")
    assert panels.count() == 2
    assert page.locator(".msg.u").all_text_contents() == ["I prefer green tea", "What did I say about tea?"]
    panels.first.locator("summary").click()
    assert "User prefers green tea" in panels.first.text_content()
    stored = store.user(USER).session(store.user(USER).session_ids()[0]).messages()
    assert [m.role for m in stored] == ["user", "assistant"] * 2
    assert page.errors == []  # type: ignore[attr-defined]


@pytest.mark.browser
def test_markup_in_stored_text_is_shown_as_text(page: Any, server: BackgroundServer, store: MemoryStore) -> None:
    user = store.user(USER)
    # What the agent or another client might have stored: markup in a title, a reply and a tool call.
    conversation = user.conversations.create(title=XSS[0])
    user.append(conversation.session_id, "user", XSS[1])
    user.append(conversation.session_id, "assistant", XSS[2],
                tool_calls=[ToolCall(name="search_session", input={"keyword": XSS[0]}, output=XSS[1], id="c1")])
    page.goto(server.url + "/")
    page.wait_for_selector(".assistant-block .tool-trace")
    assert page.locator(".conv-item.active").text_content() == XSS[0]
    assert page.locator("#currentTitle").text_content() == XSS[0]
    page.locator(".tool-trace summary").click()
    assert XSS[1] in page.locator(".tool-output").text_content()
    assert json.dumps({"keyword": XSS[0]}, ensure_ascii=False) in page.locator(".tool-input").text_content()
    for payload in XSS:  # typed by the user, sent, stored, echoed back: still text
        _send(page, payload)
    page.reload()
    page.wait_for_selector(".assistant-block")
    assert page.locator(".msg.u").all_text_contents() == [XSS[1], *XSS]
    assert page.locator(".assistant-block .msg").first.text_content() == XSS[2]
    assert page.evaluate("window.__xss") is None
    assert page.locator("#messages img, #messages script, #messages svg, .conv-list img").count() == 0
