"""JSON bodies that are always valid UTF-8: :class:`SafeJSONResponse` and :func:`json_bytes`.

A stored text may hold a lone surrogate (a JSON ``"\\ud800"`` escape read back from a file is such a ``str``), which
has no UTF-8 form, so the standard ``JSONResponse`` fails with a ``UnicodeEncodeError`` (a 500) on it. Here every
lone surrogate is written as its ``\\udXXX`` escape instead: valid JSON that reads back as the stored string, the
rule of the command line's ``--json`` (``agentmem_nb.cli._json_text``), applied to compact JSON. The common case
(no surrogate) goes through orjson, already a dependency of the frames; it refuses a lone surrogate, which then takes
the standard library's path.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from starlette.responses import JSONResponse

from agentmem_nb.textutil import LONE_SURROGATE

__all__ = ["SafeJSONResponse", "json_bytes"]


def json_bytes(value: Any) -> bytes:
    """Compact JSON of ``value`` as UTF-8, lone surrogates escaped (see the module docstring)."""
    try:
        # orjson: a 10,000-message thread encodes in about a fifth of the time; it refuses lone surrogates
        return orjson.dumps(value)
    except orjson.JSONEncodeError:  # a lone surrogate (or a type orjson does not know): the exact path below
        pass
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if not text.isascii():
        text = LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text.encode("utf-8")


class SafeJSONResponse(JSONResponse):
    """The API's JSON response (the app's ``default_response_class``)."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content)
