"""The persisted line index and search text (``{user}/.index/``): used when valid, ignored when stale, never wrong.

Cost is asserted in bytes read from the data file and lines parsed (IOStats), not seconds. Every stale case is
compared with the same reads made with no cache at all: the cache may only ever change how much is read.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.store.index_cache import MIN_RECORDS, cache_path

from store_testlib import REPO

ZONE = _dt.timezone(_dt.timedelta(hours=8))
START = _dt.datetime(2026, 4, 8, 9, 0, tzinfo=ZONE)
N = MIN_RECORDS + 500


def _clock() -> _dt.datetime:
    return START


def _store(root: Path) -> MemoryStore:
    """A fresh store object: nothing indexed in this process (as in a new process)."""
    return MemoryStore(root, zone=ZONE, clock=_clock)


def _content(i: int) -> str:
    words = ["coffee" if i % 7 == 0 else "tea", "Lyon" if i % 11 == 0 else "Paris", f"n{i}"]
    return " ".join(words) + (" 咖啡" if i % 13 == 0 else "")


def _write_session(root: Path, first: int, count: int, *, session: str = "s1") -> Path:
    """Append ``count`` messages through the store (the format and anchors of real files)."""
    layer = _store(root).user("alice").session(session)
    for i in range(first, first + count):
        layer._file.append({"ts": (START + _dt.timedelta(seconds=i)).isoformat(), "role": "user", "content": _content(i)})
    return layer.path


def _answers(root: Path, session: str = "s1") -> dict[str, Any]:
    """What a fresh process sees: length, next id, windows, searches, problems."""
    layer = _store(root).user("alice").session(session)
    total = len(layer)
    anchors = [1, 2, total // 2, total - 1, total, total + 5]
    return {
        "len": total,
        "next_id": layer.next_id,
        "windows": [[(m.message_id, m.content, m.ts) for m in layer.window(a, 3, 3).messages] for a in anchors],
        "search": {k: [(m.message_id, m.content) for m in layer.search(k, limit=30)]
                   for k in ("coffee", "LYON", "咖啡", "n1", "absent-word", "")},
        "problems": [(p.kind, p.line) for p in layer.problems()],
        "stats": layer.stats,
    }


def _without_stats(answers: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answers.items() if k != "stats"}


def _reference(root: Path, tmp_path: Path) -> dict[str, Any]:
    """The answers with no cache at all (a copy of the data, its cache folder removed)."""
    copy = tmp_path / "reference"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy)
    shutil.rmtree(copy / "alice" / ".index", ignore_errors=True)
    return _without_stats(_answers(copy))


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A user with one session of N messages whose caches (lines and text) were written by an earlier reader."""
    root = tmp_path / "mem"
    path = _write_session(root, 0, N)
    _answers(root)  # the first reader builds the index and the search text, and keeps both
    assert cache_path(path, "lines").is_file() and cache_path(path, "text").is_file()
    return root


def test_a_fresh_process_with_a_valid_cache_reads_a_window_without_reading_the_file(built: Path) -> None:
    code = textwrap.dedent("""
        import datetime as dt, json, sys
        from agentmem_nb import MemoryStore
        layer = MemoryStore(sys.argv[1], zone=dt.timezone(dt.timedelta(hours=8))).user("alice").session("s1")
        window = layer.window(1000, 5, 5)
        hits = layer.search("lyon", limit=5)
        print(json.dumps({"ids": [m.message_id for m in window.messages], "hits": [m.message_id for m in hits],
                          "bytes_read": layer.stats.bytes_read, "lines": layer.stats.lines_indexed,
                          "size": layer.path.stat().st_size}))
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code, str(built)], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120, check=True)
    seen = json.loads(done.stdout)
    assert seen["ids"] == list(range(995, 1006))
    assert len(seen["hits"]) == 5 and all(_content(i - 1).startswith(("tea Lyon", "coffee Lyon")) for i in seen["hits"])
    # The file's size is what a rebuild reads; with the cache: the signature (2 x 256 bytes), the one-byte rule,
    # eleven window lines and five hit lines.
    assert seen["lines"] == 0
    assert seen["bytes_read"] < 4096 < seen["size"]


def test_a_process_that_only_scans_keeps_the_line_index_too(tmp_path: Path) -> None:
    """The retrieval index follows files through scan alone: that must keep the line cache as sync does, or every
    fresh process that only ranks rebuilds the line index of every file it ranks (2.5 s at 1M)."""
    root = tmp_path / "mem"
    path = _write_session(root, 0, N)
    layer = MemoryStore(root, zone=_dt.timezone(_dt.timedelta(hours=8))).user("alice").session("s1")
    assert layer.scan().stop == N
    assert cache_path(path, "lines").is_file()
    fresh = MemoryStore(root, zone=_dt.timezone(_dt.timedelta(hours=8))).user("alice").session("s1")
    fresh.scan()
    assert fresh.stats.lines_indexed == 0


def _append_elsewhere(root: Path) -> None:
    _write_session(root, N, 300)


def _rewrite_same_inode(root: Path) -> None:
    path = root / "alice" / "sessions" / "s1.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[10] = lines[10].replace(b"Paris", b"Rome!")  # same length: the cached end's bytes still match...
    lines[-1] = lines[-1].replace(b"tea", b"TEA!")  # ...but the last line is longer, so they no longer do
    with open(path, "r+b") as handle:  # in place: same inode, as `cat new > file` does
        handle.truncate(0)
        handle.write(b"".join(lines))


def _replace_file(root: Path) -> None:
    path = root / "alice" / "sessions" / "s1.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    tmp = path.with_name("edited.tmp")
    tmp.write_bytes(b"".join(lines[: N // 2]))  # an editor's save: a new file renamed over, half as long
    os.replace(tmp, path)


def _truncate_file(root: Path) -> None:
    path = root / "alice" / "sessions" / "s1.jsonl"
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(size // 3)  # cut mid-line: a torn tail, as after a crash


def _shrink_then_regrow(root: Path) -> None:
    path = root / "alice" / "sessions" / "s1.jsonl"
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    with open(path, "r+b") as handle:  # same inode, longer than before, different bytes at the cached end
        handle.truncate(0)
        handle.write(b"".join(lines[:100]) + b"".join(lines[50:]))


def _corrupt_lines_cache(root: Path) -> None:
    path = cache_path(root / "alice" / "sessions" / "s1.jsonl", "lines")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # a flipped byte among the ids and offsets
    path.write_bytes(bytes(data))


def _corrupt_text_cache(root: Path) -> None:
    path = cache_path(root / "alice" / "sessions" / "s1.jsonl", "text")
    data = bytearray(path.read_bytes())
    spot = data.rfind(b"lyon")
    data[spot : spot + 4] = b"lxon"  # a hit would silently vanish
    path.write_bytes(bytes(data))


def _truncate_caches(root: Path) -> None:
    for suffix in ("lines", "text"):
        path = cache_path(root / "alice" / "sessions" / "s1.jsonl", suffix)
        path.write_bytes(path.read_bytes()[: path.stat().st_size - 100])


def _header_only(root: Path) -> None:
    for suffix in ("lines", "text"):
        path = cache_path(root / "alice" / "sessions" / "s1.jsonl", suffix)
        path.write_bytes(path.read_bytes()[:40])


def _foreign_caches(root: Path) -> None:
    for suffix in ("lines", "text"):
        cache_path(root / "alice" / "sessions" / "s1.jsonl", suffix).write_bytes(os.urandom(5000))


def _cache_of_another_file(root: Path) -> None:
    """The caches of session s2 (a different file, different content, same length) put in place of s1's."""
    other = root / "alice" / "sessions" / "s1.jsonl"
    lines = other.read_bytes().splitlines(keepends=True)
    twin = root / "alice" / "sessions" / "s2.jsonl"
    twin.write_bytes(b"".join(line.replace(b"coffee", b"cocoa!") for line in lines))
    _answers(root, "s2")
    for suffix in ("lines", "text"):
        shutil.copyfile(cache_path(twin, suffix), cache_path(other, suffix))


def _copied_folder(root: Path) -> None:
    """The user folder copied (cache included) and the copy put in place: every file is another inode."""
    user = root / "alice"
    copy = root / "alice-copy"
    shutil.copytree(user, copy)
    shutil.rmtree(user)
    copy.rename(user)
    with open(user / "sessions" / "s1.jsonl", "ab") as handle:  # and the copy goes on differently
        handle.write(json.dumps({"ts": START.isoformat(), "role": "user", "content": "coffee late"}).encode() + b"\n")


def _links_in_place(root: Path) -> None:
    """Each cache file replaced by a link to a valid copy of itself: never followed, so a miss."""
    for suffix in ("lines", "text"):
        path = cache_path(root / "alice" / "sessions" / "s1.jsonl", suffix)
        real = path.with_name(path.name + ".real")
        path.rename(real)
        path.symlink_to(real.name)


STALE = {
    "appended by another writer": _append_elsewhere,
    "rewritten in place (same inode)": _rewrite_same_inode,
    "replaced by an editor (new inode)": _replace_file,
    "truncated mid-line": _truncate_file,
    "shrunk then regrown in place": _shrink_then_regrow,
    "lines cache corrupted": _corrupt_lines_cache,
    "text cache corrupted": _corrupt_text_cache,
    "caches cut short": _truncate_caches,
    "caches cut to their header": _header_only,
    "caches of another format": _foreign_caches,
    "caches of another file": _cache_of_another_file,
    "folder copied, cache and all": _copied_folder,
    "caches are links": _links_in_place,
}


@pytest.mark.parametrize("change", list(STALE.values()), ids=list(STALE))
def test_a_stale_or_damaged_cache_gives_exactly_the_answers_of_no_cache(built: Path, tmp_path: Path, change) -> None:
    change(built)
    expected = _reference(built, tmp_path)
    seen = _answers(built)
    assert _without_stats(seen) == expected
    # And what the fresh reader left behind is again a cache that gives the same answers.
    assert _without_stats(_answers(built)) == expected


def test_appends_since_the_cache_are_read_and_nothing_else(built: Path, tmp_path: Path) -> None:
    size = (built / "alice" / "sessions" / "s1.jsonl").stat().st_size
    _append_elsewhere(built)
    grown = (built / "alice" / "sessions" / "s1.jsonl").stat().st_size
    seen = _answers(built)
    assert _without_stats(seen) == _reference(built, tmp_path)
    assert seen["stats"].lines_indexed == 300  # only the appended lines were parsed
    assert seen["stats"].bytes_read < (grown - size) + 64 * 1024  # their bytes, plus windows and hits


def test_without_the_cache_the_first_read_parses_the_whole_file(built: Path) -> None:
    """The control of the cost tests above: the same reads with the cache folder gone parse every line."""
    shutil.rmtree(built / "alice" / ".index")
    assert _answers(built)["stats"].lines_indexed == N


def test_a_valid_cache_adds_no_problem_and_the_user_list_ignores_it(built: Path) -> None:
    store = _store(built)
    assert store.users() == ["alice"]
    assert store.user("alice").problems() == []


def test_small_files_get_no_cache(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    path = _write_session(root, 0, 50)
    _answers(root)
    assert not (root / "alice" / ".index").exists() and path.is_file()


def test_a_file_with_findings_is_not_cached(tmp_path: Path) -> None:
    """A bad line makes the index report problems; they come from the indexer each time, never from a cache."""
    root = tmp_path / "mem"
    path = _write_session(root, 0, N)
    with open(path, "ab") as handle:
        handle.write(b"not json\n")
    with pytest.warns(Warning):
        first = _answers(root)
    assert not cache_path(path, "lines").exists()
    with pytest.warns(Warning):
        again = _answers(root)
    assert _without_stats(first) == _without_stats(again) and again["stats"].lines_indexed == N


def test_a_read_only_cache_folder_only_costs_the_cache(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    root = tmp_path / "mem"
    _write_session(root, 0, N)
    (root / "alice" / ".index").mkdir(mode=0o500)
    try:
        expected = _answers(root)
        assert not any((root / "alice" / ".index").iterdir())
        assert _without_stats(_answers(root)) == _without_stats(expected)
    finally:
        (root / "alice" / ".index").chmod(0o700)


def _header(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    _magic, length = struct.unpack("<8sQ", data[:16])
    return json.loads(data[16 : 16 + length])


def test_the_cache_is_rewritten_as_the_file_grows(built: Path) -> None:
    path = built / "alice" / "sessions" / "s1.jsonl"
    before = {suffix: _header(cache_path(path, suffix))["count"] for suffix in ("lines", "text")}
    _write_session(built, N, 100)  # a little more: not worth rewriting the cache yet
    _answers(built)
    little = {suffix: _header(cache_path(path, suffix))["count"] for suffix in ("lines", "text")}
    _write_session(built, N + 100, N // 2)  # half as much again: over the quarter that makes a new cache worth it
    _answers(built)
    after = {suffix: _header(cache_path(path, suffix))["count"] for suffix in ("lines", "text")}
    assert before == little == {"lines": N, "text": N}
    assert after == {"lines": N + 100 + N // 2, "text": N + 100 + N // 2}


# ---------------------------------------------------------------------------------------------- real processes

_READER = textwrap.dedent("""
    import datetime as dt, sys
    from agentmem_nb import MemoryStore
    root, rounds = sys.argv[1], int(sys.argv[2])
    zone = dt.timezone(dt.timedelta(hours=8))
    for r in range(rounds):
        layer = MemoryStore(root, zone=zone).user("alice").session("s1")  # fresh: loads whatever cache is there
        total = len(layer)
        for anchor in (1, total // 3, total - 2, total):
            ids = [m.message_id for m in layer.window(anchor, 2, 2).messages]
            want = list(range(max(1, anchor - 2), anchor + 3))
            if ids != want[: len(ids)] or anchor not in ids:
                print("FAIL window", anchor, ids, total, flush=True); sys.exit(1)
            for m in layer.window(anchor, 2, 2).messages:
                if not m.content.endswith(f"n{m.message_id - 1}") and f"n{m.message_id - 1} " not in m.content:
                    print("FAIL content", m.message_id, m.content, flush=True); sys.exit(1)
        hits = [m.message_id for m in layer.search("coffee", limit=20)]
        if not hits or any((h - 1) % 7 for h in hits) or any(b - a != 7 for a, b in zip(hits, hits[1:])):
            print("FAIL search", hits, flush=True); sys.exit(1)
    print("ok", flush=True)
""")


def test_readers_loading_and_writing_caches_while_others_append_never_see_a_wrong_result(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    _write_session(root, 0, N)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    writer_code = textwrap.dedent("""
        import datetime as dt, sys
        from agentmem_nb import MemoryStore
        zone = dt.timezone(dt.timedelta(hours=8))
        start = dt.datetime(2026, 4, 8, 9, 0, tzinfo=zone)
        content = lambda i: " ".join(["coffee" if i % 7 == 0 else "tea", "Lyon" if i % 11 == 0 else "Paris",
                                      f"n{i}"]) + (" 咖啡" if i % 13 == 0 else "")
        layer = MemoryStore(sys.argv[1], zone=zone).user("alice").session("s1")
        for i in range(int(sys.argv[2]), int(sys.argv[2]) + 2500):
            layer._file.append({"ts": (start + dt.timedelta(seconds=i)).isoformat(), "role": "user", "content": content(i)})
        print("ok", flush=True)
    """)
    writer = subprocess.Popen([sys.executable, "-c", writer_code, str(root), str(N)], env=env, cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    readers = [subprocess.Popen([sys.executable, "-c", _READER, str(root), "12"], env=env, cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in (writer, *readers)]
    for process, (out, err) in zip((writer, *readers), outputs):
        assert process.returncode == 0 and out.strip().endswith("ok"), (out, err)
    expected = _reference(root, tmp_path)
    assert expected["len"] == N + 2500
    assert _without_stats(_answers(root)) == expected


def test_a_cache_write_cut_short_by_a_kill_is_ignored_and_reported_as_an_orphan(built: Path, tmp_path: Path) -> None:
    """What a writer killed inside ``atomic_write`` leaves: a temporary file beside the cache (no lock held on it).
    Readers never look at it; the folder check names it as an orphan to delete, like any other."""
    lines = cache_path(built / "alice" / "sessions" / "s1.jsonl", "lines")
    orphan = lines.with_name(f".{lines.name}.ab3de6gh.tmp")
    orphan.write_bytes(lines.read_bytes()[:1000])
    _append_elsewhere(built)
    assert _without_stats(_answers(built)) == _reference(built, tmp_path)
    found = _store(built).user("alice").problems()
    assert [(p.kind.name, Path(p.path).name) for p in found] == [("ORPHANED_TEMP_FILE", orphan.name)]
