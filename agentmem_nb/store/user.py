"""Everything one user has: :class:`UserMemory`, the object behind ``MemoryStore(root).user("alice")``.

The user folder and everything in it is opened relative to the store's root without following links (the rule
lives in :mod:`agentmem_nb.store._fs`): a folder from someone else never makes the store read or write outside it.
"""

from __future__ import annotations

import datetime as _dt
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentmem_nb.errors import StoreError, UnsafeFileError
from agentmem_nb.identifiers import check_day, check_session_id, check_user_id
from agentmem_nb.items import LayerKind
from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.store._fs import check_file, list_folder
from agentmem_nb.store.conversations import Conversations
from agentmem_nb.store.dialogue_log import DialogueLog
from agentmem_nb.store.facts import FactsLayer
from agentmem_nb.store.folder_check import check_user_folder
from agentmem_nb.store.jsonl import JsonlFile
from agentmem_nb.store.layer import MAX_SEARCH_LIMIT, Appended, MessageFile
from agentmem_nb.store.longterm import LongTermMemory
from agentmem_nb.store.problems import Problem, ProblemKind, problem_for_error
from agentmem_nb.store.redactions import FileRedactions, RedactedReads
from agentmem_nb.timeutil import day_of

if TYPE_CHECKING:
    from agentmem_nb.store.memory_store import MemoryStore

__all__ = ["UserMemory", "Appended"]


class UserMemory(RedactedReads[FileRedactions]):
    """The layered memory of one user under ``{root}/{user_id}/``.

    Nothing is created on disk until something is written. Layer objects are cached, so their indexes are reused.

    >>> # mem = MemoryStore("memory").user("alice")
    >>> # mem.append("s1", "user", "I moved to Lyon"); mem.search_session("s1", "lyon")
    """

    def __init__(self, store: MemoryStore, user_id: str) -> None:
        self.store = store
        self.user_id = check_user_id(user_id)
        self.directory: Path = store.root / self.user_id
        self._layers: dict[tuple[str, str], MessageFile] = {}
        self._layers_lock = threading.Lock()
        fsync = store.durability == "fsync"
        self.long_term = LongTermMemory(self.directory, clock=store.clock, zone=store.zone, durability=store.durability)
        self.instructions = LongTermMemory(self.directory, clock=store.clock, zone=store.zone,
                                           durability=store.durability, name="instructions.md")
        """Procedural memory: the agent's standing instructions for this user, versioned like ``memory.md``
        (history, restore) and composed into the system prompt."""
        self.conversations = Conversations(self.directory, clock=store.clock, zone=store.zone, fsync=fsync,
                                           rebuild_source=self._session_summaries)
        self.log = DialogueLog(self.directory / "logs" / "llm_dialogue.jsonl", zone=store.zone,
                               durability=store.durability, base=store.root)
        self.redactions = FileRedactions(self.directory / "redactions.jsonl", clock=store.clock, zone=store.zone,
                                     durability=store.durability, base=store.root)
        """Redaction events (see :mod:`agentmem_nb.store.redactions`): messages hidden without rewriting them."""
        self.facts = FactsLayer.in_folder(self.directory, clock=store.clock, zone=store.zone,
                                          durability=store.durability, base=store.root, policy=store.fact_policy)
        self.fact_queue = JsonlFile(self.directory / "facts.queue.jsonl", durability=store.durability,
                                    base=store.root)
        """The durable queue of messages waiting for fact extraction (see :mod:`agentmem_nb.agent.facts_queue`)."""

    def __repr__(self) -> str:
        return f"UserMemory(user_id={self.user_id!r}, directory={str(self.directory)!r})"

    # ------------------------------------------------------------------ layers

    def _layer(self, kind: LayerKind, key: str) -> MessageFile:
        with self._layers_lock:
            layer = self._layers.get((kind, key))
            if layer is None:
                folder = "sessions" if kind == "session" else "daily"
                layer = MessageFile(self.directory / folder / f"{key}.jsonl", kind=kind,
                                    key=key, zone=self.store.zone, durability=self.store.durability,
                                    base=self.store.root, clock=self.store.clock,
                                    day_layer=self.daily if kind == "session" else None)
                self._layers[(kind, key)] = layer
            return layer

    def session(self, session_id: str) -> MessageFile:
        """The thread ``sessions/{session_id}.jsonl``."""
        return self._layer("session", check_session_id(session_id))

    def daily(self, day: str | _dt.date) -> MessageFile:
        """The day file ``daily/{day}.jsonl``."""
        return self._layer("daily", check_day(day))

    def session_ids(self) -> list[str]:
        """Ids of the threads on disk (files whose names are not valid ids are ignored). Raises
        :class:`~agentmem_nb.errors.UnsafeFileError` when ``sessions/`` (or the user folder) is a link."""
        return sorted(self._stems("sessions", check_session_id))

    def days(self) -> list[str]:
        """Days that have a day file, oldest first (raises like :meth:`session_ids`)."""
        return sorted(self._stems("daily", check_day))

    def _stems(self, folder: str, check: Any) -> list[str]:
        out = []
        for name in list_folder(self.directory / folder, base=self.store.root):
            if not name.endswith(".jsonl"):
                continue
            try:
                out.append(check(name[: -len(".jsonl")]))
            except ValueError:
                continue
        return out

    # ------------------------------------------------------------------ writes

    def day_for(self, moment: _dt.datetime) -> str:
        """The day file a message at ``moment`` goes to (the user's zone decides)."""
        return day_of(moment, self.store.zone)

    def append(
        self,
        session_id: str,
        role: str,
        content: str,
        *,
        tags: Iterable[str] = (),
        meta: Mapping[str, Any] | None = None,
        tool_calls: Sequence[ToolCall] = (),
        ts: _dt.datetime | None = None,
        day: str | None = None,
    ) -> Appended:
        """Write one message to its session and to its day file (as ``self.session(session_id).append(...)``).

        ``day`` lets a caller pin the day file (a turn that crosses midnight stays in one day); by default it is the
        day of ``ts`` in the user's zone.
        """
        return self.session(session_id).append(role, content, tags=tags, meta=meta, tool_calls=tool_calls, ts=ts,
                                               day=day)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group writes that belong together (a chat turn's), as the store contract has it. Files have no
        transactions: each write here stands alone, as atomic as ever (a line, a replaced file); a database
        backend commits the group at once or none of it."""
        yield

    def check_turn_files(self, session_id: str, day: str) -> None:
        """Raise :class:`~agentmem_nb.errors.UnsafeFileError` if any file a chat turn writes (the session and day
        files, the dialogue log, ``conversations.json``) would be refused: called before a turn's first write, so a
        turn that could not finish its writes (its log line above all) writes none of them."""
        for path in (self.session(session_id).path, self.daily(day).path, self.log.file.path,
                     self.conversations.path):
            check_file(path, base=self.store.root)

    # ------------------------------------------------------------------ reads across layers

    def search_daily(self, keyword: str, *, day: str | None = None, limit: int = 20) -> list[Message]:
        """Keyword search in one day, or across every day when ``day`` is None (newest days are searched first,
        results are the last ``limit`` hits in chronological order, each carrying its ``day`` and ``session_id``).
        Redacted messages are never hits.

        Exact only (:meth:`MessageFile.search` per day file). :func:`agentmem_nb.retrieval.search` is the search
        every caller runs: it uses this for its exact mode over day files and decides when a query is ranked."""
        if day is not None:  # "" or 0 must fail validation, not silently mean "every day"
            return self._search(self.daily(day), keyword, limit)
        limit = max(0, min(int(limit), MAX_SEARCH_LIMIT))
        found: list[Message] = []
        for each_day in reversed(self.days()):
            if len(found) >= limit:
                break
            found = self._search(self.daily(each_day), keyword, limit - len(found)) + found
        return found

    def problems(self) -> list[Problem]:
        """Everything wrong in this user's files, after reading each of them (a full check). Never raises and
        never blocks: a file that cannot be read (a link, a FIFO, a folder where a file belongs, no permission) is
        itself a finding, and so is whatever an interrupted write left behind (quarantine and temporary files)."""
        found: list[Problem] = []
        found += _gathered(self.directory / "sessions",
                           lambda: [p for sid in self.session_ids() for p in self.session(sid).problems()])
        found += _gathered(self.directory / "daily",
                           lambda: [p for day in self.days() for p in self.daily(day).problems()])
        found += _gathered(self.log.file.path, self.log.problems)
        found += _gathered(self.long_term.path, self.long_term.problems)
        found += _gathered(self.long_term.path, self._check_long_term)
        found += _gathered(self.conversations.path, self.conversations.problems)
        if self.redactions.file.path.exists():
            found += _gathered(self.redactions.file.path, self.redactions.problems)
        found += _gathered(self.directory / "facts.jsonl", self.facts.problems)
        found += _gathered(self.instructions.path, self.instructions.problems)
        found += check_user_folder(self.directory, base=self.store.root)
        seen: set[object] = set()
        unique = []
        for problem in found:
            # One refused entry is met by the walk and by the reader that tried to open it: report it once.
            key = (problem.path, problem.kind) if problem.kind is ProblemKind.UNSAFE_FILE else problem
            if key not in seen:
                seen.add(key)
                unique.append(problem)
        return unique

    def _check_long_term(self) -> list[Problem]:
        """No finding when the long-term file is one the store would open; else raises (see ``_gathered``)."""
        check_file(self.long_term.path, base=self.store.root)
        return []

    def _session_summaries(self) -> list[tuple[str, _dt.datetime | None, _dt.datetime | None, str]]:
        out: list[tuple[str, _dt.datetime | None, _dt.datetime | None, str]] = []
        for session_id in self.session_ids():
            layer = self.session(session_id)
            try:
                ends = layer.first_and_last()
            except UnsafeFileError:  # listed with no times, not read: problems() reports the file
                ends = None
            if ends is None:
                out.append((session_id, None, None, ""))
                continue
            opening = layer.head(10)  # the title comes from the first user message
            first_user = next((m.content for m in opening if m.role == "user"), ends[0].content)
            out.append((session_id, ends[0].ts, ends[1].ts, first_user))
        return out


def _gathered(path: Path, gather: Any) -> list[Problem]:
    """``gather()``, or the finding that ``path`` could not be read at all."""
    try:
        return list(gather())
    except (StoreError, OSError) as exc:  # a refused or unreadable file or folder: reported, problems() never raises
        return [problem_for_error(path, exc)]
