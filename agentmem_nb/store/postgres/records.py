"""How a record (a message, a history change, a log entry: a JSON object) is kept in a row: ``record jsonb``, or
``raw text`` when jsonb cannot hold it.

jsonb refuses ``\\u0000`` and a str with a lone surrogate has no UTF-8 form to send, but the file backend keeps both
(a JSON escape) and a round trip must too. Such a record is stored as ASCII JSON text in ``raw`` (exact: it reads back
as the same str) with ``{}`` in ``record``; every read takes ``raw`` when it is there. The one rule, for every table.
"""

from __future__ import annotations

import json
from typing import Any

from agentmem_nb.store.layer import _folded

__all__ = ["to_columns", "from_columns", "fold"]


def to_columns(record: dict[str, Any]) -> tuple[str, str | None]:
    """``(jsonb text, raw)`` for ``record``: ``raw`` is ``None`` unless jsonb cannot hold the record."""
    text = json.dumps(record, ensure_ascii=False)
    if "\\u0000" in text:
        return "{}", json.dumps(record)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 form to send to the server
        return "{}", json.dumps(record)
    return text, None


def from_columns(record: object, raw: str | None) -> object:
    """The stored record back (``raw`` wins; a record another program wrote may be any JSON value)."""
    return json.loads(raw) if raw is not None else record


def fold(text: str) -> str:
    """The searchable form of a text, as the file backend's search folds it (``store.layer._folded``, the one rule:
    casefold, NUL as U+FFFF), as text the server takes (a lone surrogate becomes U+FFFD on both sides)."""
    return _folded(text).decode("utf-8", errors="replace")
