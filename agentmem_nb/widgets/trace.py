"""``TurnTrace``: the trace of one turn, as LangSmith and LangGraph Studio show one — a waterfall of the turn's
phases, model steps and tool calls with their real durations; for each model step the exact messages it was given
and the tokens the server reported; errors in place.

Open it from a reply's "trace" link in the chat (:meth:`ChatWidget.open_trace`), or for any turn::

    TurnTrace(store, user_id="alice", session_id="s1", message_id=12)   # the turn that wrote message #12
    TurnTrace(store, user_id="alice", entry_id=40)                      # line 40 of the dialogue log
    TurnTrace.of(data, origin="thread t1 · message #4")                # a trace built elsewhere (a LangGraph run)

The data comes from the dialogue log (:mod:`agentmem_nb.widgets.trace_data`); this module only draws it. The
waterfall is plain HTML (bars positioned in percent of the turn, so it fits any width; each row a ``<details>``
that unfolds its detail without any script), so the static copy in a saved notebook reads the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

from agentmem_nb.identifiers import check_session_id, check_user_id
from agentmem_nb.widgets.html import escape, pretty_json
from agentmem_nb.widgets.trace_data import GivenMessage, Span, TraceData, find_entry, messages_given, trace_of

if TYPE_CHECKING:
    from agentmem_nb.store import MemoryStore

__all__ = ["TurnTrace", "trace_html"]

_TEXT_SHOWN = 6000  # characters of one message or tool output shown in a row's detail (the rest is counted)


class TurnTrace(widgets.VBox):
    """The trace of one turn of ``user_id``.

    Args:
        store: the store the turn was written to.
        user_id: whose turn.
        session_id, message_id: the turn that wrote message ``message_id`` of conversation ``session_id`` (its
            reply, or the user message that started it — a failed or stopped turn has no reply).
        entry_id: or the turn's line in the dialogue log (``DialogueEntry.entry_id``), as the timeline knows it.

    When no turn in the log wrote that message (it was written straight to the store) the widget says so and
    :attr:`data` is ``None``.

    Raises:
        TypeError: neither ``entry_id`` nor both ``session_id`` and ``message_id`` were given.
        InvalidIdentifier: ``user_id`` or ``session_id`` is not a valid id.
    """

    def __init__(self, store: MemoryStore, *, user_id: str, session_id: str | None = None,
                 message_id: int | None = None, entry_id: int | None = None) -> None:
        self.store: MemoryStore | None = store
        self.user_id = check_user_id(user_id)
        self.session_id = check_session_id(session_id) if session_id is not None else None
        self.message_id = message_id
        entry = find_entry(store, self.user_id, session_id=self.session_id, message_id=message_id,
                           entry_id=entry_id)
        self.data: TraceData | None = trace_of(entry) if entry is not None else None
        """The trace (``None``: no turn in the log wrote the message)."""
        if self.data is None:
            what = (f"log entry #{entry_id}" if entry_id is not None
                    else f"message #{message_id} of conversation {self.session_id}")
            body = (f'<div class="amn-trace-root amn-trace-missing">No trace: no turn in the dialogue log of '
                    f"{escape(self.user_id)} wrote {escape(what)} (it was written straight to the store, or the "
                    "log was cleared).</div>")
        else:
            body = trace_html(self.data)
        self._show(body)

    @classmethod
    def of(cls, data: TraceData, *, origin: str) -> TurnTrace:
        """The trace ``data``, drawn like a dialogue-log turn's, its header naming ``origin`` instead of a log line
        (a LangGraph run: :func:`agentmem_nb.widgets._langgraph_source.run_trace`). ``store`` is ``None``."""
        trace = cls.__new__(cls)  # no store to look the turn up in: the data is given, only the view is built
        trace.store = None
        trace.user_id = ""
        trace.session_id = data.entry.session_id
        trace.message_id = data.entry.assistant_message_id
        trace.data = data
        trace._show(trace_html(data, origin=origin))
        return trace

    def _show(self, body: str) -> None:
        self.view = widgets.HTML(_STYLE + body)
        self.view.add_class("amn-trace-view")
        super().__init__([self.view])
        self.add_class("amn-trace")

    def close(self) -> None:
        """Close the trace and its view (a box does not close its children)."""
        view = getattr(self, "view", None)  # None when the constructor refused its arguments (Widget.__del__ closes)
        if view is not None:
            view.close()
        super().close()

    def __repr__(self) -> str:
        if self.data is None:
            return f"TurnTrace(user={self.user_id!r}, message={self.message_id!r}, found=False)"
        entry = self.data.entry
        return (f"TurnTrace(user={self.user_id!r}, session={entry.session_id!r}, entry={entry.entry_id}, "
                f"spans={len(self.data.spans)}, total_ms={self.data.total_ms:.0f}, status={self.data.status!r})")

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The live widget, plus the same HTML for readers without a kernel (GitHub, nbviewer)."""
        bundle: dict[str, Any] = super()._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = f'<div class="amn-trace">{self.view.value}</div>'
        return bundle


def trace_html(data: TraceData, *, origin: str | None = None) -> str:
    """The whole trace as HTML: a header line, then one row per span (a bar in a track, and its detail).
    ``origin`` names where the turn was recorded (default: its dialogue-log line, ``log #N``)."""
    entry = data.entry
    total = max(data.total_ms, 1e-6)
    tokens = ""
    if data.input_tokens is not None or data.output_tokens is not None:
        tokens = f" · tokens {data.input_tokens or 0} in / {data.output_tokens or 0} out"
    status = {"ok": "answered", "error": "failed", "cancelled": "stopped"}[data.status]
    when = entry.ts.strftime("%Y-%m-%d %H:%M:%S %Z").strip() if entry.ts is not None else ""
    where = escape(origin) if origin is not None else f"log #{entry.entry_id}"
    header = (f'<div class="amn-trace-head"><b>Turn trace</b> · {escape(entry.session_id)} · {where}'
              f" · {escape(when)} · model {escape(entry.model or '?')} · {data.total_ms:.0f} ms{tokens} · "
              f'<span class="amn-trace-status amn-trace-{data.status}">{status}</span></div>')
    note = ("" if data.timed else '<div class="amn-trace-note">This turn was logged before step timings were '
            "recorded: its tool calls are laid out one after another from their durations.</div>")
    question = (f'<div class="amn-trace-question"><span class="amn-trace-label">message</span> '
                f"{escape(entry.user_message)}</div>")
    rows = "".join(_row(span, data, total) for span in data.spans)
    context = (f'<details class="amn-trace-context"><summary>memory context given with the system prompt</summary>'
               f"<pre>{escape(entry.memory_context) or '(none)'}</pre></details>"
               if origin is None or entry.memory_context else "")  # a run recorded elsewhere keeps no such context
    scale = (f'<div class="amn-trace-scale"><span>0 ms</span><span>{total / 2:.0f} ms</span>'
             f"<span>{total:.0f} ms</span></div>")
    return (f'<div class="amn-trace-root">{header}{note}{question}<div class="amn-trace-rows">{scale}{rows}</div>'
            f"{context}</div>")


def _row(span: Span, data: TraceData, total: float) -> str:
    left = min(100.0, max(0.0, span.start_ms / total * 100))
    width = min(100.0 - left, max(0.4, span.ms / total * 100))
    tokens = ""
    if span.input_tokens is not None or span.output_tokens is not None:
        tokens = f" · {span.input_tokens or 0} in / {span.output_tokens or 0} out"
    mark = {"ok": "", "error": " ✗", "cancelled": " ■ stopped"}[span.status]
    summary = (f'<summary><span class="amn-trace-name">{escape(span.label)}{mark}</span>'
               f'<span class="amn-trace-track"><span class="amn-trace-bar amn-trace-bar-{span.kind}" '
               f'style="left:{left:.2f}%;width:{width:.2f}%"></span></span>'
               f'<span class="amn-trace-ms">{span.ms:.0f} ms{tokens}</span></summary>')
    return (f'<details class="amn-trace-row amn-trace-{span.kind} amn-trace-{span.status}">{summary}'
            f'<div class="amn-trace-detail">{_detail(span, data)}</div></details>')


def _detail(span: Span, data: TraceData) -> str:
    parts = []
    if span.error:
        parts.append(f'<div class="amn-trace-error"><b>error:</b> {escape(span.error)}</div>')
    parts.append(f'<div class="amn-trace-when">starts at {span.start_ms:.1f} ms, ends at {span.end_ms:.1f} ms</div>')
    if span.kind == "model" and span.step is not None:
        given = messages_given(data, span.step)
        new = len(span.given)
        parts.append(f'<div class="amn-trace-label">the {len(given)} messages this step was given'
                     f" ({new} new since the step before)</div>")
        parts.append('<ol class="amn-trace-messages">' + "".join(_message(m) for m in given) + "</ol>")
    if span.tool is not None:
        output = span.tool.output
        more = f"\n… ({len(output) - _TEXT_SHOWN} more characters)" if len(output) > _TEXT_SHOWN else ""
        parts.append(f'<div class="amn-trace-label">input</div><pre>{pretty_json(span.tool.input)}</pre>'
                     f'<div class="amn-trace-label">output</div><pre>{escape(output[:_TEXT_SHOWN] + more)}</pre>')
    return "".join(parts)


def _message(message: GivenMessage) -> str:
    text = message.content[:_TEXT_SHOWN]
    more = ""
    if message.cut:
        more = (f"\n… ({message.chars} characters in all; the log keeps the first {len(message.content)}, "
                f"sha256 {message.sha256[:16]}…)")
    elif len(message.content) > _TEXT_SHOWN:
        more = f"\n… ({len(message.content) - _TEXT_SHOWN} more characters)"
    calls = "".join(f'<div class="amn-trace-call">→ {escape(str(c.get("name")))} '
                    f'<code>{pretty_json(c.get("args"))}</code></div>' for c in message.tool_calls)
    name = f" ({escape(message.name)})" if message.name else ""
    return (f'<li class="amn-trace-msg amn-trace-msg-{escape(message.role)}"><span class="amn-trace-role">'
            f"{escape(message.role)}{name}</span><pre>{escape(text + more)}</pre>{calls}</li>")


# Colours from JupyterLab's theme variables only (readable in the light and the dark theme); bars are tinted with
# the theme's brand/accent/warn colours, text always sits on a layout colour.
_STYLE = """<style>
.amn-trace-root { color: var(--jp-ui-font-color1); background: var(--jp-layout-color1); font-size: 12px;
  border: 1px solid var(--jp-border-color2); border-radius: 4px; padding: 6px 8px; line-height: 1.4;
  max-width: 100%; box-sizing: border-box; }
.amn-trace-head { margin-bottom: 4px; }
.amn-trace-note, .amn-trace-question { margin: 2px 0 6px 0; }
.amn-trace-label, .amn-trace-role, .amn-trace-when { font-size: 11px; color: var(--jp-ui-font-color1);
  font-weight: 600; }
.amn-trace-scale { display: flex; justify-content: space-between; margin-left: 30%; margin-right: 14%;
  font-size: 11px; border-bottom: 1px solid var(--jp-border-color2); }
.amn-trace-row summary { display: flex; align-items: center; gap: 6px; cursor: pointer; padding: 2px 0;
  list-style: none; }
.amn-trace-row summary::-webkit-details-marker { display: none; }
.amn-trace-row summary:hover { background: var(--jp-layout-color2); }
.amn-trace-name { flex: 0 0 30%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.amn-trace-track { flex: 1 1 auto; position: relative; height: 12px; background: var(--jp-layout-color2);
  border-radius: 2px; min-width: 60px; }
.amn-trace-bar { position: absolute; top: 1px; bottom: 1px; border-radius: 2px; min-width: 2px; }
.amn-trace-bar-phase { background: var(--jp-border-color1); }
.amn-trace-bar-model { background: var(--jp-brand-color1); }
.amn-trace-bar-tool { background: var(--jp-success-color1); }
.amn-trace-error .amn-trace-bar, .amn-trace-row.amn-trace-error .amn-trace-bar { background: var(--jp-error-color1); }
.amn-trace-row.amn-trace-cancelled .amn-trace-bar { background: var(--jp-warn-color1); }
.amn-trace-ms { flex: 0 0 14%; text-align: right; white-space: nowrap; }
.amn-trace-detail { margin: 2px 0 8px 12px; padding-left: 8px; border-left: 2px solid var(--jp-border-color2); }
.amn-trace-row.amn-trace-error > .amn-trace-detail, .amn-trace-row.amn-trace-cancelled > .amn-trace-detail {
  border-left-color: var(--jp-error-color1); }
.amn-trace-root pre { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 220px; overflow: auto; margin: 2px 0;
  color: var(--jp-content-font-color1); background: var(--jp-layout-color2); padding: 3px;
  border: 1px solid var(--jp-border-color2); }
.amn-trace-messages { margin: 2px 0; padding-left: 20px; }
.amn-trace-status { font-weight: 600; }
.amn-trace-error b, .amn-trace-status.amn-trace-error, .amn-trace-status.amn-trace-cancelled {
  text-decoration: underline; text-decoration-color: var(--jp-error-color1); text-decoration-thickness: 2px; }
.amn-trace-missing { padding: 6px; }
</style>"""
