"""``agentmem-nb eval cases``: exit status, summary line, ``--json`` and ``--snapshot``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentmem_nb.cli import main

PASSING = """\
- name: sister
  question: "Where does my sister live?"
  expect_retrieved: ["Ana lives in Porto"]
"""
FAILING = """\
- name: sister-lisbon
  question: "Where does my sister live?"
  expect_retrieved: ["Lisbon"]
"""


def test_all_passing_exits_0_with_a_summary(case_file, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "cases", str(case_file(PASSING))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["PASS t.memcases.yaml::sister", "1 passed, 0 failed"]


def test_a_failing_case_exits_1_with_its_reason(case_file, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "cases", str(case_file(PASSING + FAILING))]) == 1
    out = capsys.readouterr().out
    assert "PASS t.memcases.yaml::sister\nFAIL t.memcases.yaml::sister-lisbon\n" in out
    assert "✗ 'Lisbon' not retrieved within the budget of 10 message(s)" in out
    assert out.rstrip().endswith("1 passed, 1 failed")


def test_json_output(case_file, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "cases", "--json", str(case_file(PASSING + FAILING))]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert (payload["passed"], payload["failed"]) == (1, 1)
    assert [(c["name"], c["passed"]) for c in payload["cases"]] == [("sister", True), ("sister-lisbon", False)]
    failed = payload["cases"][1]
    assert failed["reasons"][0].startswith("'Lisbon' not retrieved") and failed["budget"] == 10
    assert failed["retrieved"] and {"layer", "key", "message_id", "content", "anchor_id", "rank"} <= set(
        failed["retrieved"][0])


def test_a_malformed_file_exits_2_naming_the_field(case_file, capsys: pytest.CaptureFixture[str]) -> None:
    path = case_file("- name: x\n  question: q\n  expect_facts: [{key: user.lives_in, value: Lyon, status: now}]\n")
    assert main(["eval", "cases", str(path)]) == 2
    err = capsys.readouterr().err
    assert "field 'expect_facts[1].status'" in err and "unknown status 'now'" in err


def test_several_files(case_file, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = case_file(PASSING, name="a"), case_file(FAILING, name="b")
    assert main(["eval", "cases", "--json", str(first), str(second)]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert [Path(c["file"]).name for c in payload["cases"]] == ["a.memcases.yaml", "b.memcases.yaml"]


def test_the_installed_command_line_runs_it(case_file) -> None:
    done = subprocess.run([sys.executable, "-m", "agentmem_nb.cli", "eval", "cases", str(case_file(FAILING))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "FAIL t.memcases.yaml::sister-lisbon" in done.stdout


def test_a_folder_runs_every_case_file_under_it(case_file, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case_file(PASSING, name="a")
    case_file(FAILING, name="b")
    assert main(["eval", "cases", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "PASS a.memcases.yaml::sister" in out and "FAIL b.memcases.yaml::sister-lisbon" in out
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["eval", "cases", str(empty)]) == 2
    assert "no *.memcases.yaml file under" in capsys.readouterr().err
