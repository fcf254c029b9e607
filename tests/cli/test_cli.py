"""The command line: real subcommands on a real store, errors as one line with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentmem_nb import MemoryStore
from agentmem_nb.cli import main


@pytest.fixture
def root(store: MemoryStore) -> Path:
    alice = store.user("alice")
    for text in ("My sister Lena lives in Lyon", "Nice!", "I prefer tea", "Noted"):
        alice.append("s1", "user" if text[0] in "MI" else "assistant", text)
    return store.root


def run(root: Path, *args: str) -> int:
    return main(["--root", str(root), "--zone", "Asia/Shanghai", *args])


def test_search_prints_anchor_lines(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(root, "search", "--user", "alice", "--session", "s1", "LENA") == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("#1 ") and "Lena" in out[0]


def test_search_json_across_days(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(root, "search", "--user", "alice", "--json", "tea") == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["content"], r["session_id"]) for r in rows] == [("I prefer tea", "s1")]


def test_window_marks_the_anchor(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(root, "window", "--user", "alice", "--session", "s1", "2", "--before", "1", "--after", "1") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line[:4] for line in lines] == ["  #1", "> #2", "  #3"]


@pytest.mark.parametrize("args", [
    ("search", "--user", "../bob", "x"),
    ("search", "--user", "alice", "--session", "s1", "--day", "2026-04-08", "x"),
    ("window", "--user", "alice", "--session", "s1", "99"),
    ("window", "--user", "alice", "2"),
    ("search", "--user", "alice", "--day", "2026-4-8", "x"),
])
def test_errors_are_one_line_with_status_2(root: Path, capsys: pytest.CaptureFixture[str], args: tuple) -> None:
    assert run(root, *args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("agentmem-nb: error: ")


def test_problems_exit_status_says_whether_lines_were_skipped(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(root, "problems", "--user", "alice") == 0
    with open(root / "alice" / "sessions" / "s1.jsonl", "ab") as handle:
        handle.write(b"not json\n")
    with pytest.warns(Warning):
        assert run(root, "problems", "--user", "alice") == 1
    assert "malformed_json" in capsys.readouterr().out


def test_help_lists_every_part_and_needs_no_heavy_import() -> None:
    code = ("import sys; from agentmem_nb.cli import build_parser; h = build_parser().format_help(); "
            "print(h); print('langchain' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for command in ("search", "window", "problems", "chat", "seed", "lab", "eval"):
        assert command in out


def test_the_console_script_offers_bench_from_any_folder_of_a_checkout(tmp_path: Path) -> None:
    """The installed ``agentmem-nb`` finds the checkout's benchmarks even when run from elsewhere (its own folder,
    not the checkout, is on its path)."""
    script = Path(sys.executable).with_name("agentmem-nb")
    if not script.exists():
        pytest.skip(f"no console script beside {sys.executable} (package not installed with pip install -e)")
    out = subprocess.run([str(script), "bench", "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "--quick" in out.stdout and "--from-json" in out.stdout


def test_search_and_window_hide_a_redacted_message(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from agentmem_nb.items import ItemKey
    alice = MemoryStore(root, zone="Asia/Shanghai").user("alice")
    alice.redactions.add(ItemKey("session", "s1", 1), reason="private")
    assert run(root, "search", "--user", "alice", "--session", "s1", "lena") == 0
    assert "Lena" not in capsys.readouterr().out
    assert run(root, "window", "--user", "alice", "--session", "s1", "2", "--before", "1") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("  #1") and lines[0].endswith("user: [redacted: private]") and "Lena" not in lines[0]
