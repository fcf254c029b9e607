"""Values as the extractors normalise them: dates (``05-03``, ``1990-05-03``), small numbers, Chinese numerals.

A birthday said as "May 3rd", "3 May", "the third of May" or "5月3号" must be one value, or a repetition would read
as a contradiction; so every date an extractor keeps goes through :func:`normalise_date`.
"""

from __future__ import annotations

import re

from agentmem_nb.retrieval.dates import MONTHS as _MONTHS  # one month table (facts sit above retrieval)

__all__ = ["normalise_date", "chinese_number", "english_number", "normalise_number", "day_only", "NUMBER_WORDS", "ORDINAL_WORDS"]

_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
             "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
             "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
             "twentieth": 20, "thirtieth": 30}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_CN_NUM = "零〇一二两三四五六七八九十百"

_EN_DATES = [
    re.compile(r"\b" + _YEAR + r"-(?P<m>\d\d?)-(?P<d>\d\d?)\b"),
    re.compile(r"\b" + _MONTH + r"\s+(?:the\s+)?" + _DAY + r"\b(?:,?\s+" + _YEAR + r")?", re.I),
    re.compile(r"\b(?:the\s+)?" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r"\b(?:,?\s+" + _YEAR + r")?", re.I),
]
_NUMERIC_DATE = re.compile(r"\b(?P<a>[0-3]?\d)[/.](?P<b>[0-3]?\d)[/.](?P<year>(?:19|20)\d\d)\b")
_CN_DATE = re.compile(r"(?:(?P<year>(?:19|20)\d\d|[一二九零〇]{4})\s*年\s*)?(?P<m>\d{1,2}|[" + _CN_NUM + r"]{1,3})\s*月"
                      r"\s*(?P<d>\d{1,2}|[" + _CN_NUM + r"]{1,3})\s*[日号號]?")


def chinese_number(text: str) -> int | None:
    """``"二十五"`` → 25, ``"十二"`` → 12, ``"3"`` → 3, up to 999; ``None`` if it is no number."""
    if text.isdigit():
        return int(text)
    digits = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9}
    if not text or any(c not in digits and c not in "十百" for c in text):
        return None
    if len(text) == 4 and all(c in digits for c in text):  # a year spelt digit by digit: 一九九零
        return int("".join(str(digits[c]) for c in text))
    total, current = 0, 0
    for char in text:
        if char in digits:
            current = digits[char]
        else:
            unit = 10 if char == "十" else 100
            total += (current or 1) * unit
            current = 0
    return total + current


_UNITS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                     "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
NUMBER_WORDS = (r"(?:(?:" + "|".join(_TENS) + r")(?:[\s-](?:" + "|".join(w for w in _UNITS if _UNITS[w] and _UNITS[w] < 10)
                + r"))?|" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")")
"""An English number from zero to ninety-nine in words, as a pattern ("six", "thirty-five", "forty two")."""


ORDINAL_WORDS = "(?:" + "|".join(sorted(_ORDINALS, key=len, reverse=True)) + ")"
"""An English ordinal in words, first to twentieth and thirtieth, as a pattern."""


def english_number(text: str) -> int | None:
    """``"thirty-five"`` → 35, ``"six"`` → 6, ``"12"`` → 12, ``"fifth"`` / ``"5th"`` → 5; ``None`` if it is no
    number below a hundred."""
    if text.strip().lower() in _ORDINALS:
        return _ORDINALS[text.strip().lower()]
    text = re.sub(r"(?<=\d)(?:st|nd|rd|th)$", "", text.strip(), flags=re.I)
    words = text.strip().lower().replace("-", " ").split()
    if len(words) == 1 and words[0].isdigit():
        return int(words[0])
    if len(words) == 1 and words[0] in _UNITS:
        return _UNITS[words[0]]
    if words and words[0] in _TENS and (len(words) == 1 or (len(words) == 2 and 0 < _UNITS.get(words[1], 0) < 10)):
        return _TENS[words[0]] + (_UNITS[words[1]] if len(words) == 2 else 0)
    return None


def normalise_number(text: str) -> str:
    """A number as digits (``"三十"`` → ``"30"``); other text unchanged."""
    value = chinese_number(text.strip())
    return str(value) if value is not None else text.strip()


def _format(year: int | None, month: int, day: int) -> str | None:
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return f"{year:04d}-{month:02d}-{day:02d}" if year else f"{month:02d}-{day:02d}"


# Holidays on the same day every year, by which a birthday is often said ("on Valentine's Day", "国庆节那天"). Holidays
# of a moving date (Easter, Thanksgiving, 春节, 中秋) name no one day, so they are not here.
_HOLIDAYS = (
    (r"\bnew\s*years?\s*eve\b", 12, 31), (r"\bnew\s*years?(?:\s*day)?\b", 1, 1),
    (r"\bchristmas\s*eve\b|\bxmas\s*eve\b", 12, 24), (r"\bchristmas(?:\s*day)?\b|\bxmas\b", 12, 25),
    (r"\bboxing\s*day\b", 12, 26), (r"\bvalentines?\s*day\b|\bvalentines\b", 2, 14),
    (r"\bhalloween\b", 10, 31), (r"\bst\.?\s*patricks?\s*day\b|\bsaint\s*patricks?\s*day\b", 3, 17),
    (r"\bapril\s*fools?(?:\s*day)?\b", 4, 1), (r"\b(?:the\s*)?fourth\s*of\s*july\b|\bindependence\s*day\b", 7, 4),
    (r"\bleap\s*day\b", 2, 29), (r"\bmay\s*day\b", 5, 1),
    (r"元旦", 1, 1), (r"情人节", 2, 14), (r"妇女节|三八节", 3, 8), (r"植树节", 3, 12), (r"愚人节", 4, 1),
    (r"劳动节|五一", 5, 1), (r"青年节|五四", 5, 4), (r"儿童节|六一", 6, 1), (r"建党节|七一", 7, 1), (r"建军节|八一", 8, 1),
    (r"教师节", 9, 10), (r"国庆", 10, 1), (r"万圣节", 10, 31), (r"光棍节|双十一|双11", 11, 11), (r"平安夜", 12, 24),
    (r"圣诞", 12, 25),
)
# The holiday must be the whole date said ("on Valentine's Day", "就是国庆节那天"): "the day after Christmas", "around
# Halloween", "国庆节前一天", "isn't on Christmas", "unlike my sister's, which is on Christmas" name no day of ours.
_HOLIDAY_BEFORE = r"^\s*(?:(?:it\s+is|it\s+was|is|was|falls|on|at|the|just|exactly|right)\s+)*(?:就是|刚好是|正好是|恰好是|是|在|就在)?"
_HOLIDAY_AFTER = r"(?:\s+day)?(?:节)?(?:那天|当天|那一天)?\s*(?:哈哈|呢|啦|了|哦|lol|haha)?[\s.!。！]*$"
_HOLIDAY_RES = [(re.compile(_HOLIDAY_BEFORE + r"(?:" + pattern + r")" + _HOLIDAY_AFTER, re.I), month, day)
                for pattern, month, day in _HOLIDAYS]


def normalise_date(text: str) -> str:
    """The date named in ``text`` as ``MM-DD`` (or ``YYYY-MM-DD`` when a year is given); ``text`` itself (trimmed)
    when it names no date this module reads."""
    numeric = _NUMERIC_DATE.search(text)
    if numeric:  # "14/03/1992" or "3/14/1992": the day is the number above 12; both at most 12 say no one date
        first, second = int(numeric.group("a")), int(numeric.group("b"))
        month, day = (second, first) if first > 12 else (first, second) if second > 12 else (0, 0)
        formatted = _format(int(numeric.group("year")), month, day) if month else None
        if formatted:
            return formatted
    for pattern in _EN_DATES:
        found = pattern.search(text)
        if found is None:
            continue
        parts = found.groupdict()
        month = int(parts["m"]) if parts.get("m") else _MONTHS[parts["month"].lower().rstrip(".")]
        day = int(parts["d"]) if parts.get("d") else int(parts["day"])
        formatted = _format(int(parts["year"]) if parts.get("year") else None, month, day)
        if formatted:
            return formatted
    ordinal = re.search(r"\b(?:the\s+)?(?P<ord>[a-z]+)\s+of\s+" + _MONTH, text, re.I)
    if ordinal and ordinal.group("ord").lower() in _ORDINALS:
        formatted = _format(None, _MONTHS[ordinal.group("month").lower().rstrip(".")],
                            _ORDINALS[ordinal.group("ord").lower()])
        if formatted:
            return formatted
    found = _CN_DATE.search(text)
    if found:
        cn_month, cn_day = chinese_number(found.group("m")), chinese_number(found.group("d"))
        if cn_month is not None and cn_day is not None:
            formatted = _format(chinese_number(found.group("year")) if found.group("year") else None, cn_month,
                                cn_day)
            if formatted:
                return formatted
    plain = text.replace("'", "").replace("’", "")
    for pattern, month, day in _HOLIDAY_RES:
        if pattern.match(plain):
            return f"{month:02d}-{day:02d}"
    return text.strip()


def day_only(text: str) -> int | None:
    """The day of a date said without its month ("the 21st", "21号", "二十一日"), or ``None``."""
    found = re.fullmatch(r"(?:the\s+)?(?P<d>[0-3]?\d)(?:st|nd|rd|th)?|(?P<c>\d{1,2}|[" + _CN_NUM + r"]{1,3})\s*[号日]",
                         text.strip(" .,!。，！"), re.I)
    if found is None:
        return None
    day = int(found.group("d")) if found.group("d") else chinese_number(found.group("c") or "")
    return day if day is not None and 1 <= day <= 31 else None
