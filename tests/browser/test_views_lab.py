"""The inspector and the timeline in a real JupyterLab (headless Chromium), in the Light and the Dark theme and in a
600 px wide notebook: contrast of every text (WCAG AA), a scrolling hit list with "20 of N", itables tables with
text-only cells, the anchor row, a click on a mark, a drag to zoom, nothing clipped at 600 px.

One test (starting JupyterLab and a kernel is most of the cost). Screenshots go to ``test-artifacts/browser/``; the README's
``inspector-dark.png`` and ``timeline-narrow.png`` go to ``docs/`` only with ``AGENTMEM_REFRESH_DOCS=1``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lab_harness import LabServer

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(300)]

XSS_IMG = '<img src=x onerror="window.__xss_views=1">'
N_TEA = 54

_SETUP = f"""\
import datetime as dt
from pathlib import Path

from agentmem_nb import MemoryStore, ToolCall
from agentmem_nb.store import DialogueEntry

store = MemoryStore(Path("memory"), zone="Europe/Paris")
mem = store.user("alice")
XSS = {XSS_IMG!r}
t0 = dt.datetime(2026, 4, 8, 7, 29, tzinfo=dt.timezone.utc)
for i in range({N_TEA}):
    mem.append("s1", "user", f"I drink green tea, cup {{i}}", ts=t0 + dt.timedelta(minutes=i))
mem.append("s1", "user", XSS, ts=t0 + dt.timedelta(hours=2))
for note in ("likes green tea", "lives in Lyon", XSS):
    mem.long_term.add_note(note)
# 12 turns within ~2 s, each with calls that have durations: sub-second axis, spans, one colour per tool
tools = ["search_session", "get_session_window", "remember_note"]
for k in range(12):
    when = t0 + dt.timedelta(hours=3, milliseconds=170 * k)
    calls = tuple(ToolCall(tools[(k + j) % 3], {{"keyword": f"tea {{k}} <b>x</b>"}}, f"out {{k}} " + XSS,
                           id=f"c{{k}}-{{j}}", duration_ms=40.0 + 10 * j) for j in range(2))
    mem.append("s2", "user", f"question {{k}}", ts=when)
    written = mem.append("s2", "assistant", f"answer {{k}}", ts=when, tool_calls=calls)
    mem.log.append(DialogueEntry(entry_id=0, ts=when, session_id="s2", user_message=f"question {{k}}",
                                 assistant_reply=f"answer {{k}}", tool_calls=calls, timings_ms={{}}, model="offline",
                                 assistant_message_id=written.session.message_id))
opened = []
print("seeded")"""

_INSPECTOR = """\
from agentmem_nb.widgets.inspector import MemoryInspector

inspector = MemoryInspector(store, user_id="alice", on_open_message=lambda s, m: opened.append((s, m)))
inspector"""

_TIMELINE = """\
from agentmem_nb.widgets.timeline import ToolTimeline

timeline = ToolTimeline(store, user_id="alice", on_open_message=lambda s, m: opened.append((s, m)))
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


# Every visible text node inside the widgets: its colour against the first opaque background behind it.
_CONTRAST_JS = """(selectors) => {
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const blend = (top, under) => [0, 1, 2].map(i => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
  const background = (el) => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
      const shadow = getComputedStyle(e).boxShadow; const inset = shadow && shadow.includes('inset') ? parse(shadow) : null;
      if (inset && inset[3] > 0) layers.push(inset);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
    let colour = [255, 255, 255, 1];
    if (!layers.length || layers[layers.length - 1][3] < 1) colour = parse(getComputedStyle(document.body).backgroundColor) || colour;
    for (let i = layers.length - 1; i >= 0; i--) colour = blend(layers[i], colour);
    return colour; };
  const out = [];
  for (const selector of selectors) for (const root of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const el = node.parentElement; if (!node.textContent.trim() || !el) continue;
      if (el.closest('[disabled], .disabled, .dt-paging-button.disabled, option, title, style, script')) continue;
      const box = el.getBoundingClientRect(); const style = getComputedStyle(el);
      if (!box.width || !box.height || style.visibility === 'hidden' || style.display === 'none') continue;
      let hidden = false; for (let e = el; e; e = e.parentElement) if (getComputedStyle(e).opacity === '0') hidden = true;
      if (hidden) continue;
      const fg0 = el.closest('svg') ? parse(style.fill) : parse(style.color); if (!fg0) continue;
      const bg = background(el); const fg = blend(fg0, bg);
      const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
      out.push({text: node.textContent.trim().slice(0, 40), ratio: (a + 0.05) / (b + 0.05),
                where: (el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className) + ' <' + el.tagName + '>'});
    } }
  return out; }"""


def _check_contrast(page: Any, theme: str) -> int:
    found = page.evaluate(_CONTRAST_JS, [".amn-inspector", ".amn-timeline"])
    low = [f for f in found if f["ratio"] < 4.5]
    assert len(found) > 50, found[:5]  # the check saw the widgets' text
    assert low == [], f"{theme}: {len(low)} text(s) below 4.5:1, e.g. {low[:8]}"
    return len(found)


def _assert_nothing_injected(page: Any) -> None:
    assert page.evaluate("typeof window.__xss_views") == "undefined"
    injected = page.evaluate("""() => Array.from(document.querySelectorAll(
        '.amn-inspector [onerror], .amn-timeline [onerror], .amn-inspector img, .amn-timeline img, '
        + '.amn-inspector script, .amn-timeline script, td b, .amn-inspector-hit b, pre b'))
        .map(e => e.outerHTML.slice(0, 120))""")
    assert injected == []


def test_views_in_light_dark_and_narrow(lab: LabServer, lab_root: Path, page: Any, artifacts: Path,
        readme_picture: Callable[[str], Path]) -> None:
    from playwright.sync_api import expect

    _write_notebook(lab_root / "views.ipynb")
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    outside: list[str] = []  # offline: the tables' DataTables comes with the package, not from a CDN
    page.on("request", lambda r: None if r.url.startswith(("http://127.0.0.1", "data:", "blob:"))
            else outside.append(r.url))
    page.goto(f"{lab.url}/lab/tree/views.ipynb")
    expect(page.locator(".jp-NotebookPanel .jp-Cell").first).to_be_visible(timeout=60_000)
    lab.wait_for_kernel()
    _menu(page, "Run", "Run All Cells")
    inspector = page.locator(".amn-inspector")
    timeline = page.locator(".amn-timeline")
    expect(inspector).to_be_visible(timeout=90_000)
    expect(timeline).to_be_visible(timeout=60_000)

    # ---- the inspector: itables table with the zone stated; 20 hits that scroll, "20 of 54"
    expect(inspector.locator(".amn-inspector-caption")).to_contain_text("times in Europe/Paris")
    table = inspector.locator(".amn-inspector-table table.dataTable")
    expect(table).to_be_visible()
    expect(table).to_contain_text("09:29:00")  # 07:29 UTC written, shown in the stated zone
    expect(inspector.locator(".amn-inspector-table .dt-info")).to_contain_text(f"of {N_TEA + 1 + 24} entries")  # every row of the layer, paged
    search = inspector.locator(".amn-inspector-search input")
    search.fill("tea")
    search.press("Enter")
    hits = inspector.locator(".amn-inspector-hit")
    expect(hits).to_have_count(20)
    expect(inspector.locator(".amn-inspector-hits-summary")).to_contain_text(f"20 of {N_TEA}")
    heights = [hits.nth(i).bounding_box()["height"] for i in range(20)]
    assert min(heights) >= 24, heights  # not squeezed (they were ~9 px)
    box = inspector.locator(".amn-inspector-hits")
    assert box.evaluate("e => e.scrollHeight > e.clientHeight + 20"), "the hit list should scroll"
    hits.nth(3).click()
    anchor = inspector.locator(".amn-inspector-window tr.selected")
    expect(anchor).to_contain_text("cup 37")  # hit 4 of the last 20, oldest first: cups 34..53
    inspector.locator(".amn-inspector-open").click()
    # ---- the XSS payload in the table is text
    search.fill("onerror")
    search.press("Enter")
    expect(inspector.locator(".amn-inspector-hit").first).to_contain_text("<img src=x")
    inspector.locator(".amn-inspector-table .dt-search input").fill("onerror")  # DataTables' own filter
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(table).to_contain_text(XSS_IMG)
    inspector.screenshot(path=str(artifacts / "views-inspector-light.png"))

    # ---- the timeline: click a mark selects its call; a drag zooms
    timeline.scroll_into_view_if_needed()
    expect(timeline.locator(".amn-timeline-summary")).to_contain_text("times in Europe/Paris")
    labels = timeline.locator(".amn-axis-label").all_text_contents()
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
    marks = timeline.locator(".amn-timeline-mark")
    expect(marks).to_have_count(24)
    marks.nth(5).click()
    expect(timeline.locator(".amn-timeline-detail")).to_contain_text("#5 ")
    expect(timeline.locator(".amn-timeline-table tr.selected")).to_have_count(1)
    svg = timeline.locator(".amn-timeline-svg")
    sbox = svg.bounding_box()
    page.mouse.move(sbox["x"] + sbox["width"] * 0.3, sbox["y"] + 20)
    page.mouse.down()
    page.mouse.move(sbox["x"] + sbox["width"] * 0.6, sbox["y"] + 20, steps=5)
    page.mouse.up()
    expect(timeline.locator(".amn-timeline-zoom-note")).to_contain_text("zoomed")
    timeline.locator(".amn-timeline-zoom-reset").click()
    chosen = timeline.locator(".amn-timeline-filter-session select option:checked").text_content() or ""
    assert chosen.replace("\xa0", " ") == "all sessions"  # ipywidgets renders the label's spaces as &nbsp;
    _assert_nothing_injected(page)
    light = _check_contrast(page, "JupyterLab Light")

    # ---- Dark theme
    _menu(page, "Settings", "Theme", "JupyterLab Dark")
    page.wait_for_function("document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_timeout(800)  # the theme's stylesheet swaps in after the attribute changes
    dark = _check_contrast(page, "JupyterLab Dark")
    inspector.scroll_into_view_if_needed()
    inspector.screenshot(path=str(artifacts / "views-inspector-dark.png"))
    inspector.screenshot(path=str(readme_picture("inspector-dark.png")))

    # ---- a 600 px notebook: nothing clipped, the chart as wide as the notebook
    _menu(page, "Settings", "Theme", "JupyterLab Light")
    page.wait_for_function("document.body.dataset.jpThemeLight === 'true'")
    _menu(page, "View", "Appearance", "Show Left Sidebar")  # hide the file browser: the notebook gets the width
    page.wait_for_timeout(300)
    overhead = 1400 - timeline.evaluate("e => e.clientWidth")  # the page around the cell's output
    page.set_viewport_size({"width": 600 + overhead, "height": 1000})  # the timeline gets 600 px
    timeline.scroll_into_view_if_needed()
    page.wait_for_function("() => document.querySelector('.amn-timeline').clientWidth <= 600")
    width = timeline.evaluate("e => e.clientWidth")
    assert 560 <= width <= 600, width
    assert timeline.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), "the timeline overflows its cell"
    expect(timeline.locator(".amn-timeline-chart svg")).to_have_attribute("viewBox", re.compile(r"^0 0 (\d+) "))
    view_w = int(timeline.locator(".amn-timeline-chart svg").get_attribute("viewBox").split()[2])
    assert abs(view_w - timeline.locator(".amn-timeline-chart").evaluate("e => e.clientWidth")) <= 4
    right = timeline.bounding_box()["x"] + width
    for control in (".amn-timeline-refresh", ".amn-timeline-clear"):
        button = timeline.locator(control).bounding_box()
        assert button["x"] + button["width"] <= right + 1, control  # "Refre…", "Clear…" no more
        assert timeline.locator(control).evaluate("e => e.scrollWidth <= e.clientWidth + 1"), control
    # the picture for the README: the controls, the chart and the first rows, as a person sees them
    page.set_viewport_size({"width": 600 + overhead, "height": 1400})
    timeline.evaluate("e => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(300)
    shown = timeline.bounding_box()
    clip = {"x": shown["x"], "y": max(0, shown["y"]), "width": shown["width"],
            "height": min(shown["height"], 1400 - max(0, shown["y"]) - 30)}
    page.screenshot(path=str(artifacts / "views-timeline-narrow.png"), clip=clip)
    page.screenshot(path=str(readme_picture("timeline-narrow.png")), clip=clip)
    assert not [e for e in errors if "amn" in e or "itables" in e.lower()], errors
    assert outside == [], outside
    print(f"contrast checked on {light} texts (Light) and {dark} (Dark)")
