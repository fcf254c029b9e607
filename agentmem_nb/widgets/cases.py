"""A widget over the results of recall cases: the cases on the left (passed or failed), and for the chosen one its
checks and every message it retrieved, grouped by the anchor (the hit) whose window brought it, with the message
that satisfied each expectation marked — or, for a missed one, why it was missed.

::

    from agentmem_nb.evaluation.cases import run_case_files
    from agentmem_nb.widgets.cases import CasesWidget

    report = run_case_files(["recall.memcases.yaml"])
    CasesWidget(report)                  # in a notebook cell
    w.select("sister-city"); w.detail.value   # the same view, driven from code (tests, notebooks)

The HTML comes from :func:`case_html`, a pure function of one :class:`~agentmem_nb.evaluation.cases.CaseResult`;
every stored text passes :func:`agentmem_nb.widgets.html.escape`. Rendering reads only the report in memory, so the
widget's one callback (choosing a case) opens no file and calls no model.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.cases import CaseResult, CasesReport, RecalledMessage, tool_line
from agentmem_nb.widgets.html import escape

__all__ = ["CasesWidget", "case_html", "case_label"]

_STYLE = """<style>
.amn-cases table{border-collapse:collapse;font-size:12px;width:100%}
.amn-cases td,.amn-cases th{border-bottom:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
.amn-cases .amn-cases-anchor{background:#eef6ff;font-weight:600}
.amn-cases .amn-cases-window td:first-child{padding-left:18px}
.amn-cases .amn-cases-ok{color:#1a7f37}.amn-cases .amn-cases-miss{color:#cf222e}
.amn-cases .amn-cases-match{background:#dafbe1}.amn-cases .amn-cases-bad{background:#ffebe9}
</style>"""


def case_label(result: CaseResult) -> str:
    """``✓ recall.memcases.yaml::sister-city`` (``✗`` when it failed)."""
    return f"{'✓' if result.passed else '✗'} {result.test_id}"


def case_html(result: CaseResult) -> str:
    """One case as HTML: question, checks (with the reason of each miss), what was retrieved by anchor, and the
    reply and tools of an agent case."""
    parts = [_STYLE, '<div class="amn-cases">',
             f"<p><b>{escape(result.test_id)}</b> — {'passed' if result.passed else 'failed'}"
             f" ({'agent turn' if result.agent else f'{escape(result.mode)} search, budget {result.budget}'})</p>",
             f"<p>question: <code>{escape(result.question)}</code></p><ul>"]
    if result.error:
        parts.append(f'<li class="amn-cases-miss">error: {escape(result.error)}</li>')
    for check in result.checks:
        css = "amn-cases-ok" if check.passed else "amn-cases-miss"
        parts.append(f'<li class="{css}">{"✓" if check.passed else "✗"} {escape(check.reason)}</li>')
    parts.append("</ul>")
    if result.agent:
        parts.append(f"<p>reply: {escape(result.reply or '')}</p>")
        tools = ", ".join(tool_line(t) for t in result.tools) or "none"
        parts.append(f"<p>tools called: <code>{escape(tools)}</code></p>")
    parts.append(_retrieved_table(result))
    parts.append("</div>")
    return "".join(parts)


def _retrieved_table(result: CaseResult) -> str:
    if not result.retrieved:
        return "<p>nothing retrieved</p>"
    marks: dict[int, list[tuple[bool, str]]] = {}
    for check in result.checks:
        if check.found_at is not None:
            marks.setdefault(check.found_at, []).append((check.kind == "retrieved", check.expected))
    rows = ["<table><tr><th>message</th><th>anchor</th><th>rank</th><th>role</th><th>text</th><th>expected</th>"
            "</tr>"]
    for index, message in _by_anchor(result.retrieved):
        found = marks.get(index, [])
        css = ["amn-cases-anchor" if message.is_anchor else "amn-cases-window"]
        if any(good for good, _ in found):
            css.append("amn-cases-match")
        if any(not good for good, _ in found):
            css.append("amn-cases-bad")
        expected = "; ".join(("✓ " if good else "✗ NOT ") + text for good, text in found)
        anchor = "hit" if message.is_anchor else f"window of #{message.anchor_id}"
        title = f' title="{escape(message.explain)}"' if message.explain else ""
        rows.append(f'<tr class="{" ".join(css)}"{title}><td>#{message.message_id} {escape(message.layer)} '
                    f"{escape(message.key)}</td><td>{escape(anchor)}</td><td>{message.rank or ''}</td>"
                    f"<td>{escape(message.role)}</td><td>{escape(message.content)}</td><td>{escape(expected)}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _by_anchor(retrieved: tuple[RecalledMessage, ...]) -> list[tuple[int, RecalledMessage]]:
    """The messages grouped under their anchor (anchors in the order they came), each window in id order."""
    groups: dict[tuple[str, str, int], list[tuple[int, RecalledMessage]]] = {}
    for index, message in enumerate(retrieved):
        groups.setdefault((message.layer, message.key, message.anchor_id), []).append((index, message))
    out = []
    for members in groups.values():
        members.sort(key=lambda pair: (not pair[1].is_anchor, pair[1].message_id))
        out += members
    return out


class CasesWidget(widgets.VBox):
    """The cases of a :class:`~agentmem_nb.evaluation.cases.CasesReport` and, for the chosen one, :func:`case_html`.

    Attributes: ``summary`` (HTML: passed/failed), ``picker`` (``Select`` of the cases, failed ones first),
    ``detail`` (HTML of the chosen case), ``report``.
    """

    def __init__(self, report: CasesReport, **kwargs: Any) -> None:
        self.report = report
        order = sorted(range(len(report.results)), key=lambda i: report.results[i].passed)  # failures first
        self.summary = widgets.HTML(f"<b>{escape(report.summary())}</b>")
        self.picker = widgets.Select(options=[(case_label(report.results[i]), i) for i in order],
                                     rows=min(12, max(2, len(order))), layout=widgets.Layout(width="34%"))
        self.detail = widgets.HTML(layout=widgets.Layout(width="64%"))
        self.picker.observe(self._on_pick, names="value")
        super().__init__([self.summary, widgets.HBox([self.picker, self.detail])], **kwargs)
        if order:
            self.picker.value = order[0]
            self._show(order[0])

    @property
    def selected(self) -> CaseResult | None:
        """The case shown."""
        value = self.picker.value
        return self.report.results[value] if isinstance(value, int) else None

    def select(self, name: str) -> CaseResult:
        """Show the case called ``name`` (or ``file::name``)."""
        for index, result in enumerate(self.report.results):
            if name in (result.name, result.test_id):
                self.picker.value = index
                return result
        raise InvalidArgument(f"no case {name!r} (cases: {', '.join(r.name for r in self.report.results)})")

    def _on_pick(self, change: dict[str, Any]) -> None:
        if isinstance(change.get("new"), int):
            self._show(change["new"])

    def _show(self, index: int) -> None:
        self.detail.value = case_html(self.report.results[index])
