"""Layer indexes follow their files: appends are read once, a replaced file is re-read, nothing else."""

from __future__ import annotations

import datetime as _dt
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from agentmem_nb import MemoryStore, UserMemory
from agentmem_nb.retrieval import IndexConfig, UserIndex, user_index
from agentmem_nb.retrieval.index import LayerIndex, document_text


def _same(a: LayerIndex, b: LayerIndex) -> bool:
    return (a.terms.same_as(b.terms) and list(a.message_ids) == list(b.message_ids)
            and list(a.days) == list(b.days) and a.asks == b.asks)


def test_appends_are_tokenised_once_and_nothing_is_rebuilt(memory: UserMemory) -> None:
    index = UserIndex(memory)
    layer = index.layer("session", "s1")
    assert len(layer) == 5 and layer.records_read == 5
    memory.append("s1", "user", "Biscuit learned to sit.")
    memory.append("s1", "assistant", "Well done, Biscuit!")
    layer = index.layer("session", "s1")
    assert len(layer) == 7
    assert layer.records_read == 7  # only the two new records were read
    assert layer.rebuilds == 0


def test_an_unchanged_file_is_not_read_again(memory: UserMemory) -> None:
    index = UserIndex(memory)
    index.layer("daily", "2026-04-07")
    before = memory.daily("2026-04-07").stats.bytes_read
    for _ in range(3):
        index.layer("daily", "2026-04-07")
    assert memory.daily("2026-04-07").stats.bytes_read == before


def test_a_replaced_file_is_indexed_again(memory: UserMemory) -> None:
    index = UserIndex(memory)
    layer = index.layer("session", "s3")
    path = memory.session("s3").path
    replacement = path.with_suffix(".new")
    replacement.write_text(path.read_text(encoding="utf-8").splitlines(keepends=True)[0], encoding="utf-8")
    replacement.replace(path)
    layer = index.layer("session", "s3")
    assert layer.rebuilds == 1 and len(layer) == 1
    fresh = LayerIndex(memory.session("s3"), index.config, index.tokenizer)
    fresh.refresh()
    assert _same(layer, fresh)


def test_days_and_questions_are_recorded_per_message(memory: UserMemory) -> None:
    layer = UserIndex(memory).layer("session", "s2")
    assert {_dt.date.fromordinal(d).isoformat() for d in layer.days} == {"2026-04-07"}
    assert list(layer.asks) == [0, 1, 0, 0, 0, 0]
    daily = UserIndex(memory).layer("daily", "2026-04-08")
    assert list(daily.asks) == [1, 1, 0, 0, 0]


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
            if look:  # query in between: the index must catch up from where it was
                list(live.layers("session"))
                list(live.layers("daily"))
        rebuilt = UserIndex(store.user("u"))
        for kind in ("session", "daily"):
            grown = {layer.key: layer for layer in live.layers(kind)}
            scratch = {layer.key: layer for layer in rebuilt.layers(kind)}
            assert grown.keys() == scratch.keys()
            for key in grown:
                assert _same(grown[key], scratch[key])
                assert grown[key].rebuilds == 0
