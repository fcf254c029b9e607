"""How the store reads one line of a layer file: the parser that is exact for it, and which ids count.

Why it looks like this:

* **orjson where it is exact, the standard parser where it is not.** Indexing is dominated by JSON parsing, and
  orjson parses a line 3-5x faster; but it refuses what the standard parser accepts (NaN, escaped lone surrogates),
  rounds integers beyond 64 bits, and needs about 12 bytes of working memory per byte of a line. So a line with a
  run of 19 digits, or longer than :data:`LONG_LINE`, goes to the standard parser, whose result is the reference:
  the same lines are accepted, with the same values, whichever parser ran (proven by the tests in
  ``tests/store/test_store_bulk_index.py`` and ``test_store_long_lines.py``).
* **Ids live in signed 64-bit arrays**, so an id at or above :data:`MESSAGE_ID_LIMIT` is junk (read as a missing id)
  rather than a value that would overflow the index and make every read of the file fail.
* **The bulk check** (:func:`plain_records`) says, in one C-level pass per step, whether a block of lines is exactly
  what this store writes; the line index (:mod:`agentmem_nb.store.line_index`) and the frames' fast readers take
  such a block whole, anything else line by line.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from itertools import islice, repeat
from typing import Any

from agentmem_nb.messages import parse_message_id

__all__ = ["MESSAGE_ID_LIMIT", "ID_LIMIT", "LONG_LINE", "TAIL_CHUNK", "NOT_PARSED", "fast_loads", "FAST_ERRORS",
           "fast_parse_exact", "orjson_suits", "loads_record", "plain_records", "usable_id"]

try:  # Indexing is dominated by JSON parsing; orjson parses a line 3-5x faster than the standard library.
    import orjson

    fast_loads: Callable[[bytes], Any] = orjson.loads
    FAST_ERRORS: tuple[type[Exception], ...] = (orjson.JSONDecodeError,)
except ImportError:  # pragma: no cover - orjson is a declared dependency; the store still works without it
    fast_loads = json.loads
    FAST_ERRORS = (ValueError,)

TAIL_CHUNK = 4096
"""Bytes read at a time when reading back from the end of a file (or to the end of one line)."""

# Ids live in signed 64-bit arrays. Beyond 2**53 (the largest integer every JSON reader keeps exact) an id is junk,
# which leaves room for the running next id (at most 2**53 + number of lines) to stay within 64 bits.
ID_LIMIT = 2**53
MESSAGE_ID_LIMIT = ID_LIMIT
"""Ids at or above this are junk to the store (read as a missing id): a columnar reader refuses such a file."""

NOT_PARSED = object()
"""What a line parsed to before a parser accepted it (no JSON value is this object)."""

# orjson turns an integer beyond 64 bits into a float, silently dropping digits, where the standard parser keeps it
# exact. Such an integer has at least 19 digits in a row, so bytes with a run that long go to the standard parser
# (a long number in a message's text only costs that line the slower parser). The scan maps every digit to "0" and
# looks for nineteen of them: two C passes, about 40x faster than the regular expression \d{19}.
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19


def fast_parse_exact(raw: bytes) -> bool:
    """Whether orjson parses ``raw`` exactly as the standard parser would, wherever both accept it."""
    return _LONG_RUN not in raw.translate(_DIGITS_TO_ZERO)


# orjson needs about 12 bytes of working memory per byte of a line (a 3 MB message peaked at 38 MB), the standard
# parser about 2: a line longer than this goes to the standard parser, whose result is the reference anyway. Such
# lines are rare (a pasted document), so the speed orjson brings to ordinary lines is kept.
LONG_LINE = 1 << 16


def orjson_suits(raw: bytes) -> bool:
    return len(raw) <= LONG_LINE and fast_parse_exact(raw)


def loads_record(raw: bytes) -> Any:
    """Parse a line the index accepted, the way the index parsed it: orjson where it is exact, the standard parser
    for what orjson refuses (NaN, escaped lone surrogates) or would round (integers beyond 64 bits), and for a long
    line (memory, see ``LONG_LINE``). Raises ``ValueError`` for a line neither accepts."""
    if orjson_suits(raw):
        try:
            return fast_loads(raw)
        except FAST_ERRORS:
            pass
    return json.loads(raw.decode("utf-8"))


def plain_records(lines: list[bytes], previous: int) -> tuple[list[dict[str, Any]], list[int]] | None:
    """``(records, ids)`` when every line is what this store writes — a JSON object (each parsed alone, so no record
    straddles lines) whose ``message_id`` is a plain integer, strictly increasing from ``previous`` and below the id
    limit — so the index keeps exactly these records with exactly these ids; ``None`` for anything the per-line rules
    must judge (a blank, bad or legacy line, an out-of-order id). One C-level pass per step, no Python per line.

    orjson parses here: a long integer it would round can only be an id (then a float, refused) or sit in fields the
    caller must check itself (see :func:`fast_parse_exact`)."""
    if max(map(len, lines), default=0) > LONG_LINE:
        return None  # parsed alone by the standard parser, see LONG_LINE
    try:
        records = list(map(fast_loads, lines))
    except FAST_ERRORS:
        return None
    if not records or set(map(type, records)) != {dict}:
        return None
    ids: list[Any] = list(map(dict.get, records, repeat("message_id")))  # JSON values: ints once checked below
    if set(map(type, ids)) != {int}:  # bool, float, str and missing ids follow the per-line rules
        return None
    if ids[0] <= previous or ids[-1] >= ID_LIMIT or not all(map(operator.lt, ids, islice(ids, 1, None))):
        return None
    return records, ids


def usable_id(raw: object) -> int | None:
    """``parse_message_id``, but an id too large for the index counts as junk (like ``"abc"``): storing it would
    raise OverflowError and make every read of the file fail."""
    given = parse_message_id(raw)
    return given if given is not None and given < ID_LIMIT else None


