"""``agentmem-nb eval facts``: the case format, the scores, and the offline extractor's figures on the case files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentmem_nb.cli import main
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.facts import evaluate_cases, load_cases

DATA = Path(__file__).resolve().parents[1] / "data" / "facts"


@pytest.mark.parametrize("language", ["english", "chinese"])
def test_the_offline_extractor_meets_the_targets(language: str) -> None:
    """Every case file of one language together (the written set and the held-out rounds)."""
    cases = [case for path in sorted(DATA.glob(f"*{language}.facts")) for case in load_cases(path)]
    assert len(cases) >= 130
    report = evaluate_cases(cases)
    assert report.current_accuracy >= 0.95, report.failures
    assert report.conflicts_predicted and report.conflict_precision >= 0.9, report.failures


def test_a_wrong_expectation_is_counted_and_named(tmp_path: Path) -> None:
    path = tmp_path / "cases.facts"
    path.write_text("== moved\n> I live in Paris.\n> I moved to Lyon.\n= user.lives_in: Paris\n~ user.lives_in: Lyon\n"
                    "! user.lives_in: Lyon\n== distractor\n> Where do I live?\n= nothing\n", encoding="utf-8")
    report = evaluate_cases(load_cases(path))
    assert (report.current_total, report.current_correct) == (2, 1)
    assert (report.superseded_total, report.superseded_correct) == (1, 0)
    assert (report.conflicts_expected, report.conflicts_found, report.conflict_precision) == (1, 0, 1.0)
    assert any(f"{path}:4" in line for line in report.failures)


@pytest.mark.parametrize(("text", "fix"), [("> I live in Paris.\n", "before the first case"),
                                           ("== x\n> hi\n= lives_in: Paris\n", "subject.attribute"),
                                           ("== x\n> hi\n", "needs '>' messages and expectation"),
                                           ("== x\n> hi\n* what\n", "cannot read")])
def test_a_bad_case_file_is_refused_with_its_line(tmp_path: Path, text: str, fix: str) -> None:
    path = tmp_path / "bad.facts"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidArgument, match=fix) as caught:
        load_cases(path)
    assert str(path) in str(caught.value)


def test_the_command_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "facts", str(DATA / "english.facts"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cases"] >= 60 and report["current_accuracy"] >= 0.95


def test_the_command_refuses_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "facts", str(tmp_path / "none.facts")]) == 2
    assert "no such file" in capsys.readouterr().err
