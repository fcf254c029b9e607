"""Everything one user has, in PostgreSQL: :class:`PostgresUser` (the contract's ``UserStore``)."""

from __future__ import annotations

import datetime as _dt
import threading
from itertools import groupby
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from agentmem_nb.identifiers import check_day, check_session_id, check_user_id
from agentmem_nb.items import LayerKind
from agentmem_nb.messages import Message, ToolCall
from agentmem_nb.store.layer import MAX_SEARCH_LIMIT, Appended
from agentmem_nb.store.postgres.conversations import PostgresConversations
from agentmem_nb.store.facts import FactsLayer
from agentmem_nb.store.postgres.dialogue import PostgresDialogueLog
from agentmem_nb.store.postgres.facts import PostgresEventLog, PostgresFactQueue
from agentmem_nb.store.postgres.layer import DAYS_SEARCH, UNFOLDED, PostgresLayer, like_pattern, problem_for_row
from agentmem_nb.store.postgres.records import fold
from agentmem_nb.store.postgres.longterm import PostgresLongTerm
from agentmem_nb.store.postgres.redactions import PostgresRedactions
from agentmem_nb.store.redactions import RedactedReads
from agentmem_nb.store.problems import Problem
from agentmem_nb.timeutil import day_of

# The rows of a user's days that wait to be folded (another program's writes; see layer.UNFOLDED), as a FROM clause.
_WAITING_IN_DAYS = ("FROM am_messages m JOIN am_layers l USING (layer_id) WHERE l.user_id = %(user)s "
                    f"AND l.kind = 'daily' AND {UNFOLDED}")

if TYPE_CHECKING:
    from agentmem_nb.store.postgres.store import PostgresStore

__all__ = ["PostgresUser"]


class PostgresUser(RedactedReads[PostgresRedactions]):
    """The layered memory of one user in PostgreSQL: sessions, days, long-term memory, conversations, the log, and
    structured memory — facts (the file backend's :class:`~agentmem_nb.store.facts.FactsLayer` over a table), the
    standing instructions and the facts queue.

    Nothing is written until something is appended. ``with user.transaction():`` makes the writes inside it (a chat
    turn's: the reply, its log line, the conversation's update) one transaction: all of them or none.

    >>> # user = MemoryStore("postgresql://app@db/agentmem").user("alice")
    >>> # with user.transaction():
    >>> #     user.append("s1", "assistant", "hello"); user.conversations.touch("s1")
    """

    def __init__(self, store: PostgresStore, user_id: str) -> None:
        self.store = store
        self.user_id = check_user_id(user_id)
        self._layers: dict[tuple[str, str], PostgresLayer] = {}
        self._layers_lock = threading.Lock()
        self.long_term = PostgresLongTerm(self)
        self.conversations = PostgresConversations(self)
        self.log = PostgresDialogueLog(self)
        self.facts = FactsLayer(PostgresEventLog(self), clock=store.clock, zone=store.zone, policy=store.fact_policy)
        """Structured facts: the same rules and view as the files', events kept in ``am_fact_events``."""
        self.instructions = PostgresLongTerm(self, table="am_instructions")
        """Procedural memory: the agent's standing instructions, versioned like long-term memory."""
        self.fact_queue = PostgresFactQueue(self)
        """The durable queue of messages waiting for fact extraction (see :mod:`agentmem_nb.agent.facts_queue`)."""
        self.redactions = PostgresRedactions(self)
        """Redaction events (see :mod:`agentmem_nb.store.redactions`): messages hidden without changing them."""

    def __repr__(self) -> str:
        return f"PostgresUser(user_id={self.user_id!r}, database={self.store.db.display!r})"

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Every write of this thread inside the block is one transaction: committed when the block ends, rolled
        back (nothing of it kept) if it raises or the connection is lost — then a
        :class:`~agentmem_nb.errors.StoreError` says so."""
        with self.store.db.transaction(f"a transaction of {self.user_id!r}"):
            yield

    # ------------------------------------------------------------------ layers

    def _layer(self, kind: LayerKind, key: str) -> PostgresLayer:
        with self._layers_lock:
            layer = self._layers.get((kind, key))
            if layer is None:
                layer = self._layers[(kind, key)] = PostgresLayer(self, kind, key)
            return layer

    def session(self, session_id: str) -> PostgresLayer:
        """The thread ``session_id``."""
        return self._layer("session", check_session_id(session_id))

    def daily(self, day: str | _dt.date) -> PostgresLayer:
        """The day ``day`` (``YYYY-MM-DD``)."""
        return self._layer("daily", check_day(day))

    def _keys(self, kind: str) -> list[str]:
        rows = self.store.db.fetch("SELECT key FROM am_layers WHERE user_id = %s AND kind = %s",
                                   (self.user_id, kind))
        return sorted(str(key) for (key,) in rows)  # Python's order (code points), whatever the server's collation

    def session_ids(self) -> list[str]:
        """Ids of the threads that have messages."""
        return self._keys("session")

    def days(self) -> list[str]:
        """Days that have messages, oldest first."""
        return self._keys("daily")

    def day_for(self, moment: _dt.datetime) -> str:
        """The day a message at ``moment`` goes to (the user's zone decides)."""
        return day_of(moment, self.store.zone)

    # ------------------------------------------------------------------ writes

    def append(self, session_id: str, role: str, content: str, *, tags: Iterable[str] = (),
               meta: Mapping[str, Any] | None = None, tool_calls: Sequence[ToolCall] = (),
               ts: _dt.datetime | None = None, day: str | None = None) -> Appended:
        """Write one message to its session and its day (as ``self.session(session_id).append(...)``)."""
        return self.session(session_id).append(role, content, tags=tags, meta=meta, tool_calls=tool_calls, ts=ts,
                                               day=day)

    def check_turn_files(self, session_id: str, day: str) -> None:
        """Nothing to check beyond the ids (no file is opened here); kept so a turn runs on either backend."""
        check_session_id(session_id)
        check_day(day)

    # ------------------------------------------------------------------ reads across layers

    def search_daily(self, keyword: str, *, day: str | None = None, limit: int = 20) -> list[Message]:
        """Keyword search in one day, or across every day (newest days first; the last ``limit`` hits in order).
        Redacted messages are never hits."""
        if day is not None:
            return self._search(self.daily(day), keyword, limit)
        wanted = max(0, min(int(limit), MAX_SEARCH_LIMIT))
        hidden = {(item.key, item.message_id) for item in self.redactions.active() if item.layer == "daily"}
        if not hidden:
            return self._search_days(keyword, wanted)
        found = [m for m in self._search_days(keyword, wanted + len(hidden)) if (m.day, m.message_id) not in hidden]
        return found[-wanted:] if wanted else []

    def _search_days(self, keyword: str, limit: int) -> list[Message]:
        limit = max(0, int(limit))
        needle = fold(keyword.strip())
        if not limit:
            return []
        # One statement over every day (newest day, newest message first), not one round trip per day: the same
        # answer as the file backend's day-by-day walk; in each day at most `limit` rows from each of the day
        # search's two bounded branches (the copies appends wrote, the days' own rows; see DAYS_SEARCH).
        if needle:
            # One round trip when no day holds rows written or changed by another program (the usual case): the
            # hits carry that flag, as a layer's search does. Only a keyword reads folded text, so only it folds.
            params = {"user": self.user_id, "pattern": like_pattern(needle), "limit": limit}
            flagged = (f"SELECT found.*, (SELECT count(*) {_WAITING_IN_DAYS}) > 0 AS pending "
                       f"FROM ({DAYS_SEARCH}) AS found")
            rows = self.store.db.fetch(flagged, params, prepare=False)
            if (rows[0][-1] if rows else True) and self._fold_waiting_days():
                rows = self.store.db.fetch(flagged, params, prepare=False)
            # a subquery's order is not promised to its outer query: newest day, newest message first, as asked
            rows = sorted((row[:-1] for row in rows), key=lambda row: (str(row[0]), row[1]), reverse=True)
        else:
            rows = self.store.db.fetch(
                "SELECT l.key, m.position, m.message_id, m.record, m.raw FROM am_messages m JOIN am_layers l "
                "USING (layer_id) WHERE l.user_id = %(user)s AND l.kind = 'daily' AND m.readable "
                'ORDER BY l.key COLLATE "C" DESC, m.position DESC LIMIT %(limit)s',
                {"user": self.user_id, "limit": limit}, prepare=False)
        found: list[Message] = []
        rows.reverse()
        for each_day, group in groupby(rows, key=lambda row: str(row[0])):
            found += self.daily(each_day)._messages([row[1:] for row in group])
        return found

    def _fold_waiting_days(self) -> bool:
        """Fold the rows another program wrote or changed in any day (``folded`` NULL); whether there were any."""
        days = self.store.db.fetch(f"SELECT DISTINCT l.key {_WAITING_IN_DAYS}", {"user": self.user_id})
        for (each_day,) in days:
            self.daily(str(each_day))._fold_pending()
        return bool(days)

    def problems(self) -> list[Problem]:
        """Every unreadable row of this user (one query over all layers), and the log's."""
        rows = self.store.db.fetch(
            "SELECT l.kind, l.key, m.position, m.message_id, m.record, m.raw FROM am_messages m "
            "JOIN am_layers l USING (layer_id) WHERE l.user_id = %s AND NOT m.readable ORDER BY l.kind, l.key, "
            "m.position", (self.user_id,))
        found = [problem_for_row(self._layer(kind, key).where, position, mid, record, raw)
                 for kind, key, position, mid, record, raw in rows]
        return (found + self.log.problems() + self.long_term.problems() + self.conversations.problems()
                + self.facts.problems() + self.instructions.problems() + self.redactions.problems())
