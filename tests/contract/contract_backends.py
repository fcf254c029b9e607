"""The backends the conformance suite runs against (the fixtures are in this folder's conftest.py).

Every test in ``tests/contract/`` is written once against the protocols of :mod:`agentmem_nb.store.contract` and runs
against every backend in :data:`BACKENDS`: the files and PostgreSQL (a fresh database on the test process's
throwaway server, ``tests/pg_server.py``; those cases are marked ``postgres``). Adding a backend is adding one
:class:`Backend` entry: how to open a fresh store, and — optional capabilities, the tests needing them are skipped when
absent — how to change its stored messages behind the store's back (a rewrite, a cut), as another program would.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.store.contract import MessageLayer, Store

ZONE = "Asia/Shanghai"


@dataclass(frozen=True)
class Backend:
    """How the suite drives one backend."""

    name: str
    open: Callable[[Path, Callable[[], _dt.datetime]], Store]
    """A fresh store (nothing shared with any other test), in :data:`ZONE`, on the given clock."""
    reopen: Callable[[Store], Store]
    """Another store object on the same data (a second process, as far as caches go)."""
    rewrite: Callable[[MessageLayer], None] | None = None
    """Change the text of the stored messages of a layer in place, keeping their ids (an editor's save)."""
    truncate: Callable[[MessageLayer], None] | None = None
    """Drop the last stored message of a layer (a restore from an older backup)."""
    corrupt: Callable[[MessageLayer], None] | None = None
    """Add one unreadable entry to a layer (a torn or hand-broken line)."""
    cleanup: Callable[[], None] | None = None
    """Release what the test's stores hold (a database backend's connection pools), after each test."""


def _path(layer: MessageLayer) -> Path:
    path = getattr(layer, "path")  # noqa: B009 - the files backend's own attribute, not part of the contract
    assert isinstance(path, Path)
    return path


def _files_rewrite(layer: MessageLayer) -> None:
    path = _path(layer)
    lines = [json.loads(raw) for raw in path.read_bytes().splitlines()]
    for record in lines:
        record["content"] = str(record["content"]).upper()
    path.write_bytes(b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in lines))


def _files_truncate(layer: MessageLayer) -> None:
    path = _path(layer)
    data = path.read_bytes()
    os.truncate(path, data.rstrip(b"\n").rfind(b"\n") + 1)


def _files_corrupt(layer: MessageLayer) -> None:
    with open(_path(layer), "ab") as handle:
        handle.write(b"{not json\n")


def _pg_open(_root: Path, clock: Callable[[], _dt.datetime]) -> Store:
    from pg_server import shared_server  # the throwaway server (skips, or fails under CI, without one)

    from agentmem_nb.store.postgres import upgrade_database

    url = shared_server().new_database()
    upgrade_database(url)  # the schema comes from the project's migrations (`agentmem-nb db upgrade URL`)
    store = MemoryStore(url, zone=ZONE, clock=clock)  # the one entry: a URL opens the PostgreSQL backend
    _PG_URLS[id(store)] = url
    _PG_OPEN.append(store)
    return store


_PG_URLS: dict[int, str] = {}
_PG_OPEN: list[Store] = []


def _pg_reopen(store: Store) -> Store:
    url = _PG_URLS[id(store)]
    again = MemoryStore(url, zone=store.zone, clock=store.clock)
    _PG_URLS[id(again)] = url
    _PG_OPEN.append(again)
    return again


def _pg_cleanup() -> None:
    while _PG_OPEN:
        store = _PG_OPEN.pop()
        _PG_URLS.pop(id(store), None)
        store.close()  # type: ignore[attr-defined]  # the PostgreSQL store's pool


def _pg_sql(layer: MessageLayer, sql: str) -> None:
    """Run ``sql`` on the layer's rows as another program would (``%(layer)s`` is its layer_id)."""
    import psycopg

    user = getattr(layer, "_user")  # noqa: B009 - the backend's own attribute, not part of the contract
    url = _PG_URLS[id(user.store)]
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT layer_id FROM am_layers WHERE user_id = %s AND kind = %s AND key = %s",
                           (user.user_id, layer.kind, layer.key)).fetchone()
        assert row is not None
        conn.execute(sql, {"layer": row[0]})  # type: ignore[arg-type]


def _pg_rewrite(layer: MessageLayer) -> None:
    _pg_sql(layer, "UPDATE am_messages SET record = jsonb_set(record, '{content}', to_jsonb(upper(record->>'content')))"
                   " WHERE layer_id = %(layer)s")


def _pg_truncate(layer: MessageLayer) -> None:
    _pg_sql(layer, "DELETE FROM am_messages WHERE layer_id = %(layer)s AND position = "
                   "(SELECT max(position) FROM am_messages WHERE layer_id = %(layer)s)")


def _pg_corrupt(layer: MessageLayer) -> None:
    _pg_sql(layer, "INSERT INTO am_messages (layer_id, message_id, record) VALUES (%(layer)s, NULL, '\"not an object\"')")


BACKENDS: dict[str, Backend] = {
    "files": Backend(
        name="files",
        open=lambda root, clock: MemoryStore(root / "memory", zone=ZONE, clock=clock),
        reopen=lambda store: MemoryStore(store.root, zone=store.zone, clock=store.clock),  # type: ignore[attr-defined]
        rewrite=_files_rewrite,
        truncate=_files_truncate,
        corrupt=_files_corrupt,
    ),
    "postgres": Backend(
        name="postgres",
        open=_pg_open,
        reopen=_pg_reopen,
        rewrite=_pg_rewrite,
        truncate=_pg_truncate,
        corrupt=_pg_corrupt,
        cleanup=_pg_cleanup,
    ),
}


def capability(backend: Backend, name: str) -> Callable[[MessageLayer], None]:
    """The backend's optional hook ``name``, or skip the test (the backend does not offer it)."""
    hook = getattr(backend, name)
    if hook is None:
        pytest.skip(f"backend {backend.name!r} has no {name!r} hook")
    return hook  # type: ignore[no-any-return]
