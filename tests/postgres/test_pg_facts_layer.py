"""The inspector's Facts layer over PostgreSQL (facts kept in the database): the same rows as over files, and a
conflict resolved from the panel is an event in the database. And over a store that keeps no facts (no
KeepsFacts capability): the layer opens with no rows, its panel disabled, saying why; its actions refuse."""

from __future__ import annotations

from typing import Any

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.errors import StoreError
from agentmem_nb.frames import FACT_COLUMNS
from agentmem_nb.store import FactSource, Statement
from agentmem_nb.store.contract import KeepsFacts
from agentmem_nb.store.postgres import PostgresStore
from agentmem_nb.widgets import MemoryInspector


def _record(store: MemoryStore) -> None:
    facts = store.user("alice").facts
    facts.record([Statement("user", "lives_in", "Paris")], source=FactSource("s1", 1))
    facts.record([Statement("user", "lives_in", "Lyon")], source=FactSource("s1", 2))
    facts.record([Statement("user", "name", "Alice")], source=FactSource("s1", 1))
    facts.record([Statement("user", "name", "Ally", certain=False)], source=FactSource("s1", 2))


def test_the_facts_layer_shows_the_databases_facts_as_the_files_and_resolves_there(
        twin: tuple[MemoryStore, PostgresStore]) -> None:
    files, pg = twin
    assert isinstance(pg.user("alice"), KeepsFacts)
    for store in (files, pg):
        _record(store)
    on_files = MemoryInspector(files, user_id="alice", layer="facts")
    on_pg = MemoryInspector(pg, user_id="alice", layer="facts")
    shown = ["key", "value", "status", "source"]
    assert on_pg.errors == [] and on_pg.facts_panel.enabled and on_pg.facts_panel.notice.value == ""
    assert on_pg.frame[shown].to_dict("records") == on_files.frame[shown].to_dict("records")
    assert "conflict" in set(on_pg.frame["status"])
    held = next(f for f in pg.user("alice").facts.conflicts())
    on_pg.facts_panel.resolve(held.fact_id, accept=False)
    assert on_pg.errors == [] and "conflict" not in set(on_pg.frame["status"])
    assert not pg.user("alice").facts.conflicts()
    assert [e.kind for e in pg.user("alice").facts.events()][-1] == "resolve"


class _NoFacts:
    """A user of a store that keeps no facts: everything of the real user but ``facts`` and its queue."""

    def __init__(self, user: Any) -> None:
        self._user = user

    def __getattr__(self, name: str) -> Any:
        if name in ("facts", "fact_queue"):
            raise AttributeError(name)
        return getattr(self._user, name)


def test_the_facts_layer_is_disabled_with_its_reason_on_a_store_without_facts(
        twin: tuple[MemoryStore, PostgresStore], monkeypatch: pytest.MonkeyPatch) -> None:
    files, _ = twin
    real_user = files.user
    monkeypatch.setattr(files, "user", lambda user_id: _NoFacts(real_user(user_id)))
    assert not isinstance(files.user("alice"), KeepsFacts)
    inspector = MemoryInspector(files, user_id="alice", layer="facts")
    panel = inspector.facts_panel
    assert inspector.errors == [] and list(inspector.frame.columns) == list(FACT_COLUMNS) and len(inspector.frame) == 0
    assert not panel.enabled and panel.box.layout.display == "" and panel.parts.layout.display == "none"
    assert "keeps no facts" in panel.notice.value and "KeepsFacts" in panel.notice.value
    with pytest.raises(StoreError, match="keeps no facts"):
        panel.resolve(1, accept=True)
    inspector.refresh()
    assert inspector.errors == [] and "keeps no facts" in inspector.html_values()["facts_notice"]
