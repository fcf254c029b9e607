"""Long-term history: deltas and checkpoints (bytes grow with the changes, not with notes²), every version rebuilt
exactly, and histories written in the earlier full before/after format still read."""

from __future__ import annotations

import itertools
import json
import os
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentmem_nb import MemoryDataWarning, MemoryStore, ProblemKind, StoreError, UserMemory
from agentmem_nb.store import longterm


def _records(mem: UserMemory) -> list[dict]:
    return [json.loads(raw) for raw in (mem.directory / "memory.history.jsonl").read_bytes().splitlines()]


def _history_bytes(mem: UserMemory) -> int:
    return (mem.directory / "memory.history.jsonl").stat().st_size


def test_an_appended_note_is_stored_as_a_splice_of_its_own_size(mem: UserMemory) -> None:
    long_term = mem.long_term
    long_term.write("# about alice\n" + "- an old fact that takes some room\n" * 40)
    long_term.add_note("likes tea")
    last = _records(mem)[-1]
    assert (last["insert"], last["cut"]) == ("- likes tea\n", 0) and "after" not in last and "before" not in last
    assert long_term.history()[-1].after == long_term.read()


def test_history_grows_linearly_with_the_notes(store: MemoryStore) -> None:
    """Full before/after texts grew with notes²: 2,000 notes took 170 MB. Bytes on disk, not time."""
    mem = store.user("alice")
    sizes = {}
    for i in range(1, 801):
        mem.long_term.add_note(f"fact number {i:04d}: something worth keeping in mind")
        if i in (200, 400, 800):
            sizes[i] = _history_bytes(mem)
    text_bytes = mem.long_term.path.stat().st_size
    assert sizes[800] < 2.5 * sizes[400] and sizes[400] < 2.5 * sizes[200]  # quadratic growth would give ~4x
    # Checkpoints cost at most what the deltas (with their record overhead) cost since the previous one; with notes
    # of 50 characters that is a few copies of the final text in all. Full before/after texts: 400x the text.
    assert sizes[800] < 8 * text_bytes


def test_rebuilding_a_late_version_reads_from_the_nearest_checkpoint(store: MemoryStore) -> None:
    mem = store.user("alice")
    for i in range(600):
        mem.long_term.add_note(f"fact number {i:04d}: something worth keeping in mind")
    stats = mem.long_term._history.stats  # the history file's read counters
    stats.bytes_read = 0
    version = mem.long_term.version(590)
    assert version.after == mem.long_term.history()[589].after
    assert version.after.count("\n") == 590 and version.before.count("\n") == 589
    # Never the whole history: at most a checkpoint plus a text's worth of deltas (and their record overhead).
    assert stats.bytes_read < 3 * len(version.after.encode()) + 100 * 200 < _history_bytes(mem)


def test_a_history_in_the_earlier_full_format_still_reads_and_continues(mem: UserMemory) -> None:
    mem.directory.mkdir(parents=True)
    second = "- likes tea\n- lives in Lyon\n" + "- a fact\n" * 200  # long enough for the next note to be a delta
    legacy = [  # the first line without message_id, as the earliest writers left it
        {"ts": "2026-04-08T10:00:00+08:00", "source": "remember_note", "before": "", "after": "- likes tea\n"},
        {"ts": "2026-04-08T10:05:00+08:00", "source": "user", "before": "- likes tea\n", "after": second,
         "message_id": 2},
    ]
    (mem.directory / "memory.history.jsonl").write_text("".join(json.dumps(r) + "\n" for r in legacy))
    mem.long_term.path.write_text(second, encoding="utf-8")
    mem.long_term.add_note("lives near the river")
    assert "insert" in _records(mem)[-1]
    history = list(mem.long_term.history())
    assert [(v.version, v.source) for v in history] == [(1, "remember_note"), (2, "user"), (3, "remember_note")]
    assert history[0].before == "" and history[1].after == second
    assert history[2].before == history[1].after and history[2].after == mem.long_term.read()
    mem.long_term.restore(1)
    assert mem.long_term.read() == "- likes tea\n"
    assert not [p for p in mem.problems() if p.kind is not ProblemKind.LEGACY_ID_NORMALISED]


def test_history_is_a_lazy_sequence_that_compares_like_a_list(mem: UserMemory) -> None:
    changes = [mem.long_term.add_note(f"note {i}") for i in range(5)]
    history = mem.long_term.history()
    assert len(history) == 5 and history == changes and history[-1] == changes[-1] and history[1:3] == changes[1:3]
    mem.long_term.add_note("later")
    assert len(history) == 5 and list(history) == changes  # fixed at the length it had when made
    assert mem.long_term.history() != changes


# ---------------------------------------------------------------------- any sequence of changes: every version exact

PREAMBLE = "# long-term memory\n" + "".join(f"- an earlier fact, number {i}\n" for i in range(20))
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("splice"), st.floats(0, 1), st.integers(0, 30), texts),
        st.tuples(st.just("write"), texts),
        st.tuples(st.just("note"), texts),
        st.tuples(st.just("restore"), st.integers(1, 40), st.sampled_from(["after", "before"])),
        st.tuples(st.just("hand"), texts),
    ),
    max_size=25,
)


def _note_rule(text: str, note: str) -> str:
    """The documented add_note rule, written out again for the model."""
    note = " ".join(note.split())
    line = f"- {note}"
    if not note or line in text.splitlines():
        return text
    return text + ("" if not text or text.endswith("\n") else "\n") + line + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations)
def test_any_sequence_of_changes_keeps_every_version_exactly(ops: list[tuple]) -> None:
    with tempfile.TemporaryDirectory() as root:
        long_term = MemoryStore(Path(root), zone="Europe/Paris").user("alice").long_term
        initial, afters, current = "", [], ""  # the model: text before change 1, each version's text, the file

        def changed(new: str) -> None:
            nonlocal current
            if new != current:
                afters.append(new)
            current = new

        changed(PREAMBLE)
        long_term.write(PREAMBLE)
        for op in ops:
            if op[0] == "splice":
                at = int(op[1] * len(current))
                new = current[:at] + op[3] + current[at + op[2]:]
                long_term.edit(lambda text, at=at, op=op: text[:at] + op[3] + text[at + op[2]:])
                changed(new)
            elif op[0] == "write":
                long_term.write(PREAMBLE + op[1])
                changed(PREAMBLE + op[1])
            elif op[0] == "note":
                long_term.add_note(op[1])
                changed(_note_rule(current, op[1]))
            elif op[0] == "restore" and op[1] <= len(afters):
                target = afters[op[1] - 1] if op[2] == "after" else ([initial] + afters)[op[1] - 1]
                long_term.restore(op[1], which=op[2])
                changed(target)
            elif op[0] == "hand":  # changed outside the store; current() records it as a repair
                long_term.path.write_bytes((PREAMBLE + op[1]).encode("utf-8"))
                snapshot = long_term.current()
                changed(PREAMBLE + op[1])
                assert snapshot.version == len(afters) and snapshot.text == current
        history = list(long_term.history())
        assert [v.after for v in history] == afters and long_term.read() == current
        assert [v.before for v in history] == [initial] + afters[:-1]
        assert all(long_term.version(v.version) == v for v in history)
        assert long_term.text_at(0) == initial
        for a, b in itertools.pairwise(history):
            assert a.after == b.before
        for v in history:  # restore every version exactly
            long_term.restore(v.version)
            assert long_term.read() == v.after


@given(st.text("ab\n", max_size=30), st.text("ab\n", max_size=30), st.sampled_from([1, 2, 3, 64]))
def test_the_splice_turns_one_text_into_the_other_with_the_longest_common_prefix(before: str, after: str,
                                                                                block: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(longterm, "_BLOCK", block)  # small blocks: the block-by-block and halving paths both run
        at, cut, insert = longterm._splice_of(before, after)
    assert before[:at] + insert + before[at + cut:] == after
    assert at == len(os.path.commonprefix([before, after]))


@pytest.mark.parametrize("damage", ["torn line", "edited text"])
def test_a_damaged_history_is_reported_and_never_rebuilt_into_a_wrong_text(mem: UserMemory, damage: str) -> None:
    long_term = mem.long_term
    long_term.write("# notes\n" + "- an older fact\n" * 100)
    for i in range(3):
        long_term.add_note(f"fact {i}")
    path = mem.directory / "memory.history.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert [("after" in json.loads(raw)) for raw in lines] == [True, False, False, False]
    if damage == "torn line":  # version 2's delta is lost: the deltas after it no longer fit
        lines[1] = b'{"torn by hand\n'
        broken = 3
    else:  # valid JSON, wrong text: only the hash can tell
        lines[1] = lines[1].replace(b"fact 0", b"fact X")
        broken = 2
    path.write_bytes(b"".join(lines))
    fresh = MemoryStore(mem.store.root, zone="Europe/Paris").user("alice").long_term
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MemoryDataWarning)  # the torn line's warning; problems() is checked below
        assert fresh.version(1).after.startswith("# notes\n")
    with pytest.raises(StoreError, match=rf"memory\.history\.jsonl: version {broken} cannot be (replayed|rebuilt)"):
        fresh.version(broken)
    with pytest.raises(StoreError, match=rf"version {broken} cannot be"):
        list(fresh.history())
    if damage == "torn line":
        assert [p.kind for p in fresh.problems()] == [ProblemKind.MALFORMED_JSON]
