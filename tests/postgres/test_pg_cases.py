"""Recall cases that start from a PostgreSQL store: the case's user is exported for the run, the database untouched."""

from __future__ import annotations

from pathlib import Path

from pg_server import PASSWORD

from agentmem_nb import MemoryStore
from agentmem_nb.evaluation.cases import run_case_files
from agentmem_nb.store.postgres import upgrade_database


def test_a_case_reads_its_memory_from_a_database_url(pg_url: str, tmp_path: Path) -> None:
    upgrade_database(pg_url)
    store = MemoryStore(pg_url, zone="Europe/Paris")
    user = store.user("maya")
    user.append("s1", "user", "My sister Ana lives in Porto.")
    user.append("s1", "assistant", "Noted.")
    before = [m.content for m in user.session("s1").messages()]
    cases = tmp_path / "db.memcases.yaml"
    cases.write_text(
        f"memory: {pg_url}\nuser: maya\nzone: Europe/Paris\ncases:\n"
        "  - name: from-the-database\n    question: Where does my sister live?\n"
        "    expect_retrieved: [Ana lives in Porto]\n"
        "  - name: the-fact-too\n    question: Where does my sister live?\n"
        "    expect_facts: [{key: sister.lives_in, value: Porto}]\n"
        "  - name: built-to-fail\n    question: Where does my sister live?\n"
        "    expect_retrieved: [Lisbon]\n", encoding="utf-8")
    report = run_case_files([cases])
    outcome = {r.name: r.passed for r in report.results}
    assert outcome == {"from-the-database": True, "the-fact-too": True, "built-to-fail": False}, report.format()
    assert PASSWORD not in report.format()
    after = MemoryStore(pg_url, zone="Europe/Paris").user("maya")
    assert [m.content for m in after.session("s1").messages()] == before  # the database was only read
