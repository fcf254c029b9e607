"""The chat's view: pure functions from messages and turn progress to HTML, and the chat's stylesheet.

Every piece of text that came from a user, a model or a tool goes through :mod:`agentmem_nb.widgets.html` before it
becomes HTML. Every colour comes from JupyterLab's theme variables (``--jp-*``), so the same markup reads in the
light and the dark theme; text is never put on a fixed pale background, and no text is dimmed with ``opacity``
(the browser test measures each text's contrast in both themes, WCAG AA 4.5:1).
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import TYPE_CHECKING, Any

from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.widgets.html import displayable, escape, pretty_json, safe_markdown

if TYPE_CHECKING:
    from agentmem_nb.widgets.chat_state import LiveTurn

__all__ = ["OFFLINE_HINT", "STYLE", "message_html", "tool_panel_html", "live_html", "history_html",
           "conversation_label", "banner_html", "status_html"]

OFFLINE_HINT = (
    "Offline model in use: replies come from a deterministic scripted model that still calls the real memory "
    "tools, so nothing leaves this machine. To talk to a real model, put "
    "<code>llm: {api_key: …, model: …, base_url: …}</code> in <code>config/llm.yaml</code>, or set "
    "<code>AGENTMEM_API_KEY</code> (and optionally <code>AGENTMEM_MODEL</code>, <code>AGENTMEM_BASE_URL</code>), "
    "then restart the kernel."
)
"""The banner shown when ``service.offline`` is true (static HTML: no user text in it)."""

TOOL_OUTPUT_SHOWN = 4000
"""Characters of a tool output shown in a panel: outputs can be whole windows of a thread, and a 1,000-message
conversation with several calls per turn would otherwise ship megabytes of HTML. The rest is counted, not hidden
silently."""

_KNOWN_ROLES = {"user", "assistant", "system", "tool"}


def banner_html(offline: bool) -> str:
    """The offline banner's HTML (empty for a real model)."""
    return f'<div class="amn-chat-root amn-offline-banner-text">{OFFLINE_HINT}</div>' if offline else ""


def message_html(message: Message, zone: _dt.tzinfo | None, *, trace_link: bool = False, focused: bool = False
                 ) -> str:
    """One message as HTML: escaped user text, sanitised Markdown for the assistant, and its tool-call panel.

    ``trace_link`` adds a "trace" link (``data-trace``: the message id) that opens the turn's trace;
    ``focused`` highlights the message (``ChatWidget.open_message``).
    """
    role = message.role if message.role in _KNOWN_ROLES else "other"
    when = _local(message.ts, zone).strftime("%Y-%m-%d %H:%M")
    if message.meta.get("ts_upper_bound") is True:  # only known to be no later (a long LangGraph thread, see graph_chat)
        when = f"≤ {when}"
    body = safe_markdown(message.content) if role == "assistant" else escape(message.content)
    calls = message.tool_calls if role == "assistant" else ()
    link = (f' · <button type="button" class="amn-trace-link" data-trace="{message.message_id}" '
            f'title="the model steps and tool calls of this turn">trace</button>' if trace_link else "")
    focus = " amn-msg-focus" if focused else ""
    return (f'<div class="amn-msg amn-msg-{role}{focus}" data-message-id="{message.message_id}">'
            f'<div class="amn-msg-meta">{escape(message.role)} · #{message.message_id} · {when}{link}</div>'
            f'<div class="amn-msg-body">{body}</div>{tool_panel_html(calls)}</div>')


def history_html(parts: list[str]) -> str:
    """The history pane's HTML around the messages' HTML (a hint when there are none)."""
    if not parts:
        parts = ['<div class="amn-chat-empty">No messages yet — say something below.</div>']
    return '<div class="amn-chat-root amn-history-inner">' + "".join(parts) + "</div>"


def tool_panel_html(calls: tuple[ToolCall, ...] | list[ToolCall]) -> str:
    """A collapsed ``<details class="amn-tool-panel">`` listing each call's name, status, input and output."""
    if not calls:
        return ""
    names = ", ".join(escape(call.name) for call in calls)
    items = []
    for call in calls:
        status = call.status if call.status in ("success", "error") else "success"
        output = call.output
        cut = ""
        if len(output) > TOOL_OUTPUT_SHOWN:
            cut = f"\n… ({len(output) - TOOL_OUTPUT_SHOWN} more characters not shown)"
            output = output[:TOOL_OUTPUT_SHOWN]
        items.append(
            f'<div class="amn-tool-call amn-tool-{status}">'
            f'<div class="amn-tool-name">{escape(call.name)} <span class="amn-tool-status">{status}'
            f'{duration(call.duration_ms)}</span></div>'
            f'<div class="amn-tool-label">input</div><pre class="amn-tool-input">{pretty_json(call.input)}</pre>'
            f'<div class="amn-tool-label">output</div><pre class="amn-tool-output">{escape(output)}{escape(cut)}</pre>'
            "</div>"
        )
    plural = "s" if len(calls) != 1 else ""
    return (f'<details class="amn-tool-panel"><summary>{len(calls)} tool call{plural}: {names}</summary>'
            + "".join(items) + "</details>")


def live_html(live: LiveTurn) -> str:
    """The in-progress turn: the user's message, a line per tool (running, done, failed), the reply so far."""
    parts = [f'<div class="amn-msg amn-msg-user amn-msg-pending"><div class="amn-msg-meta">user · sending</div>'
             f'<div class="amn-msg-body">{escape(live.text)}</div></div>']
    lines = []
    for state, call, _ in live.tools:
        name = escape(call.name) if call is not None else "tool"
        args = escape(compact_json(call.input)) if call is not None else ""
        if state == "running":
            lines.append(f'<li class="amn-tool-progress amn-tool-running">⏳ {name} <code>{args}</code></li>')
        else:
            status = call.status if call is not None and call.status in ("success", "error") else "success"
            mark = "✓" if status == "success" else "✗"
            took = duration(call.duration_ms if call is not None else None)
            size = f"{len(call.output)} chars" if call is not None else ""
            lines.append(f'<li class="amn-tool-progress amn-tool-{status}">{mark} {name} <code>{args}</code>'
                         f' → {size}{took}</li>')
    for note in live.notes:
        lines.append(f'<li class="amn-tool-progress amn-tool-error">✗ {escape(note)}</li>')
    body = (f'<div class="amn-msg-body amn-streaming-text">{escape(live.reply)}</div>' if live.reply
            else '<div class="amn-msg-body amn-thinking">thinking…</div>')
    state = "stopping…" if live.stopping else "working"
    parts.append(f'<div class="amn-msg amn-msg-assistant amn-msg-pending"><div class="amn-msg-meta">assistant · '
                 f'{state}</div>' + (f'<ul class="amn-tool-progress-list">{"".join(lines)}</ul>' if lines else "")
                 + body + "</div>")
    return '<div class="amn-chat-root">' + "".join(parts) + "</div>"


def status_html(user_id: str, session_id: str, count: int, model: str, *, new_user: bool, limits: str = "") -> str:
    """The line under the conversation list: who, which conversation, how many messages, which model — and
    ``limits``, why features of our store are off (a chat over a LangGraph graph)."""
    new = (' · <span class="amn-new-user">new user: nothing is saved until the first message</span>'
           if new_user else "")
    note = f'<div class="amn-chat-limits">{escape(limits)}</div>' if limits else ""
    return (f'<div class="amn-chat-root amn-status-text">{escape(user_id)} · {escape(session_id)} · {count} messages'
            + (f" · model {escape(model)}" if model else "") + new + note + "</div>")


def conversation_label(title: str, session_id: str, updated: _dt.datetime | None, zone: _dt.tzinfo | None) -> str:
    """One entry of the conversation list (plain text: Select options are never HTML)."""
    # the time first: a narrow list cuts the end of a label, and the time is what tells look-alike titles apart
    name = displayable(" ".join(title.split())) or f"(untitled {session_id})"
    when = _local(updated, zone).strftime("%m-%d %H:%M") if updated is not None else "new"
    return f"{when} · {name}"


def _local(moment: _dt.datetime, zone: _dt.tzinfo | None) -> _dt.datetime:
    return moment.astimezone(zone) if zone is not None else moment.astimezone()


def duration(ms: float | None) -> str:
    """`` · 12 ms`` (empty when unknown)."""
    return f" · {ms:.0f} ms" if ms is not None else ""


def compact_json(value: Any) -> str:
    """``value`` as one line of JSON, at most 120 characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 120 else text[:119] + "…"


# Colours: text is always --jp-ui-font-color1 / --jp-content-font-color1 on --jp-layout-color* (a pair every theme
# keeps readable); status colours (warn, error, success, brand) only draw borders and tints mixed into the layout
# colour, never a background under text on their own.
STYLE = """<style>
.amn-chat .amn-chat-root { line-height: 1.45; white-space: normal; color: var(--jp-content-font-color1); }
.amn-chat .amn-history-scroll { max-height: 460px; overflow-y: auto;
  border: 1px solid var(--jp-border-color2); border-radius: 4px; padding: 4px 6px;
  background: var(--jp-layout-color1); }
.amn-chat .amn-msg { margin: 6px 0; padding: 6px 10px; border-radius: 8px; max-width: 92%; overflow-wrap: anywhere;
  color: var(--jp-content-font-color1); }
.amn-chat .amn-msg-user { background: color-mix(in srgb, var(--jp-brand-color1) 14%, var(--jp-layout-color1));
  margin-left: auto; width: fit-content; }
.amn-chat .amn-msg-user .amn-msg-body { white-space: pre-wrap; }
.amn-chat .amn-msg-assistant { background: var(--jp-layout-color2); }
.amn-chat .amn-msg-other, .amn-chat .amn-msg-system, .amn-chat .amn-msg-tool { background: var(--jp-layout-color2);
  font-size: 90%; }
.amn-chat .amn-msg-pending { border: 1px dashed var(--jp-border-color1); }
.amn-chat .amn-msg-focus { outline: 2px solid var(--jp-brand-color1); outline-offset: 1px; }
.amn-chat .amn-msg-meta { font-size: 11px; color: var(--jp-ui-font-color1); }
.amn-chat .amn-msg-body p { margin: 2px 0; }
.amn-chat .amn-streaming-text { white-space: pre-wrap; }
.amn-chat .amn-trace-link { font-size: 11px; padding: 0 4px; cursor: pointer; border-radius: 3px;
  color: var(--jp-ui-font-color1); background: var(--jp-layout-color1); border: 1px solid var(--jp-border-color1); }
.amn-chat .amn-tool-panel { margin-top: 4px; font-size: 12px; }
.amn-chat .amn-tool-panel summary { cursor: pointer; color: var(--jp-ui-font-color1); }
.amn-chat .amn-tool-call { border-left: 3px solid var(--jp-success-color1); padding-left: 6px; margin: 4px 0; }
.amn-chat .amn-tool-call.amn-tool-error { border-left-color: var(--jp-error-color1); }
.amn-chat .amn-tool-name { font-weight: 600; }
.amn-chat .amn-tool-status, .amn-chat .amn-tool-label { font-weight: normal; color: var(--jp-ui-font-color1); }
.amn-chat .amn-tool-label { font-size: 11px; }
.amn-chat .amn-tool-panel pre { margin: 0 0 4px 0; max-height: 180px; overflow: auto; white-space: pre-wrap;
  color: var(--jp-content-font-color1); background: var(--jp-layout-color1);
  border: 1px solid var(--jp-border-color2); padding: 3px; }
.amn-chat .amn-tool-progress-list { margin: 2px 0; padding-left: 18px; font-size: 12px; }
.amn-chat .amn-offline-banner-text { color: var(--jp-ui-font-color1); background: var(--jp-layout-color2);
  border: 1px solid var(--jp-border-color2); border-left: 4px solid var(--jp-warn-color1); border-radius: 4px;
  padding: 6px 10px; font-size: 12px; }
.amn-chat .amn-offline-banner-text code { color: var(--jp-content-font-color1); background: var(--jp-layout-color1); }
.amn-chat .amn-error-box { color: var(--jp-ui-font-color1); background: var(--jp-layout-color2);
  border: 1px solid var(--jp-border-color2); border-left: 4px solid var(--jp-error-color1); border-radius: 4px;
  padding: 6px 10px; font-size: 12px; }
.amn-chat .amn-error-box pre { white-space: pre-wrap; max-height: 200px; overflow: auto; }
.amn-chat .amn-status-text { font-size: 11px; color: var(--jp-ui-font-color1); }
.amn-chat .amn-new-user { font-weight: 600; }
.amn-chat .amn-chat-empty { color: var(--jp-ui-font-color1); padding: 8px; }
.amn-chat .amn-chat-textarea { width: 100%; box-sizing: border-box; resize: vertical; min-height: 2.6em;
  font: inherit; font-size: var(--jp-ui-font-size1); padding: 4px 6px; color: var(--jp-ui-font-color1);
  background: var(--jp-layout-color1); border: 1px solid var(--jp-border-color1); border-radius: 2px; }
.amn-chat .amn-chat-textarea:focus { outline: 1px solid var(--jp-brand-color1); }
</style>"""
