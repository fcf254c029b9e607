"""The only way message text becomes HTML: escape it, or render Markdown and sanitise the result.

Message content, tool inputs and tool outputs are written by users and models; a message such as
``<img src=x onerror="alert(1)">`` must show as text. ``markdown-it-py`` renders with raw HTML disabled, and
``nh3`` (the Rust ammonia sanitiser) strips anything that is not on its allow-list, attributes included.
"""

from __future__ import annotations

import html
import json
from typing import Any

import nh3
from markdown_it import MarkdownIt

# A lone surrogate cannot cross to the browser nor pass through nh3: every text shown goes through displayable(),
# which lives in a light module so that the command line uses the same rule without importing the widgets.
from agentmem_nb.textutil import displayable

__all__ = ["displayable", "escape", "safe_markdown", "pretty_json"]

# "commonmark" with html=False: raw HTML in the source is escaped, not passed through.
_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")

_ALLOWED_TAGS = {
    "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "a", "del",
}
_ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}}


def escape(text: object) -> str:
    """Plain text -> HTML text (quotes included), displayable (see :func:`displayable`)."""
    return html.escape(displayable(text), quote=True)


def safe_markdown(text: str) -> str:
    """Markdown -> sanitised HTML. Links keep http(s)/mailto only and open with ``rel="noopener noreferrer"``."""
    rendered = _md.render(displayable(text or ""))
    return nh3.clean(
        rendered,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer",
    )


def pretty_json(value: Any) -> str:
    """A dict or list as indented JSON text (escaped, ready for a ``<pre>``)."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return escape(text)
