"""The inspector's Facts layer over a store that keeps no facts (PostgreSQL: no KeepsFacts capability): the layer
opens with no rows and its panel disabled, saying why; its actions refuse with the same reason."""

from __future__ import annotations

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.errors import StoreError
from agentmem_nb.frames import FACT_COLUMNS
from agentmem_nb.store.contract import KeepsFacts
from agentmem_nb.store.postgres import PostgresStore
from agentmem_nb.widgets import MemoryInspector


def test_the_facts_layer_is_disabled_with_its_reason_on_a_store_without_facts(
        twin: tuple[MemoryStore, PostgresStore]) -> None:
    files, pg = twin
    assert not isinstance(pg.user("alice"), KeepsFacts)
    inspector = MemoryInspector(pg, user_id="alice", layer="facts")
    panel = inspector.facts_panel
    assert inspector.errors == [] and list(inspector.frame.columns) == list(FACT_COLUMNS) and len(inspector.frame) == 0
    assert not panel.enabled and panel.box.layout.display == "" and panel.parts.layout.display == "none"
    assert "keeps no facts" in panel.notice.value and "KeepsFacts" in panel.notice.value
    with pytest.raises(StoreError, match="keeps no facts"):
        panel.resolve(1, accept=True)
    inspector.refresh()
    assert inspector.errors == [] and "keeps no facts" in inspector.html_values()["facts_notice"]
    # the same user in files: the layer is enabled
    on_files = MemoryInspector(files, user_id="alice", layer="facts")
    assert on_files.facts_panel.enabled and on_files.facts_panel.notice.value == ""
