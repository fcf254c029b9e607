"""Layer indexes follow their files: appends are read once, a replaced file is re-read, nothing else."""

from __future__ import annotations

import datetime as _dt
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem_nb import MemoryStore, UserMemory
from agentmem_nb.retrieval import IndexConfig, UserIndex, user_index
from agentmem_nb.retrieval import index as index_module
from agentmem_nb.retrieval.index import ScopeView, document_text


def _per_file(view: ScopeView) -> dict[str, list[tuple[int, dict[str, int], int, int]]]:
    """What the index holds for each file, independent of the order files were indexed in."""
    index = view.index
    out = {}
    for follower in view.followers:
        rows = []
        for pos, gid in enumerate(follower.gids):
            assert index.file_of[gid] == follower.file_id and index.position_of[gid] == pos
            assert index.prev[gid] == (follower.gids[pos - 1] if pos else -1)
            assert index.next[gid] == (follower.gids[pos + 1] if pos + 1 < len(follower) else -1)
            rows.append((follower.message_ids[pos], dict(index.terms.doc_terms(gid)), index.days[gid],
                         follower.asks[pos]))
        out[follower.key] = rows
    return out


def test_appends_are_tokenised_once_and_nothing_is_rebuilt(memory: UserMemory) -> None:
    index = UserIndex(memory)
    follower = index.view("session", "s1").followers[0]
    assert len(follower) == 5 and follower.records_read == 5
    memory.append("s1", "user", "Biscuit learned to sit.")
    memory.append("s1", "assistant", "Well done, Biscuit!")
    view = index.view("session", "s1")
    assert view.followers[0] is follower and len(follower) == 7
    assert follower.records_read == 7  # only the two new records were read
    assert index.kinds["session"].rebuilds == 0
    assert len(index.kinds["session"]) == 7


def test_an_unchanged_file_is_not_read_again(memory: UserMemory) -> None:
    index = UserIndex(memory)
    index.view("daily")
    before = memory.daily("2026-04-07").stats.bytes_read
    for _ in range(3):
        index.view("daily")
        index.view("daily", "2026-04-07")
    assert memory.daily("2026-04-07").stats.bytes_read == before


def test_a_replaced_file_makes_the_index_start_over(memory: UserMemory) -> None:
    index = UserIndex(memory)
    assert index.view("session").size == 16
    path = memory.session("s3").path
    replacement = path.with_suffix(".new")
    replacement.write_text(path.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    replacement.replace(path)
    view = index.view("session")
    assert index.kinds["session"].rebuilds == 1
    assert view.size == 5 + 6 + 1
    assert _per_file(view) == _per_file(UserIndex(memory).view("session"))


def test_scope_views_cover_one_file_or_all(memory: UserMemory) -> None:
    index = UserIndex(memory)
    one = index.view("daily", "2026-04-07")
    assert [f.key for f in one.followers] == ["2026-04-07"] and one.size == 6 and one.whole
    everything = index.view("daily")
    assert [f.key for f in everything.followers] == ["2026-04-06", "2026-04-07", "2026-04-08"]
    assert everything.whole and everything.size == 16
    assert not index.view("daily", "2026-04-08").whole  # one file of three: the ranker masks the rest


def test_days_and_questions_are_recorded_per_message(memory: UserMemory) -> None:
    rows = _per_file(UserIndex(memory).view("session"))
    assert {_dt.date.fromordinal(day).isoformat() for _, _, day, _ in rows["s2"]} == {"2026-04-07"}
    assert [asks for *_, asks in rows["s2"]] == [0, 1, 0, 0, 0, 0]
    daily = _per_file(UserIndex(memory).view("daily", "2026-04-08"))
    assert [asks for *_, asks in daily["2026-04-08"]] == [1, 1, 0, 0, 0]


def test_texts_reads_back_what_was_indexed(memory: UserMemory) -> None:
    view = UserIndex(memory).view("session")
    gids = [view.followers[1].gids[2], view.followers[0].gids[0]]
    assert view.index.texts(gids) == ["A lopsided blue bowl, but I love it.",
                                      "Hi! I adopted a beagle puppy last weekend."]


def test_the_shared_index_is_one_object_per_user_and_config(memory: UserMemory) -> None:
    assert user_index(memory) is user_index(memory)
    assert user_index(memory, IndexConfig(speaker=False)) is not user_index(memory)


def test_speaker_name_is_indexed_from_meta_or_a_named_role() -> None:
    assert document_text({"content": "hi", "meta": {"speaker": "Ada"}}, speaker=True) == "Ada: hi"
    assert document_text({"content": "hi", "role": "Ben"}, speaker=True) == "Ben: hi"
    assert document_text({"content": "hi", "role": "user"}, speaker=True) == "hi"
    assert document_text({"content": "hi", "role": "Ben"}, speaker=False) == "hi"
    assert document_text({"content": None}, speaker=True) == ""


WORDS = ["beagle", "puppy", "pottery", "bowl", "race", "杭州", "程序员", "西湖", "why?", "ok"]
appends = st.lists(
    st.tuples(st.sampled_from(["a", "b"]), st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
              st.booleans()),
    min_size=1, max_size=20,
)


@settings(max_examples=25, deadline=None)
@given(ops=appends)
def test_incremental_index_equals_an_index_built_from_scratch(ops: list[tuple[str, list[str], bool]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(Path(tmp), zone="UTC")
        user = store.user("u")
        live = UserIndex(user)
        moment = _dt.datetime(2026, 1, 1, 23, 58, tzinfo=_dt.timezone.utc)
        for i, (session, words, look) in enumerate(ops):
            user.append(session, "user", " ".join(words), ts=moment + _dt.timedelta(minutes=i))
            if look:  # query in between (one file or all): the index must catch up from where it was
                live.view("session", session) if i % 2 else live.view("session")
                live.view("daily")
        rebuilt = UserIndex(store.user("u"))
        for kind in ("session", "daily"):
            grown, scratch = live.view(kind), rebuilt.view(kind)  # type: ignore[arg-type]
            assert _per_file(grown) == _per_file(scratch)
            assert grown.size == scratch.size == len(ops)
            assert live.kinds[kind].rebuilds == 0


def test_searching_while_another_thread_appends(tmp_path: Path) -> None:
    import threading

    from agentmem_nb.retrieval import search

    user = MemoryStore(tmp_path, zone="UTC").user("u")
    user.append("s", "user", "beagle puppy to start with")
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for i in range(150):
                user.append("s", "user", f"beagle puppy walk number {i}")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    found = 0
    while thread.is_alive():
        found = max(found, len(search(user, "beagle puppy walk", budget=5).messages))
    thread.join()
    assert not errors
    assert found >= 1
    live = user_index(user).view("daily")
    assert live.size == 151
    assert _per_file(live) == _per_file(UserIndex(user).view("daily"))


def test_small_reads_and_tallies_build_the_same_index(monkeypatch: pytest.MonkeyPatch) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        user = MemoryStore(Path(tmp), zone="UTC").user("u")
        for i in range(40):
            user.append(f"s{i % 3}", "user", f"beagle walk {i} the painting's {'why?' if i % 4 else 'ok'} 西湖{i % 5}")
        default = UserIndex(user)
        expected = {kind: _per_file(default.view(kind)) for kind in ("session", "daily")}
        monkeypatch.setattr(index_module, "_READ_STEP", 3)
        monkeypatch.setattr(index_module, "_TALLY_TERMS", 7)
        small = UserIndex(MemoryStore(Path(tmp), zone="UTC").user("u"))
        for kind in ("session", "daily"):
            view = small.view(kind)  # type: ignore[arg-type]
            assert _per_file(view) == expected[kind]
            assert len(small.kinds[kind].terms) == len(small.kinds[kind].file_of) == 40


_values = st.one_of(st.none(), st.integers(-3, 3), st.text(max_size=6), st.lists(st.integers(), max_size=2))
_records = st.fixed_dictionaries(
    {},
    optional={
        "content": st.one_of(st.text(max_size=12), _values),
        "role": st.one_of(st.sampled_from(["user", "Assistant", "SYSTEM", "Ada", "", "Bob"]), _values),
        "meta": st.one_of(st.fixed_dictionaries({}, optional={"speaker": st.one_of(st.sampled_from(["Ada", ""]),
                                                                                   _values)}), _values),
        "ts": st.one_of(st.sampled_from(["2026-04-07T09:00:00+08:00", "2026-13-01T00:00:00", "2026-04-07", "x"]),
                        _values),
    },
)


@settings(max_examples=200, deadline=None)
@given(records=st.lists(_records, max_size=8), speaker=st.booleans(), same_kind=st.booleans())
def test_block_texts_and_days_equal_the_record_by_record_rules(records: list[dict[str, object]], speaker: bool,
                                                               same_kind: bool) -> None:
    if same_kind:  # a block as the store writes it: text content, a meta object, a timestamp
        records = [{**r, "content": str(r.get("content")), "meta": r["meta"] if isinstance(r.get("meta"), dict)
                    else {}, "ts": str(r.get("ts"))} for r in records]
    texts = index_module.document_texts(records, speaker=speaker)  # type: ignore[arg-type]
    assert texts == [document_text(r, speaker=speaker) for r in records]  # type: ignore[arg-type]
    assert list(index_module._asks(texts)) == [int("?" in t or "\uff1f" in t) for t in texts]
    follower = index_module.FileFollower.__new__(index_module.FileFollower)
    follower.day = 0
    assert follower.days_of(records) == [follower.day_of(r) for r in records]  # type: ignore[arg-type]
