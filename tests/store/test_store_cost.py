"""Constant-cost append, proven by counting bytes read (``.stats``), never by timing.

Files of 100 and 100,000 lines are written directly (no append loop), then appended to by a cold store (never read
the file: the id comes from the file's tail) and by a warm one (file indexed: the id comes from the index). The bytes
read per append must be the same small number at both sizes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.store import MessageFile
from agentmem_nb.store.scan import CURSOR_TAIL

SMALL, LARGE = 100, 100_000
BOUND = 2 * 4096 + 1  # a tail chunk or two and the one-byte newline check: a constant, whatever the file size


def _write_session(root: Path, lines: int) -> Path:
    """A session as the store writes it, without an append loop: each line states its ``byte_offset`` (the proof a
    cold append takes the next id from; a file without it is indexed once, see test_store_ids.py)."""
    path = root / "alice" / "sessions" / "s1.jsonl"
    path.parent.mkdir(parents=True)
    template = (
        '{{"ts": "2026-04-08T10:00:00.000000+08:00", "role": "user", "content": "message {i:06d} about 蓝莓 and '
        'the weather", "tags": ["session"], "meta": {{"session_id": "s1"}}, "message_id": {i}, "byte_offset": {at}}}\n'
    )
    out = bytearray()
    for i in range(1, lines + 1):
        out += template.format(i=i, at=len(out)).encode("utf-8")
    path.write_bytes(bytes(out))
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Pristine roots holding a 100-line and a 100,000-line session; tests copy the file they append to."""
    out = {}
    for lines in (SMALL, LARGE):
        root = tmp_path_factory.mktemp(f"n{lines}")
        _write_session(root, lines)
        out[lines] = root
    return out


def _fresh_root(files: dict[int, Path], lines: int, tmp_path: Path) -> Path:
    root = tmp_path / f"n{lines}"
    target = root / "alice" / "sessions" / "s1.jsonl"
    target.parent.mkdir(parents=True)
    target.write_bytes((files[lines] / "alice" / "sessions" / "s1.jsonl").read_bytes())
    return root


def _store(root: Path) -> MemoryStore:
    return MemoryStore(root, zone="Asia/Shanghai")


def _cold_costs(root: Path, appends: int) -> list[int]:
    """Bytes the session layer read for each append, each by a brand-new store that never read the file."""
    costs = []
    for i in range(appends):
        mem = _store(root).user("alice")
        mem.append("s1", "user", f"cold {i}")
        costs.append(mem.session("s1").stats.bytes_read)
    return costs


def test_cold_append_reads_the_same_bytes_at_100_and_100k_lines(files: dict[int, Path], tmp_path: Path) -> None:
    per_size = {}
    for lines in (SMALL, LARGE):
        root = _fresh_root(files, lines, tmp_path)
        per_size[lines] = _cold_costs(root, 5)
        ids = [json.loads(raw)["message_id"] for raw in (root / "alice/sessions/s1.jsonl").read_bytes().splitlines()]
        assert ids == list(range(1, lines + 6))  # the tail-derived ids are right, too
    small, large = per_size[SMALL], per_size[LARGE]
    assert len(set(small)) == 1 and len(set(large)) == 1, per_size  # every append costs the same
    assert large[0] <= small[0] <= BOUND, per_size  # not larger at 1000x the lines


def test_a_store_that_never_reads_stays_constant_over_many_appends(files: dict[int, Path], tmp_path: Path) -> None:
    per_size = {}
    for lines in (SMALL, LARGE):
        layer = _store(_fresh_root(files, lines, tmp_path)).user("alice").session("s1")
        costs = []
        for i in range(20):
            before = layer.stats.bytes_read
            layer._file.append({"ts": "2026-04-08T10:00:00+08:00", "role": "user", "content": f"x{i}"})  # the raw line file
            costs.append(layer.stats.bytes_read - before)
        per_size[lines] = costs
        assert layer.stats.lines_indexed == 0  # it never indexed the file
    assert set(per_size[SMALL]) == set(per_size[LARGE]) and max(per_size[LARGE]) <= BOUND, per_size


def test_warm_append_reads_the_same_bytes_at_100_and_100k_lines(files: dict[int, Path], tmp_path: Path) -> None:
    per_size = {}
    for lines in (SMALL, LARGE):
        root = _fresh_root(files, lines, tmp_path)
        mem = _store(root).user("alice")
        layer = mem.session("s1")
        assert len(layer) == lines  # index the file once
        indexed = layer.stats.lines_indexed
        costs = []
        for i in range(20):
            before = layer.stats.bytes_read
            assert mem.append("s1", "user", f"warm {i}").session.message_id == lines + i + 1
            costs.append(layer.stats.bytes_read - before)
        assert layer.stats.lines_indexed == indexed + 20  # each append indexed its own line, nothing else
        per_size[lines] = costs
    assert per_size[SMALL] == per_size[LARGE] and max(per_size[LARGE]) <= BOUND, per_size


def test_a_reader_following_a_growing_file_reads_each_byte_once(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    writer = _store(root).user("alice")
    reader: MessageFile = _store(root).user("alice").session("s1")
    for i in range(300):
        writer.append("s1", "user", f"line {i} " + "蓝" * (i % 17))
        assert len(reader) == i + 1
        if i % 50 == 0:
            for _ in range(3):
                reader.sync()  # nothing new: reads nothing
    path = root / "alice" / "sessions" / "s1.jsonl"
    size = path.stat().st_size
    # Each byte once, plus, per catch-up after the first, the look at the bytes before the indexed end (the cursor
    # rule: unchanged means the new bytes were appended; a file rewritten in place is re-indexed instead of misread).
    ends = [len(raw) + 1 for raw in path.read_bytes().split(b"\n")[:-1]]
    looks = sum(min(CURSOR_TAIL, sum(ends[:i])) for i in range(1, 300))
    assert reader.stats.bytes_read == size + looks
    assert reader.stats.lines_indexed == 300


def test_window_and_search_cost_does_not_grow_with_the_file(files: dict[int, Path]) -> None:
    per_size = {}
    for lines in (SMALL, LARGE):
        layer = _store(files[lines]).user("alice").session("s1")
        len(layer)
        size = layer.path.stat().st_size
        assert layer.stats.bytes_read == size  # indexing reads the file once
        layer.window(1, 0, 0)
        assert layer.stats.bytes_read <= size + 2 * 200  # a window does not build the search text
        layer.search("warm-up")  # the first search builds the search text: one more pass over the file
        assert layer.stats.bytes_read <= 2 * size + 2 * 200
        line_size = max(len(raw) + 1 for raw in layer.path.read_bytes()[-2000:].splitlines()[-3:])
        before = layer.stats.bytes_read
        window = layer.window(lines // 2, 5, 5)
        window_cost = layer.stats.bytes_read - before
        assert [m.message_id for m in window.messages] == list(range(lines // 2 - 5, lines // 2 + 6))
        before = layer.stats.bytes_read
        hits = layer.search(f"message {lines - 3:06d}")
        search_cost = layer.stats.bytes_read - before
        assert [m.message_id for m in hits] == [lines - 3]
        assert window_cost <= 11 * line_size and search_cost <= line_size
        per_size[lines] = (window_cost, search_cost)
    assert per_size[LARGE][0] <= per_size[SMALL][0] + 11 * 12, per_size  # only the id and byte_offset digits differ
