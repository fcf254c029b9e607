"""The cases widget, driven from code: the list, the chosen case, anchors and windows, escaping."""

from __future__ import annotations

import html

import pytest
from cases_testlib import CAR

from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.cases import run_case_files
from agentmem_nb.widgets.cases import CasesWidget, case_html


@pytest.fixture
def report(case_file):
    return run_case_files([case_file("""\
        - name: sister
          question: "Where does my sister live?"
          expect_retrieved: ["Ana lives in Porto"]
          expect_not_retrieved: ["Noted."]
        - name: colour
          question: "what colour is my car"
          expect_retrieved: ["red Fiat"]
          budget: 1
    """, head=CAR.replace("conversation:\n", "conversation:\n  - {role: user, content: 'My sister Ana lives in "
                                              "Porto.'}\n  - {role: assistant, content: 'Noted.'}\n"))])


def test_the_list_shows_failures_first_and_the_summary(report, case_file) -> None:
    widget = CasesWidget(report)
    assert [label for label, _ in widget.picker.options] == ["✗ t.memcases.yaml::sister", "✗ t.memcases.yaml::colour"]
    assert report.summary() in widget.summary.value == "<b>0 passed, 2 failed</b>"
    assert widget.selected is report.results[0]
    mixed = run_case_files([case_file("- name: ok\n  question: sister\n  expect_retrieved: [Porto]\n"
                                      "- name: bad\n  question: sister\n  expect_retrieved: [Lisbon]\n", name="m")])
    assert [label for label, _ in CasesWidget(mixed).picker.options] == ["✗ m.memcases.yaml::bad",
                                                                         "✓ m.memcases.yaml::ok"]


def test_a_chosen_case_shows_its_checks_and_the_anchor_that_satisfied_or_broke_them(report) -> None:
    widget = CasesWidget(report)
    result = widget.select("sister")
    page = widget.detail.value
    assert widget.selected is result and "t.memcases.yaml::sister" in page
    # the evidence is an anchor row marked as satisfying the expectation; "Noted." came back and is marked bad
    assert 'class="amn-cases-anchor amn-cases-match"' in page and "✓ Ana lives in Porto" in page
    assert "amn-cases-bad" in page and "✗ NOT Noted." in page
    assert "window of #" in page or all(m.is_anchor for m in result.retrieved)


def test_a_missed_expectation_shows_why(report) -> None:
    widget = CasesWidget(report)
    widget.select("colour")
    page = html.unescape(widget.detail.value)
    assert "✗ 'red Fiat' not retrieved within the budget of 1 message(s); beyond it" in page
    assert "retrieved from budget" in page


def test_stored_text_is_escaped(report, case_file) -> None:
    found = run_case_files([case_file("- name: fiat\n  question: Fiat\n  expect_retrieved: [red]\n",
                                      head=CAR.replace("a red Fiat.", "a red Fiat <img src=x onerror=alert(1)>."),
                                      name="x")]).results[0]
    assert found.passed and "<img" in found.retrieved[0].content
    page = case_html(found)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_choosing_from_the_list_updates_the_detail(report) -> None:
    widget = CasesWidget(report)
    index = next(i for i, r in enumerate(report.results) if r.name == "sister")
    widget.picker.value = index
    assert "t.memcases.yaml::sister" in widget.detail.value
    with pytest.raises(InvalidArgument, match="no case 'nope'"):
        widget.select("nope")
