"""Validation of the identifiers that become file names.

A ``user_id`` or ``session_id`` becomes a path component under ``memory/``; a ``day`` becomes a file name. Each is
checked against a whitelist before any path is built, so no value can leave ``memory/{user_id}/``. Model-supplied
values (tool arguments) go through the same functions.
"""

from __future__ import annotations

import datetime as _dt
import re

from agentmem_nb.errors import InvalidIdentifier

__all__ = ["MAX_ID_LENGTH", "check_user_id", "check_session_id", "check_day"]

MAX_ID_LENGTH = 128
_ID_RE = re.compile(r"[A-Za-z0-9._-]{1,128}")
_DAY_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

_ID_RULE = (
    "use 1-128 characters from A-Z a-z 0-9 . _ - , not starting with '.' "
    "(ids become file names and may not contain path separators)"
)


def _check_id(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidIdentifier(field, value, f"expected a string, got {type(value).__name__}; {_ID_RULE}")
    if not _ID_RE.fullmatch(value) or value.startswith("."):
        raise InvalidIdentifier(field, value, _ID_RULE)
    return value


def check_user_id(value: object) -> str:
    """Return ``value`` if it is a valid user id, else raise :class:`InvalidIdentifier`.

    >>> check_user_id("alice")
    'alice'
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
