"""The small layers as DataFrames: long-term memory (lines and history), conversations, dialogue log, problems."""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from agentmem_nb.frames._text import text_array
from agentmem_nb.frames._time import TimeBound, datetimes_to_series, frame_zone
from agentmem_nb.frames.messages import _as_list, contains_casefold, time_mask
from agentmem_nb.store import DialogueEntry, MemoryVersion, UserMemory

__all__ = [
    "LONG_TERM_COLUMNS",
    "HISTORY_COLUMNS",
    "CONVERSATION_COLUMNS",
    "LOG_COLUMNS",
    "PROBLEM_COLUMNS",
    "long_term",
    "long_term_history",
    "conversations",
    "dialogue_log",
    "log_frame",
    "filter_log",
    "problems",
]

LONG_TERM_COLUMNS = ("line_no", "text", "section", "added_at", "version", "source")
HISTORY_COLUMNS = ("version", "ts", "source", "added", "removed", "before", "after")
CONVERSATION_COLUMNS = ("session_id", "title", "created_at", "updated_at", "messages")
LOG_COLUMNS = ("entry_id", "ts", "session_id", "user_message", "assistant_reply", "memory_context", "n_tool_calls",
               "tools", "error", "model", "assistant_message_id", "timings_ms")
PROBLEM_COLUMNS = ("file", "kind", "line", "detail", "count", "path")


def _line_changes(before: str, after: str) -> tuple[list[str], list[str]]:
    """Lines added and removed by one change (as multisets: a duplicated line counts twice)."""
    old, new = Counter(before.splitlines()), Counter(after.splitlines())
    added = [line for line, n in (new - old).items() for _ in range(n) if line.strip()]
    removed = [line for line, n in (old - new).items() for _ in range(n) if line.strip()]
    return added, removed


def long_term(mem: UserMemory) -> pd.DataFrame:
    """The non-empty lines of ``memory.md``, each with the heading it sits under and, when the history knows it,
    when and by what it was added (a blame of the memory: ``added_at``/``version``/``source``, NA otherwise).

    ``line_no`` is the 1-based line number in the file.
    """
    text = mem.long_term.read()
    history = mem.long_term.history()
    # Replay the history: for each line still present, the change that last introduced it.
    origin: dict[str, list[MemoryVersion]] = {}
    for version in history:
        added, removed = _line_changes(version.before, version.after)
        for line in removed:
            if origin.get(line):
                origin[line].pop()
        for line in added:
            origin.setdefault(line, []).append(version)
    rows = []
    section = ""
    seen: Counter[str] = Counter()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        stripped = line.strip()
        if stripped.startswith("#"):
            section = stripped.lstrip("#").strip()
        versions = origin.get(line, [])
        nth = seen[line]
        seen[line] += 1
        found = versions[nth] if nth < len(versions) else None
        rows.append((number, line, section, found))
    zone = frame_zone(mem.store.zone)
    return pd.DataFrame({
        "line_no": np.asarray([r[0] for r in rows], dtype=np.int64),
        "text": text_array([r[1] for r in rows]),
        "section": text_array([r[2] for r in rows]),
        "added_at": datetimes_to_series([r[3].ts if r[3] else None for r in rows], zone).array,
        "version": pd.array([r[3].version if r[3] else None for r in rows], dtype="Int64"),
        "source": text_array([r[3].source if r[3] else None for r in rows]),
    })


def long_term_history(mem: UserMemory) -> pd.DataFrame:
    """Every change of ``memory.md``, oldest first: ``added``/``removed`` are the changed lines joined by newlines."""
    history = mem.long_term.history()
    changes = [_line_changes(v.before, v.after) for v in history]
    zone = frame_zone(mem.store.zone)
    return pd.DataFrame({
        "version": np.asarray([v.version for v in history], dtype=np.int64),
        "ts": datetimes_to_series([v.ts for v in history], zone).array,
        "source": text_array([v.source for v in history]),
        "added": text_array(["\n".join(a) for a, _ in changes]),
        "removed": text_array(["\n".join(r) for _, r in changes]),
        "before": text_array([v.before for v in history]),
        "after": text_array([v.after for v in history]),
    })


def conversations(mem: UserMemory, *, with_counts: bool = True) -> pd.DataFrame:
    """The conversation list, newest ``updated_at`` first (the store's order). ``messages`` is the number of messages
    in the thread file (read through the store's incremental index; NA with ``with_counts=False``)."""
    items = mem.conversations.list()
    zone = frame_zone(mem.store.zone)
    on_disk = set(mem.session_ids()) if with_counts else set()
    counts = [len(mem.session(c.session_id)) if c.session_id in on_disk else (0 if with_counts else None)
              for c in items]
    return pd.DataFrame({
        "session_id": text_array([c.session_id for c in items]),
        "title": text_array([c.title for c in items]),
        "created_at": datetimes_to_series([c.created_at for c in items], zone).array,
        "updated_at": datetimes_to_series([c.updated_at for c in items], zone).array,
        "messages": pd.array(counts, dtype="Int64"),
    })


def log_frame(entries: Iterable[DialogueEntry], *, zone: _dt.tzinfo) -> pd.DataFrame:
    """Dialogue-log entries as rows (used by :func:`dialogue_log` and by the widgets' incremental refresh)."""
    entries = list(entries)
    timings = np.empty(len(entries), dtype=object)
    timings[:] = [dict(e.timings_ms) for e in entries]
    return pd.DataFrame({
        "entry_id": np.asarray([e.entry_id for e in entries], dtype=np.int64),
        "ts": datetimes_to_series([e.ts for e in entries], zone).array,
        "session_id": text_array([e.session_id for e in entries]),
        "user_message": text_array([e.user_message for e in entries]),
        "assistant_reply": text_array([e.assistant_reply for e in entries]),
        "memory_context": text_array([e.memory_context for e in entries]),
        "n_tool_calls": np.asarray([len(e.tool_calls) for e in entries], dtype=np.int64),
        "tools": text_array([", ".join(c.name for c in e.tool_calls) for e in entries]),
        "error": text_array([e.error for e in entries]),
        "model": text_array([e.model for e in entries]),
        "assistant_message_id": pd.array([e.assistant_message_id for e in entries], dtype="Int64"),
        "timings_ms": timings,
    })


def dialogue_log(
    mem: UserMemory,
    *,
    session: str | Iterable[str] | None = None,
    keyword: str | None = None,
    start: TimeBound = None,
    end: TimeBound = None,
) -> pd.DataFrame:
    """``logs/llm_dialogue.jsonl``, one row per turn, oldest first. ``keyword`` matches the user message or the
    reply (casefolded substring); ``session``, ``start``, ``end`` as for messages."""
    frame = log_frame(mem.log.entries(), zone=frame_zone(mem.store.zone))
    return filter_log(frame, session=session, keyword=keyword, start=start, end=end)


def filter_log(
    frame: pd.DataFrame,
    *,
    session: str | Iterable[str] | None = None,
    keyword: str | None = None,
    start: TimeBound = None,
    end: TimeBound = None,
) -> pd.DataFrame:
    """Rows of a dialogue-log frame that pass every given filter."""
    mask = pd.Series(True, index=frame.index)
    if session is not None:
        mask &= frame["session_id"].isin(_as_list(session))
    if start is not None or end is not None:
        mask &= time_mask(frame["ts"], start, end)
    if keyword:
        mask &= (contains_casefold(frame["user_message"], keyword, within=mask)
                 | contains_casefold(frame["assistant_reply"], keyword, within=mask))
    if bool(mask.all()):
        return frame
    return frame.loc[mask].reset_index(drop=True)


def problems(mem: UserMemory) -> pd.DataFrame:
    """What was wrong in the user's files (``UserMemory.problems()``, a full check): ``file`` is relative to the
    user's folder (in a database: the layer, e.g. ``sessions/s1``), ``line`` 0 means the whole file."""
    found = mem.problems()

    def relative(path: str) -> str:
        if not isinstance(mem, UserMemory):  # a database names a row "<url>#<user>/sessions/s1": the part after it
            _, at, inside = path.partition(f"#{mem.user_id}/")
            return inside if at else path
        try:
            return str(Path(path).relative_to(mem.directory))
        except ValueError:
            return path

    return pd.DataFrame({
        "file": text_array([relative(p.path) for p in found]),
        "kind": text_array([p.kind.value for p in found]),
        "line": np.asarray([p.line for p in found], dtype=np.int64),
        "detail": text_array([p.detail for p in found]),
        "count": np.asarray([p.count for p in found], dtype=np.int64),
        "path": text_array([p.path for p in found]),
    })
