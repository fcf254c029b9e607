"""Moving in and out: ``agentmem-nb migrate memory/ URL`` (resumable, idempotent; the original demo's folder too) and
``agentmem-nb export URL out/``; a round trip gives the same messages, ids, times, tool calls and long-term history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.cli import main
from agentmem_nb.items import ItemKey
from agentmem_nb.messages import ToolCall
from agentmem_nb.store import DialogueEntry
from agentmem_nb.store import FactSource, Statement
from agentmem_nb.store.contract import KeepsFacts, UserStore
from agentmem_nb.store.postgres import PostgresStore
from agentmem_nb.store.postgres.transfer import export_database, migrate_folder

ZONE = "Asia/Shanghai"


def _view(user: UserStore) -> dict[str, object]:
    """Everything a reader of ``user`` sees, comparable across backends."""
    return {
        "sessions": {sid: user.session(sid).messages() for sid in user.session_ids()},
        "days": {day: user.daily(day).messages() for day in user.days()},
        "long_term": (user.long_term.read(), list(user.long_term.history()), user.long_term.current()),
        "conversations": user.conversations.list(),
        "log": user.log.entries(),
        "redactions": user.redactions.events(),
    }


def _structured(user: UserStore) -> dict[str, object]:
    """Structured memory as a reader sees it: facts (view and events with their records), the standing instructions
    with their history, the facts queue's lines (their ids are the queue's own: left out)."""
    assert isinstance(user, KeepsFacts)
    facts = user.facts
    return {
        "facts": facts.all(),
        "events": [(e.event_id, e.kind, e.ts, e.fact_id, e.detail) for e in facts.events()],
        "instructions": (user.instructions.read(), list(user.instructions.history()), user.instructions.current()),
        "queue": [{k: v for k, v in r.items() if k != "message_id"} for _, r in user.fact_queue.iter_records()],
    }


def _rich_folder(root: Path, clock) -> MemoryStore:
    """A folder with what the original demo never wrote: history, tool calls, a log, odd text, a legacy line."""
    store = MemoryStore(root, zone=ZONE, clock=clock)
    user = store.user("alice")
    user.conversations.create("s1", title="tea")
    user.append("s1", "user", "what tea do I like? 我喜欢绿茶")
    call = ToolCall("search_session", {"keyword": "tea"}, "#1 ...", id="c1", duration_ms=1.5)
    user.append("s1", "assistant", "green tea", tool_calls=[call], meta={"model": "offline"})
    user.append("s2", "user", "lone \ud800 surrogate and nul \x00")
    user.log.append(DialogueEntry(0, clock(), "s1", "what tea?", "green tea", tool_calls=(call,),
                                  timings_ms={"total": 3.0}, assistant_message_id=2))
    user.long_term.write("# Alice\n" + "background\n" * 30)
    for i in range(12):
        user.long_term.add_note(f"note {i}")
    user.long_term.edit(lambda text: text.replace("note 3", "note three"))
    facts = user.facts  # a change, a conflict resolved, a deletion, a hedge
    facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 3))
    facts.record([Statement("user", "name", "Alice")], source=FactSource("s1", 1))
    held = facts.record([Statement("user", "name", "Alicia \ud800")], source=FactSource("s2", 1))
    facts.resolve(held[0].fact_id, accept=True)
    facts.delete(facts.record([Statement("user", "likes", "jazz", "add")], source=FactSource("s1", 1))[0].fact_id)
    user.instructions.add_note("Answer in French.", source="propose_instruction: asked")
    user.instructions.add_note("Keep it short.")
    user.instructions.restore(2, which="before")
    user.fact_queue.append({"event": "queued", "session_id": "s1", "target": 1, "ts": "2026-04-08T10:00:00+08:00"})
    user.redactions.add(ItemKey("session", "s1", 1), reason="private", source="inspector")
    with open(root / "alice" / "sessions" / "s1.jsonl", "ab") as handle:  # a legacy line without an id
        handle.write(json.dumps({"ts": "2026-04-08T12:00:00", "role": "user", "content": "old line"}).encode() + b"\n")
    return store


@pytest.fixture
def target(pg_url: str):
    with PostgresStore(pg_url, zone=ZONE, upgrade=True) as store:
        yield store


def test_the_original_demo_folder_round_trips_through_the_commands(seed_root: Path, pg_url: str, tmp_path: Path,
                                                                   capsys) -> None:
    assert main(["--zone", ZONE, "migrate", str(seed_root), pg_url]) == 0
    assert "messages" in capsys.readouterr().out
    files = MemoryStore(seed_root, zone=ZONE).user("demo-user")
    with PostgresStore(pg_url, zone=ZONE) as database:
        assert _view(database.user("demo-user")) == _view(files)
        assert database.users() == ["demo-user"]
    assert main(["--zone", ZONE, "migrate", str(seed_root), pg_url]) == 0  # idempotent: nothing new
    assert "nothing new" in capsys.readouterr().out
    assert main(["--zone", ZONE, "export", pg_url, str(tmp_path / "out")]) == 0
    assert _view(MemoryStore(tmp_path / "out", zone=ZONE).user("demo-user")) == _view(files)


def test_history_tool_calls_log_and_odd_text_round_trip(tmp_path: Path, target: PostgresStore, clock) -> None:
    source = _rich_folder(tmp_path / "memory", clock)
    report = migrate_folder(source.root, target)
    assert report.copied["messages"] == 4 + 3 and not report.skipped  # the legacy line has no day copy
    files = source.user("alice")
    assert _view(target.user("alice")) == _view(files)
    assert _structured(target.user("alice")) == _structured(files)
    assert report.copied["fact events"] == 7 and report.copied["instruction versions"] == 3
    again = migrate_folder(source.root, target)  # idempotent: history, log and conversations are not copied twice
    assert str(again) == "nothing new" and _view(target.user("alice")) == _view(files)
    assert _structured(target.user("alice")) == _structured(files)
    assert [m.message_id for m in target.user("alice").session("s1").messages()] == [1, 2, 3]  # the legacy line: #3
    assert target.user("alice").append("s1", "user", "next").session.message_id == 4  # the ids go on
    export_database(target, tmp_path / "out")
    back = MemoryStore(tmp_path / "out", zone=ZONE).user("alice")
    assert _view(back) == _view(target.user("alice"))
    # imported day lines are the day's own rows (searched by their own text), the append after the import a copy
    # searched through its session row: day searches answer as the files' over the same messages
    for keyword in ("e", "tea", "next", "喜欢"):
        assert [(m.day, m.message_id, m.content) for m in target.user("alice").search_daily(keyword, limit=50)] == \
               [(m.day, m.message_id, m.content) for m in back.search_daily(keyword, limit=50)], keyword
    assert _structured(back) == _structured(files)
    assert back.long_term.text_at(5) == files.long_term.text_at(5)
    # the facts go on from the database: the next event takes the next id, a replayed source adds nothing
    assert target.user("alice").facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 3)) == []
    moved = target.user("alice").facts.record([Statement("user", "lives_in", "Rome")], source=FactSource("s1", 5))
    assert [f.fact_id for f in moved] == [8, 2]


def test_a_stopped_migration_is_finished_by_running_it_again(tmp_path: Path, target: PostgresStore, clock) -> None:
    source = MemoryStore(tmp_path / "memory", zone=ZONE, clock=clock)
    for i in range(25):
        source.user("bob").append("s1", "user", f"message {i}")
    seen: list[int] = []

    def stop_after_the_first_batch(name: str, done: int) -> None:
        seen.append(done)
        raise KeyboardInterrupt  # Ctrl-C between two batches

    with pytest.raises(KeyboardInterrupt):
        migrate_folder(source.root, target, batch=10, progress=stop_after_the_first_batch)
    assert seen == [10] and len(target.user("bob").session("s1")) == 10
    migrate_folder(source.root, target, batch=10)
    for i in range(25, 30):  # the folder grows; the next run copies only what is new
        source.user("bob").append("s1", "user", f"message {i}")
    report = migrate_folder(source.root, target, batch=10)
    assert report.copied["messages"] == 10  # 5 session lines and their 5 day copies
    assert _view(target.user("bob")) == _view(source.user("bob"))
    assert [m.message_id for m in target.user("bob").session("s1").messages()] == list(range(1, 31))


def test_a_stopped_facts_migration_is_finished_by_running_it_again(tmp_path: Path, target: PostgresStore,
                                                                   clock) -> None:
    source = MemoryStore(tmp_path / "memory", zone=ZONE, clock=clock)
    for i in range(1, 26):
        source.user("bob").facts.record([Statement("user", "lives_in", f"city {i}")], source=FactSource("s1", i))
    seen: list[tuple[str, int]] = []

    def stop_after_the_first_batch(name: str, done: int) -> None:
        seen.append((name, done))
        if name.endswith("facts.jsonl"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        migrate_folder(source.root, target, batch=10, progress=stop_after_the_first_batch)
    assert seen[-1] == ("bob/facts.jsonl", 10) and len(target.user("bob").facts.events()) == 10
    report = migrate_folder(source.root, target, batch=10)
    assert report.copied["fact events"] == 15 and _structured(target.user("bob")) == _structured(source.user("bob"))
    other = MemoryStore(tmp_path / "other", zone=ZONE, clock=clock)
    other.user("bob").facts.record([Statement("user", "lives_in", "elsewhere")], source=FactSource("s9", 1))
    refused = migrate_folder(other.root, target)
    assert any("bob/facts.jsonl" in note for note in refused.skipped)
    assert len(target.user("bob").facts.events()) == 25


def test_a_layer_the_database_holds_otherwise_is_not_merged(tmp_path: Path, target: PostgresStore, clock) -> None:
    source = MemoryStore(tmp_path / "memory", zone=ZONE, clock=clock)
    source.user("bob").append("s1", "user", "from the folder")
    target.user("bob").append("s1", "user", "already in the database")
    report = migrate_folder(source.root, target)
    assert any("bob/sessions/s1" in note for note in report.skipped)
    assert [m.content for m in target.user("bob").session("s1").messages()] == ["already in the database"]


def test_export_refuses_a_folder_that_holds_the_user(tmp_path: Path, target: PostgresStore) -> None:
    target.user("bob").append("s1", "user", "hi")
    (tmp_path / "out" / "bob").mkdir(parents=True)
    with pytest.raises(Exception, match="already holds 'bob'"):
        export_database(target, tmp_path / "out")


def test_a_folders_redaction_whose_id_the_database_holds_is_kept_and_hides_its_message(
        tmp_path: Path, target: PostgresStore, clock) -> None:  # noqa: ANN001
    """The database already redacted a message of its own (redaction 1); the folder redacted another (also its 1).
    Migrating keeps the folder's under a new id — the secret stays hidden — and a second run copies nothing."""
    target.user("u").append("s9", "user", "the database's own")
    target.user("u").redactions.add(ItemKey("session", "s9", 1), reason="database")
    source = MemoryStore(tmp_path / "memory", zone=ZONE, clock=clock)
    source.user("u").append("s1", "user", "my secret")
    source.user("u").redactions.add(ItemKey("session", "s1", 1), reason="private")
    report = migrate_folder(source.root, target)
    assert report.copied["redactions"] == 1 and any("new ids" in note for note in report.skipped)
    assert [m.content for m in target.user("u").recent("s1")] == ["[redacted: private]"]
    assert [m.content for m in target.user("u").recent("s9")] == ["[redacted: database]"]
    assert not target.user("u").search_session("s1", "secret")
    again = migrate_folder(source.root, target)
    assert again.copied.get("redactions", 0) == 0 and len(target.user("u").redactions.events()) == 2
