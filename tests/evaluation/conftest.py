"""Helpers for the recall-case tests: write a case file into tmp_path."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from cases_testlib import CONVERSATION



@pytest.fixture
def case_file(tmp_path: Path) -> Callable[..., Path]:
    """``case_file(cases_yaml, head=CONVERSATION, name="t")`` writes ``{name}.memcases.yaml`` and returns its path."""

    def write(cases: str, *, head: str = CONVERSATION, name: str = "t") -> Path:
        path = tmp_path / f"{name}.memcases.yaml"
        path.write_text(head + "cases:\n" + textwrap.indent(textwrap.dedent(cases), "  "), encoding="utf-8")
        return path

    return write
