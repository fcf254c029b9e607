"""The chat of issue 19 in a real JupyterLab and headless Chromium: fast typing then Enter, multi-line messages,
Stop, "show earlier" keeping the reader's place, open_message, a new user, the turn trace, and every text's
contrast in JupyterLab Light and Dark (WCAG AA, 4.5:1), and in each theme the chat in a 600 px notebook (nothing
clipped, every control visible). Saves the README's chat-dark.png and trace-dark.png
(into ``docs/`` only with ``AGENTMEM_REFRESH_DOCS=1``; see the ``readme_picture`` fixture).

One JupyterLab for all of it (starting it and a kernel is most of the cost). Run it alone with
``pytest tests/browser/test_chat_in_lab.py``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lab_harness import LabServer
from test_lab_widgets import run_all_cells

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(420)]

FAST_RUNS = 12

_SETUP = """\
import time
from pathlib import Path

from langchain_core.messages import AIMessage

from agentmem_nb import MemoryStore
from agentmem_nb.agent import ChatService, LLMConfig, OfflineChatModel

store = MemoryStore(Path("memory"), zone="UTC")
service = ChatService(store, config=LLMConfig())  # the offline model, whatever this machine's config says
alice = store.user("alice")
alice.conversations.create("long", title="A long conversation")
for i in range(600):
    alice.append("long", "user" if i % 2 == 0 else "assistant", f"long message {i}")
for text in ("I moved to Lyon in 2024 for a new job.", "I prefer green tea in the morning."):
    service.turn("alice", "s1", text)


class SlowModel(OfflineChatModel):
    \"\"\"A model server that takes its time: a long answer, one word every 50 ms.\"\"\"

    def respond(self, messages):
        return AIMessage(content=" ".join(f"word{i}" for i in range(600)))

    def _stream(self, messages, stop=None, run_manager=None, **kwargs):
        for piece in super()._stream(messages, stop, run_manager, **kwargs):
            time.sleep(0.05)  # the slow server
            yield piece


slow_service = ChatService(store, model=SlowModel(model_name="slow-model"))
print("ready")"""

_CHAT = """\
from agentmem_nb.widgets import ChatWidget

chat = ChatWidget(service, user_id="alice", session_id="s1")
chat"""

_SLOW = """\
slow_chat = ChatWidget(slow_service, user_id="alice", session_id="slow")
slow_chat"""

_OPENED = """\
opened = ChatWidget(service, user_id="alice", session_id="s1")
opened.open_message("long", 37)
opened"""


def _write_notebook(path: Path) -> None:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "id": f"c{i}",
              "source": source.splitlines(keepends=True)} for i, source in enumerate((_SETUP, _CHAT, _SLOW, _OPENED))]
    notebook = {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
                "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                            "name": "python3"}, "language_info": {"name": "python"}}}
    path.write_text(json.dumps(notebook, indent=1), encoding="utf-8")


_CONTRAST_JS = """(selectors) => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 1;
  const ctx = canvas.getContext('2d', {willReadFrequently: true});
  const rgba = (css) => {  // any CSS colour (rgb(), color(srgb ...) from color-mix, ...) as [r, g, b, a]
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = 'rgba(0, 0, 0, 0)';
    ctx.fillStyle = css;
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255];
  };
  const over = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const background = (el) => {
    const layers = [];
    for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
      const c = rgba(getComputedStyle(node).backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = [255, 255, 255, 1];
    for (const layer of layers.reverse()) bg = over(layer, bg);
    return bg;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const out = [];
  for (const sel of selectors) {
    const found = Array.from(document.querySelectorAll(sel)).filter(el => el.offsetParent !== null
                                                                    && el.textContent.trim());
    if (!found.length) { out.push({sel, missing: true}); continue; }
    for (const el of found.slice(0, 3)) {
      const bg = background(el);
      const fg = over(rgba(getComputedStyle(el).color), bg);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      out.push({sel, ratio: (a + 0.05) / (b + 0.05), fg: fg.slice(0, 3).map(Math.round),
                bg: bg.slice(0, 3).map(Math.round), text: el.textContent.trim().slice(0, 40)});
    }
  }
  return out;
}"""

CONTRAST_TARGETS = [
    ".amn-chat .amn-offline-banner-text",
    ".amn-chat .amn-msg-user .amn-msg-meta",
    ".amn-chat .amn-msg-user .amn-msg-body",
    ".amn-chat .amn-msg-assistant .amn-msg-meta",
    ".amn-chat .amn-msg-assistant .amn-msg-body",
    ".amn-chat .amn-error-box",
    ".amn-chat .amn-status-text",
    ".amn-chat .amn-trace-link",
    ".amn-trace .amn-trace-head",
    ".amn-trace .amn-trace-name",
    ".amn-trace .amn-trace-ms",
]


def _switch_theme(page: Any, name: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Settings$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{name}$")).click()
    page.wait_for_function(f"document.body.dataset.jpThemeName === {name!r}")
    page.wait_for_timeout(300)  # the theme's stylesheet is applied after the attribute changes


NARROW = 600
"""The width of a narrow notebook: the chat must fit it (nothing clipped, every control visible)."""

_CLIPPED_JS = """(root) => {
  const box = root.getBoundingClientRect();
  const out = [];
  if (root.scrollWidth > root.clientWidth + 1) out.push({what: 'the chat scrolls sideways', sw: root.scrollWidth,
                                                         cw: root.clientWidth});
  const scroller = root.querySelector('.amn-history-scroll');
  if (scroller && scroller.scrollWidth > scroller.clientWidth + 1) out.push({what: 'the history scrolls sideways'});
  for (const el of root.querySelectorAll('button, input, select, textarea, .amn-msg, .amn-offline-banner')) {
    if (el.offsetParent === null) continue;  // hidden on purpose (Stop between turns)
    const r = el.getBoundingClientRect();
    const name = (el.className || el.tagName).toString().slice(0, 60) + ' ' + (el.textContent || '').trim().slice(0, 30);
    if (r.width < 8 || r.height < 8) out.push({what: 'squashed', name, w: r.width, h: r.height});
    if (r.left < box.left - 1 || r.right > box.right + 1) out.push({what: 'outside the chat', name, left: r.left,
                                                                   right: r.right, box: [box.left, box.right]});
    if (el.tagName === 'BUTTON' && el.scrollWidth > el.clientWidth + 1) out.push({what: 'label cut', name});
  }
  return out;
}"""


def _fit_to(page: Any, widget: Any, width: int) -> int:
    """Resize the page until ``widget`` is at most ``width`` px wide (and close to it), whatever JupyterLab's chrome
    around it takes at that size; returns the widget's width."""
    have = widget.evaluate("e => e.clientWidth")
    for _ in range(4):
        if width - 40 <= have <= width:
            break
        size = page.viewport_size
        page.set_viewport_size({"width": max(320, size["width"] + width - have), "height": size["height"]})
        page.wait_for_function("([e, w]) => e.clientWidth !== w", arg=[widget.element_handle(), have])
        have = widget.evaluate("e => e.clientWidth")
    return have


def test_the_chat_of_round_two(lab: LabServer, lab_root: Path, page: Any, artifacts: Path,
        readme_picture: Callable[[str], Path]) -> None:
    from playwright.sync_api import expect

    _write_notebook(lab_root / "chat_round_two.ipynb")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{lab.url}/lab/tree/chat_round_two.ipynb")
    expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible(timeout=60_000)
    lab.wait_for_kernel()
    run_all_cells(page)
    chats = page.locator(".amn-chat")
    expect(chats).to_have_count(3, timeout=90_000)
    chat, slow_chat, opened = chats.nth(0), chats.nth(1), chats.nth(2)
    history = chat.locator(".amn-chat-history")
    expect(history.locator(".amn-msg-assistant")).to_have_count(2)

    # ---- open_message: the opened chat shows message #37 of the long conversation, highlighted, in view
    focus = opened.locator(".amn-msg-focus")
    expect(focus).to_have_attribute("data-message-id", "37")
    pane = opened.locator(".amn-history-scroll")
    box_of_pane, box_of_focus = pane.bounding_box(), focus.bounding_box()
    assert box_of_pane["y"] <= box_of_focus["y"] and box_of_focus["y"] + box_of_focus["height"] <= (
        box_of_pane["y"] + box_of_pane["height"]), (box_of_pane, box_of_focus)

    # ---- fast typing, then Enter at once: exactly the typed text is sent, the box is left empty
    box = chat.locator(".amn-chat-input textarea")
    user_bubbles = history.locator(".amn-msg-user .amn-msg-body")
    for run in range(FAST_RUNS):
        text = f"fast {run}: I prefer oolong tea when it rains in Lyon, run {run} ends here"
        box.click()
        box.type(text, delay=5)
        box.press("Enter")
        expect(user_bubbles.last).to_have_text(text)
        expect(box).to_have_value("")
        expect(chat.locator(".amn-chat-send")).to_be_enabled()
    page.screenshot(path=str(artifacts / "r2-01-fast-typing.png"))

    # ---- multi-line: Shift+Enter adds a line, Enter sends, pasted newlines are kept
    box.click()
    box.type("first line", delay=5)
    box.press("Shift+Enter")
    box.type("second line", delay=5)
    page.keyboard.insert_text("\npasted third\npasted fourth")  # what a paste inserts
    box.press("Enter")
    expect(user_bubbles.last).to_have_text("first line\nsecond line\npasted third\npasted fourth")

    # ---- the trace of the last reply, from its link
    chat.locator(".amn-msg-assistant .amn-trace-link").last.click()
    trace = chat.locator(".amn-trace")
    expect(trace.locator(".amn-trace-row")).not_to_have_count(0)
    expect(trace.locator(".amn-trace-model")).to_have_count(1)  # the offline model answers in one step here
    trace.locator(".amn-trace-model summary").first.click()
    expect(trace.locator(".amn-trace-messages").first).to_contain_text("pasted fourth")

    # ---- Stop ends a slow turn at once; nothing half-written; the session is free
    slow_box = slow_chat.locator(".amn-chat-input textarea")
    slow_box.click()
    slow_box.type("tell me a long story", delay=5)
    slow_box.press("Enter")
    stop = slow_chat.locator(".amn-chat-stop")
    expect(stop).to_be_visible()
    expect(slow_chat.locator(".amn-streaming-text")).to_contain_text("word3")  # the slow answer is coming in
    stop.click()
    expect(slow_chat.locator(".amn-chat-notice")).to_contain_text("Stopped on request", timeout=5_000)
    expect(stop).to_be_hidden()
    slow_history = slow_chat.locator(".amn-chat-history")
    expect(slow_history.locator(".amn-msg-user")).to_have_count(1)
    expect(slow_history.locator(".amn-msg-assistant")).to_have_count(0)  # nothing half-written
    slow_history.locator(".amn-msg-user .amn-trace-link").click()  # the stopped turn's trace says so
    expect(slow_chat.locator(".amn-trace-head")).to_contain_text("stopped")

    # ---- Kernel ▸ Interrupt stops a slow turn the same way
    slow_box.click()
    slow_box.type("another long story", delay=5)
    slow_box.press("Enter")
    expect(slow_chat.locator(".amn-streaming-text")).to_contain_text("word3")
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Kernel$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Interrupt Kernel$")).click()
    expect(slow_chat.locator(".amn-chat-notice")).to_contain_text("Stopped on request", timeout=5_000)
    expect(slow_history.locator(".amn-msg-user")).to_have_count(2)
    expect(slow_history.locator(".amn-msg-assistant")).to_have_count(0)

    # ---- "show earlier" keeps the reader's place
    conversations = chat.locator(".amn-chat-conversations select")
    conversations.select_option(label=conversations.locator("option", has_text="A long conversation").text_content())
    scroller = history.locator(".amn-history-scroll")
    expect(scroller.locator(".amn-msg")).to_have_count(200)
    chat.locator(".amn-chat-earlier").scroll_into_view_if_needed()
    scroller.evaluate("el => { el.scrollTop = 0; }")  # the reader went up to the oldest message shown
    first = scroller.locator(".amn-msg").first
    anchor = first.get_attribute("data-message-id")
    where = ("(el, id) => el.querySelector(`[data-message-id=\"${id}\"]`).getBoundingClientRect().top"
             " - el.getBoundingClientRect().top")
    before = scroller.evaluate(where, anchor)
    chat.locator(".amn-chat-earlier").click()
    expect(scroller.locator(".amn-msg")).to_have_count(400)
    after = scroller.evaluate(where, anchor)
    assert abs(after - before) <= 2, (anchor, before, after)  # the same message, at the same place in the pane
    assert scroller.evaluate("el => el.scrollTop") > 0  # the 200 older messages sit above, out of view

    # ---- a typo in the User box: a new user, nothing on disk
    user_box = chat.locator(".amn-chat-user input")
    user_box.fill("alcie")
    user_box.press("Enter")
    expect(chat.locator(".amn-chat-status")).to_contain_text("new user: nothing is saved until the first message")
    names = [item["name"] for item in lab.get("/api/contents/memory")["content"]]
    assert "alcie" not in names and "alice" in names
    user_box.fill("../etc")  # refused: an error box to measure in both themes
    user_box.press("Enter")
    expect(chat.locator(".amn-error-box").first).to_contain_text("Error while switching to that user:")
    user_box.fill("alice")
    user_box.press("Enter")
    expect(chat.locator(".amn-chat-status")).not_to_contain_text("new user")

    # ---- contrast of every text, in JupyterLab Light and Dark
    chat.locator(".amn-chat-conversations select").select_option(
        label=chat.locator(".amn-chat-conversations option", has_text="I moved to Lyon").text_content())
    chat.locator(".amn-msg-assistant .amn-trace-link").last.click()
    expect(chat.locator(".amn-trace-row").first).to_be_visible()
    measured = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        _switch_theme(page, theme)
        results = page.evaluate(_CONTRAST_JS, CONTRAST_TARGETS)
        measured[theme] = results
        missing = [r["sel"] for r in results if r.get("missing")]
        assert not missing, (theme, missing)
        low = [r for r in results if r["ratio"] < 4.5]
        assert not low, (theme, low)
        # ---- the same chat in a 600 px notebook: nothing clipped, every control visible, then back to wide
        wide = page.viewport_size
        width = _fit_to(page, chat, NARROW)
        assert NARROW - 40 <= width <= NARROW, (theme, width)
        chat.evaluate("el => el.scrollIntoView({block: 'start'})")
        for control in (".amn-chat-send", ".amn-chat-new", ".amn-chat-user input", ".amn-chat-input textarea",
                        ".amn-chat-conversations select", ".amn-trace-link"):
            expect(chat.locator(control).first).to_be_visible()
        clipped = chat.evaluate(_CLIPPED_JS)
        assert not clipped, (theme, width, clipped)
        page.screenshot(path=str(artifacts / f"r2-narrow-{theme.split()[-1].lower()}.png"))
        page.set_viewport_size(wide)
        page.wait_for_function("([e, w]) => e.clientWidth > w", arg=[chat.element_handle(), width])
    (artifacts / "contrast.json").write_text(json.dumps(measured, indent=1), encoding="utf-8")

    # ---- screenshots for the README (dark theme)
    page.set_viewport_size({"width": 1300, "height": 1500})  # the whole chat on screen, above the status bar
    chat.evaluate("el => el.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)  # let the notebook's lazy rendering settle before the picture
    chat.screenshot(path=str(readme_picture("chat-dark.png")))
    trace.scroll_into_view_if_needed()
    trace.locator(".amn-trace-model summary").first.click()
    trace.screenshot(path=str(readme_picture("trace-dark.png")))
    assert not [e for e in errors if "amn" in e or "agentmem" in e or "anywidget" in e], errors


def test_a_saved_notebook_reads_well_before_it_is_run(lab: LabServer, lab_root: Path, page: Any) -> None:
    """notebooks/01 as stored (executed, with its widget state and static copies): opened, not run, the chat shows
    the conversation it ended with; the static HTML copy (what GitHub and nbviewer show) holds it too."""
    from playwright.sync_api import expect

    source = Path(__file__).resolve().parents[2] / "notebooks" / "01_quickstart.ipynb"
    stored = json.loads(source.read_text(encoding="utf-8"))
    chat_outputs = [o for c in stored["cells"] for o in c.get("outputs", [])
                    if "ChatWidget(" in "".join(o.get("data", {}).get("text/plain", ""))]
    assert chat_outputs and "Lena" in "".join(chat_outputs[0]["data"]["text/html"])
    (lab_root / "saved.ipynb").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    page.goto(f"{lab.url}/lab/tree/saved.ipynb")
    # an untrusted notebook: JupyterLab shows the static copy (sanitised), which holds the whole conversation
    shown = page.locator(".jp-OutputArea-output", has_text="My sister Lena lives in Lyon").first
    expect(shown).to_be_visible(timeout=60_000)
    expect(shown).to_contain_text("14 messages")
    expect(page.locator("text=Error displaying widget")).to_have_count(0)
    assert shown.locator("button").count() == 0  # no dead "trace" links in a snapshot
