"""The runner: cases built to pass pass, cases built to fail fail with the right reason."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cases_testlib import CAR

from agentmem_nb import MemoryStore
from agentmem_nb.evaluation.casefile import load_case_file
from agentmem_nb.evaluation.cases import CaseRunner, check_recall, run_case_files


def test_cases_built_to_pass_pass(case_file) -> None:
    report = run_case_files([case_file("""\
        - name: sister
          question: "Where does my sister live?"
          expect_retrieved: ["ana lives in porto"]
          expect_not_retrieved: ["Monts d'Or"]
          budget: 4
        - name: hike-keyword
          question: hiked
          expect_retrieved: ["Monts d'Or"]
        - name: sister-agent
          question: "Where does my sister live?"
          agent: true
          expect_reply: ["Porto"]
          expect_tools: ["search_session", "get_session_window"]
          expect_retrieved: ["Ana lives in Porto"]
    """)])
    assert [(r.name, r.passed) for r in report.results] == [("sister", True), ("hike-keyword", True),
                                                           ("sister-agent", True)], report.format()
    assert (report.passed, report.failed, report.ok) == (3, 0, True)
    sister, keyword, agent = report.results
    assert sister.mode == "ranked" and keyword.mode == "exact"
    evidence = sister.retrieved[sister.checks[0].found_at]
    assert evidence.content == "My sister Ana lives in Porto." and evidence.is_anchor and evidence.rank == 1
    # the agent's tools opened a window around the evidence: its neighbours carry that anchor
    assert [t.name for t in agent.tools] == ["search_session", "get_session_window"]
    window = [m for m in agent.retrieved if not m.is_anchor]
    assert window and {m.anchor_id for m in window} == {evidence.message_id}


def test_evidence_beyond_the_budget_fails_with_its_rank_and_the_budget_that_reaches_it(case_file) -> None:
    path = case_file("""\
        - name: colour
          question: "what colour is my car"
          expect_retrieved: ["red Fiat"]
          budget: 1
    """, head=CAR)
    result = run_case_files([path]).results[0]
    assert not result.passed
    (reason,) = result.reasons
    match = re.search(r"'red Fiat' not retrieved within the budget of 1 message\(s\); beyond it, #1 \(daily "
                      r"\S+, hit, rank (\d+)\): retrieved from budget (\d+) on", reason)
    assert match, reason
    rank, needed = int(match.group(1)), int(match.group(2))
    assert rank > 1
    # what was retrieved instead is shown
    assert "top hits (ranked, budget 1" in result.explain() and "Car insurance" in result.explain()
    # the budget named is the smallest that works: the case file's memory, written by a runner, looked at directly
    with CaseRunner() as runner:
        parsed = load_case_file(path)
        user = MemoryStore(runner._prepare(parsed, parsed.cases[0]).root, zone="UTC").user("maya")
        assert check_recall(user, "what colour is my car", expected=["red Fiat"], budget=needed).passed
        assert not check_recall(user, "what colour is my car", expected=["red Fiat"], budget=needed - 1).passed


def test_text_that_no_message_holds_is_reported_as_absent(case_file) -> None:
    result = run_case_files([case_file("""\
        - name: tesla
          question: "what colour is my car"
          expect_retrieved: ["blue Tesla"]
    """, head=CAR)]).results[0]
    assert not result.passed
    assert "no message of the memory contains it" in result.reasons[0]


def test_text_the_search_cannot_reach_names_where_the_memory_holds_it(case_file) -> None:
    result = run_case_files([case_file("""\
        - name: bike
          question: "what colour is my bike"
          scope: session
          expect_retrieved: ["bike is green"]
    """, head=CAR)]).results[0]
    assert not result.passed
    assert "the memory holds it in #1 (session s2), but the search does not reach it" in result.reasons[0]


def test_a_message_that_must_not_come_back_is_named(case_file) -> None:
    result = run_case_files([case_file("""\
        - name: radio
          question: "what colour is my car"
          expect_not_retrieved: ["RADIO"]
    """, head=CAR)]).results[0]
    assert not result.passed
    assert re.fullmatch(r"'RADIO' must not be retrieved, but #5 \(daily \S+, hit, rank \d+\) contains it",
                        result.reasons[0]), result.reasons
    assert "RADIO" in result.checks[0].expected and result.retrieved[result.checks[0].found_at].message_id == 5


def test_agent_case_failures_show_the_reply_and_the_tools_called(case_file) -> None:
    result = run_case_files([case_file("""\
        - name: agent
          question: "Where does my sister live?"
          agent: true
          expect_reply: ["Lisbon"]
          expect_tools: ["search_daily"]
    """)]).results[0]
    assert not result.passed
    reply_reason, tool_reason = result.reasons
    assert reply_reason.startswith("the reply does not mention 'Lisbon'; it was ") and "Porto" in reply_reason
    assert tool_reason == ("the tool search_daily was not called; the agent called search_session(keyword='sister'), "
                           "get_session_window(message_id=1, before=2, after=2)")
    explained = result.explain()
    assert "reply: " in explained and "tools called: search_session(keyword='sister')" in explained


def test_agent_cases_do_not_see_each_others_turns(case_file) -> None:
    path = case_file("""\
        - name: first
          question: "I prefer green tea."
          agent: true
          expect_tools: [remember_note]
        - name: second
          question: "What did I say about tea?"
          agent: true
          expect_reply: ["found nothing"]
    """)
    report = run_case_files([path])
    assert report.ok, report.format()


def test_timestamps_and_zone_of_the_conversation_are_honoured(case_file) -> None:
    result = run_case_files([case_file("""\
        - name: hike
          question: hiked
          expect_retrieved: ["Monts"]
    """)]).results[0]
    # 2026-04-07T18:00+02:00 is that day in Europe/Paris (the file's zone)
    assert result.passed and result.retrieved[0].key == "2026-04-07"
    assert result.retrieved[0].layer == "daily"


def test_a_memory_folder_is_used_through_a_copy_and_never_written(tmp_path: Path, case_file) -> None:
    folder = tmp_path / "memory"
    store = MemoryStore(folder, zone="UTC")
    store.user("ana").append("s1", "user", "I keep bees on the roof.")
    before = sorted((p.relative_to(folder), p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*"))
    path = tmp_path / "bees.memcases.yaml"
    path.write_text("user: ana\nmodel: offline\nmemory: memory\ncases:\n"
                    "  - {name: bees, question: 'bees', expect_retrieved: [roof]}\n"
                    "  - {name: bees-agent, question: 'What did I say about bees?', agent: true, "
                    "expect_reply: [roof]}\n", encoding="utf-8")
    report = run_case_files([path])
    assert report.ok, report.format()
    after = sorted((p.relative_to(folder), p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*"))
    assert after == before  # nothing written, not even an index cache


def test_as_of_sees_only_the_messages_written_before(case_file) -> None:
    report = run_case_files([case_file("""\
        - name: before-the-hike
          question: hiked
          as_of: "2026-04-07T00:00:00+02:00"
          expect_not_retrieved: ["Monts"]
        - name: after-the-hike
          question: hiked
          as_of: "2026-04-08T00:00:00+02:00"
          expect_retrieved: ["Monts"]
    """)])
    assert report.ok, report.format()


def test_a_case_that_cannot_run_fails_with_the_error(case_file) -> None:
    result = run_case_files([case_file("""\
        - name: nowhere
          question: sister
          scope: session
          session: s7
          expect_retrieved: [Ana]
    """)]).results[0]
    assert not result.passed
    assert "has no session 's7'" in result.error


def test_results_as_dataframes(case_file) -> None:
    report = run_case_files([case_file("""\
        - name: sister
          question: "Where does my sister live?"
          expect_retrieved: ["Ana lives in Porto"]
          expect_not_retrieved: ["Monts"]
        - name: wrong
          question: "Where does my sister live?"
          expect_retrieved: ["Lisbon"]
    """)])
    frame = report.to_frame()
    assert list(frame["case"]) == ["sister", "wrong"] and list(frame["passed"]) == [True, False]
    assert "Lisbon" in frame.loc[1, "reasons"]
    rows = report.retrieved_frame("sister")
    assert len(rows) == len(report.result("sister").retrieved)
    matched = rows[rows["matches"] != ""]
    assert list(matched["content"]) == ["My sister Ana lives in Porto."] and bool(matched["is_anchor"].iloc[0])


@pytest.mark.parametrize("budget", [1, 2])
def test_the_budget_bounds_what_is_retrieved(case_file, budget: int) -> None:
    result = run_case_files([case_file(f"""\
        - name: sister
          question: "Where does my sister live?"
          expect_retrieved: ["Ana"]
          budget: {budget}
    """)]).results[0]
    assert len(result.retrieved) <= budget and result.budget == budget


def test_a_timestamp_with_another_offset_lands_on_its_day_in_the_files_zone(case_file) -> None:
    head = ("zone: Asia/Shanghai\nconversation:\n"
            "  - {role: user, content: 'The parcel arrived.', ts: '2026-04-06T20:30:00-05:00'}\n")
    result = run_case_files([case_file("- name: parcel\n  question: parcel\n  expect_retrieved: [arrived]\n",
                                       head=head)]).results[0]
    # 20:30 at UTC-5 is 09:30 the next morning in Shanghai: the day file of 2026-04-07
    assert result.passed and result.retrieved[0].key == "2026-04-07"


def test_a_memory_folder_without_the_user_names_those_it_holds(tmp_path: Path) -> None:
    MemoryStore(tmp_path / "memory", zone="UTC").user("ana").append("s1", "user", "hello")
    path = tmp_path / "x.memcases.yaml"
    path.write_text("memory: memory\ncases:\n  - {name: x, question: hello, expect_retrieved: [hello]}\n",
                    encoding="utf-8")
    result = run_case_files([path]).results[0]
    assert not result.passed and "no memory of user 'user'" in result.error and "'ana'" in result.error
    # a user's own folder works too
    path.write_text("memory: memory/ana\nuser: ana\ncases:\n  - {name: x, question: hello, expect_retrieved: [hello]}\n",
                    encoding="utf-8")
    assert run_case_files([path]).ok
