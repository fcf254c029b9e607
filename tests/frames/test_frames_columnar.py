"""The columnar reader (pyarrow) gives exactly the exact reader's frame, and refuses — for the right reason — every
file where it could not prove that.

Each test builds a file, reads it with the columnar reader forced on (threshold 0, small segments and blocks) and
with it forced off, and compares the frames value for value and dtype for dtype; ``ReadStats`` says which reader ran.
"""

from __future__ import annotations

import datetime as _dt
import json
import random
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from agentmem_nb import MemoryStore, ToolCall
from agentmem_nb import frames as F
from agentmem_nb.frames import _fast

pytestmark = pytest.mark.filterwarnings("ignore::agentmem_nb.errors.MemoryDataWarning")

SH = _dt.timezone(_dt.timedelta(hours=8))
WORDS = ["lyon", "tea", "I", "Info", "Infinity", "NaN", "好", "蓝莓", "😀", "a\nb", 'quote "x"', "back\\slash", "\t",
         "\u2028", "\x00", "],[{", "-", ": Infinity", "", "é"]


def _content(rnd: random.Random) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 12)))


def clean_records(n: int, *, seed: int, daily: bool = False) -> list[dict]:
    """Records as the store writes them, with every variation the columnar reader must take as it is."""
    rnd = random.Random(seed)
    moment = _dt.datetime(2026, 3, 28, 23, 0, tzinfo=SH)  # crosses days (and a DST change in Paris)
    message_id = 0
    out = []
    for i in range(n):
        moment += _dt.timedelta(seconds=rnd.randint(0, 9000), microseconds=rnd.randint(0, 999_999))
        message_id += rnd.choice([1, 1, 1, 2, 17])
        record: dict = {"ts": moment.isoformat(timespec="microseconds"), "role": rnd.choice(["user", "assistant"]),
                        "content": _content(rnd), "tags": ["session"], "meta": {}, "message_id": message_id}
        kind = rnd.randrange(12)
        if kind == 0:
            record["ts"] = rnd.choice(["2026-04-08T10:00:01", "2026-04-08T02:00:03Z", "yesterday", None,
                                       "2026-04-08 10:00:15.000001+08:00", "2026-04-08T10:00:04.5+05:45"])
        elif kind == 1:
            for key in rnd.sample(["role", "content", "tags", "meta"], rnd.randint(1, 4)):
                if rnd.random() < 0.5:
                    record[key] = None  # null and missing both take the store's default
                else:
                    del record[key]
        elif kind == 2:
            record["tags"] = rnd.choice([[], [""], ["a", ""], ["x", "y", "x"], ["好"], ["session", "tool"]])
        elif kind == 3:
            calls = [ToolCall(rnd.choice(["search_session", "remember_note"]), {"keyword": _content(rnd)},
                              _content(rnd), id=f"c{i}", duration_ms=1.5).to_dict() for _ in range(rnd.randint(1, 3))]
            calls += rnd.choice([[], [None], [{"id": "no name"}], [{"name": "t", "input": "{\"k\": 1}"}]])
            record["meta"] = {"tool_calls": calls, "x": [1, {"y": None}]}
        elif kind == 4:
            record["meta"] = {"tool_calls": rnd.choice([[], None]), "extra": float("nan"),
                              "more": [float("inf"), float("-inf")]}  # NaN/Infinity tokens the store reads too
        elif kind == 5:
            record["extra"] = {"nested": [[[{"deep": True}]]], "n": 10**30, "f": 1e300}
        if daily:
            record.setdefault("meta", {})
            if isinstance(record["meta"], dict):
                record["meta"]["session_id"] = rnd.choice(["s1", "s2", None, "长"])
        out.append(record)
    return out


def write_records(path: Path, records: list[dict], *, seed: int = 0) -> None:
    rnd = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for record in records:
        # Both spellings the store writes (UTF-8, or \u escapes after a lone surrogate fallback), and CRLF ends.
        line = json.dumps(record, ensure_ascii=rnd.random() < 0.3)
        lines.append(line + ("\r" if rnd.random() < 0.05 else ""))
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def read_both(mem, *, kind: str, key: str, monkeypatch, meta: bool = False) -> tuple[pd.DataFrame, F.ReadStats,
                                                                                        pd.DataFrame]:
    """(columnar attempt, its stats, exact) frames of one file, each read cold by a fresh store."""
    def load(threshold: int) -> tuple[pd.DataFrame, F.ReadStats]:
        monkeypatch.setattr(_fast, "FAST_MIN_BYTES", threshold)
        fresh = MemoryStore(mem.store.root, zone=mem.store.zone).user(mem.user_id)
        stats = F.ReadStats()
        if kind == "session":
            return F.session_messages(fresh, key, meta=meta, stats=stats), stats
        return F.daily_messages(fresh, key, meta=meta, stats=stats), stats

    monkeypatch.setattr(_fast, "SEGMENT_BYTES", 2048)
    monkeypatch.setattr(_fast, "BLOCK_BYTES", 700)
    columnar, stats = load(0)
    exact, exact_stats = load(1 << 62)
    assert exact_stats.columnar_files == 0 and not exact_stats.refusals
    return columnar, stats, exact


def assert_same(left: pd.DataFrame, right: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(left, right, check_exact=True)  # values, dtypes, index and column order


@pytest.fixture
def mem(tmp_path):
    return MemoryStore(tmp_path, zone="Europe/Paris").user("u")


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("kind", ["session", "daily"])
def test_clean_files_are_read_in_columns_and_equal_the_exact_read(mem, monkeypatch, seed, kind) -> None:
    key = "s1" if kind == "session" else "2026-04-08"
    folder = "sessions" if kind == "session" else "daily"
    write_records(mem.directory / folder / f"{key}.jsonl", clean_records(300, seed=seed, daily=kind == "daily"),
                  seed=seed)
    columnar, stats, exact = read_both(mem, kind=kind, key=key, monkeypatch=monkeypatch)
    assert stats.columnar_files == 1 and stats.refusals == []
    assert len(exact) == 300
    assert_same(columnar, exact)
    # and both are what the store itself reads, message by message
    file = mem.session(key) if kind == "session" else mem.daily(key)
    assert [(m.message_id, m.ts, m.role, m.content, m.tags, m.session_id, m.day, len(m.tool_calls))
            for m in file.messages()] == [
        (int(r.message_id), r.ts.to_pydatetime(), r.role, r.content, r.tags,
         r.session_id if isinstance(r.session_id, str) else None, r.day, int(r.n_tool_calls))
        for r in columnar.itertuples()]


def test_several_files_mixing_both_readers_keep_their_order(mem, monkeypatch) -> None:
    write_records(mem.directory / "sessions" / "a.jsonl", clean_records(50, seed=5))
    write_records(mem.directory / "sessions" / "b.jsonl", clean_records(40, seed=6))
    (mem.directory / "sessions" / "c.jsonl").write_text('{"content": "legacy, no id"}\n', encoding="utf-8")
    write_records(mem.directory / "sessions" / "d.jsonl", clean_records(30, seed=7))
    columnar, stats, exact = read_both(mem, kind="session", key=None, monkeypatch=monkeypatch)
    assert stats.columnar_files == 3 and len(stats.refusals) == 1 and "message_id" in stats.refusals[0]
    assert_same(columnar, exact)


def test_tool_calls_from_threads_are_the_same(mem, monkeypatch) -> None:
    write_records(mem.directory / "sessions" / "s1.jsonl", clean_records(400, seed=11))
    monkeypatch.setattr(_fast, "FAST_MIN_BYTES", 0)
    stats = F.ReadStats()
    columnar = F.tool_calls(MemoryStore(mem.store.root, zone=mem.store.zone).user("u"), source="sessions",
                            stats=stats)
    assert stats.columnar_files == 1
    monkeypatch.setattr(_fast, "FAST_MIN_BYTES", 1 << 62)
    exact = F.tool_calls(MemoryStore(mem.store.root, zone=mem.store.zone).user("u"), source="sessions")
    assert len(exact) > 10 and set(exact["tool"]) >= {"t", "search_session", "remember_note"}
    assert_same(columnar, exact)


def test_meta_is_always_read_exactly(mem, monkeypatch) -> None:
    write_records(mem.directory / "sessions" / "s1.jsonl", clean_records(20, seed=3))
    columnar, stats, exact = read_both(mem, kind="session", key="s1", monkeypatch=monkeypatch, meta=True)
    assert stats.columnar_files == 0 and stats.refusals == []
    assert_same(columnar, exact)


def test_small_files_are_left_to_the_exact_reader(mem) -> None:
    write_records(mem.directory / "sessions" / "s1.jsonl", clean_records(20, seed=3))
    stats = F.ReadStats()
    F.session_messages(mem, "s1", stats=stats)
    assert _fast.FAST_MIN_BYTES > (mem.directory / "sessions" / "s1.jsonl").stat().st_size
    assert stats.columnar_files == 0 and stats.refusals == []


GOOD = {"ts": "2026-04-08T10:00:00.000001+08:00", "role": "user", "content": "c", "tags": ["t"], "meta": {}}


def line(message_id: int, /, **changes) -> bytes:
    record = {**GOOD, "message_id": message_id, **changes}
    return json.dumps(record, ensure_ascii=False).encode()


# (name, the bytes of the damaged file around clean lines 1..3 / 5..6, a word the refusal must contain)
ODDITIES: list[tuple[str, bytes, str]] = [
    ("unterminated tail", b'{"ts": "2026-04-08T10:00:00+08:00", "content": "torn', "newline"),
    ("blank line", b"", "start with"),
    ("whitespace line", b"   ", "start with"),
    ("indented line", b"  " + line(4), "start with"),
    ("BOM", b"\xef\xbb\xbf" + line(4), "start with"),
    ("not an object", b"[1, 2]", "start with"),
    ("malformed", b"{broken", "pyarrow"),
    ("two objects on a line", line(4) + b" " + line(5), "more than one"),
    ("invalid UTF-8 in content", line(4, content="x").replace(b'"x"', b'"\xff"'), "UTF-8"),
    ("invalid UTF-8 in an unread field", line(4, other="x").replace(b'"x"', b'"\xc3\x28"'), "UTF-8"),
    ("UTF-8 encoded surrogate", line(4, content="x").replace(b'"x"', b'"\xed\xa0\x80"'), "UTF-8"),
    ("lone surrogate escape", line(4, content="x").replace(b'"x"', b'"\\ud800"'), "pyarrow"),
    ("lone surrogate in an unread field", line(4, other="x").replace(b'"x"', b'"\\udc00"'), "pyarrow"),
    ("Inf", line(4, other="x").replace(b'"x"', b"Inf"), "Inf"),
    ("-Inf in a list", line(4, other="x").replace(b'"x"', b"[1, -Inf]"), "Inf"),
    ("-NaN", line(4, other="x").replace(b'"x"', b"-NaN"), "NaN"),
    ("too deep", line(4, other="x").replace(b'"x"', b"[" * 1100 + b"]" * 1100), "brackets"),
    ("huge float", line(4, other="x").replace(b'"x"', b"1e400"), "pyarrow"),
    ("no message_id", json.dumps({**GOOD}).encode(), "message_id"),
    ("message_id as text", line(4, message_id="4"), "pyarrow"),
    ("message_id 0", line(0), "strictly increasing"),
    ("message_id negative", line(-4), "strictly increasing"),
    ("message_id float", line(4).replace(b'"message_id": 4', b'"message_id": 4.0'), "pyarrow"),
    ("message_id true", line(4, message_id=True), "pyarrow"),
    ("message_id repeated", line(3), "strictly increasing"),
    ("message_id going back", line(2), "strictly increasing"),
    ("message_id beyond 2**53", line(2**53), "strictly increasing"),
    ("message_id beyond int64", line(4, message_id=2**64), "pyarrow"),
    ("duplicate key", line(4)[:-1] + b', "content": "again"}', "pyarrow"),
    ("content a number", line(4, content=5), "pyarrow"),
    ("content a dict", line(4, content={"k": "v"}), "pyarrow"),
    ("content NaN", line(4, content=float("nan")), "pyarrow"),
    ("role a number", line(4, role=5), "pyarrow"),
    ("ts a number", line(4, ts=1712540000), "pyarrow"),
    ("tags a string", line(4, tags="x"), "pyarrow"),
    ("tags with a number", line(4, tags=["a", 3]), "pyarrow"),
    ("tags with null", line(4, tags=["a", None]), "null inside tags"),
    ("tag with NUL", line(4, tags=["a\x00b"]), "NUL"),
    ("meta a list", line(4, meta=[1]), "pyarrow"),
    ("meta a string", line(4, meta="x"), "pyarrow"),
    ("tool_calls a dict", line(4, meta={"tool_calls": {"name": "x"}}), "pyarrow"),
    ("tool call a string", line(4, meta={"tool_calls": ["x"]}), "pyarrow"),
    ("tool name a number", line(4, meta={"tool_calls": [{"name": 3}]}), "pyarrow"),
]


@pytest.mark.parametrize(("name", "odd", "reason"), ODDITIES, ids=[o[0] for o in ODDITIES])
@pytest.mark.parametrize("kind", ["session", "daily"])
def test_each_oddity_is_refused_and_read_exactly(mem, monkeypatch, name, odd, reason, kind) -> None:
    key = "s1" if kind == "session" else "2026-04-08"
    path = mem.directory / ("sessions" if kind == "session" else "daily") / f"{key}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    head = b"".join(line(i) + b"\n" for i in (1, 2, 3))
    tail = b"".join(line(i) + b"\n" for i in (5, 6))
    path.write_bytes(head + odd + (b"" if name == "unterminated tail" else b"\n" + tail))
    columnar, stats, exact = read_both(mem, kind=kind, key=key, monkeypatch=monkeypatch)
    assert stats.columnar_files == 0
    assert len(stats.refusals) == 1 and reason in stats.refusals[0], stats.refusals
    assert_same(columnar, exact)


def test_text_that_only_looks_like_a_token_is_read_in_columns(mem, monkeypatch) -> None:
    texts = ["Info Inference", "Infinity", "x: Infinity", "NaN", "I", "[Infinity]", "x-NaN"[:3], "Inf"]
    records = [{**GOOD, "content": t, "message_id": i} for i, t in enumerate(texts, start=1)]
    write_records(mem.directory / "sessions" / "s1.jsonl", records)
    columnar, stats, exact = read_both(mem, kind="session", key="s1", monkeypatch=monkeypatch)
    assert stats.columnar_files == 1, stats.refusals
    assert list(columnar["content"]) == texts
    assert_same(columnar, exact)


def test_text_like_an_inf_token_is_refused_yet_read_right(mem, monkeypatch) -> None:
    # ': Inf' inside a string is indistinguishable from a token without parsing: refusing costs speed, not truth.
    write_records(mem.directory / "sessions" / "s1.jsonl", [{**GOOD, "content": "see: Inf", "message_id": 1}])
    columnar, stats, exact = read_both(mem, kind="session", key="s1", monkeypatch=monkeypatch)
    assert stats.columnar_files == 0 and "Inf" in stats.refusals[0]
    assert list(columnar["content"]) == ["see: Inf"]
    assert_same(columnar, exact)


def test_a_line_longer_than_a_block_or_segment(mem, monkeypatch) -> None:
    records = [{**GOOD, "content": "x" * 5000 if i == 3 else "short", "message_id": i} for i in range(1, 8)]
    write_records(mem.directory / "sessions" / "s1.jsonl", records)
    columnar, stats, exact = read_both(mem, kind="session", key="s1", monkeypatch=monkeypatch)
    assert stats.columnar_files == 1, stats.refusals
    assert_same(columnar, exact)


def test_a_writer_waits_for_the_columnar_read(mem, monkeypatch) -> None:
    # The read holds the file's shared lock: an append (exclusive lock) cannot slip a half line in.
    import fcntl

    write_records(mem.directory / "sessions" / "s1.jsonl", clean_records(30, seed=9))
    seen = []
    original = _fast._parse

    def parse_and_probe(*args):
        fd = __import__("os").open(mem.directory / "sessions" / "s1.jsonl", __import__("os").O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            seen.append("writer got in")
        except BlockingIOError:
            seen.append("writer waits")
        finally:
            __import__("os").close(fd)
        return original(*args)

    monkeypatch.setattr(_fast, "_parse", parse_and_probe)
    monkeypatch.setattr(_fast, "FAST_MIN_BYTES", 0)
    stats = F.ReadStats()
    F.session_messages(mem, "s1", stats=stats)
    assert stats.columnar_files == 1 and seen and set(seen) == {"writer waits"}


# ------------------------------------------------------------------------------------------ property: any file

_PLAIN = [*"ab :,[{\\\"\n\x00é好😀I-", "Infinity", "Info", "NaN"]
_TRICKY = ["\ud800", "Inf", "-NaN", ": Inf"]
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=4))


def _records(clean: bool) -> st.SearchStrategy:
    """Records with the usual shapes; unless ``clean``, one field in five may hold anything at all."""
    text = st.lists(st.sampled_from(_PLAIN if clean else _PLAIN * 4 + _TRICKY), max_size=6).map("".join)
    anything = st.recursive(_SCALAR | text, lambda inner: st.lists(inner, max_size=3)
                            | st.dictionaries(text, inner, max_size=3), max_leaves=6)

    def mostly(usual: st.SearchStrategy) -> st.SearchStrategy:
        return usual if clean else st.one_of(usual, usual, usual, usual, anything)

    ts = mostly(st.datetimes(timezones=st.just(SH)).map(lambda d: d.isoformat(timespec="microseconds"))
                | st.sampled_from(["2026-03-29T01:30:00.5+01:00", "2026-04-08T10:00:01", "2026-04-08T02:00:03Z",
                                   "nope", "2026-02-30T00:00:00.000000+00:00"]) | st.none())
    call = mostly(st.fixed_dictionaries({}, optional={"name": mostly(text), "input": anything, "output": anything})
                  | st.none())
    return st.fixed_dictionaries({}, optional={
        "ts": ts, "role": mostly(st.sampled_from(["user", "assistant"]) | st.none()), "content": mostly(text),
        "tags": mostly(st.lists(text, max_size=3) | st.none()),
        "meta": mostly(st.fixed_dictionaries({}, optional={
            "session_id": mostly(text | st.none()), "tool_calls": mostly(st.lists(call, max_size=3) | st.none()),
            "x": anything}) | st.none()),
        "extra": anything,
    })


_ODD_LINE = st.sampled_from([b"", b"  ", b"{broken", b"[1]", b"\xff{}", b'{"a": Inf}', b'{"a": 1} {"b": 2}'])


@st.composite
def _files(draw) -> bytes:
    """Half clean files (usual shapes, ids going up: the columnar reader's case), half with anything anywhere:
    any value in any field, odd lines, odd or missing ids, lone surrogates, tokens only pyarrow accepts."""
    clean = draw(st.booleans())
    lines = []
    next_id = 1
    for record in draw(st.lists(_records(clean), min_size=1, max_size=8)):
        how = "id" if clean else draw(st.sampled_from(["id"] * 6 + ["no id", "odd id", "odd line"]))
        if how == "odd line":
            lines.append(draw(_ODD_LINE))
            continue
        if how == "id":
            record["message_id"] = next_id
            next_id += draw(st.integers(1, 3))
        elif how == "odd id":
            record["message_id"] = draw(st.one_of(st.integers(-2, 2), st.text(max_size=3), st.floats(),
                                                  st.just(2**60)))
        try:
            lines.append(json.dumps(record, ensure_ascii=draw(st.booleans())).encode("utf-8"))
        except UnicodeEncodeError:  # a lone surrogate: the store writes \u escapes then
            lines.append(json.dumps(record).encode("ascii"))
    return b"".join(line + b"\n" for line in lines)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=_files(), kind=st.sampled_from(["session", "daily"]))
# An instant of year 1 east of UTC falls on a local day in year 0, which pandas holds but could not strftime.
@example(data=b'{"ts": "0001-01-01T00:00:00.000000+08:00", "message_id": 1}\n', kind="session")
def test_any_file_reads_the_same_with_or_without_the_columnar_reader(tmp_path_factory, monkeypatch, data, kind):
    root = tmp_path_factory.mktemp("any")
    key = "s1" if kind == "session" else "2026-04-08"
    path = root / "u" / ("sessions" if kind == "session" else "daily") / f"{key}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    mem = MemoryStore(root, zone="Europe/Paris").user("u")
    columnar, stats, exact = read_both(mem, kind=kind, key=key, monkeypatch=monkeypatch)
    assert stats.columnar_files + len(stats.refusals) == 1
    event("columnar" if stats.columnar_files else "refused: " + stats.refusals[0].split(": ", 1)[1][:30])
    assert_same(columnar, exact)
