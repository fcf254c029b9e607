"""A message layer in PostgreSQL: one session thread or one day of a user (``am_layers`` + ``am_messages``).

Why it looks like this:

* **Ids without gaps, under any number of writers.** An append is one statement: it upserts the session's and the
  day's ``am_layers`` rows (``INSERT … ON CONFLICT DO UPDATE SET next_id = next_id + 1``), which locks them until
  commit, and inserts both messages with the ids and positions it got. A second writer of the same thread or day waits
  for that commit, then takes the next id: 1, 2, 3… per layer, no gap (a rolled-back append gives its id back with its
  row lock) and no duplicate, across connections, processes and hosts. Writers of different threads share only the
  day row, so they never deadlock. Inside ``with user.transaction():`` the appends commit with the turn.
* **Positional reads are index range scans.** A message has its 0-based ``position`` in the layer (the primary key
  with the layer), so a window is "the anchor's row, ``before`` rows before it and ``after`` after it" in one
  statement, whatever the layer's length; ``read_records(start, stop)`` is a key range.
* **Exact search is the file backend's rule, served by a trigram index.** ``folded`` holds the content folded by
  the same function as the files' search (:func:`~agentmem_nb.store.postgres.records.fold`); a keyword is folded
  the same way and matched with ``LIKE '%…%'`` (its ``%``, ``_`` and ``\\`` escaped, so it is literal), newest first,
  ``LIMIT limit``: the GIN index (layer, folded trigrams) finds the candidates, so a rare keyword in a long layer
  does not read the layer. The layer's last :data:`RECENT_ROWS` rows are walked first, then the older ones (planned
  freely in a short layer; in a long one, more walked, then the rest through the index), each only while fewer than
  ``limit`` hits are found, so that a keyword common long ago but absent lately is not walked to through the whole
  layer (see :data:`RECENT_ROWS`); a phrase whose other words are in most rows asks the index for its rare word
  only (see :data:`SAMPLE_ROWS`).
* **An append indexes its text once.** Its day copy keeps the whole record (every read of a day reads the day's
  rows) but no folded text: the session row names it (``copy_layer``, ``copy_position``) and the index leads with that
  too, so a day search finds the copies through their session rows' postings (:data:`DAYS_SEARCH`), beside the
  day's own rows (migrated lines, copies cut loose by an edit behind the store; schema version 6 has the triggers).
  Until version 5 an append indexed the same ~90 trigrams twice (benchmarks/POSTGRES.md, run I).
* **scan** compares a cursor holding ``(layer_id, generation)`` and the readable count: rows written by the store
  are appends; a row changed or removed behind it (see the triggers in the schema) bumps the generation.
* **Bulk readers count readable messages, as on files.** The file backend's positions (``scan``, ``read_records``,
  ``read_at``, ``position_of``) number the readable records: a broken line takes none. A row's ``position`` here
  counts every row, so the bulk readers translate through the layer's skipped positions (its unreadable rows, from
  their partial index, and the holes a removal left): none, usually, and then the translation is the identity.
  Counting rows instead made a bulk reader that stopped after a broken row (the retrieval index) see each append
  start past where it stopped, and read the whole layer again after every append.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import warnings
from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from agentmem_nb.errors import MemoryDataWarning
from agentmem_nb.identifiers import check_day
from agentmem_nb.items import LayerKind
from agentmem_nb.messages import EPOCH, Message, ToolCall, message_from_record
from agentmem_nb.store.layer import MAX_SEARCH_LIMIT, MAX_WINDOW_SIDE, Appended, Window
from agentmem_nb.store.postgres.connection import literal_limit
from agentmem_nb.store.postgres.records import fold, from_columns, to_columns
from agentmem_nb.store.problems import Problem, ProblemKind
from agentmem_nb.store.scan import Change, Cursor, Scan
from agentmem_nb.timeutil import day_of, format_ts, to_zone

if TYPE_CHECKING:
    from agentmem_nb.store.postgres.user import PostgresUser

__all__ = ["DAYS_SEARCH", "UNFOLDED", "PostgresLayer", "like_pattern", "problem_for_row", "searchable"]

_THIS_LAYER = "FROM am_layers WHERE user_id = %(user)s AND kind = %(kind)s AND key = %(key)s"  # its am_layers row
_LAYER = f"(SELECT layer_id {_THIS_LAYER})"
_ROW = "position, message_id, record, raw"

# One statement: the user, both layer rows (locked until commit: the id rule above) and both messages.
_APPEND = """
WITH u AS (INSERT INTO am_users (user_id) VALUES (%(user)s) ON CONFLICT (user_id) DO NOTHING),
s AS (INSERT INTO am_layers (user_id, kind, key, next_id, rows) VALUES (%(user)s, 'session', %(session)s, 2, 1)
      ON CONFLICT (user_id, kind, key) DO UPDATE SET next_id = am_layers.next_id + 1, rows = am_layers.rows + 1
      RETURNING layer_id, next_id - 1 AS message_id, rows - 1 AS position),
d AS (INSERT INTO am_layers (user_id, kind, key, next_id, rows) VALUES (%(user)s, 'daily', %(day)s, 2, 1)
      ON CONFLICT (user_id, kind, key) DO UPDATE SET next_id = am_layers.next_id + 1, rows = am_layers.rows + 1
      RETURNING layer_id, next_id - 1 AS message_id, rows - 1 AS position),
ms AS (INSERT INTO am_messages (layer_id, position, message_id, record, raw, folded, copy_layer, copy_position)
       SELECT s.layer_id, s.position, s.message_id, %(srecord)s::jsonb, %(sraw)s, %(folded)s, d.layer_id, d.position
       FROM s, d),
md AS (INSERT INTO am_messages (layer_id, position, message_id, record, raw, source_layer, source_position)
       SELECT d.layer_id, d.position, d.message_id, %(drecord)s::jsonb, %(draw)s, s.layer_id, s.position FROM s, d)
SELECT s.message_id, d.message_id FROM s, d
"""


# Searching days (schema version 6). An append's day copy has no folded text of its own: its session row's is
# its text, and that row names the copy (copy_layer, copy_position), so "the copies in day Y whose text matches" is
# `copy_layer = Y AND folded LIKE …` on the session rows, the copy read by primary key. The copy names its session
# row back (source_layer, source_position) and a search takes a copy only while both agree. A day's own rows (lines
# migrated from files, rows of version 5, copies an edit behind the store cut loose) keep their own folded text.
#
# One day: two single-table subqueries, each ordered and cut to `limit` as a session search is, so the planner
# chooses for each keyword between the trigram index (a rare keyword: its few hits, sorted) and a backward walk of a
# btree that stops at `limit` hits (a common one): the copies by am_messages_copies (copy_layer, copy_position), the
# own rows by am_messages_own (an append adds nothing to it, so a day of copies has none to walk). Then the copies
# are read by primary key (the back-link checked), and the last `limit` of both kept. The back-link is checked after
# the limit, not before: a subplan per matching row is charged to every row the walk might read, so the planner
# gave up the walk (55 ms instead of 1.3 for a keyword in 2 % of a 200k day). A link is never half cut by an update
# or a removal (the triggers of schema version 6 cut both sides), so a lost place needs a row inserted by hand.
# The estimate of `folded LIKE` decides between the two plans: version 6 keeps 1000 statistics entries of `folded`
# (at 100, a keyword in 0.1 % of a day was thought ten times commoner, and the walk read half the day: 92 ms).
_COPY = """LATERAL (SELECT m.position, m.message_id, m.record, m.raw FROM am_messages m
                     WHERE m.layer_id = h.copy_layer AND m.position = h.copy_position AND m.source_layer = h.layer_id
                       AND m.source_position = h.position AND m.readable OFFSET 0) AS m"""
_OWN = "m.copy_layer IS NULL AND m.source_layer IS NULL"  # the predicate of am_messages_own


def _copies_in(day: str, part: str = "", limit: str = "%(limit)s") -> str:
    """The session rows whose linked copies in ``day`` (an SQL expression of its layer id) match, newest last copy
    first, at most ``limit`` (SQL: a parameter, or a literal, :func:`literal_limit`): the first branch of a day
    search (its copies are then read by :data:`_COPY`). ``part``: ``""`` every row, else a part of the day
    (:func:`_part`)."""
    match, order = _part("h", "copy_position", part)
    return (f"(SELECT h.layer_id, h.position, h.copy_layer, h.copy_position FROM am_messages h "
            f"WHERE h.copy_layer = {day} AND {match} ORDER BY {order} DESC LIMIT {limit})")


def _own_in(day: str, part: str = "", limit: str = "%(limit)s") -> str:
    """The matching own rows of ``day``, newest first, at most ``limit``: the second branch of a day search."""
    match, order = _part("m", "position", part)
    return (f"(SELECT m.position, m.message_id, m.record, m.raw FROM am_messages m WHERE m.layer_id = {day} "
            f"AND {_OWN} AND {match} AND m.readable ORDER BY {order} DESC LIMIT {limit})")


def _day_search(part: str, limit: int) -> str:
    """A search of one day for at most ``limit`` hits (the parameters of :data:`_LAYER`, ``pattern``, and those of
    :func:`_part`; for the older part the day's id itself, ``%(layer)s``). ``limit`` is a literal: the recent part
    is prepared, and walked whatever the keyword, so its generic plan must be as good as a custom one
    (:func:`literal_limit`)."""
    day = _LAYER if part in ("", RECENT) else "%(layer)s"  # see RECENT_ROWS
    count = literal_limit(limit)
    return f"""
SELECT * FROM (
    SELECT m.* FROM {_copies_in(day, part, count)} AS h, {_COPY}
    UNION ALL
    {_own_in(day, part, count)}
) AS hits
ORDER BY position DESC LIMIT {count}
"""


# Recent rows first, then the older ones. For each keyword the planner chooses between a backward walk of a btree (it
# expects the hits spread evenly through the layer, so that a common keyword is met at once) and the trigram index
# (every hit read, then sorted). A keyword common long ago but absent lately defeats the walk: in a 1M-message thread,
# "message 12" (11,111 hits, the newest 87 % of the thread back) made it read 870,000 rows (409 ms;
# benchmarks/POSTGRES.md, run M). Forcing the index instead defeats the mirror case, a keyword in every row up to
# shortly before the end (all its hits read to keep 20). So a search asks, each part only while it has fewer than
# `limit` hits:
#   1. the layer's last RECENT_ROWS positions, walked (`strpos`, which no index serves: a fraction of a millisecond);
#   2. in a layer whose older rows are at most OLDER_WINDOW, all of them, planned freely: either plan is bounded by
#      that many rows. In a longer layer, the WALK_ROWS positions before the recent ones, walked, then
#   3. the rest through the trigram index — ordered and bounded by `position + 0`, which no btree serves — so that
#      its cost follows the keyword's hits, not the layer's length. (Planning the second part freely there read the
#      trigram postings twice for a rare keyword, once per part: 39 -> 83 ms for a rare phrase of common trigrams.)
# Parts 2 and 3 name their layer by value, not by a subquery: the planner then sees how many rows of the trigram
# index are that layer's, and leaves the layer out of the index scan when they are most of it — a layer key reads
# every posting the layer has (btree_gin matches it as a range: 343 pages, 3.6 ms, for a 1M thread; 0.4 ms without it
# for a keyword in 1,000 rows). Each part's bounds come from the first statement's answer, so an append between the
# statements neither repeats a hit nor skips one.
#
# A keyword of several words, some in most rows ("the cat", "message 99999" where every message says "message"): the
# trigram index reads the postings of every trigram of the pattern, and a word in most rows has postings as long as
# the layer — 45 ms for "message 99999" (11 hits) in a 1M thread, all of it reading postings. So before the third part
# SAMPLE_ROWS rows spread evenly over the positions it searches say how common each word is there. When the rarest
# word (three characters at least: a trigram) is in at most RARE_SHARE of them and every other word in at least
# COMMON_SHARE, the index is asked for that word alone and the whole keyword checked on each candidate (`strpos`):
# its candidates are few (about RARE_SHARE of the rows at most), and the long postings are not read. A word common
# somewhere in the older rows is asked with the rest, as before: the index then skips through the common postings to
# the few places both occur (a topic of the last 6,000 rows of 200k, asked alone, made 194,000 candidates: 105 ms
# against 1.7, the review of this rule; its first form sampled the 256 rows next to the recent ones, which can look
# nothing like the older rows). The answer is the same either way.
RECENT_ROWS = 512
WALK_ROWS = 4096
OLDER_WINDOW = 16_384
SAMPLE_ROWS = 256
COMMON_SHARE = 0.5
RARE_SHARE = 1 / 128  # two rows of the 256
_SINCE = f"(SELECT rows - %(recent)s {_THIS_LAYER})"  # where the recent part begins (at most 0: all of the layer)
RECENT, WALK, FREE, REST = "recent", "walk", "free", "rest"


def _part(alias: str, column: str, part: str) -> tuple[str, str]:
    """The condition that row ``alias`` matches the keyword within ``part`` of the layer searched (``column``: the
    row's position there), and the expression to order by. ``""`` every row; :data:`RECENT` the positions from
    :data:`_SINCE` on, walked; :data:`WALK` those from ``%(first)s`` up to ``%(before)s``, walked; :data:`FREE`
    those before ``%(before)s``, planned freely; :data:`REST` the same through the trigram index."""
    position = f"{alias}.{column}"
    walked = f"strpos({alias}.folded, %(needle)s) > 0"
    if part == RECENT:
        return f"{walked} AND {position} >= {_SINCE}", position
    if part == WALK:
        return f"{walked} AND {position} >= %(first)s AND {position} < %(before)s", position
    match = f"{alias}.folded LIKE %(pattern)s"
    if part == FREE:
        return f"{match} AND {position} < %(before)s", position
    if part == REST:  # `+ 0` in the bound too: ANDed with a btree's range of most of the layer, the trigram
        # candidates cost a read of that range (45 ms for a 1M day), not a filter of the few candidates. The pattern
        # may be one word of the keyword (see SAMPLE_ROWS): the whole keyword is checked too.
        return f"{match} AND {walked} AND {position} + 0 < %(before)s", f"{position} + 0"
    return match, position


# Every day of a user, newest day and newest message first: the same two branches in each day (LATERAL: each its
# own ordered, limited walk or index lookup, as in one day), then the newest `limit` of what the days gave. So each
# day gives at most `limit` rows: a join ordered by (day, position) read and sorted every hit of every day instead
# (300 ms for a word in every message of 100 days of 2,000, against 13). Its price: one plan for every day, so a
# word common in a few days only walks the other days through (64 ms against 22 when 2 of those 100 days hold it).
_USER_DAYS = "(SELECT layer_id, key FROM am_layers WHERE user_id = %(user)s AND kind = 'daily')"
DAYS_SEARCH = f"""
SELECT * FROM (
    SELECT d.key, m.* FROM {_USER_DAYS} AS d, LATERAL {_copies_in("d.layer_id")} AS h, {_COPY}
    UNION ALL
    SELECT d.key, m.* FROM {_USER_DAYS} AS d, LATERAL {_own_in("d.layer_id")} AS m
) AS hits
ORDER BY key COLLATE "C" DESC, position DESC LIMIT %(limit)s
"""
"""The statement of a keyword search over every day of a user (``%(user)s``, ``%(pattern)s``, ``%(limit)s``): rows
``key, position, message_id, record, raw``, the last ``limit`` hits newest first."""


# The rows the next search folds (another program's writes; a linked copy never waits): am_messages_unfolded's predicate.
UNFOLDED = "folded IS NULL AND source_layer IS NULL"
# Whether a layer holds such rows, evaluated once per statement (an uncorrelated subquery) through that index. A
# count, not EXISTS: for EXISTS the planner expects an early match and scanned the table instead (0.85 ms at 3k rows).
_PENDING = f"(SELECT count(*) FROM am_messages WHERE layer_id = {_LAYER} AND {UNFOLDED}) > 0 AS pending"


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def like_pattern(keyword: str) -> str:
    """A LIKE pattern matching ``keyword`` (already folded) literally anywhere in a text."""
    return "%" + keyword.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class PostgresLayer:
    """One session thread or one day of a user, stored in PostgreSQL (the contract's ``MessageLayer``).

    >>> # store = MemoryStore("postgresql://app@db/agentmem")
    >>> # store.user("alice").session("s1").append("user", "I moved to Lyon")
    """

    def __init__(self, user: PostgresUser, kind: LayerKind, key: str) -> None:
        self._user = user
        self._db = user.store.db
        self._kind: LayerKind = kind
        self._key = key
        self.zone = user.store.zone
        self._params = {"user": user.user_id, "kind": kind, "key": key}
        self._warned: set[int] = set()
        self._holes: tuple[tuple[int, int], list[int]] | None = None  # ((layer_id, generation), holes) last seen

    def __repr__(self) -> str:
        return f"PostgresLayer(kind={self._kind!r}, key={self._key!r}, user={self._user.user_id!r})"

    @property
    def kind(self) -> str:
        """``"session"`` or ``"daily"``."""
        return self._kind

    @property
    def key(self) -> str:
        """The session id or the day."""
        return self._key

    @property
    def where(self) -> str:
        """Where this layer lives, for problems and messages (the URL without its credentials)."""
        folder = "sessions" if self._kind == "session" else "daily"
        return f"{self._db.display}#{self._user.user_id}/{folder}/{self._key}"

    # ------------------------------------------------------------------ append

    def append(
        self,
        role: str,
        content: str = "",
        *,
        tags: Iterable[str] = (),
        meta: Mapping[str, Any] | None = None,
        tool_calls: Sequence[ToolCall] = (),
        ts: _dt.datetime | None = None,
        day: str | None = None,
    ) -> Appended:
        """Write one message to this session and its day copy, in one transaction; returns both as stored.

        Same arguments and records as the file backend's :meth:`~agentmem_nb.store.MessageFile.append`: ``ts``
        defaults to the store's clock, ``day`` pins the day (by default the day of ``ts`` in the user's zone).
        """
        if not isinstance(role, str):
            raise TypeError(f"append(role, content): role must be text, got {type(role).__name__} {role!r:.80}; "
                            "pass the role and the text, e.g. session.append('user', 'hello') — the store adds the "
                            "time, the id and the day copy")
        if self._kind != "session":
            raise TypeError(f"{self._kind} {self._key!r}: a day is written through a session (each message gets "
                            "its day copy): use store.user(user_id).session(session_id).append(role, content)")
        store = self._user.store
        moment = to_zone(ts or store.clock(), store.zone)
        day = check_day(day) if day is not None else day_of(moment, store.zone)
        extra = dict(meta or {})
        if tool_calls:
            extra["tool_calls"] = [call.to_dict() for call in tool_calls]
        extra["session_id"] = self._key
        line = {"ts": format_ts(moment), "role": str(role), "content": str(content)}
        tags = list(tags)
        session_record = {**line, "tags": ["session", *tags], "meta": extra}
        daily_record = {**line, "tags": ["daily", *tags], "meta": extra}
        srecord, sraw = to_columns(session_record)
        drecord, draw = to_columns(daily_record)
        params = {"user": self._user.user_id, "session": self._key, "day": day, "srecord": srecord, "sraw": sraw,
                  "drecord": drecord, "draw": draw, "folded": fold(str(content))}
        (row,) = self._db.write(_APPEND, params, doing=f"append to {self._user.user_id!r} session {self._key!r}")
        session_id, daily_id = int(row[0]), int(row[1])
        daily = self._user.daily(day)
        return Appended(session=self._message(session_id, {**session_record, "message_id": session_id}),
                        daily=daily._message(daily_id, {**daily_record, "message_id": daily_id}))

    # ------------------------------------------------------------------ conversion

    def _message(self, message_id: int, record: dict[str, Any], fallback: _dt.datetime = EPOCH) -> Message:
        if self._kind == "session":
            return message_from_record(record, message_id=message_id, zone=self.zone, fallback_ts=fallback,
                                       session_id=self._key)
        return message_from_record(record, message_id=message_id, zone=self.zone, fallback_ts=fallback,
                                   day=self._key)

    def _records(self, rows: list[tuple[Any, ...]]) -> list[tuple[int, dict[str, Any]]]:
        """``(message_id, record)`` of the readable rows, in order; an unreadable one is warned about once."""
        out = []
        bad = []
        for position, message_id, record, raw in rows:
            value = from_columns(record, raw)
            if isinstance(value, dict) and isinstance(message_id, int) and message_id > 0:
                out.append((message_id, value))
            elif position not in self._warned:
                self._warned.add(position)
                bad.append(position + 1)
        if bad:
            warnings.warn(MemoryDataWarning(f"{self.where}: {len(bad)} unreadable row(s) skipped (positions "
                                            f"{bad[:10]}); see problems()"), stacklevel=3)
        return out

    def _messages(self, rows: list[tuple[Any, ...]]) -> list[Message]:
        out: list[Message] = []
        fallback = EPOCH
        for message_id, record in self._records(rows):
            message = self._message(message_id, record, fallback)
            fallback = message.ts
            out.append(message)
        return out

    def _query(self, where: str, extra: Mapping[str, Any] | None = None, *, order: str = "position",
               limit: int | None = None, layer: str = _LAYER) -> tuple[str, dict[str, Any]]:
        sql = f"SELECT {_ROW} FROM am_messages WHERE layer_id = {layer} AND {where} ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {literal_limit(limit)}"
        return sql, {**self._params, **(extra or {})}

    def _fetch(self, where: str, extra: Mapping[str, Any] | None = None, *, order: str = "position",
               limit: int | None = None, prepare: bool | None = None) -> list[tuple[Any, ...]]:
        return self._db.fetch(*self._query(where, extra, order=order, limit=limit), prepare=prepare)

    # ------------------------------------------------------------------ reads

    def __len__(self) -> int:
        """The readable messages: the layer's row count less its unreadable rows (a partial index holds only those),
        so it costs the same at 10 and at 1M messages. Rows changed behind the store (``generation`` > 0; a row
        removed from the middle leaves a hole in the positions) are counted one by one instead."""
        rows = self._db.fetch(
            "SELECT CASE WHEN l.generation = 0 THEN l.rows - (SELECT count(*) FROM am_messages m "
            "WHERE m.layer_id = l.layer_id AND NOT m.readable) ELSE (SELECT count(*) FROM am_messages m "
            "WHERE m.layer_id = l.layer_id AND m.readable) END FROM am_layers l "
            "WHERE l.user_id = %(user)s AND l.kind = %(kind)s AND l.key = %(key)s", self._params)
        return int(rows[0][0]) if rows else 0

    def messages(self) -> list[Message]:
        """Every readable message in order (the whole layer: prefer window/search/tail)."""
        return self._messages(self._fetch("true"))

    def head(self, count: int) -> list[Message]:
        """The first ``count`` messages."""
        count = max(0, int(count))
        return self._messages(self._fetch("readable", limit=count)) if count else []

    def tail(self, count: int) -> list[Message]:
        """The last ``count`` messages, in order."""
        count = max(0, int(count))
        return self._messages(self._fetch("readable", order="position DESC", limit=count)[::-1]) if count else []

    def recent(self, rounds: int = 3) -> list[Message]:
        """The last ``rounds`` rounds (``2 * rounds`` messages)."""
        return self.tail(2 * max(0, rounds))

    def get(self, message_id: int) -> Message | None:
        """The message with this id (the first, if a migrated layer repeats it), or ``None``."""
        rows = self._fetch("readable AND message_id = %(mid)s", {"mid": int(message_id)}, limit=1)
        return self._messages(rows)[0] if rows else None

    def position_of(self, message_id: int) -> int | None:
        """The position (among the readable messages, as on files) of the first message with ``message_id``
        (``None`` if absent)."""
        rows = self._fetch("readable AND message_id = %(mid)s", {"mid": int(message_id)}, limit=1)
        if not rows:
            return None
        position = int(rows[0][0])
        layout = self._layout()
        return position - bisect.bisect_left(layout[3], position) if layout else position

    def first_and_last(self) -> tuple[Message, Message] | None:
        """The first and last messages, or ``None`` for an empty layer."""
        first, last = self.head(1), self.tail(1)
        return (first[0], last[0]) if first and last else None

    def window(self, message_id: int, before: int = 2, after: int = 2) -> Window:
        """The anchor and up to ``before``/``after`` messages around it (positional, clamped to
        ``0..MAX_WINDOW_SIDE`` and the layer's edges); an unknown anchor gives an empty window with a ``reason``."""
        before = _clamp(int(before), 0, MAX_WINDOW_SIDE)
        after = _clamp(int(after), 0, MAX_WINDOW_SIDE)
        rows = self._db.fetch(*self.window_query(message_id, before, after),
                              prepare=True)  # at once: measured 2x faster than psycopg's default (from the 6th)
        if rows:
            rows.sort(key=lambda row: row[0])
            return Window(message_id, tuple(self._messages(rows)), before, after)
        where = f"{self._kind} {self._key!r}"
        ends = self._db.fetch(f"SELECT min(message_id), max(message_id) FROM am_messages "
                              f"WHERE layer_id = {_LAYER} AND readable", self._params)
        if not ends or ends[0][0] is None:
            reason = f"{where} has no messages"
        else:
            reason = (f"no message #{message_id} in {where} (ids run from {ends[0][0]} to {ends[0][1]}); "
                      "search first and use a message_id from a hit")
        return Window(message_id, (), before, after, reason)

    def window_query(self, message_id: int, before: int, after: int) -> tuple[str, dict[str, Any]]:
        """The statement and parameters :meth:`window` runs (sides already clamped), for ``EXPLAIN``.

        LATERAL: each side is its own ordered, limited scan of the primary key from the anchor's position (without
        it the planner sorts every row before or after the anchor to keep a few: 11 ms instead of 0.2 at 10k). The
        sides are literals, not parameters (see :func:`literal_limit`)."""
        columns = ", ".join("m." + c for c in _ROW.split(", "))
        sql = f"""
            WITH a AS (SELECT layer_id, position FROM am_messages
                       WHERE layer_id = {_LAYER} AND message_id = %(mid)s AND readable ORDER BY position LIMIT 1)
            SELECT w.* FROM a, LATERAL (
                (SELECT {columns} FROM am_messages m
                  WHERE m.layer_id = a.layer_id AND m.position < a.position AND m.readable
                  ORDER BY m.position DESC LIMIT {literal_limit(before)})
                UNION ALL
                (SELECT {columns} FROM am_messages m
                  WHERE m.layer_id = a.layer_id AND m.position >= a.position AND m.readable
                  ORDER BY m.position LIMIT {literal_limit(after + 1)})) AS w"""
        return sql, {**self._params, "mid": int(message_id)}

    def search(self, keyword: str, *, limit: int = 20) -> list[Message]:
        """Messages whose content contains ``keyword`` (casefolded substring, stripped, CJK too), the **last**
        ``limit`` of them in order; an empty keyword gives the last ``limit`` messages (the file backend's rule)."""
        limit = _clamp(int(limit), 0, MAX_SEARCH_LIMIT)
        needle = fold(keyword.strip())  # str.strip: Unicode spaces too (U+3000), as the file backend
        if not needle:
            return self.tail(limit)
        if not limit:
            return []
        # One round trip when nothing waits to be folded (the usual case): the recent part's hits, each with a flag
        # saying whether rows written or changed by another program wait (folded NULL), the layer's id and where the
        # older part begins (one row of NULL columns when nothing matched; none when there is no such layer). Only
        # when rows wait are they folded and the search asked again — a second statement per search made it half
        # again as slow as the same query alone (benchmarks/POSTGRES.md, run J). Then, while the hits are fewer than
        # `limit`, the older parts.
        sql, params = self.search_query(needle, limit=limit)
        flagged = (f"SELECT found.*, info.pending, info.layer_id, info.since FROM (SELECT {_PENDING}, layer_id, "
                   f"rows - %(recent)s AS since {_THIS_LAYER}) AS info LEFT JOIN LATERAL ({sql}) AS found ON true")
        # prepared as any statement (psycopg, after a few runs): the recent part is a walk whatever the keyword, so a
        # generic plan is the right one, unlike the older parts' (see _older_hits)
        rows = self._db.fetch(flagged, params)
        if rows and rows[0][-3] and self._fold_pending():
            rows = self._db.fetch(flagged, params)
        layer_id, since = rows[0][-2:] if rows else (None, None)
        hits = [row[:-3] for row in rows if row[0] is not None]
        if len(hits) < limit and layer_id is not None and since is not None and since > 0:  # see RECENT_ROWS
            layer_id, since = int(layer_id), int(since)
            if since <= OLDER_WINDOW:
                hits += self._older_hits(needle, limit - len(hits), FREE, layer_id, since)
            else:
                first = max(0, since - WALK_ROWS)
                hits += self._older_hits(needle, limit - len(hits), WALK, layer_id, since, first)
                if len(hits) < limit and first > 0:
                    hits += self._older_hits(needle, limit - len(hits), REST, layer_id, first,
                                             index_keyword=self._rarest_word(needle, layer_id, first))
        # a subquery's order is not promised to its outer query: put the hits in the layer's order here
        return self._messages(sorted(hits, key=itemgetter(0)))

    def _older_hits(self, needle: str, limit: int, part: str, layer_id: int, before: int, first: int = 0, *,
                    index_keyword: str | None = None) -> list[tuple[Any, ...]]:
        sql, params = self.search_query(needle, limit=limit, part=part, older_than=(layer_id, before), first=first,
                                        index_keyword=index_keyword)
        # prepare=False: planned for this very pattern (a generic plan cannot tell a rare keyword from a common one)
        return self._db.fetch(sql, params, prepare=False)

    def search_query(self, folded_keyword: str, *, limit: int, part: str = RECENT,
                     older_than: tuple[int, int] | None = None, first: int = 0, index_keyword: str | None = None
                     ) -> tuple[str, dict[str, Any]]:
        """The statement and parameters that find the hits for a keyword already folded in one part of the layer
        (for ``EXPLAIN``; see :data:`RECENT_ROWS`): :data:`RECENT`, its last positions; with ``older_than=(layer_id,
        before)``, :data:`WALK` the positions from ``first`` up to ``before``, :data:`FREE` or :data:`REST` every
        position before ``before``. :meth:`search` runs the first, with the flag of rows waiting to be folded beside
        it, then the others while it has fewer than ``limit`` hits. ``index_keyword``: what :data:`REST` asks the
        trigram index for, a word of the keyword (see :data:`SAMPLE_ROWS`; by default the keyword)."""
        if (part == RECENT) != (older_than is None):
            raise ValueError(f"part {part!r} and older_than={older_than!r}: only the recent part has no bound")
        layer_id, before = older_than or (None, None)
        params = {**self._params, "pattern": like_pattern(index_keyword or folded_keyword), "needle": folded_keyword,
                  "recent": RECENT_ROWS, "layer": layer_id, "before": before, "first": first}  # (limit: a literal)
        if self._kind != "session":
            return _day_search(part, limit), params
        match, order = _part("am_messages", "position", part)
        return self._query(f"readable AND {match}", params, order=f"{order} DESC", limit=limit,
                           layer=_LAYER if older_than is None else "%(layer)s")

    def _rarest_word(self, needle: str, layer_id: int, before: int) -> str | None:
        """The word of ``needle`` to ask the trigram index for in the rows before ``before``, or ``None`` for the
        whole keyword (see :data:`SAMPLE_ROWS`): the rarest word of three characters or more among
        :data:`SAMPLE_ROWS` rows spread evenly over those positions (a day's: its copies' session rows), when it is
        in at most :data:`RARE_SHARE` of them and every other word in at least :data:`COMMON_SHARE`."""
        words = list(dict.fromkeys(needle.split()))
        if not 2 <= len(words) <= 8 or sum(len(word) >= 3 for word in words) < 2:
            return None  # nothing to leave out (a word, or one the index can ask for); many: a sentence, as asked
        counts = ", ".join(f"count(*) FILTER (WHERE strpos(folded, %(w{i})s) > 0)" for i in range(len(words)))
        where = ("layer_id = %(layer)s AND position = ANY(%(positions)s)" if self._kind == "session" else
                 "copy_layer = %(layer)s AND copy_position = ANY(%(positions)s)")
        positions = sorted({before * (2 * k + 1) // (2 * SAMPLE_ROWS) for k in range(SAMPLE_ROWS)})
        params = {"layer": layer_id, "positions": positions, **{f"w{i}": word for i, word in enumerate(words)}}
        (sampled, *found), = self._db.fetch(f"SELECT count(*), {counts} FROM am_messages WHERE {where}", params,
                                            prepare=False)
        rows_with = dict(zip(words, found))
        rarest = min((word for word in words if len(word) >= 3), key=rows_with.__getitem__)
        if not sampled or rows_with[rarest] > RARE_SHARE * sampled:
            return None
        common = all(count >= COMMON_SHARE * sampled for word, count in rows_with.items() if word != rarest)
        return rarest if common else None

    def _fold_pending(self) -> bool:
        """Fold the rows another program wrote or changed (``folded`` NULL; cheap when there are none); whether
        there were any."""
        rows = self._db.fetch(f"SELECT position, record, raw FROM am_messages WHERE layer_id = {_LAYER} "
                              f"AND {UNFOLDED}", self._params)
        if not rows:
            return False
        updates = [{**self._params, "position": position, "folded": searchable(from_columns(record, raw))}
                   for position, record, raw in rows]
        with self._db.transaction("fold rows for search") as conn:
            with conn.cursor() as cur:
                cur.executemany(f"UPDATE am_messages SET folded = %(folded)s WHERE layer_id = {_LAYER} "
                                "AND position = %(position)s", updates)
        return True

    # ------------------------------------------------------------------ bulk readers

    def _layout(self) -> tuple[int, int, int, list[int]] | None:
        """``(layer_id, generation, readable count, skipped)`` (``None``: no such layer), where ``skipped`` are
        the positions below the layer's row count with no readable message, in order: its unreadable rows (a
        partial index holds them) and, after a removal behind the store (``generation`` > 0), the holes it left
        (found once per generation: only a removal makes one, and a removal bumps the generation)."""
        rows = self._db.fetch(
            "SELECT l.layer_id, l.generation, l.rows, ARRAY(SELECT m.position FROM am_messages m WHERE m.layer_id = "
            "l.layer_id AND NOT m.readable AND m.position < l.rows ORDER BY m.position) FROM am_layers l "
            "WHERE l.user_id = %(user)s AND l.kind = %(kind)s AND l.key = %(key)s", self._params)
        if not rows:
            return None
        layer_id, generation, count = (int(v) for v in rows[0][:3])
        skipped = [int(p) for p in rows[0][3]]
        if generation:
            ident = (layer_id, generation)
            if self._holes is None or self._holes[0] != ident:
                holes = self._db.fetch(
                    "SELECT generate_series(prev + 1, position - 1) FROM (SELECT position, lag(position, 1, -1::bigint) "
                    "OVER (ORDER BY position) AS prev FROM am_messages WHERE layer_id = %s) AS t "
                    "WHERE position > prev + 1", (layer_id,))
                self._holes = (ident, [int(h) for (h,) in holes])
            skipped = sorted({*skipped, *(h for h in self._holes[1] if h < count)})
        return layer_id, generation, count - len(skipped), skipped

    @staticmethod
    def _row_position(index: int, skipped: Sequence[int]) -> int:
        """The row position of the ``index``-th readable message, given the skipped positions (in order)."""
        position = index
        for skip in skipped:
            if skip > position:
                break
            position += 1
        return position

    def scan(self, since: Cursor | None = None) -> Scan:
        """What changed since ``since`` (see :class:`~agentmem_nb.store.Scan`); the cursor holds the layer's id and
        generation and its readable count (positions count readable messages, as on files)."""
        since = since or Cursor()
        layout = self._layout()
        if layout is None:
            change: Change = "unchanged" if since.end == 0 else "truncated"
            return Scan(change, 0, 0, Cursor())
        layer_id, generation, count, _ = layout
        ident = (layer_id, generation)
        cursor = Cursor(file=ident, end=count)
        if since.end == 0:
            return Scan("appended" if count else "unchanged", 0, count, cursor)
        if since.file != ident:
            same_layer = since.file is not None and since.file[0] == layer_id
            return Scan("truncated" if same_layer and count < since.end else "rewritten", 0, count, cursor)
        if count < since.end:
            return Scan("truncated", 0, count, cursor)
        return Scan("unchanged" if count == since.end else "appended", since.end, count, cursor)

    def read_records(self, start: int, stop: int) -> list[tuple[int, dict[str, Any]]]:
        """``(message_id, record)`` of the readable messages at positions ``start <= i < stop`` (positions count
        readable messages, as on files): one ordered range of the primary key from the first one's row."""
        start = max(0, int(start))
        if stop <= start:
            return []
        layout = self._layout()
        first = self._row_position(start, layout[3]) if layout else start
        rows = self._fetch("readable AND position >= %(first)s", {"first": first}, limit=int(stop) - start)
        return [(mid, {**record, "message_id": mid}) for mid, record in self._records(rows)]

    def read_at(self, positions: Sequence[int]) -> list[tuple[int, dict[str, Any]]]:
        """``(message_id, record)`` at the given positions (counting readable messages, as on files), in the order
        given (one statement), for bulk readers (the retrieval index reads an embedder's texts this way); a position
        with no message is left out."""
        if not positions:
            return []
        layout = self._layout()
        skipped = layout[3] if layout else []
        rows_at = {int(p): self._row_position(int(p), skipped) for p in positions}
        rows = self._fetch("readable AND position = ANY(%(positions)s)", {"positions": sorted(set(rows_at.values()))})
        found = {int(row[0]): row for row in rows}
        ordered = [found[rows_at[int(p)]] for p in positions if rows_at[int(p)] in found]
        return [(mid, {**record, "message_id": mid}) for mid, record in self._records(ordered)]

    def problems(self) -> list[Problem]:
        """Rows that cannot be read as messages (written by another program); never raises on bad data."""
        rows = self._db.fetch(f"SELECT position, message_id, record, raw FROM am_messages WHERE layer_id = {_LAYER} "
                              "AND NOT readable ORDER BY position", self._params)
        return [problem_for_row(self.where, *row) for row in rows]


def searchable(record: object) -> str:
    """The ``folded`` column of a stored record: the content a read shows (non-text content rendered as JSON, as
    the file backend searches it), folded."""
    if not isinstance(record, dict):
        return ""
    return fold(message_from_record(record, message_id=1, zone=None, fallback_ts=EPOCH).content)


def problem_for_row(where: str, position: int, message_id: object, record: object, raw: str | None) -> Problem:
    """The finding for a message row that is not a readable message."""
    value = from_columns(record, raw)
    if not isinstance(value, dict):
        return Problem(where, ProblemKind.NOT_AN_OBJECT, position + 1,
                       f"the record is a JSON {type(value).__name__}, not an object; skipped (fix or delete the row "
                       f"at position {position})")
    return Problem(where, ProblemKind.LEGACY_ID_NORMALISED, position + 1,
                   f"message_id {message_id!r} is not a positive number; skipped (give the row an id)")
