"""Smoke test of ``python -m benchmarks --quick``: the comparison still runs end to end and produces every row.

Timings are not asserted (the machine is shared); what is asserted is that the command exits cleanly (it exits 1
when any store returned the wrong messages or a worker failed), that the Markdown written to ``--output`` has every
workload section with a row for every store, and that the JSON has a figure for every (workload, store, N) cell.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Written out here rather than imported, so a row that silently disappears from the benchmark fails this test.
EXPECTED_ROWS = {
    "append": ["agentmem_nb", "agentmem_nb (durability='fsync')", "FileChatMessageHistory",
               "LangGraph InMemoryStore", "LangGraph SqliteStore"],
    "window": ["agentmem_nb", "FileChatMessageHistory", "LangGraph InMemoryStore", "LangGraph SqliteStore"],
    "keyword": ["agentmem_nb", "FileChatMessageHistory", "LangGraph InMemoryStore", "LangGraph SqliteStore",
                "LangGraph SqliteStore, raw SQL LIKE"],
    "cold": ["agentmem_nb", "FileChatMessageHistory", "LangGraph InMemoryStore", "LangGraph SqliteStore"],
    "turn": ["agentmem_nb ChatService, plain turn", "agentmem_nb ChatService, recall turn (memory tools)",
             "LangGraph InMemorySaver, plain turn (whole thread replayed)"],
}
HEADINGS = {
    "append": "## 1. Append N messages",
    "window": "## 2. Window of 5 messages",
    "keyword": "## 3. Keyword lookup",
    "cold": "## 4. Cold open",
    "turn": "## 5. Chat turn",
}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict, str]:
    """One ``--quick --json`` run: (Markdown written to --output, parsed JSON from stdout, stderr)."""
    folder = tmp_path_factory.mktemp("bench")
    output = folder / "RESULTS.md"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--json", "--output", str(output), "--workdir", str(folder)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stderr[-3000:]}"
    return output.read_text(encoding="utf-8"), json.loads(done.stdout), done.stderr


def _section(markdown: str, workload: str) -> str:
    start = markdown.index(HEADINGS[workload])
    following = [markdown.index(h) for w, h in HEADINGS.items() if h in markdown and markdown.index(h) > start]
    return markdown[start: min(following, default=len(markdown))]


def _table_rows(section: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^\| ([^|]+?) \|", section, flags=re.MULTILINE)
            if m.group(1).strip() not in ("store", "---")]


@pytest.mark.slow
@pytest.mark.parametrize("workload", sorted(EXPECTED_ROWS))
def test_markdown_has_a_row_for_every_store(quick_run: tuple[str, dict, str], workload: str) -> None:
    markdown, _, _ = quick_run
    rows = _table_rows(_section(markdown, workload))
    for label in EXPECTED_ROWS[workload]:
        assert label in rows, f"{workload}: no row {label!r} in {rows}"


@pytest.mark.slow
def test_markdown_has_machine_and_targets(quick_run: tuple[str, dict, str]) -> None:
    markdown, _, _ = quick_run
    for needle in ("## Machine", "CPU:", "Packages:", "langgraph-checkpoint-sqlite", "## Targets"):
        assert needle in markdown, needle
    assert re.search(r"Python \d+\.\d+", markdown)


@pytest.mark.slow
def test_json_has_every_cell_and_measured_cells_have_numbers(quick_run: tuple[str, dict, str]) -> None:
    _, document, _ = quick_run
    figures = document["figures"]
    cells = {(f["workload"], f["peer"], f["n"]): f for f in figures}
    for workload, labels in EXPECTED_ROWS.items():
        sizes = document["plan"]["turn_sizes" if workload == "turn" else "sizes"]
        for label in labels:
            for n in sizes:
                assert (workload, label, n) in cells, f"missing {workload} / {label} / N={n}"
    statuses = {f["status"] for f in figures}
    assert "error" not in statuses
    # The quick plan caps peers below its largest N, so the "not run" path ran too. (Whether the rewriting peer is
    # extrapolated depends on this machine's speed, so "estimated" is allowed but not required.)
    assert {"measured", "not run", "n/a"} <= statuses <= {"measured", "estimated", "not run", "n/a"}, statuses
    for f in figures:
        if f["status"] in ("measured", "estimated"):
            assert f["metrics"] and all(v >= 0 for v in f["metrics"].values()), f
        else:
            assert f["note"], f"{f['status']} without a reason: {f}"
    assert {t["verdict"] for t in document["targets"]} <= {"met", "not met", "not measured"}


@pytest.mark.slow
def test_from_json_re_renders_the_same_figures(quick_run: tuple[str, dict, str], tmp_path: Path) -> None:
    markdown, document, _ = quick_run
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(document), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--from-json", str(saved)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    again = done.stdout.rstrip("\n")
    assert "re-rendered from the run's saved JSON" in again
    # Everything but the header sentence is identical: the figures are the run's, not re-measured.
    assert again.splitlines()[3:] == markdown.rstrip("\n").splitlines()[3:]
