"""Validation of the identifiers that become file names.

A ``user_id`` or ``session_id`` becomes a path component under ``memory/``; a ``day`` becomes a file name. Each is
checked here, the one place the rule lives, before any path is built, so no value can leave ``memory/{user_id}/``.
Model-supplied values (tool arguments) go through the same functions.

Why the id rule looks like this:

* **Any script.** The original demo's user id is a free text box, so ``memory/小明/`` exists in the wild: an id is
  any printable Unicode text (Chinese, emoji, Hebrew or Arabic letters), not an ASCII whitelist.
* **One spelling, one folder.** "é" can be one code point (NFC) or "e" plus a combining accent (NFD); most file
  systems keep both as different names. An id must already be in NFC: a decomposed spelling is refused with an error
  that shows the NFC form, rather than normalised quietly, so that a caller holding the other spelling (or an NFD
  folder made by another program) learns of it instead of silently getting a second, empty memory.
* **No invisible twins.** ``str.isprintable`` refuses control characters (Cc, NUL included), format characters (Cf:
  bidirectional overrides, zero-width spaces and joiners, the BOM), line and paragraph separators, surrogates, private
  use and unassigned code points, and every space but the ASCII one; spaces are refused at either end. So two ids
  that print the same are the same id. Right-to-left *letters* are ordinary printable characters and are accepted.
  The two joiners are the exception, because writing needs them: ZWJ (U+200D) builds emoji sequences (👨‍👩‍👧) and
  Indic conjuncts, ZWNJ (U+200C) is part of Persian spelling. Each is accepted only *between* two characters that
  are neither ASCII nor a joiner, where it shapes a glyph; at an end, doubled or beside an ASCII letter it could
  only make an invisible twin ("al\u200dice"), and is refused.
* **Cannot leave the folder.** No ``/`` or ``\\``; not ``.`` or ``..``, and nothing starting with ``.`` (hidden
  files, and the store's own temporary files, start with a dot).
* **Fits a file name.** At most 128 characters and 180 bytes of UTF-8, so ``{id}.jsonl.quarantine`` stays within
  the 255-byte file-name limit of common file systems (128 emoji would be 512 bytes).
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata

from agentmem_nb.errors import InvalidIdentifier

__all__ = ["MAX_ID_LENGTH", "MAX_ID_BYTES", "check_user_id", "check_session_id", "check_day"]

MAX_ID_LENGTH = 128
"""Most characters an id may have."""
MAX_ID_BYTES = 180
"""Most UTF-8 bytes an id may take (a file name holds at most 255 bytes; the longest suffix is ``.jsonl.quarantine``)."""
_DAY_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

_ID_RULE = (
    f"use 1-{MAX_ID_LENGTH} printable characters (any script) in Unicode NFC form, at most {MAX_ID_BYTES} bytes in "
    "UTF-8, without / or \\, control or invisible formatting characters, spaces at either end, "
    "and not starting with '.' (ids become file names)"
)


_JOINERS = "\u200c\u200d"


def _joins_glyphs(value: str, at: int) -> bool:
    """Whether the joiner at ``value[at]`` stands between two characters that are neither ASCII nor a joiner."""
    return (0 < at < len(value) - 1
            and all(not c.isascii() and c not in _JOINERS and c.isprintable() for c in (value[at - 1], value[at + 1])))


def _why_not(value: str) -> str | None:
    """What is wrong with ``value`` as an id, or ``None`` if nothing is."""
    if not value:
        return "it is empty"
    if len(value) > MAX_ID_LENGTH:
        return f"it has {len(value)} characters, more than {MAX_ID_LENGTH}"
    for at, char in enumerate(value):
        if char in "/\\":
            return f"it contains the path separator {char!r}"
        if char in _JOINERS and _joins_glyphs(value, at):
            continue
        if not char.isprintable():
            # A lone surrogate (an undecodable byte in a listed folder name) has no name; say its code point.
            name = unicodedata.name(char, "unnamed")
            return f"it contains U+{ord(char):04X} ({name}), a control, invisible or non-printing character"
    if value.startswith("."):
        return "it starts with '.' (hidden, and '.' and '..' name folders that already exist)"
    if value != value.strip():
        return "it has a space at the start or end"
    if not unicodedata.is_normalized("NFC", value):
        return (f"it is not in Unicode NFC form (another spelling of the same text would name another folder); "
                f"use {unicodedata.normalize('NFC', value)!r}, written {ascii(unicodedata.normalize('NFC', value))}")
    size = len(value.encode("utf-8"))
    if size > MAX_ID_BYTES:
        return f"it takes {size} bytes in UTF-8, more than {MAX_ID_BYTES}"
    return None


def _check_id(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidIdentifier(field, value, f"expected a string, got {type(value).__name__}; {_ID_RULE}")
    problem = _why_not(value)
    if problem is not None:
        raise InvalidIdentifier(field, value, f"{problem}; {_ID_RULE}")
    return value


def check_user_id(value: object) -> str:
    """Return ``value`` if it is a valid user id, else raise :class:`InvalidIdentifier`.

    >>> check_user_id("alice")
    'alice'
    >>> check_user_id("小明")
    '小明'
    """
    return _check_id("user_id", value)


def check_session_id(value: object) -> str:
    """Return ``value`` if it is a valid session id, else raise :class:`InvalidIdentifier`."""
    return _check_id("session_id", value)


def check_day(value: object) -> str:
    """Return ``value`` if it is a real calendar day written ``YYYY-MM-DD``, else raise :class:`InvalidIdentifier`.

    >>> check_day("2026-04-08")
    '2026-04-08'
    """
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return value.isoformat()
    if not isinstance(value, str) or not _DAY_RE.fullmatch(value):
        raise InvalidIdentifier("day", value, "write the day as YYYY-MM-DD, e.g. '2026-04-08'")
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        raise InvalidIdentifier("day", value, "no such calendar day; write a real date as YYYY-MM-DD") from None
    return value
