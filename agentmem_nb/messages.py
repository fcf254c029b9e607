"""Typed value objects for what the store holds: :class:`Message` and :class:`ToolCall`.

On disk a message is one JSON line (keys as in the original demo; extra keys are additive)::

    {"ts": "2026-04-08T10:00:00.123456+08:00", "role": "assistant", "content": "...", "tags": ["session"],
     "meta": {"tool_calls": [{"id": "call_1", "name": "search_session", "input": {"keyword": "job"},
                              "output": "#11 ..."}], "session_id": "s1"},
     "message_id": 12}

Lines written by older versions are normalised here, once, on read: see :func:`message_from_record`.
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any

from agentmem_nb.timeutil import format_ts, parse_ts

__all__ = ["ToolCall", "Message", "message_from_record", "parse_message_id", "EPOCH"]

EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)

@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the agent made while producing an assistant message.

    ``input`` is always a dict: the original demo stored it as JSON *text*, which is parsed on read (text that is
    not a JSON object is kept under the key ``"_raw"``).
    """

    name: str
    input: dict[str, Any] = field(default_factory=dict, hash=False)
    output: str = ""
    id: str | None = None
    status: str = "success"
    duration_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The on-disk shape (always the dict shape for ``input``)."""
        out: dict[str, Any] = {"id": self.id, "name": self.name, "input": self.input, "output": self.output}
        if self.status != "success":
            out["status"] = self.status
        if self.duration_ms is not None:
            out["duration_ms"] = round(self.duration_ms, 3)
        return out

    @classmethod
    def from_raw(cls, raw: object) -> ToolCall | None:
        """Read either the original demo's shape or ours; ``None`` if ``raw`` is not a tool call at all."""
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            return None
        given = raw.get("input", {})
        if isinstance(given, str):
            try:
                parsed = json.loads(given) if given.strip() else {}
            except ValueError:
                parsed = None
            given = parsed if isinstance(parsed, dict) else {"_raw": given}
        elif not isinstance(given, dict):
            given = {"_raw": given}
        output = raw.get("output", "")
        duration = raw.get("duration_ms")
        status = raw.get("status")
        return cls(
            name=raw["name"],
            input=given,
            output=output if isinstance(output, str) else json.dumps(output, ensure_ascii=False),
            id=raw.get("id") if isinstance(raw.get("id"), str) else None,
            status=status if isinstance(status, str) and status in ("success", "error") else "success",
            duration_ms=float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None,
        )


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a session or day file.

    ``session_id`` and ``day`` say where it belongs: for a session line the session is the file and the day is the
    local date of ``ts``; for a daily line the day is the file and the session comes from ``meta.session_id``.
    """

    message_id: int
    ts: _dt.datetime
    role: str
    content: str
    tags: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, hash=False)
    session_id: str | None = None
    day: str | None = None

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Tool calls recorded in ``meta["tool_calls"]`` (either on-disk shape)."""
        raw = self.meta.get("tool_calls")
        if not isinstance(raw, list):
            return ()
        return tuple(call for call in map(ToolCall.from_raw, raw) if call is not None)

    def to_record(self) -> dict[str, Any]:
        """The JSON object written to disk."""
        return {
            "ts": format_ts(self.ts),
            "role": self.role,
            "content": self.content,
            "tags": list(self.tags),
            "meta": self.meta,
            "message_id": self.message_id,
        }

    def anchor_line(self, *, with_day: bool = False, max_chars: int | None = None) -> str:
        """The line a model sees: ``#12 [2026-04-08 10:00] user: ...`` (the anchor first, so it can ask for a window)."""
        when = self.ts.strftime("%Y-%m-%d %H:%M")
        where = f" day={self.day}" if with_day and self.day else ""
        text = self.content if max_chars is None or len(self.content) <= max_chars else self.content[:max_chars] + "…"
        return f"#{self.message_id}{where} [{when}] {self.role}: {text}"


def parse_message_id(raw: object) -> int | None:
    """A usable message id from a raw value: a positive int (or its decimal text); anything else is ``None``."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if raw > 0 else None
    if isinstance(raw, str) and raw.isascii() and raw.isdigit():
        value = int(raw)
        return value if value > 0 else None
    return None


def message_from_record(
    record: dict[str, Any],
    *,
    message_id: int,
    zone: _dt.tzinfo | None,
    fallback_ts: _dt.datetime,
    session_id: str | None = None,
    day: str | None = None,
) -> Message:
    """Build a :class:`Message` from a parsed line whose id has already been normalised.

    Missing or odd fields get harmless defaults rather than an exception: a bad line never breaks a read.
    """
    ts, _naive = parse_ts(record.get("ts"), zone)
    content = record.get("content", "")
    if not isinstance(content, str):
        content = "" if content is None else json.dumps(content, ensure_ascii=False)
    tags = record.get("tags")
    meta = record.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    role = record.get("role")
    if session_id is None and isinstance(meta.get("session_id"), str):
        session_id = meta["session_id"]
    moment = ts or fallback_ts
    return Message(
        message_id=message_id,
        ts=moment,
        role=role if isinstance(role, str) else "unknown",
        content=content,
        tags=tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        meta=meta,
        session_id=session_id,
        day=day if day is not None else moment.date().isoformat(),
    )
