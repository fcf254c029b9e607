"""``redactions.jsonl``: redaction events — a stored message hidden from view without rewriting its line.

A message file is append-only (its ids are retrieval anchors, and the store never rewrites a line), so redacting a
message is itself an event: one line here per redaction, naming the message (:class:`~agentmem_nb.items.ItemKey`:
the session line, or its daily copy), when, by whom (``source``) and why. The message line stays on disk, byte for
byte; the history of redactions is this file. Views that show message text read :meth:`Redactions.active` and show
the reason instead of the content (the inspector does). What does *not* read it yet: the agent's tools and the
retrieval index — a redacted message can still be found by the agent's search until they do.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmem_nb.errors import StoreError
from agentmem_nb.identifiers import check_day, check_session_id
from agentmem_nb.items import ItemKey
from agentmem_nb.store.jsonl import Durability, JsonlFile
from agentmem_nb.store.problems import Problem
from agentmem_nb.timeutil import Clock, format_ts, parse_ts

__all__ = ["Redaction", "Redactions"]


@dataclass(frozen=True, slots=True)
class Redaction:
    """One redaction event: ``item`` is hidden from view since ``ts`` because ``reason`` (said by ``source``).
    ``redaction_id`` numbers the events of a user, from 1."""

    redaction_id: int
    item: ItemKey
    ts: _dt.datetime | None
    reason: str
    source: str


class Redactions:
    """Append-only redaction events of one user (``memory/{user_id}/redactions.jsonl``)."""

    def __init__(self, path: Path, *, clock: Clock, zone: _dt.tzinfo | None, durability: Durability,
                 base: Path | None = None) -> None:
        self.file = JsonlFile(path, durability=durability, base=base)
        self._clock = clock
        self._zone = zone

    def add(self, item: ItemKey, *, reason: str, source: str = "user") -> Redaction:
        """Record that ``item`` is redacted, and why; returns the event. The message itself is not touched.

        Raises:
            StoreError: an empty reason (a redaction says why), or an item whose layer is not a message layer.
            InvalidIdentifier: a malformed session id or day.
        """
        reason = " ".join(str(reason).split())
        if not reason:
            raise StoreError(f"redacting {tuple(item)!r}: give a reason (it is kept with the event)")
        if item.layer == "session":
            check_session_id(item.key)
        elif item.layer == "daily":
            check_day(item.key)
        else:
            raise StoreError(f"cannot redact {tuple(item)!r}: the layer must be 'session' or 'daily'")
        if type(item.message_id) is not int or item.message_id < 1:
            raise StoreError(f"cannot redact {tuple(item)!r}: message ids are integers from 1")
        record = {"ts": format_ts(self._clock()), "layer": item.layer, "key": item.key,
                  "target_id": item.message_id, "reason": reason, "source": str(source)}
        written = self.file.append(record)
        event = self._event(written["message_id"], written)
        assert event is not None  # the record written above names a message
        return event

    def events(self) -> list[Redaction]:
        """Every redaction event, oldest first (unreadable lines are skipped and listed by :meth:`problems`)."""
        found = (self._event(rid, rec) for rid, rec in self.file.iter_records()) if self.file.path.exists() else ()
        return [event for event in found if event is not None]

    def active(self) -> dict[ItemKey, Redaction]:
        """The redacted messages and the (latest) event that redacted each."""
        return {event.item: event for event in self.events()}

    def problems(self) -> list[Problem]:
        """Unreadable lines of the file."""
        return self.file.problems()

    def _event(self, redaction_id: int, rec: dict[str, Any]) -> Redaction | None:
        layer, key, target = rec.get("layer"), rec.get("key"), rec.get("target_id")
        if layer not in ("session", "daily") or not isinstance(key, str) or type(target) is not int:
            return None  # a line that names no message redacts nothing
        ts, _ = parse_ts(rec.get("ts"), self._zone)
        return Redaction(redaction_id, ItemKey(layer, key, target), ts, str(rec.get("reason", "")),
                         str(rec.get("source", "")))
