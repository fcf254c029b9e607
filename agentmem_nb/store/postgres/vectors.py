"""Message vectors in PostgreSQL (``am_vectors``): what :mod:`agentmem_nb.retrieval.vectors` keeps in a file beside a
user folder, kept in the database for a database user, so every later process on any host reads them back instead
of embedding again.

The rules (which vectors are still valid: the layer's scan cursor and its last embedded id) are the retrieval
module's, not this one's: this module only reads and writes rows. The vectors are raw float32 bytes (``bytea``), one
row per layer, replaced whole in one transaction (old or new, never a mix). Not pgvector's ``vector`` type: Debian 12
packages no pgvector for PostgreSQL 15 (the server the tests and ``make test`` use), and the similarity is computed in
the process over the whole matrix anyway, so the server never searches these rows.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentmem_nb.store.postgres.user import PostgresUser

__all__ = ["KeptVectors", "load_layer_vectors", "save_layer_vectors"]


@dataclass(frozen=True, slots=True)
class KeptVectors:
    """The vectors of one layer's first ``count`` records, as kept: ``data`` holds ``count * dim`` float32 (LE)."""

    key: str
    count: int
    dim: int
    cursor: dict[str, Any]
    last_id: int
    data: bytes


def save_layer_vectors(user: PostgresUser, kind: str, identity: str, layers: Sequence[KeptVectors]) -> None:
    """Replace the kept vectors of ``kind`` for ``identity`` by ``layers`` (one transaction)."""
    rows = [(user.user_id, kind, layer.key, identity, layer.count, layer.dim, json.dumps(layer.cursor),
             layer.last_id, layer.data) for layer in layers]
    with user.store.db.transaction(f"keep the {kind} vectors of {user.user_id!r}") as conn:
        conn.execute("INSERT INTO am_users (user_id) VALUES (%s) ON CONFLICT DO NOTHING", (user.user_id,))
        conn.execute("DELETE FROM am_vectors WHERE user_id = %s AND kind = %s AND identity = %s",
                     (user.user_id, kind, identity))
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO am_vectors (user_id, kind, key, identity, count, dim, cursor, last_id, data) "
                            "VALUES (%s, %s, %s, %s, %s, %s, %s::jsonb, %s, %s)", rows)


def load_layer_vectors(user: PostgresUser, kind: str, identity: str) -> list[KeptVectors]:
    """The kept vectors of ``kind`` for ``identity``, one entry per layer (not checked: the caller applies the rule)."""
    rows = user.store.db.fetch("SELECT key, count, dim, cursor, last_id, data FROM am_vectors WHERE user_id = %s AND "
                               "kind = %s AND identity = %s", (user.user_id, kind, identity))
    return [KeptVectors(str(key), int(count), int(dim), cursor if isinstance(cursor, dict) else {}, int(last_id),
                        bytes(data)) for key, count, dim, cursor, last_id, data in rows]
