"""Shared by the inspector and timeline tests: the frames tests' user builder, and an HTML safety check."""

from __future__ import annotations

import json
import sys
from html.parser import HTMLParser
from pathlib import Path

_FRAMES_TESTS = Path(__file__).resolve().parents[1] / "frames"
if str(_FRAMES_TESTS) not in sys.path:
    sys.path.insert(0, str(_FRAMES_TESTS))

from frames_testlib import XSS_IMG, XSS_SCRIPT, at, build_user, expected_calls, turn

__all__ = ["XSS_IMG", "XSS_SCRIPT", "at", "build_user", "expected_calls", "turn", "assert_inert", "ESCAPED_IMG",
           "ESCAPED_SCRIPT", "table_rows"]

ESCAPED_IMG = "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"
ESCAPED_SCRIPT = "&lt;script&gt;alert(1)&lt;/script&gt;"


def table_rows(table: object) -> list[list[object]]:
    """The rows an itables ``ITable`` widget sends to the browser (its cells as DataTables gets them)."""
    data = getattr(table, "_dt_args").get("data_json", "[]")
    return json.loads(data) if isinstance(data, str) else list(data)


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.handlers: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.handlers += [(tag, name) for name, _value in attrs if name.lower().startswith("on")]


def assert_inert(html: str) -> None:
    """``html`` creates no script or img element and no event-handler attribute (a browser would run none)."""
    parser = _Elements()
    parser.feed(html)
    parser.close()
    assert "script" not in parser.tags and "img" not in parser.tags, parser.tags
    assert not parser.handlers, parser.handlers
