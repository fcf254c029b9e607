"""The bulk indexing path gives exactly the index the per-line path gives, and is really taken.

``JsonlFile._index_block`` indexes a whole block of plain records at once (one C-level pass per step) and hands
anything unusual back to the per-line path. These tests build the index of the same bytes twice — once as shipped,
once with the bulk path switched off — and compare everything a reader can observe: ids and byte offsets, the next
id, problems with their line numbers, messages with their (fallback) times, and search hits (whose search text the
bulk path folds in one pass). Small chunk sizes make files with many blocks, some plain and some not.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_testlib import LEGACY_KINDS, Legacy, add_bytes, legacy_bytes, line, model_of

from agentmem_nb.store import JsonlFile, MemoryStore, MessageFile
from agentmem_nb.store import line_index as line_index_module

ZONE = ZoneInfo("Asia/Shanghai")
SESSION = "s1"
# Casefolding stressors (ß -> ss, Kelvin sign -> k, dotted capital I -> i + combining dot), CJK, astral, NUL.
ALPHABET = "aAbBsSß\u212akK İi蓝莓é😀\"\\\x00 "
WORDS = ["ss", "k", "i", "蓝", "😀", "\x00", "a b", "é"]
# Timestamps: plain ones, and the kinds that must leave the bulk path (calendar edges, unreadable, missing, not text).
TIMES = ["2026-04-08T10:00:00+08:00", "2026-04-08T09:15:00", "0001-01-01T00:00:00+00:00",
         "9999-12-31T23:59:59-05:00", "yesterday-ish", None, 42]


@st.composite
def plain_records(draw: st.DrawFn) -> dict[str, Any]:
    record: dict[str, Any] = {"role": draw(st.sampled_from(["user", "assistant"])),
                              "content": draw(st.text(alphabet=ALPHABET, max_size=12)), "tags": ["session"]}
    ts = draw(st.sampled_from(TIMES[:2] * 4 + TIMES[2:]))  # mostly plain
    if ts is not None:
        record["ts"] = ts
    return record


lines_strategy = st.lists(
    st.one_of(
        plain_records().map(lambda r: ("plain", r)),
        plain_records().map(lambda r: ("plain", r)),
        st.builds(Legacy, st.sampled_from(LEGACY_KINDS), st.text(alphabet=ALPHABET, max_size=6),
                  st.sampled_from([0, 1, 5]), st.sampled_from(["aware", "naive", "missing", "garbage"]))
        .map(lambda op: ("legacy", op)),
        st.integers(-2, 0).map(lambda back: ("reused_id", back)),  # an id at or below one already used
    ),
    max_size=40,
)


def build(items: list[tuple[str, Any]]) -> bytes:
    data = b""
    for kind, value in items:
        next_id = model_of(data).next_id
        if kind == "plain":
            data += line({**value, "message_id": next_id})
        elif kind == "legacy":
            data += legacy_bytes(value, next_id)
        else:
            data += line({"ts": TIMES[0], "role": "user", "content": "again", "message_id": max(1, next_id - 1 + value)})
    return data


@contextmanager
def chunk_size(size: int) -> Iterator[None]:
    with mock.patch.object(line_index_module, "CHUNK", size):
        yield


@contextmanager
def bulk_disabled() -> Iterator[None]:
    with mock.patch.object(JsonlFile, "_index_block", lambda self, block, offset: False):
        yield


def observe(root: Path, *, search_first: bool) -> dict[str, Any]:
    """Everything a reader sees of the session file, from a fresh store (cold index)."""
    layer = MemoryStore(root, zone=ZONE).user("u").session(SESSION)
    with warnings.catch_warnings(record=True) as caught:  # skipped lines warn; both paths must warn alike
        warnings.simplefilter("always")
        # A search as the first operation folds the search text while indexing; otherwise it is built afterwards.
        first_hits = [m.message_id for m in layer.search("s", limit=500)] if search_first else len(layer)
    snap = layer._file.index_snapshot()
    messages = layer.messages()
    return {
        "first_hits": first_hits,
        "warnings": [str(w.message) for w in caught],
        "ids": snap.ids.tolist(),
        "offsets": snap.offsets.tolist(),
        "end": snap.end,
        "next_id": layer.next_id,
        "problems": [(p.kind, p.line, p.count) for p in layer.problems()],
        "messages": [(m.message_id, m.ts, m.role, m.content) for m in messages],
        "hits": {w: [m.message_id for m in layer.search(w, limit=500)] for w in WORDS},
        "bulk": layer.stats.lines_bulk,
    }


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=lines_strategy, chunk=st.sampled_from([64, 200, 1000, 1 << 20]), search_first=st.booleans())
def test_bulk_and_per_line_indexing_see_the_same_file(items: list[tuple[str, Any]], chunk: int,
                                                      search_first: bool) -> None:
    data = build(items)
    with tempfile.TemporaryDirectory() as tmp:
        add_bytes(Path(tmp) / "u" / "sessions" / f"{SESSION}.jsonl", data)
        with chunk_size(chunk), bulk_disabled():
            expected = observe(Path(tmp), search_first=search_first)
        with chunk_size(chunk):
            got = observe(Path(tmp), search_first=search_first)
    assert expected.pop("bulk") == 0  # the switch really turned the bulk path off
    got.pop("bulk")  # how much the bulk path took is counted in the tests below
    assert got == expected


def _session_path(root: Path) -> Path:
    return root / "u" / "sessions" / f"{SESSION}.jsonl"


def test_a_file_the_store_wrote_is_indexed_entirely_in_bulk(tmp_path: Path) -> None:
    mem = MemoryStore(tmp_path, zone=ZONE).user("u")
    for i in range(300):
        mem.append(SESSION, "user" if i % 2 else "assistant", f"message {i} Straße")
    with chunk_size(4096):  # many blocks
        layer = MemoryStore(tmp_path, zone=ZONE).user("u").session(SESSION)
        assert [m.message_id for m in layer.search("STRASSE", limit=3)] == [298, 299, 300]
    assert layer.stats.lines_indexed == 300
    assert layer.stats.lines_bulk == 300


def test_one_odd_line_sends_only_its_own_block_to_the_per_line_path(tmp_path: Path) -> None:
    path = _session_path(tmp_path)
    mem = MemoryStore(tmp_path, zone=ZONE).user("u")
    for i in range(100):
        mem.append(SESSION, "user", f"before {i}")
    add_bytes(path, b'{"role": "user", "content": "legacy, no id"}\n')
    for i in range(100):
        mem.append(SESSION, "user", f"after {i}")
    block_lines = 4096 // len(line({"ts": "2026-04-08T10:00:00.000000+08:00", "role": "user", "content": "after 10",
                                    "tags": ["session"], "meta": {}, "message_id": 150}))
    with chunk_size(4096):
        layer = MemoryStore(tmp_path, zone=ZONE).user("u").session(SESSION)
        assert len(layer) == 201
    assert [m.message_id for m in layer.window(101, 1, 1).messages] == [100, 101, 102]
    assert layer.stats.lines_indexed == 201
    # Everything but the block holding the legacy line (about block_lines lines) went through the bulk path.
    assert 201 - 2 * block_lines <= layer.stats.lines_bulk < 201


def test_a_warm_reader_indexes_new_appends_in_bulk(tmp_path: Path) -> None:
    reader = MemoryStore(tmp_path, zone=ZONE).user("u").session(SESSION)
    writer = MemoryStore(tmp_path, zone=ZONE).user("u")
    writer.append(SESSION, "user", "first")
    assert [m.content for m in reader.search("first")] == ["first"]
    for i in range(50):
        writer.append(SESSION, "assistant", f"reply {i} ZANZIBAR")
    assert [m.message_id for m in reader.search("zanzibar", limit=2)] == [50, 51]
    assert (reader.stats.lines_indexed, reader.stats.lines_bulk) == (51, 51)


def test_content_with_nul_takes_the_per_line_path_and_still_matches_only_itself(tmp_path: Path) -> None:
    mem = MemoryStore(tmp_path, zone=ZONE).user("u")
    mem.append(SESSION, "user", "a\x00b")
    mem.append(SESSION, "user", "a b")
    layer = MemoryStore(tmp_path, zone=ZONE).user("u").session(SESSION)
    assert [m.content for m in layer.search("a\x00b")] == ["a\x00b"]
    assert layer.stats.lines_bulk == 0


def test_the_hook_refusing_leaves_the_index_untouched(tmp_path: Path) -> None:
    """A subclass hook that refuses the block must see the per-line path redo it from a clean state."""
    path = _session_path(tmp_path)
    for i in range(1, 6):
        add_bytes(path, line({"ts": "2026-04-08T10:00:00+08:00", "role": "user", "content": f"m{i}", "message_id": i}))
    with mock.patch.object(MessageFile, "_on_records", lambda self, records, ids: False):
        layer = MemoryStore(tmp_path, zone=ZONE).user("u").session(SESSION)
        assert layer._file.index_snapshot().ids.tolist() == [1, 2, 3, 4, 5]
    assert (layer.stats.lines_indexed, layer.stats.lines_bulk) == (5, 0)
    assert layer.next_id == 6


def test_integers_beyond_64_bits_read_back_exactly(tmp_path: Path) -> None:
    """orjson would turn them into floats (dropping digits); the store keeps what the line says, in reads and in the
    search text of non-text content, whichever indexing path took the line."""
    big = 12345678901234567890123
    mem = MemoryStore(tmp_path, zone=ZONE).user("u")
    for i in range(5):
        mem.append(SESSION, "user", f"plain {i}")
    add_bytes(_session_path(tmp_path), line({"ts": TIMES[0], "role": "user", "content": {"n": big},
                                             "meta": {"n": -big}, "message_id": 6}))
    layer = MemoryStore(tmp_path, zone=ZONE).user("u").session(SESSION)
    got = layer.get(6)
    assert got is not None and got.content == json.dumps({"n": big}) and got.meta == {"n": -big}
    assert [m.message_id for m in layer.search(str(big))] == [6]
    assert layer.messages()[-1].meta == {"n": -big}
