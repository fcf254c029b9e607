"""Import LoCoMo conversations into a memory store (for the retrieval evaluation).

LoCoMo ("Evaluating Very Long-Term Conversational Memory of LLM Agents", Maharana et al., ACL 2024) gives, per
conversation: ``speaker_a``, ``speaker_b``, ``session_N`` (a list of turns ``{speaker, dia_id, text, ...}``),
``session_N_date_time`` ("1:56 pm on 8 May, 2023") and ``qa`` (``{question, answer, evidence: [dia_id], category}``).

How a conversation lands in the store (one conversation → one user):

* each non-empty ``session_N`` → session ``session_N``, written through :meth:`UserMemory.append`, so the session
  file *and* the day file of the session's date are filled exactly as the agent would fill them;
* the session's date is the first turn's timestamp; later turns follow :data:`TURN_GAP` apart (people type), and the
  whole session is pinned to the day it started (as a chat turn does: a turn crossing midnight stays in one day file);
* **role = the speaker's name** ("Caroline"), also kept as ``meta["speaker"]``. Neither person is the agent's
  assistant: writing ``assistant`` would make a model believe it said those lines, while the name is what a question
  ("What did Caroline …") asks about and what a tool line (``#3 [...] Caroline: …``) should show;
* ``meta["dia_id"]`` keeps the turn id the questions' evidence points to; a shared image is kept as its BLIP
  caption appended to the text (``[shared an image: a photo of …]``, the convention of the LoCoMo paper's baselines)
  with ``meta["img_url"]``. The dataset's ``query`` field (the search string its authors used to *find* the image)
  is not conversation content and is not imported.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.identifiers import check_user_id
from agentmem_nb.store import MemoryStore

__all__ = [
    "TURN_GAP",
    "LocomoTurn",
    "LocomoSession",
    "LocomoQuestion",
    "LocomoConversation",
    "ImportReport",
    "parse_locomo_datetime",
    "load_conversation",
    "load_conversations",
    "import_conversation",
    "import_files",
]

TURN_GAP = _dt.timedelta(seconds=30)
"""Time between two consecutive turns of a session (LoCoMo gives one time per session)."""

_SESSION_KEY = re.compile(r"session_(\d+)")
_WHEN = re.compile(r"\s*(\d{1,2}):(\d{2})\s*([ap]\.?m\.?)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*", re.I)
_MONTHS = {name: i for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
     "december"], start=1)}


def parse_locomo_datetime(text: str) -> _dt.datetime:
    """Parse LoCoMo's session time, e.g. ``"1:56 pm on 8 May, 2023"`` → ``datetime(2023, 5, 8, 13, 56)`` (naive:
    the store reads it as wall-clock time of its zone).

    >>> parse_locomo_datetime("1:56 pm on 8 May, 2023")
    datetime.datetime(2023, 5, 8, 13, 56)
    """
    match = _WHEN.fullmatch(text) if isinstance(text, str) else None
    month = _MONTHS.get(match.group(5).casefold()) if match else None
    if match is None or month is None:
        raise InvalidArgument(f"unreadable LoCoMo session time {text!r}: expected the form '1:56 pm on 8 May, 2023'")
    hour, minute = int(match.group(1)), int(match.group(2))
    if not (1 <= hour <= 12 and minute < 60):
        raise InvalidArgument(f"unreadable LoCoMo session time {text!r}: hour must be 1-12 and minutes 0-59")
    hour = hour % 12 + (12 if match.group(3).lower().startswith("p") else 0)
    return _dt.datetime(int(match.group(6)), month, int(match.group(4)), hour, minute)


@dataclass(frozen=True, slots=True)
class LocomoTurn:
    """One turn: who said it, its LoCoMo id (``"D3:12"``), the text, and the caption of a shared image, if any."""

    speaker: str
    dia_id: str
    text: str
    image_caption: str | None = None
    image_url: str | None = None

    @property
    def content(self) -> str:
        """The message text as stored (image caption appended)."""
        if self.image_caption:
            return f"{self.text} [shared an image: {self.image_caption}]"
        return self.text


@dataclass(frozen=True, slots=True)
class LocomoSession:
    """``session_N`` with its start time."""

    number: int
    started: _dt.datetime
    turns: tuple[LocomoTurn, ...]

    @property
    def session_id(self) -> str:
        """The store's session id: ``session_N``."""
        return f"session_{self.number}"


@dataclass(frozen=True, slots=True)
class LocomoQuestion:
    """One QA item: category 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial."""

    question: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True, slots=True)
class LocomoConversation:
    """One LoCoMo conversation, parsed."""

    name: str
    speakers: tuple[str, str]
    sessions: tuple[LocomoSession, ...]
    questions: tuple[LocomoQuestion, ...]

    @property
    def turn_count(self) -> int:
        """Number of turns over all sessions."""
        return sum(len(s.turns) for s in self.sessions)


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What :func:`import_conversation` wrote."""

    user_id: str
    sessions: int
    messages: int
    seconds: float


def _turn(raw: Mapping[str, Any], where: str) -> LocomoTurn:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("text"), str) or not isinstance(raw.get("dia_id"), str):
        raise InvalidArgument(f"{where}: a turn needs string 'text' and 'dia_id', got {str(raw)[:120]!r}")
    caption = raw.get("blip_caption")
    url = raw.get("img_url")
    if isinstance(url, list):
        url = url[0] if url and isinstance(url[0], str) else None
    return LocomoTurn(
        speaker=str(raw.get("speaker", "")),
        dia_id=raw["dia_id"],
        text=raw["text"],
        image_caption=caption if isinstance(caption, str) and caption.strip() else None,
        image_url=url if isinstance(url, str) else None,
    )


def load_conversations(source: str | os.PathLike[str]) -> list[LocomoConversation]:
    """Every conversation of a LoCoMo file: one object (the split files), or a list (``locomo10.json``).

    A single conversation is named after the file's stem (``conv-26``); conversations of a list after their
    ``sample_id`` (else ``{stem}-{i}``).
    """
    path = Path(source)
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        if len(data) == 1 and isinstance(data[0], Mapping):
            return [load_conversation(data[0], name=path.stem)]
        return [
            load_conversation(item, name=str(item.get("sample_id") or f"{path.stem}-{i}")
                              if isinstance(item, Mapping) else None)
            for i, item in enumerate(data, start=1)
        ]
    return [load_conversation(data, name=path.stem)]


def _evidence(raw: object) -> tuple[str, ...]:
    """Turn ids of a question's evidence. LoCoMo has a few malformed entries ("D8:6; D9:17", "D:11:26"): lists
    are split, the stray colon is dropped, anything else that is not a ``D<session>:<turn>`` id is ignored."""
    out: list[str] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, str):
            continue
        for piece in re.split(r"[;,\s]+", item.strip()):
            piece = re.sub(r"^D:(\d+):", r"D\1:", piece)
            if re.fullmatch(r"D\d+:\d+", piece):
                out.append(piece)
    return tuple(out)


def load_conversation(
    source: str | os.PathLike[str] | Mapping[str, Any], *, name: str | None = None
) -> LocomoConversation:
    """Parse one LoCoMo conversation from a file path or an already-loaded JSON object.

    ``name`` defaults to the file's stem (``conv-26``) or the object's ``sample_id``. Sessions without turns (LoCoMo
    lists dates for some sessions it has no turns for) are left out. A file holding several conversations raises
    ``ValueError``: use :func:`load_conversations`.
    """
    if isinstance(source, Mapping):
        data, default_name = source, str(source.get("sample_id", "locomo"))
    else:
        path = Path(source)
        data, default_name = json.loads(path.read_text(encoding="utf-8")), path.stem
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, Mapping):
        raise InvalidArgument(f"{source!s}: expected one LoCoMo conversation object, got {type(data).__name__} "
                         "(a file with several conversations is read with load_conversations)")
    body = data.get("conversation", data)  # locomo10.json nests turns under "conversation"
    if not isinstance(body, Mapping) or "speaker_a" not in body:
        raise InvalidArgument(f"{name or default_name}: no 'speaker_a' found; is this a LoCoMo conversation file?")
    sessions = []
    for key, turns in body.items():
        match = _SESSION_KEY.fullmatch(key)
        if not match or not isinstance(turns, list) or not turns:
            continue
        when_key = f"{key}_date_time"
        if when_key not in body:
            raise InvalidArgument(f"{name or default_name}: {key} has no {when_key}")
        parsed = tuple(_turn(t, f"{name or default_name} {key}") for t in turns)
        sessions.append(LocomoSession(int(match.group(1)), parse_locomo_datetime(body[when_key]), parsed))
    sessions.sort(key=lambda s: s.number)
    questions = tuple(
        LocomoQuestion(
            question=str(q.get("question", "")),
            answer=str(q.get("answer", q.get("adversarial_answer", ""))),
            evidence=_evidence(q.get("evidence")),
            category=int(q.get("category", 0)),
        )
        for q in data.get("qa", [])
        if isinstance(q, Mapping)
    )
    return LocomoConversation(
        name=name or default_name,
        speakers=(str(body["speaker_a"]), str(body.get("speaker_b", ""))),
        sessions=tuple(sessions),
        questions=questions,
    )


def import_conversation(
    store: MemoryStore,
    conversation: LocomoConversation,
    *,
    user_id: str | None = None,
    turn_gap: _dt.timedelta = TURN_GAP,
) -> ImportReport:
    """Write ``conversation`` as one user (default id: the conversation's name) through the public append API.

    The user must be empty: importing twice would duplicate every turn, so a non-empty user raises ``ValueError``.
    """
    uid = check_user_id(user_id or conversation.name)
    user = store.user(uid)
    if user.session_ids() or user.days():
        raise InvalidArgument(f"user {uid!r} already has messages under {user.directory}; import into a new user id "
                         "or an empty store")
    started = time.perf_counter()
    count = 0
    for session in conversation.sessions:
        day = session.started.date().isoformat()
        for i, turn in enumerate(session.turns):
            meta: dict[str, Any] = {"speaker": turn.speaker, "dia_id": turn.dia_id}
            if turn.image_url:
                meta["img_url"] = turn.image_url
            if turn.image_caption:
                meta["image_caption"] = turn.image_caption
            user.append(session.session_id, turn.speaker or "unknown", turn.content, tags=("locomo",), meta=meta,
                        ts=session.started + i * turn_gap, day=day)
            count += 1
    return ImportReport(uid, len(conversation.sessions), count, time.perf_counter() - started)


def import_files(
    store: MemoryStore, paths: Iterable[str | os.PathLike[str]]
) -> list[tuple[LocomoConversation, ImportReport]]:
    """Load and import several LoCoMo files, one user each (named after the file stem)."""
    out = []
    for path in paths:
        for conversation in load_conversations(path):
            out.append((conversation, import_conversation(store, conversation)))
    return out
