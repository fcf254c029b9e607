"""Calendar dates named in a query ("on 25 May, 2022", "in August 2023", "2023年5月8日").

A question that names a date is about what was said on that date: messages written in the named day (or month, or
year) get the ``date`` signal. The date words are taken out of the lexical query, since "may" or "2022" as plain
words would match the wrong messages. Relative dates ("last week") need a reference time the question does not
carry, so they are left to the words.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from dataclasses import dataclass

__all__ = ["DateRange", "extract_dates"]

# English month names and abbreviations → month number (also read by the facts extractor's date values).
MONTHS = {
    name: i
    for i, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")],
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"

# Most specific first: a day-month-year must not be read as a month-year plus a stray number.
_PATTERNS = [
    re.compile(r"\b" + _YEAR + r"-(?P<m>\d\d)-(?P<d>\d\d)\b"),
    re.compile(r"\b" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r",?\s+" + _YEAR + r"\b", re.I),
    re.compile(r"\b" + _MONTH + r"\s+" + _DAY + r",?\s+" + _YEAR + r"\b", re.I),
    re.compile(r"\b" + _MONTH + r",?\s+(?:of\s+)?" + _YEAR + r"\b", re.I),
    re.compile(_YEAR + r"\s*年\s*(?P<m>1[0-2]|0?[1-9])\s*月\s*(?P<d>[0-3]?\d)\s*[日号]"),
    re.compile(_YEAR + r"\s*年\s*(?P<m>1[0-2]|0?[1-9])\s*月"),
    re.compile(r"\b(?:in|during|of)\s+" + _YEAR + r"\b", re.I),
    re.compile(_YEAR + r"\s*年"),
]


@dataclass(frozen=True, slots=True)
class DateRange:
    """An inclusive range of days named by the query, and the text that named it."""

    first: _dt.date
    last: _dt.date
    text: str

    def contains(self, day: _dt.date) -> bool:
        """True if ``day`` falls in the range."""
        return self.first <= day <= self.last


def _range(match: re.Match[str]) -> tuple[_dt.date, _dt.date] | None:
    groups = match.groupdict()
    year = int(groups["year"])
    if groups.get("month"):
        month: int | None = MONTHS[groups["month"].casefold()]
    else:
        month = int(groups["m"]) if groups.get("m") else None
    day = groups.get("day") or groups.get("d")
    try:
        if month is None:
            return _dt.date(year, 1, 1), _dt.date(year, 12, 31)
        if day is None:
            return _dt.date(year, month, 1), _dt.date(year, month, calendar.monthrange(year, month)[1])
        moment = _dt.date(year, month, int(day))
        return moment, moment
    except ValueError:
        return None  # "31 February": not a date, leave the words alone


def extract_dates(query: str) -> tuple[list[DateRange], str]:
    """The date ranges a query names, and the query with those expressions removed.

    >>> ranges, rest = extract_dates("What did Nate do on 25 May, 2022?")
    >>> ranges[0].first.isoformat(), rest
    ('2022-05-25', 'What did Nate do on  ?')
    """
    found: list[DateRange] = []
    rest = query
    for pattern in _PATTERNS:
        while True:
            match = pattern.search(rest)
            if match is None:
                break
            span = _range(match)
            if span is None:
                break
            found.append(DateRange(span[0], span[1], match.group()))
            rest = rest[: match.start()] + " " + rest[match.end() :]
    return found, rest
