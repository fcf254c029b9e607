"""``agentmem-nb facts``: every event-derived fact row with key, value, status, source and validity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.cli import main
from agentmem_nb.store import FactSource, Statement


@pytest.fixture
def root(store: MemoryStore) -> Path:
    facts = store.user("alice").facts
    facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 3))
    facts.record([Statement("user", "name", "Alice")], source=FactSource("s2", 1))
    facts.record([Statement("user", "name", "Alicia")], source=FactSource("s2", 5))
    return store.root


def test_json_rows_carry_key_value_status_source_and_validity(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(root), "facts", "--user", "alice", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["key"], r["value"], r["status"], r["source"]) for r in rows] == [
        ("user.lives_in", "Paris", "superseded", "s1#1"), ("user.lives_in", "Lyon", "active", "s1#3"),
        ("user.name", "Alice", "active", "s2#1"), ("user.name", "Alicia", "conflict", "s2#5")]
    assert rows[0]["valid_to"] == rows[1]["valid_from"] is not None and rows[1]["valid_to"] is None


def test_text_lines_and_filters(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(root), "facts", "--user", "alice", "--current", "--key", "user.lives_in"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and "user.lives_in = 'Lyon'  [active]  source s1#3" in lines[0]


def test_a_bad_user_id_is_one_error_line(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(root), "facts", "--user", "../x"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
