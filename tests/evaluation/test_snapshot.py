"""Snapshots: record what each case retrieved and replied; a later run shows what moved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentmem_nb.cli import main
from agentmem_nb.errors import InvalidArgument
from agentmem_nb.evaluation.cases import run_case_files
from agentmem_nb.evaluation.snapshot import Snapshot

CASES = """\
- name: car
  question: "what colour is my car"
  expect_retrieved: ["car"]
  budget: {budget}
- name: agent
  question: "Where is my car?"
  agent: true
  expect_tools: [search_session]
"""


def _run(case_file, budget: int) -> Snapshot:
    from cases_testlib import CAR

    return Snapshot.of(run_case_files([case_file(CASES.format(budget=budget), head=CAR)]))


def test_the_same_run_shows_no_change(case_file, tmp_path: Path) -> None:
    first = _run(case_file, 4)
    first.save(tmp_path / "snap.json")
    again = Snapshot.load(tmp_path / "snap.json").diff(_run(case_file, 4))
    assert not again.changed and again.format() == "snapshot: no change"


def test_a_change_of_budget_shows_what_moved_out_and_in(case_file) -> None:
    wide, narrow = _run(case_file, 4), _run(case_file, 2)
    assert len(wide.cases["t.memcases.yaml::car"].retrieved) == 4
    shrunk = wide.diff(narrow)
    assert shrunk.changed and [c.case for c in shrunk.cases] == ["t.memcases.yaml::car"]  # the agent case is stable
    car = shrunk.case("car")
    assert car is not None and len(car.moved_out) == 2 and not car.moved_in
    kept = {m.item for m in narrow.cases["t.memcases.yaml::car"].retrieved}
    assert all(m.before is not None and m.before.item not in kept for m in car.moved_out)
    assert "- #" in shrunk.format() and "out (was rank" in shrunk.format()
    grown = narrow.diff(wide).case("car")
    assert grown is not None and len(grown.moved_in) == 2 and not grown.moved_out


def test_a_snapshot_round_trips_through_its_file(case_file, tmp_path: Path) -> None:
    snap = _run(case_file, 3)
    loaded = Snapshot.load(snap.save(tmp_path / "s" / "snap.json"))
    assert loaded == snap
    assert json.loads((tmp_path / "s" / "snap.json").read_text())["format"] == "agentmem-cases-snapshot/1"


def test_a_file_that_is_not_a_snapshot_is_refused(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"cases": []}')
    with pytest.raises(InvalidArgument, match="not a recall-case snapshot.*--update-snapshot"):
        Snapshot.load(tmp_path / "x.json")
    with pytest.raises(InvalidArgument, match="no snapshot at .*--update-snapshot"):
        Snapshot.load(tmp_path / "missing.json")


def test_the_cli_records_then_diffs(case_file, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cases_testlib import CAR

    snap = tmp_path / "snap.json"
    wide = case_file(CASES.format(budget=4), head=CAR, name="wide")
    assert main(["eval", "cases", str(wide), "--snapshot", str(snap)]) == 0
    assert snap.exists() and "snapshot recorded" in capsys.readouterr().err
    assert main(["eval", "cases", str(wide), "--snapshot", str(snap)]) == 0
    assert "snapshot: no change" in capsys.readouterr().out
    # the same file with a smaller budget: every case still passes, but the snapshot differs -> exit 1
    wide.write_text(wide.read_text().replace("budget: 4", "budget: 2"))
    assert main(["eval", "cases", "--json", str(wide), "--snapshot", str(snap)]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["failed"] == 0 and payload["snapshot"]["changed"]
    (car,) = payload["snapshot"]["cases"]
    assert car["case"] == "wide.memcases.yaml::car" and len(car["moved_out"]) == 2
    assert main(["eval", "cases", str(wide), "--snapshot", str(snap), "--update-snapshot"]) == 0
    capsys.readouterr()
    assert main(["eval", "cases", str(wide), "--snapshot", str(snap)]) == 0


def test_rank_text_reply_and_tool_changes_are_each_reported() -> None:
    from agentmem_nb.evaluation.snapshot import CaseSnapshot, SnapshotMessage

    a = SnapshotMessage("daily", "2026-04-06", 1, "Ana lives in Porto", 1, 1)
    b = SnapshotMessage("daily", "2026-04-06", 2, "Noted.", 2, 2)
    old = Snapshot({"f::c": CaseSnapshot(True, (a, b), "Porto", ("search_session(keyword='sister')",))})
    swapped = (SnapshotMessage("daily", "2026-04-06", 1, "Ana lives in Porto", 2, 2),
               SnapshotMessage("daily", "2026-04-06", 2, "Noted!", 1, 1))
    new = Snapshot({"f::c": CaseSnapshot(False, swapped, "Lisbon", ())})
    diff = old.diff(new).case("c")
    assert diff is not None and not diff.moved_in and not diff.moved_out
    assert [(m.before.order, m.after.order) for m in diff.reranked] == [(1, 2), (2, 1)]  # type: ignore[union-attr]
    assert diff.reply == ("Porto", "Lisbon") and diff.tools == (("search_session(keyword='sister')",), ())
    assert diff.passed == (True, False)
    text = diff.format()
    assert "rank 1 -> 2" in text and "text 'Noted.' -> 'Noted!'" in text and "passed -> failed" in text
    same = SnapshotMessage("daily", "2026-04-06", 1, "Ana lives in Lisbon", 1, 1)
    reworded = old.diff(Snapshot({"f::c": CaseSnapshot(True, (same, b), "Porto", old.cases["f::c"].tools)}))
    assert [m.after.text for m in reworded.cases[0].reworded] == ["Ana lives in Lisbon"]  # type: ignore[union-attr]


def test_two_case_files_with_one_name_in_two_folders_keep_both_snapshots(tmp_path: Path) -> None:
    from cases_testlib import CAR

    files = []
    for team, budget in (("team-a", 4), ("team-b", 2)):
        (tmp_path / team).mkdir()
        path = tmp_path / team / "recall.memcases.yaml"
        path.write_text(CAR + "cases:\n" + "\n".join("  " + line for line in CASES.format(budget=budget).splitlines())
                        + "\n", encoding="utf-8")
        files.append(path)
    snap = Snapshot.of(run_case_files(files))
    assert sorted(snap.cases) == ["team-a/recall.memcases.yaml::agent", "team-a/recall.memcases.yaml::car",
                                  "team-b/recall.memcases.yaml::agent", "team-b/recall.memcases.yaml::car"]
    assert len(snap.cases["team-a/recall.memcases.yaml::car"].retrieved) == 4
    assert len(snap.cases["team-b/recall.memcases.yaml::car"].retrieved) == 2
    again = Snapshot.load(snap.save(tmp_path / "snap.json"))
    assert not again.diff(Snapshot.of(run_case_files(files))).changed
    # one file alone keeps the short key snapshots have always used
    assert sorted(Snapshot.of(run_case_files(files[:1])).cases) == ["recall.memcases.yaml::agent",
                                                                     "recall.memcases.yaml::car"]
