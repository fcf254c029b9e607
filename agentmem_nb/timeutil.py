"""Time zones and timestamps.

New lines carry ISO 8601 timestamps *with* an offset. The day a message belongs to is its date in the user's
configured zone (default: the machine's local zone, DST rules included). Naive timestamps written by the original demo
are read as local time of that same zone.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from agentmem_nb.errors import ConfigError

__all__ = ["Clock", "system_clock", "zone_named", "resolve_zone", "to_zone", "parse_ts", "format_ts", "day_of"]

Clock = Callable[[], _dt.datetime]
"""A zero-argument callable returning the current time as an aware datetime (inject one in tests)."""


def system_clock() -> _dt.datetime:
    """The current time, aware, in UTC."""
    return _dt.datetime.now(_dt.timezone.utc)


def zone_named(name: str) -> ZoneInfo | None:
    """The IANA zone called ``name``, or ``None`` when there is none: unknown, malformed (``"../x"``), or a region
    folder of the zone database such as ``"America"`` (opening that one raises ``IsADirectoryError``)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a folder, or an unreadable zone file
        return None


def resolve_zone(zone: str | _dt.tzinfo | None) -> _dt.tzinfo | None:
    """Turn a zone name such as ``"Asia/Shanghai"`` into a tzinfo; ``None`` means the machine's local zone.

    Raises:
        ConfigError: no zone has that name; the message names the value and suggests zones (``America`` ->
            ``America/New_York`` ..., ``europe/paris`` -> ``Europe/Paris``).
    """
    if zone is None or isinstance(zone, _dt.tzinfo):
        return zone
    if isinstance(zone, str):
        found = zone_named(zone)
        if found is None:
            raise ConfigError(f"unknown time zone {zone!r}: {_zone_hint(zone)}")
        return found
    raise ConfigError(f"time zone must be a name or a tzinfo, got {type(zone).__name__} {zone!r}")


def _zone_hint(name: str) -> str:
    known = available_timezones()  # reads the zone database: only on this error path
    folded = name.strip().casefold()
    same = sorted(z for z in known if z.casefold() == folded)
    if same:
        return f"did you mean {same[0]!r}? (zone names are case-sensitive)"
    inside = sorted(z for z in known if z.casefold().startswith(folded.rstrip("/") + "/")) if folded else []
    if inside:
        shown = ", ".join(repr(z) for z in inside[:3])
        return f"that is a region, not a zone: name a city in it, such as {shown} ({len(inside)} in all)"
    return "use an IANA zone name such as 'Europe/Paris' or 'Asia/Shanghai'"


def to_zone(moment: _dt.datetime, zone: _dt.tzinfo | None) -> _dt.datetime:
    """Express ``moment`` in ``zone``; a naive ``moment`` is taken as wall-clock time in that zone."""
    if moment.tzinfo is None:
        if zone is None:
            return moment.astimezone()  # naive -> system local, with that instant's DST offset
        return moment.replace(tzinfo=zone)
    return moment.astimezone(zone) if zone is not None else moment.astimezone()


def parse_ts(text: object, zone: _dt.tzinfo | None) -> tuple[_dt.datetime | None, bool]:
    """Parse an ISO 8601 timestamp; returns ``(aware datetime or None, was_naive)``."""
    if not isinstance(text, str):
        return None, False
    try:
        moment = _dt.datetime.fromisoformat(text)
        # Converting a moment at the edge of the calendar (year 1 or 9999) to another zone can overflow.
        return to_zone(moment, zone), moment.tzinfo is None
    except (ValueError, OverflowError):
        return None, False


def format_ts(moment: _dt.datetime) -> str:
    """ISO 8601 with microseconds and offset, the on-disk form of new lines."""
    return moment.isoformat(timespec="microseconds")


def day_of(moment: _dt.datetime, zone: _dt.tzinfo | None) -> str:
    """The ``YYYY-MM-DD`` day of ``moment`` in ``zone``."""
    return to_zone(moment, zone).date().isoformat()
