"""``logs/llm_dialogue.jsonl``: one line per turn — input, context given, output, tool trace, timings, error.

The original demo wrote ``{ts, session_id, user_message, assistant_reply, memory_context, message_id}``; newer
lines add ``tool_calls``, ``timings_ms``, ``error`` and ``model``. :class:`DialogueEntry` reads both.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentmem_nb.messages import ToolCall
from agentmem_nb.store.jsonl import Durability, JsonlFile
from agentmem_nb.store.problems import Problem
from agentmem_nb.timeutil import format_ts, parse_ts

__all__ = ["DialogueEntry", "DialogueLog", "entry_from_record"]


@dataclass(frozen=True, slots=True)
class DialogueEntry:
    """One turn as the log recorded it."""

    entry_id: int
    ts: _dt.datetime | None
    session_id: str
    user_message: str
    assistant_reply: str
    memory_context: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict, hash=False)
    error: str | None = None
    model: str = ""
    assistant_message_id: int | None = None
    trace: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    """The turn's trace as JSON (model steps with their timing, tokens and input; tool start times; whether it was
    cancelled), read by :mod:`agentmem_nb.widgets.trace_data`; empty for turns written before it existed."""

    def to_record(self) -> dict[str, Any]:
        """The on-disk shape (``message_id`` is assigned by the log)."""
        return {
            "ts": format_ts(self.ts) if self.ts else None,
            "session_id": self.session_id,
            "user_message": self.user_message,
            "assistant_reply": self.assistant_reply,
            "memory_context": self.memory_context,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "timings_ms": self.timings_ms,
            "error": self.error,
            "model": self.model,
            "assistant_message_id": self.assistant_message_id,
            **({"trace": self.trace} if self.trace else {}),
        }


class DialogueLog:
    """Append-only audit log of turns."""

    def __init__(self, path: Path, *, zone: _dt.tzinfo | None, durability: Durability,
                 base: Path | None = None) -> None:
        self.file = JsonlFile(path, durability=durability, base=base)
        self._zone = zone

    def append(self, entry: DialogueEntry) -> DialogueEntry:
        """Write ``entry``; returns it with its ``entry_id``."""
        written = self.file.append(entry.to_record())
        return self._entry(written["message_id"], written)

    def __len__(self) -> int:
        """The number of readable entries (a follower reads ``tail(len(log) - seen)``)."""
        return len(self.file)

    def entries(self) -> list[DialogueEntry]:
        """Every readable entry, oldest first."""
        return [self._entry(mid, rec) for mid, rec in self.file.iter_records()]

    def tail(self, count: int) -> list[DialogueEntry]:
        """The last ``count`` entries."""
        total = len(self.file)
        return [self._entry(mid, rec) for mid, rec in self.file.read_records(total - max(0, count), total)]

    def problems(self) -> list[Problem]:
        """Unreadable lines of the log."""
        return self.file.problems()

    def _entry(self, entry_id: int, rec: dict[str, Any]) -> DialogueEntry:
        return entry_from_record(entry_id, rec, self._zone)


def entry_from_record(entry_id: int, rec: dict[str, Any], zone: _dt.tzinfo | None) -> DialogueEntry:
    """A :class:`DialogueEntry` from its stored record (either the original demo's shape or ours), whatever keeps
    it (this log's lines, the PostgreSQL backend's rows)."""
    ts, _ = parse_ts(rec.get("ts"), zone)
    calls = rec.get("tool_calls")
    timings = rec.get("timings_ms")
    error = rec.get("error")
    amid = rec.get("assistant_message_id")
    return DialogueEntry(
        entry_id=entry_id,
        ts=ts,
        session_id=str(rec.get("session_id", "")),
        user_message=str(rec.get("user_message", "")),
        assistant_reply=str(rec.get("assistant_reply", "")),
        memory_context=str(rec.get("memory_context", "")),
        tool_calls=tuple(c for c in map(ToolCall.from_raw, calls) if c) if isinstance(calls, list) else (),
        timings_ms={k: float(v) for k, v in timings.items() if isinstance(v, (int, float))}
        if isinstance(timings, dict) else {},
        error=error if isinstance(error, str) else None,
        model=str(rec.get("model", "")),
        assistant_message_id=amid if isinstance(amid, int) and not isinstance(amid, bool) else None,
        trace=trace if isinstance(trace := rec.get("trace"), dict) else {},
    )
