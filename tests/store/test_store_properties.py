"""Property tests: any mix of appends and hand-written legacy lines reads back as the documented rule says.

Each example builds one session file from a random sequence of operations:

* appends through the store — by a long-lived ``MemoryStore`` (warm once it has read) or a brand-new one (cold: it
  must take the next id from the file's tail);
* legacy lines written by hand, the way the original demo or a person might have left them: no ``message_id``,
  ``"abc"``, ``-3``, ``0``, ``"7"``, ``True``, ``7.0``, an id too large for any index, naive / missing / garbage
  timestamps, non-text content, CRLF endings, a UTF-8 byte-order mark, JSON lists and scalars, malformed JSON,
  invalid UTF-8, blank lines;
* a torn last line (a crash mid-write) or a complete object missing its newline, each followed by an append.

The expectation is computed by :func:`store_testlib.model_of`, an independent reading of the file by the rule in
DESIGN §1 (a missing/non-positive/junk id takes the running next id; next = max(next, id + 1)).

Legacy ids written by hand here are never *below* the running next id: that is how the original demo wrote them.
Ids in any order (hand merges, repeats), and files far longer than the tail a cold append reads, are the subject of
``test_store_ids.py``.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_testlib import (
    LEGACY_KINDS,
    TS,
    Legacy,
    Model,
    add_bytes,
    legacy_bytes,
    line,
    model_of,
    quarantine_entries,
    search_model,
    window_model,
)

from agentmem_nb import MemoryDataWarning, MemoryStore
from agentmem_nb.messages import EPOCH
from agentmem_nb.store import MAX_WINDOW_SIDE, ProblemKind

ZONE = ZoneInfo("Asia/Shanghai")
SESSION = "s1"

# Characters that stress casefolding (ß -> ss, Kelvin sign -> k, dotted İ), CJK, astral emoji, JSON escapes, NUL.
ALPHABET = "aAbBsSß\u212akK İi蓝莓é😀\n\"\\{}\x00"
texts = st.text(alphabet=ALPHABET, max_size=10)
keywords = st.text(alphabet=ALPHABET, min_size=1, max_size=3).filter(lambda k: k.strip() != "")
roles = st.sampled_from(["user", "assistant", "tool"])


class FakeClock:
    """Advances one second per call, starting at 10:00 in UTC+8 (all appends land on one day)."""

    def __init__(self) -> None:
        self.now = _dt.datetime(2026, 4, 8, 10, 0, tzinfo=_dt.timezone(_dt.timedelta(hours=8)))

    def __call__(self) -> _dt.datetime:
        self.now += _dt.timedelta(seconds=1)
        return self.now


@dataclass(frozen=True)
class Append:
    role: str
    content: str
    fresh: bool  # a brand-new MemoryStore does the append (cold: id from the file's tail)


@dataclass(frozen=True)
class Torn:
    """A last line cut short (no newline), then an append that must quarantine it."""

    fragment: bytes
    read_first: bool
    then: Append


@dataclass(frozen=True)
class Unterminated:
    """A complete JSON object without its newline (a hand edit), then an append that must keep it."""

    content: str
    with_id: bool
    read_first: bool
    then: Append


@dataclass(frozen=True)
class Read:
    """The long-lived store reads the file (its next append takes the warm path)."""


appends = st.builds(Append, roles, texts, st.booleans())
legacies = st.builds(
    Legacy,
    st.sampled_from(LEGACY_KINDS),
    texts,
    st.sampled_from([0, 0, 1, 2, 5, 1000]),
    st.sampled_from(["aware", "naive", "missing", "garbage"]),
)
fragments = st.one_of(
    texts.map(lambda t: b'{"content": ' + json.dumps(t, ensure_ascii=False).encode("utf-8")[:-1]),
    st.just(b'{"role": "user", "message_id": 99'),
    st.just("蓝".encode()[:2]),  # half a CJK character
    st.just(b"   "),
)
operations = st.one_of(
    appends,
    appends,
    legacies,
    legacies,
    st.builds(Torn, fragments, st.booleans(), appends),
    st.builds(Unterminated, texts, st.booleans(), st.booleans(), appends),
    st.just(Read()),
)

def expected_ts(model: Model) -> list[_dt.datetime]:
    """Timestamps as documented: aware kept (same instant), naive = local time of the zone, unreadable = previous."""
    out: list[_dt.datetime] = []
    previous = EPOCH
    for row in model.rows:
        raw = row.record.get("ts")
        try:
            moment = _dt.datetime.fromisoformat(raw) if isinstance(raw, str) else None
        except ValueError:
            moment = None
        if moment is None:
            moment = previous
        elif moment.tzinfo is None:
            moment = moment.replace(tzinfo=ZONE)
        out.append(moment)
        previous = moment
    return out


class Run:
    """One example: a root, a long-lived store, and checks after every step."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = FakeClock()
        self.shared = MemoryStore(root, zone=ZONE, clock=self.clock)
        self.path = root / "u" / "sessions" / f"{SESSION}.jsonl"
        self.appended = 0
        self.torn = 0

    def data(self) -> bytes:
        return self.path.read_bytes() if self.path.exists() else b""

    def do_append(self, op: Append) -> None:
        before = self.data()
        expected_id = model_of(before).next_id
        store = MemoryStore(self.root, zone=ZONE, clock=self.clock) if op.fresh else self.shared
        written = store.user("u").append(SESSION, op.role, op.content)
        self.appended += 1
        assert written.session.message_id == expected_id, (op, before[-300:])
        assert written.daily.message_id == self.appended
        after = self.data()
        assert after.startswith(before), "an append changed bytes that were already in the file"
        last = json.loads(after[len(before):])
        assert (last["message_id"], last["role"], last["content"]) == (expected_id, op.role, op.content)

    def check_reads(self, store: MemoryStore) -> None:
        model = model_of(self.data())
        got = store.user("u").session(SESSION).messages()
        assert [m.message_id for m in got] == model.ids
        assert [m.content for m in got] == [row.content for row in model.rows]
        assert [m.role for m in got] == [row.record.get("role", "unknown") for row in model.rows]
        assert [m.ts for m in got] == expected_ts(model)
        assert all(m.ts.tzinfo is not None and m.session_id == SESSION for m in got)
        ids = model.ids
        assert ids == sorted(set(ids)), f"ids are not strictly increasing: {ids}"

    def step(self, op: object) -> None:
        if isinstance(op, Append):
            self.do_append(op)
        elif isinstance(op, Legacy):
            add_bytes(self.path, legacy_bytes(op, model_of(self.data()).next_id))
        elif isinstance(op, Read):
            self.check_reads(self.shared)
        elif isinstance(op, Torn):
            before = self.data()
            add_bytes(self.path, op.fragment)
            if op.read_first:
                self.check_reads(self.shared)  # the fragment is not read
                layer = self.shared.user("u").session(SESSION)
                unterminated = [p for p in layer.problems() if p.kind is ProblemKind.UNTERMINATED_TAIL]
                assert [p.line for p in unterminated] == [before.count(b"\n") + 1]
            quarantined = len(quarantine_entries(self.path))
            self.do_append_after_repair(op.then, before)
            entries = quarantine_entries(self.path)
            assert len(entries) == quarantined + 1
            assert base64.b64decode(entries[-1]["bytes_b64"]) == op.fragment
            assert entries[-1]["offset"] == len(before)
            self.torn += 1
        elif isinstance(op, Unterminated):
            record: dict[str, object] = {"ts": TS["aware"], "role": "user", "content": op.content}
            if op.with_id:
                record["message_id"] = model_of(self.data()).next_id
            before = self.data()
            add_bytes(self.path, line(record)[:-1])
            if op.read_first:
                self.check_reads(self.shared)
            self.do_append_after_repair(op.then, before + line(record))
        else:  # pragma: no cover - the strategy only makes the kinds above
            raise TypeError(op)

    def do_append_after_repair(self, op: Append, repaired: bytes) -> None:
        """Append, expecting the file to become ``repaired`` + the new line."""
        expected_id = model_of(repaired).next_id
        store = MemoryStore(self.root, zone=ZONE, clock=self.clock) if op.fresh else self.shared
        written = store.user("u").append(SESSION, op.role, op.content)
        self.appended += 1
        assert written.session.message_id == expected_id
        after = self.data()
        assert after.startswith(repaired)
        assert json.loads(after[len(repaired):])["message_id"] == expected_id


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operations, max_size=25), data=st.data())
def test_any_mix_of_appends_and_legacy_lines_reads_back_by_the_rule(ops: list[object], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = Run(Path(tmp))
        for op in ops:
            run.step(op)
        model = model_of(run.data())
        fresh = MemoryStore(run.root, zone=ZONE, clock=run.clock)
        run.check_reads(fresh)
        run.check_reads(run.shared)

        # problems: every skipped line by number and kind; legacy ids counted; nothing else skipped.
        problems = fresh.user("u").session(SESSION).problems()
        skipped = {p.line: p.kind.value for p in problems if p.kind.skips_data}
        assert skipped == model.bad_lines
        legacy = [p.count for p in problems if p.kind is ProblemKind.LEGACY_ID_NORMALISED]
        expected_legacy = sum(not row.given_id for row in model.rows)
        assert legacy == ([expected_legacy] if expected_legacy else [])
        data_warnings = [w for w in caught if issubclass(w.category, MemoryDataWarning)]
        assert bool(data_warnings) == bool(model.bad_lines)

        # the day file holds exactly the appends, ids 1..n, each linked to its thread
        days = fresh.user("u").days()
        daily = fresh.user("u").daily(days[0]).messages() if days else []
        assert [m.message_id for m in daily] == list(range(1, run.appended + 1))
        assert all(m.session_id == SESSION for m in daily)

        # windows: the positional slice of the model, clamped; the same Message objects a full read gives
        layer = fresh.user("u").session(SESSION)
        by_id = {m.message_id: m for m in layer.messages()}
        anchors = model.ids + [0, -1, model.next_id, model.next_id + 7]
        for _ in range(4):
            anchor = data.draw(st.sampled_from(anchors), label="anchor")
            before = data.draw(st.integers(-3, MAX_WINDOW_SIDE + 10), label="before")
            after = data.draw(st.integers(-3, MAX_WINDOW_SIDE + 10), label="after")
            window = layer.window(anchor, before, after)
            expected = window_model(model, anchor, before, after, MAX_WINDOW_SIDE)
            assert [m.message_id for m in window.messages] == [row.message_id for row in expected]
            assert list(window.messages) == [by_id[row.message_id] for row in expected]
            assert bool(window.reason) == (model.position(anchor) is None)
            if window.reason and model.rows:  # an empty layer says so instead of naming the anchor
                assert f"#{anchor}" in window.reason

        # keyword search: the last `limit` hits of a naive casefold filter, chronological
        for _ in range(4):
            keyword = data.draw(st.one_of(keywords, st.sampled_from([row.content[:2] for row in model.rows] or ["a"]))
                                .filter(lambda k: k.strip() != ""), label="keyword")
            limit = data.draw(st.integers(0, 12), label="limit")
            hits = layer.search(keyword, limit=limit)
            assert [m.message_id for m in hits] == [row.message_id for row in search_model(model, keyword, limit)]
            assert all(m == by_id[m.message_id] for m in hits)
        limit = data.draw(st.integers(0, 12), label="empty-keyword limit")
        assert [m.message_id for m in layer.search("", limit=limit)] == model.ids[max(0, len(model.ids) - limit):]
