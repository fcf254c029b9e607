"""The retrieval index of a user, kept beside the data for the next process (``{user}/.index/retrieval/``).

Why: a fresh process's first ranked query used to tokenise every message of the scope before scoring — at 1M
messages 21.4 s and 895 MiB (``benchmarks/bench_cold.py``, ``benchmarks/COLD.md``). With this cache the process maps
the file, checks that every file still holds what was indexed from it, and tokenises only the messages appended
since. Nothing per message is copied: the per-message and per-file arrays are numpy views of the mapping
(:class:`~agentmem_nb.retrieval.bm25.Column`, appends kept in a small tail on top), and the few scattered values a
query reads (a term's postings, a document's terms, a hit's position or id) are read with ``pread``
(:class:`~agentmem_nb.retrieval.bm25.MappedFile`: through the mapping, each would make a whole page-cache folio
resident). At 1M messages the first ranked query takes about 110 MiB (COLD.md; it was 252 MiB with copies).

One file per kind index (sessions, days) and :class:`~agentmem_nb.retrieval.index.IndexConfig` (the tokenizer's
settings decide the terms, so another configuration is another cache): the term index's vocabulary, every term's
postings and every document's terms, the per-message arrays and the per-file followers, all mapped read-only and
touched only where a query looks (the vocabulary and the term table, small, are read into memory).

Never the source of truth, by the same rules as the store's own cache (:mod:`agentmem_nb.store.index_cache`):

* written whole with the store's ``atomic_write`` (old or new, never a mix; concurrent writers race harmlessly),
  checksummed, never through a link;
* used only if **every** file it covers is still the file it indexed, grown by appends at most — by the store's one
  change rule: the cache keeps each file's scan cursor, and ``layer.scan(cursor)`` must say "unchanged" or
  "appended" after exactly the records indexed — with the message ids where they were. One file that fails (edited,
  replaced, deleted) makes the whole kind index rebuild from the files, exactly as with no cache;
* anything unreadable, from another format or version, or for another configuration is a miss, silently.

A cache is written after a refresh that grew the index by a quarter since the last one (and at least
:data:`~agentmem_nb.store.index_cache.MIN_RECORDS` messages), so a growing memory rewrites it a logarithmic number of
times.
"""

from __future__ import annotations

import hashlib
import mmap
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from agentmem_nb.errors import StoreError
from agentmem_nb.retrieval.bm25 import Column, FrozenTerms, MappedFile, TermIndex
from agentmem_nb.retrieval.encode import BlockEncoder
from agentmem_nb.store import Cursor, index_cache
from agentmem_nb.store import UserMemory as FileUser

if TYPE_CHECKING:
    from agentmem_nb.retrieval.index import KindIndex
    from agentmem_nb.store import MessageFile, UserMemory

__all__ = ["restore", "keep"]

_MAGIC = b"AMRETR01"
_VERSION = 2  # 2: each file kept by its scan cursor

# (name, dtype): the term index's arrays, then the per-message and per-file ones; all mapped, none copied.
_TERMS = (("starts", "<i8"), ("pairs", "<i4"), ("pair_terms", "<i4"), ("pair_tfs", "<i4"), ("doc_starts", "<i8"))
_PER_MESSAGE = (("lengths", "<i4"), ("file_of", "<i4"), ("position_of", "<i8"), ("days", "<i4"), ("prev", "<i8"),
                ("next", "<i8"), ("message_ids", "<i8"), ("gids", "<i8"), ("asks", "u1"))


def _has_folder(user: object) -> bool:
    """True if ``user`` keeps its memory in a folder (the files backend): only there is the index persisted. A
    database user (PostgreSQL) has none; its index lives in the process's memory and a new process builds it once
    from the store's ``scan()`` cursor (a table for it is future work, if cold starts there matter)."""
    return isinstance(user, FileUser)


def _path(index: KindIndex, user: UserMemory) -> Path:
    digest = hashlib.sha256(repr(index.config).encode("utf-8")).hexdigest()[:16]
    return index_cache.user_cache_folder(user.directory) / "retrieval" / f"{index.kind}-{digest}.bin"


def _layer(user: UserMemory, kind: str, key: str) -> MessageFile:
    return user.session(key) if kind == "session" else user.daily(key)


def _cursor_json(cursor: Cursor | None) -> dict[str, Any] | None:
    """A scan cursor as JSON, for the cache's header."""
    if cursor is None or cursor.file is None:
        return None
    return {"file": list(cursor.file), "end": cursor.end, "tail": cursor.tail.hex()}


def _cursor_from(value: Any) -> Cursor:
    """The scan cursor a header kept (``ValueError``/``TypeError``/``KeyError`` for anything else: a miss)."""
    dev, ino = value["file"]
    if type(dev) is not int or type(ino) is not int or type(value["end"]) is not int:
        raise ValueError("not a cursor")
    return Cursor((dev, ino), value["end"], bytes.fromhex(value["tail"]))


def keep(index: KindIndex, user: UserMemory) -> None:
    """Persist ``index`` if it grew enough since it was last persisted (or restored). Never raises for the cache's
    sake: a failure leaves the index as it is and the next process rebuilds."""
    if not _has_folder(user):
        return
    with index.lock:
        total = len(index)
        saved = index.persisted
        if total < index_cache.MIN_RECORDS or total - saved < max(1, saved // 4) or index._untallied:
            return
        index.persisted = total  # also on failure: a read-only folder is not retried on every query
        files = []
        try:
            for follower in index.files:
                files.append({"key": follower.key, "count": len(follower), "cursor": _cursor_json(follower.cursor)})
        except (StoreError, OSError):  # a file went away since the refresh: nothing worth keeping now
            return
        frozen = index.terms.frozen()
        arrays: dict[str, Any] = {
            "starts": frozen.starts, "pairs": frozen.pairs, "pair_terms": frozen.pair_terms,
            "pair_tfs": frozen.pair_tfs, "doc_starts": frozen.doc_starts,
            # snapshot() folds a long tail into the column's base first, so whole() gives that base, not a copy
            "lengths": index.terms._lengths.snapshot().whole(), "file_of": index.file_of.snapshot().whole(),
            "position_of": index.position_of.snapshot().whole(), "days": index.days.snapshot().whole(),
            "prev": index.prev.snapshot().whole(), "next": index.next.snapshot().whole(),
            "message_ids": _joined([f.message_ids for f in index.files]),
            "gids": _joined([f.gids for f in index.files]),
            "asks": _joined([f.asks for f in index.files]),
        }
        names = "\x00".join(index.terms._names).encode("utf-8", errors="surrogatepass")
        sections: dict[str, list[int]] = {}
        pieces: list[Any] = []
        at = 0
        for name, buffer in [("names", names), *arrays.items()]:
            view = np.ascontiguousarray(buffer).data if isinstance(buffer, np.ndarray) else memoryview(buffer)
            raw = view.cast("B")
            pad = -at % 8
            if pad:
                pieces.append(b"\x00" * pad)
                at += pad
            sections[name] = [at, len(raw)]
            pieces.append(raw)
            at += len(raw)
        header = {"version": _VERSION, "kind": index.kind, "config": repr(index.config), "docs": total,
                  "terms": len(index.terms._names), "total_length": index.terms.total_length, "files": files,
                  "sections": sections}
        index_cache.write_cache(_path(index, user), user.store.root, _MAGIC, header, pieces)


def _joined(columns: list[Column]) -> np.ndarray:
    """The files' columns end to end (one file: its column as it is)."""
    if len(columns) == 1:
        return columns[0].snapshot().whole()
    return np.concatenate([c.whole() for c in columns]) if columns else np.zeros(0, dtype=np.int64)


def restore(index: KindIndex, user: UserMemory) -> bool:
    """Give the empty ``index`` the persisted one, if every file it covers still holds what was indexed. Called
    once per kind index, before its first refresh (the refresh then reads only what was appended since)."""
    with index.lock:
        if index.restore_tried or len(index):
            return False
        index.restore_tried = True
        if not _has_folder(user):
            return False
        opened = index_cache.open_cache(_path(index, user), user.store.root, _MAGIC)
        if opened is None:
            return False
        fd, header, start = opened
        try:
            return _restore(index, user, fd, header, start)
        except (ValueError, KeyError, TypeError, IndexError, OSError, StoreError, OverflowError):
            # A header that checksums but does not fit this version's expectations, a file that vanished or
            # became unsafe while being checked: a miss. The index is reset so the refresh builds it from the files.
            index._reset()
            return False
        finally:
            os.close(fd)  # the index's MappedFile holds a duplicate of its own


def _restore(index: KindIndex, user: UserMemory, fd: int, header: dict[str, Any], start: int) -> bool:
    from agentmem_nb.retrieval.index import FileFollower  # local: index.py imports this module

    if (header.get("version"), header.get("kind"), header.get("config")) != (_VERSION, index.kind,
                                                                            repr(index.config)):
        return False
    docs, n_terms = int(header["docs"]), int(header["terms"])
    sections: dict[str, list[int]] = header["sections"]
    files = header["files"]
    # Every file must still be the file indexed, grown by appends at most.
    layers, cursors = [], []
    for entry in files:
        layer = _layer(user, index.kind, str(entry["key"]))
        count = int(entry["count"])
        cursor = _cursor_from(entry["cursor"]) if count else None
        if cursor is not None:
            scanned = layer.scan(cursor)  # the store's one change rule: appends since are fine, nothing else
            if scanned.change not in ("unchanged", "appended") or scanned.start != count:
                return False
        layers.append(layer)
        cursors.append(cursor)

    mapped = _map(fd)
    size = len(mapped)

    def section(name: str, dtype: str) -> np.ndarray:
        offset, length = sections[name]
        itemsize = np.dtype(dtype).itemsize
        if length % itemsize or offset < 0 or start + offset + length > size:
            raise ValueError(f"section {name} cut short")
        out = np.frombuffer(mapped, dtype=dtype, count=length // itemsize, offset=start + offset)
        return out

    # Views of the mapped file, not copies: the page cache holds the one copy, and a query touches only the pages
    # of what it looks up (at 1M messages, copying these arrays cost 53 MB in every process).
    values = {name: section(name, dtype) for name, dtype in _PER_MESSAGE}
    if not all(len(values[name]) == docs for name in ("lengths", "file_of", "position_of", "days", "prev", "next")):
        return False
    counts = [int(entry["count"]) for entry in files]
    if sum(counts) != docs or len(values["message_ids"]) != docs or len(values["asks"]) != docs:
        return False
    offset, length = sections["names"]
    names = os.pread(fd, length, start + offset).decode("utf-8", errors="surrogatepass").split("\x00") if length else []
    if len(names) != n_terms:
        return False
    # Single values and short runs (a term's postings, a document's terms, a message's id) are read with pread,
    # not through the mapping (see bm25.MappedFile); the term table is small and read for every query term: copied.
    file = MappedFile(os.dup(fd), mapped, str(_path(index, user)))
    terms = {name: section(name, dtype) for name, dtype in _TERMS}
    terms["starts"] = terms["starts"].copy()
    frozen = FrozenTerms(docs, **terms, file=file)
    if len(frozen.starts) != n_terms + 1 or len(frozen.doc_starts) != docs + 1:
        return False
    # Message ids where the index put them: the layer's position of each file's last indexed id is unchanged.
    message_ids, at = values["message_ids"], 0
    for layer, count in zip(layers, counts, strict=True):
        if count and layer.position_of(int(file.read(message_ids, at + count - 1, at + count)[0])) != count - 1:
            return False
        at += count
    index.terms = TermIndex.from_frozen(names, values["lengths"], int(header["total_length"]), frozen, file)
    index.encoder = BlockEncoder(index.tokenizer, index.terms)
    index.file_of, index.position_of = Column("i", values["file_of"], file), Column("q", values["position_of"], file)
    index.days = Column("i", values["days"], file)
    index.prev, index.next = Column("q", values["prev"], file), Column("q", values["next"], file)
    index.files, index._by_key = [], {}
    at = 0
    for file_id, (layer, count, cursor) in enumerate(zip(layers, counts, cursors, strict=True)):
        follower = FileFollower(layer, file_id)
        follower.cursor = cursor  # the refresh scans on from here: only what was appended since is read
        follower.message_ids = Column("q", message_ids[at : at + count], file)  # views of the mapped file
        follower.gids = Column("q", values["gids"][at : at + count], file)
        follower.asks = Column("B", values["asks"][at : at + count], file)
        at += count
        index.files.append(follower)
        index._by_key[follower.key] = follower
    index.persisted = docs
    return True


def _map(fd: int) -> mmap.mmap:
    return mmap.mmap(fd, 0, prot=mmap.PROT_READ)
