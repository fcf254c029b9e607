"""Structured memory on PostgreSQL: facts (the files' one fold over a table), the facts queue, standing instructions,
the schema step that adds them to a version-1 database, and the agent, the CLI and the frames using them there."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from agentmem_nb import MemoryStore, frames
from agentmem_nb.agent import ChatService, OfflineChatModel
from agentmem_nb.agent.facts_queue import queue_file
from agentmem_nb.agent.procedural import propose_instruction
from agentmem_nb.cli import main
from agentmem_nb.errors import StoreError
from agentmem_nb.facts import OfflineExtractor, record_message
from agentmem_nb.store import Fact, FactSource, Statement
from agentmem_nb.store.contract import KeepsFacts
from agentmem_nb.store.postgres import PostgresStore, upgrade_database
from agentmem_nb.store.postgres.migrations import MIGRATIONS

ZONE = "Asia/Shanghai"
WORKER = Path(__file__).with_name("pg_facts_worker.py")
AGENT_WORKER = Path(__file__).parents[1] / "agent" / "facts_worker.py"


@pytest.fixture
def store(pg_url: str, clock) -> PostgresStore:  # noqa: ANN001
    upgrade_database(pg_url)
    opened = MemoryStore(pg_url, zone=ZONE, clock=clock)
    assert isinstance(opened, PostgresStore)
    yield opened
    opened.close()


def test_a_version_1_database_is_upgraded_and_keeps_its_rows(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:  # a database made by the previous agentmem_nb
        with conn.transaction():
            conn.execute(MIGRATIONS[0].sql.encode())
            conn.execute("CREATE TABLE am_schema (version int PRIMARY KEY, name text NOT NULL, "
                         "applied_at timestamptz NOT NULL DEFAULT now())")
            conn.execute("INSERT INTO am_schema (version, name) VALUES (1, %s)", (MIGRATIONS[0].name,))
    with pytest.raises(StoreError, match="db upgrade"):
        MemoryStore(pg_url, zone=ZONE)
    assert upgrade_database(pg_url) == [m.version for m in MIGRATIONS[1:]] and MIGRATIONS[1].name == "facts"
    with MemoryStore(pg_url, zone=ZONE) as store:
        user = store.user("alice")
        user.append("s1", "user", "I live in Paris.")
        user.facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
        user.instructions.add_note("Answer in French.")
        assert [f.value for f in user.facts.current()] == ["Paris"] and user.session("s1").messages()[0].content
    assert upgrade_database(pg_url) == []


def test_the_postgres_user_keeps_facts(store: PostgresStore) -> None:
    user = store.user("alice")
    assert isinstance(user, KeepsFacts)
    assert user.facts.path == f"{store.db.display}#alice/facts.jsonl"


def test_two_processes_deciding_at_once_never_both_supersede(pg_url: str) -> None:
    upgrade_database(pg_url)
    procs = [subprocess.Popen([sys.executable, str(WORKER), pg_url, f"p{n}", "15"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for n in range(3)]
    try:
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
            assert proc.wait(timeout=300) == 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    with MemoryStore(pg_url, zone="UTC") as store:
        facts = store.user("u").facts
        events = facts.events()
        assert [e.event_id for e in events] == list(range(1, 46))  # ids 1..n, no gap, no duplicate
        assert len(facts.get("user", "lives_in")) == 1  # one value at a time, whatever the interleaving
        ended = [i for e in events for i in e.detail["ends"]]
        active = facts.get("user", "lives_in")[0].fact_id
        # each old value ended by exactly one later event: no two writers decided on the same view
        assert sorted(ended) == [e.event_id for e in events if e.event_id != active]


def test_the_database_refuses_a_second_event_with_the_same_key(store: PostgresStore, pg_url: str) -> None:
    facts = store.user("alice").facts
    facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    again = MemoryStore(pg_url, zone=ZONE)  # another process: its own view, folded from the table
    assert again.user("alice").facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1)) == []
    with psycopg.connect(pg_url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.UniqueViolation):
            conn.execute("INSERT INTO am_fact_events (user_id, position, event_id, record, event_key) SELECT user_id, "
                         "9, 9, record, event_key FROM am_fact_events")
    assert len(facts.events()) == 1
    again.close()


def test_a_value_with_a_nul_or_a_lone_surrogate_is_kept_exactly(store: PostgresStore, tmp_path: Path) -> None:
    files = MemoryStore(tmp_path / "m", zone=ZONE, clock=store.clock).user("alice").facts
    for facts in (store.user("alice").facts, files):
        facts.record([Statement("user", "nickname", "A\ud800\x00")], source=FactSource("s1", 1))
        assert facts.record([Statement("user", "nickname", "A\ud800\x00")], source=FactSource("s1", 1)) == []
    def seen(facts: list[Fact]) -> list[tuple[object, ...]]:  # the clock steps per call: times differ
        return [(f.fact_id, f.key, f.value, f.status, f.source) for f in facts]

    assert seen(store.user("alice").facts.all()) == seen(files.all()) and files.all()[0].value == "A\ud800\x00"


def test_an_event_edited_behind_the_store_is_folded_again(store: PostgresStore, pg_url: str) -> None:
    facts = store.user("alice").facts
    facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    assert [f.value for f in facts.current()] == ["Paris"]
    with psycopg.connect(pg_url, autocommit=True) as conn:  # a hand fix: same number of events, another value
        conn.execute("UPDATE am_fact_events SET record = jsonb_set(record, '{value}', '\"Lyon\"')")
    assert [f.value for f in facts.current()] == ["Lyon"]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO am_fact_events (user_id, position, event_id, record) VALUES ('alice', 1, 2, '[1]')")
        conn.execute("UPDATE am_fact_logs SET rows = 2, next_event = 3")
    assert [p.line for p in store.user("alice").problems()] == [2] and len(facts.events()) == 1


def test_the_agent_writes_facts_in_the_background_and_reads_instructions(store: PostgresStore) -> None:
    svc = ChatService(store, model=OfflineChatModel())  # type: ignore[arg-type]  # the contract, not the class
    user = store.user("alice")
    propose_instruction(user, {"instruction": "Always answer briefly.", "reason": "asked"})  # type: ignore[arg-type]
    sid = svc.new_conversation("alice")
    first = svc.turn("alice", sid, "I live in Paris and my sister Ana lives in Madrid.")
    svc.turn("alice", sid, "We moved to Lyon last month.")
    assert svc.drain(timeout=60) and svc.facts.errors == []
    history = user.facts.history("user", "lives_in")
    assert [(f.value, f.status) for f in history] == [("Paris", "superseded"), ("Lyon", "active")]
    assert history[0].source == FactSource(sid, first.user_message.message_id)
    events = [r["event"] for _, r in queue_file(user).iter_records()]  # type: ignore[arg-type]
    assert sorted(events) == ["done", "done", "queued", "queued"] and events[0] == "queued"
    third = svc.turn("alice", sid, "Where does my sister live?")
    assert "[INSTRUCTIONS]\n(instructions.md version 1)" in third.memory_context
    assert "sister.lives_in = Madrid" in third.memory_context
    assert user.instructions.read() == "- Always answer briefly.\n" and len(user.instructions.history()) == 1
    assert "Always answer" not in user.long_term.read(), "memory.md is another document"


def test_a_killed_process_loses_no_queued_extraction_on_postgres(store: PostgresStore, pg_url: str) -> None:
    child = subprocess.Popen([sys.executable, str(AGENT_WORKER), pg_url, "u", "s1", "I moved to Lyon."],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "turned"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    user = store.user("u")
    assert user.facts.all() == [], "killed before its extraction ran"
    svc = ChatService(store, model=OfflineChatModel())  # type: ignore[arg-type]
    assert svc.facts.resume(user) == 1 and svc.drain(timeout=60)  # type: ignore[arg-type]
    assert [f.value for f in user.facts.get("user", "lives_in")] == ["Lyon"]
    # a crash between the facts and the "done" line: the next process extracts again and records nothing twice
    message = user.append("s1", "user", "I love jazz.").session
    user.fact_queue.append({"event": "queued", "session_id": "s1", "target": message.message_id})
    record_message(user.facts, OfflineExtractor(), message.content, source=FactSource("s1", message.message_id))
    before = len(user.facts.events())
    hot = ChatService(MemoryStore(pg_url, zone=ZONE), model=OfflineChatModel(), facts="hot")  # type: ignore[arg-type]
    assert hot.facts.resume(hot.store.user("u")) == 1  # type: ignore[arg-type]
    assert len(user.facts.events()) == before == 2
    hot.store.close()  # type: ignore[attr-defined]


def test_the_cli_and_the_frames_read_facts_from_the_database(store: PostgresStore, pg_url: str,
                                                             capsys) -> None:  # noqa: ANN001
    facts = store.user("alice").facts
    facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 3))
    assert main(["--root", pg_url, "facts", "--user", "alice", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["key"], r["value"], r["status"], r["source"]) for r in rows] == [
        ("user.lives_in", "Paris", "superseded", "s1#1"), ("user.lives_in", "Lyon", "active", "s1#3")]
    assert rows[0]["valid_to"] == rows[1]["valid_from"] is not None
    frame = frames.facts(store.user("alice"), current=True)  # type: ignore[arg-type]
    assert frame[["key", "value", "status", "session_id", "message_id"]].values.tolist() == [
        ["user.lives_in", "Lyon", "active", "s1", 3]]
    assert str(frame["valid_from"].dtype).startswith("datetime64") and "Asia/Shanghai" in str(frame["valid_from"].dtype)


def test_the_facts_widget_resolves_a_conflict_in_the_database(store: PostgresStore) -> None:
    from agentmem_nb.widgets.facts import FactsWidget

    user = store.user("alice")
    user.append("s1", "user", "My name is Alice.")
    user.facts.record([Statement("user", "name", "Alice")], source=FactSource("s1", 1))
    held = user.facts.record([Statement("user", "name", "Alicia")], source=FactSource("s1", 1))[0]
    widget = FactsWidget(user)  # type: ignore[arg-type]
    assert len(widget.conflict_box.children) == 1
    widget.conflict_box.children[0].children[1].click()  # accept
    assert widget.error_area.value == "" and user.facts.get("user", "name")[0].fact_id == held.fact_id
    assert [e.kind for e in user.facts.events()] == ["assert", "assert", "resolve"]
    widget.show_source(held.fact_id)
    assert "<b>#1" in widget.source.value and "My name is Alice." in widget.source.value


def test_a_fact_rolled_back_with_its_turn_is_not_kept_in_a_view_nor_decided_on(pg_url: str, clock) -> None:  # noqa: ANN001
    """A records a fact inside a transaction that then fails; B records another fact at the same position (same
    count, same generation). A's next write must decide on what the database holds — B's fact untouched, one value
    of lives_in — never on the event that was rolled back."""
    upgrade_database(pg_url)
    a = MemoryStore(pg_url, zone="Asia/Shanghai", clock=clock)
    b = MemoryStore(pg_url, zone="Asia/Shanghai", clock=clock)
    ua, ub = a.user("alice"), b.user("alice")
    ua.facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    with pytest.raises(RuntimeError, match="the turn failed"):
        with ua.transaction():
            ua.facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 2))
            raise RuntimeError("the turn failed")
    ub.facts.record([Statement("user", "likes", "tea", "add")], source=FactSource("s1", 3))
    assert [(f.value, f.status) for f in ua.facts.all()] == [("Paris", "active"), ("tea", "active")]
    ua.facts.record([Statement("user", "lives_in", "Berlin")], source=FactSource("s1", 4))
    fresh = MemoryStore(pg_url, zone="Asia/Shanghai", clock=clock).user("alice").facts
    assert [(f.value, f.status) for f in fresh.all()] == [
        ("Paris", "superseded"), ("tea", "active"), ("Berlin", "active")]
    assert [f.value for f in fresh.get("user", "lives_in")] == ["Berlin"]
    for store in (a, b):
        store.close()


def test_a_database_whose_version_2_is_another_migration_is_refused_with_the_way_out(pg_url: str) -> None:
    """A database made by another build (its version 2 is not ours): upgrading never skips our version 2 on the
    strength of the number alone — it refuses, naming both, and changes nothing."""
    with psycopg.connect(pg_url, autocommit=True) as conn:
        with conn.transaction():
            conn.execute(MIGRATIONS[0].sql.encode())
            conn.execute("CREATE TABLE IF NOT EXISTS am_schema (version int PRIMARY KEY, name text NOT NULL, "
                         "applied_at timestamptz NOT NULL DEFAULT now())")
            conn.execute("INSERT INTO am_schema (version, name) VALUES (1, %s), (2, 'append_cost')",
                         (MIGRATIONS[0].name,))
    with pytest.raises(StoreError, match=r"version 2 is 'append_cost'.*'facts'.*agentmem-nb export"):
        upgrade_database(pg_url)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regclass('am_fact_events') IS NULL").fetchone() == (True,)
