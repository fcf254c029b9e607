"""The vectorised timestamp reader agrees with the store's ``parse_ts`` on canonical and odd strings."""

from __future__ import annotations

import datetime as _dt
import random
from zoneinfo import ZoneInfo

import pytest

from agentmem_nb.frames._time import NAT_US, _parse_canonical, parse_ts_us
from agentmem_nb.timeutil import format_ts, parse_ts

EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
ZONE = ZoneInfo("Europe/Paris")


def store_us(text: object) -> int:
    moment, _ = parse_ts(text, ZONE)
    return NAT_US if moment is None else (moment - EPOCH) // _dt.timedelta(microseconds=1)


ODD = [
    "2026-02-29T10:00:00.000000+08:00",  # no such day
    "2024-02-29T10:00:00.000000+08:00",  # leap day
    "1900-02-29T10:00:00.000000+00:00",  # not a leap year
    "2000-02-29T23:59:59.999999-23:59",
    "2026-04-08T24:00:00.000000+08:00",
    "2026-04-08T10:60:00.000000+08:00",
    "2026-04-08T10:00:60.000000+08:00",
    "2026-04-08T10:00:00.000000+24:00",
    "2026-04-08T10:00:00.000000+08:60",
    "0000-01-01T00:00:00.000000+00:00",
    "0002-01-01T00:00:00.000000+00:00",  # (years 1 and 9999 make the store's astimezone overflow: not tested)
    "9998-12-31T23:59:59.999999+00:00",
    "2026-13-01T00:00:00.000000+00:00",
    "2026-00-10T00:00:00.000000+00:00",
    "2026-04-00T00:00:00.000000+00:00",
    "2026-04-08t10:00:00.000000+08:00",
    "2026-04-08 10:00:00.000000+08:00",
    "2026-04-08T10:00:00.000000+08:00 ",
    "2026-04-08T10:00:00.000000+0800",
    "2026-04-08T10:00:00.0000001+08:00",
    "2026-04-08T10:00:00.000000Z",
    "2026-04-08T10:00:00+08:00",
    "2026-04-08T10:00:00",
    "2026-04-08",
    "２026-04-08T10:00:00.000000+08:00",  # a full-width digit
    "2026-04-08T10:00:00.000000−08:00",  # a minus sign that is not ASCII
    "2026-04-08T1a:00:00.000000+08:00",
    "",
    "None",
]


@pytest.mark.parametrize("text", ODD)
def test_odd_strings_agree_with_the_store(text) -> None:
    assert parse_ts_us([text], ZONE).tolist() == [store_us(text)]


def test_non_strings_are_missing() -> None:
    assert parse_ts_us([None, 5, 1.5, ["x"], {"a": 1}], ZONE).tolist() == [NAT_US] * 5


def test_random_canonical_moments_agree_with_the_store() -> None:
    rnd = random.Random(4)
    texts = []
    for _ in range(2000):
        offset = _dt.timedelta(minutes=rnd.randint(-23 * 60 - 59, 23 * 60 + 59))
        moment = _dt.datetime(rnd.randint(2, 9998), 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(
            days=rnd.randint(0, 364), microseconds=rnd.randint(0, 86_400_000_000 - 1))
        try:
            texts.append(format_ts(moment.astimezone(_dt.timezone(offset))))
        except OverflowError:
            continue
    canonical = _parse_canonical(texts)
    assert (canonical != NAT_US).all()  # every one took the vectorised path
    assert canonical.tolist() == [store_us(t) for t in texts]
