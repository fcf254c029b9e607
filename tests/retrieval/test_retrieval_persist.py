"""The persisted retrieval index (``{user}/.index/retrieval/``): used when every file it covers is unchanged but
for appends, ignored otherwise, and never a different answer from the index built from the files.

Cost is asserted in records tokenised (``FileFollower.records_read``), not seconds.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.retrieval import IndexConfig, TokenizerConfig, rank_hits, user_index
from agentmem_nb.store.index_cache import MIN_RECORDS

REPO = Path(__file__).resolve().parents[2]
ZONE = _dt.timezone(_dt.timedelta(hours=8))
START = _dt.datetime(2026, 4, 6, 8, 0, tzinfo=ZONE)
N = MIN_RECORDS + 400  # messages written (each to its session and its day file)
QUERIES = ("coffee in Lyon", "budget meeting 咖啡", "guitar lesson", "n123 tea")
STEP = _dt.timedelta(seconds=60)


def _content(i: int) -> str:
    words = ["coffee" if i % 7 == 0 else "tea", "Lyon" if i % 11 == 0 else "Paris",
             "budget meeting" if i % 5 == 0 else "walk", "guitar lesson" if i % 97 == 0 else "", f"n{i}"]
    return " ".join(w for w in words if w) + (" 咖啡" if i % 13 == 0 else "")


def _store(root: Path) -> MemoryStore:
    """A fresh store object: nothing indexed in this process (as in a new process)."""
    return MemoryStore(root, zone=ZONE, clock=lambda: START)


def _write(root: Path, first: int, count: int) -> None:
    user = _store(root).user("alice")
    for i in range(first, first + count):
        # Two sessions, days of ~1000 messages: several files in each kind index.
        user.append(f"s{i // 1500}", "user" if i % 2 else "assistant", _content(i), ts=START + i * STEP)


def _answers(root: Path) -> dict[str, Any]:
    """What a fresh process gets: the ranked hits of a few queries over days and over sessions, and the index."""
    from agentmem_nb.retrieval import Scope

    user = _store(root).user("alice")
    out: dict[str, Any] = {}
    for query in QUERIES:
        for scope in (None, Scope.everything(layer="session")):
            hits = rank_hits(user, query, scope=scope, limit=15)
            out[(query, scope)] = [(h.layer, h.key, h.message.message_id, h.score, h.signals, h.matched_terms)
                                   for h in hits]
    out["index"] = user_index(user)
    return out


def _same(seen: dict[str, Any], expected: dict[str, Any]) -> None:
    for key, value in expected.items():
        if key != "index":
            assert seen[key] == value, key
    for kind in ("session", "daily"):
        mine, theirs = seen["index"].kinds[kind], expected["index"].kinds[kind]
        assert mine.terms.same_as(theirs.terms), kind
        arrays, other = mine.arrays(), theirs.arrays()
        for name in ("lengths", "file_of", "position_of", "days", "prev", "next"):
            assert (getattr(arrays, name).whole() == getattr(other, name).whole()).all(), (kind, name)
        assert [(f.key, list(f.message_ids), list(f.gids), bytes(f.asks)) for f in mine.files] == \
               [(f.key, list(f.message_ids), list(f.gids), bytes(f.asks)) for f in theirs.files]


def _reference(root: Path, tmp_path: Path) -> dict[str, Any]:
    copy = tmp_path / "reference"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy)
    shutil.rmtree(copy / "alice" / ".index", ignore_errors=True)
    return _answers(copy)


def _records_read(answers: dict[str, Any]) -> int:
    return sum(f.records_read for kind in answers["index"].kinds.values() for f in kind.files)


def _cache_files(root: Path) -> list[Path]:
    return sorted((root / "alice" / ".index" / "retrieval").glob("*.bin"))


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("template") / "mem"
    _write(root, 0, N)
    return root


@pytest.fixture
def built(template: Path, tmp_path: Path) -> Path:
    """A user whose retrieval caches (days and sessions) were written by an earlier reader."""
    root = tmp_path / "mem"
    shutil.copytree(template, root)
    shutil.rmtree(root / "alice" / ".index", ignore_errors=True)  # copied inodes: the template's cache is stale
    first = _answers(root)
    assert _records_read(first) == 2 * N  # built from the files: every message of both kinds tokenised
    assert len(_cache_files(root)) == 2
    return root


def test_a_fresh_reader_with_a_valid_cache_tokenises_nothing_and_ranks_the_same(built: Path, tmp_path: Path) -> None:
    seen = _answers(built)
    assert _records_read(seen) == 0
    _same(seen, _reference(built, tmp_path))


def test_a_fresh_process_uses_the_cache(built: Path) -> None:
    code = textwrap.dedent("""
        import datetime as dt, sys
        from agentmem_nb import MemoryStore
        from agentmem_nb.retrieval import rank_hits, user_index
        user = MemoryStore(sys.argv[1], zone=dt.timezone(dt.timedelta(hours=8))).user("alice")
        hits = rank_hits(user, "coffee in Lyon", limit=5)
        read = sum(f.records_read for k in user_index(user).kinds.values() for f in k.files)
        print(len(hits), read)
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", code, str(built)], capture_output=True, text=True, env=env,
                          cwd=REPO, timeout=120, check=True)
    assert done.stdout.split() == ["5", "0"]


def _append(root: Path) -> None:
    _write(root, N, 150)


def _day_file(root: Path) -> Path:
    return sorted((root / "alice" / "daily").glob("*.jsonl"))[1]


def _rewrite_day_in_place(root: Path) -> None:
    path = _day_file(root)
    # Shorter lines: the bytes before the indexed end move. (An in-place edit that keeps every length is what the
    # store's rule cannot see, for its live index as for this cache: see store/jsonl.py, _still_ends_a_line.)
    data = path.read_bytes().replace(b"coffee", b"cocoa")
    with open(path, "r+b") as handle:  # same inode
        handle.truncate(0)
        handle.write(data)


def _replace_day(root: Path) -> None:
    path = _day_file(root)
    lines = path.read_bytes().splitlines(keepends=True)
    tmp = path.with_name("edit.tmp")
    tmp.write_bytes(b"".join(lines[: len(lines) // 2]))
    os.replace(tmp, path)


def _delete_day(root: Path) -> None:
    _day_file(root).unlink()


def _truncate_session(root: Path) -> None:
    path = root / "alice" / "sessions" / "s0.jsonl"
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


def _corrupt_cache(root: Path) -> None:
    for path in _cache_files(root):
        data = bytearray(path.read_bytes())
        data[len(data) * 2 // 3] ^= 0x01
        path.write_bytes(bytes(data))


def _cut_cache(root: Path) -> None:
    for path in _cache_files(root):
        path.write_bytes(path.read_bytes()[:-1000])


def _foreign_cache(root: Path) -> None:
    for path in _cache_files(root):
        path.write_bytes(os.urandom(4096))


def _swap_kinds(root: Path) -> None:
    """The sessions' cache where the days' should be and the other way round: other files, other keys."""
    days, sessions = (p for p in sorted(_cache_files(root), key=lambda p: not p.name.startswith("daily")))
    tmp = days.with_name("swap")
    days.rename(tmp)
    sessions.rename(days)
    tmp.rename(sessions)


def _copied_folder(root: Path) -> None:
    user = root / "alice"
    shutil.copytree(user, root / "copy")
    shutil.rmtree(user)
    (root / "copy").rename(user)


STALE = {
    "appended since": _append,
    "a day file rewritten in place": _rewrite_day_in_place,
    "a day file replaced": _replace_day,
    "a day file deleted": _delete_day,
    "a session file truncated": _truncate_session,
    "cache corrupted": _corrupt_cache,
    "cache cut short": _cut_cache,
    "cache of another format": _foreign_cache,
    "caches of the other kind": _swap_kinds,
    "folder copied, cache and all": _copied_folder,
}


@pytest.mark.parametrize("change", list(STALE.values()), ids=list(STALE))
def test_a_stale_or_damaged_cache_ranks_exactly_as_no_cache(built: Path, tmp_path: Path, change) -> None:
    change(built)
    expected = _reference(built, tmp_path)
    seen = _answers(built)
    _same(seen, expected)
    if change is _append:
        assert _records_read(seen) == 2 * 150  # only the appended messages, in both kinds
    # And what the reader left behind gives the same answers again.
    _same(_answers(built), expected)


def test_another_configuration_has_its_own_cache(built: Path) -> None:
    user = _store(built).user("alice")
    other = IndexConfig(tokenizer=TokenizerConfig(), speaker=False)
    rank_hits(user, "coffee", limit=3)
    index = user_index(user, other)
    index.view("daily")
    assert sum(f.records_read for f in index.kinds["daily"].files) == N  # not served the other config's postings
    assert len(_cache_files(built)) == 3


_READER = textwrap.dedent("""
    import datetime as dt, sys
    from agentmem_nb import MemoryStore
    from agentmem_nb.retrieval import rank_hits
    root, rounds = sys.argv[1], int(sys.argv[2])
    for r in range(rounds):
        user = MemoryStore(root, zone=dt.timezone(dt.timedelta(hours=8))).user("alice")
        for hit in rank_hits(user, "coffee Lyon", limit=10):
            number = int(hit.message.content.split(" n")[-1].split()[0])
            terms = {t.term for t in hit.matched_terms}
            if "coffee" in terms and "coffee" not in hit.message.content:
                print("FAIL term", hit, flush=True); sys.exit(1)
            if hit.layer == "daily" and hit.message.message_id < 1:
                print("FAIL id", hit, flush=True); sys.exit(1)
            if hit.layer == "session" and hit.message.message_id != number - 1500 * (number // 1500) + 1:
                print("FAIL session id", number, hit.message.message_id, flush=True); sys.exit(1)
        for hit in rank_hits(user, "coffee Lyon", limit=10,
                             scope=__import__("agentmem_nb.retrieval").retrieval.Scope.everything(layer="session")):
            number = int(hit.message.content.split(" n")[-1].split()[0])
            if hit.message.message_id != number - 1500 * (number // 1500) + 1:
                print("FAIL session id", number, hit.message.message_id, flush=True); sys.exit(1)
    print("ok", flush=True)
""")


def test_readers_writing_and_loading_caches_while_a_writer_appends_never_rank_wrongly(built: Path,
                                                                                     tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    writer_code = textwrap.dedent(f"""
        import datetime as dt, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from pathlib import Path
        from test_retrieval_persist import _write
        _write(Path(sys.argv[1]), {N}, 1200)
        print("ok", flush=True)
    """)
    writer = subprocess.Popen([sys.executable, "-c", writer_code, str(built)], env=env, cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    readers = [subprocess.Popen([sys.executable, "-c", _READER, str(built), "6"], env=env, cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=600) for p in (writer, *readers)]
    for process, (out, err) in zip((writer, *readers), outputs):
        assert process.returncode == 0 and out.strip().endswith("ok"), (out, err)
    _same(_answers(built), _reference(built, tmp_path))
