"""Concurrent writers — processes and threads — never share an id, interleave bytes or lose a message."""

from __future__ import annotations

import datetime as _dt
import itertools
import json
import threading
from collections import defaultdict
from pathlib import Path

import pytest
from store_testlib import start_worker

from agentmem_nb import MemoryStore

FIXED = _dt.datetime(2026, 4, 8, 12, 0, tzinfo=_dt.timezone(_dt.timedelta(hours=8)))  # as in store_worker.py


def _run_workers(commands: list[list[str]]) -> None:
    """Start every worker, wait until all are set up, release them together, and wait for all to finish."""
    procs = [start_worker(*command) for command in commands]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        for proc in procs:
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            out, err = proc.communicate(timeout=240)
            assert proc.returncode == 0 and out.strip() == "done", err
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _check_file(path: Path, expected_contents: dict[str, int]) -> None:
    """Every line is whole JSON; ids run 1..n in file order; each writer's messages are all there, in its order."""
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"", "the file must end with a newline"
    records = [json.loads(raw) for raw in lines[:-1]]  # raises on any torn or interleaved line
    total = sum(expected_contents.values())
    assert [r["message_id"] for r in records] == list(range(1, total + 1))
    seen: dict[str, list[int]] = defaultdict(list)
    for record in records:
        tag, number = record["content"].split(":")
        seen[tag].append(int(number))
    assert {tag: numbers for tag, numbers in seen.items()} == {
        tag: list(range(count)) for tag, count in expected_contents.items()
    }


@pytest.mark.slow
def test_four_processes_append_to_one_session_and_one_day(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    count = 500
    # Two writers start warm (file indexed, ids from the index), two cold (ids from the file's tail).
    modes = ["warm", "cold", "warm", "cold"]
    _run_workers([["append", str(root), "alice", "s1", str(count), f"p{k}", mode] for k, mode in enumerate(modes)])
    expected = {f"p{k}": count for k in range(len(modes))}
    _check_file(root / "alice" / "sessions" / "s1.jsonl", expected)
    _check_file(root / "alice" / "daily" / f"{FIXED.date().isoformat()}.jsonl", expected)
    mem = MemoryStore(root, zone="Asia/Shanghai").user("alice")
    assert len(mem.session("s1")) == len(mem.daily(FIXED.date())) == 4 * count
    assert mem.problems() == []
    assert not list(root.rglob("*.quarantine"))


@pytest.mark.parametrize("sharing", ["one-store", "store-per-thread", "mixed"])
def test_threads_append_to_one_session(tmp_path: Path, sharing: str) -> None:
    root = tmp_path / "memory"
    shared = MemoryStore(root, zone="Asia/Shanghai", clock=lambda: FIXED)
    threads_count, count = 4, 150
    returned: dict[str, list[int]] = {}
    start = threading.Barrier(threads_count)
    failures: list[BaseException] = []

    def work(tag: str, own_store: bool) -> None:
        try:
            store = MemoryStore(root, zone="Asia/Shanghai", clock=lambda: FIXED) if own_store else shared
            mem = store.user("alice")
            start.wait()
            returned[tag] = [mem.append("s1", "user", f"{tag}:{i}").session.message_id for i in range(count)]
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            failures.append(exc)

    own = {"one-store": [False] * 4, "store-per-thread": [True] * 4, "mixed": [False, True, False, True]}[sharing]
    workers = [threading.Thread(target=work, args=(f"t{k}", own[k])) for k in range(threads_count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert failures == []
    expected = {f"t{k}": count for k in range(threads_count)}
    _check_file(root / "alice" / "sessions" / "s1.jsonl", expected)
    _check_file(root / "alice" / "daily" / f"{FIXED.date().isoformat()}.jsonl", expected)
    # the ids append() returned are the ids on disk, each handed out once, increasing within a thread
    all_ids = sorted(i for ids in returned.values() for i in ids)
    assert all_ids == list(range(1, threads_count * count + 1))
    assert all(ids == sorted(ids) for ids in returned.values())
    # the shared store's cached index agrees with a fresh read
    assert [m.message_id for m in shared.user("alice").session("s1").messages()] == all_ids


@pytest.mark.slow
def test_two_processes_add_notes_to_long_term_memory(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    count = 50
    _run_workers([["notes", str(root), "alice", str(count), tag] for tag in ("left", "right")])
    long_term = MemoryStore(root, zone="Asia/Shanghai").user("alice").long_term
    lines = long_term.lines()
    expected = {f"- {tag} note {i}" for tag in ("left", "right") for i in range(count)}
    assert len(lines) == 2 * count and set(lines) == expected
    history = long_term.history()
    assert [v.version for v in history] == list(range(1, 2 * count + 1))
    # each change starts from the text the previous one left: no read-modify-write was lost in between
    assert history[0].before == ""
    assert all(later.before == earlier.after for earlier, later in itertools.pairwise(history))
    assert history[-1].after == long_term.read()
    assert not [p for p in (root / "alice").iterdir() if p.name.endswith(".tmp")]
