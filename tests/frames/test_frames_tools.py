"""Tool calls exploded one row per call, from the log and from the threads; filters checked against plain Python."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from frames_testlib import XSS_IMG, XSS_SCRIPT, at, build_user, expected_calls

from agentmem_nb import MemoryStore
from agentmem_nb import frames as F
from agentmem_nb.frames.tools import TOOL_COLUMNS

pytestmark = pytest.mark.usefixtures("reader")  # every test: exact and columnar reader


@pytest.fixture
def mem(store: MemoryStore):
    return build_user(store)


def in_input(call_input: dict, keyword: str) -> bool:
    """The documented rule: the input's JSON text or any of its string values contains the keyword (casefolded)."""
    texts = [json.dumps(call_input, ensure_ascii=False), *(v for v in call_input.values() if isinstance(v, str))]
    return any(keyword.casefold() in t.casefold() for t in texts)


def rows_of(frame: pd.DataFrame) -> list[tuple]:
    return [
        (r.ts.to_pydatetime(), r.session_id, None if pd.isna(r.message_id) else int(r.message_id), int(r.turn),
         int(r.call_index), r.tool, r.input, r.output, r.status, None if math.isnan(r.duration_ms) else r.duration_ms)
        for r in frame.itertuples()
    ]


@pytest.mark.parametrize("source", ["log", "sessions"])
def test_one_row_per_call_as_the_store_records_them(mem, source) -> None:
    frame = F.tool_calls(mem, source=source)
    assert tuple(frame.columns) == TOOL_COLUMNS
    assert rows_of(frame) == expected_calls(mem, source=source)
    assert len(frame) == 6
    assert set(frame["source"]) == {source}
    assert isinstance(frame["ts"].dtype, pd.DatetimeTZDtype) and str(frame["ts"].dt.tz) == "Asia/Shanghai"


def test_log_and_sessions_agree_when_the_agent_wrote_both(mem) -> None:
    log, sessions = F.tool_calls(mem, source="log"), F.tool_calls(mem, source="sessions")
    same = ["ts", "session_id", "message_id", "call_index", "tool", "call_id", "input_text", "output", "status"]
    assert log[same].equals(sessions[same])
    # turn: the log entry id vs the assistant message id (unique within its thread); the calls of one turn share it.
    assert list(log.groupby("turn").size()) == list(sessions.groupby(["session_id", "turn"]).size()) == [1, 2, 2, 1]


def test_input_as_dict_and_text_output_length(mem) -> None:
    frame = F.tool_calls(mem)
    window = frame[frame["tool"] == "get_session_window"].iloc[0]
    assert window["input"] == {"message_id": 1, "before": 1, "after": 1}
    assert json.loads(window["input_text"]) == window["input"]
    assert list(frame["output_len"]) == [len(o) for o in frame["output"]]
    assert frame.loc[frame["call_id"] == "c2", "duration_ms"].item() == 8.25
    assert frame.loc[frame["call_id"] == "c5", "status"].item() == "error"


@pytest.mark.parametrize("kwargs, keep", [
    ({"tools": "search_daily"}, lambda r: r[5] == "search_daily"),
    ({"tools": ["remember_note", "get_session_window"]}, lambda r: r[5] in ("remember_note", "get_session_window")),
    ({"tools": []}, lambda r: False),
    ({"keyword": "LYON"}, lambda r: in_input(r[6], "lyon") or "lyon" in r[7].casefold()),
    ({"keyword": "saved"}, lambda r: "saved" in r[7]),  # output only
    ({"keyword": '"before": 1'}, lambda r: '"before": 1' in json.dumps(r[6])),  # the JSON text of the input
    ({"keyword": "蓝莓"}, lambda r: in_input(r[6], "蓝莓") or "蓝莓" in r[7]),
    ({"keyword": 'onerror="alert'}, lambda r: r[6].get("keyword") == XSS_IMG),  # quotes as typed, not JSON-escaped
    ({"session": "s1"}, lambda r: r[1] == "s1"),
    ({"session": ["s2", "s3"]}, lambda r: r[1] in ("s2", "s3")),
    ({"start": "2026-04-07", "end": "2026-04-07"}, lambda r: at(7, 0) <= r[0] < at(8, 0)),
    ({"start": "2026-04-08"}, lambda r: r[0] >= at(8, 0)),
    ({"status": "error"}, lambda r: r[8] == "error"),
    ({"tools": "search_daily", "keyword": "boom", "session": "s2"},
     lambda r: r[5] == "search_daily" and "boom" in json.dumps(r[6]) and r[1] == "s2"),
])
@pytest.mark.parametrize("source", ["log", "sessions"])
def test_filters(mem, source, kwargs, keep) -> None:
    frame = F.tool_calls(mem, source=source, **kwargs)
    expected = [r for r in expected_calls(mem, source=source) if keep(r)]
    assert rows_of(frame) == expected
    everything = F.tool_calls(mem, source=source)
    assert F.filter_tool_calls(everything, **kwargs).equals(frame)


def test_xss_payloads_are_kept_verbatim_in_the_frame(mem) -> None:
    frame = F.tool_calls(mem, session="s2")
    assert XSS_SCRIPT in "".join(frame["output"])
    assert frame["input"].iloc[0] == {"keyword": XSS_IMG}


def test_unknown_source_names_the_choices(mem) -> None:
    with pytest.raises(ValueError, match="'log'.*'sessions'"):
        F.tool_calls(mem, source="daily")  # type: ignore[arg-type]


def test_seed_data_tool_calls(seed_root) -> None:
    mem = MemoryStore(seed_root, zone="Asia/Shanghai").user("demo-user")
    log = F.tool_calls(mem)
    assert rows_of(log) == expected_calls(mem, source="log")
    assert len(log) == 8  # two turns of four calls; one thread (ffeb2013b228) exists only in the log
    assert log["message_id"].isna().all()  # the demo's log did not link the assistant message
    sessions = F.tool_calls(mem, source="sessions")
    assert rows_of(sessions) == expected_calls(mem, source="sessions")
    # The demo wrote input as JSON text: it is parsed to a dict, and the text form is JSON again.
    assert sessions["input"].iloc[0] == {"keyword": "生日"}
    assert sessions["input_text"].iloc[0] == '{"keyword": "生日"}'
    found = F.tool_calls(mem, tools="get_daily_window", keyword="45")
    expected = [r for r in expected_calls(mem, source="log")
                if r[5] == "get_daily_window" and (in_input(r[6], "45") or "45" in r[7])]
    assert rows_of(found) == expected and len(expected) >= 1
