"""Session and day frames: the same rows the store reads, tz-aware, and filters checked against plain Python."""

from __future__ import annotations

import datetime as _dt
from zoneinfo import ZoneInfo

import pandas as pd
import pytest
from frames_testlib import XSS_IMG, at, build_user, store_messages

from agentmem_nb import MemoryStore
from agentmem_nb import frames as F
from agentmem_nb.frames.messages import MESSAGE_COLUMNS

pytestmark = pytest.mark.usefixtures("reader")  # every test: exact and columnar reader


def rows_of(frame: pd.DataFrame) -> list[tuple]:
    return [
        (r.session_id if isinstance(r.session_id, str) else None, r.day, int(r.message_id), r.ts.to_pydatetime(),
         r.role, r.content, tuple(r.tags), int(r.n_tool_calls))
        for r in frame.itertuples()
    ]


def rows_of_messages(messages: list) -> list[tuple]:
    return [(m.session_id, m.day, m.message_id, m.ts, m.role, m.content, m.tags, len(m.tool_calls)) for m in messages]


@pytest.fixture
def mem(store: MemoryStore):
    return build_user(store)


def test_session_frame_is_what_the_store_reads(mem) -> None:
    frame = F.session_messages(mem)
    assert tuple(frame.columns) == MESSAGE_COLUMNS
    expected = sorted(rows_of_messages(store_messages(mem, layer="session")), key=lambda r: r[3])
    assert rows_of(frame) == expected
    assert set(frame["user_id"]) == {"alice"}


def test_one_session_keeps_file_order(mem) -> None:
    frame = F.session_messages(mem, "s1")
    assert rows_of(frame) == rows_of_messages(mem.session("s1").messages())
    assert list(frame["message_id"]) == [1, 2, 3, 4]


def test_daily_frame_is_what_the_store_reads(mem) -> None:
    frame = F.daily_messages(mem)
    assert rows_of(frame) == rows_of_messages(store_messages(mem, layer="daily"))
    # Daily lines link back to their thread.
    assert list(frame["session_id"]) == [m.session_id for m in store_messages(mem, layer="daily")]


def test_day_column_session_vs_daily_for_a_turn_across_midnight(mem) -> None:
    # The s3 reply was written at 00:00:03 on the 9th, in the turn's day file (the 8th).
    reply = F.session_messages(mem, "s3").iloc[-1]
    assert reply["ts"] == pd.Timestamp("2026-04-09T00:00:03+08:00")
    assert reply["day"] == "2026-04-09"  # a session line's day is the local date of its time
    daily = F.daily_messages(mem, "2026-04-08")
    assert daily.iloc[-1]["content"] == reply["content"]
    assert daily.iloc[-1]["day"] == "2026-04-08"  # a day line's day is its file


@pytest.mark.parametrize("days, expected", [
    (None, ["2026-04-06", "2026-04-07", "2026-04-08"]),
    ("2026-04-07", ["2026-04-07"]),
    (_dt.date(2026, 4, 7), ["2026-04-07"]),
    (("2026-04-07", "2026-04-08"), ["2026-04-07", "2026-04-08"]),
    ((None, "2026-04-06"), ["2026-04-06"]),
    (("2026-04-07", None), ["2026-04-07", "2026-04-08"]),
    (("2026-05-01", None), []),
])
def test_daily_one_day_a_range_or_all(mem, days, expected) -> None:
    frame = F.daily_messages(mem, days)
    assert sorted(set(frame["day"])) == expected
    assert len(frame) == sum(len(mem.daily(d)) for d in expected)


def test_bad_day_arguments_name_the_value(mem) -> None:
    with pytest.raises(ValueError, match="2026-4-7"):
        F.daily_messages(mem, "2026-4-7")
    with pytest.raises(ValueError, match="first, last"):
        F.daily_messages(mem, ["2026-04-07"])  # type: ignore[arg-type]


def test_datetime_columns_are_tz_aware_in_the_store_zone(mem) -> None:
    for frame in (F.session_messages(mem), F.daily_messages(mem)):
        assert isinstance(frame["ts"].dtype, pd.DatetimeTZDtype)
        # The zone itself (with its rules), not a bare +08:00 offset.
        assert frame["ts"].dt.tz == ZoneInfo("Asia/Shanghai")


def test_a_store_without_zone_gets_a_local_zone(tmp_path, clock) -> None:
    mem = build_user(MemoryStore(tmp_path / "m", clock=clock))
    frame = F.session_messages(mem)
    assert frame["ts"].dt.tz is not None
    # Same instants as the store, whatever zone they are shown in.
    assert [t.to_pydatetime() for t in frame["ts"]] == sorted(m.ts for m in store_messages(mem, layer="session"))


def test_empty_user_gives_empty_frames_with_columns(store) -> None:
    mem = store.user("nobody")
    for frame in (F.session_messages(mem), F.daily_messages(mem)):
        assert len(frame) == 0
        assert tuple(frame.columns) == MESSAGE_COLUMNS
        assert isinstance(frame["ts"].dtype, pd.DatetimeTZDtype)


def test_meta_column_on_request(mem) -> None:
    frame = F.session_messages(mem, "s1", meta=True)
    assert [m.meta for m in mem.session("s1").messages()] == list(frame["meta"])
    assert "meta" not in F.session_messages(mem, "s1").columns


# ---------------------------------------------------------------------------- filters, computed independently

def expected_ids(mem, keep) -> list[tuple[str, int]]:
    msgs = sorted(store_messages(mem, layer="session"), key=lambda m: m.ts)
    return [(m.session_id, m.message_id) for m in msgs if keep(m)]


def ids(frame: pd.DataFrame) -> list[tuple[str, int]]:
    return list(zip(frame["session_id"], frame["message_id"].astype(int)))


@pytest.mark.parametrize("kwargs, keep", [
    ({"role": "user"}, lambda m: m.role == "user"),
    ({"role": ["assistant"]}, lambda m: m.role == "assistant"),
    ({"keyword": "LYON"}, lambda m: "lyon" in m.content.casefold()),
    ({"keyword": "蓝莓"}, lambda m: "蓝莓" in m.content),
    ({"keyword": XSS_IMG.upper()}, lambda m: XSS_IMG in m.content),
    ({"keyword": ""}, lambda m: True),
    ({"session_id": "s2"}, lambda m: m.session_id == "s2"),
    ({"session_id": ["s1", "s3"]}, lambda m: m.session_id in ("s1", "s3")),
    ({"start": "2026-04-07"}, lambda m: m.ts >= at(7, 0)),
    ({"end": "2026-04-07"}, lambda m: m.ts < at(8, 0)),
    ({"start": _dt.date(2026, 4, 7), "end": _dt.date(2026, 4, 7)}, lambda m: at(7, 0) <= m.ts < at(8, 0)),
    ({"start": _dt.datetime(2026, 4, 6, 9, 0, 5)}, lambda m: m.ts >= at(6, 9, 0, 5)),  # naive = store zone
    ({"end": at(6, 9, 0, 5)}, lambda m: m.ts <= at(6, 9, 0, 5)),  # inclusive
    ({"start": "2026-04-06T01:00:00+00:00"}, lambda m: m.ts >= at(6, 9)),
    ({"role": "user", "keyword": "lyon", "end": "2026-04-06"},
     lambda m: m.role == "user" and "lyon" in m.content.casefold() and m.ts < at(7, 0)),
])
def test_session_filters(mem, kwargs, keep) -> None:
    frame = F.session_messages(mem, **kwargs)
    assert ids(frame) == expected_ids(mem, keep)
    assert list(frame.index) == list(range(len(frame)))


def test_filter_messages_on_a_loaded_frame_equals_loading_filtered(mem) -> None:
    everything = F.daily_messages(mem)
    for kwargs in ({"session": "s1"}, {"role": "assistant", "keyword": "lyon"}, {"start": "2026-04-08"}):
        assert F.filter_messages(everything, **kwargs).equals(F.daily_messages(mem, **kwargs))


def test_bad_bounds_say_what_to_write(mem) -> None:
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        F.session_messages(mem, start="next tuesday")
    with pytest.raises(TypeError, match="date bound"):
        F.session_messages(mem, start=12)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- the original demo's data

def test_seed_data_in_message_frames(seed_root) -> None:
    mem = MemoryStore(seed_root, zone="Asia/Shanghai").user("demo-user")
    sessions = F.session_messages(mem)
    expected = sorted(rows_of_messages(store_messages(mem, layer="session")), key=lambda r: r[3])
    assert rows_of(sessions) == expected
    assert len(sessions) == sum(len(mem.session(s)) for s in mem.session_ids()) > 0
    daily = F.daily_messages(mem)
    assert rows_of(daily) == rows_of_messages(store_messages(mem, layer="daily"))
    # Naive legacy timestamps are local time of the store's zone.
    first = mem.session("ab64d3756bc0").messages()[0]
    assert F.session_messages(mem, "ab64d3756bc0")["ts"].iloc[0] == pd.Timestamp("2026-04-08T19:52:09+08:00")
    assert first.ts == pd.Timestamp("2026-04-08T19:52:09+08:00")
    # One legacy tool call, input stored as JSON text in the demo.
    assert daily["n_tool_calls"].sum() == 4


def test_messages_frame_of_a_window_matches_the_file_frame(mem) -> None:
    window = mem.session("s1").window(2, 1, 1)
    frame = F.messages_frame(window.messages, user_id="alice", zone=mem.store.zone)
    full = F.session_messages(mem, "s1")
    assert frame.equals(full.iloc[0:3].reset_index(drop=True))
