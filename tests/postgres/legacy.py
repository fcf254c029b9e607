"""What an agentmem_nb of schema versions 1 to 5 wrote for an append, so the upgrade tests can fill a database as
that version left it (today's append needs today's schema) and compare its cost with today's.

The statement is the store's append of those versions, word for word: both layer rows upserted, the session row and
its day copy inserted, each with its folded text (so each with its own trigram postings)."""

from __future__ import annotations

import json
from typing import Any

import psycopg

from agentmem_nb.store.postgres.records import fold

APPEND_V1_TO_V5 = """
WITH u AS (INSERT INTO am_users (user_id) VALUES (%(user)s) ON CONFLICT (user_id) DO NOTHING),
s AS (INSERT INTO am_layers (user_id, kind, key, next_id, rows) VALUES (%(user)s, 'session', %(session)s, 2, 1)
      ON CONFLICT (user_id, kind, key) DO UPDATE SET next_id = am_layers.next_id + 1, rows = am_layers.rows + 1
      RETURNING layer_id, next_id - 1 AS message_id, rows - 1 AS position),
d AS (INSERT INTO am_layers (user_id, kind, key, next_id, rows) VALUES (%(user)s, 'daily', %(day)s, 2, 1)
      ON CONFLICT (user_id, kind, key) DO UPDATE SET next_id = am_layers.next_id + 1, rows = am_layers.rows + 1
      RETURNING layer_id, next_id - 1 AS message_id, rows - 1 AS position),
ms AS (INSERT INTO am_messages (layer_id, position, message_id, record, raw, folded)
       SELECT layer_id, position, message_id, %(srecord)s::jsonb, %(sraw)s, %(folded)s FROM s),
md AS (INSERT INTO am_messages (layer_id, position, message_id, record, raw, folded)
       SELECT layer_id, position, message_id, %(drecord)s::jsonb, %(draw)s, %(folded)s FROM d)
SELECT s.message_id, d.message_id FROM s, d
"""


def legacy_append(conn: psycopg.Connection[Any], user: str, session: str, day: str, content: str,
                  ts: str = "2026-04-08T10:00:00.000000+00:00") -> tuple[int, int]:
    """Append one user message as versions 1–5 did (autocommit ``conn``: one statement, one transaction);
    returns the session and day message ids."""
    line = {"ts": ts, "role": "user", "content": content}
    meta = {"session_id": session}
    row = conn.execute(APPEND_V1_TO_V5, {
        "user": user, "session": session, "day": day, "folded": fold(content), "sraw": None, "draw": None,
        "srecord": json.dumps({**line, "tags": ["session"], "meta": meta}),
        "drecord": json.dumps({**line, "tags": ["daily"], "meta": meta})}).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])
