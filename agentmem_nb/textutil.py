"""Text that can leave the process: :func:`displayable`.

A Python ``str`` can hold a lone surrogate (``"\\ud83d"``, half of an emoji, from a JSON escape or a terminal that
sent invalid bytes), and the store keeps text as it was given. Such a string has no UTF-8 form: printing it to a UTF-8
terminal raises ``UnicodeEncodeError``, and it can neither cross to the browser nor pass through an HTML sanitiser.
Whatever *shows* or *sends* text (the widgets, the command line, the messages given to a model) passes it through :func:`displayable`, which puts U+FFFD, the
replacement character, where each lone surrogate was. Only the display changes: files and frames keep the text as it is.

Standard library only, so the command line can import it without the widgets.
"""

from __future__ import annotations

import re

__all__ = ["displayable", "LONE_SURROGATE"]

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""Matches one surrogate code point: none has a UTF-8 form (decoded text holds a proper pair as one code point)."""


def displayable(text: object) -> str:
    """``str(text)`` with every lone surrogate shown as U+FFFD (``�``), so it can be encoded as UTF-8.

    >>> displayable("a \\ud83d b")
    'a \\ufffd b'
    """
    value = str(text)
    return value if value.isascii() else LONE_SURROGATE.sub("\ufffd", value)
