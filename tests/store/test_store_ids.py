"""The next message id is the same whoever computes it: a process that never read the file (cold: from the tail's
proof) and one that indexed it (warm), both equal to the original demo's running rule read independently
(``store_testlib.model_of``: an id-less line takes next; next = max(next, id + 1)). Ids that repeat (a hand merge)
are kept and reported by ``problems()``.

The hard case for a tail is a merge whose higher ids lie far back: ``cat a.jsonl b.jsonl`` ends in lines that look
exactly like a store-written file's. Those lines state a ``byte_offset`` that is no longer where they are, so the
tail does not vouch for them and the whole file is indexed instead.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_testlib import add_bytes, model_of

from agentmem_nb import MemoryStore
from agentmem_nb.store import JsonlFile, ProblemKind

BOUND = 2 * 4096 + 1  # what test_store_cost allows a cold append to read


def _store_written(path: Path, contents: list[str]) -> bytes:
    """A file written by the store's appends (each by a fresh, cold file object), returned as bytes."""
    for content in contents:
        JsonlFile(path).append({"content": content})
    return path.read_bytes()


def _cold_and_warm(path: Path) -> tuple[int, int, JsonlFile]:
    """The id a cold and a warm append give to the file at ``path`` (each on its own copy)."""
    cold_copy = path.with_name("cold.jsonl")
    warm_copy = path.with_name("warm.jsonl")
    shutil.copyfile(path, cold_copy)
    shutil.copyfile(path, warm_copy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skipped bad lines warn; what is skipped is checked elsewhere
        cold = JsonlFile(cold_copy).append({"content": "cold"})["message_id"]
        warm_file = JsonlFile(warm_copy)
        warm_file.sync()
        warm = warm_file.append({"content": "warm"})["message_id"]
    return cold, warm, warm_file


@pytest.mark.parametrize("size", [1, 300], ids=["short", "longer than the tail chunk"])
def test_cat_of_two_store_files_appends_max_plus_one_and_reports_the_repeats(tmp_path: Path, size: int) -> None:
    pad = "x" * size
    a = _store_written(tmp_path / "a.jsonl", [f"a{i} {pad}" for i in range(1, 6)])  # ids 1..5
    b = _store_written(tmp_path / "b.jsonl", [f"b{i} {pad}" for i in range(1, 5)])  # ids 1..4
    merged = tmp_path / "s.jsonl"
    merged.write_bytes(a + b)
    cold, warm, warm_file = _cold_and_warm(merged)
    assert cold == warm == model_of(a + b).next_id == 6
    duplicates = [p for p in warm_file.problems() if p.kind is ProblemKind.DUPLICATE_ID]
    assert [(p.line, p.count) for p in duplicates] == [(6, 4)]
    assert "line 6 (#1)" in duplicates[0].detail and "line 9 (#4)" in duplicates[0].detail


def test_a_merge_whose_higher_ids_are_far_back_is_read_whole(tmp_path: Path) -> None:
    """The tail of the merged file (b's last 4 KB) holds only lines with consecutive ids: nothing to suspect."""
    a = _store_written(tmp_path / "a.jsonl", [f"a{i} " + "y" * 100 for i in range(1, 201)])  # ids 1..200
    b = _store_written(tmp_path / "b.jsonl", [f"b{i} " + "z" * 100 for i in range(1, 101)])  # ids 1..100
    merged = tmp_path / "s.jsonl"
    merged.write_bytes(a + b)
    cold, warm, warm_file = _cold_and_warm(merged)
    assert cold == warm == 201
    assert [p.count for p in warm_file.problems() if p.kind is ProblemKind.DUPLICATE_ID] == [100]


def test_legacy_lines_then_an_explicit_lower_id(tmp_path: Path) -> None:
    """Three id-less lines (1, 2, 3 by the rule), then an explicit 2: next is 4, and the 2 is a repeat."""
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"content": "a"}\n{"content": "b"}\n{"content": "c"}\n{"content": "d", "message_id": 2}\n')
    cold, warm, warm_file = _cold_and_warm(path)
    assert cold == warm == model_of(path.read_bytes()).next_id == 4
    assert [(p.line, p.count) for p in warm_file.problems() if p.kind is ProblemKind.DUPLICATE_ID] == [(4, 1)]


def test_a_file_the_store_never_appended_is_read_once_then_the_tail_suffices(tmp_path: Path) -> None:
    """No line vouches for what precedes it, so the first cold append indexes the file; its own line does vouch, so
    the next cold append reads only the tail again."""
    root = tmp_path / "memory"
    path = root / "alice" / "sessions" / "s1.jsonl"
    add_bytes(path, b"".join(json.dumps({"content": f"m{i}", "message_id": i}).encode() + b"\n"
                             for i in range(1, 5001)))
    size = path.stat().st_size
    costs = []
    for text in ("first", "second", "third"):
        mem = MemoryStore(root).user("alice")
        assert mem.append("s1", "user", text).session.message_id == 5000 + len(costs) + 1
        costs.append(mem.session("s1").stats.bytes_read)
    assert costs[0] >= size and costs[1] <= BOUND and costs[2] <= BOUND, costs


def test_a_clean_store_file_reports_no_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    _store_written(path, ["a", "b", "c"])
    assert JsonlFile(path).problems() == []


# ----------------------------------------------------------------------------------------------- property

_ID_VALUES = st.one_of(
    st.integers(1, 12), st.integers(1, 12), st.integers(13, 10**6), st.sampled_from([2**53 - 1, 2**53, 10**30]),
    st.sampled_from([0, -3, "7", "abc", True, 7.0, None, [1]]),
)
_raw_lines = st.one_of(
    st.builds(lambda mid, text: json.dumps({"content": text, "message_id": mid}).encode() + b"\n",
              _ID_VALUES, st.text("ab蓝", max_size=5)),
    st.builds(lambda text: json.dumps({"content": text}).encode() + b"\n", st.text("ab", max_size=5)),
    st.sampled_from([b"\n", b"   \n", b"not json\n", b"[1, 2]\n", b"\xff\xfe\n",
                     b'\xef\xbb\xbf{"message_id": 50}\n', b'{"message_id": 3, "byte_offset": 0}\n']),
)
_pads = st.integers(1, 6000).map(lambda n: json.dumps({"content": "p" * n}).encode() + b"\n")  # no id: takes next
_ops = st.one_of(
    st.tuples(st.just("raw"), _raw_lines),
    st.tuples(st.just("raw"), _raw_lines),
    st.tuples(st.just("pad"), _pads),
    st.tuples(st.just("store"), st.integers(1, 3)),  # appends through the store, to this file
    st.tuples(st.just("paste"), st.lists(_raw_lines, max_size=3), st.integers(1, 4)),  # cat a store-written file
)
_tails = st.sampled_from([b"", b"", b'{"content": "torn', b'{"content": "whole", "message_id": 9}', b"\xe8\x93"])


def _repaired(data: bytes) -> bytes:
    """``data`` as an append leaves it before writing: a complete last object gets its newline, a torn one goes."""
    *_, fragment = data.split(b"\n")
    if not fragment:
        return data
    try:
        whole = isinstance(json.loads(fragment.decode("utf-8")), dict)
    except ValueError:
        whole = False
    return data + b"\n" if whole else data[: len(data) - len(fragment)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_ops, max_size=12), tail=_tails)
def test_cold_append_equals_warm_append_equals_the_rule(ops: list[tuple], tail: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bad lines warn by design
        folder = Path(tmp)
        path = folder / "s.jsonl"
        path.touch()
        for n, op in enumerate(ops):
            if op[0] in ("raw", "pad"):
                add_bytes(path, op[1])
            elif op[0] == "store":
                for _ in range(op[1]):
                    expected = model_of(_repaired(path.read_bytes())).next_id
                    assert JsonlFile(path).append({"content": "s"})["message_id"] == expected
            else:  # another file, written by hand and then by the store, pasted in whole
                donor = folder / f"donor{n}.jsonl"
                add_bytes(donor, b"".join(op[1]))
                add_bytes(path, _store_written(donor, ["d"] * op[2]))
        add_bytes(path, tail)
        model = model_of(_repaired(path.read_bytes()))
        cold, warm, warm_file = _cold_and_warm(path)
        assert cold == warm == model.next_id
        ids = model.ids
        repeats = len(ids) - len(set(ids))
        assert [p.count for p in warm_file.problems() if p.kind is ProblemKind.DUPLICATE_ID] == (
            [repeats] if repeats else [])
