"""The case file format: what it accepts, and a clear error (file, case, field, fix) for everything else."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.casefile import load_case_file, parse_case_file

from cases_testlib import CONVERSATION


def test_a_file_reads_into_typed_cases(case_file) -> None:
    path = case_file("""\
        - name: sister
          question: "Where does my sister live?"
          expect_retrieved: ["Ana lives in Porto"]
          budget: 4
        - name: sister-agent
          question: "Where does my sister live?"
          agent: true
          session: s9
          expect_reply: Porto
          expect_tools: [search_session]
    """)
    parsed = load_case_file(path)
    assert [c.name for c in parsed.cases] == ["sister", "sister-agent"]
    first, second = parsed.cases
    assert (first.budget, first.agent, first.expect_retrieved, first.user) == (4, False, ("Ana lives in Porto",), "maya")
    assert (second.agent, second.session, second.expect_reply, second.expect_tools) == (
        True, "s9", ("Porto",), ("search_session",))
    line = first.source.conversation[0]
    assert line.ts == _dt.datetime(2026, 4, 6, 9, 0, tzinfo=_dt.timezone(_dt.timedelta(hours=2)))
    assert first.source.conversation[1].ts is None and first.source.conversation[4].session == "s2"
    assert parsed.model == "offline" and parsed.zone == "Europe/Paris"
    assert first.line is not None and path.read_text().splitlines()[first.line - 1].strip().startswith("- name: sister")


@pytest.mark.parametrize(("cases", "head", "must_say"), [
    ("- name: a\n  question: q\n  expect_facts: [\"sister: Ana\"]\n", CONVERSATION,
     ["case 'a'", "field 'expect_facts[1]'", "expected a mapping", "{key: sister.lives_in, value: Porto}"]),
    ("- name: a\n  question: q\n  expect_facts:\n    - {key: sister.lives_in, value: Porto, status: current}\n",
     CONVERSATION, ["case 'a'", "field 'expect_facts[1].status'", "'current'", "active, superseded, conflict"]),
    ("- name: a\n  question: q\n  expect_facts:\n    - {value: Porto}\n", CONVERSATION,
     ["case 'a'", "field 'expect_facts[1].key'", "subject.attribute", "key: sister.lives_in"]),
    ("- name: a\n  question: q\n  expect_facts:\n    - {key: lives_in, value: Porto}\n", CONVERSATION,
     ["field 'expect_facts[1].key'", "'lives_in'"]),
    ("- name: a\n  question: q\n  expect_facts:\n    - {key: sister.lives_in}\n", CONVERSATION,
     ["case 'a'", "field 'expect_facts[1].value'", "value: Porto"]),
    ("- name: a\n  question: q\n  expect_facts:\n    - {key: sister.lives_in, value: Porto, since: 2020}\n",
     CONVERSATION, ["field 'expect_facts[1]'", "unknown key(s) 'since'", "key, value, status"]),
    ("- name: a\n  question: q\n  expect_retreived: [x]\n", CONVERSATION,
     ["case 'a'", "'expect_retreived' (did you mean 'expect_retrieved'?)"]),
    ("- name: a\n  expect_retrieved: [x]\n", CONVERSATION, ["case 'a'", "field 'question'", "expected text"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n  budget: ten\n", CONVERSATION,
     ["case 'a'", "field 'budget'", "'ten'", "budget: 10"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n  budget: 0\n", CONVERSATION, ["field 'budget'", ">= 1"]),
    ("- name: a\n  question: q\n  expect_reply: [x]\n", CONVERSATION,
     ["case 'a'", "field 'expect_reply'", "agent: true"]),
    ("- name: a\n  question: q\n  agent: true\n  budget: 3\n  expect_reply: [x]\n", CONVERSATION,
     ["field 'budget'", "retrieval cases only"]),
    ("- name: a\n  question: q\n", CONVERSATION, ["case 'a'", "expects nothing"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n- name: a\n  question: r\n  expect_retrieved: [y]\n",
     CONVERSATION, ["case 'a'", "two cases have this name"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n", "user: maya\n", ["case 'a'", "no memory to search"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n  scope: yesterday\n", CONVERSATION,
     ["field 'scope'", "'yesterday'", "YYYY-MM-DD"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n  user: ../evil\n", CONVERSATION, ["field 'user'"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n  memory: no/such/folder\n", CONVERSATION,
     ["field 'memory'", "no memory folder", "relative to the case file"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n", "conversation:\n  - {role: user}\n",
     ["field 'conversation[1].content'"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n",
     "conversation:\n  - {role: user, content: hi, ts: 'last tuesday'}\n", ["conversation[1].ts", "ISO 8601"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n", CONVERSATION + "zone: Mars/Olympus\n",
     ["field 'zone'", "Mars/Olympus"]),
    ("- name: a\n  question: q\n  expect_retrieved: [x]\n", CONVERSATION + "model: gpt-9\n", ["field 'model'"]),
])
def test_a_bad_file_names_the_file_case_and_field(case_file, cases: str, head: str, must_say: list[str]) -> None:
    path = case_file(cases, head=head)
    with pytest.raises(InvalidArgument) as caught:
        load_case_file(path)
    message = str(caught.value)
    assert message.startswith(str(path))
    for part in must_say:
        assert part in message


def test_yaml_syntax_errors_give_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.memcases.yaml"
    path.write_text("conversation:\n  - {role: user, content: \"unclosed}\ncases: [\n", encoding="utf-8")
    with pytest.raises(InvalidArgument, match=r"bad\.memcases\.yaml: not valid YAML at line \d+"):
        load_case_file(path)


def test_a_missing_file_says_what_to_give(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match="no case file .*memcases"):
        load_case_file(tmp_path / "nope.memcases.yaml")


def test_expect_facts_at_file_level_is_refused() -> None:
    with pytest.raises(InvalidArgument, match="field 'expect_facts': facts are expected per case.*into the case"):
        parse_case_file(CONVERSATION + "expect_facts: [x]\ncases: []\n", path="f.memcases.yaml")


def test_expect_facts_read_into_typed_expectations(case_file) -> None:
    parsed = load_case_file(case_file("""\
        - name: moved
          question: q
          expect_facts:
            - {key: sister.lives_in, value: Porto}
            - {key: user.born_in, value: 1990, status: superseded}
    """))
    assert [(f.key, f.value, f.status) for f in parsed.cases[0].expect_facts] == [
        ("sister.lives_in", "Porto", "active"), ("user.born_in", "1990", "superseded")]
    assert parsed.cases[0].expect_retrieved == ()


def test_json_case_files_are_read_too(tmp_path: Path) -> None:
    path = tmp_path / "c.memcases.json"
    path.write_text('{"conversation": [{"role": "user", "content": "I like tea"}], "cases": '
                    '[{"name": "tea", "question": "tea", "expect_retrieved": ["tea"]}]}', encoding="utf-8")
    assert load_case_file(path).cases[0].expect_retrieved == ("tea",)


def test_the_search_modes_a_case_names_are_the_searchs_own() -> None:
    from typing import get_args

    from agentmem_nb.evaluation import casefile
    from agentmem_nb.retrieval import retriever

    assert get_args(casefile.SearchHow) == get_args(retriever.SearchHow)


def test_loading_the_pytest_plugin_loads_no_retrieval_agent_or_pandas() -> None:
    """The plugin is loaded by every pytest run of a project that installs agentmem_nb: it must stay light."""
    import subprocess
    import sys

    code = ("import sys, agentmem_nb.testing.pytest_plugin\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'langchain_core', 'ipywidgets', 'agentmem_nb.retrieval')"
            " if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
