"""The original demo's memory folder (``../shared/data/seed-demo-memory/demo-user``) opens as it is.

Every expectation is computed from the raw files here, not copied by hand, so the tests follow the fixture.
"""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from store_testlib import model_of, snapshot

from agentmem_nb import MemoryStore, UserMemory
from agentmem_nb.store import ProblemKind

ZONE = ZoneInfo("Asia/Shanghai")
USER = "demo-user"


@pytest.fixture
def seed(seed_store: MemoryStore) -> UserMemory:
    return seed_store.user(USER)


def _raw(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_bytes().decode("utf-8").splitlines() if raw.strip()]


def _seed_files(seed: UserMemory, folder: str) -> dict[str, Path]:
    return {path.stem: path for path in sorted((seed.directory / folder).glob("*.jsonl"))}


def test_every_session_and_the_day_read_with_their_ids(seed: UserMemory) -> None:
    sessions = _seed_files(seed, "sessions")
    assert len(sessions) == 8 and seed.session_ids() == sorted(sessions)
    for session_id, path in sessions.items():
        raw = _raw(path)
        got = seed.session(session_id).messages()
        assert [m.message_id for m in got] == [r["message_id"] for r in raw]
        assert [(m.role, m.content) for m in got] == [(r["role"], r["content"]) for r in raw]
        assert all(m.session_id == session_id for m in got)
    days = _seed_files(seed, "daily")
    assert seed.days() == sorted(days) and len(days) == 1
    [(day, path)] = days.items()
    raw = _raw(path)
    got = seed.daily(day).messages()
    assert [m.message_id for m in got] == [r["message_id"] for r in raw]
    assert [m.content for m in got] == [r["content"] for r in raw]
    assert all(m.day == day for m in got)


def test_naive_timestamps_become_aware_in_the_configured_zone(seed: UserMemory) -> None:
    for session_id, path in _seed_files(seed, "sessions").items():
        for message, raw in zip(seed.session(session_id).messages(), _raw(path), strict=True):
            naive = _dt.datetime.fromisoformat(raw["ts"])
            assert naive.tzinfo is None  # the fixture really is naive
            assert message.ts == naive.replace(tzinfo=ZONE)
            assert message.ts.utcoffset() == _dt.timedelta(hours=8)
            assert message.day == naive.date().isoformat()


def test_the_same_folder_in_another_zone_reads_the_same_wall_clock(seed_root: Path, seed_store: MemoryStore) -> None:
    paris = MemoryStore(seed_root, zone="Europe/Paris").user(USER)
    first_sh = seed_store.user(USER).daily("2026-04-08").messages()[0]
    first_paris = paris.daily("2026-04-08").messages()[0]
    assert first_sh.ts.replace(tzinfo=None) == first_paris.ts.replace(tzinfo=None)
    assert first_paris.ts - first_sh.ts == _dt.timedelta(hours=6)  # +08:00 vs +02:00 (CEST) on that day


def test_legacy_tool_calls_parse_to_dicts(seed: UserMemory) -> None:
    checked = 0
    for folder, opener in (("sessions", seed.session), ("daily", seed.daily)):
        for key, path in _seed_files(seed, folder).items():
            for message, raw in zip(opener(key).messages(), _raw(path), strict=True):
                raw_calls = (raw.get("meta") or {}).get("tool_calls") or []
                assert len(message.tool_calls) == len(raw_calls)
                for call, raw_call in zip(message.tool_calls, raw_calls, strict=True):
                    assert isinstance(raw_call["input"], str) and "id" not in raw_call  # the legacy shape
                    assert call.input == json.loads(raw_call["input"]) and isinstance(call.input, dict)
                    assert (call.name, call.output, call.id) == (raw_call["name"], raw_call["output"], None)
                    assert call.to_dict()["input"] == call.input  # written back in the dict shape
                    checked += 1
    assert checked > 0


def test_the_logs_id_less_lines_are_normalised_and_reported(seed: UserMemory) -> None:
    path = seed.directory / "logs" / "llm_dialogue.jsonl"
    raw = _raw(path)
    id_less = sum("message_id" not in r for r in raw)
    assert id_less == 9
    entries = seed.log.entries()
    assert [e.entry_id for e in entries] == model_of(path.read_bytes()).ids == list(range(1, len(raw) + 1))
    assert [e.user_message for e in entries] == [r["user_message"] for r in raw]
    legacy = [p for p in seed.problems() if p.kind is ProblemKind.LEGACY_ID_NORMALISED]
    assert [(p.path, p.count) for p in legacy] == [(str(path), id_less)]
    assert all(isinstance(c.input, dict) for e in entries for c in e.tool_calls)
    assert sum(len(e.tool_calls) for e in entries) == sum(len(r.get("tool_calls") or []) for r in raw)


def test_the_seed_has_no_other_problems(seed: UserMemory) -> None:
    assert {p.kind for p in seed.problems()} == {ProblemKind.LEGACY_ID_NORMALISED}


@pytest.mark.parametrize("keyword", ["蓝莓", "java", "生日"])
def test_keyword_search_finds_the_lines_the_raw_files_contain(seed: UserMemory, keyword: str) -> None:
    total = 0
    for session_id, path in _seed_files(seed, "sessions").items():
        expected = [r["message_id"] for r in _raw(path) if keyword.casefold() in r["content"].casefold()]
        assert [m.message_id for m in seed.search_session(session_id, keyword, limit=500)] == expected
        assert [m.message_id for m in seed.search_session(session_id, keyword)] == expected[-20:]
        total += len(expected)
    [(day, path)] = _seed_files(seed, "daily").items()
    expected_daily = [r["message_id"] for r in _raw(path) if keyword.casefold() in r["content"].casefold()]
    hits = seed.search_daily(keyword, limit=500)
    assert [m.message_id for m in hits] == expected_daily
    assert all(m.day == day for m in hits)
    assert [m.message_id for m in seed.search_daily(keyword, day=day, limit=3)] == expected_daily[-3:]
    assert total > 0 and expected_daily  # the keyword really occurs in the fixture


def test_appending_continues_the_seed_and_keeps_it_plain_jsonl(seed: UserMemory) -> None:
    session_id = "ab64d3756bc0"
    session_path = seed.directory / "sessions" / f"{session_id}.jsonl"
    day_path = seed.directory / "daily" / "2026-04-08.jsonl"
    session_before, day_before = session_path.read_bytes(), day_path.read_bytes()
    ts = _dt.datetime(2026, 4, 8, 23, 0, tzinfo=ZONE)
    written = seed.append(session_id, "user", "我还喜欢蓝莓吗？", ts=ts)
    assert written.session.message_id == max(r["message_id"] for r in _raw(session_path)[:-1]) + 1
    assert written.daily.message_id == max(r["message_id"] for r in _raw(day_path)[:-1]) + 1
    assert written.daily.day == "2026-04-08" and written.daily.session_id == session_id
    for path, before in ((session_path, session_before), (day_path, day_before)):
        data = path.read_bytes()
        assert data.startswith(before)  # nothing the demo wrote was touched
        records = [json.loads(raw) for raw in data.decode("utf-8").splitlines()]  # plain JSON per line
        assert records[-1]["content"] == "我还喜欢蓝莓吗？"
        assert _dt.datetime.fromisoformat(records[-1]["ts"]).utcoffset() == _dt.timedelta(hours=8)
    assert seed.search_session(session_id, "蓝莓")[-1].message_id == written.session.message_id


def test_conversations_list_newest_first(seed: UserMemory) -> None:
    raw = json.loads((seed.directory / "conversations.json").read_text(encoding="utf-8"))
    expected = sorted(raw, key=lambda sid: raw[sid]["updated_at"], reverse=True)
    listed = seed.conversations.list()
    assert [c.session_id for c in listed] == expected
    assert [c.title for c in listed] == [raw[sid]["title"] for sid in expected]
    assert all(c.updated_at is not None and c.updated_at.utcoffset() == _dt.timedelta(hours=8) for c in listed)


def test_long_term_memory_reads_as_is_and_its_first_change_keeps_the_original(seed: UserMemory) -> None:
    original = (seed.directory / "memory.md").read_text(encoding="utf-8")
    assert seed.long_term.read() == original and seed.long_term.history() == []
    seed.long_term.add_note("喜欢喝茶")
    [change] = seed.long_term.history()
    assert change.before == original and change.after == seed.long_term.read()
    assert seed.long_term.read().startswith(original)


def test_reading_the_seed_changes_no_file(seed_root: Path, seed: UserMemory) -> None:
    before = {path: path.read_bytes() for path in seed_root.rglob("*") if path.is_file()}
    tree = snapshot(seed_root)
    for session_id in seed.session_ids():
        seed.session(session_id).messages()
        seed.session_window(session_id, 1, 3, 3)
        seed.search_session(session_id, "蓝莓")
    seed.search_daily("蓝莓")
    seed.log.entries()
    seed.conversations.list()
    seed.long_term.history()
    seed.problems()
    assert snapshot(seed_root) == tree
    assert {path: path.read_bytes() for path in seed_root.rglob("*") if path.is_file()} == before
