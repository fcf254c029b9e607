"""Tool calls exploded to one row per call, and their filters (tool name, keyword, session, dates, status).

Columns (:data:`TOOL_COLUMNS`): ``ts`` (the time of the turn that made the call), ``user_id``, ``session_id``,
``message_id`` (the assistant message that carries the call; NA when unknown), ``turn`` (the dialogue-log entry id
with ``source="log"``; with ``source="sessions"`` the assistant message id, unique together with ``session_id``: the
calls of one turn share it),
``call_index`` (order within the turn), ``tool``, ``call_id``, ``input`` (a dict), ``input_text`` (the same as JSON
text, or the original text when it was not JSON), ``output``, ``output_len`` (characters), ``status``
(``"success"``/``"error"``), ``duration_ms`` (NaN when not recorded), ``source``.

Where the calls come from:

* ``source="log"`` (default): ``logs/llm_dialogue.jsonl``, one entry per turn — the audit record, which also covers
  turns whose thread file is gone (the seed data has one).
* ``source="sessions"``: ``meta.tool_calls`` of the assistant messages in ``sessions/*.jsonl``.

Both shapes the original demo and this project wrote are read (``input`` as JSON text or as a dict) by
:meth:`ToolCall.from_raw`, the store's own normalisation.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable
from typing import Any, Literal

import numpy as np
import pandas as pd

from agentmem_nb.frames._read import ReadStats
from agentmem_nb.frames import langgraph as _langgraph  # recognises a checkpointer without importing langgraph
from agentmem_nb.frames._text import text_array
from agentmem_nb.frames._time import NAT_US, TimeBound, frame_zone, timestamp_us, us_to_series
from agentmem_nb.frames.messages import _as_list, _load, _session_ids, contains_casefold, time_mask
from agentmem_nb.messages import ToolCall
from agentmem_nb.store import DialogueEntry, UserMemory

__all__ = ["TOOL_COLUMNS", "ToolSource", "tool_calls", "filter_tool_calls", "tool_calls_from_log",
           "tool_calls_from_messages", "input_text"]

ToolSource = Literal["log", "sessions"]

TOOL_COLUMNS = ("ts", "user_id", "session_id", "message_id", "turn", "call_index", "tool", "call_id", "input",
                "input_text", "output", "output_len", "status", "duration_ms", "source")


# One encoder for every call: json.dumps with non-default options builds a new encoder each time (a third of the
# cost of exploding a large history).
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str).encode


def input_text(call: ToolCall) -> str:
    """A call's input as one line of text: JSON, or the original text when the demo stored something else."""
    raw = call.input.get("_raw")
    if len(call.input) == 1 and isinstance(raw, str):
        return raw
    return _ENCODE(call.input)


_Row = tuple[int, "str | None", "int | None", int, int, ToolCall]  # (ts µs, session, message id, turn, index, call)


def _frame(rows: list[_Row], *, user_id: str, zone: _dt.tzinfo, source: str) -> pd.DataFrame:
    calls = [r[5] for r in rows]
    inputs = np.empty(len(calls), dtype=object)
    inputs[:] = [c.input for c in calls]
    return pd.DataFrame({
        "ts": us_to_series([r[0] for r in rows], zone).array,
        "user_id": text_array([user_id] * len(rows)),
        "session_id": text_array([r[1] for r in rows]),
        "message_id": pd.array([r[2] for r in rows], dtype="Int64"),
        "turn": np.asarray([r[3] for r in rows], dtype=np.int64),
        "call_index": np.asarray([r[4] for r in rows], dtype=np.int64),
        "tool": text_array([c.name for c in calls]),
        "call_id": text_array([c.id for c in calls]),
        "input": inputs,
        "input_text": text_array([input_text(c) for c in calls]),
        "output": text_array([c.output for c in calls]),
        "output_len": np.asarray([len(c.output) for c in calls], dtype=np.int64),
        "status": text_array([c.status for c in calls]),
        "duration_ms": np.asarray([np.nan if c.duration_ms is None else c.duration_ms for c in calls], dtype=float),
        "source": text_array([source] * len(rows)),
    })


def tool_calls_from_log(entries: Iterable[DialogueEntry], *, user_id: str, zone: _dt.tzinfo) -> pd.DataFrame:
    """One row per call recorded in dialogue-log entries (``turn`` = the entry id)."""
    rows: list[_Row] = [
        (NAT_US if entry.ts is None else timestamp_us(entry.ts), entry.session_id or None,
         entry.assistant_message_id, entry.entry_id, index, call)
        for entry in entries
        for index, call in enumerate(entry.tool_calls)
    ]
    return _frame(rows, user_id=user_id, zone=zone, source="log")


def tool_calls_from_messages(messages: pd.DataFrame, raw_calls: Iterable[tuple[int, list[Any]]], *,
                             user_id: str, zone: _dt.tzinfo) -> pd.DataFrame:
    """One row per call in ``meta.tool_calls`` of message rows (``raw_calls``: ``(row, raw list)`` pairs;
    ``turn`` = the assistant message id)."""
    # Plain int64 microseconds: boxing a pandas Timestamp per call would cost more than parsing the call.
    micros = messages["ts"].array.as_unit("us").asi8
    sessions = messages["session_id"].to_numpy(dtype=object)
    ids = messages["message_id"].to_numpy()
    rows: list[_Row] = []
    for row, raw in raw_calls:
        parsed = [c for c in map(ToolCall.from_raw, raw) if c is not None]
        message_id = int(ids[row])
        when = int(micros[row])
        rows += [(when, sessions[row], message_id, message_id, index, call) for index, call in enumerate(parsed)]
    return _frame(rows, user_id=user_id, zone=zone, source="sessions")


def _input_haystack(inputs: pd.Series, texts: pd.Series) -> pd.Series:
    """What a keyword is looked for in: the JSON text and, NUL-separated, the input's string values as typed."""
    values = [
        "\x00".join([text, *(v for v in value.values() if isinstance(v, str))]) if isinstance(value, dict) else text
        for value, text in zip(inputs, texts)
    ]
    return pd.Series(values, index=inputs.index, dtype=object)


def tool_calls(
    mem: UserMemory,
    *,
    source: ToolSource = "log",
    tools: str | Iterable[str] | None = None,
    keyword: str | None = None,
    session: str | Iterable[str] | None = None,
    start: TimeBound = None,
    end: TimeBound = None,
    status: str | None = None,
    stats: ReadStats | None = None,
) -> pd.DataFrame:
    """Every tool call of a user, one row per call, oldest first (see the module docstring for columns/sources).

    ``stats`` collects what reading the thread files cost (``source="sessions"``; see :class:`ReadStats`).
    ``mem`` may also be a LangGraph checkpointer (``session`` = thread ids; see :mod:`agentmem_nb.frames.langgraph`).

    >>> # tool_calls(store.user("alice"), tools="search_session", keyword="lyon")
    """
    if _langgraph.given_checkpointer(mem):  # a LangGraph checkpointer: its threads' calls (``source`` does not apply)
        frame = _langgraph.checkpointer_tool_calls(mem, session)  # type: ignore[arg-type]  # a checkpointer here
        return filter_tool_calls(frame, tools=tools, keyword=keyword, start=start, end=end, status=status)
    zone = frame_zone(mem.store.zone)
    if source == "log":
        frame = tool_calls_from_log(mem.log.entries(), user_id=mem.user_id, zone=zone)
    elif source == "sessions":
        ids = _session_ids(mem, session)
        messages, raw = _load(mem, [mem.session(s) for s in ids], meta=False, calls=True, stats=stats,
                              every=session is None)
        frame = tool_calls_from_messages(messages, raw, user_id=mem.user_id, zone=zone)
    else:
        raise ValueError(f"source={source!r}: use 'log' (the dialogue log) or 'sessions' (the thread files)")
    frame = frame.sort_values("ts", kind="stable", ignore_index=True)
    return filter_tool_calls(frame, tools=tools, keyword=keyword, session=session, start=start, end=end,
                             status=status)


def filter_tool_calls(
    frame: pd.DataFrame,
    *,
    tools: str | Iterable[str] | None = None,
    keyword: str | None = None,
    session: str | Iterable[str] | None = None,
    start: TimeBound = None,
    end: TimeBound = None,
    status: str | None = None,
) -> pd.DataFrame:
    """Rows of a tool-call frame that pass every given filter (``None`` = no filter).

    - ``tools``: one tool name or several (exact names).
    - ``keyword``: casefolded substring of the input (its JSON text or any of its string values, so a quote needs no
      JSON escaping) or of the output. Empty = no filter.
    - ``session``: one session id or several.
    - ``start`` / ``end``: inclusive time bounds (as in :func:`~agentmem_nb.frames.filter_messages`).
    - ``status``: ``"success"`` or ``"error"``.
    """
    mask = pd.Series(True, index=frame.index)
    if tools is not None:
        mask &= frame["tool"].isin(_as_list(tools))
    if session is not None:
        mask &= frame["session_id"].isin(_as_list(session))
    if status is not None:
        mask &= frame["status"] == status
    if start is not None or end is not None:
        mask &= time_mask(frame["ts"], start, end)
    if keyword:
        mask &= (contains_casefold(_input_haystack(frame["input"], frame["input_text"]), keyword, within=mask)
                 | contains_casefold(frame["output"], keyword, within=mask))
    if bool(mask.all()):
        return frame
    return frame.loc[mask].reset_index(drop=True)
