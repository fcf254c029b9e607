"""``reader``: run a test once with the exact reader only and once with the columnar reader taking every file it
accepts (its size threshold set to zero, small segments and blocks so several of each are exercised)."""

from __future__ import annotations

import pytest

from agentmem_nb.frames import _fast


@pytest.fixture(params=["exact", "columnar"])
def reader(request, monkeypatch) -> str:
    if request.param == "exact":
        monkeypatch.setattr(_fast, "FAST_MIN_BYTES", 1 << 62)
    else:
        monkeypatch.setattr(_fast, "FAST_MIN_BYTES", 0)
        monkeypatch.setattr(_fast, "SEGMENT_BYTES", 4096)
        monkeypatch.setattr(_fast, "BLOCK_BYTES", 1024)
    return request.param
