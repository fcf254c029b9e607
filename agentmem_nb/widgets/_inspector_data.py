"""What the inspector shows, read from the store: layer frames, search hits with their true total, anchor windows.

No widget here: :class:`InspectorData` takes the store, a :class:`~agentmem_nb.retrieval.Retriever` and a
:class:`~agentmem_nb.frames.LayerFollower` and answers questions with value objects (:class:`InspectorHit`,
:class:`InspectorWindow`, :class:`Found`). Tables come from :mod:`agentmem_nb.frames` (a refresh reads only what was
appended), hits from :func:`agentmem_nb.retrieval.search` — the search the agent's tools run — and windows from
``MessageFile.window``, the same anchor + window retrieval the agent uses.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from agentmem_nb import frames
from agentmem_nb.errors import StoreError
from agentmem_nb.identifiers import check_day, check_session_id
from agentmem_nb.items import ItemKey, LayerKind
from agentmem_nb.messages import Message
from agentmem_nb.retrieval import Retriever, Scope
from agentmem_nb.store.redactions import redactions_of  # the one rule for which backends keep redactions
from agentmem_nb.widgets._cells import cell_text, one_line, shorten
from agentmem_nb.widgets._facts_parts import facts_of

if TYPE_CHECKING:
    from agentmem_nb.store import MemoryStore, MessageFile, UserMemory
    from agentmem_nb.store.redactions import Redaction, Redactions

__all__ = ["LAYERS", "MESSAGE_LAYERS", "SHOWN", "InspectorHit", "InspectorWindow", "Found", "InspectorData",
           "view_of", "redaction_note", "NO_REDACTIONS", "row_hit", "row_window"]

NO_REDACTIONS = ("Redaction is not available on this store: it keeps no redaction events. Nothing was hidden or "
                 "written; to hide a message, use a file or PostgreSQL store (both keep them).")
"""Why the redact control is disabled (its tooltip) and what redacting on such a store raises."""


LAYERS: dict[str, str] = {
    "long_term": "Long-term memory",
    "sessions": "Sessions",
    "days": "Days",
    "log": "Dialogue log",
    "tool_calls": "Tool calls",
    "problems": "Problems",
    "conversations": "Conversations",
    "facts": "Facts",
}
"""Layer names (the API's) and their labels (the picker's)."""

MESSAGE_LAYERS = ("sessions", "days")

SHOWN: dict[str, tuple[str, ...]] = {
    "long_term": ("line_no", "section", "text", "added_at", "source"),
    "long_term/history": ("version", "ts", "source", "added", "removed"),
    "sessions": ("ts", "session_id", "message_id", "role", "content", "n_tool_calls"),
    "days": ("ts", "day", "message_id", "session_id", "role", "content", "n_tool_calls"),
    "log": ("entry_id", "ts", "session_id", "user_message", "assistant_reply", "tools", "error"),
    "tool_calls": ("ts", "session_id", "turn", "tool", "input_text", "output", "output_len", "status", "duration_ms"),
    "problems": ("file", "line", "kind", "count", "detail"),
    "conversations": ("session_id", "title", "created_at", "updated_at", "messages"),
    "facts": ("fact_id", "key", "value", "status", "source", "valid_from", "valid_to"),
}
"""Which columns each view's table shows (the full frame keeps all of them)."""

_SEARCHED: dict[str, tuple[str, ...]] = {
    "long_term": ("text", "section"),
    "long_term/history": ("added", "removed", "after", "source"),
    "log": ("user_message", "assistant_reply"),
    "tool_calls": ("tool", "input_text", "output"),
    "problems": ("file", "kind", "detail"),
    "conversations": ("session_id", "title"),
    "facts": ("key", "value", "status", "source"),
}

_HIT_CHARS = 110
_SOURCE = "inspector"


def redaction_note(redaction: Redaction) -> str:
    """What a view shows instead of a redacted message's content (the store's rule: :attr:`Redaction.note`)."""
    return redaction.note


def view_of(layer: str, scope: str | None) -> str:
    """The table a layer and scope show (the long-term history is a table of its own)."""
    return "long_term/history" if layer == "long_term" and scope == "history" else layer


@dataclass(frozen=True, slots=True)
class InspectorHit:
    """One search hit.

    For the message layers (``sessions``, ``days``) ``key`` is the session id or the day and ``anchor`` the
    ``message_id`` in that file; for the other layers ``key`` is ``None`` and ``anchor`` is the row's position in the
    layer's frame. ``explain`` says why a ranked hit was found (empty for a keyword hit). ``session_id`` is the
    conversation a message hit belongs to (what "open in the chat" opens).
    """

    rank: int
    layer: str
    key: str | None
    anchor: int
    ts: _dt.datetime | None
    label: str
    explain: str = ""
    session_id: str | None = None

    @property
    def item(self) -> ItemKey | None:
        """The stored message a hit of a message layer is (``None`` for a row of another layer)."""
        if self.layer not in MESSAGE_LAYERS or self.key is None:
            return None
        return ItemKey("session" if self.layer == "sessions" else "daily", self.key, self.anchor)


@dataclass(frozen=True, slots=True)
class InspectorWindow:
    """The rows around a hit, anchor included; ``anchor_row`` is the anchor's position in ``frame`` (-1 if the
    anchor is gone, and then ``reason`` says why)."""

    hit: InspectorHit
    before: int
    after: int
    frame: pd.DataFrame = field(hash=False, compare=False, repr=False)
    anchor_row: int = -1
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Found:
    """A search's answer: the hits listed, how many rows or messages match in all (``total`` >= ``len(hits)``) and
    how it ran (``"keyword"``: substring, oldest first; ``"ranked"``: best first)."""

    hits: tuple[InspectorHit, ...]
    total: int
    mode: str


class InspectorData:
    """Reads for the inspector: one store, one retriever; the layer frames through the given follower."""

    read_only = ""
    """Why the source cannot be edited from the inspector (empty: it can; see ``_langgraph_source.READ_ONLY``)."""
    default_layer = "sessions"

    def __init__(self, store: MemoryStore, retriever: Retriever) -> None:
        self.store = store
        self.retriever = retriever
        self.layers = LAYERS
        """The layers this source has, and their labels."""

    @property
    def zone(self) -> _dt.tzinfo | None:
        """The zone the store shows times in."""
        return self.store.zone

    @property
    def label(self) -> str:
        """Who the caption names when no user is chosen."""
        return "no user"

    def users(self) -> list[str]:
        """The store's users."""
        return self.store.users()

    def shown(self, view: str) -> tuple[str, ...]:
        """The columns a view's table shows."""
        return SHOWN[view]

    def check_scope(self, layer: str, scope: str) -> str | None:
        """``scope`` validated for ``layer`` (raises ``ValueError`` naming the scopes that apply)."""
        if layer == "sessions":
            return check_session_id(scope)
        if layer == "days":
            return check_day(scope)
        if layer in ("long_term", "facts") and scope == "history":
            return "history"
        if layer == "tool_calls" and scope in ("sessions", "log"):
            return "sessions" if scope == "sessions" else None
        allowed = {"long_term": "'history'", "facts": "'history'", "tool_calls": "'sessions' or 'log'"}.get(layer)
        choices = f"{allowed} or None" if allowed else "None (this layer has no scopes)"
        raise ValueError(f"scope {scope!r} does not apply to the {layer!r} layer: use {choices}")

    def layer_frame(self, mem: UserMemory | None, follower: frames.LayerFollower | None, layer: str,
                    scope: str | None) -> pd.DataFrame:
        """The whole layer, scope applied (an empty frame without a user)."""
        if mem is None or follower is None:
            return pd.DataFrame()
        if layer == "sessions":
            return follower.session(scope) if scope else follower.sessions()
        if layer == "days":
            return follower.daily(scope) if scope else follower.days()
        if layer == "log":
            return follower.log()
        if layer == "tool_calls":
            return follower.tool_calls(source="sessions" if scope == "sessions" else "log")
        if layer == "long_term":
            return frames.long_term_history(mem) if scope == "history" else frames.long_term(mem)
        if layer == "problems":
            return frames.problems(mem)
        if layer == "facts":
            # the current facts (active and held for review), or every fact ever (scope "history"); a store that
            # keeps no facts gives the same columns, no rows (the Facts panel says why)
            if facts_of(mem) is None:
                return pd.DataFrame(columns=list(frames.FACT_COLUMNS))
            return frames.facts(mem, current=scope != "history")
        return frames.conversations(mem)

    def scope_options(self, mem: UserMemory | None, layer: str, scope: str | None) -> list[tuple[str, str]]:
        """The scope picker's choices for ``layer`` (``scope`` kept even if its file is gone). "Everything" is
        ``""``, not ``None``: a Dropdown shows the value ``None`` as a blank."""
        if mem is None:
            return []
        if layer == "sessions":
            ids = mem.session_ids()
            if scope and scope not in ids:
                ids.append(scope)
            return [("all sessions", ""), *((s, s) for s in ids)]
        if layer == "days":
            days = mem.days()
            if scope and scope not in days:
                days.append(scope)
            return [("all days", ""), *((d, d) for d in days)]
        if layer == "long_term":
            return [("lines", ""), ("history of changes", "history")]
        if layer == "tool_calls":
            return [("from the dialogue log", ""), ("from the threads", "sessions")]
        if layer == "facts":
            return [("current facts", ""), ("every fact ever (history)", "history")]
        return []

    # ------------------------------------------------------------------ redactions

    def redacted(self, mem: UserMemory | None, frame: pd.DataFrame, layer: str) -> pd.DataFrame:
        """``frame`` as shown: the content of each redacted message replaced by the redaction's reason (a copy;
        the frame itself, like the file, keeps the text)."""
        events = redactions_of(mem)
        if events is None or layer not in MESSAGE_LAYERS or "content" not in frame.columns or not len(frame):
            return frame
        active = events.active()
        if not active:
            return frame
        kind: LayerKind = "session" if layer == "sessions" else "daily"
        column = "session_id" if layer == "sessions" else "day"
        notes = [active.get(ItemKey(kind, str(key), int(mid))) for key, mid in zip(frame[column], frame["message_id"])]
        if not any(notes):
            return frame
        shown = frame.copy()
        shown["content"] = [redaction_note(n) if n is not None else text for n, text in zip(notes, frame["content"])]
        return shown

    def redact(self, mem: UserMemory, follower: frames.LayerFollower, session_id: str, message_id: int,
               reason: str) -> int:
        """Record redaction events for a message of a conversation and for its copy in its day file (found by its
        timestamp); returns how many events were recorded. Nothing is rewritten. A store without redactions
        raises :class:`~agentmem_nb.errors.StoreError` with :data:`NO_REDACTIONS`, writing nothing."""
        events = redactions_of(mem)
        if events is None:
            raise StoreError(NO_REDACTIONS)
        thread = follower.session(session_id)
        row = thread[thread["message_id"] == message_id]
        if not len(row):
            raise ValueError(f"conversation {session_id!r} has no message {message_id}: nothing was redacted")
        events.add(ItemKey("session", session_id, int(message_id)), reason=reason, source=_SOURCE)
        day = str(row["day"].iloc[0]) if "day" in row.columns and not pd.isna(row["day"].iloc[0]) else None
        if day is None:
            return 1
        daily = follower.daily(day)
        copy = daily[(daily["ts"] == row["ts"].iloc[0]) & (daily["session_id"] == session_id)]
        if not len(copy):
            return 1
        events.add(ItemKey("daily", day, int(copy["message_id"].iloc[0])), reason=reason, source=_SOURCE)
        return 2

    # ------------------------------------------------------------------ search

    def find(self, mem: UserMemory | None, frame: pd.DataFrame, layer: str, scope: str | None, text: str, *,
             limit: int) -> Found:
        """Search the layer for ``text``: the hits listed (at most ``limit``) and the true number of matches
        (nothing without a user)."""
        if mem is None:
            return Found((), 0, "")
        if layer in MESSAGE_LAYERS:
            return self._find_messages(mem, frame, layer, scope, text.strip(), limit)
        view = view_of(layer, scope)
        mask = pd.Series(False, index=frame.index)
        for column in _SEARCHED[view]:
            mask |= frames.contains_casefold(frame[column], text)
        matches = np.flatnonzero(mask.to_numpy())
        positions = matches[-limit:]
        hits = tuple(self.row_hit(frame, view, layer, rank, int(pos))
                     for rank, pos in enumerate(positions.tolist(), start=1))
        return Found(hits, int(len(matches)), "keyword")

    def _find_messages(self, mem: UserMemory, frame: pd.DataFrame, layer: str, scope: str | None, text: str,
                       limit: int) -> Found:
        kind: LayerKind = "session" if layer == "sessions" else "daily"
        if scope:
            where = Scope.session(scope) if kind == "session" else Scope.day(scope)
        else:
            where = Scope.everything(layer=kind)
        # Ranked hits come without neighbours (before=after=0): the hit list names anchors, the window shows context.
        result = self.retriever.search(mem, text, scope=where, budget=limit, before=0, after=0)
        events = redactions_of(mem)
        active = events.active() if events is not None else {}
        hits = tuple(self._message_hit(layer, h.rank, h.message, h.key, h.explain() if h.mode == "ranked" else "",
                                       active.get(h.item))
                     for h in result.hits)
        if result.mode == "exact":
            # the store's exact search is a casefolded substring of the content: the frame of the same scope holds
            # every message it looked through, so counting there is the same rule over the same rows
            total = int(frames.contains_casefold(frame["content"], text).sum()) if len(frame) else len(hits)
            return Found(hits, max(total, len(hits)), "keyword")
        total = self.retriever.count_matches(mem, text, scope=where)
        return Found(hits, max(total, len(hits)), "ranked")

    def _message_hit(self, layer: str, rank: int, message: Message, key: str, why: str,
                     redaction: Redaction | None) -> InspectorHit:
        where = key if layer == "sessions" else f"{key} {message.session_id or ''}".strip()
        text = redaction_note(redaction) if redaction is not None else one_line(message.content)
        label = f"#{message.message_id} [{message.ts.strftime('%Y-%m-%d %H:%M')}] {where} {message.role}: {text}"
        session = key if layer == "sessions" else message.session_id
        return InspectorHit(rank, layer, key, message.message_id, message.ts, shorten(label, _HIT_CHARS), why,
                            session or None)

    def row_hit(self, frame: pd.DataFrame, view: str, layer: str, rank: int, position: int) -> InspectorHit:
        """The hit naming row ``position`` of a non-message layer."""
        return row_hit(frame, SHOWN[view], layer, rank, position)

    def session_message_id(self, follower: frames.LayerFollower | None, hit: InspectorHit) -> int | None:
        """The id, in its conversation, of the message a hit names: a day file numbers its copy of a message on its
        own, so a days hit is found in its session by its timestamp (written once, to the microsecond, for both
        copies)."""
        if hit.layer == "sessions":
            return hit.anchor
        if hit.session_id is None or hit.ts is None or follower is None:
            return None
        thread = follower.session(hit.session_id)
        if not len(thread):
            return None
        same = thread["message_id"][thread["ts"] == pd.Timestamp(hit.ts)]
        return int(same.iloc[0]) if len(same) else None

    # ------------------------------------------------------------------ windows

    def window_for(self, mem: UserMemory | None, frame: pd.DataFrame, hit: InspectorHit, before: int,
                   after: int) -> InspectorWindow:
        """The rows around ``hit``: messages from its file, or the neighbouring rows of the layer's frame."""
        if hit.layer in MESSAGE_LAYERS and hit.key and mem is not None:
            file: MessageFile = mem.session(hit.key) if hit.layer == "sessions" else mem.daily(hit.key)
            found = file.window(hit.anchor, before, after)
            window = frames.messages_frame(found.messages, user_id=mem.user_id, zone=self.store.zone)
            ids = [m.message_id for m in found.messages]
            return InspectorWindow(hit, before, after, window, ids.index(hit.anchor) if hit.anchor in ids else -1,
                                   found.reason)
        return row_window(frame, hit, before, after)


# The two rules for a row of a non-message layer, shared by every source's reads (ours above, a LangGraph
# checkpointer's and store's in _langgraph_source).

def row_hit(frame: pd.DataFrame, shown: tuple[str, ...], layer: str, rank: int, position: int) -> InspectorHit:
    """The hit naming row ``position`` of ``frame``, labelled with its ``shown`` columns."""
    row = frame.iloc[position]
    columns = [c for c in shown if c in row.index]
    label = " · ".join(one_line(cell_text(row[c])) for c in columns if cell_text(row[c]))
    stamp = next((row[c] for c in ("ts", "added_at", "updated_at") if c in row.index and not pd.isna(row[c])),
                 None)
    session = row["session_id"] if "session_id" in row.index and not pd.isna(row["session_id"]) else None
    return InspectorHit(rank, layer, None, position, stamp.to_pydatetime() if stamp is not None else None,
                        shorten(f"row {position}: {label}", _HIT_CHARS), session_id=session)


def row_window(frame: pd.DataFrame, hit: InspectorHit, before: int, after: int) -> InspectorWindow:
    """The rows of ``frame`` around a row hit (its anchor is the row's position), clamped at both ends."""
    if hit.anchor >= len(frame):
        return InspectorWindow(hit, before, after, frame.iloc[0:0], -1,
                               f"row {hit.anchor} is no longer in this layer ({len(frame)} rows): search again")
    start = max(0, hit.anchor - before)
    window = frame.iloc[start : hit.anchor + after + 1].reset_index(drop=True)
    return InspectorWindow(hit, before, after, window, hit.anchor - start)
