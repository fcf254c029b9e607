"""The pytest plugin: ``*.memcases.yaml`` files become one test per case, with a readable failure."""

from __future__ import annotations

import pytest
from cases_testlib import CONVERSATION

pytest_plugins = ["pytester"]

CASES = CONVERSATION + """\
cases:
  - name: sister
    question: "Where does my sister live?"
    expect_retrieved: ["Ana lives in Porto"]
  - name: sister-lisbon
    question: "Where does my sister live?"
    expect_retrieved: ["Lisbon"]
  - name: sister-agent
    question: "Where does my sister live?"
    agent: true
    expect_reply: ["Porto"]
"""


def test_each_case_is_a_test(pytester: pytest.Pytester) -> None:
    pytester.makefile(".memcases.yaml", recall=CASES)
    pytester.makefile(".yaml", other="not: collected\n")
    result = pytester.runpytest("-p", "agentmem_nb.testing.pytest_plugin", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines([
        "*recall.memcases.yaml::sister PASSED*",
        "*recall.memcases.yaml::sister-lisbon FAILED*",
        "*recall.memcases.yaml::sister-agent PASSED*",
    ])
    # the failure is the case's explanation, not a traceback of the runner
    result.stdout.fnmatch_lines([
        "*recall case 'sister-lisbon' failed (recall.memcases.yaml)*",
        "*'Lisbon' not retrieved within the budget of 10 message(s)*",
        "*top hits (ranked, budget 10*",
    ])
    assert "cases.py" not in result.stdout.str()


def test_select_one_case_by_name(pytester: pytest.Pytester) -> None:
    pytester.makefile(".memcases.yaml", recall=CASES)
    result = pytester.runpytest("-p", "agentmem_nb.testing.pytest_plugin", "-k", "sister-lisbon")
    result.assert_outcomes(failed=1, deselected=2)


def test_agent_cases_carry_a_marker(pytester: pytest.Pytester) -> None:
    pytester.makefile(".memcases.yaml", recall=CASES)
    result = pytester.runpytest("-p", "agentmem_nb.testing.pytest_plugin", "-m", "not memcase_agent")
    result.assert_outcomes(passed=1, failed=1, deselected=1)


def test_a_malformed_file_is_a_collection_error_that_names_the_field(pytester: pytest.Pytester) -> None:
    pytester.makefile(".memcases.yaml", broken=CONVERSATION + "cases:\n  - {name: x, question: q, budget: -1, "
                                                               "expect_retrieved: [a]}\n")
    result = pytester.runpytest("-p", "agentmem_nb.testing.pytest_plugin")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*broken.memcases.yaml: case 'x': field 'budget': expected a whole number*"])


def test_the_plugin_is_the_pytest11_entry_point() -> None:
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    points = pyproject["project"]["entry-points"]["pytest11"]
    assert points == {"agentmem_nb.testing.pytest_plugin": "agentmem_nb.testing.pytest_plugin"}
