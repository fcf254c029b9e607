"""Message vectors kept beside the data for the next process (``{user}/.index/retrieval/{kind}-{digest}.vec``; for a
PostgreSQL user, rows of ``am_vectors``: :mod:`agentmem_nb.store.postgres.vectors`).

Why: embedding is the dense signal's whole cost (multilingual-e5-small on this machine: tens of milliseconds a
message), so a message is embedded once, and every later process reads its vector back instead.

By the rules of the retrieval index's own cache (:mod:`agentmem_nb.retrieval.persist`), with one difference: vectors
are kept **per file**, by position in the file, so one file that changed loses only its own vectors.

* written whole with the store's ``atomic_write`` through :func:`~agentmem_nb.store.index_cache.write_cache`
  (checksummed; old or new, never a mix);
* a file's vectors are used only if the file is still the file embedded, grown by appends at most — the store's one
  change rule: ``layer.scan(cursor)`` says "unchanged" or "appended" after exactly the records embedded, and the last
  embedded message id is still at its position. A file that fails keeps none of its vectors (they are embedded anew);
* another embedder (``identity``), index configuration, format or version is a miss, silently.

A database user keeps the same entries (per layer: count, cursor, last id, the float32 rows) as rows, replaced in one
transaction, and they are checked by the same rule when read back: the next process on any host reuses them.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentmem_nb.errors import AgentMemError, StoreError
from agentmem_nb.retrieval.persist import _cursor_from, _cursor_json, _has_folder, _layer
from agentmem_nb.store import index_cache

if TYPE_CHECKING:
    from agentmem_nb.retrieval.index import KindIndex
    from agentmem_nb.store import UserMemory
    from agentmem_nb.store.postgres.user import PostgresUser

__all__ = ["load_vectors", "save_vectors"]

_MAGIC = b"AMVECT01"
_VERSION = 1


def _path(index: KindIndex, user: UserMemory, identity: str) -> Path:
    digest = _identity(index, identity)
    return index_cache.user_cache_folder(user.directory) / "retrieval" / f"{index.kind}-{digest}.vec"


def _identity(index: KindIndex, identity: str) -> str:
    return hashlib.sha256(f"{index.config!r}\x00{identity}".encode()).hexdigest()[:16]


def _database_user(user: object) -> PostgresUser | None:
    """``user`` if it is a PostgreSQL user (imported only then: psycopg is an optional extra)."""
    if _has_folder(user):
        return None
    try:
        from agentmem_nb.store.postgres.user import PostgresUser
    except ImportError:  # no postgres extra: no database user can exist in this process
        return None
    return user if isinstance(user, PostgresUser) else None


def save_vectors(index: KindIndex, user: UserMemory, identity: str, matrix: np.ndarray) -> bool:
    """Persist the vectors of every message of ``index`` (``matrix`` row ``gid``); ``False`` if not written (the
    next process embeds again). The caller holds ``index.lock`` so the files stay as the matrix saw them."""
    database = _database_user(user)
    if database is None and not _has_folder(user):  # another kind of store: vectors stay in this process
        return False
    files: list[dict[str, Any]] = []
    rows: list[np.ndarray] = []
    try:
        for follower in index.files:
            count = len(follower)
            cursor = _cursor_json(follower.cursor)
            if not count or cursor is None:
                continue
            gids = follower.gids.snapshot().take(np.arange(count))
            files.append({"key": follower.key, "count": count, "cursor": cursor,
                          "last_id": int(follower.message_ids[count - 1])})
            rows.append(np.ascontiguousarray(matrix[gids], dtype="<f4"))
    except (StoreError, OSError):  # a file went away since the refresh: nothing worth keeping now
        return False
    dim = int(matrix.shape[1]) if matrix.ndim == 2 else 0
    if database is not None:
        from agentmem_nb.store.postgres.vectors import KeptVectors, save_layer_vectors

        try:
            save_layer_vectors(database, index.kind, _identity(index, identity), [
                KeptVectors(str(f["key"]), int(f["count"]), dim, f["cursor"], int(f["last_id"]), r.tobytes())
                for f, r in zip(files, rows)])
        except StoreError:  # the database refused or the connection dropped: the next process embeds again
            return False
        return True
    header = {"version": _VERSION, "kind": index.kind, "config": repr(index.config), "identity": identity,
              "dim": dim, "files": files}
    return index_cache.write_cache(_path(index, user, identity), user.store.root, _MAGIC, header,
                                   [r.data.cast("B") for r in rows])


def load_vectors(index: KindIndex, user: UserMemory, identity: str) -> dict[str, np.ndarray]:
    """The persisted vectors of each file still valid by the store's change rule: ``{file key: (count, dim)}``,
    rows in file order. Anything unreadable is a miss (an empty dict)."""
    database = _database_user(user)
    if database is not None:
        return _load_from_database(index, database, identity)
    if not _has_folder(user):
        return {}
    opened = index_cache.open_cache(_path(index, user, identity), user.store.root, _MAGIC)
    if opened is None:
        return {}
    fd, header, start = opened
    try:
        if (header.get("version"), header.get("kind"), header.get("config"), header.get("identity")) != (
                _VERSION, index.kind, repr(index.config), identity):
            return {}
        dim = int(header["dim"])
        out: dict[str, np.ndarray] = {}
        at = start
        for entry in header["files"]:
            count, key = int(entry["count"]), str(entry["key"])
            size = count * dim * 4
            raw = os.pread(fd, size, at)
            at += size
            if len(raw) != size:
                return {}
            if _still_valid(user, index.kind, key, count, entry["cursor"], int(entry["last_id"])):
                out[key] = np.frombuffer(raw, dtype="<f4").reshape(count, dim)
        return out
    except (ValueError, KeyError, TypeError, OSError, AgentMemError, OverflowError):
        # (AgentMemError: a file key no longer valid or a file that became unsafe.) A header that checksums but does not fit this version, a file that vanished or became unsafe: a miss.
        return {}
    finally:
        os.close(fd)


def _still_valid(user: UserMemory, kind: str, key: str, count: int, cursor: Any, last_id: int) -> bool:
    """The rule (module docstring): the layer is the one embedded, grown by appends at most, its last embedded id
    still at its position."""
    layer = _layer(user, kind, key)
    scanned = layer.scan(_cursor_from(cursor))  # appends since are fine, nothing else
    if scanned.change not in ("unchanged", "appended") or scanned.start != count:
        return False
    return layer.position_of(last_id) == count - 1


def _load_from_database(index: KindIndex, user: PostgresUser, identity: str) -> dict[str, np.ndarray]:
    from agentmem_nb.store.postgres.vectors import load_layer_vectors

    out: dict[str, np.ndarray] = {}
    try:
        for kept in load_layer_vectors(user, index.kind, _identity(index, identity)):
            if len(kept.data) != kept.count * kept.dim * 4 or not kept.count:
                continue
            # ignore: the database user offers the layers' contract (scan, position_of), not the files' class
            layer_user: UserMemory = user  # type: ignore[assignment]
            if _still_valid(layer_user, index.kind, kept.key, kept.count, kept.cursor, kept.last_id):
                out[kept.key] = np.frombuffer(kept.data, dtype="<f4").reshape(kept.count, kept.dim)
    except (ValueError, KeyError, TypeError, AgentMemError):  # a row that does not fit, a layer gone: a miss
        return {}
    return out
