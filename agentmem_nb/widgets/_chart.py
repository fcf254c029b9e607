"""The timeline's chart widget: an SVG drawn in Python, shown by a few lines of JavaScript that send back the
chart's width, a click on a mark and a dragged range (anywidget, no front-end build).

Why a widget and not ``ipywidgets.HTML``: an HTML widget can neither tell Python how wide the notebook is (the chart
was a fixed 860 px, clipped in a 600 px notebook) nor report a click. The SVG itself is built and escaped in Python
(:mod:`agentmem_nb.widgets._timeline_draw`); the script only sets it and reads ``data-index`` / ``data-left`` /
``data-right`` attributes from it.
"""

from __future__ import annotations

import anywidget
import traitlets

__all__ = ["TimelineChart"]

_ESM = """
function render({ model, el }) {
  el.classList.add("amn-timeline-chart-body");
  const draw = () => { el.innerHTML = model.get("svg"); };
  draw();
  model.on("change:svg", draw);
  const report = () => {
    const w = Math.round(el.clientWidth);
    if (w > 0 && Math.abs(w - model.get("width")) > 2) { model.set("width", w); model.save_changes(); }
  };
  const observer = new ResizeObserver(report);
  observer.observe(el);
  let down = null;
  const fraction = (event) => {
    const svg = el.querySelector("svg");
    if (!svg) return null;
    const box = svg.getBoundingClientRect();
    const scale = box.width / (svg.viewBox.baseVal.width || box.width);
    const left = Number(svg.dataset.left) * scale, right = Number(svg.dataset.right) * scale;
    return Math.min(1, Math.max(0, (event.clientX - box.left - left) / (right - left)));
  };
  el.addEventListener("mousedown", (event) => { down = { x: event.clientX, f: fraction(event) }; });
  el.addEventListener("mouseup", (event) => {
    const start = down; down = null;
    if (start && Math.abs(event.clientX - start.x) > 6 && start.f !== null) {
      const f = fraction(event);
      model.set("brush", [Math.min(start.f, f), Math.max(start.f, f)]);
      model.save_changes();
      return;
    }
    const mark = event.target.closest("[data-index]");
    if (mark) {
      model.set("clicked", [Number(mark.dataset.index), (model.get("clicked")[1] || 0) + 1]);
      model.save_changes();
    }
  });
  return () => observer.disconnect();
}
export default { render };
"""


class TimelineChart(anywidget.AnyWidget):
    """``svg``: what to show (escaped by its author); ``width``: the width the browser gives it (pixels);
    ``clicked``: ``[mark index, click count]`` of the last click on a mark; ``brush``: ``[from, to]`` fractions of
    the time axis the person dragged over."""

    _esm = _ESM
    svg = traitlets.Unicode("").tag(sync=True)
    width = traitlets.Int(640).tag(sync=True)
    clicked = traitlets.List(traitlets.Int(), default_value=[-1, 0]).tag(sync=True)
    brush = traitlets.List(traitlets.Float(), default_value=[]).tag(sync=True)
